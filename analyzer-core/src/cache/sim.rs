//! The simulator: splits requests into cache lines, runs the hit/miss/evict loop against a
//! [`Policy`], applies the write mode and admission rule, and counts what the host asked for and
//! what the disks behind the cache had to do.
//!
//! Accounting rules (docs/cache.md explains them for users):
//! - A request touching any byte of a line touches the whole line. Line statistics count every
//!   line; a request hits only if all its lines hit.
//! - Back-end reads: missed lines of a read. An admitted line is filled whole (line bytes); a
//!   line not admitted is read only where the request covers it. Contiguous missed lines of one
//!   request form one back-end I/O.
//! - Back-end writes: every write request in read-only, write-through and write-around mode (as
//!   one I/O); in write-back, the unadmitted part of a write, each dirty line evicted, and every
//!   dirty line left at the end (the final flush, reported separately and included in the
//!   totals). A write that allocates a line it only partly covers first reads the line (a
//!   "fill read"), in write-through and write-back.
//! - Discards invalidate the lines they touch (dirty data is dropped, not written); host flush
//!   requests are counted and cost nothing (the cache is assumed non-volatile).
//! - Warm-up: events before `first event + warmup_nanos` count in the whole-trace figures only;
//!   the after-warm-up figures are the difference of two snapshots, so they cost nothing per
//!   access.

use serde::{Deserialize, Serialize};

use super::admission::{Admission, AdmissionState};
use super::future::{accessed_lines, NextUse};
use super::policy::{new_policy, Policy};
use super::{ConfigError, PolicyKind, WriteMode};
use crate::event::{IoEvent, Op};
use crate::hash::{block_key, IntSet};

/// Everything that defines one simulated cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    pub policy: PolicyKind,
    pub capacity_lines: u64,
    /// Cache line size: a power of two from 4 KiB to 1 MiB.
    pub line_bytes: u64,
    pub mode: WriteMode,
    pub admission: Admission,
    /// A bcache-style sequential cutoff applied on top of `admission` (presets combine them;
    /// `Admission::SeqCutoff` sets the same thing on its own).
    pub sequential_cutoff_bytes: Option<u64>,
    /// Leading time window excluded from the after-warm-up figures.
    pub warmup_nanos: u64,
    /// Maximum number of time bins for the hits-and-fills-over-time series.
    pub time_bins: usize,
}

impl SimConfig {
    /// Write-through, every miss admitted, no warm-up window, 100 time bins.
    pub fn new(policy: PolicyKind, capacity_lines: u64, line_bytes: u64) -> SimConfig {
        SimConfig {
            policy,
            capacity_lines,
            line_bytes,
            mode: WriteMode::WriteThrough,
            admission: Admission::Always,
            sequential_cutoff_bytes: None,
            warmup_nanos: 0,
            time_bins: 100,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.line_bytes.is_power_of_two() || !(4096..=1 << 20).contains(&self.line_bytes) {
            return Err(ConfigError::LineSize(self.line_bytes));
        }
        if self.capacity_lines == 0 {
            return Err(ConfigError::ZeroCapacity);
        }
        if self.capacity_lines > 1 << 31 {
            return Err(ConfigError::TooLarge(self.capacity_lines));
        }
        if self.time_bins == 0 {
            return Err(ConfigError::TimeBins);
        }
        if let Admission::NHit { n: 0 } = self.admission {
            return Err(ConfigError::NHit);
        }
        Ok(())
    }
}

/// Host-side counts for one operation type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCounts {
    pub requests: u64,
    /// Requests all of whose lines hit.
    pub request_hits: u64,
    pub bytes: u64,
    pub lines: u64,
    pub line_hits: u64,
}

impl OpCounts {
    fn minus(&self, o: &OpCounts) -> OpCounts {
        OpCounts {
            requests: self.requests - o.requests,
            request_hits: self.request_hits - o.request_hits,
            bytes: self.bytes - o.bytes,
            lines: self.lines - o.lines,
            line_hits: self.line_hits - o.line_hits,
        }
    }
}

/// The I/O the disks behind the cache see.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendCounts {
    pub read_ops: u64,
    pub read_bytes: u64,
    pub write_ops: u64,
    pub write_bytes: u64,
}

impl BackendCounts {
    fn minus(&self, o: &BackendCounts) -> BackendCounts {
        BackendCounts {
            read_ops: self.read_ops - o.read_ops,
            read_bytes: self.read_bytes - o.read_bytes,
            write_ops: self.write_ops - o.write_ops,
            write_bytes: self.write_bytes - o.write_bytes,
        }
    }
}

/// Raw counters over a stretch of the trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub read: OpCounts,
    pub write: OpCounts,
    pub discards: u64,
    pub flushes: u64,
    pub backend: BackendCounts,
    /// Lines inserted into the cache.
    pub fills: u64,
    /// Lines read from the disks to complete a partly written line before caching it.
    pub fill_reads: u64,
    /// Missed lines the admission rule kept out of the cache.
    pub bypassed_lines: u64,
    pub evictions: u64,
    /// Evicted lines that were dirty (write-back): each cost a back-end write.
    pub dirty_evictions: u64,
    /// Cached lines dropped by writes in read-only mode and by discards.
    pub invalidations: u64,
}

impl Counters {
    fn minus(&self, o: &Counters) -> Counters {
        Counters {
            read: self.read.minus(&o.read),
            write: self.write.minus(&o.write),
            discards: self.discards - o.discards,
            flushes: self.flushes - o.flushes,
            backend: self.backend.minus(&o.backend),
            fills: self.fills - o.fills,
            fill_reads: self.fill_reads - o.fill_reads,
            bypassed_lines: self.bypassed_lines - o.bypassed_lines,
            evictions: self.evictions - o.evictions,
            dirty_evictions: self.dirty_evictions - o.dirty_evictions,
            invalidations: self.invalidations - o.invalidations,
        }
    }
}

