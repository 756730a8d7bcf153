//! Miss-ratio curves: accuracy of SHARDS against the exact curve, and of MiniSim against full
//! simulation, on a deterministic ≥1M-request workload with realistic structure (Zipf hot set,
//! sequential scans, drifting working set); the exact curve against brute-force LRU caches; and
//! the `blocksight mrc` CLI.
//!
//! The accuracy tests process millions of line accesses and hundreds of full simulations; they
//! run in release builds (`cargo test --release -p blocksight-tests --test mrc`) and are skipped
//! in debug builds, where they would take many minutes.

use std::collections::VecDeque;

use analyzer_core::cache::{PolicyKind, SimConfig, Simulator};
use analyzer_core::event::{IoEvent, Op, TraceHeader};
use analyzer_core::mrc::minisim::{MiniSim, MiniSimConfig, MiniSimFuture};
use analyzer_core::mrc::shards::ShardsMode;
use analyzer_core::mrc::synth::{Synthetic, SyntheticConfig};
use analyzer_core::mrc::{mean_absolute_error, LruMrc, MrcReport, SizeSpec};
use blocksight_tests::{data_dir, run_blocksight};
use proptest::prelude::*;

/// The accuracy workload: 1.2M requests, Zipf over `zipf_lines` items with drift, 10% scans.
fn workload(seed: u64) -> SyntheticConfig {
    SyntheticConfig {
        seed,
        requests: 1_200_000,
        ..SyntheticConfig::default()
    }
}

/// Runs the exact curve and `others` in one pass; the others are reported at the exact curve's
/// 100 evenly spaced sizes.
fn against_exact(cfg: &SyntheticConfig, mut others: Vec<LruMrc>) -> (MrcReport, Vec<MrcReport>) {
    let mut exact = LruMrc::exact(4096);
    for e in Synthetic::new(cfg.clone()) {
        exact.observe(&e);
        for m in &mut others {
            m.observe(&e);
        }
    }
    let header = TraceHeader::new("synthetic");
    let exact = exact.finish(&SizeSpec::Count(100), &header);
    let sizes = SizeSpec::Lines(exact.points.iter().map(|p| p.size_lines).collect());
    let others = others.iter().map(|m| m.finish(&sizes, &header)).collect();
    (exact, others)
}

/// Mean absolute error of SHARDS against the exact curve at 100 evenly spaced sizes. What
/// decides the error is the number of sampled lines, not the rate: these footprints are about
/// 1.5M lines, so R = 0.001 keeps only ~1,500 lines (the paper's R = 0.001 results are for
/// footprints of tens of millions of lines). The bound of 0.005 is asserted for the
/// configurations that keep ≥ 64K lines; the others are printed for the report.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "release only: cargo test --release -p blocksight-tests --test mrc"
)]
fn shards_error_against_exact_is_within_half_a_percent() {
    for (shape, zipf_lines, exponent) in [("mixed", 1u64 << 20, 0.9), ("oltp", 1 << 18, 1.0)] {
        for seed in [1, 2, 3] {
            let cfg = SyntheticConfig {
                zipf_lines,
                zipf_exponent: exponent,
                ..workload(seed)
            };
            let configs = [
                (ShardsMode::FixedRate { rate: 0.001 }, false),
                (ShardsMode::FixedRate { rate: 0.01 }, false),
                (ShardsMode::FixedRate { rate: 0.1 }, true),
                (ShardsMode::FixedSize { max_lines: 8192 }, false),
                (ShardsMode::FixedSize { max_lines: 65536 }, true),
                (ShardsMode::FixedSize { max_lines: 262144 }, true),
            ];
            let (exact, reports) = against_exact(
                &cfg,
                configs
                    .iter()
                    .map(|&(m, _)| LruMrc::shards(4096, m))
                    .collect(),
            );
            for ((mode, asserted), r) in configs.iter().zip(&reports) {
                let mae = mean_absolute_error(&exact.points, &r.points).expect("same sizes");
                eprintln!(
                    "{shape} seed {seed}: footprint {} lines, {} line accesses, {:?}: MAE {mae:.5}",
                    exact.footprint_lines, exact.line_accesses, mode
                );
                if *asserted {
                    assert!(mae <= 0.005, "{shape} seed {seed} {mode:?}: MAE {mae}");
                }
            }
        }
    }
}

