//! The Array view's prediction: the job is `analyzer_core::job::predict` (the one `blocksight
//! predict` runs); what stays here is the UI's staging of requests (on a large trace estimates
//! first, then the chosen depth's exact numbers, then the curve) and the browser's bound on the
//! cache tier's memory.

pub use analyzer_core::job::predict::{
    ArrayParams, ConfigPrediction, PredictRequest, PredictResult, CONTROLLER_CACHE_BYTES,
    CURVE_DEPTHS, ESTIMATE_MIN_EVENTS, ESTIMATE_REQUESTS, MAX_LAYOUTS as MAX_CONFIGS,
};
pub use analyzer_core::job::CacheParams;

/// Most lines the cache tier may hold in a browser tab (about 45 bytes each for LRU, more with
/// ghost lists). The exact replay needs every request's real hit or miss, so it cannot sample as
/// the Cache view does (an estimate's LRU tier does: `SimulatorTier::sampled`); past this the
/// prediction stops and says what to do instead.
pub const MAX_TIER_LINES: u64 = 8 << 20;

/// The UI's staging of a prediction request.
pub trait Staging: Sized {
    /// The request to send now for this one, given the request of the answer shown and the
    /// events of the trace (or window). Each stage is sent once the previous one is shown:
    /// - on a trace of more than [`ESTIMATE_MIN_EVENTS`] events, estimates of about
    ///   [`ESTIMATE_REQUESTS`] requests from
    ///   evenly spaced slices (`PredictRequest::estimate`): first without the cache tier, then
    ///   with it (its simulator reads every request, the replays only the slices; an LRU tier
    ///   simulates the slices' lines and a spatial sample of the others), and the curve, when
    ///   it is on; when the job with the tier reads the trace twice, it is sent at once and
    ///   answers without the tier after its first pass
    ///   (`PredictRequest::without_cache_first`), which is then shown while it goes on;
    /// - the numbers at the chosen depth, exact;
    /// - the curve, which replays every layout ten times over.
    ///
    /// An answer with the curve also serves a request without it (the view hides the curve).
    fn staged(self, shown: Option<&Self>, events: u64) -> Self;

    /// The window from the URL's seconds, rounded as the Hot data view's re-analysis does.
    fn window_from_secs(window_secs: Option<(f64, f64)>) -> Option<(u64, u64)> {
        window_secs.map(|(a, b)| ((a * 1e9) as u64, (b * 1e9) as u64))
    }
}

