//! The SYSTOR '17 traces (Lee et al., "Understanding Storage Traffic Characteristics on
//! Enterprise Virtual Desktop Infrastructure", SYSTOR '17; published on SNIA IOTTA):
//! `Timestamp,Response,IOType,LUN,Offset,Size`.
//!
//! `Timestamp` is Unix time in seconds with nine decimals (the published files have microsecond
//! precision: the last three digits are 0), `Response` the response time in seconds (decimal;
//! empty when unknown), `IOType` `R` or `W`, `LUN` the logical unit (the device, named `lunN`),
//! `Offset` and `Size` bytes. Records are only roughly sorted (see `decode::order`).

use super::text::{
    len_bytes, parse_seconds_nanos, parse_u64, split_fields, Clock, Delimiter, LineFormat, Out,
};
use crate::event::{IoEvent, Op};

#[derive(Default)]
pub struct Systor {
    clock: Clock,
    name: String,
}

impl Systor {
    pub fn new() -> Systor {
        Systor::default()
    }

    fn record(&mut self, line: &str, out: &mut Out) -> Result<IoEvent, String> {
        let (n, [ts, response, kind, lun, offset, size]) =
            split_fields::<6>(line, Delimiter::Char(','));
        if n != 6 {
            return Err(format!("expected 6 comma-separated fields, found {n}"));
        }
        let nanos = parse_seconds_nanos(ts)
            .ok_or_else(|| format!("Timestamp {ts:?} is not a number of seconds"))?;
        let latency_nanos = if response.is_empty() {
            None
        } else {
            Some(
                parse_seconds_nanos(response)
                    .ok_or_else(|| format!("Response {response:?} is not a number of seconds"))?,
            )
        };
        let op = match kind {
            "R" | "r" => Op::Read,
            "W" | "w" => Op::Write,
            _ => return Err(format!("IOType {kind:?} is neither R nor W")),
        };
        let lun = parse_u64(lun, "LUN")?;
        let offset_bytes = parse_u64(offset, "Offset")?;
        let len = len_bytes(parse_u64(size, "Size")?)?;
        let time_nanos = self
            .clock
            .absolute_nanos(nanos, 1, out, |t0| i64::try_from(t0).ok());
        self.name.clear();
        self.name.push_str("lun");
        self.name.push_str(&lun.to_string());
        Ok(IoEvent {
            time_nanos,
            device: out.device(&self.name)?,
            offset_bytes,
            len_bytes: len,
            op,
            latency_nanos,
            pid: None,
        })
    }
}

impl LineFormat for Systor {
    fn name(&self) -> &'static str {
        "systor"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        out.csv_record(
            line_no,
            text,
            &["timestamp", "response", "iotype"],
            |line, out| self.record(line, out),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_chunked;
    use crate::decode::text::TextDecoder;

    // Constructed in the published files' shape (header, second line earlier than the first).
    const LINES: &str = "Timestamp,Response,IOType,LUN,Offset,Size\n\
                         1456095145.133076000,0.000806000,R,0,899056122368,131072\n\
                         1456095145.126285000,0.008044000,W,1,4256049987072,122880\n\
                         1456095145.127398000,,R,0,3772288305664,58368\n";

    #[test]
    fn records_sorted_from_the_earliest_with_latency_and_luns() {
        let one = decode_chunked(
            TextDecoder::new(Systor::new()),
            LINES.as_bytes(),
            usize::MAX,
        )
        .expect("decodes");
        let tiny =
            decode_chunked(TextDecoder::new(Systor::new()), LINES.as_bytes(), 7).expect("decodes");
        assert_eq!(one, tiny);
        let got: Vec<(u64, u32, Op, Option<u64>, u64)> = one
            .events
            .iter()
            .map(|e| {
                (
                    e.time_nanos,
                    e.device,
                    e.op,
                    e.latency_nanos,
                    e.offset_bytes,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (0, 1, Op::Write, Some(8_044_000), 4_256_049_987_072),
                (1_113_000, 0, Op::Read, None, 3_772_288_305_664),
                (6_791_000, 0, Op::Read, Some(806_000), 899_056_122_368),
            ]
        );
        let names: Vec<&str> = one.header.devices.iter().map(|d| d.name.as_str()).collect();
        // Devices are numbered in the order lines name them.
        assert_eq!(names, ["lun0", "lun1"]);
        assert_eq!(one.header.start_unix_nanos, Some(1_456_095_145_126_285_000));
        assert_eq!(one.diagnostics.out_of_order_records, 2);
        assert_eq!(
            one.diagnostics.out_of_order_first.as_deref(),
            Some("line 3: 6.8 ms earlier than a record before it")
        );
    }
}
