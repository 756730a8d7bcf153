//! The record layer of the blktrace decoder: `struct blk_io_trace` framing in either byte order,
//! versions 7 and 8, with or without ftrace's context prefix, from pushed bytes.

use super::{
    FORMAT, FTRACE_PREFIX_BYTES, MAGIC, TA_CGROUP, TC_NOTIFY, TN_TIMESTAMP, V7_HEADER_BYTES,
    V8_HEADER_BYTES,
};
use crate::decode::{DecodeError, Diagnostics};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Endian {
    Little,
    Big,
}

/// How the records of one input are laid out, learnt from its first record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    endian: Endian,
    version: u8,
    prefix_bytes: usize,
}

impl Layout {
    /// Recognises a record whose magic sits at `at` in `bytes`.
    pub(super) fn detect(bytes: &[u8], at: usize) -> Option<Layout> {
        let word: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        for endian in [Endian::Little, Endian::Big] {
            let magic = match endian {
                Endian::Little => u32::from_le_bytes(word),
                Endian::Big => u32::from_be_bytes(word),
            };
            let version = (magic & 0xff) as u8;
            if magic & 0xffff_ff00 == MAGIC && (version == 7 || version == 8) {
                return Some(Layout {
                    endian,
                    version,
                    prefix_bytes: at,
                });
            }
        }
        None
    }

    pub(super) fn record_header_bytes(&self) -> usize {
        self.prefix_bytes
            + if self.version == 8 {
                V8_HEADER_BYTES
            } else {
                V7_HEADER_BYTES
            }
    }

    pub(super) fn u16_at(&self, b: &[u8], at: usize) -> u16 {
        let w = [b[at], b[at + 1]];
        match self.endian {
            Endian::Little => u16::from_le_bytes(w),
            Endian::Big => u16::from_be_bytes(w),
        }
    }

    pub(super) fn u32_at(&self, b: &[u8], at: usize) -> u32 {
        let w = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        match self.endian {
            Endian::Little => u32::from_le_bytes(w),
            Endian::Big => u32::from_be_bytes(w),
        }
    }

    pub(super) fn u64_at(&self, b: &[u8], at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        match self.endian {
            Endian::Little => u64::from_le_bytes(w),
            Endian::Big => u64::from_be_bytes(w),
        }
    }

    /// The magic word this layout expects, as it appears in the file.
    pub(super) fn magic_bytes(&self) -> [u8; 4] {
        let magic = MAGIC | u32::from(self.version);
        match self.endian {
            Endian::Little => magic.to_le_bytes(),
            Endian::Big => magic.to_be_bytes(),
        }
    }
}

/// One raw record, with the payload parts the decoder uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Record {
    pub(super) sequence: u32,
    pub(super) time: u64,
    pub(super) sector: u64,
    pub(super) bytes: u32,
    pub(super) action: u64,
    pub(super) pid: u32,
    pub(super) device: u32,
    pub(super) cpu: u32,
    /// Wall-clock seconds and nanoseconds of a `BLK_TN_TIMESTAMP` record.
    pub(super) wall: Option<(u32, u32)>,
}

impl Record {
    pub(super) fn code(&self) -> u32 {
        (self.action as u32) & 0xffff & !TA_CGROUP
    }

    pub(super) fn category(&self) -> u32 {
        ((self.action >> 16) & 0xffff) as u32
    }
}

/// Frames the records of one input from pushed bytes. Memory is bounded by one record (a header
/// plus at most 64 KiB of payload) plus the last pushed chunk.
#[derive(Debug, Default)]
pub(super) struct RecordReader {
    pub(super) buf: Vec<u8>,
    pub(super) pos: usize,
    /// Input offset of `buf[0]`.
    pub(super) base_offset: u64,
    pub(super) layout: Option<Layout>,
    pub(super) finished: bool,
    /// Skipping garbage between records, looking for the next magic.
    pub(super) resyncing: bool,
}

