//! blktrace binary traces: `struct blk_io_trace` records as written by blktrace's per-CPU files
//! or by the kernel's ftrace `blk` tracer in binary mode, in either byte order.
//!
//! # Records
//!
//! Each record is a fixed header followed by `pdu_len` bytes of payload. Version 7 (every kernel
//! since 2.6.x) has a 48-byte header with a 32-bit `action`; version 8 (`struct blk_io_trace2`,
//! blktrace 1.4 and kernels with `BLKTRACESETUP2`) has a 56-byte header with a 64-bit `action`
//! placed after `pid`. The byte order is whichever makes the first record's magic read
//! `0x656174vv`. Traces read from ftrace's `trace_pipe` with the `context-info` option left on
//! carry 16 extra bytes (pid, cpu, timestamp) before every record; they are detected from the
//! first record and skipped.
//!
//! The low 16 bits of `action` are the action (`__BLK_TA_*`, with bit 8 flagging a cgroup id at
//! the start of the payload); bits 16..32 are the categories (`BLK_TC_*`): read, write, flush,
//! discard, sync, FUA, notify, passthrough.
//!
//! # Requests, completions and ordering
//!
//! The request event is `D` (issue, default) or `Q` (queue, `DecodeOptions::action`). A `C`
//! (complete) event is matched to the oldest pending request with the same device, start sector
//! and direction (first in, first out), which gives `latency_nanos`. In queue mode the match is
//! by **end** sector instead: a bio's `C` prints what is left of it (the remainder after a
//! stacked device such as dm-cache split it, nothing at its end once a driver consumed it), and
//! a request's `C` ends where its last bio ends. So the last bio of a merged request gets the
//! request's completion: on a back merge (`M`) the bio that ended where the merged one starts
//! is released without a latency, on a front merge (`F`) the merging bio itself. A requeued
//! request (`R`) is dropped in issue mode: its later re-issue is the request the device served.
//!
//! Events come out in the time order of their request event. A request is held until its
//! completion arrives, until the merged input has moved [`HORIZON_NANOS`] past it (30 s, the
//! block layer's default command timeout, after which the kernel would have timed it out), or
//! until more than [`MAX_PENDING`] requests are held, whichever comes first; it is then emitted
//! without a latency. At the end of the input everything still held is emitted. So memory is
//! bounded by [`MAX_PENDING`] held requests whatever the input, and requests evicted early
//! because of the cap are counted in the diagnostics.
//!
//! Completions are often recorded on another CPU than their issue, so per-CPU files are read
//! together by [`BlktraceMulti`]: a k-way merge of raw records by timestamp across the inputs,
//! then a window of [`REORDER_RECORDS`] records that restores time order within one input (for
//! `blktrace -o -` streams, which interleave whole per-CPU buffers), then matching. Times are nanoseconds since the first record of the merged
//! stream (as blkparse prints them); a `BLK_TN_TIMESTAMP` notify record, when present, gives
//! the wall-clock start time. Sequence-number gaps within one CPU's records (blktrace's relay
//! mode numbers every record; the ftrace tracer writes 0) are counted as dropped events.
//!
//! # Where things are
//!
//! Three layers, one file each: `records` frames raw records from pushed bytes (byte order,
//! version, ftrace prefix, resynchronisation after garbage); `window` is the k-way merge of the
//! inputs and the reorder window ([`BlktraceMulti`]); `requests` turns records into request
//! events and pairs completions through the engine's one matcher (`decode::pending`, shared with
//! the text decoders and the recorder). This file holds the constants, sniffing, the counters
//! and the single-input [`BlktraceDecoder`].

mod records;
mod requests;
mod window;

use crate::decode::{DecodeError, DecodeOptions, Decoder, Diagnostics, MultiDecoder};
use crate::event::{IoEvent, TraceHeader};
use crate::format::Confidence;
use records::Layout;
pub use window::BlktraceMulti;

const FORMAT: &str = "blktrace";

