//! Machinery shared by the line-oriented text decoders (blkparse, tracefs, the CSV formats, fio
//! iologs): a generic push [`Decoder`] over [`LineBuffer`], exact decimal parsing, field
//! splitting, and the bounded issue/complete matcher that gives latencies.
//!
//! A text format only implements [`LineFormat`]: one call per line, which may emit an event,
//! ignore the line, skip it with a reason, or stop the input (blkparse's summary section).
//! Everything else (chunking, over-long lines, CRLF, diagnostics, the "this is not the format
//! at all" error) lives here once.

use std::collections::VecDeque;

use super::order::Reorder;
use super::pending::{MatchRule, PendingConfig, PendingRequests, Pick, Withdrawal};
use super::{Action, DecodeError, Decoder, Diagnostics, Line, LineBuffer};
use crate::event::{IoEvent, Op, TraceHeader};
use crate::format::Confidence;

/// After this many skipped lines with no accepted record, the input is declared not to be the
/// format at all (a wrong `--format`), instead of skipping a whole large file line by line.
pub(crate) const GIVE_UP_AFTER_SKIPPED_LINES: u64 = 100;

/// The most devices one text input may name. Real traces have at most thousands (Tencent's CBS
/// warehouse: 5584 volumes); more means garbage, which must not grow memory without bound.
pub(crate) const MAX_DEVICES: usize = 1 << 16;

/// A record would name one device more than [`MAX_DEVICES`]: the record is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("more than {max} distinct devices")]
pub(crate) struct TooManyDevices {
    pub max: usize,
}

/// The line formats' record parsers give a skipped line's reason as text; this lets them pass
/// the device table's refusal on with `?`.
impl From<TooManyDevices> for String {
    fn from(e: TooManyDevices) -> String {
        e.to_string()
    }
}

/// Where a [`LineFormat`] puts what it found in a line.
pub(crate) struct Out {
    pub header: TraceHeader,
    pub diagnostics: Diagnostics,
    /// Events with the line they were read from (0: released later by a matcher).
    events: VecDeque<(IoEvent, u64)>,
    /// The line being read.
    current_line: u64,
    /// Set by [`Clock`]: times are absolute (`Some`), with this offset to Unix time when known.
    time_base: Option<Option<i128>>,
    /// Device name -> index in `header.devices`, so a lookup per line is a hash, not a scan.
    devices: std::collections::HashMap<String, u32>,
    /// The device [`Out::device`] returned last (an index into `header.devices`).
    last_device: Option<u32>,
    dev_ts: std::collections::HashMap<(u32, u32), u32>,
    /// The `(major, minor)` [`Out::device_by_dev_t`] returned last, and its index: a trace's
    /// lines mostly name one device in a row, and this skips the hash.
    last_dev_t: Option<((u32, u32), u32)>,
    /// Lines that held a record (an event, or a completion used for latency).
    accepted_lines: u64,
    stopped: bool,
    /// A header line unique to the format was seen (sniffing says `Yes`).
    pub saw_header: bool,
    fatal: Option<DecodeError>,
}

impl Out {
    pub fn emit(&mut self, event: IoEvent) {
        self.accepted_lines += 1;
        self.events.push_back((event, self.current_line));
    }

    /// Emits an event that was already counted as accepted when its line was read (events held
    /// back by a [`Pending`] matcher).
    pub fn emit_held(&mut self, event: IoEvent) {
        self.events.push_back((event, 0));
    }

    /// Counts a line that held a valid record that yields no event by itself.
    pub fn accept(&mut self) {
        self.accepted_lines += 1;
    }

    /// Counts a line that is valid but not a request (a header, a comment, another action).
    pub fn ignore(&mut self) {
        self.diagnostics.ignored_records += 1;
    }

    pub fn skip(&mut self, line_no: u64, why: impl std::fmt::Display) {
        self.diagnostics.skip(|| format!("line {line_no}: {why}"));
    }

    /// The input cannot be read as this format at all: the decoder stops with this error.
    pub fn fail(&mut self, error: DecodeError) {
        self.fatal.get_or_insert(error);
    }

    /// The rest of the input is not records (blkparse's summary): ignore it without errors.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The index of the device named `name`, adding it to the header when new. Fails (the
    /// record is skipped) beyond [`MAX_DEVICES`], so garbage cannot grow the table without bound.
    pub fn device(&mut self, name: &str) -> Result<u32, TooManyDevices> {
        // Consecutive records mostly name the same device: compare with the last one before
        // hashing.
        if let Some(i) = self.last_device.filter(|&i| {
            self.header
                .devices
                .get(i as usize)
                .is_some_and(|d| d.name == name && d.major.is_none())
        }) {
            return Ok(i);
        }
        if let Some(&i) = self.devices.get(name) {
            self.last_device = Some(i);
            return Ok(i);
        }
        self.check_device_room()?;
        // New to the cache means new to the header (only `Out` adds devices), so no scan.
        let i = self.header.devices.len() as u32;
        self.header
            .devices
            .push(crate::event::DeviceInfo::named(name));
        self.devices.insert(name.to_owned(), i);
        self.last_device = Some(i);
        Ok(i)
    }

