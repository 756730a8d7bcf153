//! The first look at a trace: `stat`'s summary and the workload analysis (hot data, access
//! pattern, latency, timeline, heat maps), on the whole trace or a time window, in one pass.
//!
//! Hot data costs about as much as the rest of the analysis together, so a host with two cores
//! can count it apart ([`crate::analysis::AnalysisPart`]), with `stat`'s summary beside it (which
//! balances the two parts better: measured, docs/benchmarks.md): a [`Load`] of the request with `part: Rest`
//! and a [`LoadHot`] of the same request, each fed every event (two web workers each reading the
//! file), joined with [`Load::join_hot`]; or, natively, [`Load::with_threads`] (feature
//! `threads`), which feeds a [`LoadHot`] on a thread of its own. Either way the result is the
//! whole load's, to the last digit.

use serde::{Deserialize, Serialize};

use super::{Job, JobError, WindowFilter, WindowNanos};
use crate::analysis::hot::HotPart;
use crate::analysis::timeline::TimelineReport;
use crate::analysis::{Analysis, AnalysisConfig, AnalysisPart, AnalysisReport};
use crate::stat::{Stat, StatSummary};
use crate::{Diagnostics, IoEvent, TraceHeader};

/// What to compute.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadRequest {
    #[serde(default)]
    pub window_nanos: WindowNanos,
    /// Run the workload analysis too (`stat` alone when false).
    pub analysis: bool,
    /// Hot-data granularity and cache line of the analysis's curve (4 KiB … 1 MiB).
    pub block_bytes: u64,
    /// Distinct blocks counted exactly before hot data samples.
    pub exact_block_limit: u64,
    /// The analysis's LRU curve exactly (memory grows with the footprint) instead of SHARDS.
    #[serde(default)]
    pub exact_mrc: bool,
    /// Rows of the per-device table (`analyze --per-device --top N`, the Overview's devices);
    /// 0 leaves it out.
    #[serde(default)]
    pub device_rows: u32,
    /// The share of the analysis a [`Load`] computes: the whole, or all but hot data and
    /// `stat` (joined with a [`LoadHot`]'s). A [`LoadHot`] ignores it.
    #[serde(default)]
    pub part: AnalysisPart,
}

/// Rows of the per-device table unless a host asks for another count (`analyze --per-device`'s
/// `--top`, the web app's Overview, a report).
pub const DEFAULT_DEVICE_ROWS: u32 = 20;

impl LoadRequest {
    /// What the web app's load and `blocksight report` compute: the defaults plus the
    /// per-device table the Overview shows.
    pub fn app() -> LoadRequest {
        LoadRequest {
            device_rows: DEFAULT_DEVICE_ROWS,
            ..LoadRequest::new()
        }
    }

    /// Stat and the analysis with their defaults, whole trace.
    pub fn new() -> LoadRequest {
        let d = AnalysisConfig::default();
        LoadRequest {
            window_nanos: None,
            analysis: true,
            block_bytes: d.block_bytes,
            exact_block_limit: d.exact_block_limit,
            exact_mrc: false,
            device_rows: 0,
            part: AnalysisPart::Whole,
        }
    }

    fn validate(&self) -> Result<(), JobError> {
        let b = self.block_bytes;
        if !b.is_power_of_two() || !(4096..=1 << 20).contains(&b) {
            return Err(JobError::invalid(
                format!("block size {b}"),
                "a power of two from 4 KiB to 1 MiB",
            ));
        }
        Ok(())
    }

    fn config(&self) -> AnalysisConfig {
        let d = AnalysisConfig::default();
        AnalysisConfig {
            block_bytes: self.block_bytes,
            exact_block_limit: self.exact_block_limit.max(64),
            mrc_sample_lines: if self.exact_mrc {
                0
            } else {
                d.mrc_sample_lines
            },
            device_rows: self.device_rows,
            ..d
        }
    }
}

impl Default for LoadRequest {
    fn default() -> Self {
        LoadRequest::new()
    }
}

/// What `blocksight stat --json` (the `stat` part) and `analyze --json` (the `analysis`
/// part) print, and what the worker's load posts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadResult {
    pub stat: StatSummary,
    pub analysis: Option<AnalysisReport>,
}

