//! libCacheSim's `oracleGeneral` binary traces: packed 24-byte little-endian records
//! `{ u32 clock_time; u64 obj_id; u32 obj_size; i64 next_access_vtime; }`, the format of the
//! converted block traces (CloudPhysics, MSR, Alibaba, Tencent CBS) in the cacheMon datasets.
//!
//! # Mapping objects to block requests
//!
//! An oracleGeneral record names an object, not a byte range. For block traces libCacheSim's own
//! converter (`traceConv` over its vscsi and numeric-id CSV readers) writes the request's start
//! address as `obj_id` and its length in bytes as `obj_size`; its vscsi reader sets
//! `obj_id = lbn`, the start in 512-byte sectors. So a record becomes a read of `obj_size` bytes
//! at `obj_id × 512` bytes. This keeps the spatial layout of traces converted from sector
//! addresses exactly, and for traces whose ids are hashes it still gives every id its own start
//! (the multiplication wraps modulo 2^64, which keeps ids below 2^55 distinct). It does not
//! invent a layout from `obj_id × obj_size`: sizes vary between requests to the same address,
//! and that product would make different requests overlap.
//!
//! `clock_time` is in seconds; `time_nanos` is `clock_time × 10^9`. The format has no operation
//! field, so every request is a read. `next_access_vtime` (future knowledge for Belady-style
//! policies) is not part of the trace model and is ignored. Zero-size records are kept as
//! zero-length reads, as libCacheSim does by default.
//!
//! There is no magic number: sniffing checks the first records for plausibility (see [`sniff`])
//! and only ever answers [`Confidence::Maybe`].

use crate::decode::push_buffer::PushBuffer;
use crate::decode::{DecodeError, Decoder, Diagnostics};
use crate::event::{IoEvent, Op, TraceHeader};
use crate::format::Confidence;

const FORMAT: &str = "oracle-general";
/// Size of one record.
pub const RECORD_BYTES: usize = 24;
const SECTOR_BYTES: u64 = 512;
/// `next_access_vtime` values beyond this are not plausible request counts (text, not records).
const SNIFF_MAX_VTIME: i64 = 1 << 48;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Record {
    clock_time: u32,
    obj_id: u64,
    obj_size: u32,
    next_access_vtime: i64,
}

fn parse(b: &[u8]) -> Record {
    let mut id = [0u8; 8];
    id.copy_from_slice(&b[4..12]);
    let mut next = [0u8; 8];
    next.copy_from_slice(&b[16..24]);
    Record {
        clock_time: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        obj_id: u64::from_le_bytes(id),
        obj_size: u32::from_le_bytes([b[12], b[13], b[14], b[15]]),
        next_access_vtime: i64::from_le_bytes(next),
    }
}

/// The block request a record stands for (see the module docs).
fn event_of(r: &Record) -> IoEvent {
    IoEvent {
        time_nanos: u64::from(r.clock_time) * 1_000_000_000,
        device: 0,
        offset_bytes: r.obj_id.wrapping_mul(SECTOR_BYTES),
        len_bytes: r.obj_size,
        op: Op::Read,
        latency_nanos: None,
        pid: None,
    }
}

/// Says whether `head` looks like oracleGeneral records: at least two whole records; within the
/// first 256, clock times never go backwards, every `next_access_vtime` is -1 (or `i64::MAX`) or a
/// plausible request number, and every such pointer that lands inside the window (read as an
/// absolute request number, libCacheSim's convention, counting from 0 or 1) names a record with
/// the same `obj_id`. Text and other binary formats fail these checks within a few records.
pub fn sniff(head: &[u8]) -> Confidence {
    let n = (head.len() / RECORD_BYTES).min(256);
    if n < 2 {
        return Confidence::No;
    }
    let records: Vec<Record> = (0..n)
        .map(|i| parse(&head[i * RECORD_BYTES..(i + 1) * RECORD_BYTES]))
        .collect();
    let mut last_time = 0;
    for r in &records {
        let vtime_ok = r.next_access_vtime == -1
            || r.next_access_vtime == i64::MAX
            || (0..SNIFF_MAX_VTIME).contains(&r.next_access_vtime);
        if r.clock_time < last_time || !vtime_ok {
            return Confidence::No;
        }
        last_time = r.clock_time;
    }
    // Future pointers must point forward, and at the same object when they land in the window.
    let consistent = |base: i64| {
        records.iter().enumerate().all(|(i, r)| {
            let v = r.next_access_vtime;
            if v == -1 || v == i64::MAX {
                return true;
            }
            let target = v - base;
            if target <= i as i64 {
                return false;
            }
            match usize::try_from(target).ok().and_then(|t| records.get(t)) {
                Some(t) => t.obj_id == r.obj_id,
                None => true,
            }
        })
    };
    if consistent(0) || consistent(1) {
        Confidence::Maybe
    } else {
        Confidence::No
    }
}