/// `BLK_IO_TRACE_MAGIC`: the upper 24 bits of every record's first word.
pub const MAGIC: u32 = 0x6561_7400;
/// `struct blk_io_trace` header size (version 7).
pub const V7_HEADER_BYTES: usize = 48;
/// `struct blk_io_trace2` header size (version 8, padded to 8-byte alignment).
pub const V8_HEADER_BYTES: usize = 56;
/// ftrace's per-record context prefix (pid u32, cpu u32, timestamp u64) when `context-info` is on.
pub const FTRACE_PREFIX_BYTES: usize = 16;

/// A held request is emitted without a latency once the input has moved this far past it.
pub const HORIZON_NANOS: u64 = 30_000_000_000;
/// At most this many requests are held waiting for their completion.
pub const MAX_PENDING: usize = 1 << 18;

/// Records are matched after passing through a window of this many, which puts records that
/// arrive out of time order back in order: `blktrace -o -` writes each CPU's buffer as it fills,
/// so one stream interleaves the CPUs' records out of order. Costs about 4 MiB when full.
pub const REORDER_RECORDS: usize = 1 << 16;

/// Bytes per sector in `blk_io_trace::sector`.
const SECTOR_BYTES: u64 = 512;

// Actions (`enum blktrace_act`, the low bits of `action`).
const TA_QUEUE: u32 = 1;
const TA_BACKMERGE: u32 = 2;
const TA_FRONTMERGE: u32 = 3;
const TA_REQUEUE: u32 = 6;
const TA_ISSUE: u32 = 7;
const TA_COMPLETE: u32 = 8;
/// `__BLK_TA_CGROUP` / `__BLK_TN_CGROUP`: the payload starts with an 8-byte cgroup id.
const TA_CGROUP: u32 = 1 << 8;
// Notify actions (`enum blktrace_notify`), valid when the category has `TC_NOTIFY`.
const TN_TIMESTAMP: u32 = 1;

// Categories (`enum blktrace_cat`, `action >> 16`).
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_PC: u32 = 1 << 9;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;

/// Says whether `head` starts with a blk_io_trace record (either byte order, with or without
/// ftrace's context prefix).
pub fn sniff(head: &[u8]) -> Confidence {
    if Layout::detect(head, 0).is_some() || Layout::detect(head, FTRACE_PREFIX_BYTES).is_some() {
        Confidence::Yes
    } else {
        Confidence::No
    }
}

/// Counters about request matching, beyond [`Diagnostics`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlktraceStats {
    /// Request events (D or Q) read.
    pub requests: u64,
    /// Completions matched to a held request.
    pub completions_matched: u64,
    /// Completions with no held request (issued before the trace started, or already emitted).
    pub completions_unmatched: u64,
    /// Requests emitted without a latency because no completion came before the horizon or the
    /// end of the input.
    pub requests_without_completion: u64,
    /// Requests emitted early, without a latency, because more than [`MAX_PENDING`] were held.
    pub evicted_pending: u64,
    /// Requests dropped because they were requeued (issue mode); their re-issue counts instead.
    pub requeued: u64,
    /// Queued bios released without a latency because they were merged into another request.
    pub merged: u64,
    /// Records that arrived more than [`REORDER_RECORDS`] positions late and were matched out of
    /// time order.
    pub out_of_order: u64,
}

/// Decodes one blktrace input (a single per-CPU file, or records of all CPUs in one stream).
pub struct BlktraceDecoder {
    multi: BlktraceMulti,
}

impl BlktraceDecoder {
    pub fn new(options: &DecodeOptions) -> BlktraceDecoder {
        BlktraceDecoder {
            multi: BlktraceMulti::new(1, options),
        }
    }

    /// Matching counters (complete once the stream has ended).
    pub fn stats(&self) -> BlktraceStats {
        self.multi.stats()
    }
}

