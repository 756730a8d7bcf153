//! Transparent decompression for push decoders: gzip (several members, as `pigz` and
//! concatenated `.gz` files have), zstd (several frames, skippable frames) and bzip2 (several
//! streams, as `pbzip2` writes), detected by their magic numbers, in pure Rust so that the
//! browser can read `.gz`, `.zst` and `.bz2` traces (the SNIA samples ship as `.bz2`).
//!
//! [`Decompressor`] is a push state machine like the decoders: bytes in, decompressed bytes out
//! in steps of at most [`STEP_BYTES`], so a small compressed input that expands enormously never
//! costs more than one step of memory (plus zstd's window, at most 100 MiB as ruzstd allows, and
//! bzip2's block state, about 3.6 MiB for the largest 900 KB blocks). bzip2 is decoded by
//! `libbz2-rs-sys`, a Rust port of libbzip2, through the `bzip2` crate's streaming API.
//! [`Decompressing`] wraps any [`Decoder`] with it; [`sniff`] guesses the trace format from the
//! first decompressed bytes. Errors name the codec and the byte offset in the compressed input.
//!
//! xz is not here: it has no maintained pure-Rust streaming decoder that suits this protocol, and
//! the native CLI reads `.xz` through liblzma instead.

use std::io::Read;

use flate2::{Decompress, FlushDecompress, Status};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

use crate::decode::{DecodeError, Decoder, Diagnostics};
use crate::event::{IoEvent, TraceHeader};
use crate::format::TraceFormat;

/// The most decompressed bytes produced per step.
pub const STEP_BYTES: usize = 64 * 1024;

/// A gzip header longer than this (a file name with no terminator) is refused.
const MAX_GZIP_HEADER_BYTES: usize = 64 * 1024;

/// The largest zstd block (RFC 8878).
const MAX_ZSTD_BLOCK_BYTES: usize = 128 * 1024;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const ZSTD_MAGIC: u32 = 0xfd2f_b528;
/// `BZh` then the block size `1`..`9` (hundreds of KB).
const BZIP2_MAGIC: &[u8; 3] = b"BZh";

fn is_bzip2_start(b: &[u8]) -> bool {
    b.len() >= 4 && b.starts_with(BZIP2_MAGIC) && (b'1'..=b'9').contains(&b[3])
}

/// A compression format the engine can undo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Codec {
    /// Not compressed (or compressed with something not recognised).
    None,
    Gzip,
    Zstd,
    Bzip2,
}

impl Codec {
    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "uncompressed",
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
            Codec::Bzip2 => "bzip2",
        }
    }

    /// Recognises the codec from the first bytes; `None` while `head` is too short to tell
    /// (a prefix of a magic number).
    pub fn detect(head: &[u8]) -> Option<Codec> {
        let zstd = ZSTD_MAGIC.to_le_bytes();
        if head.starts_with(&GZIP_MAGIC) {
            Some(Codec::Gzip)
        } else if head.starts_with(&zstd) {
            Some(Codec::Zstd)
        } else if is_bzip2_start(head) {
            Some(Codec::Bzip2)
        } else if head.len() < 4
            && (GZIP_MAGIC.starts_with(head)
                || zstd.starts_with(head)
                || BZIP2_MAGIC.starts_with(head)
                || head.starts_with(BZIP2_MAGIC))
        {
            None
        } else {
            Some(Codec::None)
        }
    }
}

#[derive(Debug)]
enum Stage {
    /// Waiting for enough bytes to recognise the codec.
    Detect,
    Plain,
    GzipHeader,
    GzipBody,
    GzipTrailer,
    /// After a gzip member: another member, zero padding, or the end.
    GzipBetween,
    ZstdFrameHeader,
    ZstdBlocks,
    /// A zstd frame is decoded; its last bytes are being handed out.
    ZstdDrain,
    ZstdSkip {
        remaining_bytes: u64,
    },
    /// After a zstd frame: another frame or the end.
    ZstdBetween,
    Bzip2Body,
    /// After a bzip2 stream: another stream or the end.
    Bzip2Between,
    Done,
    Failed,
}

/// Push-based decompression with bounded buffers. See the module documentation.
pub struct Decompressor {
    input: Vec<u8>,
    /// Read position in `input`.
    pos: usize,
    /// Offset in the compressed input of `input[0]`.
    base_offset: u64,
    finished: bool,
    stage: Stage,
    codec: Option<Codec>,
    inflate: Decompress,
    crc: crc32fast::Hasher,
    member_bytes: u64,
    zstd: FrameDecoder,
    zstd_checksum: bool,
    /// The bzip2 stream being decoded (created at its `BZh`, so other codecs pay nothing).
    bunzip: Option<bzip2::Decompress>,
    /// Compressed offset of the current bzip2 stream's `BZh`. libbzip2 does not say reliably how
    /// much input it had consumed when it finds damage (the count depends on how the input was
    /// split into calls), so damage is reported at the stream's start, which does not.
    bzip2_stream_at: u64,
    /// An error found after some output, reported by the next `read`.
    pending_error: Option<DecodeError>,
}