    /// The index of the device `major,minor`, adding it when new (see [`Out::device`]).
    pub fn device_by_dev_t(&mut self, major: u32, minor: u32) -> Result<u32, TooManyDevices> {
        match self.last_dev_t {
            Some((dev_t, i)) if dev_t == (major, minor) => return Ok(i),
            _ => {}
        }
        let i = match self.dev_ts.get(&(major, minor)) {
            Some(&i) => i,
            None => {
                self.check_device_room()?;
                let i = self.header.devices.len() as u32;
                self.header.devices.push(crate::event::DeviceInfo {
                    name: format!("{major},{minor}"),
                    major: Some(major),
                    minor: Some(minor),
                    size_bytes: None,
                });
                self.dev_ts.insert((major, minor), i);
                i
            }
        };
        self.last_dev_t = Some(((major, minor), i));
        Ok(i)
    }

    fn check_device_room(&self) -> Result<(), TooManyDevices> {
        if self.header.devices.len() >= MAX_DEVICES {
            return Err(TooManyDevices { max: MAX_DEVICES });
        }
        Ok(())
    }

    /// Handles one line of a CSV-like format: blank lines and `#` comments are ignored, a header
    /// line (its first fields equal to `header_names`, case-insensitively) before the first
    /// record is ignored, anything else goes to `parse`.
    pub fn csv_record(
        &mut self,
        line_no: u64,
        text: &[u8],
        header_names: &[&str],
        parse: impl FnOnce(&str, &mut Out) -> Result<IoEvent, String>,
    ) {
        let Some(line) = self.csv_line(line_no, text, header_names) else {
            return;
        };
        match parse(line, self) {
            Ok(e) => self.emit(e),
            Err(why) => self.skip(line_no, why),
        }
    }

    /// The first half of [`Out::csv_record`]: the trimmed line when it is to be parsed as a
    /// record, `None` when it was already counted (not UTF-8, blank, a comment, the header).
    pub fn csv_line<'a>(
        &mut self,
        line_no: u64,
        text: &'a [u8],
        header_names: &[&str],
    ) -> Option<&'a str> {
        let line = match utf8(text) {
            Ok(l) => l.trim(),
            Err(why) => {
                self.skip(line_no, why);
                return None;
            }
        };
        if line.is_empty() || line.starts_with('#') {
            self.ignore();
            return None;
        }
        if self.accepted_lines == 0 && is_header(line, header_names) {
            self.saw_header = true;
            self.ignore();
            return None;
        }
        Some(line)
    }
}

/// One text trace format, line by line.
pub(crate) trait LineFormat {
    /// The `--format` name, used in errors and as the header's source format.
    fn name(&self) -> &'static str;

    /// Handles one line (without its line ending). `line_no` is 1-based.
    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out);

    /// End of input: emit whatever is still held back.
    fn finish(&mut self, out: &mut Out) {
        let _ = out;
    }
}

/// A format whose request is one of two events, chosen by [`Action`] (blkparse, tracefs).
pub(crate) trait ActionFormat: LineFormat {
    /// The format's words for the issue's and the queue's request event (`block_rq_issue`, `D`).
    const REQUEST_NAMES: [&'static str; 2];

    fn with_action(action: Action) -> Self;

    /// The request event of `action` and of the other action, in the format's words.
    fn request_names(action: Action) -> (&'static str, &'static str) {
        let [issue, queue] = Self::REQUEST_NAMES;
        match action {
            Action::Issue => (issue, queue),
            Action::Queue => (queue, issue),
        }
    }

    /// Which action's request event `line` is, if either (a cheap look, not a parse).
    fn request_action_of(line: &[u8]) -> Option<Action>;
}

/// Queue lines read, with no issue line among them, after which a trace counts as one of bios
/// only. A request-based device issues what it queued within one plug: at most 32 requests of
/// at most 320 4 KiB bios each (`BLK_MAX_REQUEST_COUNT`, a 1,280 KiB `max_sectors_kb`), 10,240
/// queue events, before its first issue.
pub(crate) const AUTO_ACTION_QUEUE_LINES: u64 = 16_384;

/// Bytes of lines held while choosing (bounds memory on input without either event).
const AUTO_ACTION_HELD_BYTES: usize = 8 << 20;

/// `--action` left open: reads the trace with the issue as the request when it has issue
/// events, else with the queue. Lines are held until the choice is made (the first issue line,
/// [`AUTO_ACTION_QUEUE_LINES`] queue lines, 8 MiB of lines, or the end of the input), then read
/// in order by the chosen format; choosing the queue adds a note to the diagnostics.
pub(crate) struct AutoAction<F: ActionFormat> {
    name: &'static str,
    held: Vec<(u64, Vec<u8>)>,
    held_bytes: usize,
    queue_lines: u64,
    chosen: Option<F>,
}

impl<F: ActionFormat> AutoAction<F> {
    pub fn new() -> AutoAction<F> {
        AutoAction {
            // Every action's format has the same name.
            name: F::with_action(Action::Issue).name(),
            held: Vec::new(),
            held_bytes: 0,
            queue_lines: 0,
            chosen: None,
        }
    }

