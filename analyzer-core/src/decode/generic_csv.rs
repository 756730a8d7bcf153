//! Any CSV (or delimited text) trace, read with a column mapping given by the user
//! (`--csv-columns`, see [`super::csv_fields`] and docs/formats.md) or named by a header line
//! (such as the one Blocksight's own CSV export writes).
//!
//! Fields may be wrapped in double quotes (without embedded quotes), so device names like
//! `"8,0"` survive a comma delimiter. Times are taken as given (converted to nanoseconds, not
//! rebased); an empty latency or PID field means unknown. A file without a device column is
//! one device named `csv`.

use super::csv_fields::CsvColumns;
use super::text::{parse_scaled, parse_u64_field, utf8, Delimiter, LineFormat, Out};
use super::DecodeError;
use crate::event::{IoEvent, Op};

pub struct GenericCsv {
    columns: Option<CsvColumns>,
    /// Byte ranges of the current line's fields, reused from line to line.
    spans: Spans,
    /// Lines seen so far (for `skip_header`).
    lines_seen: u64,
    /// Whether the first non-empty line has been looked at (header detection).
    first_done: bool,
}

/// The device name used when the mapping has no device column.
pub const DEFAULT_DEVICE: &str = "csv";

impl GenericCsv {
    /// With `spec` = `None`, the first line must be a header naming the columns.
    pub fn new(spec: Option<&str>) -> Result<GenericCsv, DecodeError> {
        let columns = match spec {
            Some(s) => Some(
                CsvColumns::parse(s)
                    .map_err(|e| DecodeError::other("csv", format!("--csv-columns: {e}")))?,
            ),
            None => None,
        };
        Ok(GenericCsv {
            columns,
            spans: Spans::default(),
            lines_seen: 0,
            first_done: false,
        })
    }

    fn record(&mut self, line: &str, out: &mut Out) -> Result<Option<IoEvent>, String> {
        let Some(c) = &self.columns else {
            return Ok(None);
        };
        let spans = &mut self.spans;
        spans.split(line, c.delimiter)?;
        if spans.0.len() <= c.max_column() {
            return Err(format!(
                "{} fields, but the mapping uses column {}",
                spans.0.len(),
                c.max_column()
            ));
        }
        let field = |i: usize| {
            let (s, e) = spans.0[i];
            &line[s..e]
        };
        let time = field(c.time);
        let time_nanos = match parse_scaled(time, c.time_scale_digits) {
            Some(t) => t,
            None if !self.first_done && c.skip_header_lines.is_none() => {
                // The first line's time is not a number: it is a header.
                self.first_done = true;
                out.ignore();
                return Ok(None);
            }
            None => return Err(format!("time {time:?} (column {}) is not a number", c.time)),
        };
        self.first_done = true;
        let op_field = field(c.op);
        let op = c.op(op_field).ok_or_else(|| {
            format!(
                "op {op_field:?} (column {}) is not read, write, discard or flush",
                c.op
            )
        })?;
        let offset = field(c.offset);
        let offset_bytes = parse_u64_field(offset)
            .and_then(|o| o.checked_mul(c.offset_unit_bytes))
            .ok_or_else(|| {
                format!(
                    "offset {offset:?} (column {}) is not a byte offset",
                    c.offset
                )
            })?;
        let len = field(c.len);
        let len_bytes = parse_u64_field(len)
            .and_then(|l| l.checked_mul(c.len_unit_bytes))
            .and_then(|l| u32::try_from(l).ok())
            .ok_or_else(|| {
                format!(
                    "length {len:?} (column {}) is not a length below 4 GiB",
                    c.len
                )
            })?;
        let latency_nanos = match c.latency.map(field) {
            None | Some("") => None,
            Some(l) => Some(
                parse_scaled(l, c.latency_scale_digits)
                    .ok_or_else(|| format!("latency {l:?} is not a number"))?,
            ),
        };
        let pid = match c.pid.map(field) {
            None | Some("") => None,
            Some(p) => Some(
                p.parse::<u32>()
                    .map_err(|_| format!("pid {p:?} is not a number"))?,
            ),
        };
        let device_name = c.device.map(field).unwrap_or(DEFAULT_DEVICE);
        if device_name.is_empty() {
            return Err(format!(
                "empty device name (column {})",
                c.device.unwrap_or(0)
            ));
        }
        Ok(Some(IoEvent {
            time_nanos,
            device: out.device(device_name)?,
            offset_bytes,
            len_bytes: if op == Op::Flush { 0 } else { len_bytes },
            op,
            latency_nanos,
            pid,
        }))
    }
}

