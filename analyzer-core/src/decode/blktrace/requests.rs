//! The request layer of the blktrace decoder: turns the merged stream of raw records into
//! request events, pairing completions through the engine's one matcher
//! ([`PendingRequests`], oldest first per device, sector and direction), and keeps the header
//! (devices, wall-clock start, dropped records from sequence gaps).

use super::records::Record;
use super::{
    BlktraceStats, FORMAT, HORIZON_NANOS, MAX_PENDING, SECTOR_BYTES, TA_BACKMERGE, TA_COMPLETE,
    TA_FRONTMERGE, TA_ISSUE, TA_QUEUE, TA_REQUEUE, TC_DISCARD, TC_FLUSH, TC_NOTIFY, TC_PC,
    TC_WRITE,
};
use crate::decode::pending::{MatchRule, PendingConfig, PendingRequests, Pick, Withdrawal};
use crate::decode::{Action, DecodeOptions, Diagnostics};
use crate::event::{IoEvent, Op, TraceHeader};
use crate::hash::IntMap;

/// Identifies the requests a completion may belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Key {
    device: u32,
    sector: u64,
    write: bool,
}

/// Turns the merged stream of raw records into request events.
pub(super) struct Matcher {
    pub(super) action: Action,
    pub(super) header: TraceHeader,
    pub(super) diagnostics: Diagnostics,
    pub(super) stats: BlktraceStats,
    pub(super) genesis: Option<u64>,
    /// Requests waiting for their completion, on the clock of the latest raw time seen in the
    /// merged stream.
    pub(super) pending: PendingRequests<Key, IoEvent>,
    /// The last dev_t seen and its device index (most traces have one device).
    pub(super) last_device: Option<(u32, u32)>,
    /// Last sequence number per (dev_t, cpu), for lost-record detection.
    pub(super) last_sequence: IntMap<(u32, u32), u32>,
    /// Request events of the other action (`Q` with `D`, `D` with `Q`): a trace of only those
    /// was read with the wrong action and says so.
    pub(super) other_requests: u64,
}

/// How many (device, cpu) pairs sequence tracking follows; more is not a real trace.
pub(super) const MAX_SEQUENCE_STREAMS: usize = 4096;

impl Matcher {
    pub(super) fn new(options: &DecodeOptions) -> Matcher {
        Matcher {
            action: options.action.unwrap_or(Action::Issue),
            header: TraceHeader::new(FORMAT),
            diagnostics: Diagnostics::default(),
            stats: BlktraceStats::default(),
            genesis: None,
            pending: PendingRequests::new(PendingConfig {
                rule: MatchRule::Oldest,
                max_pending: MAX_PENDING,
                timeout_nanos: HORIZON_NANOS,
                max_orphans: 0,
                orphan_nanos: 0,
            }),
            last_device: None,
            last_sequence: Default::default(),
            other_requests: 0,
        }
    }

    pub(super) fn device_index(&mut self, dev: u32) -> u32 {
        if let Some((d, i)) = self.last_device {
            if d == dev {
                return i;
            }
        }
        let i = self.header.device_index_by_dev_t(dev >> 20, dev & 0xfffff);
        self.last_device = Some((dev, i));
        i
    }

    pub(super) fn observe(&mut self, r: &Record) {
        let genesis = *self.genesis.get_or_insert(r.time);
        self.pending.advance_to(r.time);
        let category = r.category();
        if category & TC_NOTIFY != 0 {
            if let Some((sec, nsec)) = r.wall {
                let wall = i64::from(sec) * 1_000_000_000 + i64::from(nsec);
                let since_genesis =
                    i64::try_from(r.time.saturating_sub(genesis)).unwrap_or(i64::MAX);
                self.header.start_unix_nanos = Some(wall.saturating_sub(since_genesis));
            }
            self.diagnostics.ignored_records += 1;
            return;
        }
        self.track_sequence(r);
        if category & TC_PC != 0 {
            // Passthrough (SCSI/NVMe commands sent as-is): no data range of the block layer.
            self.diagnostics.ignored_records += 1;
            return;
        }
        // With `Q` the request is a bio, keyed by its end sector: a bio's completion prints what
        // is left of it (the remainder after a stacked device split it, nothing at its end once
        // consumed), and a merged request's completion ends where its last bio ends.
        let by_end = self.action == Action::Queue;
        let end = r.sector.saturating_add(u64::from(r.bytes) / SECTOR_BYTES);
        let at = |sector| Key {
            device: r.device,
            sector,
            write: category & TC_WRITE != 0,
        };
        let key = || at(if by_end { end } else { r.sector });
        match (r.code(), self.action) {
            (TA_ISSUE, Action::Issue) | (TA_QUEUE, Action::Queue) => {
                self.push_request(r, key(), genesis);
                return;
            }
            (TA_COMPLETE, _) => {
                if self.pending.complete(key(), r.time) {
                    self.stats.completions_matched += 1;
                } else {
                    self.stats.completions_unmatched += 1;
                }
            }
            (TA_REQUEUE, Action::Issue) => {
                let dropped = self.pending.withdraw(key(), Pick::Newest, Withdrawal::Drop);
                self.stats.requeued += u64::from(dropped);
            }
            (TA_BACKMERGE, Action::Queue) => {
                // The bio joins the end of a request: the request's completion now ends at this
                // bio's end, so the bio that ended where this one starts gets none.
                let merged =
                    self.pending
                        .withdraw(at(r.sector), Pick::Newest, Withdrawal::WithoutLatency);
                self.stats.merged += u64::from(merged);
            }
            (TA_FRONTMERGE, Action::Queue) => {
                // The bio joins the front: the request still ends at its old last bio's end,
                // and this bio gets no completion of its own.
                let merged = self
                    .pending
                    .withdraw(key(), Pick::Newest, Withdrawal::WithoutLatency);
                self.stats.merged += u64::from(merged);
            }
            (TA_QUEUE, Action::Issue) | (TA_ISSUE, Action::Queue) => self.other_requests += 1,
            _ => {}
        }
        self.diagnostics.ignored_records += 1;
    }

