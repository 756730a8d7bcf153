//! Units, parsed and printed once for both hosts: sizes as storage engineers type them
//! (`4KiB`, `200GiB`, `1.5M`), and the human formatting of bytes, rates, durations, counts and
//! percentages, so a number on a web card reads exactly as in the CLI. Also [`escape`], the one
//! function every host uses before text from a trace or a path reaches a terminal.

/// Why [`parse_size`] refused a text. Each message quotes the text as typed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SizeError {
    /// No number at the start (`""`, `"KiB"`, `"1.2.3K"`).
    #[error("{text:?} is not a size like 64KiB or 200GiB")]
    NotANumber { text: String },
    /// A suffix that is not one of the binary units.
    #[error("{text:?}: unknown size unit {unit:?} (use K, M, G, T, KiB, MiB, GiB, TiB)")]
    UnknownUnit { text: String, unit: String },
    /// More bytes than 64 bits hold.
    #[error("{text:?} is out of range")]
    OutOfRange { text: String },
}

/// Parses `4096`, `4k`, `4KiB`, `64K`, `1.5GB`, `200GiB`, `2T`. Suffixes k/K/KiB/KB all mean
/// 1024 (as dd, fio and lsblk treat them); decimal units are not what storage engineers size
/// caches in.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| SizeError::NotANumber {
        text: text.to_owned(),
    })?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        _ => {
            return Err(SizeError::UnknownUnit {
                text: text.to_owned(),
                unit: unit.to_owned(),
            })
        }
    };
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(SizeError::OutOfRange {
            text: text.to_owned(),
        });
    }
    Ok(bytes.round() as u64)
}

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

/// A data rate in bytes per second with adaptive binary units, so a low rate never rounds to
/// zero: `0 B/s`, `12 B/s`, `3.5 KiB/s`, `120 MiB/s`.
pub fn bytes_per_sec(rate: f64) -> String {
    if !rate.is_finite() || rate <= 0.0 {
        return "0 B/s".into();
    }
    if rate < 10.0 {
        return format!("{} B/s", significant(rate));
    }
    format!("{}/s", bytes(rate.round() as u64))
}

/// A rate of events per second (`0.25`, `3.5`, `1,234`): whole numbers from 100 up, otherwise
/// two significant digits, so a low rate never reads as 0.
pub fn per_sec(rate: f64) -> String {
    if !rate.is_finite() || rate <= 0.0 {
        return "0".into();
    }
    if rate >= 100.0 {
        return count(rate.round() as u64);
    }
    significant(rate)
}

/// Two significant digits for a positive number below 100 (`0.0042`, `3.5`, `42`).
fn significant(v: f64) -> String {
    let digits = (1 - v.log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    s
}

/// Nanoseconds as `1h02m03s`, `4.25 s`, `12.3 ms`, `850 µs` or `120 ns`.
pub fn duration(nanos: u64) -> String {
    let s = nanos as f64 / 1e9;
    if s >= 3600.0 {
        let t = nanos / 1_000_000_000;
        format!("{}h{:02}m{:02}s", t / 3600, t / 60 % 60, t % 60)
    } else if s >= 60.0 {
        let t = nanos / 1_000_000_000;
        format!("{}m{:02}s", t / 60, t % 60)
    } else if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else if nanos >= 1000 {
        format!("{:.0} µs", s * 1e6)
    } else {
        format!("{nanos} ns")
    }
}

/// A duration in (possibly fractional) nanoseconds, as [`duration`].
pub fn duration_f64(nanos: f64) -> String {
    if !nanos.is_finite() || nanos <= 0.0 {
        return duration(0);
    }
    duration(nanos.round().min(u64::MAX as f64) as u64)
}

/// Thousands separators, the one rule everywhere: `1234567` -> `1,234,567`.
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

/// `1 line`, `2 lines`, `1,024 lines`: a count and its noun, singular for exactly one.
pub fn plural(n: u64, singular: &str, plural: &str) -> String {
    format!("{} {}", count(n), if n == 1 { singular } else { plural })
}

/// A ratio (0.25) as a percentage with one decimal (`25.0%`); never `-0.0%`; `-` for none.
pub fn percent(ratio: Option<f64>) -> String {
    match ratio {
        Some(r) if r.is_finite() => {
            let v = r * 100.0;
            // -0.04 rounds to "-0.0": print it as 0.
            let v = if v.abs() < 0.05 { 0.0 } else { v };
            format!("{v:.1}%")
        }
        _ => "-".into(),
    }
}

/// A decrease by `ratio` (0.25) as a signed change, `-25.0%`: nothing saved reads `0.0%`, never
/// `-0.0%`, and a negative `ratio` (an increase) reads `+10.0%`.
pub fn decrease(ratio: f64) -> String {
    let s = percent(Some(-ratio));
    if s == "-" || s == "0.0%" || s.starts_with('-') {
        s
    } else {
        format!("+{s}")
    }
}

/// `part` as a percentage of `whole` with one decimal, or `-` when `whole` is 0.
pub fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        percent(Some(part as f64 / whole as f64))
    }
}

