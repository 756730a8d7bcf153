//! The Cache view's recomputation: the job is `analyzer_core::job::simulate` (the one `blocksight
//! simulate` runs). What stays here is the browser's bound on memory: a cache that would hold
//! more than [`MAX_EXACT_LINES`] lines over a larger footprint runs on a spatial sample. The
//! kernels' own caches (the product choices dm-cache and bcache) are the job
//! `analyzer_core::job::simulate::model` (what `blocksight simulate --preset dm-cache` runs),
//! bounded at [`MAX_MODEL_UNITS`].

pub use analyzer_core::job::simulate::{
    SimulateRequest as CacheSimRequest, SimulateResult as CacheSimResult, Stage, CURVE_POLICIES,
    CURVE_SIZES, VIEW_LINE_SIZES,
};

pub use analyzer_core::job::simulate::model::{
    KernelModel, Model, ModelOutput, ModelRequest, ModelResult, ModelView,
};

/// Most units a kernel model may hold in the tab ([`Model::with_memory_limit`]): dm-cache cache
/// blocks (about 24 bytes each plus the mapping), bcache buckets and index extents.
pub const MAX_MODEL_UNITS: u64 = 4 << 20;

/// Most lines the chosen cache may hold exactly (about 45 bytes each for LRU, twice that for
/// policies with ghost lists: a few hundred MB of the tab's memory).
pub const MAX_EXACT_LINES: u64 = 4 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer_core::job::simulate::Simulate;
    use analyzer_core::job::{run_events, CacheParams};
    use analyzer_core::{IoEvent, TraceHeader};
    use wasm_bindgen_test::wasm_bindgen_test;

    use crate::test_support::sample_events;

    fn run(request: CacheSimRequest, events: &[IoEvent], header: &TraceHeader) -> CacheSimResult {
        let job = Simulate::with_exact_limit(request, Some(MAX_EXACT_LINES)).expect("valid");
        run_events(job, header, events).expect("runs")
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_cache_too_large_for_the_tab_is_sampled_and_says_so() {
        let (events, header) = sample_events(6_000);
        let request = |footprint_lines| CacheSimRequest {
            footprint_lines: Some(footprint_lines),
            ..CacheSimRequest::new(CacheParams {
                size_bytes: 64 << 30,
                ..CacheParams::default()
            })
        };
        // The footprint fits: exact, whatever the cache's size.
        let exact = run(request(150_000), &events, &header);
        assert_eq!(exact.runs[0].sampled_rate, None);
        // A footprint (and cache) beyond the limit: a quarter of the lines in a scaled cache.
        let sampled = run(request(20_000_000), &events, &header);
        let rate = sampled.runs[0].sampled_rate.expect("sampled");
        assert!((rate - 0.25).abs() < 0.001, "{rate}");
        assert_eq!(
            sampled.runs[0].result.config, exact.runs[0].result.config,
            "reported as the full cache"
        );
        let lines = |r: &CacheSimResult| {
            let c = &r.runs[0].result.whole.counts;
            c.read.lines + c.write.lines
        };
        let share = lines(&sampled) as f64 / lines(&exact) as f64;
        assert!((share - 1.0).abs() < 0.15, "scaled line count {share}");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn old_requests_without_the_new_fields_still_read() {
        let old = r#"{"cache":{"size_bytes":1048576,"line_bytes":4096,"policy":"arc","mode":"wb"},
            "footprint_lines":10,"with_curves":true}"#;
        let r: CacheSimRequest = serde_json::from_str(old).expect("old form");
        assert_eq!(r.cache.preset, None);
        assert_eq!(r.cache.admission, None);
        assert_eq!(r.window_nanos, None);
        assert_eq!(r.footprint_lines, Some(10));
    }
}