    pub(super) fn track_sequence(&mut self, r: &Record) {
        if r.sequence == 0 {
            return;
        }
        let stream = (r.device, r.cpu);
        let room = self.last_sequence.len() < MAX_SEQUENCE_STREAMS;
        match self.last_sequence.get_mut(&stream) {
            Some(last) => {
                if r.sequence > *last {
                    let gap = u64::from(r.sequence - *last - 1);
                    // A jump of millions is a restarted or corrupt counter, not loss.
                    if gap < 1 << 20 {
                        self.header.dropped_events += gap;
                    }
                }
                *last = r.sequence;
            }
            None if room => {
                self.last_sequence.insert(stream, r.sequence);
            }
            None => {}
        }
    }

    pub(super) fn push_request(&mut self, r: &Record, key: Key, genesis: u64) {
        let Some(offset_bytes) = r.sector.checked_mul(SECTOR_BYTES) else {
            self.diagnostics.skip(|| {
                format!(
                    "blktrace: request at time {} has an impossible sector {}",
                    r.time, r.sector
                )
            });
            return;
        };
        self.stats.requests += 1;
        let category = r.category();
        let op = if category & TC_DISCARD != 0 {
            Op::Discard
        } else if category & TC_FLUSH != 0 && r.bytes == 0 {
            Op::Flush
        } else if category & TC_WRITE != 0 {
            Op::Write
        } else {
            Op::Read
        };
        let event = IoEvent {
            time_nanos: r.time.saturating_sub(genesis),
            device: self.device_index(r.device),
            offset_bytes,
            len_bytes: r.bytes,
            op,
            latency_nanos: None,
            pid: Some(r.pid),
        };
        self.pending.issue(key, r.time, event);
    }

    /// The next event that can be emitted in order, if any. With `at_end`, nothing more will come.
    pub(super) fn pop_ready(&mut self, at_end: bool) -> Option<IoEvent> {
        let released = self.pending.pop(at_end)?;
        let stats = self.pending.stats();
        self.stats.evicted_pending = stats.evicted;
        self.stats.requests_without_completion = stats.without_completion;
        let mut event = released.item;
        event.latency_nanos = released.latency_nanos;
        Some(event)
    }

    /// Records the end-of-input notes once.
    /// At the end: the error of a trace that held only the other action's requests (a
    /// bio-based device's `Q`s read with `D`).
    pub(super) fn wrong_action(&self) -> Option<crate::decode::DecodeError> {
        if self.stats.requests > 0 || self.other_requests == 0 {
            return None;
        }
        let (request, other) = match self.action {
            Action::Issue => ("D", "Q"),
            Action::Queue => ("Q", "D"),
        };
        Some(crate::decode::wrong_action(
            super::FORMAT,
            self.action,
            request,
            other,
            self.other_requests,
        ))
    }

    pub(super) fn finish_notes(&mut self) {
        if self.stats.evicted_pending > 0
            && self.diagnostics.reasons.len() < crate::decode::MAX_REASONS
        {
            self.diagnostics.reasons.push(format!(
                "blktrace: note: {} request(s) were emitted without a latency because more than {} requests were waiting for their completion",
                self.stats.evicted_pending, MAX_PENDING
            ));
        }
    }
}
