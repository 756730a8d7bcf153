//! fio's I/O logs (`write_iolog=` / `read_iolog=`), versions 2 and 3.
//!
//! Version 2 starts with `fio version 2 iolog`; its lines are `FILE ACTION [OFFSET LENGTH]`.
//! Version 3 (fio 3.31 and newer, `fio version 3 iolog`) puts a timestamp in milliseconds since
//! the job started in front: `TIMESTAMP_MS FILE ACTION [OFFSET LENGTH]`. Actions: `add`, `open`,
//! `close` (file management: ignored, but `add` names a device), `read`, `write`, `trim`
//! (a discard), `sync` and `datasync` (flushes), and `wait` (version 2 only: a pause of OFFSET
//! microseconds, which is how version 2 carries time). Each file is a device named by its path;
//! offsets and lengths are bytes.

use super::text::{len_bytes, parse_u64, utf8, LineFormat, Out};
use crate::event::{IoEvent, Op};

pub struct FioIolog {
    version: u8,
    /// Version 2: the sum of `wait` pauses so far.
    waited_nanos: u64,
}

impl FioIolog {
    pub fn new(version: u8) -> FioIolog {
        FioIolog {
            version,
            waited_nanos: 0,
        }
    }

    fn record(&mut self, line: &str, out: &mut Out) -> Result<Option<IoEvent>, String> {
        let mut tokens = line.split_whitespace();
        let time_nanos = if self.version >= 3 {
            let ms = tokens.next().ok_or("empty line")?;
            let ms = parse_u64(ms, "timestamp")?;
            ms.checked_mul(1_000_000)
                .ok_or_else(|| format!("timestamp {ms} ms is too large"))?
        } else {
            self.waited_nanos
        };
        let file = tokens.next().ok_or("no file name")?;
        let action = tokens.next().ok_or("no action")?;
        let offset = tokens.next();
        let length = tokens.next();
        if let Some(extra) = tokens.next() {
            return Err(format!("unexpected field {extra:?} after the length"));
        }
        let op = match action {
            "add" | "open" | "close" => {
                if offset.is_some() {
                    return Err(format!("`{action}` takes no offset"));
                }
                out.device(file)?;
                return Ok(None);
            }
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" => Op::Discard,
            "sync" | "datasync" => Op::Flush,
            "wait" => {
                let usec = parse_u64(offset.ok_or("`wait` has no delay")?, "wait delay")?;
                if self.version < 3 {
                    self.waited_nanos = self.waited_nanos.saturating_add(usec.saturating_mul(1000));
                }
                return Ok(None);
            }
            other => return Err(format!("unknown action {other:?}")),
        };
        let offset_bytes = parse_u64(offset.ok_or("no offset")?, "offset")?;
        let len = len_bytes(parse_u64(length.ok_or("no length")?, "length")?)?;
        Ok(Some(IoEvent {
            time_nanos,
            device: out.device(file)?,
            offset_bytes,
            len_bytes: if op == Op::Flush { 0 } else { len },
            op,
            latency_nanos: None,
            pid: None,
        }))
    }
}

/// The version named by a `fio version N iolog` line.
pub(crate) fn version_line(line: &str) -> Option<u8> {
    line.trim()
        .strip_prefix("fio version ")?
        .strip_suffix(" iolog")?
        .parse()
        .ok()
}

impl LineFormat for FioIolog {
    fn name(&self) -> &'static str {
        if self.version >= 3 {
            "fio-v3"
        } else {
            "fio-v2"
        }
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        let line = match utf8(text) {
            Ok(l) => l.trim(),
            Err(why) => return out.skip(line_no, why),
        };
        if line.is_empty() {
            return out.ignore();
        }
        if let Some(v) = version_line(line) {
            if v != self.version {
                return out.skip(
                    line_no,
                    format!("this is a version {v} iolog; read it with --format fio-v{v}"),
                );
            }
            out.saw_header = true;
            return out.ignore();
        }
        match self.record(line, out) {
            Ok(Some(e)) => out.emit(e),
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

    #[test]
    fn version_2_time_comes_from_waits() {
        let input = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n\
                     /dev/sdb wait 1500 0\n/dev/sdb write 4096 8192\n/dev/sdb datasync 0 0\n/dev/sdb close\n";
        let d = decode_chunked(TextDecoder::new(FioIolog::new(2)), input.as_bytes(), 7)
            .expect("decodes");
        let got: Vec<(u64, Op, u32)> = d
            .events
            .iter()
            .map(|e| (e.time_nanos, e.op, e.len_bytes))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, Op::Read, 4096),
                (1_500_000, Op::Write, 8192),
                (1_500_000, Op::Flush, 0)
            ]
        );
        assert_eq!(d.header.devices[0].name, "/dev/sdb");
    }

    #[test]
    fn the_wrong_version_is_named() {
        let d = decode_chunked(
            TextDecoder::new(FioIolog::new(3)),
            b"fio version 2 iolog\nx add\n",
            1,
        )
        .expect("decodes");
        assert_eq!(
            d.diagnostics.reasons[0],
            "line 1: this is a version 2 iolog; read it with --format fio-v2"
        );
        let d = decode_chunked(
            TextDecoder::new(FioIolog::new(3)),
            b"fio version 3 iolog\n5 x read 0\n6 x erase 0 1\n",
            1,
        )
        .expect("decodes");
        assert_eq!(
            d.diagnostics.reasons,
            vec![
                "line 2: no length".to_string(),
                "line 3: unknown action \"erase\"".to_string()
            ]
        );
    }
}
