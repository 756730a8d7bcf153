//! The Array view's prediction: the job is `analyzer_core::job::predict` (the one `blocksight
//! predict` runs); what stays here is the UI's staging of requests (numbers at the chosen
//! depth first, the curve in a second pass) and the browser's bound on the cache tier's memory.

pub use analyzer_core::job::predict::{
    ArrayParams, ConfigPrediction, PredictRequest, PredictResult, CONTROLLER_CACHE_BYTES,
    CURVE_DEPTHS, MAX_LAYOUTS as MAX_CONFIGS,
};
pub use analyzer_core::job::CacheParams;

/// The SSD cache tier's devices (the job's default, `CacheDevicesParams::default()`), as the
/// views name them.
pub const CACHE_DISK_PRESET: &str = "sata-ssd";
pub const CACHE_DISKS: u32 = 2;

/// Most lines the cache tier may hold in a browser tab (about 45 bytes each for LRU, more with
/// ghost lists). The replay needs every request's real hit or miss, so it cannot sample as the
/// Cache view does; past this the prediction stops and says what to do instead.
pub const MAX_TIER_LINES: u64 = 8 << 20;

/// The UI's staging of a prediction request.
pub trait Staging: Sized {
    /// The request to send now for this one, given the request of the answer shown. The curve
    /// replays every layout ten times over, so it comes in a second pass: first the numbers at
    /// the chosen depth alone (a few times faster), then, once they are shown, the curve. An
    /// answer with the curve also serves a request without it (the view hides the curve).
    fn staged(self, shown: Option<&Self>) -> Self;

    /// The window from the URL's seconds, rounded as the Hot data view's re-analysis does.
    fn window_from_secs(window_secs: Option<(f64, f64)>) -> Option<(u64, u64)> {
        window_secs.map(|(a, b)| ((a * 1e9) as u64, (b * 1e9) as u64))
    }
}

impl Staging for PredictRequest {
    fn staged(self, shown: Option<&PredictRequest>) -> PredictRequest {
        let first = self.clone().with_curve(false);
        let full = self.clone().with_curve(true);
        match shown {
            Some(s) if *s == full => full,
            Some(s) if *s == first => self,
            _ => first,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer_core::job::predict::{CacheDevicesParams, Predict};
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
    fn the_views_name_the_jobs_cache_devices() {
        let d = CacheDevicesParams::default();
        assert_eq!((d.disk.as_str(), d.count), (CACHE_DISK_PRESET, CACHE_DISKS));
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
        let want = PredictRequest::new(vec![ArrayParams::default()], None, 16).with_curve(true);
        let first = want.clone().with_curve(false);
        // Nothing shown, or an answer for other layouts: the chosen depth alone first.
        assert_eq!(want.clone().staged(None), first);
        let other = PredictRequest::new(vec![params("raid0", 2, "nvme")], None, 16);
        assert_eq!(want.clone().staged(Some(&other)), first);
        // Its numbers shown: now the curve; the curve shown: the same request (not resent).
        assert_eq!(want.clone().staged(Some(&first)), want);
        assert_eq!(want.clone().staged(Some(&want)), want);
        // Without the curve: one pass, and an answer with the curve already serves it.
        assert_eq!(first.clone().staged(None), first);
        assert_eq!(first.clone().staged(Some(&first)), first);
        assert_eq!(first.clone().staged(Some(&want)), want);
        // The window is part of the request: a new window starts over.
        let windowed = want.clone().with_window(Some((0, 1_000_000_000)));
        assert_eq!(
            windowed.clone().staged(Some(&want)),
            windowed.with_curve(false)
        );
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