/// Ratios derived from [`Counters`]; `None` where the denominator is zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ratios {
    /// Line hits / line accesses, reads and writes together.
    pub line_hit_ratio: Option<f64>,
    pub read_line_hit_ratio: Option<f64>,
    pub write_line_hit_ratio: Option<f64>,
    /// Requests all of whose lines hit / requests.
    pub request_hit_ratio: Option<f64>,
    pub read_request_hit_ratio: Option<f64>,
    pub write_request_hit_ratio: Option<f64>,
    /// 1 - back-end I/Os / host read and write requests (negative when the cache adds I/O).
    pub backend_ops_reduction: Option<f64>,
    /// 1 - back-end bytes / host bytes read and written.
    pub backend_bytes_reduction: Option<f64>,
    pub backend_read_ops_reduction: Option<f64>,
    pub backend_write_ops_reduction: Option<f64>,
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

fn reduction(after: u64, before: u64) -> Option<f64> {
    (before > 0).then(|| 1.0 - after as f64 / before as f64)
}

impl Ratios {
    fn of(c: &Counters) -> Ratios {
        let b = &c.backend;
        Ratios {
            line_hit_ratio: ratio(
                c.read.line_hits + c.write.line_hits,
                c.read.lines + c.write.lines,
            ),
            read_line_hit_ratio: ratio(c.read.line_hits, c.read.lines),
            write_line_hit_ratio: ratio(c.write.line_hits, c.write.lines),
            request_hit_ratio: ratio(
                c.read.request_hits + c.write.request_hits,
                c.read.requests + c.write.requests,
            ),
            read_request_hit_ratio: ratio(c.read.request_hits, c.read.requests),
            write_request_hit_ratio: ratio(c.write.request_hits, c.write.requests),
            backend_ops_reduction: reduction(
                b.read_ops + b.write_ops,
                c.read.requests + c.write.requests,
            ),
            backend_bytes_reduction: reduction(
                b.read_bytes + b.write_bytes,
                c.read.bytes + c.write.bytes,
            ),
            backend_read_ops_reduction: reduction(b.read_ops, c.read.requests),
            backend_write_ops_reduction: reduction(b.write_ops, c.write.requests),
        }
    }
}

/// Counters and their ratios over a stretch of the trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub counts: Counters,
    pub ratios: Ratios,
}

impl Summary {
    pub(crate) fn of(counts: Counters) -> Summary {
        Summary {
            counts,
            ratios: Ratios::of(&counts),
        }
    }
}

/// One bin of the hits-and-fills-over-time series.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeBin {
    /// Start of the bin relative to the first event.
    pub start_nanos: u64,
    pub requests: u64,
    pub lines: u64,
    pub line_hits: u64,
    pub fills: u64,
    /// Resident lines at the end of the bin (or when its last event was seen).
    pub occupancy_lines: u64,
}

impl TimeBin {
    pub fn hit_ratio(&self) -> Option<f64> {
        ratio(self.line_hits, self.lines)
    }
}

/// What a simulation found. Serialised as documented in docs/cache.md.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimResult {
    pub config: SimConfig,
    pub capacity_bytes: u64,
    /// Every event.
    pub whole: Summary,
    /// Events from `first event + warmup_nanos` on (equal to `whole` without a warm-up window).
    pub after_warmup: Summary,
    /// True when the trace ended inside the warm-up window (then `after_warmup` is empty).
    pub warmup_longer_than_trace: bool,
    /// Dirty lines written to the disks at the end (write-back); included in both summaries'
    /// back-end writes.
    pub final_flush_lines: u64,
    pub final_flush_bytes: u64,
    /// Time from the first event until the cache first held `capacity_lines` lines.
    pub time_to_warm_nanos: Option<u64>,
    pub duration_nanos: u64,
    pub occupancy_lines: u64,
    /// Width of each time bin (bins double in width as the trace goes on, so their number
    /// stays at most `time_bins`).
    pub bin_nanos: u64,
    pub bins: Vec<TimeBin>,
    /// Heap memory of the policy, admission tables and dirty set at the end, in bytes.
    pub memory_bytes: u64,
}

/// Collects contiguous back-end segments of one request into I/Os.
#[derive(Clone, Copy)]
struct Run {
    start_bytes: u64,
    end_bytes: u64,
}

const NO_RUN: Run = Run {
    start_bytes: 0,
    end_bytes: 0,
};

/// How many requests ahead [`Simulator::observe_batch`] and [`Simulator::observe_buffered`]
/// read their lines' table slots: a request's slots are asked for while the `PREFETCH_AHEAD`
/// requests before it run, so the load's latency hides behind their work instead of stalling
/// the request (and up to this many loads are in flight at once).
const PREFETCH_AHEAD: usize = 16;
/// Lines of one request prefetched ahead (a long request's later lines are sequential keys
/// whose slots the first probes bring in anyway).
const PREFETCH_LINES: usize = 8;

/// The streaming cache simulator. Feed events in time order with [`Simulator::observe`] (or a
/// variant) and call [`Simulator::finish`].
pub struct Simulator {
    config: SimConfig,
    policy: Box<dyn Policy>,
    admission: AdmissionState,
    dirty: IntSet<u64>,
    evicted: Vec<u64>,
    c: Counters,
    at_warm: Option<Counters>,
    start_nanos: Option<u64>,
    last_rel_nanos: u64,
    vtime: u64,
    bins: Vec<TimeBin>,
    bin_nanos: u64,
    time_to_warm_nanos: Option<u64>,
    final_flush_lines: Option<u64>,
    line_bytes: u64,
    /// Events given to [`Simulator::observe_buffered`] and not yet simulated.
    pending: Vec<IoEvent>,
}

