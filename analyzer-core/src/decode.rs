//! Push decoders: bytes in, [`IoEvent`]s out, in whatever chunk sizes the caller has.
//!
//! Every trace format has a decoder that implements [`Decoder`]. The native CLI feeds it from a
//! `Read` loop; the browser's worker feeds it `File.slice()` chunks. Both get identical results
//! whatever the chunking (every decoder is tested with 1- and 7-byte chunks against one-shot
//! decoding).
//!
//! Protocol:
//! 1. `push(bytes)` appends input.
//! 2. `next_event()` returns `Ok(Some(event))` while complete records are buffered and
//!    `Ok(None)` when it needs more input (or, after `finish`, when the input is exhausted).
//! 3. `finish()` says no more input will come; decoders then drain the rest and report a
//!    truncated tail in [`Diagnostics`].
//!
//! Recoverable bad records (an unparsable line, a record with an impossible field) are skipped
//! and counted in [`Diagnostics`]. `Err` is for input that cannot be this format at all or that
//! cannot continue (bad magic, unsupported version); after an `Err` the decoder yields nothing.

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, Op, TraceHeader};

/// How many skip reasons [`Diagnostics`] keeps verbatim.
pub const MAX_REASONS: usize = 8;

/// The longest text line any text decoder buffers. Longer lines are skipped as bad records
/// without being buffered, so a file with no newline costs bounded memory.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// A fatal decoding error. Carries the format, where in the input, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum DecodeError {
    #[error("{format}: at byte {offset}: {message}")]
    AtByte {
        format: String,
        offset: u64,
        message: String,
    },
    #[error("{format}: line {line}: {message}")]
    AtLine {
        format: String,
        line: u64,
        message: String,
    },
    #[error("{format}: {message}")]
    Other { format: String, message: String },
}

impl DecodeError {
    pub fn at_byte(format: &str, offset: u64, message: impl Into<String>) -> DecodeError {
        DecodeError::AtByte {
            format: format.to_owned(),
            offset,
            message: message.into(),
        }
    }

    pub fn at_line(format: &str, line: u64, message: impl Into<String>) -> DecodeError {
        DecodeError::AtLine {
            format: format.to_owned(),
            line,
            message: message.into(),
        }
    }

    pub fn other(format: &str, message: impl Into<String>) -> DecodeError {
        DecodeError::Other {
            format: format.to_owned(),
            message: message.into(),
        }
    }
}