/// MiniSim against full simulation for every policy, at 20 evenly spaced sizes up to the
/// footprint, on the 1.2M-request workload.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "release only: cargo test --release -p blocksight-tests --test mrc"
)]
fn minisim_error_against_full_simulation_is_within_one_percent() {
    let cfg = workload(1);
    let events: Vec<IoEvent> = Synthetic::new(cfg).collect();
    let mut exact = LruMrc::exact(4096);
    events.iter().for_each(|e| exact.observe(e));
    let sizes: Vec<u64> = exact
        .finish(&SizeSpec::Count(20), &TraceHeader::default())
        .points
        .iter()
        .map(|p| p.size_lines)
        .collect();
    let mut worst = 0.0f64;
    for policy in PolicyKind::ALL {
        let mc = MiniSimConfig::new(policy, 4096, sizes.clone());
        let mut mini = if policy.needs_future() {
            let mut f = MiniSimFuture::new(&mc);
            events.iter().for_each(|e| f.observe(e));
            MiniSim::with_future(mc, f).expect("config")
        } else {
            MiniSim::new(mc).expect("config")
        };
        events.iter().for_each(|e| mini.observe(e));
        let report = mini.finish(&TraceHeader::default());
        let mut sum = 0.0;
        let mut max = 0.0f64;
        for p in &report.points {
            let config = SimConfig::new(policy, p.size_lines, 4096);
            let mut full = if policy.needs_future() {
                let future = analyzer_core::cache::NextUse::from_events(&events, 4096);
                Simulator::with_future(&config, future).expect("config")
            } else {
                Simulator::new(&config).expect("config")
            };
            events.iter().for_each(|e| full.observe(e));
            let h = full.finish().whole.ratios.line_hit_ratio.unwrap_or(0.0);
            let err = (h - p.hit_ratio).abs();
            sum += err;
            max = max.max(err);
        }
        let mae = sum / report.points.len() as f64;
        eprintln!(
            "MiniSim {:<7} MAE {mae:.5} max {max:.5} over {} sizes",
            policy.name(),
            report.points.len()
        );
        worst = worst.max(mae);
        assert!(mae <= 0.01, "{policy:?}: MAE {mae}");
    }
    eprintln!("MiniSim worst MAE {worst:.5}");
}

/// A brute-force LRU cache: a deque, most recent at the front.
fn naive_lru_hits(keys: &[u64], capacity: usize) -> u64 {
    let mut q: VecDeque<u64> = VecDeque::new();
    let mut hits = 0;
    for &k in keys {
        if let Some(i) = q.iter().position(|&x| x == k) {
            hits += 1;
            q.remove(i);
        } else if q.len() == capacity {
            q.pop_back();
        }
        q.push_front(k);
    }
    hits
}

fn ev(device: u32, offset_bytes: u64, len_bytes: u32, op: Op) -> IoEvent {
    IoEvent {
        time_nanos: 0,
        device,
        offset_bytes,
        len_bytes,
        op,
        latency_nanos: None,
        pid: None,
    }
}

fn arb_events() -> impl Strategy<Value = Vec<IoEvent>> {
    proptest::collection::vec(
        (
            0u32..2,
            0u64..400_000,
            1u32..20_000,
            prop_oneof![Just(Op::Read), Just(Op::Write)],
        ),
        0..400,
    )
    .prop_map(|v| v.into_iter().map(|(d, o, l, op)| ev(d, o, l, op)).collect())
}