impl Simulator {
    /// A simulator for every policy but Belady (which needs [`Simulator::with_future`]).
    pub fn new(config: &SimConfig) -> Result<Simulator, ConfigError> {
        Simulator::build(config, None)
    }

    /// A simulator with future knowledge, required for Belady: `future` must come from the same
    /// events, line size and line filter (see [`NextUse`]). Other policies ignore it.
    pub fn with_future(config: &SimConfig, future: NextUse) -> Result<Simulator, ConfigError> {
        Simulator::build(config, Some(future.next))
    }

    /// A simulator of `config` whose policy is `policy` instead of the one `config` names (the
    /// weighted LRU of a sampled cache tier, `array::cache_tier`).
    pub(crate) fn with_policy(
        config: &SimConfig,
        policy: Box<dyn Policy>,
    ) -> Result<Simulator, ConfigError> {
        config.validate()?;
        Ok(Simulator::assemble(config, policy))
    }

    fn build(config: &SimConfig, next_use: Option<Vec<u64>>) -> Result<Simulator, ConfigError> {
        config.validate()?;
        let policy = new_policy(config.policy, config.capacity_lines, next_use)?;
        Ok(Simulator::assemble(config, policy))
    }

    fn assemble(config: &SimConfig, policy: Box<dyn Policy>) -> Simulator {
        Simulator {
            admission: AdmissionState::new(
                config.admission,
                config.sequential_cutoff_bytes,
                config.capacity_lines,
            ),
            config: config.clone(),
            policy,
            dirty: IntSet::default(),
            evicted: Vec::with_capacity(16),
            c: Counters::default(),
            at_warm: None,
            start_nanos: None,
            last_rel_nanos: 0,
            vtime: 0,
            bins: Vec::new(),
            bin_nanos: 1_000_000,
            time_to_warm_nanos: None,
            final_flush_lines: None,
            line_bytes: config.line_bytes,
            pending: Vec::new(),
        }
    }

    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// Resident lines now (not counting events still buffered by
    /// [`Simulator::observe_buffered`]).
    pub fn occupancy_lines(&self) -> u64 {
        self.policy.len()
    }

    /// Simulates one request.
    pub fn observe(&mut self, e: &IoEvent) {
        self.drain_pending();
        self.observe_impl(e, |_| true, None);
    }

    /// Simulates `events` in order, exactly as [`Simulator::observe`] on each would, but reading
    /// ahead: each request's table slots are asked for ([`Policy::prefetch`]) while the
    /// [`PREFETCH_AHEAD`] requests before it run, so their memory loads overlap that work
    /// rather than stall one request after another.
    pub fn observe_batch(&mut self, events: &[IoEvent]) {
        self.drain_pending();
        for e in events.iter().take(PREFETCH_AHEAD) {
            self.prefetch_event(e);
        }
        self.run_ahead(events, events.len());
    }

    /// [`Simulator::observe`] for callers that hand over one event at a time but read the
    /// results only at the end: events are buffered and simulated as
    /// [`Simulator::observe_batch`] does, so the counts and occupancy seen between calls may lag
    /// by up to `2 × PREFETCH_AHEAD` events. [`Simulator::finish`] (and every other `observe`
    /// variant) simulates what is still buffered first, so the result equals
    /// [`Simulator::observe`]'s.
    pub fn observe_buffered(&mut self, e: &IoEvent) {
        // The first PREFETCH_AHEAD buffered events were read ahead as they came in (or while
        // the previous ones ran); the rest are read ahead below while those run.
        if self.pending.len() < PREFETCH_AHEAD {
            self.prefetch_event(e);
        }
        self.pending.push(*e);
        if self.pending.len() >= 2 * PREFETCH_AHEAD {
            let mut pending = std::mem::take(&mut self.pending);
            self.run_ahead(&pending, PREFETCH_AHEAD);
            pending.drain(..PREFETCH_AHEAD);
            self.pending = pending;
        }
    }

    fn drain_pending(&mut self) {
        if !self.pending.is_empty() {
            let mut pending = std::mem::take(&mut self.pending);
            // Every buffered event past the first PREFETCH_AHEAD is yet to be read ahead.
            self.run_ahead(&pending, pending.len());
            pending.clear();
            self.pending = pending;
        }
    }

    /// Simulates the first `run` of `events`, whose first [`PREFETCH_AHEAD`] were read ahead
    /// already, reading each later event ahead while the `PREFETCH_AHEAD` before it run.
    fn run_ahead(&mut self, events: &[IoEvent], run: usize) {
        for (i, e) in events[..run].iter().enumerate() {
            if let Some(ahead) = events.get(i + PREFETCH_AHEAD) {
                self.prefetch_event(ahead);
            }
            self.observe_impl(e, |_| true, None);
        }
    }

    /// Reads ahead the table slots of `e`'s first lines.
    #[inline]
    fn prefetch_event(&self, e: &IoEvent) {
        self.for_prefetched_keys(e, |p, key| p.prefetch(key));
    }

    /// Calls `f` with the policy and each of the first lines' keys of `e`.
    #[inline]
    fn for_prefetched_keys(&self, e: &IoEvent, f: impl Fn(&dyn Policy, u64)) {
        let Some(lines) = accessed_lines(e, self.line_bytes) else {
            return;
        };
        for line in lines.take(PREFETCH_LINES) {
            f(&*self.policy, block_key(e.device, line));
        }
    }

    /// Simulates one request, skipping the lines for which `keep_line(line)` is false (spatial
    /// sampling: the caller scales the cache down in proportion). A request none of whose lines
    /// are kept is not counted.
    pub fn observe_filtered(&mut self, e: &IoEvent, keep_line: impl Fn(u64) -> bool) {
        self.drain_pending();
        self.observe_impl(e, keep_line, None);
    }

