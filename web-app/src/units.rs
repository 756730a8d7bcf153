//! Human-readable numbers for the UI: the engine's formatters (`analyzer_core::units`, the
//! CLI's too), so a number on a card reads exactly as in `blocksight stat`; and the progress
//! bar's time left.

pub use analyzer_core::units::{bytes, count, duration, pct};

/// Seconds left as `12 s`, `3 min`, `1 h 5 min`; for the progress bar.
pub fn eta(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return "-".into();
    }
    let s = seconds.round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, s / 60 % 60)
    }
}

/// The powers of two from `from` to `to` (a power of two times `from`), for a picker of sizes.
pub fn powers_of_two(from: u64, to: u64) -> impl Iterator<Item = u64> {
    std::iter::successors(Some(from), move |&s| (s < to).then(|| s * 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn formats_like_the_cli() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(200 << 30), "200 GiB");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(12), "12");
        assert_eq!(duration(4_250_000_000), "4.25 s");
        assert_eq!(duration(3_723_000_000_000), "1h02m03s");
        assert_eq!(pct(1, 3), "33.3%");
        assert_eq!(pct(1, 0), "-");
        assert_eq!(eta(75.0), "1 min 15 s");
        assert_eq!(eta(f64::NAN), "-");
    }
}