/// What a decoder skipped or noticed without failing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// Records skipped as unparsable.
    pub skipped_records: u64,
    /// The first [`MAX_REASONS`] reasons, each naming the line or byte offset.
    pub reasons: Vec<String>,
    /// Records deliberately ignored because they are not requests (blktrace's non-action events,
    /// comment lines, completions used only for latency). Not an error.
    pub ignored_records: u64,
    /// Bytes at the end of the input that did not form a complete record (a file cut off
    /// mid-write).
    pub truncated_tail_bytes: u64,
    /// The input's format has an end marker and this input ended without it: the writer was
    /// stopped before it finished (a recording killed with SIGKILL, a full disk, a copy cut
    /// short), even when the cut fell exactly between two records.
    #[serde(default)]
    pub end_marker_missing: bool,
    /// Records earlier than a record before them in the input (sorted back into time order
    /// within a window of [`order::REORDER_WINDOW`] records; see `decode::order`).
    #[serde(default)]
    pub out_of_order_records: u64,
    /// The first out-of-order record: where it is and how much earlier.
    #[serde(default)]
    pub out_of_order_first: Option<String>,
    /// Records so far out of order that the window could not sort them: their time was moved
    /// forward to the latest time already read.
    #[serde(default)]
    pub clamped_records: u64,
    /// What the decoder decided about the input that changes what its events mean (which event
    /// counts as the request, when the trace left that open). Not a warning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Diagnostics {
    /// Counts one skipped record and keeps its reason if there is room.
    pub fn skip(&mut self, reason: impl FnOnce() -> String) {
        self.skipped_records += 1;
        if self.reasons.len() < MAX_REASONS {
            self.reasons.push(reason());
        }
    }

    /// The warning about records whose time went backwards, stating what was done with them
    /// (the rule of `decode::order`), or `None` when time never went backwards.
    pub fn order_warning(&self) -> Option<String> {
        if self.out_of_order_records == 0 && self.clamped_records == 0 {
            return None;
        }
        let mut text = format!(
            "{} record(s) were earlier than a record before them (first: {}); records within {} \
             of each other were sorted into time order",
            self.out_of_order_records,
            self.out_of_order_first.as_deref().unwrap_or("-"),
            order::REORDER_WINDOW
        );
        if self.clamped_records > 0 {
            text.push_str(&format!(
                "; {} record(s) further out of order were moved forward to the latest time \
                 already read",
                self.clamped_records
            ));
        }
        Some(text)
    }

    /// Adds another decoder's diagnostics (several input files make one trace).
    pub fn merge(&mut self, other: &Diagnostics) {
        self.skipped_records += other.skipped_records;
        self.ignored_records += other.ignored_records;
        self.truncated_tail_bytes += other.truncated_tail_bytes;
        self.end_marker_missing |= other.end_marker_missing;
        self.out_of_order_records += other.out_of_order_records;
        self.clamped_records += other.clamped_records;
        if self.out_of_order_first.is_none() {
            self.out_of_order_first = other.out_of_order_first.clone();
        }
        for r in &other.reasons {
            if self.reasons.len() < MAX_REASONS {
                self.reasons.push(r.clone());
            }
        }
        for n in &other.notes {
            if !self.notes.contains(n) {
                self.notes.push(n.clone());
            }
        }
    }
}

/// Options that change how some formats are read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecodeOptions {
    /// Which event counts as "the request" in blktrace, blkparse and tracefs traces: the issue
    /// (`D`: what the device saw) or the queue (`Q`: the bios asked of the block layer). `None`
    /// lets the text decoders choose: the issue when the trace has issue events, the queue when
    /// it has only bios (a dm, md or bcache device), with a note saying so
    /// (`decode::text::AutoAction`); blktrace's binary files are read with the issue.
    pub action: Option<Action>,
    /// Column mapping for the generic CSV format, as `name=index` pairs separated by commas, for
    /// example `time=0,offset=2,len=3,op=1`; see `decode::generic_csv`.
    pub csv_columns: Option<String>,
}

/// The blktrace action that counts as the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Action {
    /// `D`: the request was issued to the driver (what the device saw).
    Issue,
    /// `Q`: the request was queued by the block layer (what the application asked for).
    Queue,
}

/// The error of a trace that holds only the other action's requests: `request` is `action`'s
/// request in the format's words (`block_rq_issue`, `D`), `other` the other action's, seen
/// `n` times.
pub(crate) fn wrong_action(
    format: &str,
    action: Action,
    request: &str,
    other: &str,
    n: u64,
) -> DecodeError {
    let (chosen, flag, what) = match action {
        Action::Issue => (
            "--action D",
            "--action Q",
            ", the bios of a device without requests of its own (dm, md, bcache, zram)",
        ),
        Action::Queue => ("--action Q", "--action D (the default)", ""),
    };
    DecodeError::other(
        format,
        format!(
            "no {request} record (the request with {chosen}) but {n} {other} records{what}: read \
             it with {flag}"
        ),
    )
}

impl Action {
    pub fn from_name(name: &str) -> Option<Action> {
        match name {
            "D" | "d" | "issue" => Some(Action::Issue),
            "Q" | "q" | "queue" => Some(Action::Queue),
            _ => None,
        }
    }
}

/// A push decoder for one trace format. See the module documentation for the protocol.
pub trait Decoder {
    /// Appends input bytes.
    fn push(&mut self, bytes: &[u8]);