fn line_keys(events: &[IoEvent], line_bytes: u64) -> Vec<u64> {
    events
        .iter()
        .flat_map(|e| {
            e.block_range(line_bytes)
                .map(move |l| analyzer_core::hash::block_key(e.device, l))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every point of the exact curve equals a brute-force LRU cache of that size, and the
    /// cache simulator's LRU.
    #[test]
    fn exact_points_equal_naive_lru(events in arb_events()) {
        let mut m = LruMrc::exact(4096);
        events.iter().for_each(|e| m.observe(e));
        let keys = line_keys(&events, 4096);
        let sizes: Vec<u64> = (1..=40).chain([64, 100, 200]).collect();
        let report = m.finish(&SizeSpec::Lines(sizes), &TraceHeader::default());
        for p in &report.points {
            let hits = naive_lru_hits(&keys, p.size_lines as usize);
            let expected = if keys.is_empty() { 0.0 } else { hits as f64 / keys.len() as f64 };
            prop_assert!((p.hit_ratio - expected).abs() < 1e-12, "size {}: {} vs {}", p.size_lines, p.hit_ratio, expected);
            let mut sim = Simulator::new(&SimConfig::new(PolicyKind::Lru, p.size_lines, 4096)).expect("config");
            events.iter().for_each(|e| sim.observe(e));
            let h = sim.finish().whole.ratios.line_hit_ratio.unwrap_or(0.0);
            prop_assert!((p.hit_ratio - h).abs() < 1e-12, "simulator size {}: {} vs {}", p.size_lines, h, p.hit_ratio);
        }
    }

    /// SHARDS at rate 1 (fixed rate 1.0, or a fixed size larger than the footprint) is exact.
    #[test]
    fn shards_at_rate_one_equals_exact(events in arb_events()) {
        let mut ms = [
            LruMrc::exact(4096),
            LruMrc::shards(4096, ShardsMode::FixedRate { rate: 1.0 }),
            LruMrc::shards(4096, ShardsMode::FixedSize { max_lines: 1 << 20 }),
        ];
        for e in &events {
            ms.iter_mut().for_each(|m| m.observe(e));
        }
        let sizes = SizeSpec::Lines((1..=300).collect());
        let r: Vec<_> = ms.iter().map(|m| m.finish(&sizes, &TraceHeader::default())).collect();
        prop_assert_eq!(&r[0].points, &r[1].points);
        prop_assert_eq!(&r[0].points, &r[2].points);
    }
}

/// The real sample trace (PostgreSQL pgbench on a loop device, tests/data/sample; the raw tracefs
/// text), decoded with the engine.
fn pgbench_events() -> (TraceHeader, Vec<IoEvent>) {
    use std::io::Read;
    let file = std::fs::File::open(data_dir().join("sample/pgbench.tracefs.txt.zst"))
        .expect("sample trace");
    let mut bytes = Vec::new();
    ruzstd::decoding::StreamingDecoder::new(file)
        .expect("zstd")
        .read_to_end(&mut bytes)
        .expect("decompresses");
    let format = analyzer_core::format::sniff(&bytes).expect("a known format");
    let decoder = format.decoder(&Default::default()).expect("decoder");
    let d = analyzer_core::decode::decode_chunked(decoder, &bytes, 1 << 20).expect("decodes");
    (d.header, d.events)
}

/// SHARDS against exact on the real pgbench trace (118K requests, smaller than the 1M the
/// issue asks for; the synthetic test covers that size).
#[test]
fn shards_on_the_real_sample_trace() {
    let (header, events) = pgbench_events();
    let mut ms = [
        LruMrc::exact(4096),
        LruMrc::shards(4096, ShardsMode::FixedSize { max_lines: 65536 }),
        LruMrc::shards(4096, ShardsMode::FixedSize { max_lines: 8192 }),
        LruMrc::shards(4096, ShardsMode::FixedRate { rate: 0.1 }),
    ];
    for e in &events {
        ms.iter_mut().for_each(|m| m.observe(e));
    }
    let exact = ms[0].finish(&SizeSpec::Count(100), &header);
    let sizes = SizeSpec::Lines(exact.points.iter().map(|p| p.size_lines).collect());
    for (name, m) in ["s_max=64K", "s_max=8K", "R=0.1"].iter().zip(&ms[1..]) {
        let r = m.finish(&sizes, &header);
        let mae = mean_absolute_error(&exact.points, &r.points).expect("same sizes");
        eprintln!(
            "pgbench SHARDS {name}: MAE {mae:.5} (footprint {} lines)",
            exact.footprint_lines
        );
        if *name == "s_max=64K" {
            assert!(mae <= 0.005, "{name}: {mae}");
        }
    }
}

/// MiniSim against full simulation on the real pgbench trace, every policy, 20 sizes.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "release only: cargo test --release -p blocksight-tests --test mrc"
)]
fn minisim_on_the_real_sample_trace() {
    let (header, events) = pgbench_events();
    let mut exact = LruMrc::exact(4096);
    events.iter().for_each(|e| exact.observe(e));
    let sizes: Vec<u64> = exact
        .finish(&SizeSpec::Count(20), &header)
        .points
        .iter()
        .map(|p| p.size_lines)
        .collect();
    for policy in PolicyKind::ALL {
        let mc = MiniSimConfig::new(policy, 4096, sizes.clone());
        let mut mini = if policy.needs_future() {
            let mut f = MiniSimFuture::new(&mc);
            events.iter().for_each(|e| f.observe(e));
            MiniSim::with_future(mc, f).expect("config")
        } else {
            MiniSim::new(mc).expect("config")
        };
        events.iter().for_each(|e| mini.observe(e));
        let report = mini.finish(&header);
        let mut sum = 0.0;
        for p in &report.points {
            let config = SimConfig::new(policy, p.size_lines, 4096);
            let mut full = if policy.needs_future() {
                Simulator::with_future(
                    &config,
                    analyzer_core::cache::NextUse::from_events(&events, 4096),
                )
                .expect("config")
            } else {
                Simulator::new(&config).expect("config")
            };
            events.iter().for_each(|e| full.observe(e));
            sum += (full.finish().whole.ratios.line_hit_ratio.unwrap_or(0.0) - p.hit_ratio).abs();
        }
        let mae = sum / report.points.len() as f64;
        eprintln!("pgbench MiniSim {:<7} MAE {mae:.5}", policy.name());
        assert!(mae <= 0.01, "{policy:?}: {mae}");
    }
}