    /// Simulates one request and appends the back-end I/Os it causes to `backend` (offsets and
    /// lengths on the same device, time of the request).
    pub fn observe_with_backend(&mut self, e: &IoEvent, backend: &mut Vec<IoEvent>) {
        self.drain_pending();
        self.observe_impl(e, |_| true, Some(backend));
    }

    /// [`Simulator::observe_with_backend`] of the lines for which `keep_line(line)` is true (a
    /// sampled cache tier: the back-end I/O of the lines left out is not simulated).
    pub(crate) fn observe_filtered_with_backend(
        &mut self,
        e: &IoEvent,
        keep_line: impl Fn(u64) -> bool,
        backend: &mut Vec<IoEvent>,
    ) {
        self.drain_pending();
        self.observe_impl(e, keep_line, Some(backend));
    }

    /// Writes every dirty line back now (write-back), appending the writes to `backend` when
    /// given. [`Simulator::finish`] does this itself when it was not called.
    pub fn flush_dirty(&mut self, mut backend: Option<&mut Vec<IoEvent>>) {
        self.drain_pending();
        let mut keys: Vec<u64> = self.dirty.drain().collect();
        keys.sort_unstable();
        let lb = self.line_bytes;
        let time = self
            .start_nanos
            .unwrap_or(0)
            .saturating_add(self.last_rel_nanos);
        for &k in &keys {
            self.c.backend.write_ops += 1;
            self.c.backend.write_bytes += lb;
            if let Some(out) = backend.as_deref_mut() {
                out.push(backend_event(
                    time,
                    crate::hash::split_block_key(k).0,
                    crate::hash::split_block_key(k).1 * lb,
                    lb,
                    Op::Write,
                ));
            }
        }
        *self.final_flush_lines.get_or_insert(0) += keys.len() as u64;
    }

    fn observe_impl(
        &mut self,
        e: &IoEvent,
        keep: impl Fn(u64) -> bool,
        mut sink: Option<&mut Vec<IoEvent>>,
    ) {
        let start = *self.start_nanos.get_or_insert(e.time_nanos);
        let rel = e.time_nanos.saturating_sub(start).max(self.last_rel_nanos);
        self.last_rel_nanos = rel;
        if self.at_warm.is_none() && rel >= self.config.warmup_nanos {
            self.at_warm = Some(self.c);
        }
        let before = (
            self.c.read.lines + self.c.write.lines,
            self.c.read.line_hits + self.c.write.line_hits,
            self.c.fills,
        );
        let counted = match e.op {
            Op::Flush => {
                self.c.flushes += 1;
                true
            }
            Op::Discard => self.discard(e, &keep),
            Op::Read => self.read(e, &keep, &mut sink),
            Op::Write => self.write(e, &keep, &mut sink),
        };
        if counted {
            let after = (
                self.c.read.lines + self.c.write.lines,
                self.c.read.line_hits + self.c.write.line_hits,
                self.c.fills,
            );
            let occupancy = self.policy.len();
            let bin = self.bin_for(rel);
            bin.requests += 1;
            bin.lines += after.0 - before.0;
            bin.line_hits += after.1 - before.1;
            bin.fills += after.2 - before.2;
            bin.occupancy_lines = occupancy;
        }
    }

    fn bin_for(&mut self, rel: u64) -> &mut TimeBin {
        // Fast path: still in the last bin (no division per event).
        if let Some(last) = self.bins.len().checked_sub(1) {
            let b = &self.bins[last];
            if rel >= b.start_nanos && rel - b.start_nanos < self.bin_nanos {
                return &mut self.bins[last];
            }
        }
        let max = self.config.time_bins;
        while rel / self.bin_nanos >= max as u64 && self.bin_nanos <= u64::MAX / 4 {
            // Merge pairs: bins double in width, their number halves.
            let old = std::mem::take(&mut self.bins);
            self.bin_nanos = self.bin_nanos.saturating_mul(2);
            for pair in old.chunks(2) {
                let mut b = pair[0];
                b.start_nanos = pair[0].start_nanos / self.bin_nanos * self.bin_nanos;
                if let Some(second) = pair.get(1) {
                    b.requests += second.requests;
                    b.lines += second.lines;
                    b.line_hits += second.line_hits;
                    b.fills += second.fills;
                    b.occupancy_lines = second.occupancy_lines;
                }
                self.bins.push(b);
            }
        }
        let idx = (rel / self.bin_nanos) as usize;
        while self.bins.len() <= idx {
            let occupancy = self.bins.last().map_or(0, |b| b.occupancy_lines);
            let start_nanos = self.bins.len() as u64 * self.bin_nanos;
            self.bins.push(TimeBin {
                start_nanos,
                occupancy_lines: occupancy,
                ..TimeBin::default()
            });
        }
        &mut self.bins[idx]
    }

    #[inline]
    fn line_span(&self, line: u64) -> (u64, u64) {
        let a = line * self.line_bytes;
        (a, a + self.line_bytes)
    }

    fn emit(&mut self, sink: &mut Option<&mut Vec<IoEvent>>, e: &IoEvent, op: Op, run: &mut Run) {
        if run.end_bytes <= run.start_bytes {
            return;
        }
        let len = run.end_bytes - run.start_bytes;
        match op {
            Op::Read => {
                self.c.backend.read_ops += 1;
                self.c.backend.read_bytes += len;
            }
            _ => {
                self.c.backend.write_ops += 1;
                self.c.backend.write_bytes += len;
            }
        }
        if let Some(out) = sink.as_deref_mut() {
            // IoEvent lengths are u32: split the (rare) runs longer than 2 GiB.
            let mut offset = run.start_bytes;
            while offset < run.end_bytes {
                let piece = (run.end_bytes - offset).min(1 << 31);
                out.push(backend_event(e.time_nanos, e.device, offset, piece, op));
                offset += piece;
            }
        }
        *run = NO_RUN;
    }

