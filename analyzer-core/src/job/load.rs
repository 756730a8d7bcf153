//! The first look at a trace: `stat`'s summary and the workload analysis (hot data, access
//! pattern, latency, timeline, heat maps), on the whole trace or a time window, in one pass.

use serde::{Deserialize, Serialize};

use super::{Job, JobError, WindowFilter, WindowNanos};
use crate::analysis::timeline::TimelineReport;
use crate::analysis::{Analysis, AnalysisConfig, AnalysisReport};
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
        }
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
    window: WindowFilter,
    stat: Stat,
    analysis: Option<Analysis>,
    events: u64,
    /// Admitted events not yet given to `stat` and `analysis`: they take them
    /// [`LOAD_BATCH_EVENTS`] at a time so that their table look-ups' cache misses overlap.
    pending: Vec<IoEvent>,
    result: Option<LoadResult>,
}

/// Events handed to the accumulators at once (enough to overlap a few dozen cache misses).
const LOAD_BATCH_EVENTS: usize = 32;

impl Load {
    pub fn new(request: LoadRequest) -> Result<Load, JobError> {
        let b = request.block_bytes;
        if !b.is_power_of_two() || !(4096..=1 << 20).contains(&b) {
            return Err(JobError::invalid(
                format!("block size {b}"),
                "a power of two from 4 KiB to 1 MiB",
            ));
        }
        Ok(Load {
            window: WindowFilter::new(request.window_nanos),
            stat: Stat::new(),
            analysis: request.analysis.then(|| Analysis::new(request.config())),
            request,
            events: 0,
            pending: Vec::with_capacity(LOAD_BATCH_EVENTS),
            result: None,
        })
    }

    /// Events inside the window so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The load over time of every event so far (the live chart while a large trace is read):
    /// the pending batch is handed over first, which changes no result (batches are only a
    /// speed-up). `None` before the first event or without the analysis.
    pub fn timeline_so_far(&mut self) -> Option<TimelineReport> {
        if self.analysis.is_none() || self.events == 0 {
            return None;
        }
        self.flush();
        self.analysis.as_ref().map(Analysis::timeline_so_far)
    }

    pub fn request(&self) -> &LoadRequest {
        &self.request
    }

    fn flush(&mut self) {
        self.stat.observe_batch(&self.pending);
        if let Some(a) = self.analysis.as_mut() {
            a.observe_batch(&self.pending);
        }
        self.pending.clear();
    }
}

impl Job for Load {
    type Output = LoadResult;

    fn passes(&self) -> usize {
        1
    }

    fn begin_pass(&mut self, _pass: usize) {
        self.window.reset();
    }

    fn observe(&mut self, e: &IoEvent) {
        if !self.window.admits(e) {
            return;
        }
        self.events += 1;
        self.pending.push(*e);
        if self.pending.len() >= LOAD_BATCH_EVENTS {
            self.flush();
        }
    }

    fn end_pass(
        &mut self,
        header: &TraceHeader,
        diagnostics: &Diagnostics,
    ) -> Result<(), JobError> {
        self.flush();
        self.result = Some(LoadResult {
            stat: self.stat.finish(header, diagnostics),
            analysis: self
                .analysis
                .as_ref()
                .map(|a| a.finish(header, diagnostics)),
        });
        Ok(())
    }

    fn finish(self) -> Result<LoadResult, JobError> {
        self.result
            .ok_or_else(|| JobError::invalid("load", "the trace was not read"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Op;

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
