//! The engine's Web Worker. It receives a `Blob` or a same-origin URL, reads it in chunks of
//! [`reader::CHUNK_BYTES`], pushes them through a [`session::Session`] and answers with progress
//! and [`protocol::Results`]. A chunk goes in pieces, and every few milliseconds the job yields
//! to the event loop ([`pace`]), so a `Cancel` or a newer request is seen within that time.

pub mod cache_sim;
pub mod codec;
pub mod pace;
pub mod predict;
pub mod protocol;
pub mod reader;
pub mod session;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use analyzer_core::analysis::AnalysisPart;
use analyzer_core::job::load::{LoadHot, LoadHotResult};

use analyzer_core::decode::DecodeOptions;
use analyzer_core::job::copy::{Copy, CopyRequest};
use analyzer_core::job::predict::Predict;
use analyzer_core::job::simulate::{Simulate, Stage};
use analyzer_core::job::Job;
use analyzer_core::TraceFormat;
use gloo_worker::{HandlerId, Worker, WorkerScope};

use crate::error::{LoadError, LoadErrorKind};
use cache_sim::CacheSimRequest;
use pace::{sleep_ms, Foreground, Pacer};
use protocol::{JobId, Request, Response, Source};
use reader::ChunkReader;
use session::Session;

/// Progress messages are sent at most once per this many bytes.
const PROGRESS_EVERY_BYTES: u64 = 4 << 20;

/// The live load-over-time chart is refreshed at most this often while a trace is read.
pub const PREVIEW_EVERY_MS: f64 = 400.0;

/// See the module documentation.
pub struct EngineWorker {
    /// The job allowed to run; a `Cancel` or a newer `Load` changes it and the old loop stops at
    /// its next yield ([`pace`]).
    current: Rc<Cell<JobId>>,
    /// The prediction job allowed to run (a newer one replaces it).
    current_predict: Rc<Cell<JobId>>,
    /// The cache simulation job allowed to run (a newer one replaces it).
    current_cache: Rc<Cell<JobId>>,
    /// The Cache view's job whose curves are being refined (a newer request with curves
    /// replaces it; one for a new size alone does not).
    current_curves: Rc<Cell<JobId>>,
    /// Hot data for a `part: Rest` load, as the page passed it on (`JoinHot`): the latest only.
    joined_hot: Rc<RefCell<Option<JoinedHot>>>,
}

/// A `JoinHot` message's job and hot data.
type JoinedHot = (JobId, Result<Box<LoadHotResult>, String>);