/// What a [`LoadHot`] computes: `stat`'s summary and hot data's share of the analysis (`None`
/// for a request without the analysis), for [`Load::join_hot`]. Small: no per-block data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadHotResult {
    pub stat: StatSummary,
    pub hot: Option<HotPart>,
}

/// Everything the web app's views show for one trace: what its worker posts after a load and
/// what `blocksight report` embeds (as JSON) in a report, one type for both.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceResults {
    pub file_name: String,
    pub file_bytes: u64,
    pub format: String,
    pub format_description: String,
    /// `gzip`, `zstd`, or `none`.
    pub compression: String,
    pub host: Option<String>,
    pub stat: StatSummary,
    pub analysis: AnalysisReport,
    /// In a report whose embedded trace copy is a spatial sample: its rate. `None` when the copy
    /// is the whole trace (or for a live load).
    #[serde(default)]
    pub embedded_sample_rate: Option<f64>,
}

/// The load job.
pub struct Load {
    request: LoadRequest,
    batch: Batch,
    stat: Stat,
    analysis: Option<Analysis>,
    /// The analysis's share: `Rest` when hot data and `stat` are counted elsewhere (a
    /// [`LoadHot`] joined with [`Load::join_hot`], or this job's own thread).
    part: AnalysisPart,
    events: u64,
    /// Set by the pass's end: what the results need.
    ended: Option<(TraceHeader, Diagnostics)>,
    /// `stat` and hot data's share, for a `Rest` analysis.
    hot: Option<LoadHotResult>,
    /// A `Rest` load of `stat` alone on `Load::with_threads`: this load counts what the
    /// requests are ([`crate::stat::StatPart::Counts`]), the thread where they go
    /// ([`crate::stat::StatPart::Places`]).
    counts_here: bool,
    #[cfg(feature = "threads")]
    hot_thread: Option<threads::HotThread>,
}

/// Events handed to the accumulators at once (enough to overlap a few dozen cache misses).
const LOAD_BATCH_EVENTS: usize = 32;

/// The window and the admitted events not yet handed over, of both load jobs: the accumulators
/// take them [`LOAD_BATCH_EVENTS`] at a time so that their table look-ups' cache misses overlap.
struct Batch {
    window: WindowFilter,
    pending: Vec<IoEvent>,
}

impl Batch {
    fn new(window: WindowNanos) -> Batch {
        Batch {
            window: WindowFilter::new(window),
            pending: Vec::with_capacity(LOAD_BATCH_EVENTS),
        }
    }

    /// Keeps `e` if the window admits it: `None` when it does not, else whether the batch is
    /// full.
    fn push(&mut self, e: &IoEvent) -> Option<bool> {
        if !self.window.admits(e) {
            return None;
        }
        self.pending.push(*e);
        Some(self.pending.len() >= LOAD_BATCH_EVENTS)
    }

    /// Whether every event is admitted (no time window): a host's batch can then be handed
    /// over as it is, with no copy into `pending`.
    fn admits_all(&self) -> bool {
        self.window.is_whole()
    }
}

impl Load {
    pub fn new(request: LoadRequest) -> Result<Load, JobError> {
        request.validate()?;
        if request.part == AnalysisPart::HotData {
            return Err(JobError::invalid(
                "load part hot_data",
                "whole or rest (hot data alone is the LoadHot job)",
            ));
        }
        let part = request.part;
        Ok(Load::build(request, part))
    }

    /// A load of `request` computing `part` of the analysis (a validated request).
    fn build(request: LoadRequest, part: AnalysisPart) -> Load {
        Load {
            batch: Batch::new(request.window_nanos),
            stat: Stat::new(),
            analysis: request
                .analysis
                .then(|| Analysis::part(request.config(), part)),
            part,
            request,
            events: 0,
            ended: None,
            hot: None,
            counts_here: false,
            #[cfg(feature = "threads")]
            hot_thread: None,
        }
    }

