//! UMass Trace Repository / Storage Performance Council traces (Financial1/2, WebSearch1-3):
//! `ASU,LBA,Size,Opcode,Timestamp[,optional fields]`, per the SPC Trace File Format
//! Specification 1.0.1.
//!
//! `ASU` (application specific unit) becomes the device, named `asuN`; `LBA` is in 512-byte
//! sectors; `Size` is bytes; `Opcode` is `r`/`R` or `w`/`W`; `Timestamp` is seconds (a decimal
//! number) since the start of the trace. Fields after the fifth are ignored.

use super::text::{
    len_bytes, parse_seconds_nanos, parse_u64, sectors_to_offset_bytes, split_fields, Delimiter,
    LineFormat, Out,
};
use crate::event::{IoEvent, Op};

#[derive(Default)]
pub struct Spc {
    name: String,
}

impl Spc {
    pub fn new() -> Spc {
        Spc::default()
    }

    fn record(&mut self, line: &str, out: &mut Out) -> Result<IoEvent, String> {
        let (n, [asu, lba, size, opcode, ts]) = split_fields::<5>(line, Delimiter::Char(','));
        if n < 5 {
            return Err(format!(
                "expected at least 5 comma-separated fields, found {n}"
            ));
        }
        let asu = parse_u64(asu, "ASU")?;
        let offset_bytes = sectors_to_offset_bytes(parse_u64(lba, "LBA")?)?;
        let len = len_bytes(parse_u64(size, "Size")?)?;
        let op = match opcode {
            "r" | "R" => Op::Read,
            "w" | "W" => Op::Write,
            _ => return Err(format!("Opcode {opcode:?} is neither r nor w")),
        };
        let time_nanos = parse_seconds_nanos(ts)
            .ok_or_else(|| format!("Timestamp {ts:?} is not a number of seconds"))?;
        self.name.clear();
        self.name.push_str("asu");
        self.name.push_str(&asu.to_string());
        Ok(IoEvent {
            time_nanos,
            device: out.device(&self.name)?,
            offset_bytes,
            len_bytes: len,
            op,
            latency_nanos: None,
            pid: None,
        })
    }
}

impl LineFormat for Spc {
    fn name(&self) -> &'static str {
        "spc"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        out.csv_record(line_no, text, &["asu", "lba"], |line, out| {
            self.record(line, out)
        });
    }
}
