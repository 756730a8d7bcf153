//! The app's state as a Yew `Reducible`: the load in progress (or its error), the results, and
//! the view controls that live in the URL hash.

use std::rc::Rc;

use yew::Reducible;

use crate::error::LoadError;
use crate::url_state::UrlState;
use analyzer_core::analysis::timeline::TimelineReport;
use analyzer_core::mrc::MrcReport;

use crate::worker::cache_sim::{CacheSimResult, ModelView, Stage};
use crate::worker::predict::PredictResult;
use crate::worker::protocol::{JobId, Response, Results};

#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    Idle,
    Loading(Loading),
    Failed { file_name: String, error: LoadError },
    Cancelled { file_name: String },
    Ready,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Loading {
    pub job: JobId,
    pub file_name: String,
    pub started_ms: f64,
    pub now_ms: f64,
    pub bytes_read: u64,
    pub bytes_total: Option<u64>,
    pub events: u64,
    pub format: Option<String>,
    /// The load over time of what was read so far (the live chart).
    pub preview: Option<Rc<TimelineReport>>,
}

impl Loading {
    pub fn fraction(&self) -> Option<f64> {
        let total = self.bytes_total.filter(|&t| t > 0)?;
        Some((self.bytes_read as f64 / total as f64).clamp(0.0, 1.0))
    }

    /// Bytes per second since the start.
    pub fn rate_bytes_per_sec(&self) -> f64 {
        let secs = (self.now_ms - self.started_ms) / 1000.0;
        if secs <= 0.0 {
            0.0
        } else {
            self.bytes_read as f64 / secs
        }
    }

    pub fn seconds_left(&self) -> Option<f64> {
        let total = self.bytes_total?;
        let rate = self.rate_bytes_per_sec();
        (rate > 0.0).then(|| total.saturating_sub(self.bytes_read) as f64 / rate)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct AppState {
    pub phase: Phase,
    pub results: Option<Rc<Results>>,
    /// The results of the whole trace when `results` are scoped to a time window.
    pub full: Option<Rc<Results>>,
    /// Milliseconds from the start of the load to its results, for the status line.
    pub load_ms: Option<f64>,
    pub url: UrlState,
    pub next_job: JobId,
    /// The job that re-analyses a time window (its results do not replace `full`).
    pub scoped_job: Option<JobId>,
    /// The window (seconds) the current or last scoped job analyses.
    pub scoped_window: Option<(f64, f64)>,
    /// In a report: the results written by `blocksight report`, whose file description (name,
    /// size, original format) live re-analyses of the embedded copy keep.
    pub report: Option<Rc<Results>>,
    /// The Array view's prediction.
    pub predict: PredictState,
    /// The Cache view's simulation.
    pub cache_sim: CacheSimState,
}

/// The Cache view's simulation: the job computing in the worker, the last answer, and the
/// last policy curves (kept while only the size changes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CacheSimState {
    pub computing: Option<JobId>,
    pub next_job: JobId,
    pub result: Option<Rc<CacheSimResult>>,
    pub curves: Option<Rc<Vec<MrcReport>>>,
    pub error: Option<String>,
    /// UI clock when the running job was sent, how long its first answer took (an estimate
    /// from a sample, or the exact answer when that came first) and how long the exact one.
    pub started_ms: Option<f64>,
    pub first_ms: Option<f64>,
    pub elapsed_ms: Option<f64>,
    /// The job whose estimated curves the worker is refining, and how far it has read (0 to 1).
    pub refining: Option<JobId>,
    pub refine_progress: f64,
    /// UI clock when the curves' job was sent, and how long their refinement took from then.
    pub curves_started_ms: Option<f64>,
    pub refined_ms: Option<f64>,
    /// The last kernel model's counters (a `CacheModel` job), and how far the running one has
    /// read (0 to 1).
    pub model: Option<Rc<ModelView>>,
    pub model_progress: f64,
    /// The estimates of the chosen cache with one setting changed (line size, write mode,
    /// policy, preset), computed ahead (the job's variants stages: each variant's own answer):
    /// such a change is answered from them at once. They stay until the next job's come.
    pub variants: Vec<Rc<CacheSimResult>>,
    /// The job whose variants these are.
    pub variants_job: Option<JobId>,
    /// Its last part is in (the variants come in two parts: line sizes and modes, then
    /// policies and presets).
    pub variants_done: bool,
}

impl CacheSimState {
    /// The variants of the latest request (of the cache now chosen), when they are in.
    pub fn variants_of_latest(&self) -> usize {
        match self.variants_job {
            Some(job) if job + 1 == self.next_job => self.variants.len(),
            _ => 0,
        }
    }

