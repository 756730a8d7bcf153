//! DiskSim's ASCII trace format and MQSim's reading of it: five whitespace-separated fields per
//! request, `arrival_time device block size type`.
//!
//! - `mqsim` (MQSim, Tavakkol et al., FAST '18; its `traces/*.trace` files): arrival time in
//!   whole nanoseconds (MQSim's default `Time_Unit`), device number, start sector (512 bytes),
//!   size in sectors, type `0` write or `1` read.
//! - `disksim` (the DiskSim 4.0 manual's "ASCII" input format): arrival time in milliseconds as a
//!   decimal, device number, block number (512-byte blocks), block count, and flags whose bit 0
//!   is set for a read.
//!
//! The two differ in the time unit only; sniffing picks `mqsim` when every time is an integer
//! and `disksim` when times have decimals. A DiskSim trace with integer times must be named with
//! `--format disksim`. Devices are named `devN`.

use super::text::{
    parse_scaled, parse_u64, record_text, sectors_to_len_bytes, sectors_to_offset_bytes,
    split_fields, Delimiter, LineFormat, Out,
};
use crate::event::{IoEvent, Op};

/// Which of the two readings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    MqSim,
    DiskSim,
}

pub struct DiskSimAscii {
    flavor: Flavor,
    name: String,
}

impl DiskSimAscii {
    pub fn new(flavor: Flavor) -> DiskSimAscii {
        DiskSimAscii {
            flavor,
            name: String::new(),
        }
    }

    fn record(&mut self, line: &str, out: &mut Out) -> Result<IoEvent, String> {
        let (n, [time, device, block, size, kind]) = split_fields::<5>(line, Delimiter::Whitespace);
        if n != 5 {
            return Err(format!(
                "expected 5 space-separated fields (time device block size type), found {n}"
            ));
        }
        let time_nanos = match self.flavor {
            Flavor::MqSim => parse_u64(time, "arrival time (ns)")?,
            // Milliseconds with up to six decimals, exactly.
            Flavor::DiskSim => parse_scaled(time, 6)
                .ok_or_else(|| format!("arrival time {time:?} is not a number of milliseconds"))?,
        };
        let device = parse_u64(device, "device number")?;
        let offset_bytes = sectors_to_offset_bytes(parse_u64(block, "block number")?)?;
        let len_bytes = sectors_to_len_bytes(parse_u64(size, "size in blocks")?)?;
        let op = match self.flavor {
            Flavor::MqSim => match kind {
                "0" => Op::Write,
                "1" => Op::Read,
                _ => return Err(format!("type {kind:?} is neither 0 (write) nor 1 (read)")),
            },
            Flavor::DiskSim => {
                if parse_u64(kind, "flags")? & 1 == 1 {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
        self.name.clear();
        self.name.push_str("dev");
        self.name.push_str(&device.to_string());
        Ok(IoEvent {
            time_nanos,
            device: out.device(&self.name)?,
            offset_bytes,
            len_bytes,
            op,
            latency_nanos: None,
            pid: None,
        })
    }
}

impl LineFormat for DiskSimAscii {
    fn name(&self) -> &'static str {
        match self.flavor {
            Flavor::MqSim => "mqsim",
            Flavor::DiskSim => "disksim",
        }
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        let Some(line) = record_text(line_no, text, out) else {
            return;
        };
        match self.record(line, out) {
            Ok(e) => out.emit(e),
            Err(why) => out.skip(line_no, why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_chunked;
    use crate::decode::text::TextDecoder;

    fn decode(flavor: Flavor, input: &str) -> crate::decode::Decoded {
        let one = decode_chunked(
            TextDecoder::new(DiskSimAscii::new(flavor)),
            input.as_bytes(),
            usize::MAX,
        )
        .expect("decodes");
        let tiny = decode_chunked(
            TextDecoder::new(DiskSimAscii::new(flavor)),
            input.as_bytes(),
            5,
        )
        .expect("decodes");
        assert_eq!(one, tiny);
        one
    }

    #[test]
    fn mqsim_times_are_nanoseconds_and_type_1_is_a_read() {
        // Constructed lines in MQSim's shape.
        let d = decode(
            Flavor::MqSim,
            "938513000 4 264719034 16 0\n938828000 3 197570570 16 1\n",
        );
        let got = d.rows();
        assert_eq!(
            got,
            [
                (938_513_000, "dev4", 264_719_034 * 512, 8192, Op::Write),
                (938_828_000, "dev3", 197_570_570 * 512, 8192, Op::Read),
            ]
        );
    }

    #[test]
    fn disksim_times_are_decimal_milliseconds_and_flag_bit_0_reads() {
        let d = decode(
            Flavor::DiskSim,
            "0.000000 0 1024 8 1\n12.5 0 2048 16 0\n13.000001 1 0 1 3\n",
        );
        let got: Vec<(u64, u32, Op)> = d
            .events
            .iter()
            .map(|e| (e.time_nanos, e.len_bytes, e.op))
            .collect();
        assert_eq!(
            got,
            [
                (0, 4096, Op::Read),
                (12_500_000, 8192, Op::Write),
                (13_000_001, 512, Op::Read)
            ]
        );
        // An integer-time MQSim line is not a DiskSim decimal... but both read it; a decimal time
        // is not MQSim.
        let m = decode_chunked(
            TextDecoder::new(DiskSimAscii::new(Flavor::MqSim)),
            b"12.5 0 2048 16 0\n",
            usize::MAX,
        )
        .expect("decodes");
        assert_eq!(
            m.diagnostics.reasons,
            ["line 1: arrival time (ns) \"12.5\" is not a non-negative integer"]
        );
    }
}