    /// Chooses `action` and reads the held lines with it.
    fn choose(&mut self, action: Action, out: &mut Out) -> &mut F {
        let mut format = F::with_action(action);
        if action == Action::Queue {
            let [issue, queue] = F::REQUEST_NAMES;
            out.diagnostics.notes.push(format!(
                "no {issue} record, so each {queue} record is a request (the bios of a device \
                 without requests of its own: dm, md, bcache); --action D or Q chooses"
            ));
        }
        for (line_no, text) in std::mem::take(&mut self.held) {
            if out.stopped {
                break;
            }
            out.current_line = line_no;
            format.line(line_no, &text, out);
        }
        self.held_bytes = 0;
        self.chosen.insert(format)
    }
}

impl<F: ActionFormat> LineFormat for AutoAction<F> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        if let Some(format) = &mut self.chosen {
            return format.line(line_no, text, out);
        }
        match F::request_action_of(text) {
            Some(Action::Issue) => {
                let format = self.choose(Action::Issue, out);
                out.current_line = line_no;
                format.line(line_no, text, out);
                return;
            }
            Some(Action::Queue) => self.queue_lines += 1,
            None => {}
        }
        self.held_bytes += text.len();
        self.held.push((line_no, text.to_vec()));
        if self.queue_lines >= AUTO_ACTION_QUEUE_LINES || self.held_bytes >= AUTO_ACTION_HELD_BYTES
        {
            let action = if self.queue_lines > 0 {
                Action::Queue
            } else {
                Action::Issue
            };
            self.choose(action, out);
        }
    }

    fn finish(&mut self, out: &mut Out) {
        if self.chosen.is_none() {
            let action = if self.queue_lines > 0 {
                Action::Queue
            } else {
                Action::Issue
            };
            self.choose(action, out);
        }
        if let Some(format) = &mut self.chosen {
            format.finish(out);
        }
    }
}

/// A push [`Decoder`] for any [`LineFormat`].
pub(crate) struct TextDecoder<F: LineFormat> {
    format: F,
    lines: LineBuffer,
    out: Out,
    reorder: Reorder,
    finished: bool,
    drained: bool,
    failed: bool,
}

impl<F: LineFormat> TextDecoder<F> {
    pub fn new(format: F) -> TextDecoder<F> {
        let name = format.name();
        TextDecoder {
            format,
            lines: LineBuffer::new(),
            out: Out {
                header: TraceHeader::new(name),
                diagnostics: Diagnostics::default(),
                events: VecDeque::new(),
                current_line: 0,
                time_base: None,
                devices: std::collections::HashMap::new(),
                last_device: None,
                dev_ts: std::collections::HashMap::new(),
                last_dev_t: None,
                accepted_lines: 0,
                stopped: false,
                saw_header: false,
                fatal: None,
            },
            reorder: Reorder::default(),
            finished: false,
            drained: false,
            failed: false,
        }
    }

    /// Moves what the format emitted into the sorting window.
    fn sort_in(&mut self) {
        if let Some(base) = self.out.time_base {
            self.reorder.rebase_absolute(base);
        }
        let line = self.out.current_line;
        while let Some((event, at)) = self.out.events.pop_front() {
            self.reorder.push(
                event,
                || {
                    if at == 0 {
                        format!("the request released at line {line}")
                    } else {
                        format!("line {at}")
                    }
                },
                &mut self.out.diagnostics,
            );
        }
    }
}

impl<F: LineFormat> TextDecoder<F> {
    /// After a fatal error the decoder yields nothing more.
    fn fail(&mut self) {
        self.failed = true;
        self.out.events.clear();
        self.reorder = Reorder::default();
    }
}

