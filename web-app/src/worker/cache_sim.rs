//! The Cache view's recomputation in the worker: the chosen cache (size, line, policy, write
//! mode) simulated on the whole trace with `analyzer_core::cache::Simulator` (hit ratios,
//! back-end reads and writes), and, on request, the hit-ratio curves of several policies
//! overlaid, each from one MiniSim pass (`analyzer_core::mrc::minisim`) fed by the same read
//! of the file. No browser API here: the worker feeds events, tests feed the sample.

use analyzer_core::cache::{PolicyKind, SimResult, Simulator};
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheSimRequest {
    pub cache: CacheParams,
    /// The trace's footprint in lines of `cache.line_bytes` (from the analysis), for the
    /// curves' sizes.
    pub footprint_lines: u64,
    /// Also compute the policies' curves (they do not depend on the size, so the size slider
    /// does not ask for them again).
    pub with_curves: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheSimResult {
    pub request: CacheSimRequest,
    pub sim: SimResult,
    /// One MiniSim curve per policy, when asked for.
    pub curves: Vec<MrcReport>,
}

/// The simulations of one request, fed event by event.
pub struct CacheRun {
    request: CacheSimRequest,
    sim: Simulator,
    curves: Vec<MiniSim>,
}

impl CacheRun {
    pub fn new(request: CacheSimRequest) -> Result<CacheRun, String> {
        let config = request.cache.sim_config()?;
        let sim = Simulator::new(&config).map_err(|e| format!("cache: {e}"))?;
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
        CacheSimResult {
            request: self.request,
            sim: self.sim.finish(),
            curves: self.curves.into_iter().map(|c| c.finish(header)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer_core::compress::Decompressing;
    use analyzer_core::decode::DecodeOptions;
    use analyzer_core::{Decoder, TraceFormat};
    use wasm_bindgen_test::wasm_bindgen_test;

    const SAMPLE_ZST: &[u8] = include_bytes!("../../../tests/data/sample/pgbench.tracefs.txt.zst");

    /// The first `n` events of the real sample trace and its header (a prefix keeps the
    /// debug-build browser test short).
    fn sample_events(n: usize) -> (Vec<IoEvent>, TraceHeader) {
        let mut d = Decompressing::new(
            TraceFormat::TracefsText
                .decoder(&DecodeOptions::default())
                .expect("decoder"),
        );
        d.push(SAMPLE_ZST);
        d.finish();
        let mut out = Vec::new();
        while let Some(e) = d.next_event().expect("sample decodes") {
            out.push(e);
            if out.len() == n {
                break;
            }
        }
        (out, d.header().clone())
    }

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
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_bigger_cache_hits_more_and_write_back_saves_writes() {
        let (events, header) = sample_events(6_000);
        let request = |size, mode, with_curves| CacheSimRequest {
            cache: params(size, mode),
            footprint_lines: 1024,
            with_curves,
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
}