impl Decoder for BlktraceDecoder {
    fn push(&mut self, bytes: &[u8]) {
        self.multi.push(0, bytes);
    }

    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        self.multi.next()
    }

    fn finish(&mut self) {
        self.multi.finish_input(0);
    }

    fn header(&self) -> &TraceHeader {
        self.multi.header()
    }

    fn diagnostics(&self) -> &Diagnostics {
        self.multi.diagnostics()
    }
}

#[cfg(test)]
mod tests {
    use super::records::Endian;
    use super::*;
    use crate::decode::decode_chunked;
    use crate::decode::Action;
    use crate::event::Op;

    const DEV: u32 = (8 << 20) | 16;
    const W: u32 = TC_WRITE << 16;
    const R: u32 = 1 << 16;

    /// Builds one version-7 record in `endian` with `pdu` as payload.
    fn rec(
        endian: Endian,
        time: u64,
        sector: u64,
        bytes: u32,
        action: u32,
        cpu: u32,
        pdu: &[u8],
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let put32 = |out: &mut Vec<u8>, v: u32| match endian {
            Endian::Little => out.extend_from_slice(&v.to_le_bytes()),
            Endian::Big => out.extend_from_slice(&v.to_be_bytes()),
        };
        put32(&mut out, MAGIC | 7);
        put32(&mut out, 0);
        let put64 = |out: &mut Vec<u8>, v: u64| match endian {
            Endian::Little => out.extend_from_slice(&v.to_le_bytes()),
            Endian::Big => out.extend_from_slice(&v.to_be_bytes()),
        };
        put64(&mut out, time);
        put64(&mut out, sector);
        put32(&mut out, bytes);
        put32(&mut out, action);
        put32(&mut out, 4242);
        put32(&mut out, DEV);
        put32(&mut out, cpu);
        let put16 = |out: &mut Vec<u8>, v: u16| match endian {
            Endian::Little => out.extend_from_slice(&v.to_le_bytes()),
            Endian::Big => out.extend_from_slice(&v.to_be_bytes()),
        };
        put16(&mut out, 0);
        put16(&mut out, pdu.len() as u16);
        out.extend_from_slice(pdu);
        out
    }

    fn le(time: u64, sector: u64, bytes: u32, action: u32) -> Vec<u8> {
        rec(Endian::Little, time, sector, bytes, action, 0, &[])
    }

    /// Enough plug records at `time` to push everything before them through the reorder window.
    fn plugs(time: u64) -> Vec<u8> {
        let plug = le(time, 0, 0, 9 | (TC_QUEUE_FOR_TESTS << 16));
        plug.repeat(REORDER_RECORDS)
    }

    fn issue_opts() -> DecodeOptions {
        DecodeOptions::default()
    }

    fn queue_opts() -> DecodeOptions {
        DecodeOptions {
            action: Some(Action::Queue),
            ..DecodeOptions::default()
        }
    }

    fn run(input: &[u8], opts: &DecodeOptions) -> crate::decode::Decoded {
        let one =
            decode_chunked(BlktraceDecoder::new(opts), input, input.len().max(1)).expect("decodes");
        for chunk in [1, 7] {
            let c = decode_chunked(BlktraceDecoder::new(opts), input, chunk).expect("decodes");
            assert_eq!(c, one, "chunk {chunk}");
        }
        one
    }

    fn summary(events: &[IoEvent]) -> Vec<(u64, u64, u32, Op, Option<u64>)> {
        events
            .iter()
            .map(|e| {
                (
                    e.time_nanos,
                    e.offset_bytes,
                    e.len_bytes,
                    e.op,
                    e.latency_nanos,
                )
            })
            .collect()
    }