impl<F: LineFormat> Decoder for TextDecoder<F> {
    fn push(&mut self, bytes: &[u8]) {
        if !self.out.stopped && !self.failed {
            self.lines.push(bytes);
        }
    }

    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        loop {
            let done = self.failed || (self.drained && (self.out.stopped || self.finished));
            if let Some(e) = self
                .reorder
                .pop(done, &mut self.out.header, &mut self.out.diagnostics)
            {
                return Ok(Some(e));
            }
            if self.failed || done {
                return Ok(None);
            }
            if self.out.stopped {
                self.drained = true;
                self.format.finish(&mut self.out);
                if let Some(error) = self.out.fatal.take() {
                    self.fail();
                    return Err(error);
                }
                self.sort_in();
                continue;
            }
            match self.lines.next_line() {
                Some(Line::Text { line_no, text, .. }) => {
                    self.out.current_line = line_no;
                    self.format.line(line_no, text, &mut self.out);
                }
                Some(Line::TooLong { line_no, .. }) => {
                    self.out.skip(
                        line_no,
                        format_args!("longer than {} bytes", super::MAX_LINE_BYTES),
                    );
                }
                None if self.finished => {
                    self.drained = true;
                    self.format.finish(&mut self.out);
                }
                None => return Ok(None),
            }
            if let Some(error) = self.out.fatal.take() {
                self.fail();
                return Err(error);
            }
            let d = &self.out.diagnostics;
            if self.out.accepted_lines == 0 && d.skipped_records >= GIVE_UP_AFTER_SKIPPED_LINES {
                let error = DecodeError::other(
                    self.format.name(),
                    format!(
                        "the first {} records are all unreadable, so this is not {} input; first \
                         reason: {}",
                        d.skipped_records,
                        self.format.name(),
                        d.reasons.first().map(String::as_str).unwrap_or("-")
                    ),
                );
                self.fail();
                return Err(error);
            }
            self.sort_in();
        }
    }

    fn finish(&mut self) {
        self.finished = true;
        self.lines.finish();
    }

    fn header(&self) -> &TraceHeader {
        &self.out.header
    }

    fn diagnostics(&self) -> &Diagnostics {
        &self.out.diagnostics
    }
}

/// Whether the first fields of `line` are `names` (case-insensitive, quotes and spaces
/// ignored).
pub(crate) fn is_header(line: &str, names: &[&str]) -> bool {
    let mut fields = line
        .split([',', ';', '\t'])
        .map(|f| f.trim().trim_matches('"'));
    !names.is_empty()
        && names
            .iter()
            .all(|n| fields.next().is_some_and(|f| f.eq_ignore_ascii_case(n)))
}

/// Guesses whether `head` (the first bytes of an input) is this format by decoding its complete
/// lines: `Yes` when the format saw its unique header and the lines parse, `Maybe` when at least
/// one record parses and at most a fifth of the lines are bad, `No` otherwise.
pub(crate) fn sniff_lines<F: LineFormat>(format: F, head: &[u8]) -> Confidence {
    sniff_lines_detail(format, head).confidence
}

/// What decoding the first lines as one format gave: the verdict and, for a near miss, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SniffDetail {
    pub confidence: Confidence,
    /// Lines that held a record of the format.
    pub accepted: u64,
    /// Lines the format could not read.
    pub skipped: u64,
    pub saw_header: bool,
    /// The first reason a line was not read, or the error that stopped the format.
    pub first_failure: Option<String>,
}

/// [`sniff_lines`] with the counts and the first failure, for "which format came closest".
pub(crate) fn sniff_lines_detail<F: LineFormat>(format: F, head: &[u8]) -> SniffDetail {
    let mut detail = SniffDetail {
        confidence: Confidence::No,
        accepted: 0,
        skipped: 0,
        saw_header: false,
        first_failure: None,
    };
    // The last line may be cut by the sniff window; only complete lines count.
    let complete = match head.iter().rposition(|&b| b == b'\n') {
        Some(nl) => &head[..=nl],
        None => {
            detail.first_failure = Some("no complete line in the first bytes".into());
            return detail;
        }
    };
    let mut decoder = TextDecoder::new(format);
    for line in complete.split_inclusive(|&b| b == b'\n').take(200) {
        decoder.push(line);
        loop {
            match decoder.next_event() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    detail.accepted = decoder.out.accepted_lines;
                    detail.skipped = decoder.out.diagnostics.skipped_records;
                    detail.first_failure = Some(e.to_string());
                    return detail;
                }
            }
        }
    }
    let accepted = decoder.out.accepted_lines;
    let skipped = decoder.out.diagnostics.skipped_records;
    detail.accepted = accepted;
    detail.skipped = skipped;
    detail.saw_header = decoder.out.saw_header;
    detail.first_failure = decoder.out.diagnostics.reasons.first().cloned();
    if accepted == 0 && !(decoder.out.saw_header && skipped == 0) {
        return detail;
    }
    // Real traces have the odd bad line; a wrong format has nearly all lines bad.
    if skipped * 4 > accepted {
        return detail;
    }
    detail.confidence = if decoder.out.saw_header {
        Confidence::Yes
    } else {
        Confidence::Maybe
    };
    detail
}

