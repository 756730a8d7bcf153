//! The Cache view's recomputation in the worker: the chosen cache (size, line, policy, write
//! mode, product preset, admission) simulated on the whole trace or the brushed time window
//! with `analyzer_core::cache::Simulator` (hit ratios, back-end reads and writes, hits and
//! fills per time bin), and, on request, the hit-ratio curves of several policies overlaid,
//! each from one MiniSim pass (`analyzer_core::mrc::minisim`) fed by the same read of the
//! file. No browser API here: the worker feeds events, tests feed the sample.

use analyzer_core::cache::{PolicyKind, SampledSimulator, SimResult};
use analyzer_core::mrc::minisim::{MiniSim, MiniSimConfig};
use analyzer_core::mrc::{linear_sizes, MrcReport};
use analyzer_core::{IoEvent, TraceHeader};
use serde::{Deserialize, Serialize};

use crate::worker::predict::CacheParams;

/// Policies whose MiniSim curves are overlaid on the exact LRU curve (with the chosen one,
/// when it is another online policy).
pub const CURVE_POLICIES: [&str; 4] = ["fifo", "arc", "s3fifo", "lirs"];

/// Cache sizes per curve, evenly spaced up to the footprint.
pub const CURVE_SIZES: u32 = 16;

/// Most lines the chosen cache may hold exactly (about 45 bytes each for LRU, twice that for
/// policies with ghost lists: a few hundred MB of the tab's memory). A cache that would hold more
/// (its size and the trace's footprint both larger) is simulated on a spatial sample
/// ([`SampledSimulator`]) and the view says so.
pub const MAX_EXACT_LINES: u64 = 4 << 20;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheSimRequest {
    pub cache: CacheParams,
    /// The trace's footprint in lines of `cache.line_bytes` (from the analysis), for the
    /// curves' sizes.
    pub footprint_lines: u64,
    /// Also compute the policies' curves (they do not depend on the size, so the size slider
    /// does not ask for them again).
    pub with_curves: bool,
    /// Simulate only `[start, end)` nanoseconds after the first request (the Hot data view's
    /// brush), as the worker's load of that window does; `None` for the whole trace.
    #[serde(default)]
    pub window_nanos: Option<(u64, u64)>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheSimResult {
    pub request: CacheSimRequest,
    pub sim: SimResult,
    /// One MiniSim curve per policy, when asked for.
    pub curves: Vec<MrcReport>,
    /// The spatial sampling rate of `sim` when the cache was too large to simulate exactly
    /// (its counts are then estimates scaled to the whole trace); `None` when exact.
    #[serde(default)]
    pub sampled_rate: Option<f64>,
}

/// The footprint of a curve's analysis (in its own lines) in lines of `line_bytes`, for the
/// policies' curves' sizes: the bytes touched at the analysis's line size, rounded up. For a
/// coarser line this undercounts lines that are only partly touched, so the curves stop near
/// (not exactly at) the footprint.
pub fn footprint_lines_at(report: &MrcReport, line_bytes: u64) -> u64 {
    report
        .footprint_lines
        .saturating_mul(report.line_bytes)
        .div_ceil(line_bytes.max(1))
}

/// The simulations of one request, fed event by event.
pub struct CacheRun {
    request: CacheSimRequest,
    sim: SampledSimulator,
    curves: Vec<MiniSim>,
}

impl CacheRun {
    pub fn new(request: CacheSimRequest) -> Result<CacheRun, String> {
        let config = request.cache.sim_config()?;
        // Resident lines never exceed the footprint: a trace whose footprint fits is simulated
        // exactly whatever the cache size; otherwise a cache over the limit is sampled.
        let limit = if (1..=MAX_EXACT_LINES).contains(&request.footprint_lines) {
            u64::MAX
        } else {
            MAX_EXACT_LINES
        };
        let sim = SampledSimulator::new(&config, limit).map_err(|e| format!("cache: {e}"))?;
        let mut curves = Vec::new();
        if request.with_curves && request.footprint_lines > 0 {
            let sizes = linear_sizes(request.footprint_lines, CURVE_SIZES);
            let mut policies: Vec<PolicyKind> = CURVE_POLICIES
                .iter()
                .filter_map(|p| PolicyKind::from_name(p))
                .collect();
            if config.policy != PolicyKind::Lru && !policies.contains(&config.policy) {
                policies.push(config.policy);
            }
            for policy in policies {
                let mut c = MiniSimConfig::new(policy, config.line_bytes, sizes.clone());
                c.sim.mode = config.mode;
                curves.push(MiniSim::new(c).map_err(|e| format!("curve {}: {e}", policy.name()))?);
            }
        }
        Ok(CacheRun {
            request,
            sim,
            curves,
        })
    }

    pub fn observe(&mut self, e: &IoEvent) {
        self.sim.observe(e);
        for c in &mut self.curves {
            c.observe(e);
        }
    }

    pub fn finish(self, header: &TraceHeader) -> CacheSimResult {
        let rate = self.sim.rate();
        CacheSimResult {
            sampled_rate: (rate < 1.0).then_some(rate),
            request: self.request,
            sim: self.sim.finish(),
            curves: self.curves.into_iter().map(|c| c.finish(header)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer_core::cache::SimConfig;
    use analyzer_core::decode::DecodeOptions;
    use wasm_bindgen_test::wasm_bindgen_test;

    use crate::test_support::{sample_events, SAMPLE_ZST};

    fn run(request: CacheSimRequest, events: &[IoEvent], header: &TraceHeader) -> CacheSimResult {
        let mut run = CacheRun::new(request).expect("valid request");
        for e in events {
            run.observe(e);
        }
        run.finish(header)
    }

    fn params(size_bytes: u64, mode: &str) -> CacheParams {
        CacheParams {
            size_bytes,
            line_bytes: 64 << 10,
            policy: "lru".into(),
            mode: mode.into(),
            ..CacheParams::default()
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_cache_too_large_for_the_tab_is_sampled_and_says_so() {
        let (events, header) = sample_events(6_000);
        let request = |footprint_lines| CacheSimRequest {
            cache: CacheParams {
                line_bytes: 4096,
                ..params(64 << 30, "wt")
            },
            footprint_lines,
            with_curves: false,
            window_nanos: None,
        };
        // The footprint fits: exact, whatever the cache's size.
        let exact = run(request(150_000), &events, &header);
        assert_eq!(exact.sampled_rate, None);
        // A footprint (and cache) beyond the limit: a quarter of the lines in a scaled cache.
        let sampled = run(request(20_000_000), &events, &header);
        let rate = sampled.sampled_rate.expect("sampled");
        assert!((rate - 0.25).abs() < 0.001, "{rate}");
        assert_eq!(
            sampled.sim.config, exact.sim.config,
            "reported as the full cache"
        );
        let lines =
            |r: &CacheSimResult| r.sim.whole.counts.read.lines + r.sim.whole.counts.write.lines;
        let share = lines(&sampled) as f64 / lines(&exact) as f64;
        assert!((share - 1.0).abs() < 0.15, "scaled line count {share}");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_bigger_cache_hits_more_and_write_back_saves_writes() {
        let (events, header) = sample_events(6_000);
        let request = |size, mode, with_curves| CacheSimRequest {
            cache: params(size, mode),
            footprint_lines: 1024,
            with_curves,
            window_nanos: None,
        };
        let small = run(request(8 << 20, "wt", true), &events, &header);
        let big = run(request(512 << 20, "wt", false), &events, &header);
        let hit = |r: &CacheSimResult| r.sim.whole.ratios.line_hit_ratio.unwrap_or(0.0);
        assert!(hit(&big) > hit(&small), "{} vs {}", hit(&big), hit(&small));
        assert!(big.curves.is_empty());
        assert_eq!(small.curves.len(), CURVE_POLICIES.len());
        for c in &small.curves {
            assert_eq!(c.points.len(), CURVE_SIZES as usize, "{}", c.policy);
        }
        // Write-through sends every write to the disks; write-back absorbs rewrites.
        let wb = run(request(512 << 20, "wb", false), &events, &header);
        assert!(
            wb.sim.whole.counts.backend.write_ops < big.sim.whole.counts.backend.write_ops,
            "{} vs {}",
            wb.sim.whole.counts.backend.write_ops,
            big.sim.whole.counts.backend.write_ops
        );
    }

    /// The worker's path for a brushed window (the session cuts the window, as the load of
    /// that window does) equals simulating the window's events picked by hand, and differs
    /// from the whole trace. The time bins add up to the line counts the cards show.
    #[wasm_bindgen_test(unsupported = test)]
    fn a_time_window_scopes_the_simulation() {
        use crate::worker::session::Session;
        let window = (5_000_000_000, 12_000_000_000);
        let cache = CacheParams {
            size_bytes: 16 << 20,
            preset: Some("opencas-nhit".into()),
            ..CacheParams::default()
        };
        let request = |window_nanos| CacheSimRequest {
            cache: cache.clone(),
            footprint_lines: 0,
            with_curves: false,
            window_nanos,
        };
        let mut worker_run = CacheRun::new(request(Some(window))).expect("valid");
        let mut session = Session::new(None, DecodeOptions::default())
            .events_only()
            .with_window(Some(window));
        session
            .push_with(SAMPLE_ZST, &mut |e| worker_run.observe(e))
            .map_err(|e| e.plain_words())
            .expect("sample loads");
        let done = session
            .finish_with(&mut |e| worker_run.observe(e))
            .map_err(|e| e.plain_words())
            .expect("window has requests");
        let scoped = worker_run.finish(&done.header);

        let (all, header) = sample_events(usize::MAX);
        let origin = all[0].time_nanos;
        let picked: Vec<IoEvent> = all
            .iter()
            .filter(|e| (window.0..window.1).contains(&(e.time_nanos - origin)))
            .copied()
            .collect();
        assert!(!picked.is_empty() && picked.len() < all.len());
        let by_hand = run(request(Some(window)), &picked, &header);
        assert_eq!(scoped.sim, by_hand.sim);
        let whole = run(request(None), &all, &header);
        assert_ne!(scoped.sim.whole.counts, whole.sim.whole.counts);

        let w = &scoped.sim.whole.counts;
        let lines: u64 = scoped.sim.bins.iter().map(|b| b.lines).sum();
        let hits: u64 = scoped.sim.bins.iter().map(|b| b.line_hits).sum();
        let fills: u64 = scoped.sim.bins.iter().map(|b| b.fills).sum();
        assert_eq!(lines, w.read.lines + w.write.lines);
        assert_eq!(hits, w.read.line_hits + w.write.line_hits);
        assert_eq!(fills, w.fills);
    }

    /// `result.config` of `blocksight simulate pgbench.tracefs.txt.zst --preset bcache
    /// --admission nhit:2 --cache-size 64MiB --json`, copied from its output.
    const CLI_CONFIG_BCACHE: &str = r#"{"policy": "lru", "capacity_lines": 16384, "line_bytes": 4096, "mode": "write-through", "admission": {"kind": "n-hit", "n": 2}, "sequential_cutoff_bytes": 4194304, "warmup_nanos": 0, "time_bins": 100}"#;
    /// The same for `--preset dm-cache --mode wt --line-size 16KiB --admission seqcut:8MiB
    /// --cache-size 100MiB`.
    const CLI_CONFIG_DMCACHE: &str = r#"{"policy": "slru", "capacity_lines": 6400, "line_bytes": 16384, "mode": "write-through", "admission": {"kind": "seq-cutoff", "cutoff_bytes": 8388608}, "sequential_cutoff_bytes": null, "warmup_nanos": 0, "time_bins": 100}"#;

    /// `CacheParams` with a preset and an admission rule gives the configuration `blocksight
    /// simulate` prints (`result.config` of its `--json`) for the same flags.
    #[wasm_bindgen_test(unsupported = test)]
    fn preset_and_admission_match_the_cli_config() {
        let cli = |json: &str| -> SimConfig { serde_json::from_str(json).expect("cli config") };
        let bcache = CacheParams {
            size_bytes: 64 << 20,
            line_bytes: 4096,
            policy: "lru".into(),
            mode: "wt".into(),
            preset: Some("bcache".into()),
            admission: Some("nhit:2".into()),
        };
        assert_eq!(bcache.sim_config(), Ok(cli(CLI_CONFIG_BCACHE)));
        let dm = CacheParams {
            size_bytes: 100 << 20,
            line_bytes: 16 << 10,
            policy: "slru".into(),
            mode: "wt".into(),
            preset: Some("dm-cache".into()),
            admission: Some("seqcut:8388608".into()),
        };
        assert_eq!(dm.sim_config(), Ok(cli(CLI_CONFIG_DMCACHE)));
        // A preset alone keeps its admission rule and cutoff; junk is an error, not a default.
        let plain = CacheParams {
            admission: None,
            ..bcache.clone()
        }
        .sim_config()
        .expect("valid");
        assert_eq!(plain.admission, analyzer_core::cache::Admission::Always);
        assert_eq!(plain.sequential_cutoff_bytes, Some(4 << 20));
        for bad in [
            CacheParams {
                preset: Some("nope".into()),
                ..bcache.clone()
            },
            CacheParams {
                admission: Some("nhit:0".into()),
                ..bcache.clone()
            },
        ] {
            assert!(bad.sim_config().is_err(), "{bad:?}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn old_requests_without_the_new_fields_still_read() {
        let old = r#"{"cache":{"size_bytes":1048576,"line_bytes":4096,"policy":"arc","mode":"wb"},
            "footprint_lines":10,"with_curves":true}"#;
        let r: CacheSimRequest = serde_json::from_str(old).expect("old form");
        assert_eq!(r.cache.preset, None);
        assert_eq!(r.cache.admission, None);
        assert_eq!(r.window_nanos, None);
    }
}