impl Default for Decompressor {
    fn default() -> Self {
        Decompressor::new()
    }
}

fn u32_le(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// The length of the gzip member header at the start of `b`, `Ok(None)` when more bytes are
/// needed (RFC 1952, section 2.3).
fn gzip_header_len(b: &[u8]) -> Result<Option<usize>, String> {
    if b.len() < 10 {
        return Ok(None);
    }
    if b[..2] != GZIP_MAGIC {
        return Err("expected the gzip magic 1f 8b".into());
    }
    if b[2] != 8 {
        return Err(format!("compression method {} is not deflate (8)", b[2]));
    }
    let flags = b[3];
    if flags & 0xe0 != 0 {
        return Err(format!("reserved header flags set ({flags:#04x})"));
    }
    let mut p = 10;
    if flags & 0x04 != 0 {
        let Some(x) = b.get(p..p + 2) else {
            return Ok(None);
        };
        p += 2 + usize::from(u16::from_le_bytes([x[0], x[1]]));
    }
    for flag in [0x08, 0x10] {
        if flags & flag != 0 {
            match b
                .get(p..)
                .and_then(|rest| rest.iter().position(|&c| c == 0))
            {
                Some(nul) => p += nul + 1,
                None if b.len() > MAX_GZIP_HEADER_BYTES => {
                    return Err("a header file name or comment over 64 KiB".into())
                }
                None => return Ok(None),
            }
        }
    }
    if flags & 0x02 != 0 {
        p += 2;
    }
    Ok((b.len() >= p).then_some(p))
}

/// What starts a zstd frame.
enum ZstdFrame {
    Regular { header_bytes: usize, checksum: bool },
    Skippable { content_bytes: u64 },
}

/// Parses the start of a zstd frame (RFC 8878, section 3.1.1), `Ok(None)` when more bytes are
/// needed.
fn zstd_frame(b: &[u8]) -> Result<Option<ZstdFrame>, String> {
    if b.len() < 4 {
        return Ok(None);
    }
    let magic = u32_le(b);
    if magic & 0xffff_fff0 == 0x184d_2a50 {
        return Ok(b.get(4..8).map(|n| ZstdFrame::Skippable {
            content_bytes: u64::from(u32_le(n)),
        }));
    }
    if magic != ZSTD_MAGIC {
        return Err("expected the zstd magic 28 b5 2f fd".into());
    }
    let Some(&descriptor) = b.get(4) else {
        return Ok(None);
    };
    if descriptor & 0x08 != 0 {
        return Err("the reserved bit of the frame header descriptor is set".into());
    }
    let single_segment = descriptor & 0x20 != 0;
    let content_size_bytes = match descriptor >> 6 {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let header_bytes = 5
        + usize::from(!single_segment)
        + [0, 1, 2, 4][usize::from(descriptor & 3)]
        + content_size_bytes;
    Ok((b.len() >= header_bytes).then_some(ZstdFrame::Regular {
        header_bytes,
        checksum: descriptor & 0x04 != 0,
    }))
}

impl Decompressor {
    pub fn new() -> Decompressor {
        Decompressor {
            input: Vec::new(),
            pos: 0,
            base_offset: 0,
            finished: false,
            stage: Stage::Detect,
            codec: None,
            inflate: Decompress::new(false),
            crc: crc32fast::Hasher::new(),
            member_bytes: 0,
            zstd: FrameDecoder::new(),
            zstd_checksum: false,
            bunzip: None,
            bzip2_stream_at: 0,
            pending_error: None,
        }
    }

    /// The codec, once enough bytes have been seen.
    pub fn codec(&self) -> Option<Codec> {
        self.codec
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if matches!(self.stage, Stage::Failed) {
            return;
        }
        if self.pos > 0 && self.pos >= self.input.len() / 2 {
            self.input.drain(..self.pos);
            self.base_offset += self.pos as u64;
            self.pos = 0;
        }
        self.input.extend_from_slice(bytes);
    }

    /// No more input will come.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// The whole input has been decompressed and handed out.
    pub fn is_done(&self) -> bool {
        matches!(self.stage, Stage::Done)
    }

    /// Compressed bytes pushed but not consumed yet.
    pub fn pending_bytes(&self) -> usize {
        self.input.len() - self.pos
    }

    fn error(&mut self, at: u64, message: impl Into<String>) -> DecodeError {
        self.stage = Stage::Failed;
        self.input = Vec::new();
        self.pos = 0;
        let codec = self.codec.unwrap_or(Codec::None).name();
        DecodeError::at_byte(codec, at, message)
    }

    /// Appends up to [`STEP_BYTES`] decompressed bytes to `out` and returns how many. `Ok(0)`
    /// means more input is needed, or, when [`Decompressor::is_done`], that the input is
    /// exhausted. After `finish`, an input that ends inside a member or frame is an error.
    pub fn read(&mut self, out: &mut Vec<u8>) -> Result<usize, DecodeError> {
        if let Some(e) = self.pending_error.take() {
            return Err(e);
        }
        loop {
            let at = self.base_offset + self.pos as u64;
            let avail = &self.input[self.pos..];
            match self.stage {
                Stage::Done | Stage::Failed => return Ok(0),
                Stage::Detect => match Codec::detect(avail) {
                    Some(codec) => {
                        self.codec = Some(codec);
                        self.stage = match codec {
                            Codec::None => Stage::Plain,
                            Codec::Gzip => Stage::GzipHeader,
                            Codec::Zstd => Stage::ZstdFrameHeader,
                            Codec::Bzip2 => {
                                self.bzip2_stream_at = at;
                                Stage::Bzip2Body
                            }
                        };
                    }
                    None if self.finished => {
                        self.codec = Some(Codec::None);
                        self.stage = Stage::Plain;
                    }
                    None => return Ok(0),
                },
                Stage::Plain => {
                    let n = avail.len().min(STEP_BYTES);
                    out.extend_from_slice(&avail[..n]);
                    self.pos += n;
                    if n == 0 && self.finished {
                        self.stage = Stage::Done;
                    }
                    return Ok(n);
                }
                Stage::GzipHeader => match gzip_header_len(avail) {
                    Ok(Some(n)) => {
                        self.pos += n;
                        self.stage = Stage::GzipBody;
                    }
                    Ok(None) if self.finished => {
                        return Err(self.error(at, "the input ends inside a gzip header"))
                    }
                    Ok(None) => return Ok(0),
                    Err(e) => return Err(self.error(at, e)),
                },
                Stage::GzipBody => {
                    let start = out.len();
                    out.resize(start + STEP_BYTES, 0);
                    let (in_before, out_before) =
                        (self.inflate.total_in(), self.inflate.total_out());
                    let status =
                        self.inflate
                            .decompress(avail, &mut out[start..], FlushDecompress::None);
                    let consumed = (self.inflate.total_in() - in_before) as usize;
                    let produced = (self.inflate.total_out() - out_before) as usize;
                    out.truncate(start + produced);
                    self.pos += consumed;
                    let status = match status {
                        Ok(s) => s,
                        Err(e) => {
                            let at = at + consumed as u64;
                            let err = self.error(at, format!("corrupt deflate data: {e}"));
                            // Hand out what was decoded before the damage first, so that the
                            // error comes at the same point of the output however the input
                            // was split.
                            if produced > 0 {
                                self.pending_error = Some(err);
                                return Ok(produced);
                            }
                            return Err(err);
                        }
                    };
                    self.crc.update(&out[start..]);
                    self.member_bytes += produced as u64;
                    if matches!(status, Status::StreamEnd) {
                        self.stage = Stage::GzipTrailer;
                    }
                    if produced > 0 {
                        return Ok(produced);
                    }
                    if matches!(status, Status::StreamEnd) {
                        continue;
                    }
                    if consumed == 0 {
                        if self.finished {
                            return Err(self.error(
                                at,
                                "the input ends inside a gzip member (truncated file?)",
                            ));
                        }
                        return Ok(0);
                    }
                }
                Stage::GzipTrailer => {
                    let Some(trailer) = avail.get(..8) else {
                        if self.finished {
                            return Err(self.error(at, "the input ends inside a gzip trailer"));
                        }
                        return Ok(0);
                    };
                    let stored_crc = u32_le(trailer);
                    let stored_size = u32_le(&trailer[4..]);
                    let crc = std::mem::take(&mut self.crc).finalize();
                    if stored_crc != crc {
                        return Err(self.error(
                            at,
                            format!("CRC32 mismatch (stored {stored_crc:08x}, data {crc:08x})"),
                        ));
                    }
                    if stored_size != self.member_bytes as u32 {
                        return Err(self.error(
                            at + 4,
                            format!(
                                "size mismatch (stored {stored_size}, data {} mod 2^32)",
                                self.member_bytes as u32
                            ),
                        ));
                    }
                    self.pos += 8;
                    self.member_bytes = 0;
                    self.inflate.reset(false);
                    self.stage = Stage::GzipBetween;
                }
                Stage::GzipBetween => {
                    // Some tools pad gzip files with zeros; skip them.
                    let zeros = avail.iter().take_while(|&&b| b == 0).count();
                    self.pos += zeros;
                    let avail = &avail[zeros..];
                    if avail.is_empty() {
                        if self.finished {
                            self.stage = Stage::Done;
                        }
                        return Ok(0);
                    }
                    if avail.len() < 2 && !self.finished && avail[0] == GZIP_MAGIC[0] {
                        return Ok(0);
                    }
                    if !avail.starts_with(&GZIP_MAGIC) {
                        let at = at + zeros as u64;
                        return Err(self.error(
                            at,
                            "expected another gzip member (1f 8b) or the end of the input",
                        ));
                    }
                    self.stage = Stage::GzipHeader;
                }
                Stage::ZstdFrameHeader => match zstd_frame(avail) {
                    Ok(Some(ZstdFrame::Skippable { content_bytes })) => {
                        self.pos += 8;
                        self.stage = Stage::ZstdSkip {
                            remaining_bytes: content_bytes,
                        };
                    }
                    Ok(Some(ZstdFrame::Regular {
                        header_bytes,
                        checksum,
                    })) => {
                        let mut header = &avail[..header_bytes];
                        if let Err(e) = self.zstd.reset(&mut header) {
                            return Err(self.error(at, format!("bad frame header: {e}")));
                        }
                        self.zstd_checksum = checksum;
                        self.pos += header_bytes;
                        self.stage = Stage::ZstdBlocks;
                    }
                    Ok(None) if self.finished => {
                        return Err(self.error(at, "the input ends inside a zstd frame header"))
                    }
                    Ok(None) => return Ok(0),
                    Err(e) => return Err(self.error(at, e)),
                },
                Stage::ZstdSkip { remaining_bytes } => {
                    let n = (avail.len() as u64).min(remaining_bytes);
                    self.pos += n as usize;
                    if n == remaining_bytes {
                        self.stage = Stage::ZstdBetween;
                    } else {
                        self.stage = Stage::ZstdSkip {
                            remaining_bytes: remaining_bytes - n,
                        };
                        if self.finished {
                            return Err(self.error(at, "the input ends inside a skippable frame"));
                        }
                        return Ok(0);
                    }
                }
                Stage::ZstdBlocks => {
                    // Hand out what the last block produced before decoding another.
                    let n = self.drain_zstd(out)?;
                    if n > 0 {
                        return Ok(n);
                    }
                    let avail = &self.input[self.pos..];
                    let Some(h) = avail.get(..3) else {
                        return self.need_more(at, "the input ends inside a zstd frame");
                    };
                    let h = u32::from(h[0]) | u32::from(h[1]) << 8 | u32::from(h[2]) << 16;
                    let last = h & 1 != 0;
                    let size = (h >> 3) as usize;
                    let content = match (h >> 1) & 3 {
                        0 | 2 => size,
                        1 => 1,
                        _ => return Err(self.error(at, "reserved zstd block type")),
                    };
                    if size > MAX_ZSTD_BLOCK_BYTES {
                        return Err(
                            self.error(at, format!("a block of {size} bytes, over 128 KiB"))
                        );
                    }
                    let needed = 3 + content + if last && self.zstd_checksum { 4 } else { 0 };
                    let Some(mut block) = avail.get(..needed) else {
                        return self.need_more(at, "the input ends inside a zstd block");
                    };
                    let finished_frame = match self
                        .zstd
                        .decode_blocks(&mut block, BlockDecodingStrategy::UptoBlocks(1))
                    {
                        Ok(f) => f,
                        Err(e) => return Err(self.error(at, format!("corrupt block: {e}"))),
                    };
                    self.pos += needed - block.len();
                    if finished_frame {
                        self.stage = Stage::ZstdDrain;
                    }
                }
                Stage::ZstdDrain => {
                    let n = self.drain_zstd(out)?;
                    if n > 0 {
                        return Ok(n);
                    }
                    // ruzstd hashes the content as it is drained, so the checksum can only be
                    // checked once the whole frame has been handed out.
                    if let (Some(stored), Some(computed)) = (
                        self.zstd.get_checksum_from_data(),
                        self.zstd.get_calculated_checksum(),
                    ) {
                        if stored != computed {
                            return Err(self.error(
                                at,
                                format!(
                                    "content checksum mismatch at the end of the frame (stored \
                                     {stored:08x}, data {computed:08x})"
                                ),
                            ));
                        }
                    }
                    self.stage = Stage::ZstdBetween;
                }
                Stage::ZstdBetween => {
                    if avail.is_empty() {
                        if self.finished {
                            self.stage = Stage::Done;
                        }
                        return Ok(0);
                    }
                    self.stage = Stage::ZstdFrameHeader;
                }
                Stage::Bzip2Body => {
                    let bunzip = self
                        .bunzip
                        .get_or_insert_with(|| bzip2::Decompress::new(false));
                    let start = out.len();
                    out.resize(start + STEP_BYTES, 0);
                    let (in_before, out_before) = (bunzip.total_in(), bunzip.total_out());
                    let status = bunzip.decompress(avail, &mut out[start..]);
                    let consumed = (bunzip.total_in() - in_before) as usize;
                    let produced = (bunzip.total_out() - out_before) as usize;
                    out.truncate(start + produced);
                    self.pos += consumed;
                    let end = match status {
                        Ok(bzip2::Status::StreamEnd) => true,
                        Ok(_) => false,
                        Err(e) => {
                            let stream_at = self.bzip2_stream_at;
                            let err = self.error(
                                stream_at,
                                format!("corrupt bzip2 data in the stream that starts here: {e}"),
                            );
                            if produced > 0 {
                                self.pending_error = Some(err);
                                return Ok(produced);
                            }
                            return Err(err);
                        }
                    };
                    if end {
                        self.bunzip = None;
                        self.stage = Stage::Bzip2Between;
                    }
                    if produced > 0 {
                        return Ok(produced);
                    }
                    if end {
                        continue;
                    }
                    if consumed == 0 {
                        return self.need_more(at, "the input ends inside a bzip2 stream");
                    }
                }
                Stage::Bzip2Between => {
                    if avail.is_empty() {
                        if self.finished {
                            self.stage = Stage::Done;
                        }
                        return Ok(0);
                    }
                    if avail.len() < 4 && !self.finished {
                        return Ok(0);
                    }
                    if !is_bzip2_start(avail) {
                        return Err(self.error(
                            at,
                            "expected another bzip2 stream (BZh1..BZh9) or the end of the input",
                        ));
                    }
                    self.bzip2_stream_at = at;
                    self.stage = Stage::Bzip2Body;
                }
            }
        }
    }

    fn need_more(&mut self, at: u64, what: &str) -> Result<usize, DecodeError> {
        if self.finished {
            Err(self.error(at, format!("{what} (truncated file?)")))
        } else {
            Ok(0)
        }
    }

    /// Moves up to [`STEP_BYTES`] of zstd output that no longer needs to stay in the window.
    fn drain_zstd(&mut self, out: &mut Vec<u8>) -> Result<usize, DecodeError> {
        let n = self.zstd.can_collect().min(STEP_BYTES);
        if n == 0 {
            return Ok(0);
        }
        let start = out.len();
        out.resize(start + n, 0);
        match self.zstd.read(&mut out[start..]) {
            Ok(got) => {
                out.truncate(start + got);
                Ok(got)
            }
            Err(e) => {
                let at = self.base_offset + self.pos as u64;
                Err(self.error(at, format!("cannot drain decoded data: {e}")))
            }
        }
    }
}

/// Any [`Decoder`] behind transparent gzip/zstd decompression. Uncompressed input passes
/// straight through. The header and diagnostics are the inner decoder's; decompression errors
/// are returned from `next_event`.
pub struct Decompressing<D> {
    inner: D,
    decompressor: Decompressor,
    out: Vec<u8>,
    inner_finished: bool,
    failed: bool,
}

impl<D: Decoder> Decompressing<D> {
    pub fn new(inner: D) -> Decompressing<D> {
        Decompressing {
            inner,
            decompressor: Decompressor::new(),
            out: Vec::with_capacity(STEP_BYTES),
            inner_finished: false,
            failed: false,
        }
    }

    /// The detected codec, once known.
    pub fn codec(&self) -> Option<Codec> {
        self.decompressor.codec()
    }

    pub fn into_inner(self) -> D {
        self.inner
    }

    /// What `take` gets from the inner decoder (`None`: it needs more input), feeding it more
    /// decompressed bytes until it gives something or the input ends.
    fn pull<T>(
        &mut self,
        mut take: impl FnMut(&mut D) -> Result<Option<T>, DecodeError>,
    ) -> Result<Option<T>, DecodeError> {
        loop {
            if let Some(x) = take(&mut self.inner)? {
                return Ok(Some(x));
            }
            if self.inner_finished || self.failed {
                return Ok(None);
            }
            self.out.clear();
            match self.decompressor.read(&mut self.out) {
                Ok(0) if self.decompressor.is_done() => {
                    self.inner.finish();
                    self.inner_finished = true;
                }
                Ok(0) => return Ok(None),
                Ok(_) => self.inner.push(&self.out),
                Err(e) => {
                    self.failed = true;
                    return Err(e);
                }
            }
        }
    }
}

impl<D: Decoder> Decoder for Decompressing<D> {
    fn push(&mut self, bytes: &[u8]) {
        if matches!(self.decompressor.stage, Stage::Plain) && self.decompressor.pending_bytes() == 0
        {
            // Uncompressed input: no copy through the decompressor.
            self.inner.push(bytes);
        } else {
            self.decompressor.push(bytes);
        }
    }

    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        self.pull(|d| d.next_event())
    }

    fn next_events(&mut self, out: &mut Vec<IoEvent>, max: usize) -> Result<usize, DecodeError> {
        if max == 0 {
            return Ok(0);
        }
        let n = self.pull(|d| Ok(Some(d.next_events(out, max)?).filter(|&n| n > 0)))?;
        Ok(n.unwrap_or(0))
    }

    fn finish(&mut self) {
        self.decompressor.finish();
    }

    fn header(&self) -> &TraceHeader {
        self.inner.header()
    }

    fn diagnostics(&self) -> &Diagnostics {
        self.inner.diagnostics()
    }
}

/// What [`sniff`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sniffed {
    pub codec: Codec,
    pub format: Option<TraceFormat>,
}