    /// Adds `[a, b)` to the request's run of back-end I/O of one kind, emitting the run when
    /// the new segment does not continue it.
    fn extend(
        &mut self,
        sink: &mut Option<&mut Vec<IoEvent>>,
        e: &IoEvent,
        op: Op,
        run: &mut Run,
        a: u64,
        b: u64,
    ) {
        if run.end_bytes > run.start_bytes && run.end_bytes != a {
            self.emit(sink, e, op, run);
        }
        if run.end_bytes <= run.start_bytes {
            *run = Run {
                start_bytes: a,
                end_bytes: b,
            };
        } else {
            run.end_bytes = b;
        }
    }

    fn handle_evictions(&mut self, sink: &mut Option<&mut Vec<IoEvent>>, e: &IoEvent) {
        if self.evicted.is_empty() {
            return;
        }
        let evicted = std::mem::take(&mut self.evicted);
        for &k in &evicted {
            self.c.evictions += 1;
            if self.config.mode == WriteMode::WriteBack && self.dirty.remove(&k) {
                self.c.dirty_evictions += 1;
                let lb = self.line_bytes;
                self.c.backend.write_ops += 1;
                self.c.backend.write_bytes += lb;
                if let Some(out) = sink.as_deref_mut() {
                    out.push(backend_event(
                        e.time_nanos,
                        crate::hash::split_block_key(k).0,
                        crate::hash::split_block_key(k).1 * lb,
                        lb,
                        Op::Write,
                    ));
                }
            }
        }
        self.evicted = evicted;
        self.evicted.clear();
    }

    /// Inserts after a miss (if admitted); returns whether the line is now cached.
    #[inline]
    fn fill(
        &mut self,
        sink: &mut Option<&mut Vec<IoEvent>>,
        e: &IoEvent,
        key: u64,
        now: u64,
        bypass: bool,
    ) -> bool {
        let cap = self.config.capacity_lines;
        if bypass || !self.admission.admit(key, self.policy.len(), cap) {
            self.c.bypassed_lines += 1;
            return false;
        }
        self.evicted.clear();
        let cached = self.policy.insert(key, now, &mut self.evicted);
        self.handle_evictions(sink, e);
        if cached {
            self.c.fills += 1;
            if self.time_to_warm_nanos.is_none() && self.policy.len() >= cap {
                self.time_to_warm_nanos = Some(self.last_rel_nanos);
            }
        }
        cached
    }

    /// Open CAS n-hit, decided per request before it runs: see `cache/admission.rs`.
    fn nhit_promotes(&mut self, e: &IoEvent, keep: &impl Fn(u64) -> bool) -> bool {
        if !self.admission.nhit_enabled() {
            return true;
        }
        if !self
            .admission
            .nhit_active(self.policy.len(), self.config.capacity_lines)
        {
            return true;
        }
        let Some(lines) = accessed_lines(e, self.line_bytes) else {
            return true;
        };
        let (mut all, mut any_cached) = (true, false);
        for line in lines.clone().filter(|&l| keep(l)) {
            let key = block_key(e.device, line);
            any_cached |= self.policy.contains(key);
            all &= self.admission.nhit_count(key);
        }
        let promote = all || any_cached;
        if promote {
            for line in lines.filter(|&l| keep(l)) {
                self.admission.nhit_purge(block_key(e.device, line));
            }
        }
        promote
    }

    #[inline]
    fn lookup(
        &mut self,
        sink: &mut Option<&mut Vec<IoEvent>>,
        e: &IoEvent,
        key: u64,
        now: u64,
    ) -> bool {
        self.admission.touch(key);
        self.evicted.clear();
        let hit = self.policy.access(key, now, &mut self.evicted);
        self.handle_evictions(sink, e);
        hit
    }

    fn read(
        &mut self,
        e: &IoEvent,
        keep: &impl Fn(u64) -> bool,
        sink: &mut Option<&mut Vec<IoEvent>>,
    ) -> bool {
        let Some(lines) = accessed_lines(e, self.line_bytes) else {
            return false;
        };
        let bypass = self.admission.bypass_request(e) || !self.nhit_promotes(e, keep);
        let (mut any, mut all_hit) = (false, true);
        let mut run = NO_RUN;
        for line in lines {
            if !keep(line) {
                continue;
            }
            any = true;
            let key = block_key(e.device, line);
            let now = self.vtime;
            self.vtime += 1;
            self.c.read.lines += 1;
            if self.lookup(sink, e, key, now) {
                self.c.read.line_hits += 1;
                continue;
            }
            all_hit = false;
            let (a, b) = self.line_span(line);
            let (a, b) = if self.fill(sink, e, key, now, bypass) {
                (a, b)
            } else {
                (a.max(e.offset_bytes), b.min(e.end_bytes()))
            };
            self.extend(sink, e, Op::Read, &mut run, a, b);
        }
        self.emit(sink, e, Op::Read, &mut run);
        if any {
            self.c.read.requests += 1;
            self.c.read.bytes += u64::from(e.len_bytes);
            if all_hit {
                self.c.read.request_hits += 1;
            }
        }
        any
    }

