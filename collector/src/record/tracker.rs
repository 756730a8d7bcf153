//! Pairs each request's issue with its completion and hands out finished [`IoEvent`]s in issue
//! order, with bounded memory.
//!
//! # The emission rule
//!
//! Kernel records arrive per CPU, so they are first held until the *horizon*: a trace-clock
//! time before which every CPU buffer has been read (the backend takes it at the start of each
//! read round, minus a small margin). Records up to the horizon are processed in time order.
//! An issued request then waits in `pending`, ordered by issue time, and is written when
//! 1. every request issued before it has been written, and
//! 2. its completion has been seen, or it has waited [`TrackerConfig::completion_timeout_nanos`]
//!    without one (written without latency, counted in `never_completed`), or more than
//!    [`TrackerConfig::max_pending`] requests are waiting (the oldest is written as it is,
//!    counted in `evicted`).
//!
//! When recording stops, everything still held is written; requests still in flight then have
//! no latency and count as `never_completed`.
//!
//! # Matching (issue 13: start-up mis-matches)
//!
//! Issues are matched to completions by (device, sector, direction): a request's start sector,
//! a bio's end sector ([`Record::bio`]); flushes, which have no sector, per device. A completion takes the *newest* waiting issue at its key issued no later
//! than itself, and any older issue still waiting at that key is *superseded*: its own
//! completion was evidently never seen, and it is written at once without latency (counted in
//! `superseded`). Matching oldest first instead, as before, let one issue whose completion was
//! missed (its completion record processed before it, or lost) take the completion of the next
//! request to the same sector, and that request the next one's: a chain of latencies of seconds,
//! while the issue-order rule held every later request back behind the first stuck one.
//!
//! A completion with no waiting issue is kept for a while as an *orphan* (at most
//! [`MAX_ORPHANS`], for [`ORPHAN_NANOS`] of trace time): if an issue at its key, issued before
//! it, is processed later (its CPU's records arrived a round late), the two are matched. A
//! completion of a request issued before recording started can never match: every issue seen
//! later is also issued later. Orphans count in `unmatched_completions` unless matched later.
//!
//! The price: two requests to one sector in flight at once in the same direction (rare; the
//! file system normally orders them) may both complete; the first completion then goes to the
//! newer one and the older is written without latency, instead of each getting its own.
//!
//! The matching, the cap and the timeout are the engine's one matcher
//! (`analyzer_core::decode::pending`, [`MatchRule::NewestIssuedBefore`] with orphans), shared
//! with the blkparse, tracefs and blktrace decoders; its clock here is the read round's horizon.
//! This module keeps what only a live recording needs: the horizon, spatial sampling, the
//! origin and a sorted output. (Since the matcher is shared, a lone waiting issue, too, only
//! takes a completion no earlier than itself; before, it took any.)

use analyzer_core::decode::pending::{MatchRule, PendingConfig, PendingRequests};
use analyzer_core::hash::{block_key, mix64};
use analyzer_core::{IoEvent, Op, Sampling};

/// Whether a record is a request's issue or its completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Issue,
    Complete,
}

/// One kernel record, already mapped to a named device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Trace-clock time in nanoseconds.
    pub time_nanos: u64,
    pub kind: Kind,
    /// Index of the named device.
    pub device: u32,
    /// Offset relative to the named device (0 for a flush).
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub op: Op,
    pub pid: Option<u32>,
    /// A bio-level record (`block_bio_queue`/`block_bio_complete`, blktrace `Q`/`C` of a
    /// bio-based device): matched by its **end** sector. A bio's completion prints what is left
    /// of it: the remainder after a stacked device split it (dm-cache cuts `R 0 + 128` at its
    /// 32 KiB blocks and completes `R 64 + 64`), or nothing at its end sector once it was
    /// consumed (bcache's writes, `W 2056 + 0`); the end is what the queue and the completion
    /// share. Requests complete whole (`block_rq_complete` prints the start and the length
    /// completed) and are matched by their start.
    pub bio: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct TrackerConfig {
    /// Trace-clock time that becomes `time_nanos == 0` in the output.
    pub origin_nanos: u64,
    pub completion_timeout_nanos: u64,
    pub max_pending: usize,
    pub sampling: Option<Sampling>,
}