/// Push decoder for oracleGeneral traces.
pub struct OracleGeneralDecoder {
    input: PushBuffer,
    header: TraceHeader,
    diagnostics: Diagnostics,
    finished: bool,
    failed: bool,
    /// No record decoded yet: an impossible first record means the input is not this format.
    first: bool,
}

impl OracleGeneralDecoder {
    pub fn new() -> OracleGeneralDecoder {
        let mut header = TraceHeader::new(FORMAT);
        header.device_index("oracle-general");
        OracleGeneralDecoder {
            input: PushBuffer::default(),
            header,
            diagnostics: Diagnostics::default(),
            finished: false,
            failed: false,
            first: true,
        }
    }
}

impl Default for OracleGeneralDecoder {
    fn default() -> Self {
        OracleGeneralDecoder::new()
    }
}

impl Decoder for OracleGeneralDecoder {
    fn push(&mut self, bytes: &[u8]) {
        if !self.failed {
            self.input.push(bytes);
        }
    }

    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        if self.failed {
            return Ok(None);
        }
        loop {
            let rest = self.input.unread();
            if rest.len() < RECORD_BYTES {
                if self.finished {
                    self.diagnostics.truncated_tail_bytes += self.input.discard() as u64;
                }
                return Ok(None);
            }
            let r = parse(&rest[..RECORD_BYTES]);
            let offset = self.input.offset();
            self.input.consume(RECORD_BYTES);
            let first = std::mem::replace(&mut self.first, false);
            if r.next_access_vtime < -1 {
                let v = r.next_access_vtime;
                if first {
                    self.failed = true;
                    self.input.discard();
                    return Err(DecodeError::at_byte(
                        FORMAT,
                        offset,
                        format!("expected an oracleGeneral record whose next_access_vtime is -1 or a request number, found {v}"),
                    ));
                }
                self.diagnostics.skip(|| {
                    format!("{FORMAT}: at byte {offset}: next_access_vtime {v} is negative")
                });
                continue;
            }
            return Ok(Some(event_of(&r)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_chunked;

    fn rec(t: u32, id: u64, size: u32, next: i64) -> Vec<u8> {
        [
            &t.to_le_bytes()[..],
            &id.to_le_bytes(),
            &size.to_le_bytes(),
            &next.to_le_bytes(),
        ]
        .concat()
    }

    #[test]
    fn records_become_reads_at_sector_addresses() {
        let input = [
            rec(3, 100, 4096, 2),
            rec(4, 7, 512, -1),
            rec(9, 100, 8192, -1),
        ]
        .concat();
        let d = decode_chunked(OracleGeneralDecoder::new(), &input, 7).expect("decodes");
        let brief: Vec<_> = d
            .events
            .iter()
            .map(|e| (e.time_nanos, e.offset_bytes, e.len_bytes, e.op))
            .collect();
        assert_eq!(
            brief,
            vec![
                (3_000_000_000, 51_200, 4096, Op::Read),
                (4_000_000_000, 3584, 512, Op::Read),
                (9_000_000_000, 51_200, 8192, Op::Read)
            ]
        );
        assert_eq!(sniff(&input), Confidence::Maybe);
    }

    #[test]
    fn sniffing_checks_future_pointers() {
        // Record 0 claims its next access is record 1, which is another object.
        let input = [rec(0, 1, 4096, 1), rec(0, 2, 4096, -1), rec(1, 3, 4096, -1)].concat();
        assert_eq!(sniff(&input), Confidence::No);
        assert_eq!(
            sniff(b"time,id,size\n1,2,3\n4,5,6\n7,8,9\n10,11,12\n13,14,15\n"),
            Confidence::No
        );
    }

    #[test]
    fn a_negative_pointer_later_is_a_skipped_record() {
        let input = [
            rec(0, 1, 4096, -1),
            rec(0, 2, 4096, -7),
            rec(1, 3, 4096, -1),
        ]
        .concat();
        let d = decode_chunked(OracleGeneralDecoder::new(), &input, 5).expect("decodes");
        assert_eq!(d.events.len(), 2);
        assert_eq!(d.diagnostics.skipped_records, 1);
        assert!(d.diagnostics.reasons[0].contains("at byte 24"));
    }
}