    #[test]
    fn issue_events_get_latency_from_completions_in_fifo_order() {
        let mut input = Vec::new();
        input.extend(le(100, 8, 4096, TA_QUEUE | R | (TC_QUEUE_FOR_TESTS << 16)));
        input.extend(le(110, 8, 4096, TA_ISSUE | R));
        input.extend(le(120, 8, 4096, TA_ISSUE | R)); // same sector again, in flight twice
        input.extend(le(130, 64, 8192, TA_ISSUE | W));
        input.extend(le(150, 8, 4096, TA_COMPLETE | R));
        input.extend(le(160, 64, 8192, TA_COMPLETE | W));
        input.extend(le(200, 8, 4096, TA_COMPLETE | R));
        let d = run(&input, &issue_opts());
        assert_eq!(
            summary(&d.events),
            vec![
                (10, 4096, 4096, Op::Read, Some(40)),
                (20, 4096, 4096, Op::Read, Some(80)),
                (30, 32768, 8192, Op::Write, Some(30)),
            ]
        );
        assert_eq!(d.header.devices[0].name, "8,16");
        assert_eq!(d.header.devices[0].dev_t(), Some((8, 16)));
        assert_eq!(d.diagnostics.ignored_records, 4);
        assert_eq!(d.events[0].pid, Some(4242));
    }

    const TC_QUEUE_FOR_TESTS: u32 = 1 << 4;

    #[test]
    fn queue_mode_uses_queue_events_and_releases_merged_bios() {
        let q = TC_QUEUE_FOR_TESTS << 16;
        let mut input = Vec::new();
        input.extend(le(0, 0, 4096, TA_QUEUE | W | q));
        input.extend(le(5, 8, 4096, TA_QUEUE | W | q));
        input.extend(le(6, 8, 4096, TA_BACKMERGE | W | q)); // bio at 8 joins the request at 0
        input.extend(le(7, 100, 4096, TA_QUEUE | W | q));
        input.extend(le(8, 92, 4096, TA_QUEUE | W | q));
        input.extend(le(9, 92, 4096, TA_FRONTMERGE | W | q)); // request now starts at 92
        input.extend(le(20, 0, 4096, TA_ISSUE | W));
        input.extend(le(50, 0, 8192, TA_COMPLETE | W));
        input.extend(le(60, 92, 8192, TA_COMPLETE | W));
        let d = run(&input, &queue_opts());
        assert_eq!(
            summary(&d.events),
            vec![
                (0, 0, 4096, Op::Write, None),
                (5, 4096, 4096, Op::Write, Some(45)),
                (7, 51200, 4096, Op::Write, Some(53)),
                (8, 47104, 4096, Op::Write, None),
            ]
        );
    }

    /// A bio-based device (dm-cache, 32 KiB blocks): a 64 KiB bio split at a block completes
    /// its remainder; a later bio at its start sector keeps its own completion.
    #[test]
    fn queue_mode_matches_a_split_bio_by_its_end() {
        let mut input = Vec::new();
        input.extend(le(0, 0, 65536, TA_QUEUE | R));
        input.extend(le(200, 64, 32768, TA_COMPLETE | R));
        input.extend(le(1000, 0, 4096, TA_QUEUE | R));
        input.extend(le(1050, 0, 4096, TA_COMPLETE | R));
        let d = run(&input, &queue_opts());
        let latencies: Vec<_> = d.events.iter().map(|e| e.latency_nanos).collect();
        assert_eq!(latencies, [Some(200), Some(50)]);
    }

    /// A bio-based device's trace (`Q` and `C` only) read with `D` names `--action Q`.
    #[test]
    fn a_trace_of_queues_only_read_as_issues_names_the_action() {
        let mut input = Vec::new();
        input.extend(le(0, 0, 4096, TA_QUEUE | R));
        input.extend(le(50, 0, 4096, TA_COMPLETE | R));
        let e = decode_chunked(BlktraceDecoder::new(&issue_opts()), &input, 13)
            .expect_err("no D records")
            .to_string();
        assert!(e.contains("no D record") && e.contains("--action Q"), "{e}");
        assert_eq!(run(&input, &queue_opts()).events.len(), 1);
    }