/// Requests in flight longer than this are written without latency. The kernel's own default
/// request timeout is 30 s; a request still unanswered after 10 s is already an outlier worth
/// seeing in the trace, and waiting longer would hold every later request in memory.
pub const DEFAULT_COMPLETION_TIMEOUT_NANOS: u64 = 10_000_000_000;
/// At most this many requests wait for completion or ordering (roughly 150 MiB worst case).
pub const DEFAULT_MAX_PENDING: usize = 1 << 20;

/// Counters for the end-of-recording summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrackerStats {
    pub issued: u64,
    pub written: u64,
    pub written_with_latency: u64,
    pub never_completed: u64,
    pub evicted: u64,
    pub unmatched_completions: u64,
    /// Issues written without latency because a later request at the same key completed
    /// first (their own completion was never seen).
    pub superseded: u64,
    /// Completions processed before their issue and matched when it arrived.
    pub matched_late: u64,
    /// Records skipped by spatial sampling (issues and completions).
    pub sampled_out: u64,
    /// Records whose time was before the origin (clamped to 0).
    pub before_origin: u64,
    /// Requests that arrived after later ones had been written; their time was raised to keep
    /// the file sorted.
    pub reordered: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    device: u32,
    offset_bytes: u64,
    /// The direction: a read's completion never completes a write at the same sector.
    op: Op,
}

impl Key {
    fn of(r: &Record) -> Key {
        let offset_bytes = if r.op == Op::Flush {
            0
        } else if r.bio {
            r.offset_bytes.saturating_add(u64::from(r.len_bytes))
        } else {
            r.offset_bytes
        };
        Key {
            device: r.device,
            offset_bytes,
            op: r.op,
        }
    }
}

/// Unmatched completions kept at most, waiting for an issue processed late.
pub const MAX_ORPHANS: usize = 4096;
/// How long (trace time, after the completion) an orphan completion waits for its issue.
pub const ORPHAN_NANOS: u64 = 1_000_000_000;

pub struct Tracker {
    config: TrackerConfig,
    /// Issued requests in processing order, matched by the one matcher of the engine.
    pending: PendingRequests<Key, Record>,
    holdover: Vec<Record>,
    /// Time of the last request written, to keep the output sorted.
    last_written_nanos: u64,
    stats: TrackerStats,
}

impl Tracker {
    pub fn new(config: TrackerConfig) -> Tracker {
        Tracker {
            config,
            pending: PendingRequests::new(PendingConfig {
                rule: MatchRule::NewestIssuedBefore,
                max_pending: config.max_pending,
                timeout_nanos: config.completion_timeout_nanos,
                max_orphans: MAX_ORPHANS,
                orphan_nanos: ORPHAN_NANOS,
            }),
            holdover: Vec::new(),
            last_written_nanos: 0,
            stats: TrackerStats::default(),
        }
    }

    pub fn stats(&self) -> TrackerStats {
        let p = self.pending.stats();
        TrackerStats {
            issued: p.issued,
            never_completed: p.without_completion,
            evicted: p.evicted,
            unmatched_completions: p.unmatched,
            superseded: p.superseded,
            matched_late: p.matched_late,
            ..self.stats
        }
    }

    /// Requests waiting for completion or for earlier requests.
    #[cfg(test)]
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Takes the records of one read round (any order across CPUs).
    pub fn add(&mut self, records: &mut Vec<Record>) {
        self.holdover.append(records);
    }

    /// Processes held records up to `horizon_nanos` and writes what the rule allows.
    pub fn advance(&mut self, horizon_nanos: u64, emit: &mut impl FnMut(IoEvent)) {
        // Stable, and fast on the nearly sorted runs that per-CPU buffers produce.
        self.holdover.sort_by_key(|r| r.time_nanos);
        let ready = self
            .holdover
            .partition_point(|r| r.time_nanos <= horizon_nanos);
        for i in 0..ready {
            let r = self.holdover[i];
            self.process(r);
        }
        self.holdover.drain(..ready);
        self.emit_ready(horizon_nanos, false, emit);
    }

    /// Processes everything held and writes every pending request.
    pub fn finish(&mut self, emit: &mut impl FnMut(IoEvent)) {
        self.advance(u64::MAX, emit);
        self.emit_ready(u64::MAX, true, emit);
    }

