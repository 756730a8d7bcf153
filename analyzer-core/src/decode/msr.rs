//! MSR Cambridge block traces as published by SNIA IOTTA (trace set 388):
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//!
//! `Timestamp` is a Windows FILETIME (100 ns ticks since 1601-01-01), `Type` is `Read` or
//! `Write`, `Offset` and `Size` are bytes, `ResponseTime` is in 100 ns ticks and becomes the
//! latency. Each `Hostname` + `DiskNumber` pair is a device named `hostname_disknumber`
//! (`hm_0`, `src1_2`), the names the trace files use.

use super::text::{len_bytes, parse_u64, split_fields, Clock, Delimiter, LineFormat, Out};
use crate::event::{IoEvent, Op};

/// FILETIME ticks between 1601-01-01 and the Unix epoch.
const FILETIME_UNIX_EPOCH_TICKS: u64 = 116_444_736_000_000_000;
const NANOS_PER_TICK: u64 = 100;

#[derive(Default)]
pub struct Msr {
    clock: Clock,
    name: String,
}

impl Msr {
    pub fn new() -> Msr {
        Msr::default()
    }

    fn record(&mut self, line: &str, out: &mut Out) -> Result<IoEvent, String> {
        let (n, [ts, host, disk, kind, offset, size, response]) =
            split_fields::<7>(line, Delimiter::Char(','));
        if n != 7 {
            return Err(format!("expected 7 comma-separated fields, found {n}"));
        }
        let ticks = parse_u64(ts, "Timestamp")?;
        if host.is_empty()
            || !host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(format!("Hostname {host:?} is not a host name"));
        }
        let disk = parse_u64(disk, "DiskNumber")?;
        let op = if kind.eq_ignore_ascii_case("read") {
            Op::Read
        } else if kind.eq_ignore_ascii_case("write") {
            Op::Write
        } else {
            return Err(format!("Type {kind:?} is neither Read nor Write"));
        };
        let offset_bytes = parse_u64(offset, "Offset")?;
        let len = len_bytes(parse_u64(size, "Size")?)?;
        let response_ticks = parse_u64(response, "ResponseTime")?;
        let time_nanos = self.clock.absolute_nanos(ticks, NANOS_PER_TICK, out, |t0| {
            let since_unix = i128::from(t0) - i128::from(FILETIME_UNIX_EPOCH_TICKS);
            i64::try_from(since_unix * i128::from(NANOS_PER_TICK)).ok()
        });
        self.name.clear();
        self.name.push_str(host);
        self.name.push('_');
        self.name.push_str(&disk.to_string());
        Ok(IoEvent {
            time_nanos,
            device: out.device(&self.name)?,
            offset_bytes,
            len_bytes: len,
            op,
            latency_nanos: Some(response_ticks.saturating_mul(NANOS_PER_TICK)),
            pid: None,
        })
    }
}

impl LineFormat for Msr {
    fn name(&self) -> &'static str {
        "msr"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        out.csv_record(line_no, text, &["timestamp", "hostname"], |line, out| {
            self.record(line, out)
        });
    }
}