    fn write(
        &mut self,
        e: &IoEvent,
        keep: &impl Fn(u64) -> bool,
        sink: &mut Option<&mut Vec<IoEvent>>,
    ) -> bool {
        let Some(lines) = accessed_lines(e, self.line_bytes) else {
            return false;
        };
        let mode = self.config.mode;
        let allocates = matches!(mode, WriteMode::WriteThrough | WriteMode::WriteBack);
        let bypass =
            self.admission.bypass_request(e) || (allocates && !self.nhit_promotes(e, keep));
        let (mut any, mut all_hit) = (false, true);
        let mut fill_run = NO_RUN;
        let mut write_run = NO_RUN;
        for line in lines {
            if !keep(line) {
                continue;
            }
            any = true;
            let key = block_key(e.device, line);
            let now = self.vtime;
            self.vtime += 1;
            self.c.write.lines += 1;
            if mode == WriteMode::ReadOnly {
                all_hit = false;
                if self.policy.remove(key) {
                    self.c.invalidations += 1;
                }
                continue;
            }
            if self.lookup(sink, e, key, now) {
                self.c.write.line_hits += 1;
                if mode == WriteMode::WriteBack {
                    self.dirty.insert(key);
                }
                continue;
            }
            all_hit = false;
            if mode == WriteMode::WriteAround {
                continue;
            }
            let (a, b) = self.line_span(line);
            if self.fill(sink, e, key, now, bypass) {
                if a < e.offset_bytes || b > e.end_bytes() {
                    self.c.fill_reads += 1;
                    self.extend(sink, e, Op::Read, &mut fill_run, a, b);
                }
                if mode == WriteMode::WriteBack {
                    self.dirty.insert(key);
                }
            } else if mode == WriteMode::WriteBack {
                self.extend(
                    sink,
                    e,
                    Op::Write,
                    &mut write_run,
                    a.max(e.offset_bytes),
                    b.min(e.end_bytes()),
                );
            }
        }
        self.emit(sink, e, Op::Read, &mut fill_run);
        if mode == WriteMode::WriteBack {
            self.emit(sink, e, Op::Write, &mut write_run);
        } else if any {
            let mut whole = Run {
                start_bytes: e.offset_bytes,
                end_bytes: e.end_bytes(),
            };
            self.emit(sink, e, Op::Write, &mut whole);
        }
        if any {
            self.c.write.requests += 1;
            self.c.write.bytes += u64::from(e.len_bytes);
            if all_hit {
                self.c.write.request_hits += 1;
            }
        }
        any
    }

    fn discard(&mut self, e: &IoEvent, keep: &impl Fn(u64) -> bool) -> bool {
        if e.len_bytes == 0 {
            return false;
        }
        let mut any = false;
        for line in e.block_range(self.line_bytes) {
            if !keep(line) {
                continue;
            }
            any = true;
            let key = block_key(e.device, line);
            if self.policy.remove(key) {
                self.c.invalidations += 1;
            }
            self.dirty.remove(&key);
        }
        if any {
            self.c.discards += 1;
        }
        any
    }

    /// Ends the simulation: flushes dirty lines (write-back) and returns the results.
    pub fn finish(mut self) -> SimResult {
        self.drain_pending();
        if self.final_flush_lines.is_none() {
            self.flush_dirty(None);
        }
        let final_flush_lines = self.final_flush_lines.unwrap_or(0);
        let whole = self.c;
        let warmup_longer_than_trace = self.at_warm.is_none() && self.start_nanos.is_some();
        // The final flush is counted after the warm-up snapshot, so it lands in both windows.
        let after = match self.at_warm {
            Some(at) => whole.minus(&at),
            None => Counters::default(),
        };
        let memory_bytes = (self.policy.heap_bytes()
            + self.admission.heap_bytes()
            + self.dirty.capacity() * 9
            + self.bins.capacity() * std::mem::size_of::<TimeBin>())
            as u64;
        SimResult {
            capacity_bytes: self.config.capacity_lines.saturating_mul(self.line_bytes),
            whole: Summary::of(whole),
            after_warmup: Summary::of(after),
            warmup_longer_than_trace,
            final_flush_lines,
            final_flush_bytes: final_flush_lines * self.line_bytes,
            time_to_warm_nanos: self.time_to_warm_nanos,
            duration_nanos: self.last_rel_nanos,
            occupancy_lines: self.policy.len(),
            bin_nanos: self.bin_nanos,
            bins: self.bins,
            memory_bytes,
            config: self.config,
        }
    }
}

fn backend_event(
    time_nanos: u64,
    device: u32,
    offset_bytes: u64,
    len_bytes: u64,
    op: Op,
) -> IoEvent {
    IoEvent {
        time_nanos,
        device,
        offset_bytes,
        len_bytes: u32::try_from(len_bytes).unwrap_or(u32::MAX),
        op,
        latency_nanos: None,
        pid: None,
    }
}

