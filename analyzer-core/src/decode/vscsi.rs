//! CloudPhysics vscsi binary traces (VMware vscsiStats captures, as published with the SHARDS
//! paper and read by libCacheSim and PyMimircache), versions 1 and 2.
//!
//! Both versions are arrays of fixed-size little-endian C structs with natural alignment:
//!
//! | version 1 (32 bytes)      | version 2 (40 bytes)      |
//! |---------------------------|---------------------------|
//! | `u32 sn` @0               | `u16 cmd` @0              |
//! | `u32 len` @4              | `u16 ver` @2              |
//! | `u32 nSG` @8              | `u32 sn` @4               |
//! | `u16 cmd` @12             | `u32 len` @8              |
//! | `u16 ver` @14             | `u32 nSG` @12             |
//! | `u64 lbn` @16             | `u64 lbn` @16             |
//! | `u64 ts` @24              | `u64 ts` @24              |
//! |                           | `u64 rt` @32              |
//!
//! `ver >> 8` is the version (1 or 2); libCacheSim tells the versions apart by that field in the
//! first two records, and so does [`sniff`]. `ts` is in microseconds, `lbn` in 512-byte sectors,
//! `len` in bytes and `cmd` the SCSI opcode. Version 2's `rt` is read as the response time in
//! microseconds (0 = unknown). Reads (READ 6/10/12/16), writes (WRITE 6/10/12/16, WRITE AND
//! VERIFY, WRITE SAME), UNMAP (a discard) and SYNCHRONIZE CACHE (a flush) become events; other
//! commands (INQUIRY, TEST UNIT READY, ...) carry no data range and are counted as ignored.
//!
//! The format has no magic number: sniffing checks that the first records are plausible
//! (version field, known opcodes, sane lengths, non-decreasing timestamps) and only ever answers
//! [`Confidence::Maybe`]. There is no device name in the file; the one device is called `vscsi`.

use crate::decode::push_buffer::PushBuffer;
use crate::decode::{DecodeError, Decoder, Diagnostics};
use crate::event::{IoEvent, Op, TraceHeader};
use crate::format::Confidence;

/// Record size of version 1.
pub const V1_RECORD_BYTES: usize = 32;
/// Record size of version 2.
pub const V2_RECORD_BYTES: usize = 40;
const SECTOR_BYTES: u64 = 512;
/// Larger requests than this are not plausible for sniffing (SCSI transfers are far smaller).
const SNIFF_MAX_LEN_BYTES: u32 = 64 << 20;

/// The two record layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VscsiVersion {
    V1,
    V2,
}

impl VscsiVersion {
    fn record_bytes(self) -> usize {
        match self {
            VscsiVersion::V1 => V1_RECORD_BYTES,
            VscsiVersion::V2 => V2_RECORD_BYTES,
        }
    }

    fn number(self) -> u16 {
        match self {
            VscsiVersion::V1 => 1,
            VscsiVersion::V2 => 2,
        }
    }

    fn format_name(self) -> &'static str {
        match self {
            VscsiVersion::V1 => "vscsi1",
            VscsiVersion::V2 => "vscsi2",
        }
    }
}

/// One record's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Record {
    len: u32,
    cmd: u16,
    ver: u16,
    lbn: u64,
    ts: u64,
    rt: u64,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Reads one record of `version` from `b` (exactly one record long).
fn parse(version: VscsiVersion, b: &[u8]) -> Record {
    match version {
        VscsiVersion::V1 => Record {
            len: u32_at(b, 4),
            cmd: u16_at(b, 12),
            ver: u16_at(b, 14),
            lbn: u64_at(b, 16),
            ts: u64_at(b, 24),
            rt: 0,
        },
        VscsiVersion::V2 => Record {
            cmd: u16_at(b, 0),
            ver: u16_at(b, 2),
            len: u32_at(b, 8),
            lbn: u64_at(b, 16),
            ts: u64_at(b, 24),
            rt: u64_at(b, 32),
        },
    }
}