/// The line as text, or a reason to skip it.
pub(crate) fn utf8(text: &[u8]) -> Result<&str, &'static str> {
    std::str::from_utf8(text).map_err(|_| "not UTF-8 text")
}

/// The trimmed text of a line that may hold a record of a space-separated format; `None`, with
/// the line counted, for one that is not UTF-8 (skipped), blank or a `#` comment (ignored).
pub(crate) fn record_text<'a>(line_no: u64, text: &'a [u8], out: &mut Out) -> Option<&'a str> {
    match utf8(text) {
        Ok(l) if l.trim().is_empty() || l.trim().starts_with('#') => {
            out.ignore();
            None
        }
        Ok(l) => Some(l.trim()),
        Err(why) => {
            out.skip(line_no, why);
            None
        }
    }
}

/// Splits a line into its first `N` fields (trimmed of spaces) and returns them with the total
/// number of fields. The supported CSV traces have no quoted fields; a quote stays part of its
/// field and fails that field's type check.
pub(crate) fn split_fields<const N: usize>(line: &str, delimiter: Delimiter) -> (usize, [&str; N]) {
    match delimiter {
        // An ASCII line (every trace's) is split by a byte loop, a quarter of the FIU reader's
        // time faster than `split_whitespace`, which splits at the same bytes there.
        Delimiter::Whitespace if line.is_ascii() => first_n(AsciiFields(line)),
        Delimiter::Whitespace => first_n(line.split_whitespace()),
        Delimiter::Char(c) => first_n(line.split(c).map(str::trim)),
    }
}

fn first_n<'a, const N: usize>(it: impl Iterator<Item = &'a str>) -> (usize, [&'a str; N]) {
    let mut fields = [""; N];
    let mut count = 0;
    for f in it {
        if let Some(slot) = fields.get_mut(count) {
            *slot = f;
        }
        count += 1;
    }
    (count, fields)
}

/// The fields of an ASCII line separated by runs of ASCII whitespace (tab, line feed, vertical
/// tab, form feed, carriage return, space: where `char::is_whitespace` is true below 128).
struct AsciiFields<'a>(&'a str);

impl<'a> Iterator for AsciiFields<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let is_space = |b: u8| b == b' ' || (b'\t'..=b'\r').contains(&b);
        let bytes = self.0.as_bytes();
        let start = bytes.iter().position(|&b| !is_space(b))?;
        let end = bytes[start..]
            .iter()
            .position(|&b| is_space(b))
            .map_or(bytes.len(), |n| start + n);
        // Both ends are at ASCII bytes, so on character boundaries.
        let field = self.0.get(start..end)?;
        self.0 = self.0.get(end..).unwrap_or("");
        Some(field)
    }
}

/// How fields are separated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Delimiter {
    Char(char),
    /// One or more spaces or tabs.
    Whitespace,
}

/// Parses an unsigned decimal integer, naming the field on failure.
pub(crate) fn parse_u64(field: &str, what: &str) -> Result<u64, String> {
    parse_u64_field(field).ok_or_else(|| format!("{what} {field:?} is not a non-negative integer"))
}

/// Parses a non-negative decimal number (`12`, `0.551706`, `1.5e3` is not accepted) exactly,
/// scaled by `10^scale_digits`, so `parse_scaled("0.551706", 9)` is 551_706_000 nanoseconds with
/// no floating-point rounding. Digits beyond the scale are truncated.
pub(crate) fn parse_scaled(field: &str, scale_digits: u32) -> Option<u64> {
    // One pass over the bytes: the integer digits, then an optional `.` and fraction digits
    // (every line of a text trace has one or two such fields, so this is hot).
    let bytes = field.as_bytes();
    let scale = 10u64.checked_pow(scale_digits)?;
    let mut i = 0;
    let mut int_value = 0u64;
    while let Some(&b) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
        // 19 digits cannot overflow; checked from the 20th on.
        int_value = if i < 19 {
            int_value * 10 + u64::from(b - b'0')
        } else {
            int_value
                .checked_mul(10)?
                .checked_add(u64::from(b - b'0'))?
        };
        i += 1;
    }
    let int_digits = i;
    let mut frac_value = 0u64;
    let mut digits = 0;
    if i < bytes.len() {
        if bytes[i] != b'.' {
            return None;
        }
        i += 1;
        let frac_start = i;
        while let Some(&b) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
            if digits < scale_digits {
                frac_value = frac_value * 10 + u64::from(b - b'0');
                digits += 1;
            }
            i += 1;
        }
        if i < bytes.len() || (int_digits == 0 && i == frac_start) {
            return None;
        }
    } else if int_digits == 0 {
        return None;
    }
    frac_value *= 10u64.pow(scale_digits - digits);
    int_value.checked_mul(scale)?.checked_add(frac_value)
}

