//! Sizes as storage engineers type them (`4KiB`, `200GiB`, `1.5M`), parsed once for the CLI's
//! flags and the web app's inputs, so `--admission seqcut:4MiB` and the browser's cutoff field
//! mean the same number of bytes.

/// Parses `4096`, `4k`, `4KiB`, `64K`, `1.5GB`, `200GiB`, `2T`. Suffixes k/K/KiB/KB all mean
/// 1024 (as dd, fio and lsblk treat them); decimal units are not what storage engineers size
/// caches in.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a size like 64KiB or 200GiB"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        _ => {
            return Err(format!(
                "{text:?}: unknown size unit {unit:?} (use K, M, G, T, KiB, MiB, GiB, TiB)"
            ))
        }
    };
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("{text:?} is out of range"));
    }
    Ok(bytes.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size(" 4MiB "), Ok(4 << 20));
        assert_eq!(parse_size("200GiB"), Ok(200 << 30));
        assert_eq!(parse_size("1.5M"), Ok(3 << 19));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("1e999").is_err());
    }
}