    /// Returns the next complete event, `Ok(None)` when more input is needed (or, after
    /// [`Decoder::finish`], when there is nothing left).
    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError>;

    /// Appends up to `max` next events to `out` (the same events, in the same order, as
    /// [`Decoder::next_event`] would give) and returns how many; 0 means what `Ok(None)` means.
    /// On `Err`, the events appended before the error stay in `out`. Decoders that decode in
    /// batches override it to hand a batch over at once: no call and no `Result` per event.
    fn next_events(&mut self, out: &mut Vec<IoEvent>, max: usize) -> Result<usize, DecodeError> {
        next_events_one_by_one(out, max, || self.next_event())
    }

    /// Signals the end of input. Events still buffered remain available from `next_event`.
    fn finish(&mut self);

    /// The header as known so far. Text formats discover devices as they go; the header is
    /// complete once `next_event` has returned `Ok(None)` after `finish`.
    fn header(&self) -> &TraceHeader;

    fn diagnostics(&self) -> &Diagnostics;
}

impl<D: Decoder + ?Sized> Decoder for Box<D> {
    fn push(&mut self, bytes: &[u8]) {
        (**self).push(bytes)
    }
    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        (**self).next_event()
    }
    fn next_events(&mut self, out: &mut Vec<IoEvent>, max: usize) -> Result<usize, DecodeError> {
        (**self).next_events(out, max)
    }
    fn finish(&mut self) {
        (**self).finish()
    }
    fn header(&self) -> &TraceHeader {
        (**self).header()
    }
    fn diagnostics(&self) -> &Diagnostics {
        (**self).diagnostics()
    }
}

/// [`Decoder::next_events`] from a `next_event`: the default of every decoder that does not
/// decode in batches.
#[inline]
pub fn next_events_one_by_one(
    out: &mut Vec<IoEvent>,
    max: usize,
    mut next_event: impl FnMut() -> Result<Option<IoEvent>, DecodeError>,
) -> Result<usize, DecodeError> {
    let mut n = 0;
    while n < max {
        match next_event()? {
            Some(e) => out.push(e),
            None => break,
        }
        n += 1;
    }
    Ok(n)
}

/// Everything a decoder produced from a whole input: for tests and small inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decoded {
    pub header: TraceHeader,
    pub events: Vec<IoEvent>,
    pub diagnostics: Diagnostics,
}

/// An event as `(time_nanos, device name, offset_bytes, len_bytes, op)`: [`Decoded::rows`].
pub type EventRow<'a> = (u64, &'a str, u64, u32, Op);

impl Decoded {
    /// Each event as an [`EventRow`], the fields a decoder's tests compare.
    pub fn rows(&self) -> Vec<EventRow<'_>> {
        self.events
            .iter()
            .map(|e| {
                let device = self.header.devices.get(e.device as usize);
                (
                    e.time_nanos,
                    device.map_or("?", |d| d.name.as_str()),
                    e.offset_bytes,
                    e.len_bytes,
                    e.op,
                )
            })
            .collect()
    }
}

/// Feeds `input` to `decoder` in chunks of `chunk_bytes` and collects everything it produces.
/// Used by tests (1- and 7-byte chunks must equal one-shot decoding) and small inputs.
pub fn decode_chunked(
    mut decoder: impl Decoder,
    input: &[u8],
    chunk_bytes: usize,
) -> Result<Decoded, DecodeError> {
    let mut events = Vec::new();
    for chunk in input.chunks(chunk_bytes.max(1)) {
        decoder.push(chunk);
        while let Some(e) = decoder.next_event()? {
            events.push(e);
        }
    }
    decoder.finish();
    while let Some(e) = decoder.next_event()? {
        events.push(e);
    }
    Ok(Decoded {
        header: decoder.header().clone(),
        events,
        diagnostics: decoder.diagnostics().clone(),
    })
}