    #[test]
    fn requeued_issue_is_replaced_by_its_reissue() {
        let mut input = Vec::new();
        input.extend(le(0, 16, 4096, TA_ISSUE | R));
        input.extend(le(3, 16, 4096, TA_REQUEUE | R));
        input.extend(le(9, 16, 4096, TA_ISSUE | R));
        input.extend(le(19, 16, 4096, TA_COMPLETE | R));
        let mut dec = BlktraceDecoder::new(&issue_opts());
        dec.push(&input);
        dec.finish();
        let mut events = Vec::new();
        while let Some(e) = dec.next_event().expect("decodes") {
            events.push(e);
        }
        assert_eq!(summary(&events), vec![(9, 8192, 4096, Op::Read, Some(10))]);
        assert_eq!(dec.stats().requeued, 1);
    }

    #[test]
    fn flushes_discards_and_zero_length_requests() {
        let flush = TC_FLUSH << 16;
        let discard = (TC_DISCARD | TC_WRITE) << 16;
        let mut input = Vec::new();
        input.extend(le(0, 0, 0, TA_ISSUE | R | flush)); // REQ_OP_FLUSH: no data
        input.extend(le(1, 800, 65536, TA_ISSUE | W | flush)); // preflush write carries data
        input.extend(le(2, 2048, 1 << 20, TA_ISSUE | discard));
        input.extend(le(3, 4096, 0, TA_ISSUE | W)); // zero-length write
        let d = run(&input, &issue_opts());
        let ops: Vec<(Op, u32)> = d.events.iter().map(|e| (e.op, e.len_bytes)).collect();
        assert_eq!(
            ops,
            vec![
                (Op::Flush, 0),
                (Op::Write, 65536),
                (Op::Discard, 1 << 20),
                (Op::Write, 0)
            ]
        );
        assert!(d.events.iter().all(|e| e.latency_nanos.is_none()));
    }

    #[test]
    fn big_endian_equals_little_endian() {
        let mut little = Vec::new();
        let mut big = Vec::new();
        for (t, s, b, a) in [
            (5, 8, 4096, TA_ISSUE | R),
            (9, 8, 4096, TA_COMPLETE | R),
            (12, 24, 512, TA_ISSUE | W),
        ] {
            little.extend(rec(Endian::Little, t, s, b, a, 1, &[]));
            big.extend(rec(Endian::Big, t, s, b, a, 1, &[]));
        }
        assert_eq!(run(&little, &issue_opts()), run(&big, &issue_opts()));
        assert_eq!(sniff(&big), Confidence::Yes);
    }

    #[test]
    fn per_cpu_inputs_are_merged_before_matching() {
        // The issue is on cpu 0, its completion on cpu 1 before cpu 0's next record.
        let cpu0 = [
            le(10, 8, 4096, TA_ISSUE | R),
            le(40, 16, 4096, TA_ISSUE | R),
        ]
        .concat();
        let cpu1 = [
            le(20, 8, 4096, TA_COMPLETE | R),
            le(45, 16, 4096, TA_COMPLETE | R),
        ]
        .concat();
        let mut m = BlktraceMulti::new(2, &issue_opts());
        let mut events = Vec::new();
        let inputs = [cpu0, cpu1];
        let mut fed = [0usize; 2];
        loop {
            while let Some(e) = m.next_event().expect("decodes") {
                events.push(e);
            }
            let Some(i) = m.wants() else { break };
            if fed[i] == inputs[i].len() {
                m.finish_input(i);
            } else {
                let end = (fed[i] + 5).min(inputs[i].len());
                m.push(i, &inputs[i][fed[i]..end]);
                fed[i] = end;
            }
        }
        assert_eq!(
            summary(&events),
            vec![
                (0, 4096, 4096, Op::Read, Some(10)),
                (30, 8192, 4096, Op::Read, Some(5))
            ]
        );
        assert_eq!(m.stats().completions_matched, 2);
    }