    /// A load that counts hot data and `stat` on a thread of its own when `threads` is 2 or
    /// more (and the request is for the whole analysis, or for `stat` alone): the same result,
    /// sooner on two cores by as much as that share of the work (0.6 s of 1.7 s on a 1.1
    /// M-request trace with 7 M distinct blocks; `stat` alone, by the time the decoder leaves to
    /// the summary: docs/benchmarks.md). Native hosts.
    #[cfg(feature = "threads")]
    pub fn with_threads(request: LoadRequest, threads: usize) -> Result<Load, JobError> {
        let split = threads > 1 && (!request.analysis || request.part == AnalysisPart::Whole);
        if split && request.validate().is_ok() {
            // The timeline goes with hot data too: the rest is the busier part (docs/benchmarks.md).
            let mut hot = LoadHot::unwindowed(&request);
            if let Some(a) = hot.analysis.as_mut() {
                a.move_timeline(true);
            }
            // `stat` alone: the thread counts where the requests go (the footprint and the
            // streams: two thirds of `stat`'s work on a large trace), this one the rest beside
            // its decoding, which left it idle half the time (docs/benchmarks.md). With the analysis this
            // thread is the busier one already.
            let counts_here = !request.analysis;
            if counts_here {
                hot.stat = Stat::part(crate::stat::StatPart::Places);
            }
            if let Some(thread) = threads::HotThread::start(hot) {
                let mut load = Load::build(request, AnalysisPart::Rest);
                if let Some(a) = load.analysis.as_mut() {
                    a.move_timeline(false);
                }
                if counts_here {
                    load.stat = Stat::part(crate::stat::StatPart::Counts);
                    load.counts_here = true;
                }
                load.hot_thread = Some(thread);
                return Ok(load);
            }
        }
        Load::new(request)
    }

    /// Gives a `part: Rest` load `stat` and hot data's share: the result of a [`LoadHot`] of
    /// the same request over the same input. Needed before [`Job::finish`].
    pub fn join_hot(&mut self, hot: LoadHotResult) {
        self.hot = Some(hot);
    }

    /// Events inside the window so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The load over time of every event so far (the live chart while a large trace is read):
    /// the pending batch is handed over first, which changes no result (batches are only a
    /// speed-up). `None` before the first event, without the analysis, or when the timeline is
    /// counted on [`Load::with_threads`]'s thread.
    pub fn timeline_so_far(&mut self) -> Option<TimelineReport> {
        if !self
            .analysis
            .as_ref()
            .is_some_and(Analysis::counts_timeline)
            || self.events == 0
        {
            return None;
        }
        self.flush();
        self.analysis.as_ref().map(Analysis::timeline_so_far)
    }

    pub fn request(&self) -> &LoadRequest {
        &self.request
    }

    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.batch.pending);
        self.hand_over(&pending);
        self.batch.pending = pending;
        self.batch.pending.clear();
    }

    /// Admitted events, in order, to the accumulators (`stat` [`LOAD_BATCH_EVENTS`] at a time,
    /// the size its read-ahead is measured at; the analysis reads ahead within any batch).
    fn hand_over(&mut self, events: &[IoEvent]) {
        if self.counts_here {
            // No footprint here, so no table to read ahead in batches.
            self.stat.observe_batch(events);
        } else if self.part != AnalysisPart::Rest {
            for chunk in events.chunks(LOAD_BATCH_EVENTS) {
                self.stat.observe_batch(chunk);
            }
        }
        if let Some(a) = self.analysis.as_mut() {
            a.observe_batch(events);
        }
        #[cfg(feature = "threads")]
        if let Some(t) = self.hot_thread.as_mut() {
            t.push(events);
        }
    }
}

impl Job for Load {
    type Output = LoadResult;

    fn passes(&self) -> usize {
        1
    }

    fn begin_pass(&mut self, _pass: usize) {
        self.batch.window.reset();
    }

    fn observe(&mut self, e: &IoEvent) {
        let Some(full) = self.batch.push(e) else {
            return;
        };
        self.events += 1;
        if full {
            self.flush();
        }
    }

    fn observe_batch(&mut self, events: &[IoEvent]) {
        if !self.batch.admits_all() {
            for e in events {
                self.observe(e);
            }
            return;
        }
        // No window: the host's batch goes over as it is, after any events still pending.
        self.events += events.len() as u64;
        if !self.batch.pending.is_empty() {
            self.flush();
        }
        self.hand_over(events);
    }

    fn end_pass(
        &mut self,
        header: &TraceHeader,
        diagnostics: &Diagnostics,
    ) -> Result<(), JobError> {
        self.flush();
        #[cfg(feature = "threads")]
        if let Some(t) = self.hot_thread.take() {
            self.hot = Some(t.finish(header, diagnostics)?);
        }
        self.ended = Some((header.clone(), diagnostics.clone()));
        Ok(())
    }

