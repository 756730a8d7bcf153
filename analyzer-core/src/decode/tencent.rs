//! Tencent Cloud Block Storage traces (published on SNIA IOTTA; from the ATC '20 OSCA paper):
//! `Timestamp,Offset,Size,IOType,VolumeID`.
//!
//! `Timestamp` is Unix time in whole seconds; `Offset` and `Size` are 512-byte sectors;
//! `IOType` is 0 for a read and 1 for a write; `VolumeID` names the cloud volume (the device is
//! named by the number). Many requests share one second; they keep file order.

use super::text::{
    parse_u64, sectors_to_len_bytes, sectors_to_offset_bytes, split_fields, Clock, Delimiter,
    LineFormat, Out,
};
use crate::event::{IoEvent, Op};

#[derive(Default)]
pub struct Tencent {
    clock: Clock,
}

impl Tencent {
    pub fn new() -> Tencent {
        Tencent::default()
    }

    fn record(&mut self, line: &str, out: &mut Out) -> Result<IoEvent, String> {
        let (n, [ts, offset, size, io_type, volume]) =
            split_fields::<5>(line, Delimiter::Char(','));
        if n != 5 {
            return Err(format!("expected 5 comma-separated fields, found {n}"));
        }
        let seconds = parse_u64(ts, "Timestamp")?;
        let offset_bytes = sectors_to_offset_bytes(parse_u64(offset, "Offset")?)?;
        let len = sectors_to_len_bytes(parse_u64(size, "Size")?)?;
        let op = match io_type {
            "0" => Op::Read,
            "1" => Op::Write,
            _ => {
                return Err(format!(
                    "IOType {io_type:?} is neither 0 (read) nor 1 (write)"
                ))
            }
        };
        parse_u64(volume, "VolumeID")?;
        let time_nanos = self
            .clock
            .absolute_nanos(seconds, 1_000_000_000, out, |t0| {
                i64::try_from(t0)
                    .ok()
                    .and_then(|s| s.checked_mul(1_000_000_000))
            });
        Ok(IoEvent {
            time_nanos,
            device: out.device(volume)?,
            offset_bytes,
            len_bytes: len,
            op,
            latency_nanos: None,
            pid: None,
        })
    }
}

impl LineFormat for Tencent {
    fn name(&self) -> &'static str {
        "tencent"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        out.csv_record(line_no, text, &["timestamp", "offset"], |line, out| {
            self.record(line, out)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_chunked;
    use crate::decode::text::TextDecoder;

    #[test]
    fn time_counts_from_the_earliest_record_not_the_first_line() {
        // Regression (issue 14.2): the published sample starts with a record one second later
        // than the next ones, which all got time 0 and a zero duration.
        let input = "1538323200,4247200,128,1,1058\n\
                     1538323199,13896880,128,0,1063\n\
                     1538323199,49413280,16,0,1063\n\
                     1538323201,100,8,0,1063\n";
        let d =
            decode_chunked(TextDecoder::new(Tencent::new()), input.as_bytes(), 5).expect("decodes");
        let times: Vec<(u64, u64)> = d
            .events
            .iter()
            .map(|e| (e.time_nanos, e.offset_bytes / 512))
            .collect();
        assert_eq!(
            times,
            [
                (0, 13_896_880),
                (0, 49_413_280),
                (1_000_000_000, 4_247_200),
                (2_000_000_000, 100)
            ]
        );
        assert_eq!(d.header.start_unix_nanos, Some(1_538_323_199_000_000_000));
        assert_eq!(d.diagnostics.out_of_order_records, 2);
        assert_eq!(
            d.diagnostics.out_of_order_first.as_deref(),
            Some("line 2: 1 s earlier than a record before it")
        );
    }
}