impl Worker for EngineWorker {
    type Message = ();
    type Input = Request;
    type Output = Response;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        EngineWorker {
            current: Rc::new(Cell::new(0)),
            current_predict: Rc::new(Cell::new(0)),
            current_cache: Rc::new(Cell::new(0)),
            current_curves: Rc::new(Cell::new(0)),
            joined_hot: Rc::new(RefCell::new(None)),
        }
    }

    fn update(&mut self, _scope: &WorkerScope<Self>, _msg: Self::Message) {}

    fn received(&mut self, scope: &WorkerScope<Self>, msg: Self::Input, id: HandlerId) {
        match msg {
            Request::Load {
                job,
                source,
                format,
                window_nanos,
                part,
            } => {
                self.current.set(job);
                let scope = scope.clone();
                let current = self.current.clone();
                let joined_hot = self.joined_hot.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let load = LoadTask {
                        job,
                        format,
                        window_nanos,
                        part,
                    };
                    let out = load.run(&scope, id, source, &current, &joined_hot).await;
                    scope.respond(id, out);
                });
            }
            Request::LoadHot {
                job,
                source,
                format,
                window_nanos,
            } => {
                self.current.set(job);
                let scope = scope.clone();
                let current = self.current.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    if let Some(hot) = count_hot(job, source, format, window_nanos, &current).await
                    {
                        scope.respond(id, Response::HotCounted { job, hot });
                    }
                });
            }
            Request::JoinHot { job, hot } => {
                *self.joined_hot.borrow_mut() = Some((job, hot));
            }
            Request::Predict {
                job,
                source,
                request,
            } => {
                self.current_predict.set(job);
                let scope = scope.clone();
                let current = self.current_predict.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    if let Some(out) = predict(&scope, id, job, source, request, &current).await {
                        scope.respond(id, out);
                    }
                });
            }
            Request::CacheSim {
                job,
                source,
                request,
            } => {
                self.current_cache.set(job);
                if request.with_curves {
                    // The old curves' refinement is of another policy, mode or line size.
                    self.current_curves.set(job);
                }
                let scope = scope.clone();
                let current = self.current_cache.clone();
                let current_curves = self.current_curves.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    // The job's stages in turn (the estimate, the exact cells, the refined
                    // curves). A newer request replaces the cells' stages; the curves' stage
                    // only by a newer request with curves, so a new size alone keeps it.
                    for stage in request.stages() {
                        let out = if stage.stage == Stage::Curves {
                            refine_curves(&scope, id, job, source.clone(), stage, &current_curves)
                                .await
                        } else {
                            // The answers the view waits for: a refinement waits for them.
                            let _foreground = Foreground::enter();
                            simulate_cache(job, source.clone(), stage, &current).await
                        };
                        let Some(out) = out else {
                            continue;
                        };
                        let failed = matches!(out, Response::CacheSimFailed { .. });
                        scope.respond(id, out);
                        if failed {
                            return;
                        }
                    }
                });
            }
            Request::CacheModel {
                job,
                source,
                request,
            } => {
                // It replaces the Cache view's running job and its curves' refinement (the
                // view shows no curves of its own for a kernel model).
                self.current_cache.set(job);
                self.current_curves.set(job);
                let scope = scope.clone();
                let current = self.current_cache.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let _foreground = Foreground::enter();
                    if let Some(out) = run_model(&scope, id, job, source, request, &current).await {
                        scope.respond(id, out);
                    }
                });
            }
            Request::Export {
                job,
                source,
                embed_events,
                total_events,
            } => {
                let scope = scope.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let out = export_copy(job, source, embed_events, total_events).await;
                    scope.respond(id, out);
                });
            }
            Request::Cancel { job } => {
                if self.current.get() == job {
                    self.current.set(0);
                }
            }
        }
    }
}

/// Re-reads the trace (in the same bounded chunks) and runs the prediction job on it, as
/// `blocksight predict` does; a job of two passes posts its answer without the cache tier
/// after the first (`PredictedSoFar`). `None` when a newer prediction replaced this one.
async fn predict(
    scope: &WorkerScope<EngineWorker>,
    id: HandlerId,
    job: JobId,
    source: Source,
    request: predict::PredictRequest,
    current: &Cell<JobId>,
) -> Option<Response> {
    run_to_answer(
        source,
        Predict::new(request).map(|p| p.with_tier_limit(predict::MAX_TIER_LINES)),
        Pacer::new(),
        &|| current.get() != job,
        &|j| {
            if let Some(result) = j.take_without_cache() {
                scope.respond(
                    id,
                    Response::PredictedSoFar {
                        job,
                        result: Box::new(result),
                    },
                );
            }
            j.check_memory().map_err(|e| e.to_string())
        },
        &|_| {},
        |error| Some(Response::PredictFailed { job, error }),
        |result| Response::Predicted {
            job,
            result: Box::new(result),
        },
    )
    .await
}

/// Re-reads the trace and runs a stage of the simulation job (the Cache view's cache, and the
/// policies' curves when asked) on the whole trace or the request's time window, as `blocksight
/// simulate` does. `None` when a newer simulation replaced this one.
async fn simulate_cache(
    job: JobId,
    source: Source,
    request: cache_sim::CacheSimRequest,
    current: &Cell<JobId>,
) -> Option<Response> {
    run_to_answer(
        source,
        Simulate::with_exact_limit(request, Some(cache_sim::MAX_EXACT_LINES)),
        Pacer::new(),
        &|| current.get() != job,
        &|_| Ok(()),
        &|_| {},
        |error| Some(Response::CacheSimFailed { job, error }),
        |result| Response::CacheSimulated {
            job,
            result: Box::new(result),
        },
    )
    .await
}