/// MiniSim bounded to a quarter pass per policy (`--minisim-max-passes 0.25`,
/// `SimulateRequest::curve_passes`: the Cache view's first curves until its estimate stage)
/// against full simulation of every size on the real pgbench trace: the policies and the 16
/// sizes the view draws (issue 12). MiniSim's defaults are measured beside them.
#[test]
fn interactive_minisim_on_the_real_sample_trace() {
    use analyzer_core::job::simulate::{CURVE_POLICIES, CURVE_SIZES, INTERACTIVE_CURVE_PASSES};
    let (header, events) = pgbench_events();
    let mut exact = LruMrc::exact(4096);
    events.iter().for_each(|e| exact.observe(e));
    let footprint = exact.footprint_lines();
    let sizes = analyzer_core::mrc::linear_sizes(footprint, CURVE_SIZES);
    let curve = |mut mc: MiniSimConfig, bound: Option<f64>| {
        mc.max_passes = bound;
        let mut mini = MiniSim::new(mc).expect("config");
        events.iter().for_each(|e| mini.observe(e));
        mini.finish(&header)
    };
    let mut worst = 0.0f64;
    for name in CURVE_POLICIES {
        let policy = PolicyKind::from_name(name).expect("policy");
        let mc = MiniSimConfig::new(policy, 4096, sizes.clone());
        let quick = curve(mc.clone(), Some(INTERACTIVE_CURVE_PASSES));
        let refined = curve(mc, None);
        let rate = quick.sampling.as_ref().expect("sampled").rate;
        assert!(rate < 1.0, "{name}: the quick curve samples");
        let (mut quick_sum, mut refined_sum) = (0.0, 0.0);
        for (q, r) in quick.points.iter().zip(&refined.points) {
            assert_eq!(q.size_lines, r.size_lines);
            let mut full =
                Simulator::new(&SimConfig::new(policy, q.size_lines, 4096)).expect("config");
            events.iter().for_each(|e| full.observe(e));
            let h = full.finish().whole.ratios.line_hit_ratio.unwrap_or(0.0);
            quick_sum += (h - q.hit_ratio).abs();
            refined_sum += (h - r.hit_ratio).abs();
        }
        let n = quick.points.len() as f64;
        let (quick_mae, refined_mae) = (quick_sum / n, refined_sum / n);
        eprintln!(
            "pgbench {name:<7} quick (rate >= {rate:.4}) MAE {quick_mae:.5}, refined MAE {refined_mae:.5}"
        );
        worst = worst.max(quick_mae);
        assert!(refined_mae <= 0.01, "{name}: refined {refined_mae}");
    }
    assert!(worst <= QUICK_CURVE_MAE, "worst quick-curve MAE {worst}");
}