/// What a SCSI opcode does to the data, if it is a data command.
pub fn op_of_scsi(cmd: u16) -> Option<Op> {
    if cmd > 0xff {
        return None;
    }
    match cmd as u8 {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a | 0x2e | 0xae | 0x8e | 0x41 | 0x93 => Some(Op::Write),
        0x42 => Some(Op::Discard),
        0x35 | 0x91 => Some(Op::Flush),
        _ => None,
    }
}

/// Opcodes seen in real vscsi traces besides data commands (TEST UNIT READY, INQUIRY, MODE SENSE,
/// READ CAPACITY, REPORT LUNS, ...): plausible for sniffing, ignored when decoding.
pub(crate) fn is_known_scsi(cmd: u16) -> bool {
    op_of_scsi(cmd).is_some()
        || matches!(
            cmd,
            0x00 | 0x03 | 0x12 | 0x1a | 0x1b | 0x1e | 0x25 | 0x4d | 0x5a | 0x9e | 0xa0 | 0xa3
        )
}

/// Says whether `head` looks like a vscsi trace of `version`: at least two whole records, every
/// whole record in the first 64 with the version's number, a known opcode, a sane length and a
/// timestamp not before the previous one. Never more than [`Confidence::Maybe`].
pub fn sniff(version: VscsiVersion, head: &[u8]) -> Confidence {
    let size = version.record_bytes();
    let n = (head.len() / size).min(64);
    if n < 2 {
        return Confidence::No;
    }
    let mut last_ts = 0u64;
    for i in 0..n {
        let r = parse(version, &head[i * size..(i + 1) * size]);
        if r.ver >> 8 != version.number()
            || !is_known_scsi(r.cmd)
            || r.len > SNIFF_MAX_LEN_BYTES
            || r.ts < last_ts
        {
            return Confidence::No;
        }
        last_ts = r.ts;
    }
    // Version 1 and 2 cannot both pass (the version byte sits at different offsets), but make
    // the answer unique anyway: version 2 is tried first by libCacheSim.
    if version == VscsiVersion::V1 && sniff(VscsiVersion::V2, head) != Confidence::No {
        return Confidence::No;
    }
    Confidence::Maybe
}

/// Push decoder for vscsi traces of one version.
pub struct VscsiDecoder {
    version: VscsiVersion,
    input: PushBuffer,
    header: TraceHeader,
    diagnostics: Diagnostics,
    finished: bool,
    failed: bool,
    /// No record decoded yet: a wrong version there is fatal, later it is a bad record.
    first: bool,
}

impl VscsiDecoder {
    pub fn new(version: VscsiVersion) -> VscsiDecoder {
        let mut header = TraceHeader::new(version.format_name());
        header.device_index("vscsi");
        VscsiDecoder {
            version,
            input: PushBuffer::default(),
            header,
            diagnostics: Diagnostics::default(),
            finished: false,
            failed: false,
            first: true,
        }
    }
}

impl Decoder for VscsiDecoder {
    fn push(&mut self, bytes: &[u8]) {
        if !self.failed {
            self.input.push(bytes);
        }
    }

    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        let size = self.version.record_bytes();
        while !self.failed {
            let rest = self.input.unread();
            if rest.len() < size {
                if self.finished {
                    self.diagnostics.truncated_tail_bytes += self.input.discard() as u64;
                }
                return Ok(None);
            }
            let offset = self.input.offset();
            let r = parse(self.version, &rest[..size]);
            self.input.consume(size);
            let name = self.version.format_name();
            if r.ver >> 8 != self.version.number() {
                if self.first {
                    self.failed = true;
                    self.input.discard();
                    return Err(DecodeError::at_byte(
                        name,
                        offset,
                        format!(
                            "expected a vscsi version {} record (version field 0x{:02x}xx), found version field 0x{:04x}",
                            self.version.number(),
                            self.version.number(),
                            r.ver
                        ),
                    ));
                }
                self.diagnostics.skip(|| {
                    format!(
                        "{name}: at byte {offset}: version field 0x{:04x} is not {}",
                        r.ver,
                        self.version.number()
                    )
                });
                continue;
            }
            self.first = false;
            let Some(op) = op_of_scsi(r.cmd) else {
                self.diagnostics.ignored_records += 1;
                continue;
            };
            let (Some(offset_bytes), Some(time_nanos)) =
                (r.lbn.checked_mul(SECTOR_BYTES), r.ts.checked_mul(1000))
            else {
                self.diagnostics.skip(|| {
                    format!(
                        "{name}: at byte {offset}: lbn {} or timestamp {} out of range",
                        r.lbn, r.ts
                    )
                });
                continue;
            };
            let len_bytes = if op == Op::Flush { 0 } else { r.len };
            return Ok(Some(IoEvent {
                time_nanos,
                device: 0,
                offset_bytes,
                len_bytes,
                op,
                latency_nanos: (r.rt > 0).then(|| r.rt.saturating_mul(1000)),
                pid: None,
            }));
        }
        Ok(None)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_chunked;