/// `field.parse::<u64>()`, with a fast path for plain digits (what nearly every field is).
#[inline]
pub(crate) fn parse_u64_field(field: &str) -> Option<u64> {
    let bytes = field.as_bytes();
    if !bytes.is_empty() && bytes.len() <= 19 && bytes.iter().all(u8::is_ascii_digit) {
        // At most 19 digits cannot overflow a u64.
        return Some(
            bytes
                .iter()
                .fold(0u64, |v, &b| v * 10 + u64::from(b - b'0')),
        );
    }
    field.parse().ok()
}

/// Seconds as a decimal (`123.456789`) to nanoseconds.
pub(crate) fn parse_seconds_nanos(field: &str) -> Option<u64> {
    parse_scaled(field, 9)
}

/// The request kind from a Linux RWBS string (blkparse, tracefs): `D` discard (and `E`, secure
/// erase), `W` write, `R` read, otherwise (`N`, only `F` flags) a flush with no data.
pub(crate) fn op_from_rwbs(rwbs: &str) -> Option<Op> {
    if rwbs.is_empty() || !rwbs.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    Some(if rwbs.contains(['D', 'E']) {
        Op::Discard
    } else if rwbs.contains('W') {
        Op::Write
    } else if rwbs.contains('R') {
        Op::Read
    } else {
        Op::Flush
    })
}

/// A preflush write with no data (`FWS 0 + 0`, how kernels before 4.x and some drivers issue a
/// cache flush) is a flush, not a zero-length write.
pub(crate) fn op_with_range(op: Op, rwbs: &str, sectors: u64) -> Op {
    if sectors == 0 && rwbs.starts_with('F') && op != Op::Discard {
        Op::Flush
    } else {
        op
    }
}

/// Bytes from 512-byte sectors, refusing lengths that do not fit [`IoEvent::len_bytes`].
pub(crate) fn sectors_to_len_bytes(sectors: u64) -> Result<u32, String> {
    sectors
        .checked_mul(512)
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| format!("length of {sectors} sectors does not fit in 4 GiB"))
}

pub(crate) fn sectors_to_offset_bytes(sectors: u64) -> Result<u64, String> {
    sectors
        .checked_mul(512)
        .ok_or_else(|| format!("sector {sectors} is beyond 2^64 bytes"))
}

pub(crate) fn len_bytes(len: u64) -> Result<u32, String> {
    u32::try_from(len).map_err(|_| format!("length {len} bytes does not fit in 4 GiB"))
}

/// Timestamps in a format's own clock. Text formats with absolute times (wall-clock, or seconds
/// since boot) give [`Clock::absolute_nanos`] each record's time; the decoder then counts
/// `time_nanos` from the earliest record of its first sorting window (`decode::order`), whose
/// time becomes [`TraceHeader::start_unix_nanos`] when the clock is wall-clock time.
#[derive(Debug, Default)]
pub(crate) struct Clock;

impl Clock {
    /// `t` in the format's units of `nanos_per_unit` nanoseconds, as nanoseconds in the format's
    /// own epoch (saturating). `unix_nanos_of` converts a time in the format's units to Unix
    /// nanoseconds, when the clock is wall-clock time.
    pub fn absolute_nanos(
        &mut self,
        t: u64,
        nanos_per_unit: u64,
        out: &mut Out,
        unix_nanos_of: impl FnOnce(u64) -> Option<i64>,
    ) -> u64 {
        let nanos = t.saturating_mul(nanos_per_unit);
        if out.time_base.is_none() {
            let offset = unix_nanos_of(t).map(|u| i128::from(u) - i128::from(nanos));
            out.time_base = Some(offset);
        }
        nanos
    }
}

/// How many issued requests wait for their completion at most. Beyond it the oldest is released
/// without a latency (its completion was lost, or it was merged away), so memory stays bounded.
pub(crate) const MAX_PENDING: usize = 4096;

/// A request older than this (relative to the newest line) whose completion has not arrived is
/// released without a latency: the block layer's default request timeout (30 s, `blk_mq`
/// `rq_timeout`), after which the kernel itself gives up on the request.
pub(crate) const MAX_PENDING_AGE_NANOS: u64 = 30_000_000_000;

/// Sector key used for flushes, which have no sector of their own; they complete in order.
const FLUSH_SECTOR: u64 = u64::MAX;

