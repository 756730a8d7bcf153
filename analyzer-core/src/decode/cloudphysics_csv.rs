//! The CloudPhysics block traces as CSV, the text twin of the vscsi binary files (Waldspurger et
//! al., "Efficient MRC Construction with SHARDS", FAST '15), as libCacheSim ships its sample
//! (`data/cloudPhysicsIO.csv`): a `version,time,op,size,lbn` header, then one SCSI command per
//! line, `1,5633898,2a,512,42932745`.
//!
//! `version` is the vscsi record version (1 or 2), `time` whole seconds (the same clock as the
//! binary file's microsecond `ts`, truncated: every line of libCacheSim's sample equals its
//! `cloudPhysicsIO.vscsi` record with `ts / 10^6`), `op` the SCSI opcode in hexadecimal, `size`
//! bytes and `lbn` 512-byte sectors. Opcodes map as in the binary reader
//! ([`super::vscsi::op_of_scsi`]); commands that move no data (INQUIRY, TEST UNIT READY, ...)
//! are ignored records. The file names no device; the one device is called `vscsi`, as the
//! binary reader calls it, so both files of one trace give the same device.

use super::text::{len_bytes, parse_u64, split_fields, Clock, Delimiter, LineFormat, Out};
use super::vscsi::{is_known_scsi, op_of_scsi};
use crate::event::IoEvent;

#[derive(Default)]
pub struct CloudPhysicsCsv {
    clock: Clock,
}

impl CloudPhysicsCsv {
    pub fn new() -> CloudPhysicsCsv {
        CloudPhysicsCsv::default()
    }

    /// The event of a data command, `None` for a known command that moves no data.
    fn record(&mut self, line: &str, out: &mut Out) -> Result<Option<IoEvent>, String> {
        let (n, [version, time, op, size, lbn]) = split_fields::<5>(line, Delimiter::Char(','));
        if n != 5 {
            return Err(format!(
                "expected 5 comma-separated fields (version,time,op,size,lbn), found {n}"
            ));
        }
        if !matches!(version, "1" | "2") {
            return Err(format!(
                "version {version:?} is not a vscsi version (1 or 2)"
            ));
        }
        let seconds = parse_u64(time, "time")?;
        let cmd = u16::from_str_radix(op, 16)
            .ok()
            .filter(|&c| is_known_scsi(c))
            .ok_or_else(|| format!("op {op:?} is not a known SCSI opcode in hexadecimal"))?;
        let len = len_bytes(parse_u64(size, "size")?)?;
        let sectors = parse_u64(lbn, "lbn")?;
        let Some(op) = op_of_scsi(cmd) else {
            return Ok(None);
        };
        let offset_bytes = sectors
            .checked_mul(512)
            .ok_or_else(|| format!("lbn {sectors} is beyond 2^64 bytes"))?;
        // The binary file's clock is not wall-clock time (it starts near 65 days), so the start
        // time stays unknown.
        let time_nanos = self
            .clock
            .absolute_nanos(seconds, 1_000_000_000, out, |_| None);
        Ok(Some(IoEvent {
            time_nanos,
            device: out.device("vscsi")?,
            offset_bytes,
            len_bytes: if op == crate::event::Op::Flush {
                0
            } else {
                len
            },
            op,
            latency_nanos: None,
            pid: None,
        }))
    }
}

impl LineFormat for CloudPhysicsCsv {
    fn name(&self) -> &'static str {
        "cloudphysics-csv"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        let Some(line) = out.csv_line(line_no, text, &["version", "time", "op", "size", "lbn"])
        else {
            return;
        };
        match self.record(line, out) {
            Ok(Some(e)) => out.emit(e),
            // A valid line that is no request, as the binary reader counts it.
            Ok(None) => {
                out.accept();
                out.ignore();
            }
            Err(why) => out.skip(line_no, why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_chunked;
    use crate::decode::text::TextDecoder;
    use crate::event::Op;

    // Constructed in the published file's shape: header, writes (2a) and reads (28), a WRITE(16)
    // (8a), a TEST UNIT READY (00) that moves no data, a SYNCHRONIZE CACHE (35) and one bad line.
    const LINES: &str = "version,time,op,size,lbn\n\
                         1,5633898,2a,512,42932745\n\
                         1,5633898,28,4096,8\n\
                         1,5633899,8a,8192,16\n\
                         1,5633899,00,0,0\n\
                         1,5633900,35,0,0\n\
                         1,5633901,zz,512,1\n\
                         1,5633902,28,1024,24\n";

    #[test]
    fn reads_scsi_commands_in_seconds_and_sectors() {
        let one = decode_chunked(
            TextDecoder::new(CloudPhysicsCsv::new()),
            LINES.as_bytes(),
            usize::MAX,
        )
        .expect("decodes");
        for chunk in [1, 7] {
            let tiny = decode_chunked(
                TextDecoder::new(CloudPhysicsCsv::new()),
                LINES.as_bytes(),
                chunk,
            )
            .expect("decodes");
            assert_eq!(one, tiny, "chunks of {chunk}");
        }
        let got: Vec<(u64, u64, u32, Op)> = one
            .events
            .iter()
            .map(|e| (e.time_nanos, e.offset_bytes, e.len_bytes, e.op))
            .collect();
        assert_eq!(
            got,
            [
                (0, 42_932_745 * 512, 512, Op::Write),
                (0, 4096, 4096, Op::Read),
                (1_000_000_000, 8192, 8192, Op::Write),
                (2_000_000_000, 0, 0, Op::Flush),
                (4_000_000_000, 12288, 1024, Op::Read),
            ]
        );
        let names: Vec<&str> = one.header.devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["vscsi"]);
        assert_eq!(one.header.start_unix_nanos, None);
        assert_eq!(one.diagnostics.skipped_records, 1);
        assert_eq!(
            one.diagnostics.reasons.first().map(String::as_str),
            Some("line 7: op \"zz\" is not a known SCSI opcode in hexadecimal")
        );
    }
}