    fn v2(cmd: u16, lbn: u64, len: u32, ts: u64, rt: u64) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&cmd.to_le_bytes());
        out.extend_from_slice(&0x0200u16.to_le_bytes());
        out.extend_from_slice(&7u32.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&lbn.to_le_bytes());
        out.extend_from_slice(&ts.to_le_bytes());
        out.extend_from_slice(&rt.to_le_bytes());
        out
    }

    fn v1(cmd: u16, lbn: u64, len: u32, ts: u64) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&7u32.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&cmd.to_le_bytes());
        out.extend_from_slice(&0x0100u16.to_le_bytes());
        out.extend_from_slice(&lbn.to_le_bytes());
        out.extend_from_slice(&ts.to_le_bytes());
        out
    }

    #[test]
    fn records_map_to_events_in_both_versions() {
        let a = [
            v1(0x28, 8, 4096, 10),
            v1(0x2a, 16, 512, 11),
            v1(0x00, 0, 0, 12),
        ]
        .concat();
        let b = [
            v2(0x28, 8, 4096, 10, 3),
            v2(0x2a, 16, 512, 11, 0),
            v2(0x00, 0, 0, 12, 1),
        ]
        .concat();
        let one = decode_chunked(VscsiDecoder::new(VscsiVersion::V1), &a, 7).expect("v1");
        let two = decode_chunked(VscsiDecoder::new(VscsiVersion::V2), &b, 1).expect("v2");
        let brief = |d: &crate::decode::Decoded| {
            d.events
                .iter()
                .map(|e| (e.time_nanos, e.offset_bytes, e.len_bytes, e.op))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            brief(&one),
            vec![
                (10_000, 4096, 4096, Op::Read),
                (11_000, 8192, 512, Op::Write)
            ]
        );
        assert_eq!(brief(&one), brief(&two));
        assert_eq!(two.events[0].latency_nanos, Some(3_000));
        assert_eq!(two.events[1].latency_nanos, None);
        assert_eq!(
            (
                one.diagnostics.ignored_records,
                two.diagnostics.ignored_records
            ),
            (1, 1)
        );
        assert_eq!(sniff(VscsiVersion::V1, &a), Confidence::Maybe);
        assert_eq!(sniff(VscsiVersion::V2, &a), Confidence::No);
        assert_eq!(sniff(VscsiVersion::V2, &b), Confidence::Maybe);
        assert_eq!(sniff(VscsiVersion::V1, &b), Confidence::No);
    }

    #[test]
    fn a_later_record_with_another_version_is_skipped() {
        let mut bad = v2(0x28, 1, 512, 5, 0);
        bad[3] = 0x07;
        let input = [v2(0x28, 0, 512, 1, 0), bad, v2(0x2a, 2, 512, 9, 0)].concat();
        let d = decode_chunked(VscsiDecoder::new(VscsiVersion::V2), &input, 40).expect("decodes");
        assert_eq!(d.events.len(), 2);
        assert_eq!(d.diagnostics.skipped_records, 1);
        assert!(
            d.diagnostics.reasons[0].contains("at byte 40"),
            "{:?}",
            d.diagnostics.reasons
        );
    }

    #[test]
    fn timestamps_going_backwards_are_not_plausible() {
        let input = [v1(0x28, 0, 512, 100), v1(0x28, 0, 512, 50)].concat();
        assert_eq!(sniff(VscsiVersion::V1, &input), Confidence::No);
        assert_eq!(
            sniff(VscsiVersion::V1, &input[..32]),
            Confidence::No,
            "one record is too little"
        );
    }
}