    #[test]
    fn one_stream_with_cpus_out_of_order_is_put_back_in_order() {
        // `blktrace -o -` writes each CPU's buffer when it fills: here CPU 1's completion comes
        // in the file before CPU 0's issue.
        let mut input = Vec::new();
        input.extend(rec(Endian::Little, 50, 8, 4096, TA_COMPLETE | R, 1, &[]));
        input.extend(rec(Endian::Little, 10, 8, 4096, TA_ISSUE | R, 0, &[]));
        input.extend(rec(Endian::Little, 20, 16, 4096, TA_ISSUE | R, 0, &[]));
        input.extend(rec(Endian::Little, 60, 16, 4096, TA_COMPLETE | R, 1, &[]));
        let d = run(&input, &issue_opts());
        assert_eq!(
            summary(&d.events),
            vec![
                (0, 4096, 4096, Op::Read, Some(40)),
                (10, 8192, 4096, Op::Read, Some(40))
            ]
        );
    }

    #[test]
    fn a_stream_mixing_cpus_keeps_its_reorder_window_past_the_first_records() {
        // 75 blocks of 1000 records per CPU, each CPU 1 block written after the CPU 0 block it
        // interleaves with in time: far more records than the window, all within its reach.
        let mut input = Vec::new();
        for block in 0..75u64 {
            for cpu in 0..2u64 {
                for i in 0..1000u64 {
                    let time = block * 2000 + i * 2 + cpu;
                    input.extend(rec(
                        Endian::Little,
                        time,
                        time * 8,
                        512,
                        TA_ISSUE | R,
                        cpu as u32,
                        &[],
                    ));
                }
            }
        }
        let mut dec = BlktraceDecoder::new(&issue_opts());
        dec.push(&input);
        dec.finish();
        let mut times = Vec::new();
        while let Some(e) = dec.next_event().expect("decodes") {
            times.push(e.time_nanos);
        }
        assert_eq!(times.len(), 150_000);
        assert!(
            times.windows(2).all(|w| w[0] < w[1]),
            "events in time order"
        );
        assert_eq!(dec.stats().out_of_order, 0);
    }

    #[test]
    fn requests_without_completion_leave_after_the_horizon_in_order() {
        let mut input = Vec::new();
        input.extend(le(0, 8, 4096, TA_ISSUE | R)); // never completes
        input.extend(le(10, 16, 4096, TA_ISSUE | R));
        input.extend(le(20, 16, 4096, TA_COMPLETE | R));
        input.extend(le(HORIZON_NANOS + 5, 24, 4096, TA_ISSUE | R));
        input.extend(plugs(HORIZON_NANOS + 6));
        let mut dec = BlktraceDecoder::new(&issue_opts());
        dec.push(&input);
        // Before the end of input, the orphan is released by the horizon and the rest follows.
        let first = dec
            .next_event()
            .expect("decodes")
            .expect("orphan released by the horizon");
        assert_eq!((first.offset_bytes, first.latency_nanos), (4096, None));
        let second = dec
            .next_event()
            .expect("decodes")
            .expect("completed request");
        assert_eq!(
            (second.offset_bytes, second.latency_nanos),
            (8192, Some(10))
        );
        assert_eq!(
            dec.next_event().expect("decodes"),
            None,
            "the last request may still complete"
        );
        dec.finish();
        let last = dec
            .next_event()
            .expect("decodes")
            .expect("released at the end");
        assert_eq!((last.offset_bytes, last.latency_nanos), (12288, None));
        assert_eq!(dec.stats().requests_without_completion, 2);
    }

    #[test]
    fn pending_requests_are_capped() {
        let n = MAX_PENDING + 10;
        let mut input = Vec::with_capacity(n * V7_HEADER_BYTES);
        for i in 0..n as u64 {
            input.extend(le(i, i * 8, 4096, TA_ISSUE | R));
        }
        input.extend(plugs(n as u64));
        let mut dec = BlktraceDecoder::new(&issue_opts());
        dec.push(&input);
        let mut early = 0;
        while dec.next_event().expect("decodes").is_some() {
            early += 1;
        }
        assert_eq!(
            early, 10,
            "only the requests beyond the cap leave before the end"
        );
        dec.finish();
        let mut rest = 0;
        while dec.next_event().expect("decodes").is_some() {
            rest += 1;
        }
        assert_eq!(early + rest, n);
        assert_eq!(dec.stats().evicted_pending, 10);
        assert!(dec
            .diagnostics()
            .reasons
            .iter()
            .any(|r| r.contains("without a latency")));
    }

