//! libCacheSim's CSV trace as `blocksight export --to libcachesim` writes it and libCacheSim's
//! `cachesim` reads it: a `time,obj_id,obj_size[,op]` header, then one row per cache block.
//!
//! `time` is whole seconds (libCacheSim's CSV time unit); `obj_id` is a block's id: Blocksight's
//! export puts the device index in the top 24 bits and the block number in the low 40
//! (`hash::block_key`), and ids below 2^40 (one device) read the same way, so the block is at
//! `block × obj_size` bytes on device `devN`; `op` is `read`, `write` or `delete` (a discard),
//! and `get`/`set` as libCacheSim's key-value traces name them; without an `op` column every row
//! is a read. Exporting and reading back gives the same blocks, ops and whole seconds.

use super::text::{len_bytes, parse_u64, split_fields, Clock, Delimiter, LineFormat, Out};
use crate::event::{IoEvent, Op};
use crate::hash::split_block_key;

#[derive(Default)]
pub struct LibCacheSimCsv {
    clock: Clock,
    name: String,
}

impl LibCacheSimCsv {
    pub fn new() -> LibCacheSimCsv {
        LibCacheSimCsv::default()
    }

    fn record(&mut self, line: &str, out: &mut Out) -> Result<IoEvent, String> {
        let (n, [time, id, size, op]) = split_fields::<4>(line, Delimiter::Char(','));
        if !(3..=4).contains(&n) {
            return Err(format!(
                "expected 3 or 4 comma-separated fields (time,obj_id,obj_size[,op]), found {n}"
            ));
        }
        let seconds = parse_u64(time, "time")?;
        let (device, block) = split_block_key(parse_u64(id, "obj_id")?);
        let size = parse_u64(size, "obj_size")?;
        let op = match op.to_ascii_lowercase().as_str() {
            "" | "read" | "get" => Op::Read,
            "write" | "set" => Op::Write,
            "delete" => Op::Discard,
            _ => return Err(format!("op {op:?} is not read, write or delete")),
        };
        let offset_bytes = block
            .checked_mul(size)
            .ok_or_else(|| format!("block {block} of {size} bytes is beyond 2^64 bytes"))?;
        let time_nanos = self
            .clock
            .absolute_nanos(seconds, 1_000_000_000, out, |_| None);
        self.name.clear();
        self.name.push_str("dev");
        self.name.push_str(&device.to_string());
        Ok(IoEvent {
            time_nanos,
            device: out.device(&self.name)?,
            offset_bytes,
            len_bytes: len_bytes(size)?,
            op,
            latency_nanos: None,
            pid: None,
        })
    }
}

impl LineFormat for LibCacheSimCsv {
    fn name(&self) -> &'static str {
        "libcachesim-csv"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        out.csv_record(
            line_no,
            text,
            &["time", "obj_id", "obj_size"],
            |line, out| self.record(line, out),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_chunked;
    use crate::decode::text::TextDecoder;
    use crate::event::TraceHeader;
    use crate::export::{export_all, ExportFormat};

    fn ev(time_nanos: u64, device: u32, offset_bytes: u64, len_bytes: u32, op: Op) -> IoEvent {
        IoEvent {
            time_nanos,
            device,
            offset_bytes,
            len_bytes,
            op,
            latency_nanos: None,
            pid: None,
        }
    }

    #[test]
    fn reads_back_what_the_exporter_writes() {
        let mut header = TraceHeader::new("t");
        header.device_index("a");
        header.device_index("b");
        let events = [
            ev(0, 0, 8192, 8192, Op::Read),
            ev(2_500_000_000, 1, 4096, 4096, Op::Write),
            ev(3_000_000_000, 0, 0, 4096, Op::Discard),
        ];
        let csv = export_all(ExportFormat::LibCacheSim, 4096, &header, &events);
        let one = decode_chunked(TextDecoder::new(LibCacheSimCsv::new()), &csv, usize::MAX)
            .expect("decodes");
        let tiny =
            decode_chunked(TextDecoder::new(LibCacheSimCsv::new()), &csv, 3).expect("decodes");
        assert_eq!(one, tiny);
        let got: Vec<(u64, &str, u64, u32, Op)> = one
            .events
            .iter()
            .map(|e| {
                (
                    e.time_nanos,
                    one.header.devices[e.device as usize].name.as_str(),
                    e.offset_bytes,
                    e.len_bytes,
                    e.op,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (0, "dev0", 8192, 4096, Op::Read),
                (0, "dev0", 12288, 4096, Op::Read),
                (2_000_000_000, "dev1", 4096, 4096, Op::Write),
                (3_000_000_000, "dev0", 0, 4096, Op::Discard),
            ]
        );
        assert_eq!(one.diagnostics.skipped_records, 0);
    }
}