    fn sampled_in(&self, r: &Record) -> bool {
        match self.config.sampling {
            None => true,
            Some(_) if r.op == Op::Flush => true,
            Some(s) => {
                let block = r.offset_bytes / s.block_bytes.max(1);
                mix64(block_key(r.device, block)) % s.modulus.max(1) < s.threshold
            }
        }
    }

    fn process(&mut self, r: Record) {
        if !self.sampled_in(&r) {
            self.stats.sampled_out += 1;
            return;
        }
        let key = Key::of(&r);
        match r.kind {
            Kind::Issue => self.pending.issue(key, r.time_nanos, r),
            Kind::Complete => {
                self.pending.complete(key, r.time_nanos);
            }
        }
    }

    fn emit_ready(&mut self, horizon_nanos: u64, all: bool, emit: &mut impl FnMut(IoEvent)) {
        // A request times out once `issue + timeout <= horizon`: the matcher's clock is one
        // past the horizon, as it times out strictly after its clock passes the deadline.
        self.pending.advance_to(horizon_nanos.saturating_add(1));
        while let Some(released) = self.pending.pop(all) {
            let r = released.item;
            if r.time_nanos < self.config.origin_nanos {
                self.stats.before_origin += 1;
            }
            let latency_nanos = released.latency_nanos;
            self.stats.written += 1;
            if latency_nanos.is_some() {
                self.stats.written_with_latency += 1;
            }
            // Records are processed in time order, so this only moves a record whose commit
            // came later than the horizon margin allows (counted; never seen in testing).
            let time_nanos = r.time_nanos.saturating_sub(self.config.origin_nanos);
            if time_nanos < self.last_written_nanos {
                self.stats.reordered += 1;
            }
            let time_nanos = time_nanos.max(self.last_written_nanos);
            self.last_written_nanos = time_nanos;
            emit(IoEvent {
                time_nanos,
                device: r.device,
                offset_bytes: r.offset_bytes,
                len_bytes: r.len_bytes,
                op: r.op,
                latency_nanos,
                pid: r.pid,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(time_nanos: u64, kind: Kind, offset_bytes: u64, op: Op) -> Record {
        Record {
            time_nanos,
            kind,
            device: 0,
            offset_bytes,
            len_bytes: 4096,
            op,
            pid: Some(1),
            bio: false,
        }
    }

    fn config() -> TrackerConfig {
        TrackerConfig {
            origin_nanos: 100,
            completion_timeout_nanos: 1_000,
            max_pending: 100,
            sampling: None,
        }
    }

    fn run(t: &mut Tracker, mut records: Vec<Record>, horizon: u64) -> Vec<IoEvent> {
        let mut out = Vec::new();
        t.add(&mut records);
        t.advance(horizon, &mut |e| out.push(e));
        out
    }

    /// Bios match by their end sector: a split bio's remainder, a consumed bio's end, and a
    /// later bio at the first one's start sector keeps its own completion.
    #[test]
    fn bios_match_by_end_sector() {
        let bio = |t, kind, offset_bytes, len_bytes, op| Record {
            len_bytes,
            bio: true,
            ..rec(t, kind, offset_bytes, op)
        };
        let mut t = Tracker::new(config());
        let out = run(
            &mut t,
            vec![
                bio(110, Kind::Issue, 0, 65536, Op::Read),
                bio(120, Kind::Issue, 1 << 20, 4096, Op::Write),
                bio(150, Kind::Complete, 32768, 32768, Op::Read),
                bio(160, Kind::Complete, (1 << 20) + 4096, 0, Op::Write),
                bio(170, Kind::Issue, 0, 4096, Op::Read),
                bio(190, Kind::Complete, 0, 4096, Op::Read),
            ],
            400,
        );
        let got: Vec<_> = out.iter().map(|e| (e.len_bytes, e.latency_nanos)).collect();
        assert_eq!(got, [(65536, Some(40)), (4096, Some(40)), (4096, Some(20))]);
    }

    #[test]
    fn completions_give_latency_and_order_is_by_issue() {
        let mut t = Tracker::new(config());
        // Two CPUs: records arrive out of order; the second request completes first.
        let out = run(
            &mut t,
            vec![
                rec(150, Kind::Complete, 8192, Op::Write),
                rec(110, Kind::Issue, 0, Op::Read),
                rec(120, Kind::Issue, 8192, Op::Write),
            ],
            200,
        );
        assert!(out.is_empty(), "first request still in flight: {out:?}");
        let out = run(&mut t, vec![rec(300, Kind::Complete, 0, Op::Read)], 400);
        assert_eq!(out.len(), 2);
        assert_eq!(
            (out[0].time_nanos, out[0].op, out[0].latency_nanos),
            (10, Op::Read, Some(190))
        );
        assert_eq!(
            (out[1].time_nanos, out[1].op, out[1].latency_nanos),
            (20, Op::Write, Some(30))
        );
        assert_eq!(t.stats().written_with_latency, 2);
    }

    #[test]
    fn records_past_the_horizon_wait_for_the_next_round() {
        let mut t = Tracker::new(config());
        // The completion is read before its issue (different CPUs, different rounds).
        let out = run(&mut t, vec![rec(130, Kind::Complete, 0, Op::Read)], 125);
        assert!(out.is_empty());
        let out = run(&mut t, vec![rec(110, Kind::Issue, 0, Op::Read)], 200);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].latency_nanos, Some(20));
        assert_eq!(t.stats().unmatched_completions, 0);
    }

    #[test]
    fn a_record_later_than_the_horizon_margin_keeps_the_file_sorted() {
        let mut t = Tracker::new(config());
        let mut out = run(
            &mut t,
            vec![
                rec(150, Kind::Issue, 0, Op::Read),
                rec(160, Kind::Complete, 0, Op::Read),
            ],
            200,
        );
        // Committed late: its time is before what was already written.
        out.extend(run(
            &mut t,
            vec![
                rec(120, Kind::Issue, 4096, Op::Read),
                rec(170, Kind::Complete, 4096, Op::Read),
            ],
            300,
        ));
        assert_eq!(
            out.iter().map(|e| e.time_nanos).collect::<Vec<_>>(),
            vec![50, 50]
        );
        assert_eq!(out[1].latency_nanos, Some(50));
        assert_eq!(t.stats().reordered, 1);
    }

    #[test]
    fn timeouts_eviction_and_unmatched_completions_are_counted() {
        let mut t = Tracker::new(config());
        let out = run(
            &mut t,
            vec![
                rec(50, Kind::Complete, 4096, Op::Read), // issued before recording started
                rec(110, Kind::Issue, 0, Op::Read),
                rec(120, Kind::Issue, 8192, Op::Read),
                rec(130, Kind::Complete, 8192, Op::Read),
            ],
            1_115,
        );
        // The first request timed out (110 + 1000 <= 1115) and is written without latency;
        // the second follows it.
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].latency_nanos, None);
        assert_eq!(out[1].latency_nanos, Some(10));
        // Its late completion is unmatched.
        let out = run(&mut t, vec![rec(1_200, Kind::Complete, 0, Op::Read)], 1_300);
        assert!(out.is_empty());
        let s = t.stats();
        assert_eq!(
            (s.never_completed, s.unmatched_completions, s.evicted),
            (1, 2, 0)
        );

        let mut t = Tracker::new(TrackerConfig {
            max_pending: 2,
            ..config()
        });
        let out = run(
            &mut t,
            (0..4)
                .map(|i| rec(110 + i, Kind::Issue, i * 4096, Op::Read))
                .collect(),
            200,
        );
        assert_eq!(out.len(), 2);
        assert_eq!(t.stats().evicted, 2);
        let mut rest = Vec::new();
        t.finish(&mut |e| rest.push(e));
        assert_eq!(rest.len(), 2);
        assert_eq!(t.stats().never_completed, 2);
        assert_eq!(t.pending(), 0);
    }