    #[test]
    fn timestamp_notify_gives_the_wall_clock_start() {
        let notify = (TC_NOTIFY << 16) | TN_TIMESTAMP;
        let mut pdu = Vec::new();
        pdu.extend_from_slice(&1_700_000_000u32.to_le_bytes());
        pdu.extend_from_slice(&500u32.to_le_bytes());
        let process = [b"fio\0".as_slice(), &[0u8; 12]].concat();
        let mut input = Vec::new();
        input.extend(le(1000, 0, 0, TA_ISSUE | R));
        input.extend(rec(Endian::Little, 3000, 0, 0, notify, 0, &pdu));
        input.extend(rec(
            Endian::Little,
            3001,
            0,
            0,
            TC_NOTIFY << 16,
            0,
            &process,
        ));
        let d = run(&input, &issue_opts());
        assert_eq!(
            d.header.start_unix_nanos,
            Some(1_700_000_000_000_000_500 - 2000)
        );
        assert_eq!(d.events.len(), 1);
        assert_eq!(d.diagnostics.ignored_records, 2);
    }

    #[test]
    fn sequence_gaps_count_as_dropped_events() {
        let mut input = Vec::new();
        for (seq, t) in [(1u32, 0u64), (2, 1), (5, 2), (6, 3)] {
            let mut r = le(t, t * 8, 4096, TA_ISSUE | R);
            r[4..8].copy_from_slice(&seq.to_le_bytes());
            input.extend(r);
        }
        let d = run(&input, &issue_opts());
        assert_eq!(d.header.dropped_events, 2);
    }

    #[test]
    fn version_8_records_and_ftrace_prefixes_are_read() {
        // blk_io_trace2: action is 64 bits wide and follows pid.
        let mut v8 = Vec::new();
        v8.extend_from_slice(&(MAGIC | 8).to_le_bytes());
        v8.extend_from_slice(&0u32.to_le_bytes());
        v8.extend_from_slice(&77u64.to_le_bytes());
        v8.extend_from_slice(&40u64.to_le_bytes());
        v8.extend_from_slice(&8192u32.to_le_bytes());
        v8.extend_from_slice(&99u32.to_le_bytes());
        v8.extend_from_slice(&u64::from(TA_ISSUE | W).to_le_bytes());
        v8.extend_from_slice(&DEV.to_le_bytes());
        v8.extend_from_slice(&3u32.to_le_bytes());
        v8.extend_from_slice(&[0u8; 8]);
        assert_eq!(v8.len(), V8_HEADER_BYTES);
        let d = run(&v8, &issue_opts());
        assert_eq!(summary(&d.events), vec![(0, 20480, 8192, Op::Write, None)]);
        assert_eq!(d.events[0].pid, Some(99));

        let bare = [
            le(10, 8, 4096, TA_ISSUE | R),
            le(30, 8, 4096, TA_COMPLETE | R),
        ]
        .concat();
        let mut prefixed = Vec::new();
        for r in bare.chunks(V7_HEADER_BYTES) {
            prefixed.extend_from_slice(&[0xaa; FTRACE_PREFIX_BYTES]);
            prefixed.extend_from_slice(r);
        }
        assert_eq!(sniff(&prefixed), Confidence::Yes);
        assert_eq!(
            run(&prefixed, &issue_opts()).events,
            run(&bare, &issue_opts()).events
        );
    }

    #[test]
    fn garbage_is_an_error_naming_the_offset() {
        let err = decode_chunked(
            BlktraceDecoder::new(&issue_opts()),
            b"Timestamp,Hostname,DiskNumber\n",
            7,
        )
        .expect_err("not blktrace");
        let text = err.to_string();
        assert!(text.starts_with("blktrace: at byte 0:"), "{text}");
        assert!(text.contains("magic"), "{text}");
        assert_eq!(sniff(b"Timestamp,Hostname"), Confidence::No);
    }

