//! Reading native files: [`NativeDecoder`], the push decoder for `.bst`.
//!
//! It buffers at most one chunk (bounded by [`MAX_PAYLOAD_BYTES`]) plus what the caller pushed,
//! decodes a whole events chunk at once into a reused event buffer, and hands the events out one
//! by one. Damage is contained per chunk: a payload whose CRC does not match is skipped by its
//! length; a damaged frame makes the decoder scan for the next valid frame.

use super::columns::{ChunkReader, PAYLOAD_PADDING};
use super::{
    bincode_config, frame_crc, ChunkKind, Compression, DevicesPayload, EndPayload, CHUNK_MAGIC,
    FILE_HEADER_BYTES, FRAME_BYTES, MAGIC, MAX_DEVICES, MAX_HEADER_PAYLOAD_BYTES,
    MAX_PAYLOAD_BYTES, VERSION_MAJOR,
};
use crate::decode::{DecodeError, Decoder, Diagnostics};
use crate::event::{IoEvent, TraceHeader};

const FORMAT: &str = "native";

/// Memory a header or devices payload may decode into. Bincode counts what a payload claims to
/// allocate (about 56 bytes per device entry plus its name), not its encoded size: a 1 MiB
/// payload of the smallest entries (4 bytes each) decodes into under 16 MiB.
const DECODED_HEADER_BYTES: usize = 16 << 20;

/// Events decoded per batch: enough to amortise the batch set-up, few enough (about 56 KiB of
/// `IoEvent`s) to stay in the CPU's fast caches.
const BATCH_EVENTS: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Waiting for the magic and version.
    FileHeader,
    /// At a chunk frame.
    Chunks,
    /// After a damaged frame: scanning for the next valid one.
    Resync,
    /// After the end marker.
    Ended,
    /// After a fatal error: yields nothing.
    Failed,
}

/// The push decoder for the native format.
#[derive(Debug)]
pub struct NativeDecoder {
    buf: Vec<u8>,
    /// Read position in `buf`.
    pos: usize,
    /// Offset in the whole input of `buf[0]`.
    base_offset: u64,
    stage: Stage,
    finished: bool,
    /// The tail after `finish` has been accounted for.
    tail_done: bool,
    header: TraceHeader,
    diagnostics: Diagnostics,
    /// The current events chunk's payload (a copy, or the LZ4-decompressed bytes) and the
    /// reader that decodes it batch by batch.
    payload: Vec<u8>,
    reader: ChunkReader,
    /// Where the current events chunk starts in the input, for messages.
    chunk_at: u64,
    /// The current batch of decoded events and the next one to hand out.
    events: Vec<IoEvent>,
    next: usize,
    end_total_events: Option<u64>,
    bytes_after_end: u64,
    /// One more than the largest device index in the events so far.
    devices_used: usize,
}

impl Default for NativeDecoder {
    fn default() -> Self {
        NativeDecoder::new()
    }
}

impl NativeDecoder {
    pub fn new() -> NativeDecoder {
        NativeDecoder {
            buf: Vec::new(),
            pos: 0,
            base_offset: 0,
            stage: Stage::FileHeader,
            finished: false,
            tail_done: false,
            header: TraceHeader::new(FORMAT),
            diagnostics: Diagnostics::default(),
            payload: Vec::new(),
            reader: ChunkReader::default(),
            chunk_at: 0,
            events: Vec::with_capacity(BATCH_EVENTS),
            next: 0,
            end_total_events: None,
            bytes_after_end: 0,
            devices_used: 0,
        }
    }

    /// The total event count from the end marker, once it has been read. `None` means the file
    /// has no end marker (yet): the recording was cut off, and `Diagnostics::truncated_tail_bytes`
    /// says how much of a last chunk was lost.
    pub fn end_total_events(&self) -> Option<u64> {
        self.end_total_events
    }