    fn finish(self) -> Result<LoadResult, JobError> {
        let (header, diagnostics) = self
            .ended
            .ok_or_else(|| JobError::invalid("load", "the trace was not read"))?;
        if self.part != AnalysisPart::Rest {
            return Ok(LoadResult {
                stat: self.stat.finish(&header, &diagnostics),
                analysis: self.analysis.map(|a| a.finish(&header, &diagnostics)),
            });
        }
        let missing = || JobError::invalid("load part rest", "joined with its hot data's part");
        let joined = self.hot.ok_or_else(missing)?;
        let analysis = match self.analysis {
            Some(a) => {
                let hot = joined.hot.as_ref().ok_or_else(missing)?;
                Some(a.finish_with_hot(&header, &diagnostics, hot))
            }
            None => None,
        };
        let stat = if self.counts_here {
            self.stat
                .finish(&header, &diagnostics)
                .with_places_of(&joined.stat)
        } else {
            joined.stat
        };
        Ok(LoadResult { analysis, stat })
    }
}

/// Hot data's share of a load ([`crate::analysis::AnalysisPart::HotData`]) and `stat`'s
/// summary: run over the same input as a `part: Rest` [`Load`] of the same request, and joined
/// to it with [`Load::join_hot`].
pub struct LoadHot {
    batch: Batch,
    stat: Stat,
    /// Hot data's share; `None` for a request of `stat` alone.
    analysis: Option<Analysis>,
    result: Option<LoadHotResult>,
}

impl LoadHot {
    /// Hot data's share of `request` (its `part` is not read), or `stat` alone for a request
    /// without the analysis.
    pub fn new(request: &LoadRequest) -> Result<LoadHot, JobError> {
        request.validate()?;
        let mut hot = LoadHot::unwindowed(request);
        hot.batch = Batch::new(request.window_nanos);
        Ok(hot)
    }

    /// Without the request's window: fed only the events a [`Load`] admitted.
    fn unwindowed(request: &LoadRequest) -> LoadHot {
        LoadHot {
            batch: Batch::new(None),
            stat: Stat::new(),
            analysis: request
                .analysis
                .then(|| Analysis::part(request.config(), AnalysisPart::HotData)),
            result: None,
        }
    }

    /// Admitted events, in order (the load's thread, or this job's own `observe`): `stat`
    /// [`LOAD_BATCH_EVENTS`] at a time, as in [`Load`].
    fn take(&mut self, events: &[IoEvent]) {
        for chunk in events.chunks(LOAD_BATCH_EVENTS) {
            self.stat.observe_batch(chunk);
        }
        if let Some(a) = self.analysis.as_mut() {
            a.observe_batch(events);
        }
    }

    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.batch.pending);
        self.take(&pending);
        self.batch.pending = pending;
        self.batch.pending.clear();
    }

    /// The result, at the end of the input.
    fn end(&self, header: &TraceHeader, diagnostics: &Diagnostics) -> LoadHotResult {
        LoadHotResult {
            stat: self.stat.finish(header, diagnostics),
            hot: self.analysis.as_ref().map(|a| a.finish_hot(header)),
        }
    }
}

impl Job for LoadHot {
    type Output = LoadHotResult;

    fn passes(&self) -> usize {
        1
    }

    fn begin_pass(&mut self, _pass: usize) {
        self.batch.window.reset();
    }

    fn observe(&mut self, e: &IoEvent) {
        if self.batch.push(e) == Some(true) {
            self.flush();
        }
    }

    fn observe_batch(&mut self, events: &[IoEvent]) {
        if !self.batch.admits_all() {
            for e in events {
                self.observe(e);
            }
            return;
        }
        if !self.batch.pending.is_empty() {
            self.flush();
        }
        self.take(events);
    }

    fn end_pass(
        &mut self,
        header: &TraceHeader,
        diagnostics: &Diagnostics,
    ) -> Result<(), JobError> {
        self.flush();
        self.result = Some(self.end(header, diagnostics));
        Ok(())
    }

    fn finish(self) -> Result<LoadHotResult, JobError> {
        self.result
            .ok_or_else(|| JobError::invalid("load's hot data", "the trace was not read"))
    }
}