/// Splits pushed bytes into lines with bounded memory, for the text decoders.
///
/// Lines end at `\n`; a trailing `\r` is removed. A line longer than [`MAX_LINE_BYTES`] is not
/// buffered: it is reported once by [`LineBuffer::next_line`] as [`Line::TooLong`] and its bytes
/// are dropped up to the next newline.
#[derive(Debug, Default)]
pub struct LineBuffer {
    buf: Vec<u8>,
    /// Read position within `buf`; consumed bytes are compacted away lazily.
    pos: usize,
    /// Bytes after `pos` already searched for a newline without finding one, so a long line
    /// arriving in small pushes is scanned once, not once per push.
    scanned: usize,
    /// 1-based number of the next line to be returned.
    line_no: u64,
    /// Byte offset in the whole input of `buf[0]`.
    base_offset: u64,
    /// We are inside an over-long line and drop bytes until the next newline.
    discarding: bool,
    finished: bool,
}

/// One line from a [`LineBuffer`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    Text {
        line_no: u64,
        offset: u64,
        text: &'a [u8],
    },
    TooLong {
        line_no: u64,
        offset: u64,
    },
}

impl LineBuffer {
    pub fn new() -> LineBuffer {
        LineBuffer {
            line_no: 1,
            ..LineBuffer::default()
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 && self.pos >= self.buf.len() / 2 {
            self.base_offset += self.pos as u64;
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        if self.discarding {
            match bytes.iter().position(|&b| b == b'\n') {
                None => {
                    self.base_offset += bytes.len() as u64;
                    return;
                }
                Some(nl) => {
                    self.discarding = false;
                    self.line_no += 1;
                    // The dropped bytes are accounted as consumed.
                    self.base_offset += (nl + 1) as u64;
                    self.buf.extend_from_slice(&bytes[nl + 1..]);
                    return;
                }
            }
        }
        self.buf.extend_from_slice(bytes);
    }

    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// Bytes buffered but not yet returned (a partial last line).
    pub fn pending_bytes(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Returns the next line, or `None` when no complete line is buffered. After
    /// [`LineBuffer::finish`], a last line without a newline is returned too.
    pub fn next_line(&mut self) -> Option<Line<'_>> {
        if self.discarding {
            return None;
        }
        let rest = &self.buf[self.pos..];
        let offset = self.base_offset + self.pos as u64;
        let line_no = self.line_no;
        let found = memchr::memchr(b'\n', &rest[self.scanned..]).map(|i| self.scanned + i);
        self.scanned = if found.is_some() { 0 } else { rest.len() };
        match found {
            Some(nl) if nl <= MAX_LINE_BYTES => {
                let start = self.pos;
                self.pos += nl + 1;
                self.line_no += 1;
                let mut text = &self.buf[start..start + nl];
                if let [head @ .., b'\r'] = text {
                    text = head;
                }
                Some(Line::Text {
                    line_no,
                    offset,
                    text,
                })
            }
            Some(nl) => {
                self.pos += nl + 1;
                self.line_no += 1;
                Some(Line::TooLong { line_no, offset })
            }
            None if rest.len() > MAX_LINE_BYTES => {
                // Drop what we have and everything up to the next newline.
                self.base_offset += self.buf.len() as u64;
                self.buf.clear();
                self.pos = 0;
                self.scanned = 0;
                self.discarding = !self.finished;
                if self.finished {
                    self.line_no += 1;
                }
                Some(Line::TooLong { line_no, offset })
            }
            None if self.finished && !rest.is_empty() => {
                let start = self.pos;
                self.pos = self.buf.len();
                self.line_no += 1;
                self.scanned = 0;
                let mut text = &self.buf[start..];
                if let [head @ .., b'\r'] = text {
                    text = head;
                }
                Some(Line::Text {
                    line_no,
                    offset,
                    text,
                })
            }
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], chunk: usize) -> Vec<String> {
        let mut lb = LineBuffer::new();
        let mut out = Vec::new();
        let mut take = |lb: &mut LineBuffer| {
            while let Some(l) = lb.next_line() {
                out.push(match l {
                    Line::Text {
                        line_no,
                        offset,
                        text,
                    } => {
                        format!("{line_no}@{offset}:{}", String::from_utf8_lossy(text))
                    }
                    Line::TooLong { line_no, offset } => format!("{line_no}@{offset}:TOO LONG"),
                });
            }
        };
        for c in input.chunks(chunk) {
            lb.push(c);
            take(&mut lb);
        }
        lb.finish();
        take(&mut lb);
        out
    }

    #[test]
    fn line_buffer_is_chunking_independent() {
        let mut input = b"a,b\r\nccc\n\nlast".to_vec();
        let long = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\n");
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\nafter\n");
        let one_shot = lines(&input, input.len());
        assert_eq!(one_shot[0], "1@0:a,b");
        assert_eq!(one_shot[1], "2@5:ccc");
        assert_eq!(one_shot[2], "3@9:");
        assert_eq!(one_shot[3], "4@10:last");
        assert_eq!(one_shot[4], "5@15:TOO LONG");
        assert_eq!(one_shot[5], format!("6@{}:after", 15 + MAX_LINE_BYTES + 11));
        for chunk in [1, 7, 4096, 70_000] {
            assert_eq!(lines(&input, chunk), one_shot, "chunk {chunk}");
        }
    }

    #[test]
    fn unterminated_huge_input_stays_bounded() {
        let mut lb = LineBuffer::new();
        let block = vec![b'y'; 1 << 20];
        let mut too_long = 0;
        for _ in 0..64 {
            lb.push(&block);
            while let Some(l) = lb.next_line() {
                assert!(matches!(l, Line::TooLong { .. }));
                too_long += 1;
            }
            assert!(lb.pending_bytes() <= MAX_LINE_BYTES + (1 << 20));
        }
        lb.finish();
        assert!(lb.next_line().is_none());
        assert_eq!(too_long, 1);
    }
}

/// A decoder that reads several inputs at once and merges them into one time-ordered stream:
/// blktrace's per-CPU files (whose completions are often on another CPU than their issues), or
/// several traces of one host. Single-input decoders are wrapped by [`merge::Merge`].
///
/// Driving protocol: call [`MultiDecoder::next_event`] until it returns `Ok(None)`; then, if
/// [`MultiDecoder::wants`] names an input, push more bytes of that input (or call
/// [`MultiDecoder::finish_input`] at its end) and repeat. When `wants` is `None` after `Ok(None)`,
/// the merged stream is complete.
pub trait MultiDecoder {
    fn push(&mut self, input: usize, bytes: &[u8]);
    fn finish_input(&mut self, input: usize);
    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError>;
    /// [`Decoder::next_events`] for the merged stream.
    fn next_events(&mut self, out: &mut Vec<IoEvent>, max: usize) -> Result<usize, DecodeError> {
        next_events_one_by_one(out, max, || self.next_event())
    }
    /// The input whose buffered data ran out and that is not finished, if any.
    fn wants(&self) -> Option<usize>;
    fn header(&self) -> &TraceHeader;
    fn diagnostics(&self) -> &Diagnostics;
}

pub mod alibaba;
pub mod arc;
pub mod blkparse;
pub mod blktrace;
pub mod cloudphysics_csv;
pub mod csv_fields;
pub mod disksim;
pub mod fio_iolog;
pub mod fiu;
pub mod generic_csv;
pub mod lcs;
pub mod libcachesim_csv;
pub mod merge;
pub mod msr;
pub mod oracle_general;
pub mod order;
pub mod pending;
pub(crate) mod push_buffer;
pub mod spc;
pub mod systor;
pub mod tencent;
pub(crate) mod text;
pub mod tracefs;
pub mod vscsi;