    /// Decodes what is buffered as far as possible. Returns whether anything changed.
    fn step(&mut self) -> Result<bool, DecodeError> {
        let avail = &self.buf[self.pos..];
        let at = self.base_offset + self.pos as u64;
        match self.stage {
            Stage::FileHeader => {
                let n = avail.len().min(MAGIC.len());
                if avail[..n] != MAGIC[..n] {
                    return Err(DecodeError::at_byte(
                        FORMAT,
                        at,
                        "expected the native trace magic 89 42 53 54 0d 0a 1a 0a (\\x89BST\\r\\n\\x1a\\n)",
                    ));
                }
                if avail.len() < FILE_HEADER_BYTES {
                    return Ok(false);
                }
                let major = u16::from_le_bytes([avail[8], avail[9]]);
                let minor = u16::from_le_bytes([avail[10], avail[11]]);
                if major != VERSION_MAJOR {
                    return Err(DecodeError::at_byte(
                        FORMAT,
                        at + 8,
                        format!(
                            "format version {major}.{minor} is not supported; this reader knows \
                             version {VERSION_MAJOR}.x"
                        ),
                    ));
                }
                self.pos += FILE_HEADER_BYTES;
                self.stage = Stage::Chunks;
                Ok(true)
            }
            Stage::Chunks => {
                if avail.len() < FRAME_BYTES {
                    return Ok(false);
                }
                let (frame, rest) = avail.split_at(FRAME_BYTES);
                if let Err(what) = check_frame(frame) {
                    self.diagnostics.skip(|| {
                        format!("native: chunk at byte {at}: {what}; scanning for the next chunk")
                    });
                    self.pos += 1;
                    self.stage = Stage::Resync;
                    return Ok(true);
                }
                let len = u32_at(frame, 8) as usize;
                let Some(payload) = rest.get(..len) else {
                    return Ok(false);
                };
                let stored_crc = u32_at(frame, 12);
                let computed_crc = crc32fast::hash(payload);
                self.pos += FRAME_BYTES + len;
                if stored_crc != computed_crc {
                    self.diagnostics.skip(|| {
                        format!(
                            "native: chunk at byte {at}: payload CRC mismatch (stored {stored_crc:08x}, \
                             computed {computed_crc:08x}); skipped its {len} bytes"
                        )
                    });
                    return Ok(true);
                }
                self.chunk_at = at;
                let outcome = process_chunk(
                    frame[4],
                    frame[5],
                    payload,
                    &mut self.payload,
                    &mut self.reader,
                    &mut self.header,
                );
                match outcome {
                    Ok(Chunk::Events) => {}
                    Ok(Chunk::Header) => pad_devices(&mut self.header, self.devices_used),
                    Ok(Chunk::Unknown) => self.diagnostics.ignored_records += 1,
                    Ok(Chunk::End(total)) => {
                        self.end_total_events = Some(total);
                        self.stage = Stage::Ended;
                        self.bytes_after_end += (self.buf.len() - self.pos) as u64;
                        self.pos = self.buf.len();
                    }
                    Err(why) => {
                        self.reader = ChunkReader::default();
                        self.diagnostics
                            .skip(|| format!("native: chunk at byte {at}: {why}"));
                    }
                }
                Ok(true)
            }
            Stage::Resync => match find_frame(avail) {
                Search::Found(i) => {
                    self.pos += i;
                    self.stage = Stage::Chunks;
                    Ok(true)
                }
                Search::NeedMore(i) => {
                    self.pos += i;
                    Ok(false)
                }
            },
            Stage::Ended | Stage::Failed => Ok(false),
        }
    }

    /// Decodes the next batch of the current events chunk into `self.events`.
    fn refill(&mut self) {
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        self.next = 0;
        self.decode_batch(&mut events);
        self.events = events;
    }

    /// Appends the next batch of the current events chunk (at most [`BATCH_EVENTS`]) to `out`;
    /// a batch that does not decode is dropped and the rest of its chunk skipped.
    fn decode_batch(&mut self, out: &mut Vec<IoEvent>) {
        let from = out.len();
        let batch = self.reader.read_batch(&self.payload, out, BATCH_EVENTS);
        if out.len() > from {
            let max = self.reader.max_device() as usize;
            self.devices_used = self.devices_used.max(max + 1);
            pad_devices(&mut self.header, self.devices_used);
        }
        if let Err(why) = batch {
            out.truncate(from);
            self.reader = ChunkReader::default();
            let at = self.chunk_at;
            self.diagnostics
                .skip(|| format!("native: chunk at byte {at}: {why}"));
        }
    }

    /// Reads the next chunk or frame once no decoded event is left: whether anything changed.
    /// At the end of the input it accounts for the tail; a fatal error fails the decoder.
    fn advance(&mut self) -> Result<bool, DecodeError> {
        match self.step() {
            Ok(true) => Ok(true),
            Ok(false) => {
                if self.finished && !self.tail_done {
                    self.tail_done = true;
                    self.account_tail();
                }
                Ok(false)
            }
            Err(e) => {
                self.stage = Stage::Failed;
                self.buf = Vec::new();
                self.pos = 0;
                Err(e)
            }
        }
    }

    /// After `finish`, accounts for whatever could not be decoded.
    fn account_tail(&mut self) {
        let rest = (self.buf.len() - self.pos) as u64;
        if matches!(self.stage, Stage::Chunks | Stage::Resync) {
            self.diagnostics.end_marker_missing = true;
        }
        match self.stage {
            Stage::FileHeader | Stage::Chunks => self.diagnostics.truncated_tail_bytes += rest,
            Stage::Ended if self.bytes_after_end > 0 => {
                let n = self.bytes_after_end;
                self.diagnostics
                    .skip(|| format!("native: {n} byte(s) after the end marker ignored"));
            }
            Stage::Resync | Stage::Ended | Stage::Failed => {}
        }
        self.buf.clear();
        self.pos = 0;
    }
}

