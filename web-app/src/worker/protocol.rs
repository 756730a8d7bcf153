//! What the UI thread and the engine worker say to each other. Trace bytes never appear here:
//! the UI hands over a `Blob` (or a same-origin URL) and gets progress and results back.

use analyzer_core::analysis::timeline::TimelineReport;
use analyzer_core::analysis::AnalysisPart;
use analyzer_core::job::load::LoadHotResult;
use analyzer_core::mrc::MrcReport;
use serde::{Deserialize, Serialize};

use crate::error::LoadError;
use crate::worker::cache_sim::{CacheSimRequest, CacheSimResult, ModelRequest, ModelView};
use crate::worker::predict::{PredictRequest, PredictResult};

/// A load job's id; the UI ignores messages for jobs it has cancelled or replaced.
pub type JobId = u32;

#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// Read and analyse a trace.
    Load {
        job: JobId,
        source: Source,
        format: Option<String>,
        /// Analyse only `[start, end)` nanoseconds after the first request.
        window_nanos: Option<(u64, u64)>,
        /// The whole analysis, or all but hot data and `stat` (then a second worker counts
        /// them, sent here by `JoinHot` before the load can finish).
        part: AnalysisPart,
    },
    /// Count the hot data and `stat` of the same load in a second worker (the core's `LoadHot`
    /// job: it reads the file itself), answered by `HotCounted`.
    LoadHot {
        job: JobId,
        source: Source,
        format: Option<String>,
        window_nanos: Option<(u64, u64)>,
    },
    /// The second worker's `HotCounted` for a `part: Rest` load, passed on by the page.
    JoinHot {
        job: JobId,
        hot: Result<Box<LoadHotResult>, String>,
    },
    /// Stop the job at the next chunk boundary.
    Cancel { job: JobId },
    /// Re-read the trace and predict the array layouts (a newer `Predict` replaces it).
    Predict {
        job: JobId,
        source: Source,
        request: PredictRequest,
    },
    /// Re-read the trace and simulate the Cache view's cache (a newer `CacheSim` replaces it).
    CacheSim {
        job: JobId,
        source: Source,
        request: CacheSimRequest,
    },
    /// Re-read the trace and run a kernel cache model for the Cache view (the same job as
    /// `blocksight simulate --preset dm-cache|bcache`); it replaces a `CacheSim` and is
    /// replaced by one.
    CacheModel {
        job: JobId,
        source: Source,
        request: ModelRequest,
    },
    /// Re-read the trace and build the report's compact copy (`analyzer_core::report`).
    Export {
        job: JobId,
        source: Source,
        /// Most events in the copy; a longer trace is spatially sampled down to about this.
        embed_events: u64,
        /// Events in the trace (from its results), which fixes the sample rate up front.
        total_events: u64,
    },
}

/// Where the trace comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Source {
    /// A dropped or picked file, or the trace embedded in a report.
    Blob {
        #[serde(with = "serde_wasm_bindgen::preserve")]
        blob: web_sys::Blob,
        name: String,
    },
    /// A same-origin URL (`?url=`, used by `blocksight serve`).
    Url { url: String },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// The format is known (after the first 64 KiB).
    Detected {
        job: JobId,
        format: String,
        description: String,
    },
    Progress {
        job: JobId,
        bytes_read: u64,
        bytes_total: Option<u64>,
        events: u64,
        /// The load over time so far, for the live chart while reading (sent at most every
        /// [`crate::worker::PREVIEW_EVERY_MS`]).
        #[serde(default)]
        preview: Option<Box<TimelineReport>>,
    },
    Done {
        job: JobId,
        results: Box<Results>,
    },
    Failed {
        job: JobId,
        error: LoadError,
    },
    Cancelled {
        job: JobId,
    },
    /// Hot data of a `LoadHot` job (or why it could not be counted), for the page to pass on
    /// to the load's worker.
    HotCounted {
        job: JobId,
        hot: Result<Box<LoadHotResult>, String>,
    },
    /// The array prediction of a `Predict` job.
    Predicted {
        job: JobId,
        result: Box<PredictResult>,
    },
    /// A `Predict` job's answer without the cache tier, ready before the rest of it (the
    /// answer of `PredictRequest::without_cache_first`); the job goes on.
    PredictedSoFar {
        job: JobId,
        result: Box<PredictResult>,
    },
    /// A `Predict` job failed (its message in plain words).
    PredictFailed {
        job: JobId,
        error: String,
    },
    /// The cache simulation of a `CacheSim` job.
    CacheSimulated {
        job: JobId,
        result: Box<CacheSimResult>,
    },
    CacheSimFailed {
        job: JobId,
        error: String,
    },
    /// The kernel model's counters of a `CacheModel` job, as the page shows them (the core's
    /// `ModelResult::view`; its failures are `CacheSimFailed`).
    CacheModeled {
        job: JobId,
        result: Box<ModelView>,
    },
    /// How far a `CacheModel` job has read (0 to 1, over its passes).
    CacheModelProgress {
        job: JobId,
        fraction: f64,
    },
    /// How far the refinement of a `CacheSim` job's curves has read (0 to 1).
    CacheCurvesProgress {
        job: JobId,
        fraction: f64,
    },
    /// The refined curves of a `CacheSim` job whose first answer had sampled ones.
    CacheCurvesRefined {
        job: JobId,
        curves: Vec<MrcReport>,
    },
    /// The trace copy of an `Export` job (a native `.bst`, as a `Blob`).
    Exported {
        job: JobId,
        #[serde(with = "serde_wasm_bindgen::preserve")]
        trace: web_sys::Blob,
        /// The share of requests kept when the copy is a spatial sample.
        sample_rate: Option<f64>,
        events: u64,
    },
    ExportFailed {
        job: JobId,
        error: String,
    },
}

impl Response {
    pub fn job(&self) -> JobId {
        match self {
            Response::Detected { job, .. }
            | Response::Progress { job, .. }
            | Response::Done { job, .. }
            | Response::Failed { job, .. }
            | Response::Cancelled { job }
            | Response::HotCounted { job, .. }
            | Response::Predicted { job, .. }
            | Response::PredictedSoFar { job, .. }
            | Response::PredictFailed { job, .. }
            | Response::CacheSimulated { job, .. }
            | Response::CacheSimFailed { job, .. }
            | Response::CacheModeled { job, .. }
            | Response::CacheModelProgress { job, .. }
            | Response::CacheCurvesProgress { job, .. }
            | Response::CacheCurvesRefined { job, .. }
            | Response::Exported { job, .. }
            | Response::ExportFailed { job, .. } => *job,
        }
    }
}

/// Everything the views show for one trace (also embedded, as JSON, in exported reports): the
/// engine's type, which `blocksight report` writes too.
pub use analyzer_core::job::load::TraceResults as Results;