    /// Whether every variant of the latest request is in.
    pub fn variants_complete(&self) -> bool {
        self.variants_done && self.variants_of_latest() > 0
    }
}

/// The Array view's prediction: the job computing in the worker and the last answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PredictState {
    /// The job in the worker, while it computes.
    pub computing: Option<JobId>,
    pub next_job: JobId,
    pub result: Option<Rc<PredictResult>>,
    pub error: Option<String>,
}

impl AppState {
    pub fn new(url: UrlState) -> AppState {
        AppState {
            phase: Phase::Idle,
            results: None,
            full: None,
            load_ms: None,
            url,
            next_job: 1,
            scoped_job: None,
            scoped_window: None,
            report: None,
            predict: PredictState {
                next_job: 1,
                ..PredictState::default()
            },
            cache_sim: CacheSimState {
                next_job: 1,
                ..CacheSimState::default()
            },
        }
    }

    pub fn loading_job(&self) -> Option<JobId> {
        match &self.phase {
            Phase::Loading(l) => Some(l.job),
            _ => None,
        }
    }
}

// Actions live only while Yew dispatches them, one per user input or worker message: their
// size does not matter, and boxing the URL state would only add noise at every call site.
#[allow(clippy::large_enum_variant)]
pub enum Action {
    /// A load was sent to the worker.
    Start {
        job: JobId,
        file_name: String,
        bytes_total: Option<u64>,
        now_ms: f64,
        window_secs: Option<(f64, f64)>,
    },
    /// Back to the whole trace's results (the time window was cleared).
    Unscope,
    /// A message from the worker, with the UI clock at arrival.
    Worker {
        response: Response,
        now_ms: f64,
    },
    /// Results known before any load (embedded in a report).
    Preloaded(Box<Results>),
    Cancel,
    SetUrl(UrlState),
    /// A prediction was sent to the worker.
    PredictStart {
        job: JobId,
    },
    /// A cache simulation was sent to the worker.
    CacheSimStart {
        job: JobId,
        now_ms: f64,
        /// The request asks for the policies' curves (replacing any being refined).
        with_curves: bool,
    },
}

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            Action::Start {
                job,
                file_name,
                bytes_total,
                now_ms,
                window_secs,
            } => {
                s.next_job = job + 1;
                s.scoped_job = window_secs.is_some().then_some(job);
                s.scoped_window = window_secs;
                if window_secs.is_none() && s.full.is_some() {
                    // A new trace: an old time window means nothing for it. The page's first
                    // load keeps the link's window (`win=` in the hash), which is applied once
                    // the whole trace is read.
                    s.url.window = None;
                }
                s.phase = Phase::Loading(Loading {
                    job,
                    file_name,
                    started_ms: now_ms,
                    now_ms,
                    bytes_read: 0,
                    bytes_total,
                    events: 0,
                    format: None,
                    preview: None,
                });
            }
            Action::CacheSimStart {
                job,
                now_ms,
                with_curves,
            } => {
                s.cache_sim.computing = Some(job);
                s.cache_sim.next_job = job + 1;
                s.cache_sim.started_ms = Some(now_ms);
                s.cache_sim.first_ms = None;
                s.cache_sim.model_progress = 0.0;
                if with_curves {
                    s.cache_sim.refining = None;
                    s.cache_sim.curves_started_ms = Some(now_ms);
                }
            }
            Action::Worker {
                response: Response::CacheModelProgress { job, fraction },
                ..
            } => {
                if s.cache_sim.computing != Some(job) {
                    return self;
                }
                s.cache_sim.model_progress = fraction;
            }
            Action::Worker {
                response: Response::CacheModeled { job, result },
                now_ms,
            } => {
                if s.cache_sim.computing != Some(job) {
                    return self;
                }
                let elapsed = s.cache_sim.started_ms.map(|t| now_ms - t);
                s.cache_sim.computing = None;
                s.cache_sim.first_ms = elapsed;
                s.cache_sim.elapsed_ms = elapsed;
                s.cache_sim.error = None;
                s.cache_sim.model = Some(Rc::new(*result));
            }
            Action::Worker {
                response: Response::CacheCurvesProgress { job, fraction },
                ..
            } => {
                if s.cache_sim.refining != Some(job) {
                    return self;
                }
                s.cache_sim.refine_progress = fraction;
            }
            Action::Worker {
                response: Response::CacheCurvesRefined { job, curves },
                now_ms,
            } => {
                if s.cache_sim.refining != Some(job) {
                    return self;
                }
                s.cache_sim.refining = None;
                s.cache_sim.curves = Some(Rc::new(curves));
                s.cache_sim.refined_ms = s.cache_sim.curves_started_ms.map(|t| now_ms - t);
            }
            Action::Worker {
                response: Response::CacheSimulated { job, result },
                ..
            } if result.request.stage == Stage::Variants => {
                // Only the latest request's (its own answer is in by now): its first part
                // replaces the variants before, its second part joins it.
                if job + 1 != s.cache_sim.next_job {
                    return self;
                }
                if s.cache_sim.variants_job != Some(job) {
                    s.cache_sim.variants.clear();
                    s.cache_sim.variants_job = Some(job);
                }
                s.cache_sim.variants_done = result.request.variant_set.is_last();
                s.cache_sim
                    .variants
                    .extend(result.variants.into_iter().map(Rc::new));
            }
            Action::Worker {
                response: Response::CacheSimulated { job, result },
                now_ms,
            } => {
                if s.cache_sim.computing != Some(job) {
                    return self;
                }
                // An estimate from a sample is shown at once and replaced by the exact answer
                // (the job's next stage); the job computes until then.
                let estimate = result.runs_estimated;
                let elapsed = s.cache_sim.started_ms.map(|t| now_ms - t);
                if s.cache_sim.first_ms.is_none() {
                    s.cache_sim.first_ms = elapsed;
                }
                if !estimate {
                    s.cache_sim.computing = None;
                    s.cache_sim.elapsed_ms = elapsed;
                }
                s.cache_sim.error = None;
                if result.request.with_curves {
                    s.cache_sim.curves = Some(Rc::new(result.curves.clone()));
                    // Estimated curves are refined by the worker's last stage.
                    s.cache_sim.refining = result.estimate_rate.is_some().then_some(job);
                    s.cache_sim.refine_progress = 0.0;
                    s.cache_sim.refined_ms = None;
                }
                if estimate || !result.runs.is_empty() {
                    s.cache_sim.result = Some(Rc::new(*result));
                }
            }
            Action::Worker {
                response: Response::CacheSimFailed { job, error },
                ..
            } => {
                if s.cache_sim.refining == Some(job) && s.cache_sim.computing != Some(job) {
                    // The refinement failed: the sampled curves stay, with the reason.
                    s.cache_sim.refining = None;
                    s.cache_sim.error = Some(error);
                    return Rc::new(s);
                }
                if s.cache_sim.computing != Some(job) {
                    return self;
                }
                s.cache_sim.computing = None;
                s.cache_sim.error = Some(error);
            }
            Action::PredictStart { job } => {
                s.predict.computing = Some(job);
                s.predict.next_job = job + 1;
            }
            Action::Worker {
                response: Response::Predicted { job, result },
                ..
            } => {
                if s.predict.computing != Some(job) {
                    return self;
                }
                s.predict.computing = None;
                s.predict.error = None;
                s.predict.result = Some(Rc::new(*result));
            }
            Action::Worker {
                response: Response::PredictedSoFar { job, result },
                ..
            } => {
                // Shown while the job goes on.
                if s.predict.computing != Some(job) {
                    return self;
                }
                s.predict.error = None;
                s.predict.result = Some(Rc::new(*result));
            }
            Action::Worker {
                response: Response::PredictFailed { job, error },
                ..
            } => {
                if s.predict.computing != Some(job) {
                    return self;
                }
                s.predict.computing = None;
                s.predict.error = Some(error);
            }
            Action::Worker { response, now_ms } => {
                let Phase::Loading(loading) = &mut s.phase else {
                    return self;
                };
                if response.job() != loading.job {
                    return self;
                }
                loading.now_ms = now_ms;
                match response {
                    Response::Detected { description, .. } => loading.format = Some(description),
                    Response::Progress {
                        bytes_read,
                        bytes_total,
                        events,
                        preview,
                        ..
                    } => {
                        loading.bytes_read = bytes_read;
                        loading.bytes_total = bytes_total.or(loading.bytes_total);
                        loading.events = events;
                        if let Some(p) = preview {
                            loading.preview = Some(Rc::new(*p));
                        }
                    }
                    Response::Done { results, .. } => {
                        s.load_ms = Some(now_ms - loading.started_ms);
                        let mut results = *results;
                        if let Some(r) = &s.report {
                            results.file_name = r.file_name.clone();
                            results.file_bytes = r.file_bytes;
                            results.format = r.format.clone();
                            results.format_description = r.format_description.clone();
                            results.compression = r.compression.clone();
                        }
                        let results = Rc::new(results);
                        // Estimates computed ahead are of the trace (or window) read before.
                        s.cache_sim.variants.clear();
                        s.cache_sim.variants_job = None;
                        s.cache_sim.variants_done = false;
                        if s.scoped_job != Some(loading.job) {
                            s.full = Some(results.clone());
                            // A new trace: the answers of the one before are not its answers,
                            // even for the same settings (the views match answers by settings,
                            // and the Array view's staging would take an old answer as shown).
                            s.cache_sim.result = None;
                            s.cache_sim.curves = None;
                            s.cache_sim.refining = None;
                            s.cache_sim.model = None;
                            s.predict.result = None;
                        }
                        s.results = Some(results);
                        s.phase = Phase::Ready;
                    }
                    Response::Failed { error, .. } => {
                        s.phase = Phase::Failed {
                            file_name: loading.file_name.clone(),
                            error,
                        };
                    }
                    Response::Cancelled { .. } => {
                        s.phase = Phase::Cancelled {
                            file_name: loading.file_name.clone(),
                        };
                    }
                    // The page passes hot data on to the load's worker (app.rs).
                    Response::HotCounted { .. }
                    | Response::Predicted { .. }
                    | Response::PredictedSoFar { .. }
                    | Response::PredictFailed { .. }
                    | Response::CacheSimulated { .. }
                    | Response::CacheSimFailed { .. }
                    | Response::CacheModeled { .. }
                    | Response::CacheModelProgress { .. }
                    | Response::CacheCurvesProgress { .. }
                    | Response::CacheCurvesRefined { .. }
                    | Response::Exported { .. }
                    | Response::ExportFailed { .. } => {}
                }
            }
            Action::Preloaded(results) => {
                let results = Rc::new(*results);
                s.report = Some(results.clone());
                s.full = Some(results.clone());
                s.results = Some(results);
                if !matches!(s.phase, Phase::Loading(_)) {
                    s.phase = Phase::Ready;
                }
            }
            Action::Cancel => {
                if let Phase::Loading(l) = &s.phase {
                    s.phase = Phase::Cancelled {
                        file_name: l.file_name.clone(),
                    };
                }
            }
            Action::SetUrl(url) => s.url = url,
            Action::Unscope => {
                if s.scoped_window.is_some() {
                    s.scoped_window = None;
                    s.results = s.full.clone();
                    if let Phase::Loading(l) = &s.phase {
                        if s.scoped_job == Some(l.job) {
                            s.phase = Phase::Ready;
                        }
                    }
                }
            }
        }
        Rc::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn stale_worker_messages_are_ignored() {
        let s = Rc::new(AppState::new(UrlState::default()));
        let s = s.reduce(Action::Start {
            job: 5,
            file_name: "a".into(),
            bytes_total: Some(100),
            now_ms: 0.0,
            window_secs: None,
        });
        let s = s.reduce(Action::Worker {
            response: Response::Progress {
                job: 4,
                bytes_read: 50,
                bytes_total: None,
                events: 1,
                preview: None,
            },
            now_ms: 1000.0,
        });
        let Phase::Loading(l) = &s.phase else {
            panic!("still loading")
        };
        assert_eq!(l.bytes_read, 0);
        let s = s.reduce(Action::Worker {
            response: Response::Progress {
                job: 5,
                bytes_read: 50,
                bytes_total: None,
                events: 1,
                preview: None,
            },
            now_ms: 1000.0,
        });
        let Phase::Loading(l) = &s.phase else {
            panic!("still loading")
        };
        assert_eq!(l.fraction(), Some(0.5));
        assert_eq!(l.rate_bytes_per_sec(), 50.0);
        assert_eq!(l.seconds_left(), Some(1.0));
        let s = s.reduce(Action::Cancel);
        assert!(matches!(s.phase, Phase::Cancelled { .. }));
    }

    /// Issue 12: the Cache view's first answer is an estimate from a sample (the cache and
    /// the curves), shown at once; the exact simulation replaces the cache's numbers and ends
    /// the computing, the refinement replaces the curves; a new size alone keeps the
    /// refinement, new curves drop it.
    #[wasm_bindgen_test(unsupported = test)]
    fn an_estimate_comes_first_and_is_replaced_by_the_exact_answer() {
        use analyzer_core::job::run_events;
        use analyzer_core::job::simulate::{Simulate, Stage};
        use analyzer_core::job::CacheParams;
        let (events, header) = crate::test_support::sample_events(40_000);
        let request = crate::worker::cache_sim::CacheSimRequest {
            with_curves: true,
            // As if the trace had far more accesses than these events: a sample's estimate.
            line_accesses: Some(4 << 20),
            ..crate::worker::cache_sim::CacheSimRequest::new(CacheParams {
                size_bytes: 16 << 20,
                ..CacheParams::default()
            })
        };
        let stages = request.stages();
        assert_eq!(
            stages.iter().map(|s| s.stage).collect::<Vec<_>>(),
            [Stage::Estimate, Stage::All, Stage::Curves]
        );
        let run = |r| run_events(Simulate::new(r).expect("job"), &header, &events).expect("runs");
        let result = run(stages[0].clone());
        let rate = result.estimate_rate.expect("an estimate of a sample");
        assert!(rate < 1.0 && result.runs_estimated);
        // The cell at the sample's rate, or higher to keep enough lines in its scaled cache.
        assert!(result.runs[0].sampled_rate.is_some_and(|r| r >= rate));
        let exact = run(stages[1].clone());
        assert_eq!(exact.estimate_rate, None);
        assert!(exact.curves.is_empty());
        let sampled = result.curves.clone();
        let mut refined = sampled.clone();
        refined[0].policy = "refined".into();
        let start = |s: Rc<AppState>, job, with_curves| {
            s.reduce(Action::CacheSimStart {
                job,
                now_ms: 0.0,
                with_curves,
            })
        };
        let worker =
            |s: Rc<AppState>, response, now_ms| s.reduce(Action::Worker { response, now_ms });
        let s = start(Rc::new(AppState::new(UrlState::default())), 1, true);
        let s = worker(
            s,
            Response::CacheSimulated {
                job: 1,
                result: Box::new(result.clone()),
            },
            300.0,
        );
        assert_eq!(s.cache_sim.refining, Some(1));
        assert_eq!(s.cache_sim.computing, Some(1), "the exact answer follows");
        assert_eq!(s.cache_sim.first_ms, Some(300.0));
        assert_eq!(s.cache_sim.elapsed_ms, None);
        assert_eq!(s.cache_sim.curves.as_deref(), Some(&sampled));
        assert_eq!(s.cache_sim.result.as_deref(), Some(&result));
        let s = worker(
            s,
            Response::CacheSimulated {
                job: 1,
                result: Box::new(exact.clone()),
            },
            700.0,
        );
        assert_eq!(s.cache_sim.computing, None);
        assert_eq!(s.cache_sim.first_ms, Some(300.0));
        assert_eq!(s.cache_sim.elapsed_ms, Some(700.0));
        assert_eq!(s.cache_sim.result.as_deref(), Some(&exact));
        assert_eq!(
            s.cache_sim.refining,
            Some(1),
            "the curves are still refined"
        );
        assert_eq!(s.cache_sim.curves.as_deref(), Some(&sampled));
        // The size moves: a simulation alone, the refinement goes on.
        let s = start(s, 2, false);
        let s = worker(
            s,
            Response::CacheCurvesProgress {
                job: 1,
                fraction: 0.5,
            },
            400.0,
        );
        assert_eq!(s.cache_sim.refine_progress, 0.5);
        let s = worker(
            s,
            Response::CacheCurvesRefined {
                job: 1,
                curves: refined.clone(),
            },
            2000.0,
        );
        assert_eq!(s.cache_sim.refining, None);
        assert_eq!(s.cache_sim.refined_ms, Some(2000.0));
        assert_eq!(s.cache_sim.curves.as_deref(), Some(&refined));
        // New curves (another policy) drop a refinement still running for the old ones.
        let s = worker(
            start(s, 3, true),
            Response::CacheSimulated {
                job: 3,
                result: Box::new(result),
            },
            100.0,
        );
        let s = start(s, 4, true);
        let s = worker(
            s,
            Response::CacheCurvesRefined {
                job: 3,
                curves: refined,
            },
            900.0,
        );
        assert_eq!(
            s.cache_sim.curves.as_deref(),
            Some(&sampled),
            "stale refinement"
        );
    }

    /// Issue 12: the variants stage's estimates are kept for the latest request only (they
    /// answer a new line size or mode at once), never end its computing or replace its answer,
    /// and a new trace drops them.
    #[wasm_bindgen_test(unsupported = test)]
    fn the_latest_requests_variants_are_kept_apart_from_its_answer() {
        use analyzer_core::job::run_events;
        use analyzer_core::job::simulate::{LineHints, Simulate};
        use analyzer_core::job::CacheParams;
        let (events, header) = crate::test_support::sample_events(20_000);
        let request = crate::worker::cache_sim::CacheSimRequest {
            footprint_lines: Some(100_000),
            line_accesses: Some(4 << 20),
            line_hints: vec![LineHints {
                line_bytes: 64 << 10,
                footprint_lines: 10_000,
                line_accesses: 1 << 20,
            }],
            ..crate::worker::cache_sim::CacheSimRequest::new(CacheParams {
                size_bytes: 16 << 20,
                ..CacheParams::default()
            })
        };
        let stages = request.stages();
        assert_eq!(
            stages.iter().map(|s| s.stage).collect::<Vec<_>>(),
            [
                Stage::Estimate,
                Stage::All,
                Stage::Variants,
                Stage::Variants
            ]
        );
        let run = |r| run_events(Simulate::new(r).expect("job"), &header, &events).expect("runs");
        // One other line size (the only one with hints) and three other modes, then the other
        // policies and the presets of a hinted line size.
        let parts = [run(stages[2].clone()), run(stages[3].clone())];
        let variants: Vec<_> = parts.iter().flat_map(|p| p.variants.clone()).collect();
        assert_eq!(parts[0].variants.len(), 4);
        let n = request.variants().len();
        assert!(n > 4);
        assert_eq!(variants.len(), n);
        let sixty_four = CacheParams {
            line_bytes: 64 << 10,
            ..request.cache.clone()
        };
        assert_eq!(variants[0].request.cache, sixty_four);
        let start = |s: Rc<AppState>, job| {
            s.reduce(Action::CacheSimStart {
                job,
                now_ms: 0.0,
                with_curves: false,
            })
        };
        let worker =
            |s: Rc<AppState>, response, now_ms| s.reduce(Action::Worker { response, now_ms });
        let exact = run(stages[1].clone());
        let s = start(Rc::new(AppState::new(UrlState::default())), 1);
        let s = worker(
            s,
            Response::CacheSimulated {
                job: 1,
                result: Box::new(exact.clone()),
            },
            500.0,
        );
        let part = |s: Rc<AppState>, job, i: usize| {
            worker(
                s,
                Response::CacheSimulated {
                    job,
                    result: Box::new(parts[i].clone()),
                },
                900.0,
            )
        };
        let post = |s: Rc<AppState>, job| part(part(s, job, 0), job, 1);
        let kept = |s: &AppState| {
            s.cache_sim
                .variants
                .iter()
                .map(|v| (**v).clone())
                .collect::<Vec<_>>()
        };
        let s = part(s, 1, 0);
        assert_eq!(s.cache_sim.variants_of_latest(), 4);
        assert!(
            !s.cache_sim.variants_complete(),
            "the policies and presets follow"
        );
        let s = part(s, 1, 1);
        assert_eq!(kept(&s), variants);
        assert_eq!(s.cache_sim.variants_of_latest(), n);
        assert!(s.cache_sim.variants_complete());
        assert_eq!(
            s.cache_sim.result.as_deref(),
            Some(&exact),
            "its answer stays"
        );
        assert_eq!(s.cache_sim.elapsed_ms, Some(500.0));
        // A newer request: the kept variants stay (they answer the new choice at once) but
        // are not its own; the old request's, arriving late, are dropped.
        let s = start(s, 2);
        assert_eq!(s.cache_sim.variants.len(), n);
        assert_eq!(s.cache_sim.variants_of_latest(), 0);
        assert!(!s.cache_sim.variants_complete());
        let s = post(s, 1);
        assert_eq!(s.cache_sim.variants.len(), n, "not added again");
        assert_eq!(s.cache_sim.computing, Some(2), "not an answer of job 2");
        // Its own replace them.
        let s = post(s, 2);
        assert_eq!(s.cache_sim.variants_of_latest(), n);
        assert_eq!(kept(&s), variants);
        // An Array view answer too, then a new trace drops them all.
        let predicted = run_events(
            analyzer_core::job::predict::Predict::new(crate::worker::predict::PredictRequest::new(
                vec![analyzer_core::job::predict::ArrayParams::default()],
                None,
                4,
            ))
            .expect("valid"),
            &header,
            &events[..500],
        )
        .expect("runs");
        let s = s.reduce(Action::PredictStart { job: 1 });
        let s = worker(
            s,
            Response::Predicted {
                job: 1,
                result: Box::new(predicted),
            },
            1.0,
        );
        assert!(s.predict.result.is_some() && s.cache_sim.result.is_some());
        let s = s.reduce(Action::Start {
            job: 7,
            file_name: "next.csv".into(),
            bytes_total: None,
            now_ms: 0.0,
            window_secs: None,
        });
        let bytes = crate::test_support::native(&header, &events[..200]);
        let mut session = crate::worker::session::Session::new(
            None,
            analyzer_core::decode::DecodeOptions::default(),
        );
        session
            .push(&bytes)
            .map_err(|e| e.plain_words())
            .expect("loads");
        let results = session
            .finish()
            .map_err(|e| e.plain_words())
            .expect("finishes")
            .into_results("next.bst".into(), bytes.len() as u64);
        let s = worker(
            s,
            Response::Done {
                job: 7,
                results: Box::new(results),
            },
            10.0,
        );
        assert!(s.cache_sim.variants.is_empty());
        assert_eq!(s.cache_sim.variants_of_latest(), 0);
        // And the previous trace's answers, which the views would match by their settings.
        assert_eq!(s.cache_sim.result, None);
        assert_eq!(s.cache_sim.curves, None);
        assert_eq!(s.predict.result, None);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_first_load_keeps_the_links_time_window() {
        let url = UrlState {
            window: Some((5.0, 15.0)),
            ..UrlState::default()
        };
        let s = Rc::new(AppState::new(url)).reduce(Action::Start {
            job: 1,
            file_name: "a".into(),
            bytes_total: None,
            now_ms: 0.0,
            window_secs: None,
        });
        assert_eq!(s.url.window, Some((5.0, 15.0)));
        assert_eq!(s.scoped_job, None, "the whole trace is read first");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn an_array_answer_so_far_shows_while_its_job_goes_on() {
        use crate::worker::predict::{ArrayParams, CacheParams, PredictRequest};
        let (events, header) = crate::test_support::sample_events(2_000);
        let layouts = vec![ArrayParams::default()];
        let run = |r: PredictRequest| {
            analyzer_core::job::run_events(
                analyzer_core::job::predict::Predict::new(r).expect("valid"),
                &header,
                &events,
            )
            .expect("runs")
        };
        let bare = run(PredictRequest::new(layouts.clone(), None, 4));
        let cached = run(PredictRequest::new(
            layouts,
            Some(CacheParams {
                size_bytes: 64 << 20,
                ..CacheParams::default()
            }),
            4,
        ));
        let worker =
            |s: Rc<AppState>, response, now_ms| s.reduce(Action::Worker { response, now_ms });
        let so_far = |job| Response::PredictedSoFar {
            job,
            result: Box::new(bare.clone()),
        };
        let s = Rc::new(AppState::new(UrlState::default())).reduce(Action::PredictStart { job: 3 });
        // An older job's early answer is dropped.
        let s = worker(s, so_far(2), 1.0);
        assert_eq!(s.predict.result, None);
        // Its own is shown, and the job still computes.
        let s = worker(s, so_far(3), 2.0);
        assert_eq!(s.predict.result.as_deref(), Some(&bare));
        assert_eq!(s.predict.computing, Some(3));
        // Then its answer replaces it and the job is done.
        let s = worker(
            s,
            Response::Predicted {
                job: 3,
                result: Box::new(cached.clone()),
            },
            3.0,
        );
        assert_eq!(s.predict.result.as_deref(), Some(&cached));
        assert_eq!(s.predict.computing, None);
    }
}