/// [`Load::with_threads`]'s thread.
#[cfg(feature = "threads")]
mod threads;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Op;

    /// Events on three devices: skewed reads and writes with some scans, a discard now and
    /// then, a millisecond apart.
    fn trace(n: u64) -> (TraceHeader, Vec<IoEvent>) {
        let events = (0..n)
            .map(|i| {
                let r = crate::hash::mix64(i);
                let block = if r % 10 == 0 {
                    i % 50_000
                } else {
                    (r >> 20) % (1 + (r >> 8) % 30_000)
                };
                IoEvent {
                    time_nanos: i * 1_000_000,
                    device: (r % 3) as u32,
                    offset_bytes: block * 4096,
                    len_bytes: 4096 << ((r >> 40) % 4),
                    op: match r % 50 {
                        0 => Op::Discard,
                        1..=15 => Op::Write,
                        _ => Op::Read,
                    },
                    latency_nanos: Some(50_000 + r % 1_000_000),
                    pid: None,
                }
            })
            .collect();
        let mut header = TraceHeader::new("test");
        for d in 0..3 {
            header
                .devices
                .push(crate::event::DeviceInfo::named(format!("d{d}")));
        }
        (header, events)
    }

    /// A `part: Rest` load of `request` that has read `events`, to be joined.
    fn observed_rest(request: &LoadRequest, header: &TraceHeader, events: &[IoEvent]) -> Load {
        let mut rest = Load::new(LoadRequest {
            part: AnalysisPart::Rest,
            ..request.clone()
        })
        .expect("rest");
        for e in events {
            rest.observe(e);
        }
        rest.end_pass(header, &Diagnostics::default()).expect("end");
        rest
    }

    /// A load's rest joined with its hot data's part is the whole load, to the last digit:
    /// per device, with hot data exact and sampled, on the whole trace and a window.
    #[test]
    fn the_rest_joined_with_hot_data_is_the_whole_load() {
        let (header, events) = trace(60_000);
        for (exact_block_limit, window_nanos) in [
            (1 << 21, None),
            (4096, None),
            (4096, Some((5_000_000_000, 40_000_000_000))),
        ] {
            let request = LoadRequest {
                exact_block_limit,
                window_nanos,
                ..LoadRequest::app()
            };
            let whole = crate::job::run_events(
                Load::new(request.clone()).expect("whole"),
                &header,
                &events,
            )
            .expect("whole");
            let hot =
                crate::job::run_events(LoadHot::new(&request).expect("hot"), &header, &events)
                    .expect("hot");
            let mut rest = observed_rest(&request, &header, &events);
            let unjoined = Load::new(LoadRequest {
                part: AnalysisPart::Rest,
                ..request.clone()
            })
            .expect("rest");
            assert!(
                crate::job::run_events(unjoined, &header, &events).is_err(),
                "a rest without hot data has no result"
            );
            assert_eq!(
                hot.hot.as_ref().map(|h| h.exact),
                Some(exact_block_limit > 1 << 20)
            );
            rest.join_hot(hot);
            let joined = rest.finish().expect("joined");
            assert_eq!(joined, whole);
            assert!(whole
                .analysis
                .as_ref()
                .is_some_and(|a| a.per_device.is_some()));
            #[cfg(feature = "threads")]
            {
                let threaded = crate::job::run_events(
                    Load::with_threads(request.clone(), 2).expect("threads"),
                    &header,
                    &events,
                )
                .expect("threaded");
                assert_eq!(threaded, whole);
                // The timeline is counted on the thread, so the rest has no live one.
                let mut live = Load::with_threads(request, 2).expect("threads");
                live.observe_batch(&events[..100]);
                assert!(live.timeline_so_far().is_none());
            }
        }
    }

    /// `stat` alone (no analysis) on its own thread, or as a rest joined with a [`LoadHot`], is
    /// the single-threaded `stat`, on the whole trace and a window.
    #[test]
    fn stat_alone_split_equals_stat_alone() {
        let (header, events) = trace(40_000);
        for window_nanos in [None, Some((3_000_000_000, 20_000_000_000))] {
            let request = LoadRequest {
                analysis: false,
                window_nanos,
                ..LoadRequest::new()
            };
            let alone = crate::job::run_events(
                Load::new(request.clone()).expect("alone"),
                &header,
                &events,
            )
            .expect("alone");
            assert!(alone.analysis.is_none());
            let hot =
                crate::job::run_events(LoadHot::new(&request).expect("hot"), &header, &events)
                    .expect("hot");
            assert!(hot.hot.is_none(), "no hot data without the analysis");
            assert_eq!(hot.stat, alone.stat);
            let mut rest = observed_rest(&request, &header, &events);
            rest.join_hot(hot);
            assert_eq!(rest.finish().expect("joined"), alone);
            #[cfg(feature = "threads")]
            for threads in [1, 2, 3] {
                let threaded = crate::job::run_events(
                    Load::with_threads(request.clone(), threads).expect("threads"),
                    &header,
                    &events,
                )
                .expect("threaded");
                assert_eq!(threaded, alone, "{threads} threads");
            }
        }
        // A rest with the analysis joined with a stat-only part has no result.
        let request = LoadRequest::new();
        let stat_only = LoadHot::new(&LoadRequest {
            analysis: false,
            ..request.clone()
        })
        .expect("hot");
        let stat_only = crate::job::run_events(stat_only, &header, &events).expect("stat");
        let mut rest = observed_rest(&request, &header, &events);
        rest.join_hot(stat_only);
        assert!(rest.finish().is_err());
    }

    /// Batches handed over as they come (no time window) or event by event through the window
    /// give the result of events observed one at a time: whole, stat alone, hot data alone, on
    /// threads.
    #[test]
    fn batches_give_the_event_by_event_result() {
        let (header, events) = trace(30_000);
        for window_nanos in [None, Some((2_000_000_000, 21_000_000_000))] {
            for analysis in [true, false] {
                let request = LoadRequest {
                    window_nanos,
                    analysis,
                    exact_block_limit: 4096,
                    ..LoadRequest::app()
                };
                let one_by_one = crate::job::run_events(
                    Load::new(request.clone()).expect("load"),
                    &header,
                    &events,
                )
                .expect("load");
                let batched = crate::job::run_in_batches(
                    Load::new(request.clone()).expect("load"),
                    &header,
                    &events,
                )
                .expect("load");
                assert_eq!(batched, one_by_one, "{window_nanos:?} {analysis}");
                let hot =
                    crate::job::run_events(LoadHot::new(&request).expect("hot"), &header, &events)
                        .expect("hot");
                let hot_batched = crate::job::run_in_batches(
                    LoadHot::new(&request).expect("hot"),
                    &header,
                    &events,
                )
                .expect("hot");
                assert_eq!(hot_batched, hot, "{window_nanos:?} {analysis}");
                #[cfg(feature = "threads")]
                {
                    let threaded = crate::job::run_in_batches(
                        Load::with_threads(request.clone(), 2).expect("threads"),
                        &header,
                        &events,
                    )
                    .expect("threads");
                    assert_eq!(threaded, one_by_one, "{window_nanos:?} {analysis} threads");
                }
            }
        }
    }

    /// The live timeline counts every event observed so far, whatever the batch boundary, and
    /// the finished timeline equals one from a load whose live timeline was never asked for.
    #[test]
    fn the_live_timeline_counts_every_event_read() {
        let event = |i: u64| IoEvent {
            time_nanos: i * 1_000_000,
            device: 0,
            offset_bytes: (i * 7 % 1000) * 4096,
            len_bytes: 4096,
            op: if i % 3 == 0 { Op::Write } else { Op::Read },
            latency_nanos: Some(100_000),
            pid: Some(1),
        };
        let mut live = Load::new(LoadRequest::app()).expect("request");
        let mut quiet = Load::new(LoadRequest::app()).expect("request");
        assert!(live.timeline_so_far().is_none(), "nothing read yet");
        for i in 0..1000 {
            live.observe(&event(i));
            quiet.observe(&event(i));
            if i % 37 == 5 {
                let t = live.timeline_so_far().expect("timeline");
                let requests: u64 = t.bins.iter().map(|b| b.reads + b.writes + b.other).sum();
                assert_eq!(requests, i + 1, "after event {i}");
            }
        }
        let mut header = TraceHeader::new("test");
        header.devices.push(crate::event::DeviceInfo::named("d0"));
        let diagnostics = Diagnostics::default();
        live.end_pass(&header, &diagnostics).expect("end");
        quiet.end_pass(&header, &diagnostics).expect("end");
        let (live, quiet) = (live.finish().expect("live"), quiet.finish().expect("quiet"));
        assert_eq!(
            serde_json::to_string(&live).expect("json"),
            serde_json::to_string(&quiet).expect("json")
        );
    }
}
