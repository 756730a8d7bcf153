//! The live status line on stderr while recording, and the default output file name.

use std::io::Write;

use crate::output::{bytes, bytes_per_sec, count, per_sec};

use super::Progress;

/// One status line, redrawn in place (`\r` and erase-to-end) once a second when stderr is a
/// terminal.
pub fn status_line(p: &Progress) -> String {
    let secs = p.elapsed.as_secs();
    format!(
        "recording {:02}:{:02}:{:02}  {} events  {} events/s  {} from the kernel  dropped {}  file {}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        count(p.events),
        per_sec(p.events_per_sec),
        bytes_per_sec(p.bytes_per_sec),
        count(p.dropped),
        bytes(p.file_bytes)
    )
}

pub fn draw(p: &Progress) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[K{}", status_line(p));
    let _ = err.flush();
}

pub fn clear() {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[K");
    let _ = err.flush();
}

/// `YYYYmmdd-HHMMSS` in UTC for a Unix time in seconds (civil-from-days, Howard Hinnant).
pub fn utc_stamp(unix_secs: i64) -> String {
    let days = unix_secs.div_euclid(86_400);
    let secs_of_day = unix_secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        secs_of_day / 3600,
        secs_of_day / 60 % 60,
        secs_of_day % 60
    )
}

/// `blocksight-<host>-<YYYYmmdd-HHMMSS>.bst` (UTC), with characters unsafe in file names
/// replaced.
pub fn default_file_name(host: &str, unix_secs: i64) -> String {
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!(
        "blocksight-{}-{}.bst",
        if host.is_empty() { "host" } else { &host },
        utc_stamp(unix_secs)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps_and_names() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(1_709_210_096), "20240229-123456");
        assert_eq!(utc_stamp(1_798_761_599), "20261231-235959");
        assert_eq!(
            default_file_name("db 1/x", 0),
            "blocksight-db_1_x-19700101-000000.bst"
        );
    }

    #[test]
    fn status_line_has_the_numbers() {
        let p = Progress {
            elapsed: std::time::Duration::from_secs(3_725),
            events: 1_234_567,
            events_per_sec: 100_000.0,
            bytes_per_sec: 12_500_000.0,
            dropped: 0,
            file_bytes: 10 << 20,
        };
        let line = status_line(&p);
        assert!(line.contains("01:02:05"), "{line}");
        assert!(line.contains("1,234,567 events"), "{line}");
        // Issue 14.8: the one rule for counts and rates, as every other command prints them.
        assert!(line.contains("100,000 events/s"), "{line}");
        assert!(line.contains("11.9 MiB/s from the kernel"), "{line}");
        assert!(line.contains("10.0 MiB"), "{line}");
        let slow = status_line(&Progress {
            events_per_sec: 0.5,
            bytes_per_sec: 2_048.0,
            ..p
        });
        assert!(slow.contains(" 0.50 events/s"), "{slow}");
        assert!(slow.contains(" 2.0 KiB/s from the kernel"), "{slow}");
    }
}
