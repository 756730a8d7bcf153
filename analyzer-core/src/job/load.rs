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
}

impl LoadRequest {
    /// Stat and the analysis with their defaults, whole trace.
    pub fn new() -> LoadRequest {
        let d = AnalysisConfig::default();
        LoadRequest {
            window_nanos: None,
            analysis: true,
            block_bytes: d.block_bytes,
            exact_block_limit: d.exact_block_limit,
            exact_mrc: false,
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

/// The load job.
pub struct Load {
    request: LoadRequest,
    window: WindowFilter,
    stat: Stat,
    analysis: Option<Analysis>,
    events: u64,
    result: Option<LoadResult>,
}

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
            result: None,
        })
    }

    /// Events inside the window so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The load over time of the events so far (the live chart while a large trace is read);
    /// `None` before the first event or without the analysis.
    pub fn timeline_so_far(&self) -> Option<TimelineReport> {
        let a = self.analysis.as_ref()?;
        (self.events > 0).then(|| a.timeline_so_far())
    }

    pub fn request(&self) -> &LoadRequest {
        &self.request
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
        self.stat.observe(e);
        if let Some(a) = self.analysis.as_mut() {
            a.observe(e);
        }
    }

    fn end_pass(
        &mut self,
        header: &TraceHeader,
        diagnostics: &Diagnostics,
    ) -> Result<(), JobError> {
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