/// Keeps the promise that every event's device is listed in the header: a file whose events use
/// a device its header does not list (a damaged or hand-made file) gets placeholder entries.
/// Device indices are below [`super::MAX_DEVICES`], which bounds this.
fn pad_devices(header: &mut TraceHeader, devices_used: usize) {
    while header.devices.len() < devices_used {
        let name = format!("device{} (not named in the file)", header.devices.len());
        header.devices.push(crate::event::DeviceInfo::named(name));
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// Checks a frame's magic, its own CRC and the length bound.
fn check_frame(frame: &[u8]) -> Result<(), &'static str> {
    if frame[..4] != CHUNK_MAGIC {
        return Err("expected the chunk magic 89 42 53 43");
    }
    if u32_at(frame, 16) != frame_crc(frame) {
        return Err("the chunk frame's CRC does not match");
    }
    if u32_at(frame, 8) as usize > MAX_PAYLOAD_BYTES {
        return Err("the chunk length exceeds the 64 MiB limit");
    }
    Ok(())
}

enum Search {
    /// A valid frame starts at this index.
    Found(usize),
    /// No valid frame before this index; look again from here with more input.
    NeedMore(usize),
}

fn find_frame(avail: &[u8]) -> Search {
    let mut i = 0;
    while let Some(p) = avail[i..].iter().position(|&b| b == CHUNK_MAGIC[0]) {
        let start = i + p;
        match avail.get(start..start + FRAME_BYTES) {
            // Possibly a frame whose rest has not arrived yet: look again when it has. (A later
            // candidate cannot be complete either, so nothing is missed by stopping here.)
            None if avail[start..].starts_with(&CHUNK_MAGIC[..(avail.len() - start).min(4)]) => {
                return Search::NeedMore(start);
            }
            None => i = start + 1,
            Some(frame) if check_frame(frame).is_ok() => return Search::Found(start),
            Some(_) => i = start + 1,
        }
    }
    Search::NeedMore(avail.len())
}

enum Chunk {
    Header,
    Events,
    End(u64),
    Unknown,
}

/// Interprets one chunk whose CRC matched. An events chunk is copied (or decompressed) into
/// `owned` and started in `reader`; the caller decodes it batch by batch.
fn process_chunk(
    kind: u8,
    codec: u8,
    payload: &[u8],
    owned: &mut Vec<u8>,
    reader: &mut ChunkReader,
    header: &mut TraceHeader,
) -> Result<Chunk, String> {
    let Some(kind) = ChunkKind::from_u8(kind) else {
        return Ok(Chunk::Unknown);
    };
    let data = match Compression::from_codec(codec) {
        Some(Compression::None) if kind == ChunkKind::Events => {
            owned.clear();
            owned.reserve(payload.len() + PAYLOAD_PADDING);
            owned.extend_from_slice(payload);
            &owned[..]
        }
        Some(Compression::None) => payload,
        Some(Compression::Lz4) => {
            let Some((size, compressed)) = payload.split_first_chunk::<4>() else {
                return Err("an LZ4 payload shorter than its 4-byte size".into());
            };
            let size = u32::from_le_bytes(*size) as usize;
            if size > MAX_PAYLOAD_BYTES {
                return Err(format!(
                    "an LZ4 payload claims {size} bytes, over the 64 MiB limit"
                ));
            }
            // An LZ4 block expands at most about 255 times (a match length grows by 255 per
            // extra byte). A larger claim is damage; refusing it saves zeroing up to 64 MiB for
            // a chunk of a few bytes.
            if size > compressed.len().saturating_mul(255).saturating_add(64) {
                return Err(format!(
                    "an LZ4 payload of {} bytes claims {size} bytes, more than LZ4 can expand to",
                    compressed.len()
                ));
            }
            owned.clear();
            owned.reserve(size + PAYLOAD_PADDING);
            owned.resize(size, 0);
            match lz4_flex::block::decompress_into(compressed, owned) {
                Ok(n) if n == size => &owned[..],
                Ok(n) => return Err(format!("LZ4 payload gave {n} bytes, expected {size}")),
                Err(e) => return Err(format!("LZ4 payload does not decompress: {e}")),
            }
        }
        None => return Err(format!("unknown codec {codec}")),
    };
    match kind {
        ChunkKind::Events => {
            reader.start(data)?;
            // The payload stays in `owned` (copied or decompressed there above) and the reader
            // wants zero bytes after it (`PAYLOAD_PADDING`).
            let n = data.len();
            owned.resize(n + PAYLOAD_PADDING, 0);
            Ok(Chunk::Events)
        }
        ChunkKind::Header => {
            if data.len() > MAX_HEADER_PAYLOAD_BYTES {
                return Err("a header chunk over the 1 MiB limit".into());
            }
            let config = bincode_config().with_limit::<DECODED_HEADER_BYTES>();
            let (h, used): (TraceHeader, usize) = bincode::serde::decode_from_slice(data, config)
                .map_err(|e| {
                format!("the trace header does not decode: {}", bincode_why(&e))
            })?;
            if used != data.len() {
                return Err(format!(
                    "{} byte(s) after the trace header",
                    data.len() - used
                ));
            }
            *header = h;
            header.devices.truncate(MAX_DEVICES);
            Ok(Chunk::Header)
        }
        ChunkKind::Devices => {
            if data.len() > MAX_HEADER_PAYLOAD_BYTES {
                return Err("a devices chunk over the 1 MiB limit".into());
            }
            let config = bincode_config().with_limit::<DECODED_HEADER_BYTES>();
            let (d, used): (DevicesPayload, usize) =
                bincode::serde::decode_from_slice(data, config)
                    .map_err(|e| format!("the device list does not decode: {}", bincode_why(&e)))?;
            if used != data.len() {
                return Err(format!(
                    "{} byte(s) after the device list",
                    data.len() - used
                ));
            }
            let first = usize::try_from(d.first).unwrap_or(usize::MAX);
            if first.saturating_add(d.devices.len()) > MAX_DEVICES {
                return Err(format!(
                    "the device list covers indices {} to {}, over the limit of {MAX_DEVICES}",
                    d.first,
                    d.first.saturating_add(d.devices.len() as u64)
                ));
            }
            pad_devices(header, first);
            for (i, device) in d.devices.into_iter().enumerate() {
                match header.devices.get_mut(first + i) {
                    Some(slot) => *slot = device,
                    None => header.devices.push(device),
                }
            }
            Ok(Chunk::Header)
        }
        ChunkKind::End => {
            let (end, _): (EndPayload, usize) =
                bincode::serde::decode_from_slice(data, bincode_config())
                    .map_err(|e| format!("the end marker does not decode: {}", bincode_why(&e)))?;
            Ok(Chunk::End(end.total_events))
        }
    }
}

/// What a bincode error means, in words rather than its internal names (`UnexpectedEnd {
/// additional: 1 }`, `LimitExceeded`).
fn bincode_why(e: &bincode::error::DecodeError) -> String {
    use bincode::error::DecodeError as E;
    match e {
        E::UnexpectedEnd { additional } => {
            format!("the payload ends {additional} byte(s) before its last field")
        }
        E::LimitExceeded => "a length inside it claims more than 16 MiB".into(),
        E::InvalidIntegerType { .. } | E::InvalidCharEncoding(_) => {
            "a field holds an invalid value".into()
        }
        E::Utf8 { .. } => "a text field is not valid UTF-8".into(),
        E::UnexpectedVariant { found, .. } => {
            format!("a field holds variant {found}, which does not exist")
        }
        _ => "a field holds an invalid value".into(),
    }
}

impl Decoder for NativeDecoder {
    fn push(&mut self, bytes: &[u8]) {
        match self.stage {
            Stage::Failed => return,
            Stage::Ended => {
                self.bytes_after_end += bytes.len() as u64;
                return;
            }
            _ => {}
        }
        if self.pos > 0 && self.pos >= self.buf.len() / 2 {
            self.buf.drain(..self.pos);
            self.base_offset += self.pos as u64;
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    #[inline]
    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        loop {
            if let Some(&e) = self.events.get(self.next) {
                self.next += 1;
                return Ok(Some(e));
            }
            if self.reader.remaining() > 0 {
                self.refill();
                continue;
            }
            if !self.advance()? {
                return Ok(None);
            }
        }
    }

    fn next_events(&mut self, out: &mut Vec<IoEvent>, max: usize) -> Result<usize, DecodeError> {
        let mut n = 0;
        loop {
            let left = &self.events[self.next..];
            if !left.is_empty() {
                let take = left.len().min(max - n);
                out.extend_from_slice(&left[..take]);
                self.next += take;
                n += take;
            }
            if n == max {
                return Ok(n);
            }
            let remaining = self.reader.remaining();
            if remaining > 0 {
                if max - n >= remaining.min(BATCH_EVENTS) {
                    // Straight into the caller's buffer, in the same batches as `refill`.
                    let from = out.len();
                    self.decode_batch(out);
                    n += out.len() - from;
                } else {
                    self.refill();
                }
                continue;
            }
            // A call never spans chunks: the header a caller reads after it is the one of
            // every event it got.
            if n > 0 || !self.advance()? {
                return Ok(n);
            }
        }
    }

    fn finish(&mut self) {
        self.finished = true;
    }

    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }
}
