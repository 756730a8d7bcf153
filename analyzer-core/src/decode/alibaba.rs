//! Alibaba Cloud block traces (2020, github.com/alibaba/block-traces), `io_traces.csv`:
//! `device_id,opcode,offset,length,timestamp`.
//!
//! `device_id` names the virtual disk (the device is named by the number); `opcode` is `R` or
//! `W`; `offset` and `length` are bytes; `timestamp` is microseconds since the Unix epoch.

use super::text::{len_bytes, parse_u64, split_fields, Clock, Delimiter, LineFormat, Out};
use crate::event::{IoEvent, Op};

#[derive(Default)]
pub struct Alibaba {
    clock: Clock,
}

impl Alibaba {
    pub fn new() -> Alibaba {
        Alibaba::default()
    }

    fn record(&mut self, line: &str, out: &mut Out) -> Result<IoEvent, String> {
        let (n, [device, opcode, offset, length, ts]) =
            split_fields::<5>(line, Delimiter::Char(','));
        if n != 5 {
            return Err(format!("expected 5 comma-separated fields, found {n}"));
        }
        parse_u64(device, "device_id")?;
        let op = match opcode {
            "R" | "r" => Op::Read,
            "W" | "w" => Op::Write,
            _ => return Err(format!("opcode {opcode:?} is neither R nor W")),
        };
        let offset_bytes = parse_u64(offset, "offset")?;
        let len = len_bytes(parse_u64(length, "length")?)?;
        let micros = parse_u64(ts, "timestamp")?;
        let time_nanos = self.clock.absolute_nanos(micros, 1000, out, |t0| {
            i64::try_from(t0).ok().and_then(|us| us.checked_mul(1000))
        });
        Ok(IoEvent {
            time_nanos,
            device: out.device(device)?,
            offset_bytes,
            len_bytes: len,
            op,
            latency_nanos: None,
            pid: None,
        })
    }
}

impl LineFormat for Alibaba {
    fn name(&self) -> &'static str {
        "alibaba"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        out.csv_record(line_no, text, &["device_id", "opcode"], |line, out| {
            self.record(line, out)
        });
    }
}
