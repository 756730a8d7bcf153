//! Human-readable numbers for terminal output, and parsing of sizes and durations as users type
//! them (`200GiB`, `64k`, `10%`, `90s`, `1h30m`).

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

/// Sizes as users type them (`4KiB`, `200GiB`): the engine's parser, shared with the web app.
pub use analyzer_core::units::parse_size;

/// Parses `500ms`, `90s`, `10m`, `1h30m`, `2d`, or a bare number of seconds, into nanoseconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Ok((secs * 1e9) as u64);
        }
    }
    let mut total = 0f64;
    let mut rest = t;
    if rest.is_empty() {
        return Err("empty duration".into());
    }
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(split);
        let unit_len = after
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let v: f64 = num
            .parse()
            .map_err(|_| format!("{text:?} is not a duration like 90s, 10m or 1h30m"))?;
        let mult = match unit {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" | "" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            _ => {
                return Err(format!(
                    "{text:?}: unknown duration unit {unit:?} (use ms, s, m, h, d)"
                ))
            }
        };
        total += v * mult;
        rest = next;
    }
    Ok((total * 1e9) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    // parse_size is analyzer_core::units::parse_size, tested there.
    #[test]
    fn sizes() {
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(200 << 30), "200 GiB");
        assert_eq!(count(1234567), "1,234,567");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s"), Ok(90_000_000_000));
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(parse_duration("500ms"), Ok(500_000_000));
        assert_eq!(parse_duration("2"), Ok(2_000_000_000));
        assert!(parse_duration("5 fortnights").is_err());
        assert_eq!(duration(3_723_000_000_000), "1h02m03s");
    }
}