/// What a text format's completion is matched by: the device and the start sector (flushes by
/// device alone). The direction is not part of it, as blkparse pairs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct LineKey {
    device: u32,
    sector: u64,
}

impl LineKey {
    fn new(device: u32, op: Op, sector: u64) -> LineKey {
        let sector = if op == Op::Flush {
            FLUSH_SECTOR
        } else {
            sector
        };
        LineKey { device, sector }
    }
}

/// The issue/complete text formats' use of the one matcher ([`PendingRequests`]): oldest
/// first, [`MAX_PENDING`] held at most, [`MAX_PENDING_AGE_NANOS`] on the clock of the newest
/// issue or completion line; released events go straight to [`Out`] in issue order.
///
/// What a completion is matched by follows the action. A request (`--action D`) completes at
/// its start sector. A bio (`Q`) is keyed by its end sector, the one thing its queue and
/// completion always share: a bio that a stacked device splits completes with what is left of
/// it (`R 64 + 64` for `R 0 + 128`), and one consumed by a request completes at its end with no
/// length.
pub(crate) struct Pending {
    requests: PendingRequests<LineKey, IoEvent>,
    action: Action,
    /// Requests issued, and lines of the other action's request (`block_bio_queue` or `Q` when
    /// the request is the issue, and the other way round): a trace holding only the other kind
    /// was read with the wrong action, and [`Pending::finish`] says so rather than giving no
    /// events.
    issued: u64,
    other_requests: u64,
}

impl Pending {
    pub fn new(action: Action) -> Pending {
        Pending {
            requests: PendingRequests::new(PendingConfig {
                rule: MatchRule::Oldest,
                max_pending: MAX_PENDING,
                timeout_nanos: MAX_PENDING_AGE_NANOS,
                max_orphans: 0,
                orphan_nanos: 0,
            }),
            action,
            issued: 0,
            other_requests: 0,
        }
    }

    /// The sector a request or completion over `sector + sectors` is matched by.
    fn key_sector(&self, sector: u64, sectors: u64) -> u64 {
        match self.action {
            Action::Issue => sector,
            Action::Queue => sector.saturating_add(sectors),
        }
    }

    /// Holds `event` (issued over `sector + sectors`) until its completion.
    pub fn issue(&mut self, event: IoEvent, sector: u64, sectors: u64, out: &mut Out) {
        self.issued += 1;
        let key = LineKey::new(event.device, event.op, self.key_sector(sector, sectors));
        self.requests.issue(key, event.time_nanos, event);
        self.release(out, false);
    }

    /// A line of the other action's request event was read (and ignored).
    pub fn other_request(&mut self) {
        self.other_requests += 1;
    }

    /// A completion over `range` (`None`: a flush, or a line without one) at `time_nanos`:
    /// gives the oldest matching request its latency. Returns whether a request matched.
    pub fn complete(
        &mut self,
        device: u32,
        op: Op,
        range: Option<(u64, u64)>,
        time_nanos: u64,
        out: &mut Out,
    ) -> bool {
        let sector = range.map_or(0, |(s, n)| self.key_sector(s, n));
        let matched = self
            .requests
            .complete(LineKey::new(device, op, sector), time_nanos);
        self.release(out, false);
        matched
    }

    /// A requeue: the oldest pending request with this device and sector will be issued again,
    /// so it is dropped here rather than counted twice. Returns whether one matched.
    pub fn requeue(&mut self, device: u32, op: Op, sector: u64, out: &mut Out) -> bool {
        let matched = self.requests.withdraw(
            LineKey::new(device, op, sector),
            Pick::Oldest,
            Withdrawal::Drop,
        );
        self.release(out, false);
        matched
    }

    fn release(&mut self, out: &mut Out, at_end: bool) {
        while let Some(r) = self.requests.pop(at_end) {
            let mut event = r.item;
            event.latency_nanos = r.latency_nanos;
            out.emit_held(event);
        }
    }