/// Re-reads the trace and runs a kernel cache model (`job::simulate::model`, the job of
/// `blocksight simulate --preset dm-cache|bcache`) within the tab's memory bound, posting its
/// progress at most every [`PREVIEW_EVERY_MS`]. `None` when a newer Cache view job replaced it.
async fn run_model(
    scope: &WorkerScope<EngineWorker>,
    id: HandlerId,
    job: JobId,
    source: Source,
    request: cache_sim::ModelRequest,
    current: &Cell<JobId>,
) -> Option<Response> {
    let progress = progress_every(scope, id, |fraction| Response::CacheModelProgress {
        job,
        fraction,
    });
    run_to_answer(
        source,
        cache_sim::Model::with_memory_limit(request, Some(cache_sim::MAX_MODEL_UNITS)),
        Pacer::new(),
        &|| current.get() != job,
        &|m| m.check_memory().map_err(|e| e.to_string()),
        &progress,
        |error| Some(Response::CacheSimFailed { job, error }),
        |result| Response::CacheModeled {
            job,
            result: Box::new(result.view()),
        },
    )
    .await
}

/// The Cache view's last stage: the curves with MiniSim's default miniatures instead of the
/// estimate's sampled ones, posting its progress (the share of its passes read) at most every
/// [`PREVIEW_EVERY_MS`]. `None` when a newer request with curves replaced it.
async fn refine_curves(
    scope: &WorkerScope<EngineWorker>,
    id: HandlerId,
    job: JobId,
    source: Source,
    request: CacheSimRequest,
    current: &Cell<JobId>,
) -> Option<Response> {
    let progress = progress_every(scope, id, |fraction| Response::CacheCurvesProgress {
        job,
        fraction,
    });
    run_to_answer(
        source,
        Simulate::with_exact_limit(request, Some(cache_sim::MAX_EXACT_LINES)),
        // It waits while the Cache view's own stages run (a new size's answer first).
        Pacer::background(),
        &|| current.get() != job,
        &|_| Ok(()),
        &progress,
        |error| Some(Response::CacheSimFailed { job, error }),
        |result| Response::CacheCurvesRefined {
            job,
            curves: result.curves,
        },
    )
    .await
}

/// Re-reads the trace and builds the report's compact trace copy (the copy job) in one pass:
/// the sample rate is fixed up front from the known number of events.
async fn export_copy(job: JobId, source: Source, embed_events: u64, total_events: u64) -> Response {
    let failed = |error: String| Response::ExportFailed { job, error };
    let mut copy = Copy::new(CopyRequest {
        embed_events,
        total_events: Some(total_events),
    });
    // An export is never replaced: it runs to the end or fails.
    let read = run_job(
        source,
        None,
        &mut copy,
        Pacer::new(),
        &|| false,
        &|_| Ok(()),
        &|_| {},
    )
    .await;
    if let Err(e) = read {
        return failed(e.unwrap_or_default());
    }
    match copy.finish() {
        Ok(Some(done)) => {
            let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(done.bytes.as_slice()));
            match web_sys::Blob::new_with_u8_array_sequence(&parts) {
                Ok(trace) => Response::Exported {
                    job,
                    trace,
                    sample_rate: done.sample_rate(),
                    events: done.events,
                },
                Err(_) => failed("the browser could not hold the trace copy".into()),
            }
        }
        Ok(None) => failed("no trace copy was asked for (0 events)".into()),
        Err(e) => failed(e.to_string()),
    }
}

/// Runs `job` over the trace (`run_job`) and answers: `ok` of its result, or `failed` with the
/// reason in plain words (building the job, reading, decoding, a bound, or the job's own
/// error); `None` when a newer job of its kind replaced it.
// The job, how it is paced, when it stops, what it posts: each caller differs in all of them.
#[allow(clippy::too_many_arguments)]
async fn run_to_answer<J: Job>(
    source: Source,
    job: Result<J, analyzer_core::job::JobError>,
    pacer: Pacer,
    replaced: &dyn Fn() -> bool,
    between_slices: &dyn Fn(&mut J) -> Result<(), String>,
    progress: &dyn Fn(f64),
    failed: impl Fn(String) -> Option<Response>,
    ok: impl FnOnce(J::Output) -> Response,
) -> Option<Response> {
    let mut run = match job {
        Ok(j) => j,
        Err(e) => return failed(e.to_string()),
    };
    match run_job(
        source,
        None,
        &mut run,
        pacer,
        replaced,
        between_slices,
        progress,
    )
    .await
    {
        Ok(()) => match run.finish() {
            Ok(result) => Some(ok(result)),
            Err(e) => failed(e.to_string()),
        },
        Err(None) => None,
        Err(Some(e)) => failed(e),
    }
}