impl Staging for PredictRequest {
    fn staged(self, shown: Option<&PredictRequest>, events: u64) -> PredictRequest {
        let full = self.clone().with_curve(true);
        if shown == Some(&full) {
            return full;
        }
        let exact = self.clone().with_curve(false);
        let mut stages = Vec::new();
        if let Some(estimate) = exact.estimate(events) {
            // With the curve on, the estimate with the cache tier comes with its curve: each
            // stage reads the trace and runs the cache simulator over it again.
            let with = estimate.clone().with_curve(self.curve);
            // A job that reads the trace twice (an LRU tier's slice lines, a footprint,
            // dm-cache's origin) answers without the tier after its first pass
            // (`PredictedSoFar`, shown while it goes on), so that request is not sent alone.
            if estimate.cache.is_some() && with.without_cache_first().is_none() {
                stages.push(PredictRequest {
                    cache: None,
                    ..estimate
                });
            }
            stages.push(with);
        }
        stages.push(exact);
        if self.curve {
            stages.push(full);
        }
        let next = shown
            .and_then(|s| stages.iter().position(|x| x == s))
            .map_or(0, |i| (i + 1).min(stages.len() - 1));
        stages.swap_remove(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer_core::job::predict::Predict;
    use analyzer_core::job::Job;
    use analyzer_core::IoEvent;
    use wasm_bindgen_test::wasm_bindgen_test;

    use crate::test_support::sample_events;

    fn params(level: &str, disks: u32, disk: &str) -> ArrayParams {
        ArrayParams {
            level: level.into(),
            disks,
            disk: disk.into(),
            ..ArrayParams::default()
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_cache_tier_too_large_for_the_tab_stops_in_words() {
        let (events, _) = sample_events(5_000);
        let request = PredictRequest::new(
            vec![ArrayParams::default()],
            Some(CacheParams {
                size_bytes: 1 << 30,
                ..CacheParams::default()
            }),
            4,
        );
        let run = |limit: u64| {
            let mut job = Predict::new(request.clone())
                .expect("valid")
                .with_tier_limit(limit);
            job.begin_pass(0);
            events.iter().for_each(|e: &IoEvent| job.observe(e));
            job.check_memory().map_err(|e| e.to_string())
        };
        assert_eq!(run(MAX_TIER_LINES), Ok(()));
        let err = run(1_000).expect_err("over the limit");
        assert!(
            err.contains("blocksight predict") && err.contains("1000 lines"),
            "{err}"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_curve_comes_in_a_second_pass() {
        // A small trace: no estimate.
        let n = ESTIMATE_MIN_EVENTS;
        let want = PredictRequest::new(vec![ArrayParams::default()], None, 16).with_curve(true);
        let first = want.clone().with_curve(false);
        // Nothing shown, or an answer for other layouts: the chosen depth alone first.
        assert_eq!(want.clone().staged(None, n), first);
        let other = PredictRequest::new(vec![params("raid0", 2, "nvme")], None, 16);
        assert_eq!(want.clone().staged(Some(&other), n), first);
        // Its numbers shown: now the curve; the curve shown: the same request (not resent).
        assert_eq!(want.clone().staged(Some(&first), n), want);
        assert_eq!(want.clone().staged(Some(&want), n), want);
        // Without the curve: one pass, and an answer with the curve already serves it.
        assert_eq!(first.clone().staged(None, n), first);
        assert_eq!(first.clone().staged(Some(&first), n), first);
        assert_eq!(first.clone().staged(Some(&want), n), want);
        // The window is part of the request: a new window starts over.
        let windowed = want.clone().with_window(Some((0, 1_000_000_000)));
        assert_eq!(
            windowed.clone().staged(Some(&want), n),
            windowed.with_curve(false)
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_large_trace_gets_estimates_first() {
        let n = 1_118_208;
        let cache = Some(CacheParams::default());
        let want = PredictRequest::new(vec![ArrayParams::default()], cache, 16).with_curve(true);
        let exact = want.clone().with_curve(false);
        let estimate = exact.estimate(n).expect("an estimate of a large trace");
        assert_eq!(
            estimate
                .sample
                .map(|s| (s.slice_requests, s.every_requests)),
            Some((1_024, n / 32))
        );
        let bare = PredictRequest {
            cache: None,
            ..estimate.clone()
        };
        let estimate_curve = estimate.clone().with_curve(true);
        // The default tier (LRU, write-through) reads the slices' lines first: its job answers
        // without the tier after that pass, so the estimate without it is not sent alone.
        assert_eq!(estimate_curve.without_cache_first(), Some(bare.clone()));
        // Each stage once the one before it is shown: the estimate with the cache tier and its
        // curve (its answer without the tier shown first, then its own), the exact numbers,
        // the exact curve.
        let mut shown = None;
        let mut sent = Vec::new();
        for answer in [Some(bare.clone()), None, None, None, None] {
            let next = want.clone().staged(shown.as_ref(), n);
            sent.push(next.clone());
            if let Some(early) = answer {
                // The early answer shown: the same request again, so it is not resent.
                assert_eq!(want.clone().staged(Some(&early), n), next);
            }
            shown = Some(next);
        }
        assert_eq!(
            sent,
            [
                estimate_curve,
                exact.clone(),
                want.clone(),
                want.clone(),
                want.clone()
            ]
        );
        // Without the curve: the estimate (and its early answer), then the exact numbers,
        // which stay.
        assert_eq!(exact.clone().staged(None, n), estimate);
        assert_eq!(exact.clone().staged(Some(&bare), n), estimate);
        assert_eq!(exact.clone().staged(Some(&estimate), n), exact);
        assert_eq!(exact.clone().staged(Some(&exact), n), exact);
        // A tier whose job reads the trace once (bcache's model at a size in bytes): the
        // estimate without the tier is its own first stage.
        let bcache = PredictRequest::new(
            vec![ArrayParams::default()],
            Some(CacheParams {
                preset: Some("bcache".into()),
                size_bytes: 1 << 30,
                ..CacheParams::default()
            }),
            16,
        );
        let one_pass = bcache.estimate(n).expect("an estimate");
        assert_eq!(one_pass.without_cache_first(), None);
        let one_pass_bare = PredictRequest {
            cache: None,
            ..one_pass.clone()
        };
        assert_eq!(bcache.clone().staged(None, n), one_pass_bare);
        assert_eq!(bcache.clone().staged(Some(&one_pass_bare), n), one_pass);
        assert_eq!(bcache.clone().staged(Some(&one_pass), n), bcache);
        // An open-loop replay keeps the trace's timing: no estimate.
        let open = PredictRequest {
            speed: Some(1.0),
            ..exact.clone()
        };
        assert_eq!(open.clone().staged(None, n), open);
    }

    /// The worker is built without array description files (`analyzer-core`'s feature
    /// `array-files`, which would bring serde_json's parser into its bundle): a request naming
    /// one gets a plain refusal that points at the CLI, not a wrong array. (`cargo test -p
    /// web-app`, as the README's test command runs it, resolves the core's features for the web
    /// app alone.)
    #[wasm_bindgen_test(unsupported = test)]
    fn an_array_description_file_is_refused_in_plain_words() {
        let params = ArrayParams {
            spec_json: Some(r#"{"disk":"nvme","layout":{"level":"raid0","disks":2}}"#.into()),
            ..ArrayParams::default()
        };
        let err = Predict::new(PredictRequest::new(vec![params], None, 4))
            .map(|_| ())
            .and_then(|()| {
                ArrayParams {
                    spec_json: Some("{}".into()),
                    ..ArrayParams::default()
                }
                .config()
                .map(|_| ())
            })
            .expect_err("refused")
            .to_string();
        assert!(err.contains("blocksight predict --array"), "{err}");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn old_requests_without_the_new_fields_still_parse() {
        let old = r#"{"configs":[],"cache":null,"outstanding":4}"#;
        let r: PredictRequest = serde_json::from_str(old).expect("parses");
        assert_eq!(r, PredictRequest::new(Vec::new(), None, 4));
        assert_eq!(r.loads().len(), 1);
        assert_eq!(r.with_curve(true).loads().len(), CURVE_DEPTHS.len());
    }
}