impl RecordReader {
    pub(super) fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 && self.pos >= self.buf.len() / 2 {
            self.base_offset += self.pos as u64;
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    pub(super) fn offset(&self) -> u64 {
        self.base_offset + self.pos as u64
    }

    /// Drops everything buffered (after a fatal error or at the end).
    pub(super) fn consume_all(&mut self) {
        self.base_offset += self.buf.len() as u64;
        self.buf.clear();
        self.pos = 0;
    }

    pub(super) fn next_record(
        &mut self,
        diag: &mut Diagnostics,
    ) -> Result<Option<Record>, DecodeError> {
        loop {
            let rest = &self.buf[self.pos..];
            let layout = match self.layout {
                Some(l) => l,
                None => {
                    if rest.len() < 4 {
                        if self.finished {
                            diag.truncated_tail_bytes += rest.len() as u64;
                            self.consume_all();
                        }
                        return Ok(None);
                    }
                    let found = Layout::detect(rest, 0)
                        .or_else(|| Layout::detect(rest, FTRACE_PREFIX_BYTES));
                    if let Some(l) = found {
                        self.layout = Some(l);
                        continue;
                    }
                    if could_be_prefixed(rest) && !self.finished {
                        return Ok(None);
                    }
                    let offset = self.offset();
                    let word: String = rest.iter().take(4).map(|b| format!("{b:02x}")).collect();
                    self.consume_all();
                    return Err(DecodeError::at_byte(
                        FORMAT,
                        offset,
                        format!(
                            "expected a blk_io_trace record starting with magic 0x65617407 or \
                             0x65617408 (either byte order), found bytes {word}"
                        ),
                    ));
                }
            };
            let header_bytes = layout.record_header_bytes();
            let p = layout.prefix_bytes;
            if self.resyncing || rest.len() >= p + 4 && rest[p..p + 4] != layout.magic_bytes() {
                // Not at a record: skip to the next magic word.
                if !self.resyncing {
                    let offset = self.offset();
                    diag.skip(|| format!("blktrace: at byte {offset}: expected the magic of a blk_io_trace record; skipping to the next one"));
                    self.resyncing = true;
                    self.pos += 1;
                }
                let rest = &self.buf[self.pos..];
                let magic = layout.magic_bytes();
                match rest.windows(4).skip(p).position(|w| w == magic) {
                    Some(at) => {
                        self.pos += at;
                        self.resyncing = false;
                        continue;
                    }
                    None => {
                        // Keep a possible partial magic (and prefix) at the end.
                        let keep = (p + 3).min(rest.len());
                        if self.finished {
                            self.consume_all();
                            self.resyncing = false;
                            return Ok(None);
                        }
                        self.pos += rest.len() - keep;
                        return Ok(None);
                    }
                }
            }
            if rest.len() < header_bytes {
                if self.finished {
                    diag.truncated_tail_bytes += rest.len() as u64;
                    self.consume_all();
                }
                return Ok(None);
            }
            let h = &rest[p..];
            let (bytes, pid, action, device, cpu, pdu_len) = if layout.version == 8 {
                (
                    layout.u32_at(h, 24),
                    layout.u32_at(h, 28),
                    layout.u64_at(h, 32),
                    layout.u32_at(h, 40),
                    layout.u32_at(h, 44),
                    usize::from(layout.u16_at(h, 50)),
                )
            } else {
                (
                    layout.u32_at(h, 24),
                    layout.u32_at(h, 32),
                    u64::from(layout.u32_at(h, 28)),
                    layout.u32_at(h, 36),
                    layout.u32_at(h, 40),
                    usize::from(layout.u16_at(h, 46)),
                )
            };
            let total = header_bytes + pdu_len;
            if rest.len() < total {
                if self.finished {
                    diag.truncated_tail_bytes += rest.len() as u64;
                    self.consume_all();
                }
                return Ok(None);
            }
            let mut record = Record {
                sequence: layout.u32_at(h, 4),
                time: layout.u64_at(h, 8),
                sector: layout.u64_at(h, 16),
                bytes,
                action,
                pid,
                device,
                cpu,
                wall: None,
            };
            if record.category() & TC_NOTIFY != 0 && record.action as u32 & 0xff == TN_TIMESTAMP {
                let mut pdu = &rest[header_bytes..total];
                if record.action as u32 & TA_CGROUP != 0 && pdu.len() >= 8 {
                    pdu = &pdu[8..];
                }
                if pdu.len() == 8 {
                    record.wall = Some((layout.u32_at(pdu, 0), layout.u32_at(pdu, 4)));
                }
            }
            self.pos += total;
            return Ok(Some(record));
        }
    }
}

/// With fewer than 20 bytes that do not start with a magic, the input may still be a prefixed
/// ftrace record whose magic has not arrived yet.
pub(super) fn could_be_prefixed(rest: &[u8]) -> bool {
    let p = FTRACE_PREFIX_BYTES;
    if rest.len() <= p {
        return true;
    }
    let partial = &rest[p..];
    [Endian::Little, Endian::Big].iter().any(|&endian| {
        [7u8, 8].iter().any(|&version| {
            let l = Layout {
                endian,
                version,
                prefix_bytes: p,
            };
            l.magic_bytes().starts_with(partial)
        })
    })
}
