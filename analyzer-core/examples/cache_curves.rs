//! The web app's Cache-view curves, natively: the MiniSim curve of each policy the worker
//! overlays (FIFO, ARC, S3-FIFO, LIRS and SIEVE), 16 sizes evenly spaced up to the footprint,
//! computed with the default settings (`MiniSimConfig::new`) and with the interactive work
//! bound (`MiniSimConfig::interactive`), with each run's CPU time and the mean absolute
//! difference between the two curves. `scripts/bench-cache.sh curves` runs it.
//!
//! ```text
//! cargo run --release -p analyzer-core --example cache_curves -- IN.bst
//! cargo run --release -p analyzer-core --example cache_curves -- synth REQUESTS
//! ```
//!
//! The events are decoded into memory first (not timed), as the worker's re-read would feed
//! them; `synth` uses `mrc::synth` (drifting Zipf over 4 Mi items, scans, 4–64 KiB requests).

mod common;

use analyzer_core::cache::PolicyKind;
use analyzer_core::hash::{block_key, IntSet};
use analyzer_core::mrc::minisim::{MiniSim, MiniSimConfig};
use analyzer_core::mrc::synth::{Synthetic, SyntheticConfig};
use analyzer_core::mrc::{linear_sizes, mean_absolute_error, MrcReport};
use analyzer_core::{IoEvent, Op, TraceHeader};
use common::{cpu_secs, read_bst};

const POLICIES: [PolicyKind; 5] = [
    PolicyKind::Fifo,
    PolicyKind::Arc,
    PolicyKind::S3Fifo,
    PolicyKind::Lirs,
    PolicyKind::Sieve,
];

fn run(config: MiniSimConfig, events: &[IoEvent]) -> (MrcReport, f64) {
    let cpu = cpu_secs();
    let mut m = MiniSim::new(config).expect("valid config");
    events.iter().for_each(|e| m.observe(e));
    let r = m.finish(&TraceHeader::default());
    (r, cpu_secs() - cpu)
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let events = match (args.get(1).map(String::as_str), args.get(2)) {
        (Some("synth"), Some(n)) => Synthetic::new(SyntheticConfig {
            requests: n.parse().map_err(std::io::Error::other)?,
            zipf_lines: 4 << 20,
            with_latency: false,
            ..SyntheticConfig::default()
        })
        .collect(),
        (Some(path), None) => read_bst(path)?.0,
        _ => {
            eprintln!("usage: cache_curves IN.bst | synth REQUESTS");
            std::process::exit(2);
        }
    };
    let line_bytes = 4096;
    let mut lines = IntSet::default();
    for e in &events {
        if matches!(e.op, Op::Read | Op::Write) && e.len_bytes > 0 {
            for l in e.block_range(line_bytes) {
                lines.insert(block_key(e.device, l));
            }
        }
    }
    let footprint = lines.len() as u64;
    let sizes = linear_sizes(footprint, 16);
    println!(
        "{} requests, footprint {footprint} lines of 4 KiB; 16 sizes; CPU seconds per policy",
        events.len()
    );
    println!(
        "{:<7} {:>10} {:>10} {:>8} {:>14} {:>10}",
        "policy", "default s", "bounded s", "speed-up", "bounded rate", "MAE"
    );
    let (mut total_default, mut total_bounded) = (0.0, 0.0);
    for policy in POLICIES {
        let (full, t_full) = run(
            MiniSimConfig::new(policy, line_bytes, sizes.clone()),
            &events,
        );
        let (quick, t_quick) = run(
            MiniSimConfig::interactive(policy, line_bytes, sizes.clone()),
            &events,
        );
        total_default += t_full;
        total_bounded += t_quick;
        println!(
            "{:<7} {:>10.2} {:>10.2} {:>7.1}x {:>14.4} {:>10.4}",
            policy.name(),
            t_full,
            t_quick,
            t_full / t_quick.max(0.01),
            quick.sampling.as_ref().map_or(1.0, |s| s.rate),
            mean_absolute_error(&full.points, &quick.points).unwrap_or(f64::NAN)
        );
    }
    println!("all     {total_default:>10.2} {total_bounded:>10.2}");
    Ok(())
}