/// Guesses the codec and the trace format from the first bytes of a (possibly compressed)
/// file: decompresses up to 64 KiB of `head` and asks [`crate::format::sniff`]. A `head` cut
/// mid-stream is fine; give at least 256 KiB of the file when it is that long (a zstd block
/// can hold 128 KiB and decodes only whole).
pub fn sniff(head: &[u8]) -> Sniffed {
    const SNIFF_BYTES: usize = 64 * 1024;
    let mut d = Decompressor::new();
    d.push(head);
    d.finish();
    let mut plain = Vec::new();
    // A head cut mid-stream ends in an error after its complete part: keep what came out.
    while plain.len() < SNIFF_BYTES {
        match d.read(&mut plain) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
    plain.truncate(SNIFF_BYTES);
    Sniffed {
        codec: d.codec().unwrap_or(Codec::None),
        format: crate::format::sniff(&plain),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_chunked;
    use crate::native::{encode_all, EncodeOptions, NativeDecoder};
    use crate::{Op, TraceHeader};
    use std::io::Write;

    fn native_file() -> Vec<u8> {
        let events: Vec<IoEvent> = (0..3000u64)
            .map(|i| IoEvent {
                time_nanos: i * 1_000 + (i * 7919) % 500,
                device: 0,
                offset_bytes: (i * 2_654_435_761) % (1 << 34) / 4096 * 4096,
                len_bytes: 4096,
                op: if i % 3 == 0 { Op::Write } else { Op::Read },
                latency_nanos: Some(10_000 + i % 977),
                pid: None,
            })
            .collect();
        let options = EncodeOptions {
            chunk_events: 500,
            ..EncodeOptions::default()
        };
        encode_all(&TraceHeader::new("test"), &events, options)
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).expect("write to Vec");
        e.finish().expect("finish to Vec")
    }

    fn zstd(data: &[u8], level: ruzstd::encoding::CompressionLevel) -> Vec<u8> {
        ruzstd::encoding::compress_to_vec(data, level)
    }

    /// The error decoding `bytes` in `chunk`-byte pushes (without printing megabytes of events
    /// when there is none).
    fn decode_err(bytes: &[u8], chunk: usize) -> DecodeError {
        match decode_chunked(Decompressing::new(NativeDecoder::new()), bytes, chunk) {
            Err(e) => e,
            Ok(d) => panic!("decoded {} events without an error", d.events.len()),
        }
    }

    fn check_all_chunkings(compressed: &[u8], plain: &[u8]) {
        let expected = decode_chunked(NativeDecoder::new(), plain, plain.len()).expect("plain");
        assert_eq!(expected.events.len(), 3000);
        for chunk in [1, 7, 4096, compressed.len()] {
            let got = decode_chunked(Decompressing::new(NativeDecoder::new()), compressed, chunk)
                .expect("decompresses");
            assert_eq!(got, expected, "chunk {chunk}");
        }
    }

    #[test]
    fn multi_member_gzip_equals_plain_in_any_chunking() {
        let plain = native_file();
        let (a, b) = plain.split_at(plain.len() / 3);
        let mut compressed = gzip(a);
        compressed.extend_from_slice(&gzip(b));
        compressed.extend_from_slice(&[0, 0, 0]);
        check_all_chunkings(&compressed, &plain);
    }

    #[test]
    fn zstd_frames_equal_plain_in_any_chunking() {
        use ruzstd::encoding::CompressionLevel;
        let plain = native_file();
        let (a, b) = plain.split_at(plain.len() / 2);
        let mut compressed = zstd(a, CompressionLevel::Fastest);
        // A skippable frame between the two data frames.
        compressed.extend_from_slice(&0x184d_2a53u32.to_le_bytes());
        compressed.extend_from_slice(&3u32.to_le_bytes());
        compressed.extend_from_slice(b"abc");
        compressed.extend_from_slice(&zstd(b, CompressionLevel::Uncompressed));
        check_all_chunkings(&compressed, &plain);
    }

    fn bzip2(data: &[u8]) -> Vec<u8> {
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::new(1));
        e.write_all(data).expect("write to Vec");
        e.finish().expect("finish to Vec")
    }

    #[test]
    fn bzip2_streams_equal_plain_in_any_chunking() {
        // Regression (issue 14.3): bzip2 input was "cannot tell the format".
        let plain = native_file();
        let (a, b) = plain.split_at(plain.len() / 3);
        let mut compressed = bzip2(a);
        compressed.extend_from_slice(&bzip2(b));
        check_all_chunkings(&compressed, &plain);
        let sniffed = sniff(&compressed);
        assert_eq!(sniffed.codec, Codec::Bzip2);
        assert_eq!(sniffed.format, Some(TraceFormat::Native));
    }

    /// Drains a decompressor fed `chunk` bytes at a time: the output and how it ended.
    fn drain_chunked(data: &[u8], chunk: usize) -> (Vec<u8>, Result<(), DecodeError>) {
        let mut d = Decompressor::new();
        let mut out = Vec::new();
        let pump = |d: &mut Decompressor, out: &mut Vec<u8>| loop {
            match d.read(out) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        };
        for c in data.chunks(chunk.max(1)) {
            d.push(c);
            if let Err(e) = pump(&mut d, &mut out) {
                return (out, Err(e));
            }
        }
        d.finish();
        let r = pump(&mut d, &mut out);
        (out, r)
    }

    #[test]
    fn bzip2_damage_is_reported_at_the_same_byte_in_any_chunking() {
        // Regression (fuzz target `decompress`, 2026-12-02): libbzip2's consumed count at a
        // damaged block depends on how the input was split, so the error's offset did too
        // (byte 7 whole, byte 5 in pieces). Damage is now reported at the stream's `BZh`.
        let found_by_fuzzer: Vec<u8> = (0..)
            .map_while(|i| {
                let hex = "425a6834f0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\
                           ffffffffffffffffffffffffffffff0000004200000204000000000010000001000000\
                           40000000000000104a0f00bc471dacfdb3c5f11098fbe803fbe80310dc1ddfdd1c1d1c\
                           1c1d1d1d1d1d1c1c1c13b01d1a30f60a30cc012c1e1c1e1e1c201e1a1e23e000000000\
                           00000000000000000000000000000000001d1ddd1d1d1d28c5b45a5aec475a5a5a04";
                let h = hex.get(2 * i..2 * i + 2)?;
                u8::from_str_radix(h, 16).ok()
            })
            .collect();
        assert_eq!(found_by_fuzzer.len(), 174);
        let mut inputs = vec![found_by_fuzzer];
        // And damage anywhere in a real two-stream file, the second stream's reported at its own
        // start.
        let first = bzip2(&native_file()[..5000]);
        let mut two = first.clone();
        two.extend_from_slice(&bzip2(&native_file()));
        for at in (4..two.len()).step_by(two.len() / 23) {
            let mut bad = two.clone();
            bad[at] ^= 0x5a;
            inputs.push(bad);
        }
        for (n, input) in inputs.iter().enumerate() {
            let (whole_out, whole) = drain_chunked(input, input.len());
            for chunk in [1, 2, 5, 7, 64, 4096] {
                let (out, r) = drain_chunked(input, chunk);
                assert_eq!(r, whole, "input {n}, chunk {chunk}");
                if whole.is_ok() {
                    assert_eq!(out, whole_out, "input {n}, chunk {chunk}");
                }
            }
            if let Err(e) = &whole {
                let e = e.to_string();
                if e.contains("corrupt bzip2 data") {
                    assert!(
                        e.starts_with("bzip2: at byte 0: ")
                            || e.starts_with(&format!("bzip2: at byte {}: ", first.len())),
                        "input {n}: {e}"
                    );
                }
            }
        }
    }

    #[test]
    fn bzip2_damage_and_truncation_are_errors_with_offsets() {
        let compressed = bzip2(&native_file());
        let cut = &compressed[..compressed.len() - 10];
        let e = decode_err(cut, 7).to_string();
        assert!(
            e.starts_with("bzip2: at byte ") && e.contains("ends inside a bzip2 stream"),
            "{e}"
        );
        let mut junk = compressed.clone();
        junk.extend_from_slice(b"junk");
        let e = decode_err(&junk, 4096).to_string();
        assert_eq!(
            e,
            format!(
                "bzip2: at byte {}: expected another bzip2 stream (BZh1..BZh9) or the end of the \
                 input",
                compressed.len()
            )
        );
        let mut bad = compressed.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x55;
        // A damaged block decodes to garbage before its CRC is checked: the decompressor itself
        // must end in an error (whatever a decoder makes of the garbage).
        let mut d = Decompressor::new();
        d.push(&bad);
        d.finish();
        let mut out = Vec::new();
        let e = loop {
            match d.read(&mut out) {
                Ok(0) => panic!("damaged bzip2 data decoded without an error"),
                Ok(_) => out.clear(),
                Err(e) => break e.to_string(),
            }
        };
        assert!(e.starts_with("bzip2: at byte "), "{e}");
    }

    #[test]
    fn bzip2_bombs_stay_bounded() {
        let compressed = bzip2(&vec![b'a'; 8 << 20]);
        let mut d = Decompressor::new();
        d.push(&compressed);
        d.finish();
        let mut total = 0;
        let mut out = Vec::new();
        loop {
            out.clear();
            let n = d.read(&mut out).expect("valid bzip2");
            assert!(n <= STEP_BYTES && out.len() == n);
            if n == 0 {
                break;
            }
            total += n;
        }
        assert_eq!(total, 8 << 20);
    }

    #[test]
    fn uncompressed_input_passes_through() {
        let plain = native_file();
        check_all_chunkings(&plain, &plain);
    }

    #[test]
    fn output_steps_stay_bounded() {
        // 16 MiB of zeros compress to a few KiB; no read may return more than one step.
        let compressed = gzip(&vec![0u8; 16 << 20]);
        let mut d = Decompressor::new();
        d.push(&compressed);
        d.finish();
        let mut total = 0;
        let mut out = Vec::new();
        loop {
            out.clear();
            let n = d.read(&mut out).expect("valid gzip");
            assert!(n <= STEP_BYTES && out.len() == n);
            if n == 0 {
                break;
            }
            total += n;
        }
        assert!(d.is_done());
        assert_eq!(total, 16 << 20);
    }

    #[test]
    fn errors_name_the_codec_and_compressed_offset() {
        let plain = native_file();
        let mut bad = gzip(&plain);
        let n = bad.len();
        bad[n - 6] ^= 1; // inside the stored CRC32
        let err = decode_err(&bad, 7);
        assert_eq!(
            err,
            DecodeError::at_byte(
                "gzip",
                (n - 8) as u64,
                err.to_string().split(": ").last().unwrap_or("")
            )
        );
        assert!(err.to_string().contains("CRC32 mismatch"), "{err}");

        let truncated = &gzip(&plain)[..n / 2];
        let err = decode_err(truncated, 1);
        assert!(err.to_string().starts_with("gzip: at byte"), "{err}");
        assert!(err.to_string().contains("truncated"), "{err}");

        let mut garbage = gzip(&plain);
        garbage.extend_from_slice(b"xyz");
        let err = decode_err(&garbage, 7);
        assert!(err.to_string().contains(&format!("at byte {n}")), "{err}");

        let mut bad = zstd(&plain, ruzstd::encoding::CompressionLevel::Fastest);
        bad[4] |= 0x08; // a reserved descriptor bit
        let err = decode_err(&bad, 7);
        assert!(err.to_string().starts_with("zstd: at byte 0"), "{err}");
    }

    #[test]
    fn an_error_after_some_output_comes_after_that_output_in_any_chunking() {
        // Found by the decompress fuzz target: damaged deflate data whose decodable prefix is
        // not a native trace. Whatever the chunking, the native decoder must see (and reject)
        // that prefix before the deflate error surfaces.
        let input =
            include_bytes!("../../tests/data/native/regressions/gzip_error_after_output.gz");
        let one_shot = decode_err(input, input.len());
        for chunk in [1, 7, 64] {
            assert_eq!(decode_err(input, chunk), one_shot, "chunk {chunk}");
        }
    }

    #[test]
    fn sniffs_through_compression() {
        use ruzstd::encoding::CompressionLevel;
        let plain = native_file();
        let head = |b: &[u8]| b[..b.len().min(1000)].to_vec();
        assert_eq!(
            sniff(&head(&gzip(&plain))),
            Sniffed {
                codec: Codec::Gzip,
                format: Some(TraceFormat::Native)
            }
        );
        assert_eq!(
            sniff(&head(&zstd(&plain, CompressionLevel::Fastest))).codec,
            Codec::Zstd
        );
        assert_eq!(
            sniff(&zstd(&plain, CompressionLevel::Fastest)),
            Sniffed {
                codec: Codec::Zstd,
                format: Some(TraceFormat::Native)
            }
        );
        assert_eq!(sniff(&plain).format, Some(TraceFormat::Native));
        assert_eq!(sniff(b"\x1f").codec, Codec::None);
    }
}