/// Text from a trace or a path made safe for a terminal (and for any text sink): every control
/// character (C0, DEL, C1: ESC, BEL, NUL, backspace, carriage return, ...) and every bidi
/// override or isolate (U+202A–U+202E, U+2066–U+2069) and invisible direction mark becomes a
/// visible `\u{..}` escape; a backslash becomes `\\`, so an escaped text cannot pose as
/// another. Printable text, including non-ASCII letters, passes unchanged.
pub fn escape(text: &str) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if needs_escape(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn needs_escape(c: char) -> bool {
    c == '\\'
        || c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{061c}' | '\u{feff}')
}

/// Bytes of a path or a name that may not be UTF-8, escaped as [`escape`] does.
pub fn escape_lossy(text: &std::ffi::OsStr) -> String {
    escape(&text.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_is_one_rule() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(200 << 30), "200 GiB");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(12), "12");
        assert_eq!(duration(4_250_000_000), "4.25 s");
        assert_eq!(duration(3_723_000_000_000), "1h02m03s");
        assert_eq!(duration(120), "120 ns");
        assert_eq!(pct(1, 3), "33.3%");
        assert_eq!(pct(1, 0), "-");
        assert_eq!(percent(Some(-0.0001)), "0.0%");
        assert_eq!(percent(Some(-0.2)), "-20.0%");
        // Issue 14.8: `mrc` printed "back-end I/O -0.0%" for a cache that saves nothing.
        assert_eq!(decrease(0.0), "0.0%");
        assert_eq!(decrease(0.0004), "0.0%");
        assert_eq!(decrease(0.25), "-25.0%");
        assert_eq!(decrease(-0.1), "+10.0%");
        assert_eq!(decrease(f64::NAN), "-");
        assert_eq!(plural(1, "line", "lines"), "1 line");
        assert_eq!(plural(1000, "line", "lines"), "1,000 lines");
        assert_eq!(bytes_per_sec(0.0), "0 B/s");
        assert_eq!(bytes_per_sec(3.0), "3.0 B/s");
        assert_eq!(bytes_per_sec(2048.0), "2.0 KiB/s");
        assert_eq!(bytes_per_sec(20_000.0), "19.5 KiB/s");
        assert_eq!(per_sec(0.0042), "0.0042");
        assert_eq!(per_sec(3.46), "3.5");
        assert_eq!(per_sec(12_345.4), "12,345");
    }

    #[test]
    fn escape_makes_every_control_character_visible() {
        assert_eq!(escape("sda"), "sda");
        assert_eq!(escape("dévice"), "dévice");
        assert_eq!(escape("a\x1b[2Jb"), "a\\u{1b}[2Jb");
        for c in [
            '\x07', '\0', '\x08', '\r', '\n', '\x7f', '\u{9b}', '\u{202e}', '\u{2066}',
        ] {
            let e = escape(&format!("x{c}y"));
            assert!(!e.contains(c), "{c:?} in {e:?}");
            assert!(e.starts_with("x\\u{"), "{e:?}");
        }
        // A backslash is doubled, so `\u{1b}` typed in a name cannot pass for an escape.
        assert_eq!(escape("\\u{1b}"), "\\\\u{1b}");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size(" 4MiB "), Ok(4 << 20));
        assert_eq!(parse_size("200GiB"), Ok(200 << 30));
        assert_eq!(parse_size("1.5M"), Ok(3 << 19));
        assert!(matches!(
            parse_size("12 parsecs"),
            Err(SizeError::UnknownUnit { unit, .. }) if unit == " parsecs"
        ));
        assert!(matches!(parse_size(""), Err(SizeError::NotANumber { .. })));
        assert!(matches!(
            parse_size("1e999"),
            Err(SizeError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_size("99999999999999999999T"),
            Err(SizeError::OutOfRange { .. })
        ));
        // The message users see quotes what they typed.
        assert_eq!(
            parse_size("4 furlongs").map_err(|e| e.to_string()),
            Err("\"4 furlongs\": unknown size unit \" furlongs\" (use K, M, G, T, KiB, MiB, GiB, TiB)".into())
        );
    }
}