    #[test]
    fn flushes_match_by_device_and_same_sector_requests_newest_first() {
        let mut t = Tracker::new(config());
        let mut flush_issue = rec(110, Kind::Issue, 0, Op::Flush);
        flush_issue.len_bytes = 0;
        let out = run(
            &mut t,
            vec![
                flush_issue,
                rec(111, Kind::Issue, 4096, Op::Write),
                rec(112, Kind::Issue, 4096, Op::Write),
                rec(120, Kind::Complete, 0, Op::Flush),
                rec(121, Kind::Complete, 4096, Op::Write),
                rec(125, Kind::Complete, 4096, Op::Write),
            ],
            200,
        );
        let lat: Vec<_> = out.iter().map(|e| e.latency_nanos).collect();
        // Two writes to one sector in flight at once: the first completion goes to the newer
        // one and supersedes the older (the price of never chaining, see the module docs).
        assert_eq!(lat, vec![Some(10), None, Some(9)]);
        assert_eq!(t.stats().superseded, 1);
    }

    #[test]
    fn issue_13_a_missed_completion_neither_chains_nor_holds_everything_back() {
        // The start-up failure: the first request's completion is never seen. Before, the next
        // request to its sector gave it its completion (a latency of seconds), took the next
        // one's in turn, and every later request waited behind the first for the timeout.
        let mut t = Tracker::new(TrackerConfig {
            completion_timeout_nanos: 10_000_000_000,
            ..config()
        });
        let mut recs = vec![rec(110, Kind::Issue, 4096, Op::Read)];
        for k in 1..=3u64 {
            let at = k * 1_000_000;
            recs.push(rec(at, Kind::Issue, 4096, Op::Read));
            recs.push(rec(at + 100, Kind::Complete, 4096, Op::Read));
            // Other requests in between, all completed.
            for j in 0..10 {
                recs.push(rec(at + 200 + j, Kind::Issue, (j + 10) * 4096, Op::Write));
                recs.push(rec(
                    at + 300 + j,
                    Kind::Complete,
                    (j + 10) * 4096,
                    Op::Write,
                ));
            }
        }
        let out = run(&mut t, recs, 4_000_000);
        // Everything is written long before the 10 s timeout.
        assert_eq!(out.len(), 34);
        assert_eq!(out[0].latency_nanos, None);
        for e in &out[1..] {
            assert!(e.latency_nanos.is_some_and(|l| l <= 100), "{e:?}");
        }
        assert_eq!(t.stats().superseded, 1);
    }