    #[test]
    fn corrupt_records_are_skipped_and_a_cut_tail_reported() {
        let good = le(10, 8, 4096, TA_ISSUE | R);
        let mut input = good.clone();
        input.extend_from_slice(b"\x00garbage in the middle\xff");
        input.extend(le(20, 16, 4096, TA_ISSUE | R));
        input.extend_from_slice(&good[..30]);
        let d = run(&input, &issue_opts());
        assert_eq!(d.events.len(), 2);
        assert_eq!(d.diagnostics.skipped_records, 1);
        assert!(
            d.diagnostics.reasons[0].contains("at byte 48"),
            "{:?}",
            d.diagnostics.reasons
        );
        assert_eq!(d.diagnostics.truncated_tail_bytes, 30);
    }

    #[test]
    fn short_or_empty_input_is_not_an_error() {
        assert!(run(b"", &issue_opts()).events.is_empty());
        let d = run(&le(1, 2, 3, TA_ISSUE | R)[..3], &issue_opts());
        assert_eq!(d.diagnostics.truncated_tail_bytes, 3);
    }

    proptest::proptest! {
        /// Issue mode pairs records exactly as the brute-force reference matcher does (oldest
        /// first by device, sector and direction; a requeue drops the newest), fed in chunks
        /// of 1 to 7 bytes.
        #[test]
        fn pairs_like_the_reference_matcher_in_tiny_chunks(
            records in proptest::collection::vec((0u8..3, 0u8..4, proptest::bool::ANY, 0u64..50), 0..80),
            chunk in 1usize..8,
        ) {
            use crate::decode::pending::reference::Reference;
            use crate::decode::pending::{MatchRule, PendingConfig, Pick, Withdrawal};
            let mut reference = Reference::new(PendingConfig {
                rule: MatchRule::Oldest,
                max_pending: MAX_PENDING,
                timeout_nanos: HORIZON_NANOS,
                max_orphans: 0,
                orphan_nanos: 0,
            });
            let (mut input, mut expected, mut issues) = (Vec::new(), Vec::new(), Vec::new());
            let mut time = 1_000u64;
            for &(what, sector, write, dt) in &records {
                time += dt;
                let dir = if write { W } else { R };
                let key = sector * 2 + u8::from(write);
                let sector = 64 * u64::from(sector);
                match what {
                    0 => {
                        input.extend(le(time, sector, 4096, TA_ISSUE | dir));
                        issues.push((time, sector * 512));
                        reference.issue(key, time, issues.len() as u32);
                    }
                    1 => {
                        input.extend(le(time, sector, 4096, TA_COMPLETE | dir));
                        reference.complete(key, time);
                    }
                    _ => {
                        input.extend(le(time, sector, 4096, TA_REQUEUE | dir));
                        reference.withdraw(key, Pick::Newest, Withdrawal::Drop);
                    }
                }
            }
            while let Some(r) = reference.pop(true) {
                expected.push(r);
            }
            let genesis = records.first().map_or(0, |r| 1_000 + r.3);
            let want: Vec<(u64, u64, Option<u64>)> = expected
                .iter()
                .map(|&(n, latency)| {
                    let (t, offset) = issues[n as usize - 1];
                    (t - genesis, offset, latency)
                })
                .collect();
            let one = decode_chunked(BlktraceDecoder::new(&issue_opts()), &input, input.len().max(1))
                .expect("decodes");
            let got: Vec<(u64, u64, Option<u64>)> = one
                .events
                .iter()
                .map(|e| (e.time_nanos, e.offset_bytes, e.latency_nanos))
                .collect();
            proptest::prop_assert_eq!(&got, &want);
            let chunked = decode_chunked(BlktraceDecoder::new(&issue_opts()), &input, chunk)
                .expect("decodes");
            proptest::prop_assert_eq!(chunked, one);
        }
    }
}