/// Byte ranges of a line's fields.
#[derive(Default)]
struct Spans(Vec<(usize, usize)>);

impl Spans {
    fn split(&mut self, line: &str, delimiter: Delimiter) -> Result<(), String> {
        if let Delimiter::Char(c) = delimiter {
            // (A space delimiter is also a blank around fields: the general path.)
            if c.is_ascii() && c != ' ' && self.split_plain(line, c as u8) {
                return Ok(());
            }
        }
        self.split_general(line, delimiter)
    }

    /// [`Spans::split_general`] for an ASCII delimiter other than a space and no quoted
    /// field (nearly every line): one pass over the bytes. Returns false, having split nothing, when a field starts
    /// with a quote.
    fn split_plain(&mut self, line: &str, delimiter: u8) -> bool {
        self.0.clear();
        let bytes = line.as_bytes();
        let blank = |b: u8| b == b' ' || (b == b'\t' && delimiter != b'\t');
        let mut start = 0;
        loop {
            let stop = bytes[start..]
                .iter()
                .position(|&b| b == delimiter)
                .map_or(bytes.len(), |p| start + p);
            let mut s = start;
            while s < stop && blank(bytes[s]) {
                s += 1;
            }
            if bytes.get(s) == Some(&b'"') {
                return false;
            }
            // The same trim as the general path (Unicode whitespace at the end), bytewise
            // unless the field ends in a non-ASCII character.
            let mut end = stop;
            while end > s && bytes[end - 1].is_ascii_whitespace() {
                end -= 1;
            }
            if end > s && !bytes[end - 1].is_ascii() {
                end = s + line[s..end].trim_end().len();
            }
            self.0.push((s, end));
            if stop == bytes.len() {
                return true;
            }
            start = stop + 1;
        }
    }

    fn split_general(&mut self, line: &str, delimiter: Delimiter) -> Result<(), String> {
        self.0.clear();
        let bytes = line.as_bytes();
        let mut i = 0;
        loop {
            while i < bytes.len()
                && (bytes[i] == b' ' || (bytes[i] == b'\t' && delimiter != Delimiter::Char('\t')))
            {
                i += 1;
            }
            if delimiter == Delimiter::Whitespace && i >= bytes.len() {
                return Ok(());
            }
            let (start, end, next);
            if bytes.get(i) == Some(&b'"') {
                let close = line[i + 1..]
                    .find('"')
                    .ok_or_else(|| format!("unterminated quote in field {}", self.0.len()))?;
                start = i + 1;
                end = i + 1 + close;
                next = end + 1;
            } else {
                start = i;
                let stop = match delimiter {
                    Delimiter::Char(c) => line[i..].find(c).map_or(bytes.len(), |p| i + p),
                    Delimiter::Whitespace => {
                        line[i..].find([' ', '\t']).map_or(bytes.len(), |p| i + p)
                    }
                };
                end = line[start..stop].trim_end().len() + start;
                next = stop;
            }
            self.0.push((start, end));
            // Move past the delimiter after the field, if any.
            let mut j = next;
            while j < bytes.len()
                && (bytes[j] == b' ' || (bytes[j] == b'\t' && delimiter != Delimiter::Char('\t')))
            {
                j += 1;
            }
            match delimiter {
                Delimiter::Char(c) => {
                    if j >= bytes.len() {
                        return Ok(());
                    }
                    if !line[j..].starts_with(c) {
                        return Err(format!(
                            "text after the closing quote of field {}",
                            self.0.len() - 1
                        ));
                    }
                    i = j + c.len_utf8();
                }
                Delimiter::Whitespace => {
                    if j >= bytes.len() {
                        return Ok(());
                    }
                    i = j;
                }
            }
        }
    }
}