    #[test]
    fn issue_13_a_read_completion_never_completes_a_write() {
        let mut t = Tracker::new(config());
        let out = run(
            &mut t,
            vec![
                rec(110, Kind::Issue, 4096, Op::Write),
                rec(115, Kind::Complete, 4096, Op::Read), // a read issued before recording
                rec(130, Kind::Complete, 4096, Op::Write),
            ],
            200,
        );
        assert_eq!(out[0].latency_nanos, Some(20));
        assert_eq!(t.stats().unmatched_completions, 1);
    }

    #[test]
    fn issue_13_a_completion_processed_before_its_issue_is_matched_when_it_arrives() {
        // The completion's CPU was read a round before the issue's.
        let mut t = Tracker::new(config());
        let mut out = run(&mut t, vec![rec(150, Kind::Complete, 4096, Op::Read)], 160);
        assert!(out.is_empty());
        assert_eq!(t.stats().unmatched_completions, 1);
        t.holdover.push(rec(140, Kind::Issue, 4096, Op::Read));
        t.finish(&mut |e| out.push(e));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].latency_nanos, Some(10));
        let s = t.stats();
        assert_eq!((s.matched_late, s.unmatched_completions), (1, 0));
        // A completion from before the recording never matches a later issue.
        let mut t = Tracker::new(config());
        let mut out = run(&mut t, vec![rec(150, Kind::Complete, 4096, Op::Read)], 160);
        t.holdover.push(rec(170, Kind::Issue, 4096, Op::Read));
        t.finish(&mut |e| out.push(e));
        assert_eq!(out[0].latency_nanos, None);
    }

    #[test]
    fn sampling_keeps_about_the_rate_and_pairs_completions() {
        let sampling = Sampling {
            block_bytes: 4096,
            threshold: 100,
            modulus: 1000,
        };
        let mut t = Tracker::new(TrackerConfig {
            sampling: Some(sampling),
            completion_timeout_nanos: u64::MAX / 2,
            ..config()
        });
        let mut recs = Vec::new();
        for i in 0..20_000u64 {
            recs.push(rec(200 + 2 * i, Kind::Issue, i * 4096, Op::Read));
            recs.push(rec(201 + 2 * i, Kind::Complete, i * 4096, Op::Read));
        }
        let out = run(&mut t, recs, u64::MAX - 1);
        assert!((1_700..2_300).contains(&out.len()), "{}", out.len());
        assert!(out.iter().all(|e| e.latency_nanos == Some(1)));
        assert_eq!(t.stats().unmatched_completions, 0);
        assert_eq!(t.stats().sampled_out as usize, 2 * (20_000 - out.len()));
    }
}