/// A `run_job` progress callback that posts `message(fraction)` at most every
/// [`PREVIEW_EVERY_MS`].
fn progress_every<'a>(
    scope: &'a WorkerScope<EngineWorker>,
    id: HandlerId,
    message: impl Fn(f64) -> Response + 'a,
) -> impl Fn(f64) + 'a {
    let next_ms = Cell::new(0.0);
    move |fraction: f64| {
        let now_ms = js_sys::Date::now();
        if now_ms >= next_ms.get() {
            next_ms.set(now_ms + PREVIEW_EVERY_MS);
            scope.respond(id, message(fraction));
        }
    }
}

/// Runs a job over the trace: each pass it asks for re-reads the file in the load's bounded
/// slices, decoding only (the job applies its own window), fed in pieces with yields to the
/// event loop between them ([`pace`]). `replaced()` (a newer job of its kind), asked after each
/// yield and between slices, gives `Err(None)`; an error from
/// `between_slices(job)` (a memory bound; it is also called at the end of each pass, where a
/// job may have an early answer to post) or from reading, decoding or the job gives
/// `Err(Some(words))`. After each slice `progress` is told the share of the job's passes read.
async fn run_job<J: Job>(
    source: Source,
    forced: Option<TraceFormat>,
    job: &mut J,
    mut pacer: Pacer,
    replaced: &dyn Fn() -> bool,
    between_slices: &dyn Fn(&mut J) -> Result<(), String>,
    progress: &dyn Fn(f64),
) -> Result<(), Option<String>> {
    let mut pass = 0;
    while pass < job.passes() {
        job.begin_pass(pass);
        let mut reader = match &source {
            Source::Blob { blob, .. } => ChunkReader::from_blob(blob.clone()),
            Source::Url { url } => ChunkReader::from_url(url).await.map_err(Some)?,
        };
        let total_bytes = reader.total_bytes().filter(|&t| t > 0);
        let mut session = Session::new(forced, DecodeOptions::default()).events_only();
        loop {
            if replaced() {
                return Err(None);
            }
            match reader.next_chunk().await.map_err(Some)? {
                Some(chunk) => {
                    let fed = pacer
                        .feed(chunk, replaced, &mut |piece| {
                            session.push_with(piece, &mut |events| job.observe_batch(events))
                        })
                        .await
                        .map_err(|e| Some(e.plain_words()))?;
                    if !fed {
                        return Err(None);
                    }
                    between_slices(job).map_err(Some)?;
                    if let Some(t) = total_bytes {
                        let read = (session.input_bytes() as f64 / t as f64).min(1.0);
                        progress((pass as f64 + read) / job.passes().max(1) as f64);
                    }
                }
                None => break,
            }
        }
        if replaced() {
            return Err(None);
        }
        let done = session
            .finish_with(&mut |events| job.observe_batch(events))
            .map_err(|e| Some(e.plain_words()))?;
        job.end_pass(&done.header, &done.diagnostics)
            .map_err(|e| Some(e.to_string()))?;
        between_slices(job).map_err(Some)?;
        pass += 1;
    }
    Ok(())
}

/// The format a load was asked to read as (`None`: detect it).
fn forced_format(format: Option<&str>) -> Result<Option<TraceFormat>, LoadError> {
    match format {
        None | Some("") | Some("auto") => Ok(None),
        Some(name) => match TraceFormat::from_name(name) {
            Some(f) => Ok(Some(f)),
            None => Err(LoadError::new(
                LoadErrorKind::UnknownFormat,
                format!("Unknown format {name:?}."),
            )),
        },
    }
}

/// Counts the hot data and `stat` of a load (the core's `LoadHot` job) over the whole file, for a
/// `part: Rest` load in another worker. `None` when a newer load or a `Cancel` replaced it.
async fn count_hot(
    job: JobId,
    source: Source,
    format: Option<String>,
    window_nanos: Option<(u64, u64)>,
    current: &Cell<JobId>,
) -> Option<Result<Box<LoadHotResult>, String>> {
    let forced = match forced_format(format.as_deref()) {
        Ok(f) => f,
        Err(e) => return Some(Err(e.plain_words())),
    };
    let mut hot = match LoadHot::new(&Session::load_request(window_nanos)) {
        Ok(h) => h,
        Err(e) => return Some(Err(e.to_string())),
    };
    let replaced = || current.get() != job;
    match run_job(
        source,
        forced,
        &mut hot,
        Pacer::new(),
        &replaced,
        &|_| Ok(()),
        &|_| {},
    )
    .await
    {
        Ok(()) => Some(hot.finish().map(Box::new).map_err(|e| e.to_string())),
        Err(None) => None,
        Err(Some(e)) => Some(Err(e)),
    }
}