    /// End of input: releases everything still waiting, without latency, and fails a trace
    /// that held only the other action's requests, naming `request` and `other`, the format's
    /// words for this action's request and the other's.
    pub fn finish(&mut self, format: &str, request: &str, other: &str, out: &mut Out) {
        self.release(out, true);
        if self.issued == 0 && self.other_requests > 0 {
            out.fail(super::wrong_action(
                format,
                self.action,
                request,
                other,
                self.other_requests,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_decimals_are_exact() {
        assert_eq!(parse_scaled("0.551706", 9), Some(551_706_000));
        assert_eq!(parse_scaled("12", 9), Some(12_000_000_000));
        assert_eq!(parse_scaled("533.799760", 9), Some(533_799_760_000));
        assert_eq!(parse_scaled("1.0000000019", 9), Some(1_000_000_001));
        assert_eq!(parse_scaled(".5", 3), Some(500));
        assert_eq!(parse_scaled("", 9), None);
        assert_eq!(parse_scaled(".", 9), None);
        assert_eq!(parse_scaled("-1", 9), None);
        assert_eq!(parse_scaled("1e3", 9), None);
        assert_eq!(parse_scaled("99999999999999999999", 9), None);
    }

    /// The plain implementation `parse_scaled` replaced: split at the dot, check the digits,
    /// let the standard library parse the integer part.
    fn parse_scaled_reference(field: &str, scale_digits: u32) -> Option<u64> {
        let (int, frac) = field.split_once('.').unwrap_or((field, ""));
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let int_value: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
        let scale = 10u64.checked_pow(scale_digits)?;
        let mut frac_value = 0u64;
        let mut digits = 0;
        for b in frac.bytes().take(scale_digits as usize) {
            frac_value = frac_value * 10 + u64::from(b - b'0');
            digits += 1;
        }
        frac_value *= 10u64.pow(scale_digits - digits);
        int_value.checked_mul(scale)?.checked_add(frac_value)
    }

    proptest::proptest! {
        #[test]
        fn number_parsers_agree_with_the_plain_ones(
            field in "[0-9.+e -]{0,24}|[0-9]{0,22}(\\.[0-9]{0,12})?",
            scale in 0u32..21,
        ) {
            proptest::prop_assert_eq!(
                parse_scaled(&field, scale),
                parse_scaled_reference(&field, scale)
            );
            proptest::prop_assert_eq!(parse_u64_field(&field), field.parse::<u64>().ok());
        }
    }

    proptest::proptest! {
        /// The byte splitter of ASCII lines gives what `split_whitespace` gives, on lines of
        /// every ASCII whitespace byte, other control bytes and (through the fallback) non-ASCII
        /// whitespace, up to and past the field limit.
        #[test]
        fn ascii_fields_split_as_split_whitespace_does(
            line in "[a-c0-9 \t\n\x0b\x0c\r\x00\x1f\u{a0}\u{2003}é]{0,40}",
        ) {
            proptest::prop_assert_eq!(
                split_fields::<4>(&line, Delimiter::Whitespace),
                first_n::<4>(line.split_whitespace())
            );
        }
    }

    #[test]
    fn the_device_table_is_bounded() {
        let mut input = String::new();
        for volume in 0..MAX_DEVICES + 10 {
            input.push_str(&format!("1538323200,0,8,0,{volume}\n"));
        }
        let decoder = TextDecoder::new(crate::decode::tencent::Tencent::new());
        let d = crate::decode::decode_chunked(decoder, input.as_bytes(), 1 << 16).expect("decodes");
        assert_eq!(d.events.len(), MAX_DEVICES);
        assert_eq!(d.header.devices.len(), MAX_DEVICES);
        assert_eq!(d.diagnostics.skipped_records, 10);
        assert_eq!(
            d.diagnostics.reasons[0],
            format!(
                "line {}: more than {MAX_DEVICES} distinct devices",
                MAX_DEVICES + 1
            )
        );
    }

    #[test]
    fn a_full_device_table_refuses_new_names_and_dev_ts_alike() {
        let mut decoder = TextDecoder::new(crate::decode::tencent::Tencent::new());
        let out = &mut decoder.out;
        for i in 0..MAX_DEVICES as u32 - 1 {
            out.device(&i.to_string()).expect("room");
        }
        assert_eq!(out.device_by_dev_t(8, 0), Ok(MAX_DEVICES as u32 - 1));
        // Known devices are still found; new ones, by name or by number, are refused.
        assert_eq!(out.device("0"), Ok(0));
        assert_eq!(out.device_by_dev_t(8, 0), Ok(MAX_DEVICES as u32 - 1));
        let full = TooManyDevices { max: MAX_DEVICES };
        assert_eq!(out.device("new"), Err(full));
        assert_eq!(out.device_by_dev_t(8, 16), Err(full));
    }

    #[test]
    fn rwbs_maps_to_ops() {
        assert_eq!(op_from_rwbs("WS"), Some(Op::Write));
        assert_eq!(op_from_rwbs("FWFS"), Some(Op::Write));
        assert_eq!(op_from_rwbs("RA"), Some(Op::Read));
        assert_eq!(op_from_rwbs("DS"), Some(Op::Discard));
        assert_eq!(op_from_rwbs("FN"), Some(Op::Flush));
        assert_eq!(op_from_rwbs("FF"), Some(Op::Flush));
        assert_eq!(op_from_rwbs("N"), Some(Op::Flush));
        assert_eq!(op_from_rwbs("ws"), None);
        assert_eq!(op_from_rwbs(""), None);
    }
}