/// Simulates `events` (a replayable slice) with `config`, building Belady's future in a first
/// pass when the policy needs it.
pub fn simulate(config: &SimConfig, events: &[IoEvent]) -> Result<SimResult, ConfigError> {
    let mut sim = if config.policy.needs_future() {
        Simulator::with_future(config, NextUse::from_events(events, config.line_bytes))?
    } else {
        Simulator::new(config)?
    };
    for e in events {
        sim.observe(e);
    }
    Ok(sim.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB4: u64 = 4096;

    fn ev(t: u64, op: Op, offset_bytes: u64, len_bytes: u32) -> IoEvent {
        IoEvent {
            time_nanos: t,
            device: 0,
            offset_bytes,
            len_bytes,
            op,
            latency_nanos: None,
            pid: None,
        }
    }

    fn run(config: &SimConfig, events: &[IoEvent]) -> SimResult {
        simulate(config, events).expect("valid config")
    }

    #[test]
    fn a_request_hits_only_if_all_its_lines_hit() {
        let c = SimConfig::new(PolicyKind::Lru, 16, KIB4);
        let r = run(
            &c,
            &[
                ev(0, Op::Read, 0, 4096),
                ev(1, Op::Read, 0, 8192),
                ev(2, Op::Read, 0, 8192),
            ],
        );
        let read = r.whole.counts.read;
        assert_eq!((read.lines, read.line_hits), (5, 3));
        assert_eq!((read.requests, read.request_hits), (3, 1));
        // Back-end: line 0, then line 1 alone (line 0 hit), nothing on the third read.
        assert_eq!(r.whole.counts.backend.read_ops, 2);
        assert_eq!(r.whole.counts.backend.read_bytes, 2 * KIB4);
    }

    #[test]
    fn read_only_mode_invalidates_on_write() {
        let mut c = SimConfig::new(PolicyKind::Lru, 16, KIB4);
        c.mode = WriteMode::ReadOnly;
        let r = run(
            &c,
            &[
                ev(0, Op::Read, 0, 4096),
                ev(1, Op::Write, 0, 4096),
                ev(2, Op::Read, 0, 4096),
            ],
        );
        assert_eq!(r.whole.counts.read.line_hits, 0);
        assert_eq!(r.whole.counts.invalidations, 1);
        assert_eq!(r.whole.counts.backend.write_ops, 1);
        assert_eq!(r.whole.counts.backend.read_ops, 2);
    }

    #[test]
    fn write_back_absorbs_writes_and_pays_on_eviction_and_flush() {
        let mut c = SimConfig::new(PolicyKind::Fifo, 2, KIB4);
        c.mode = WriteMode::WriteBack;
        let events = [
            ev(0, Op::Write, 0, 4096),
            ev(1, Op::Write, 0, 4096),
            ev(2, Op::Write, 4096, 4096),
            ev(3, Op::Write, 8192, 4096),  // evicts dirty line 0
            ev(4, Op::Write, 12288, 2048), // partial: fill read, evicts dirty line 1
        ];
        let r = run(&c, &events);
        let w = r.whole.counts;
        assert_eq!(w.write.line_hits, 1);
        assert_eq!(w.dirty_evictions, 2);
        assert_eq!(w.fill_reads, 1);
        assert_eq!(r.final_flush_lines, 2);
        assert_eq!(w.backend.write_ops, 4);
        assert_eq!(w.backend.write_bytes, 4 * KIB4);
        assert_eq!(w.backend.read_ops, 1);
    }

    #[test]
    fn write_around_does_not_allocate_on_write() {
        let mut c = SimConfig::new(PolicyKind::Lru, 16, KIB4);
        c.mode = WriteMode::WriteAround;
        let r = run(
            &c,
            &[
                ev(0, Op::Write, 0, 4096),
                ev(1, Op::Read, 0, 4096),
                ev(2, Op::Write, 0, 4096),
            ],
        );
        assert_eq!(r.whole.counts.read.line_hits, 0);
        assert_eq!(r.whole.counts.write.line_hits, 1);
        assert_eq!(r.whole.counts.backend.write_ops, 2);
    }

    #[test]
    fn warm_up_window_splits_the_figures() {
        let mut c = SimConfig::new(PolicyKind::Lru, 16, KIB4);
        c.warmup_nanos = 10;
        let r = run(
            &c,
            &[
                ev(0, Op::Read, 0, 4096),
                ev(5, Op::Read, 4096, 4096),
                ev(10, Op::Read, 0, 4096),
                ev(20, Op::Read, 4096, 4096),
            ],
        );
        assert_eq!(r.whole.counts.read.requests, 4);
        assert_eq!(r.after_warmup.counts.read.requests, 2);
        assert_eq!(r.after_warmup.ratios.read_line_hit_ratio, Some(1.0));
        assert_eq!(r.whole.ratios.read_line_hit_ratio, Some(0.5));
    }

    #[test]
    fn backend_events_match_the_counters() {
        let mut c = SimConfig::new(PolicyKind::Arc, 8, KIB4);
        c.mode = WriteMode::WriteBack;
        let mut sim = Simulator::new(&c).expect("valid");
        let mut backend = Vec::new();
        for i in 0..500u64 {
            let op = if i % 3 == 0 { Op::Write } else { Op::Read };
            let off = (i * 7919 % 40) * 4096 + (i % 2) * 512;
            sim.observe_with_backend(&ev(i, op, off, 6000), &mut backend);
        }
        sim.flush_dirty(Some(&mut backend));
        let r = sim.finish();
        let b = r.whole.counts.backend;
        let reads: Vec<_> = backend.iter().filter(|e| e.op == Op::Read).collect();
        let writes: Vec<_> = backend.iter().filter(|e| e.op == Op::Write).collect();
        assert_eq!(reads.len() as u64, b.read_ops);
        assert_eq!(writes.len() as u64, b.write_ops);
        assert_eq!(
            reads.iter().map(|e| u64::from(e.len_bytes)).sum::<u64>(),
            b.read_bytes
        );
        assert_eq!(
            writes.iter().map(|e| u64::from(e.len_bytes)).sum::<u64>(),
            b.write_bytes
        );
    }

    #[test]
    fn write_backs_keep_the_device_and_its_offset() {
        // Dirty lines of device 3 written back on eviction and at the final flush must land on
        // device 3 at the line's own offset (the block key holds the device in its high bits).
        let mut c = SimConfig::new(PolicyKind::Lru, 2, KIB4);
        c.mode = WriteMode::WriteBack;
        let mut sim = Simulator::new(&c).expect("valid");
        let mut backend = Vec::new();
        for i in 0..6u64 {
            let mut e = ev(i, Op::Write, (1000 + i) * 4096, 4096);
            e.device = 3;
            sim.observe_with_backend(&e, &mut backend);
        }
        sim.flush_dirty(Some(&mut backend));
        let mut writes: Vec<(u32, u64)> = backend
            .iter()
            .filter(|e| e.op == Op::Write)
            .map(|e| (e.device, e.offset_bytes))
            .collect();
        writes.sort_unstable();
        let expected: Vec<(u32, u64)> = (0..6u64).map(|i| (3, (1000 + i) * 4096)).collect();
        assert_eq!(writes, expected);
    }

    #[test]
    fn sequential_cutoff_keeps_a_scan_out() {
        let mut c = SimConfig::new(PolicyKind::Lru, 64, KIB4);
        c.admission = Admission::SeqCutoff {
            cutoff_bytes: 64 * 1024,
        };
        let scan: Vec<IoEvent> = (0..100u64)
            .map(|i| ev(i, Op::Read, i * 65536, 65536))
            .collect();
        let r = run(&c, &scan);
        // The first request (64 KiB) reaches the cutoff already.
        assert_eq!(r.whole.counts.fills, 0);
        assert_eq!(r.whole.counts.bypassed_lines, 1600);
    }

    #[test]
    fn time_bins_stay_bounded() {
        let mut c = SimConfig::new(PolicyKind::Lru, 64, KIB4);
        c.time_bins = 10;
        let events: Vec<IoEvent> = (0..10_000u64)
            .map(|i| ev(i * 1_000_000_000, Op::Read, (i % 100) * 4096, 4096))
            .collect();
        let r = run(&c, &events);
        assert!(r.bins.len() <= 10, "{}", r.bins.len());
        assert_eq!(r.bins.iter().map(|b| b.requests).sum::<u64>(), 10_000);
        assert_eq!(
            r.bins.iter().map(|b| b.line_hits).sum::<u64>(),
            r.whole.counts.read.line_hits
        );
        assert!(r.time_to_warm_nanos.is_some());
    }

    #[test]
    fn filtered_lines_are_skipped_and_belady_needs_the_future() {
        let c = SimConfig::new(PolicyKind::Belady, 4, KIB4);
        assert!(matches!(Simulator::new(&c), Err(ConfigError::NeedsFuture)));
        let mut lru = Simulator::new(&SimConfig::new(PolicyKind::Lru, 8, KIB4)).expect("valid");
        for i in 0..100u64 {
            lru.observe_filtered(&ev(i, Op::Read, (i % 10) * 4096, 4096), |line| {
                line % 2 == 0
            });
        }
        let r = lru.finish();
        assert_eq!(r.whole.counts.read.requests, 50);
        assert_eq!(r.whole.counts.read.line_hits, 45);
    }

    #[test]
    fn nhit_promotes_a_request_on_its_third_access_once_the_cache_is_full() {
        let mut c = SimConfig::new(PolicyKind::Lru, 4, KIB4);
        c.admission = Admission::NHit { n: 3 };
        let mut sim = Simulator::new(&c).expect("valid");
        // Fill the cache (below the 80% trigger everything is promoted).
        for i in 0..4u64 {
            sim.observe(&ev(i, Op::Read, i * 4096, 4096));
        }
        assert_eq!(sim.occupancy_lines(), 4);
        // A new line is promoted on its third access only.
        for t in 0..3u64 {
            sim.observe(&ev(10 + t, Op::Read, 100 * 4096, 4096));
        }
        let r = sim.finish();
        assert_eq!(r.whole.counts.fills, 5);
        assert_eq!(r.whole.counts.bypassed_lines, 2);
    }

    #[test]
    fn a_batch_equals_one_event_at_a_time() {
        let events: Vec<IoEvent> = (0..5_000u64)
            .map(|i| {
                let op = if i % 5 == 0 { Op::Write } else { Op::Read };
                let block = crate::hash::mix64(i) % 900;
                ev(
                    i,
                    op,
                    block * 4096 + (i % 3) * 512,
                    4096 * (1 + (i % 4) as u32),
                )
            })
            .collect();
        for policy in PolicyKind::ALL {
            if policy.needs_future() {
                continue;
            }
            let mut c = SimConfig::new(policy, 200, KIB4);
            c.mode = WriteMode::WriteBack;
            let mut one = Simulator::new(&c).expect("valid");
            events.iter().for_each(|e| one.observe(e));
            let one = one.finish();
            // Batches shorter and longer than the read-ahead distance and its double.
            for size in [
                1,
                5,
                PREFETCH_AHEAD - 1,
                PREFETCH_AHEAD + 1,
                2 * PREFETCH_AHEAD + 3,
                777,
            ] {
                let mut batch = Simulator::new(&c).expect("valid");
                for part in events.chunks(size) {
                    batch.observe_batch(part);
                }
                assert_eq!(batch.finish(), one, "{policy:?}, batches of {size}");
            }
            let mut buffered = Simulator::new(&c).expect("valid");
            events.iter().for_each(|e| buffered.observe_buffered(e));
            assert_eq!(buffered.finish(), one, "{policy:?}, buffered");
            // Buffered events with single ones and batches between them, which simulate what
            // is buffered first: at every fill of the buffer in turn.
            let mut mixed = Simulator::new(&c).expect("valid");
            let mut i = 0;
            let mut step = 0;
            while i < events.len() {
                step += 1;
                match step % 4 {
                    0 => mixed.observe(&events[i]),
                    1 => {
                        let end = (i + step % 7).min(events.len());
                        mixed.observe_batch(&events[i..end]);
                        i = end;
                        continue;
                    }
                    _ => {
                        let end = (i + step % (2 * PREFETCH_AHEAD + 5)).min(events.len());
                        events[i..end]
                            .iter()
                            .for_each(|e| mixed.observe_buffered(e));
                        i = end;
                        continue;
                    }
                }
                i += 1;
            }
            assert_eq!(mixed.finish(), one, "{policy:?}, mixed");
        }
    }

    #[test]
    fn bad_configs_are_rejected() {
        assert_eq!(
            SimConfig::new(PolicyKind::Lru, 0, KIB4).validate(),
            Err(ConfigError::ZeroCapacity)
        );
        assert_eq!(
            SimConfig::new(PolicyKind::Lru, 1, 1000).validate(),
            Err(ConfigError::LineSize(1000))
        );
        assert_eq!(
            SimConfig::new(PolicyKind::Lru, 1, 2 << 20).validate(),
            Err(ConfigError::LineSize(2 << 20))
        );
    }
}