impl LineFormat for GenericCsv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        self.lines_seen += 1;
        let line = match utf8(text) {
            Ok(l) => l.trim_end(),
            Err(why) => return out.skip(line_no, why),
        };
        if let Some(skip) = self.columns.as_ref().and_then(|c| c.skip_header_lines) {
            if self.lines_seen <= skip {
                return out.ignore();
            }
        }
        if line.trim().is_empty() || line.starts_with('#') {
            return out.ignore();
        }
        if self.columns.is_none() {
            match CsvColumns::from_header(line) {
                Some(c) => {
                    self.columns = Some(c);
                    self.first_done = true;
                    out.saw_header = true;
                    return out.ignore();
                }
                None => {
                    return out.fail(DecodeError::at_line(
                        "csv",
                        line_no,
                        "the generic CSV format needs --csv-columns (for example \
                         time=0,op=1,offset=2,len=3) or a first line naming the columns \
                         (time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid)",
                    ))
                }
            }
        }
        match self.record(line, out) {
            Ok(Some(e)) => out.emit(e),
            Ok(None) => {}
            Err(why) => out.skip(line_no, why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_chunked;
    use crate::decode::text::TextDecoder;

    fn decode(spec: &str, input: &str) -> crate::decode::Decoded {
        let csv = GenericCsv::new(Some(spec)).expect("mapping");
        decode_chunked(TextDecoder::new(csv), input.as_bytes(), 7).expect("decodes")
    }

    #[test]
    fn units_delimiters_and_quotes() {
        let d = decode(
            "time=1,op=0,offset=2,len=3,device=4,time_unit=s,offset_unit=sector,len_unit=kib,delimiter=space",
            "W   0.5  8 4 \"disk one\"\nR 1.25 16 1 sdb\n",
        );
        let got: Vec<(u64, Op, u64, u32)> = d
            .events
            .iter()
            .map(|e| (e.time_nanos, e.op, e.offset_bytes, e.len_bytes))
            .collect();
        assert_eq!(
            got,
            vec![
                (500_000_000, Op::Write, 4096, 4096),
                (1_250_000_000, Op::Read, 8192, 1024)
            ]
        );
        assert_eq!(d.header.devices[0].name, "disk one");
        assert_eq!(d.header.devices[1].name, "sdb");
    }

    proptest::proptest! {
        #[test]
        fn the_plain_split_equals_the_general_one(
            line in "[a-z0-9 \t,;\"\u{a0}]{0,40}",
            delimiter in proptest::sample::select(vec![',', ';', '\t']),
        ) {
            let mut csv = GenericCsv::new(Some("time=0,op=1,offset=2,len=3")).expect("mapping");
            let general = csv.spans.split_general(&line, Delimiter::Char(delimiter)).map(|()| csv.spans.0.clone());
            if csv.spans.split_plain(&line, delimiter as u8) {
                proptest::prop_assert_eq!(Ok(csv.spans.0.clone()), general);
            } else {
                // Only a field that starts with a quote leaves the plain split.
                proptest::prop_assert!(line.contains('"'));
            }
        }
    }

    #[test]
    fn a_header_is_recognised_by_its_time_field() {
        let d = decode("time=0,op=1,offset=2,len=3", "t,op,off,len\n5,read,0,512\n");
        assert_eq!(d.events.len(), 1);
        assert_eq!(d.diagnostics.ignored_records, 1);
        assert_eq!(d.header.devices[0].name, DEFAULT_DEVICE);
        // After the first line, a non-numeric time is a bad record.
        let d = decode("time=0,op=1,offset=2,len=3", "5,read,0,512\nt,op,off,len\n");
        assert_eq!(
            d.diagnostics.reasons,
            vec!["line 2: time \"t\" (column 0) is not a number".to_string()]
        );
    }
}