/// How often a `part: Rest` load that has read its file looks for its hot data.
const JOIN_POLL_MS: i32 = 4;

/// A `Load` request.
struct LoadTask {
    job: JobId,
    format: Option<String>,
    window_nanos: Option<(u64, u64)>,
    part: AnalysisPart,
}

impl LoadTask {
    async fn run(
        self,
        scope: &WorkerScope<EngineWorker>,
        id: HandlerId,
        source: Source,
        current: &Cell<JobId>,
        joined_hot: &RefCell<Option<JoinedHot>>,
    ) -> Response {
        let job = self.job;
        let failed = |error: LoadError| Response::Failed { job, error };
        let forced = match forced_format(self.format.as_deref()) {
            Ok(f) => f,
            Err(e) => return failed(e),
        };
        let (mut reader, file_name) = match source {
            Source::Blob { blob, name } => (ChunkReader::from_blob(blob), name),
            Source::Url { url } => match ChunkReader::from_url(&url).await {
                Ok(r) => (r, url.rsplit('/').next().unwrap_or(&url).to_owned()),
                Err(e) => return failed(LoadError::new(LoadErrorKind::Read, e)),
            },
        };
        let bytes_total = reader.total_bytes();
        let mut session = Session::new(forced, DecodeOptions::default())
            .with_request(self.window_nanos, self.part);
        let mut pacer = Pacer::new();
        let mut announced = false;
        let mut next_progress = 0u64;
        let mut next_preview_ms = 0.0;
        loop {
            if current.get() != job {
                return Response::Cancelled { job };
            }
            match reader.next_chunk().await {
                Ok(Some(chunk)) => {
                    match pacer
                        .feed(chunk, &|| current.get() != job, &mut |piece| {
                            session.push(piece)
                        })
                        .await
                    {
                        Ok(true) => {}
                        Ok(false) => return Response::Cancelled { job },
                        Err(e) => return failed(e),
                    }
                }
                Ok(None) => break,
                Err(e) => return failed(LoadError::new(LoadErrorKind::Read, e)),
            }
            if !announced {
                if let Some(f) = session.format() {
                    announced = true;
                    scope.respond(
                        id,
                        Response::Detected {
                            job,
                            format: f.name().into(),
                            description: f.description().into(),
                        },
                    );
                }
            }
            if session.input_bytes() >= next_progress {
                next_progress = session.input_bytes() + PROGRESS_EVERY_BYTES;
                let now_ms = js_sys::Date::now();
                let preview = if now_ms >= next_preview_ms {
                    next_preview_ms = now_ms + PREVIEW_EVERY_MS;
                    session.timeline_so_far().map(Box::new)
                } else {
                    None
                };
                scope.respond(
                    id,
                    Response::Progress {
                        job,
                        bytes_read: session.input_bytes(),
                        bytes_total,
                        events: session.events(),
                        preview,
                    },
                );
            }
        }
        if self.part == AnalysisPart::Rest {
            // The other worker's hot data, passed on by the page.
            loop {
                if current.get() != job {
                    return Response::Cancelled { job };
                }
                let joined = joined_hot.borrow_mut().take_if(|(j, _)| *j == job);
                match joined {
                    Some((_, Ok(hot))) => {
                        session.join_hot(*hot);
                        break;
                    }
                    Some((_, Err(e))) => return failed(LoadError::new(LoadErrorKind::Read, e)),
                    None => sleep_ms(JOIN_POLL_MS).await,
                }
            }
        }
        if current.get() != job {
            return Response::Cancelled { job };
        }
        let file_bytes = session.input_bytes();
        match session.finish() {
            Ok(done) => Response::Done {
                job,
                results: Box::new(done.into_results(file_name, file_bytes)),
            },
            Err(e) => failed(e),
        }
    }
}
