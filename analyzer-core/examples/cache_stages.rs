//! The web app's Cache view job natively, stage by stage (`SimulateRequest::stages`): the
//! estimate from one spatial sample (the chosen cache and the policies' curves), the exact
//! simulation of the chosen cache, and the refined curves (MiniSim's defaults), each with its
//! CPU time; then how far the estimate is from the exact answers: the chosen cache's line hit
//! ratio and back-end operations, and each curve's mean absolute error against the refined
//! curve and, with `--full`, against full simulation of every size (slow: 16 simulations of the
//! whole trace per policy).
//!
//! ```text
//! cargo run --release -p analyzer-core --example cache_stages -- IN.bst [SIZE_BYTES] [--full] [--first] [--variants]
//! ```
//!
//! `--variants`: the hints at every line size of the view too, so the stages include the
//! variants (the estimates of every other line size and write mode, computed ahead); then each
//! variant's estimated hit ratio against its exact simulation.
//!
//! The events are decoded into memory first (not timed), as the worker's re-read would feed
//! them; the hints are the ones the web app sends (the footprint and line accesses, here
//! counted exactly). Default size: 256 MiB, LRU, 4 KiB lines, write-through.

mod common;

use analyzer_core::cache::PolicyKind;
use analyzer_core::job::simulate::{
    LineHints, Simulate, SimulateRequest, SimulateResult, Stage, VIEW_LINE_SIZES,
};
use analyzer_core::job::{run_events, CacheParams, LineFootprint};
use analyzer_core::mrc::{mean_absolute_error, simulated_points};
use common::{cpu_secs, read_bst};

fn hit(r: &SimulateResult) -> f64 {
    r.runs[0].result.whole.ratios.line_hit_ratio.unwrap_or(0.0)
}

fn backend_ops(r: &SimulateResult) -> u64 {
    let b = &r.runs[0].result.whole.counts.backend;
    b.read_ops + b.write_ops
}

fn backend_bytes(r: &SimulateResult) -> u64 {
    let b = &r.runs[0].result.whole.counts.backend;
    b.read_bytes + b.write_bytes
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let full = args.iter().any(|a| a == "--full");
    // Only the first stage (for profiling it).
    let first_only = args.iter().any(|a| a == "--first");
    let variants = args.iter().any(|a| a == "--variants");
    let args: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: cache_stages IN.bst [SIZE_BYTES] [--full]");
        std::process::exit(2);
    };
    let size_bytes = args
        .get(1)
        .map_or(Ok(256 << 20), |s| s.parse())
        .map_err(std::io::Error::other)?;
    let (events, header) = read_bst(path)?;
    let mut footprint = LineFootprint::new(4096);
    events.iter().for_each(|e| footprint.observe(e));
    let line_hints = if variants {
        VIEW_LINE_SIZES
            .iter()
            .map(|&line_bytes| LineHints::counted(line_bytes, &events))
            .collect()
    } else {
        Vec::new()
    };
    let request = SimulateRequest {
        footprint_lines: Some(footprint.lines().0),
        line_accesses: Some(footprint.line_accesses()),
        with_curves: true,
        line_hints,
        ..SimulateRequest::new(CacheParams {
            size_bytes,
            ..CacheParams::default()
        })
    };
    println!(
        "{} requests, {} line accesses, footprint {} lines of 4 KiB; a {} MiB LRU cache",
        events.len(),
        footprint.line_accesses(),
        footprint.lines().0,
        size_bytes >> 20
    );
    let mut results = Vec::new();
    for stage in request.stages() {
        let name = format!("{:?}", stage.stage);
        let cpu = cpu_secs();
        let r = run_events(Simulate::new(stage).expect("job"), &header, &events)
            .map_err(std::io::Error::other)?;
        println!("stage {name:<8} {:>7.2} s CPU", cpu_secs() - cpu);
        if r.request.stage == Stage::Variants {
            for shown in &r.variants {
                let v = &shown.request;
                let exact = run_events(
                    Simulate::new(SimulateRequest::new(v.cache.clone())).expect("job"),
                    &header,
                    &events,
                )
                .map_err(std::io::Error::other)?;
                println!(
                    "variant {:<16} {:<7} {:>4} KiB lines, {}: rate {:.5}{}, hit ratio {:.4} vs exact {:.4} ({:+.4})",
                    v.cache.preset.as_deref().unwrap_or("-"),
                    v.cache.policy,
                    v.cache.line_bytes >> 10,
                    v.cache.mode,
                    shown.estimate_rate.unwrap_or(1.0),
                    if shown.runs_estimated { "" } else { " (cell exact)" },
                    hit(shown),
                    hit(&exact),
                    hit(shown) - hit(&exact)
                );
            }
            continue;
        }
        results.push(r);
        if first_only {
            return Ok(());
        }
    }
    let (estimate, refined) = match &results[..] {
        [estimate, .., refined] => (estimate, refined),
        _ => {
            println!("the estimate was the whole trace (exact): one stage");
            return Ok(());
        }
    };
    // A trace of few line accesses has its cells exactly in the first stage.
    let exact = if estimate.runs_estimated {
        &results[1]
    } else {
        println!("the first stage's cells are exact (few line accesses); its curves estimated");
        estimate
    };
    let rate = estimate.estimate_rate.unwrap_or(1.0);
    let sampled = estimate.curves[0]
        .sampling
        .as_ref()
        .map_or(0, |s| s.sampled_accesses);
    println!(
        "estimate: rate {rate:.5} ({sampled} sampled line accesses); hit ratio {:.4} vs exact {:.4} (difference {:+.4}); back-end bytes {:+.1}%, back-end ops {:+.1}% (not estimated)",
        hit(estimate),
        hit(exact),
        hit(estimate) - hit(exact),
        (backend_bytes(estimate) as f64 / backend_bytes(exact).max(1) as f64 - 1.0) * 100.0,
        (backend_ops(estimate) as f64 / backend_ops(exact).max(1) as f64 - 1.0) * 100.0
    );
    for (e, r) in estimate.curves.iter().zip(&refined.curves) {
        let vs_refined = mean_absolute_error(&e.points, &r.points).unwrap_or(f64::NAN);
        let vs_full = full.then(|| {
            let policy = PolicyKind::from_name(&e.policy).expect("policy");
            let f = simulated_points(policy, 4096, &e.points, &events).expect("config");
            (
                mean_absolute_error(&e.points, &f).unwrap_or(f64::NAN),
                mean_absolute_error(&r.points, &f).unwrap_or(f64::NAN),
            )
        });
        match vs_full {
            Some((est, refd)) => println!(
                "curve {:<7} estimate MAE vs refined {vs_refined:.4}; vs full simulation: estimate {est:.4}, refined {refd:.4}",
                e.policy
            ),
            None => println!(
                "curve {:<7} estimate MAE vs refined {vs_refined:.4}",
                e.policy
            ),
        }
    }
    Ok(())
}
