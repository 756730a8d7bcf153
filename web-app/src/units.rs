//! Human-readable numbers for the UI, matching the CLI's conventions (binary units, thousands
//! separators), so a number on a card reads the same as in `blocksight stat`.

/// `1536` -> `1.5 KiB`; binary units as Linux tools print them.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else if v >= 100.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Thousands separators: `1234567` -> `1,234,567`.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Nanoseconds as `1h02m03s`, `4.25 s`, `12.3 ms` or `850 µs`.
pub fn duration(nanos: u64) -> String {
    let s = nanos as f64 / 1e9;
    if s >= 3600.0 {
        let t = s as u64;
        format!("{}h{:02}m{:02}s", t / 3600, t / 60 % 60, t % 60)
    } else if s >= 60.0 {
        let t = s as u64;
        format!("{}m{:02}s", t / 60, t % 60)
    } else if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

/// `part` as a percentage of `whole` with one decimal, or `-` when `whole` is 0.
pub fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

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