/// The bound the quick curves meet on the sample trace, in hit-ratio points (0.01 = 1 point; measured 0.003-0.007).
const QUICK_CURVE_MAE: f64 = 0.01;

fn mrc_json(args: &[&str]) -> serde_json::Value {
    let out = run_blocksight(args);
    assert!(
        out.status.success(),
        "blocksight {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn miss_ratios(v: &serde_json::Value) -> Vec<f64> {
    v["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| p["miss_ratio"].as_f64().expect("number"))
        .collect()
}

#[test]
fn cli_exact_and_shards_agree_and_sizes_parse() {
    let sample = data_dir().join("sample/pgbench.tracefs.txt.zst");
    let s = sample.to_str().expect("utf-8 path");
    let exact = mrc_json(&["mrc", s, "--sizes", "64MiB,128MiB,256MiB,512MiB", "--json"]);
    assert_eq!(exact["method"], "exact");
    assert_eq!(exact["points"][2]["size_bytes"], 256u64 << 20);
    assert_eq!(exact["request_points"].as_array().map(Vec::len), Some(4));
    let shards = mrc_json(&[
        "mrc",
        s,
        "--method",
        "shards",
        "--sizes",
        "64MiB,128MiB,256MiB,512MiB",
        "--json",
    ]);
    for (a, b) in miss_ratios(&exact).iter().zip(miss_ratios(&shards)) {
        assert!((a - b).abs() < 0.02, "{a} vs {b}");
    }
    // The largest size is at least the footprint: only cold misses remain.
    let counted = mrc_json(&["mrc", s, "--sizes", "8", "--json"]);
    let points = counted["points"].as_array().expect("points");
    assert_eq!(points.len(), 8);
    assert_eq!(points[7]["size_lines"], counted["footprint_lines"]);
    assert!(counted["recommendation"]["knee"].is_object());
}

#[test]
fn cli_minisim_for_another_policy_and_errors() {
    let sample = data_dir().join("sample/pgbench.tracefs.txt.zst");
    let s = sample.to_str().expect("utf-8 path");
    let arc = mrc_json(&[
        "mrc",
        s,
        "--policy",
        "arc",
        "--sizes",
        "10%,50%,100%",
        "--json",
    ]);
    assert_eq!(arc["method"], "minisim");
    assert_eq!(arc["policy"], "arc");
    let m = miss_ratios(&arc);
    assert!(m[0] >= m[2] - 0.01, "{m:?}");
    let text = run_blocksight(["mrc", s, "--policy", "arc", "--method", "exact"]);
    assert!(!text.status.success());
    assert!(String::from_utf8_lossy(&text.stderr).contains("--method minisim"));
    let table = run_blocksight(["mrc", s, "--sizes", "1GiB"]);
    let stdout = String::from_utf8_lossy(&table.stdout);
    assert!(
        stdout.contains("miss ratio") && stdout.contains("1.0 GiB"),
        "{stdout}"
    );
}
