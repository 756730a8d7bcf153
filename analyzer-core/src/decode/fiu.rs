//! The FIU traces (Florida International University, SNIA IOTTA: the SRCMap and I/O
//! Deduplication collections, "homes", "mail", "web-vm", …): one whitespace-separated line per
//! block I/O,
//!
//! ```text
//! [ts in ns] [pid] [process] [lba] [size in 512-byte blocks] [W or R] [major] [minor] [MD5]
//! 89968195792462 20782 gzip 283193184 8 R 6 0 56f11b711d91a065a2b6458eca924523
//! ```
//!
//! - Times are nanoseconds on the traced machine's clock (since its boot, not wall-clock), so
//!   they are counted from the earliest record and the trace's start is unknown.
//! - The MD5 is of the data, one per 4 KiB page (512 bytes in web-vm): the traces describe a
//!   request of several pages as one line per page, with the request's time, process and
//!   direction. Consecutive lines that share all three and the device, each starting where the
//!   one before ended, are joined back into that one request (up to [`MAX_JOINED_BYTES`]); the
//!   hash itself is not kept. A line without the hash (8 fields) is read too.
//! - A process name may contain spaces: the fields are taken from both ends of the line.
//! - Devices are named `major,minor`, as blkparse names them.

use super::text::{
    parse_u64, record_text, sectors_to_len_bytes, sectors_to_offset_bytes, split_fields, Clock,
    Delimiter, LineFormat, Out,
};
use crate::event::{IoEvent, Op};

/// The largest request joined from page lines: beyond it a new request starts (a request of
/// the block layer is far smaller; this only bounds a damaged file's run).
pub const MAX_JOINED_BYTES: u64 = 64 << 20;

/// Fields a line may have: the eight around a process name of up to eight words.
const MAX_FIELDS: usize = 16;

#[derive(Default)]
pub struct Fiu {
    clock: Clock,
    /// The request being joined from page lines, and its line's time on the trace's clock.
    open: Option<IoEvent>,
}

impl Fiu {
    pub fn new() -> Fiu {
        Fiu::default()
    }

    fn record(&mut self, line: &str, out: &mut Out) -> Result<IoEvent, String> {
        let (n, all) = split_fields::<MAX_FIELDS>(line, Delimiter::Whitespace);
        if n > MAX_FIELDS {
            return Err(format!(
                "{n} space-separated fields, more than a process name of {} words explains",
                MAX_FIELDS - 8
            ));
        }
        let fields = &all[..n];
        let has_hash = fields.last().is_some_and(|f| is_md5(f));
        let tail = if has_hash { 6 } else { 5 };
        // ts, pid, at least one word of process name, then the tail.
        if fields.len() < 3 + tail {
            return Err(format!(
                "expected 9 space-separated fields (ns pid process lba blocks W|R major minor \
                 md5), found {}",
                fields.len()
            ));
        }
        let [lba, size, rw, major, minor] =
            [0, 1, 2, 3, 4].map(|i| fields[fields.len() - tail + i]);
        let t = parse_u64(fields[0], "time (ns)")?;
        let pid = parse_u64(fields[1], "pid")?;
        let pid = u32::try_from(pid).map_err(|_| format!("pid {pid} does not fit 32 bits"))?;
        let op = match rw {
            "R" | "r" => Op::Read,
            "W" | "w" => Op::Write,
            _ => return Err(format!("direction {rw:?} is neither R nor W")),
        };
        let major = parse_u64(major, "major device number")?;
        let minor = parse_u64(minor, "minor device number")?;
        let (Ok(major), Ok(minor)) = (u32::try_from(major), u32::try_from(minor)) else {
            return Err(format!("device {major},{minor} does not fit 32 bits"));
        };
        let offset_bytes = sectors_to_offset_bytes(parse_u64(lba, "lba (512-byte blocks)")?)?;
        let len_bytes = sectors_to_len_bytes(parse_u64(size, "size (512-byte blocks)")?)?;
        // The line has the FIU shape: sniffing can be sure of it.
        if has_hash {
            out.saw_header = true;
        }
        Ok(IoEvent {
            time_nanos: self.clock.absolute_nanos(t, 1, out, |_| None),
            device: out.device_by_dev_t(major, minor)?,
            offset_bytes,
            len_bytes,
            op,
            latency_nanos: None,
            pid: Some(pid),
        })
    }
}

/// The 32 hexadecimal digits of an MD5.
fn is_md5(field: &str) -> bool {
    field.len() == 32 && field.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether `next` is the next page of `open`'s request.
fn continues(open: &IoEvent, next: &IoEvent) -> bool {
    next.time_nanos == open.time_nanos
        && next.pid == open.pid
        && next.op == open.op
        && next.device == open.device
        && next.offset_bytes == open.end_bytes()
        && u64::from(open.len_bytes) + u64::from(next.len_bytes) <= MAX_JOINED_BYTES
}

impl LineFormat for Fiu {
    fn name(&self) -> &'static str {
        "fiu"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        let Some(line) = record_text(line_no, text, out) else {
            return;
        };
        let event = match self.record(line, out) {
            Ok(e) => e,
            Err(why) => return out.skip(line_no, why),
        };
        match &mut self.open {
            Some(open) if continues(open, &event) => {
                // Fits: `continues` bounds the sum by MAX_JOINED_BYTES.
                open.len_bytes += event.len_bytes;
                out.accept();
            }
            open => {
                let done = open.replace(event);
                out.accept();
                if let Some(done) = done {
                    out.emit_held(done);
                }
            }
        }
    }

    fn finish(&mut self, out: &mut Out) {
        if let Some(done) = self.open.take() {
            out.emit_held(done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::text::TextDecoder;
    use crate::decode::{decode_chunked, Decoded};

    fn decode(input: &str) -> Decoded {
        let one = decode_chunked(TextDecoder::new(Fiu::new()), input.as_bytes(), usize::MAX)
            .expect("decodes");
        for chunk in [1, 7, 64] {
            let tiny = decode_chunked(TextDecoder::new(Fiu::new()), input.as_bytes(), chunk)
                .expect("decodes");
            assert_eq!(one, tiny, "chunks of {chunk} bytes");
        }
        one
    }

    /// Each event's row and pid.
    fn rows(d: &Decoded) -> Vec<(crate::decode::EventRow<'_>, Option<u32>)> {
        d.rows()
            .into_iter()
            .zip(d.events.iter().map(|e| e.pid))
            .collect()
    }

    #[test]
    fn page_lines_of_one_request_are_joined_and_times_count_from_the_first() {
        // The first line is the FIU README's example; the rest are constructed in its shape.
        let d = decode(
            "89968195792462 20782 gzip 283193184 8 R 6 0 56f11b711d91a065a2b6458eca924523\n\
             89968195792462 20782 gzip 283193192 8 R 6 0 0f343b0931126a20f133d67c2b018a3b\n\
             89968195792462 20782 gzip 283193200 8 R 6 0 e1faffb3e614e6c2fba74296962386b7\n\
             89968196000000 4215 nfsd 16043224 8 W 6 0 dd0e5c0b2bf1f5d0e4cfa82ff8cc8d93\n\
             89968196000000 4215 nfsd 16043240 8 W 6 0 a87ff679a2f3e71d9181a67b7542122c\n\
             89968196000000 4216 nfsd 16043248 8 W 6 0 e4da3b7fbbce2345d7772b0674a318d5\n\
             89968197000000 4215 nfsd 16043256 8 W 6 1 1679091c5a880faf6fb5e6087eb1b2dc\n",
        );
        assert_eq!(
            rows(&d),
            vec![
                // Three pages of one read.
                ((0, "6,0", 283_193_184 * 512, 12_288, Op::Read), Some(20782)),
                // Not contiguous (a gap of a page): two requests.
                (
                    (207_538, "6,0", 16_043_224 * 512, 4096, Op::Write),
                    Some(4215)
                ),
                (
                    (207_538, "6,0", 16_043_240 * 512, 4096, Op::Write),
                    Some(4215)
                ),
                // Contiguous but another process.
                (
                    (207_538, "6,0", 16_043_248 * 512, 4096, Op::Write),
                    Some(4216)
                ),
                // Another device.
                (
                    (1_207_538, "6,1", 16_043_256 * 512, 4096, Op::Write),
                    Some(4215)
                ),
            ]
        );
        assert_eq!(d.diagnostics.skipped_records, 0);
        assert_eq!(d.header.start_unix_nanos, None);
    }

    #[test]
    fn process_names_with_spaces_and_lines_without_a_hash_are_read() {
        let d = decode(
            "1000 7 Web Content 8 8 R 8 16 56f11b711d91a065a2b6458eca924523\n\
             2000 7 kworker/0:1 16 1 w 8 16\n",
        );
        assert_eq!(
            rows(&d),
            vec![
                ((0, "8,16", 4096, 4096, Op::Read), Some(7)),
                ((1000, "8,16", 8192, 512, Op::Write), Some(7)),
            ]
        );
    }

    #[test]
    fn bad_lines_are_skipped_and_named() {
        let d = decode(
            "1000 7 gzip 8 8 X 6 0 56f11b711d91a065a2b6458eca924523\n\
             1000 7 gzip 8 8\n\
             abc 7 gzip 8 8 R 6 0 56f11b711d91a065a2b6458eca924523\n\
             3000 7 gzip 64 8 R 6 0 56f11b711d91a065a2b6458eca924523\n",
        );
        assert_eq!(d.events.len(), 1);
        assert_eq!(d.diagnostics.skipped_records, 3);
        let reasons = d.diagnostics.reasons.join("\n");
        assert!(
            reasons.contains("line 1: direction \"X\" is neither R nor W"),
            "{reasons}"
        );
        assert!(
            reasons.contains("line 2: expected 9 space-separated fields"),
            "{reasons}"
        );
        assert!(reasons.contains("line 3: time (ns) \"abc\""), "{reasons}");
    }

    #[test]
    fn a_run_of_pages_stops_at_the_join_limit() {
        let pages = MAX_JOINED_BYTES / 4096 + 3;
        let input: String = (0..pages)
            .map(|i| {
                format!(
                    "5 1 dd {} 8 W 8 0 56f11b711d91a065a2b6458eca924523\n",
                    i * 8
                )
            })
            .collect();
        let d = decode(&input);
        let lens: Vec<u32> = d.events.iter().map(|e| e.len_bytes).collect();
        assert_eq!(lens, vec![MAX_JOINED_BYTES as u32, 3 * 4096]);
        assert_eq!(d.events[1].offset_bytes, MAX_JOINED_BYTES);
    }
}
