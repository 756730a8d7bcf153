//! The root component: owns the worker bridge and the app state, starts loads (drop, picker,
//! `?url=`, a report's embedded trace), and shows the progress, the error or the views.

use std::cell::RefCell;
use std::rc::Rc;

use analyzer_core::analysis::AnalysisPart;
use gloo_worker::{Spawnable, WorkerBridge};
use yew::prelude::*;

use crate::components::array::ArrayView;
use crate::components::cache::{chosen_cache, chosen_model, CacheView};
use crate::components::drop_zone::DropZone;
use crate::components::export::ExportButton;
use crate::components::hot_data::HotData;
use crate::components::overview::{speedup_request, Overview};
use crate::components::progress::Progress;
use crate::embedded;
use crate::state::{Action, AppState, Phase};
use crate::units::duration;
use crate::url_state::{UrlState, VIEWS};
use crate::worker::cache_sim::{CacheSimRequest, ModelRequest};
use crate::worker::codec::JsCodec;
use crate::worker::predict::{PredictRequest, Staging};
use crate::worker::protocol::{Request, Response, Results, Source};
use crate::worker::EngineWorker;

/// Trunk's loader shim for the worker binary (see index.html).
pub const WORKER_LOADER: &str = "./worker_loader.js";

/// An engine worker whose answers go to `on_response`.
fn spawn_engine(on_response: impl Fn(Response) + 'static) -> WorkerBridge<EngineWorker> {
    let mut spawner = EngineWorker::spawner();
    spawner.callback(on_response);
    let spawner = spawner.encoding::<JsCodec>();
    let url = embedded::worker_url().unwrap_or_else(|| WORKER_LOADER.to_owned());
    spawner.spawn_with_loader(&url)
}

/// The engine worker every view's jobs run in; its answers go to the app state.
fn spawn_worker(dispatch: UseReducerDispatcher<AppState>) -> WorkerBridge<EngineWorker> {
    spawn_engine(move |response| {
        dispatch.dispatch(Action::Worker {
            response,
            now_ms: embedded::now_ms(),
        })
    })
}

/// The second worker, spawned on a machine of two cores or more: it counts each load's hot
/// data (the core's `LoadHot`) while the first does the rest of the analysis, and the page
/// passes its answer on to the first (`JoinHot`), which then finishes the load.
fn spawn_helper(
    bridge: Rc<RefCell<Option<WorkerBridge<EngineWorker>>>>,
    dispatch: UseReducerDispatcher<AppState>,
) -> WorkerBridge<EngineWorker> {
    spawn_engine(move |response| match response {
        Response::HotCounted { job, hot } => {
            if let Some(b) = bridge.borrow().as_ref() {
                b.send(Request::JoinHot { job, hot });
            }
        }
        response => dispatch.dispatch(Action::Worker {
            response,
            now_ms: embedded::now_ms(),
        }),
    })
}

/// Whether loads are split over two workers: the browser reports two logical cores or more.
fn two_cores() -> bool {
    web_sys::window().is_some_and(|w| w.navigator().hardware_concurrency() >= 2.0)
}

/// The last request sent to the worker for a view, with the whole-trace results it was for.
type LastSent<T> = Rc<RefCell<Option<(T, Option<usize>)>>>;

/// Sends a job to the worker in `bridge` unless `key` (its request and the results it was made
/// from) is the one `last` holds: spawns the worker (`spawn`) when there is none, dispatches
/// `start` and sends `message(source, request)` for the last whole-trace load's source. Whether
/// it sent.
#[allow(clippy::too_many_arguments)]
fn send_new<T: Clone + PartialEq>(
    bridge: &RefCell<Option<WorkerBridge<EngineWorker>>>,
    spawn: impl FnOnce() -> WorkerBridge<EngineWorker>,
    last_source: &RefCell<Option<LastSource>>,
    state: &UseReducerHandle<AppState>,
    last: &LastSent<T>,
    key: (T, Option<usize>),
    start: Action,
    message: impl FnOnce(Source, T) -> Request,
) -> bool {
    if last.borrow().as_ref() == Some(&key) {
        return false;
    }
    let Some((source, _, _)) = last_source.borrow().clone() else {
        return false;
    };
    let mut slot = bridge.borrow_mut();
    let b = slot.get_or_insert_with(spawn);
    state.dispatch(start);
    *last.borrow_mut() = Some(key.clone());
    b.send(message(source, key.0));
    true
}

/// The last whole-trace load: source, file name, size.
type LastSource = (Source, String, Option<u64>);

/// A load to start: a whole trace, or (with `window_nanos`) a time window of the last one.
#[derive(Clone)]
struct StartLoad {
    source: Source,
    file_name: String,
    bytes_total: Option<u64>,
    window_nanos: Option<(u64, u64)>,
}

impl StartLoad {
    fn whole(source: Source, file_name: String, bytes_total: Option<u64>) -> StartLoad {
        StartLoad {
            source,
            file_name,
            bytes_total,
            window_nanos: None,
        }
    }
}

fn write_hash(url: &UrlState) {
    let Some(window) = web_sys::window() else {
        return;
    };
    if let Ok(history) = window.history() {
        let _ =
            history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url.to_hash()));
    }
}

#[function_component]
pub fn App() -> Html {
    let state = use_reducer(|| {
        let hash = embedded::location()
            .and_then(|l| l.hash().ok())
            .filter(|h| h.len() > 1)
            .or_else(embedded::url_hash)
            .unwrap_or_default();
        AppState::new(UrlState::from_hash(&hash))
    });
    let bridge: Rc<RefCell<Option<WorkerBridge<EngineWorker>>>> = use_mut_ref(|| None);
    let helper: Rc<RefCell<Option<WorkerBridge<EngineWorker>>>> = use_mut_ref(|| None);
    let first_chart_marked = use_mut_ref(|| false);

    // The last whole-trace source, re-read when the time window changes.
    let last_source: Rc<RefCell<Option<LastSource>>> = use_mut_ref(|| None);
    let start = {
        let bridge = bridge.clone();
        let helper = helper.clone();
        let state = state.clone();
        let first_chart_marked = first_chart_marked.clone();
        let last_source = last_source.clone();
        Callback::from(move |load: StartLoad| {
            let job = state.next_job;
            let part = if two_cores() {
                let mut slot = helper.borrow_mut();
                let h =
                    slot.get_or_insert_with(|| spawn_helper(bridge.clone(), state.dispatcher()));
                if let Some(old) = state.loading_job() {
                    h.send(Request::Cancel { job: old });
                }
                h.send(Request::LoadHot {
                    job,
                    source: load.source.clone(),
                    format: None,
                    window_nanos: load.window_nanos,
                });
                AnalysisPart::Rest
            } else {
                AnalysisPart::Whole
            };
            let mut slot = bridge.borrow_mut();
            let b = slot.get_or_insert_with(|| spawn_worker(state.dispatcher()));
            if let Some(old) = state.loading_job() {
                b.send(Request::Cancel { job: old });
            }
            let scoped = load.window_nanos.is_some();
            if !scoped {
                embedded::mark("drop");
                *first_chart_marked.borrow_mut() = false;
                *last_source.borrow_mut() = Some((
                    load.source.clone(),
                    load.file_name.clone(),
                    load.bytes_total,
                ));
            }
            state.dispatch(Action::Start {
                job,
                file_name: load.file_name,
                bytes_total: load.bytes_total,
                now_ms: embedded::now_ms(),
                window_secs: load
                    .window_nanos
                    .map(|(a, b)| (a as f64 / 1e9, b as f64 / 1e9)),
            });
            b.send(Request::Load {
                job,
                source: load.source,
                format: None,
                window_nanos: load.window_nanos,
                part,
            });
        })
    };

    // Start-up: a report's embedded results and trace, or `?url=` from `blocksight serve`.
    {
        let start = start.clone();
        let state = state.clone();
        use_effect_with((), move |_| {
            let preloaded = embedded::results();
            // A report's exact trace copy is re-analysed in the worker (the numbers must come
            // out the same); a sampled copy would change them, so its results stay as written.
            let reanalyse = preloaded
                .as_ref()
                .is_none_or(|r| r.embedded_sample_rate.is_none());
            if let Some(results) = preloaded {
                state.dispatch(Action::Preloaded(Box::new(results)));
            }
            if let Some((blob, name)) = embedded::trace().filter(|_| reanalyse) {
                let size = blob.size() as u64;
                start.emit(StartLoad::whole(
                    Source::Blob {
                        blob,
                        name: name.clone(),
                    },
                    name,
                    Some(size),
                ));
            } else if let Some(url) =
                embedded::url_param().and_then(|u| embedded::same_origin_url(&u))
            {
                let name = url.rsplit('/').next().unwrap_or("trace").to_owned();
                start.emit(StartLoad::whole(Source::Url { url }, name, None));
            }
        });
    }
    {
        let url = state.url.clone();
        use_effect_with(url, write_hash);
    }
    // The brush: a new time window re-analyses the trace for that window; clearing it goes
    // back to the whole trace's results without re-reading.
    {
        let start = start.clone();
        let last_source = last_source.clone();
        let state = state.clone();
        let full_ptr = state.full.as_ref().map(|r| Rc::as_ptr(r) as usize);
        use_effect_with((state.url.window, full_ptr), move |(window, full_ptr)| {
            if full_ptr.is_some() {
                match window {
                    None => state.dispatch(Action::Unscope),
                    Some((a, b)) => {
                        let scoped_now = state.scoped_window == Some((*a, *b));
                        if !scoped_now {
                            if let Some((source, name, size)) = last_source.borrow().clone() {
                                start.emit(StartLoad {
                                    source,
                                    file_name: name,
                                    bytes_total: size,
                                    window_nanos: state.url.window_nanos(),
                                });
                            }
                        }
                    }
                }
            }
        });
    }
    // The Array view's request: the layouts, depth, curve, time window and cache tier. The
    // Overview's speed-up card asks for its first layout with and without a cache of the
    // recommended size, without the curve (with default knobs, the Array view's first pass).
    let array_request = |full: &Results| {
        PredictRequest {
            cache_devices: state.url.cache_devices.clone(),
            ..PredictRequest::new(
                state.url.arrays.clone(),
                Some(chosen_cache(full, &state.url)),
                state.url.qd,
            )
        }
        .with_curve(state.url.curve)
        .with_window(PredictRequest::window_from_secs(state.url.window))
    };
    let speedup = state
        .full
        .as_ref()
        .and_then(|full| speedup_request(full, array_request(full)));
    // The worker re-reads the trace and predicts when the request changed (only while the Array
    // view or the Overview is shown; an unchanged request is not resent). On a large trace
    // estimates come first, then the chosen depth's exact numbers, then the curve when it is on
    // (`PredictRequest::staged`, given the events of the trace or window analysed).
    {
        let bridge = bridge.clone();
        let helper = helper.clone();
        let last_source = last_source.clone();
        let state = state.clone();
        let last_sent: LastSent<PredictRequest> = use_mut_ref(|| None);
        let request = match (&state.full, state.url.view.as_str()) {
            (Some(full), "array") => {
                let events = state.results.as_ref().unwrap_or(full).stat.events;
                Some(
                    array_request(full)
                        .staged(state.predict.result.as_ref().map(|r| &r.request), events),
                )
            }
            (Some(_), "overview") => speedup.clone(),
            _ => None,
        };
        let full_ptr = state.full.as_ref().map(|r| Rc::as_ptr(r) as usize);
        use_effect_with((request, full_ptr), move |(request, full_ptr)| {
            let Some(request) = request.clone() else {
                return;
            };
            let job = state.predict.next_job;
            // With two cores the predictions run in the second worker, beside the Cache view's
            // jobs in the first.
            let (target, spawn): (_, Box<dyn FnOnce() -> WorkerBridge<EngineWorker>>) =
                if two_cores() {
                    let (bridge, dispatch) = (bridge.clone(), state.dispatcher());
                    (&helper, Box::new(move || spawn_helper(bridge, dispatch)))
                } else {
                    let dispatch = state.dispatcher();
                    (&bridge, Box::new(move || spawn_worker(dispatch)))
                };
            send_new(
                target,
                spawn,
                &last_source,
                &state,
                &last_sent,
                (request, *full_ptr),
                Action::PredictStart { job },
                |source, request| Request::Predict {
                    job,
                    source,
                    request,
                },
            );
        });
    }
    // The Cache view: the chosen cache is simulated in the worker on the whole trace or the
    // brushed window (once that window's analysis is in, whose footprint sizes the curves);
    // the policies' curves are asked for again only when the line size, write mode, policy,
    // window or trace changed (not for a new size, preset or admission).
    {
        let bridge = bridge.clone();
        let last_source = last_source.clone();
        let state = state.clone();
        let last_sent: LastSent<CacheSimRequest> = use_mut_ref(|| None);
        // A kernel model (the product choices dm-cache and bcache) is its own job, the one
        // `blocksight simulate --preset dm-cache` runs; it and the generic simulation replace
        // each other in the worker, so each forgets the other's last request.
        let last_model: LastSent<ModelRequest> = use_mut_ref(|| None);
        // The window's analysis is in when the last load was of this window (its seconds came
        // from these nanoseconds) and nothing is loading.
        let scoped_nanos = state
            .scoped_window
            .map(|(a, b)| ((a * 1e9).round() as u64, (b * 1e9).round() as u64));
        let window_ready =
            scoped_nanos == state.url.window_nanos() && !matches!(state.phase, Phase::Loading(_));
        let model = match (&state.results, state.url.view.as_str()) {
            (Some(results), "cache") if window_ready => chosen_model(results, &state.url),
            _ => None,
        };
        let request = match (&state.results, state.url.view.as_str()) {
            (Some(results), "cache") if window_ready && model.is_none() => {
                let cache = chosen_cache(results, &state.url);
                let sizing = &results.analysis.cache_sizing;
                // The hints at every line size (the footprint and line accesses, from the
                // analysis): the worker runs the request in stages (`SimulateRequest::stages`):
                // an estimate from a sample first, then the exact cache, then the estimates of
                // its other line sizes and modes (answered at once when chosen), then the
                // refined curves.
                Some(CacheSimRequest {
                    with_curves: true,
                    window_nanos: state.url.window_nanos(),
                    ..CacheSimRequest::new(cache).with_hints(sizing)
                })
            }
            _ => None,
        };
        let results_ptr = state.results.as_ref().map(|r| Rc::as_ptr(r) as usize);
        {
            let bridge = bridge.clone();
            let last_source = last_source.clone();
            let state = state.clone();
            let last_sent = last_sent.clone();
            let last_model = last_model.clone();
            use_effect_with((model, results_ptr), move |(model, results_ptr)| {
                let Some(request) = model.clone() else {
                    return;
                };
                let job = state.cache_sim.next_job;
                let start = Action::CacheSimStart {
                    job,
                    now_ms: embedded::now_ms(),
                    with_curves: false,
                };
                let dispatch = state.dispatcher();
                let sent = send_new(
                    &bridge,
                    move || spawn_worker(dispatch),
                    &last_source,
                    &state,
                    &last_model,
                    (request, *results_ptr),
                    start,
                    |source, request| Request::CacheModel {
                        job,
                        source,
                        request,
                    },
                );
                if sent {
                    *last_sent.borrow_mut() = None;
                }
            });
        }
        use_effect_with((request, results_ptr), move |(request, results_ptr)| {
            let Some(mut request) = request.clone() else {
                return;
            };
            let same_curves = |last: &CacheSimRequest| {
                last.cache.policy == request.cache.policy
                    && last.cache.mode == request.cache.mode
                    && last.cache.line_bytes == request.cache.line_bytes
                    && last.window_nanos == request.window_nanos
            };
            if let Some((last, ptr)) = last_sent.borrow().as_ref() {
                if *ptr == *results_ptr && last.cache == request.cache && same_curves(last) {
                    return;
                }
                // A request that replaces one still computing curves asks for them again
                // (the worker drops the replaced job).
                request.with_curves = *ptr != *results_ptr
                    || !same_curves(last)
                    || (last.with_curves && state.cache_sim.computing.is_some());
            }
            let Some((source, _, _)) = last_source.borrow().clone() else {
                return;
            };
            let mut slot = bridge.borrow_mut();
            let b = slot.get_or_insert_with(|| spawn_worker(state.dispatcher()));
            let job = state.cache_sim.next_job;
            state.dispatch(Action::CacheSimStart {
                job,
                now_ms: embedded::now_ms(),
                with_curves: request.with_curves,
            });
            *last_sent.borrow_mut() = Some((request.clone(), *results_ptr));
            *last_model.borrow_mut() = None;
            b.send(Request::CacheSim {
                job,
                source,
                request,
            });
        });
    }
    let on_file = {
        let start = start.clone();
        Callback::from(move |file: web_sys::File| {
            let name = file.name();
            let size = file.size() as u64;
            let blob: web_sys::Blob = file.into();
            start.emit(StartLoad::whole(
                Source::Blob {
                    blob,
                    name: name.clone(),
                },
                name,
                Some(size),
            ));
        })
    };
    let on_cancel = {
        let bridge = bridge.clone();
        let helper = helper.clone();
        let state = state.clone();
        Callback::from(move |_| {
            if let Some(job) = state.loading_job() {
                for b in [&bridge, &helper] {
                    if let Some(b) = b.borrow().as_ref() {
                        b.send(Request::Cancel { job });
                    }
                }
            }
            state.dispatch(Action::Cancel);
        })
    };
    let on_toggle_table = {
        let state = state.clone();
        Callback::from(move |id: String| {
            state.dispatch(Action::SetUrl(state.url.toggle_table(&id)))
        })
    };
    // The results arrived (a whole trace or a window): the benchmark's "drop to results".
    use_effect_with(state.load_ms.map(f64::to_bits), |ms| {
        if ms.is_some() {
            embedded::mark("results");
        }
    });
    // "Export report": the bundle, the whole trace's results, a trace copy built in the worker and
    // the URL hash, downloaded as one HTML file (crate::export).
    let export_status = use_state(|| crate::export::ExportStatus::Idle);
    let on_export = {
        let last_source = last_source.clone();
        let state = state.clone();
        let export_status = export_status.clone();
        Callback::from(move |()| {
            let Some(results) = state.full.clone() else {
                return;
            };
            if state.loading_job().is_some() && state.scoped_job != state.loading_job() {
                export_status.set(crate::export::ExportStatus::Failed(
                    "A trace is being read; export once it is done.".into(),
                ));
                return;
            }
            let input = crate::export::ExportInput {
                results,
                source: last_source.borrow().as_ref().map(|(s, _, _)| s.clone()),
                url_hash: state.url.to_hash(),
            };
            let status = export_status.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let stage =
                    |s: &str| status.set(crate::export::ExportStatus::Working { stage: s.into() });
                let done = crate::export::export(input, &stage).await;
                status.set(match done {
                    Ok(d) => crate::export::ExportStatus::Done(d),
                    Err(why) => crate::export::ExportStatus::Failed(why),
                });
            });
        })
    };
    let on_drawn = {
        let first_chart_marked = first_chart_marked.clone();
        Callback::from(move |_| {
            if !*first_chart_marked.borrow() {
                *first_chart_marked.borrow_mut() = true;
                embedded::mark("first-chart");
            }
        })
    };

    let status = match &state.phase {
        Phase::Idle | Phase::Ready => html! {},
        Phase::Loading(l) => {
            html! { <Progress loading={l.clone()} on_cancel={on_cancel} on_drawn={on_drawn.clone()} /> }
        }
        Phase::Failed { file_name, error } => html! {
            <section class="error-panel" data-testid="error" role="alert">
                <h2>{ "Could not analyse " }{ file_name }</h2>
                <p data-testid="error-text">{ error.plain_words() }</p>
            </section>
        },
        Phase::Cancelled { file_name } => html! {
            <p class="notice" data-testid="cancelled">{ "Stopped reading " }{ file_name }{ "." }</p>
        },
    };

    let views = match &state.results {
        None => html! {},
        Some(results) => {
            let tabs = VIEWS.iter().map(|(id, label)| {
                let state = state.clone();
                let selected = state.url.view == *id;
                let onclick = Callback::from(move |_| {
                    state.dispatch(Action::SetUrl(state.url.with_view(id)))
                });
                html! {
                    <button class={classes!("tab", selected.then_some("selected"))} {onclick}
                        data-testid={format!("tab-{id}")}>{ *label }</button>
                }
            });
            let on_url = {
                let state = state.clone();
                Callback::from(move |u: UrlState| state.dispatch(Action::SetUrl(u)))
            };
            let full = state.full.clone().unwrap_or_else(|| results.clone());
            let view = match state.url.view.as_str() {
                "hot" => html! {
                    <HotData results={results.clone()} full={full} url={state.url.clone()} on_url={on_url.clone()}
                        on_toggle_table={on_toggle_table.clone()} />
                },
                "array" => {
                    let c = chosen_cache(&full, &state.url);
                    let cache_label = match state.url.kernel_model() {
                        // The replay's tier is the kernel's model, as `predict --preset`.
                        Some(m) => format!(
                            "{} {} (the kernel's model, as `blocksight predict --preset {}`), {}",
                            c.size().label(),
                            m.product_name(),
                            m.product_name(),
                            c.mode
                        ),
                        None => format!(
                            "{} {}, {} KiB lines, {}",
                            crate::units::bytes(c.size_bytes),
                            c.policy,
                            c.line_bytes >> 10,
                            c.mode
                        ),
                    };
                    html! {
                        <ArrayView url={state.url.clone()} on_url={on_url.clone()} predict={state.predict.clone()} {cache_label}
                            on_toggle_table={on_toggle_table.clone()} />
                    }
                }
                "cache" => html! {
                    <CacheView results={results.clone()} url={state.url.clone()} on_url={on_url.clone()} sim={state.cache_sim.clone()}
                        on_toggle_table={on_toggle_table.clone()} on_drawn={on_drawn.clone()} />
                },
                _ => html! {
                    <Overview results={results.clone()} tables={state.url.tables.clone()}
                        speedup={speedup.clone()} predict={state.predict.clone()} has_trace={last_source.borrow().is_some()}
                        on_toggle_table={on_toggle_table.clone()} on_drawn={on_drawn.clone()} />
                },
            };
            html! {
                <>
                    <nav class="tabs">{ for tabs }
                        <ExportButton status={(*export_status).clone()} on_export={on_export.clone()} />
                        if let Some(ms) = state.load_ms {
                            <span class="timing" data-testid="load-time">
                                { format!("analysed in {}", duration((ms * 1e6) as u64)) }
                            </span>
                        }
                    </nav>
                    if let Some((a, b)) = state.url.window {
                        <p class="notice" data-testid="window-banner">
                            { format!("Showing {} to {} after the first request; every view is scoped to this window. ",
                                duration((a * 1e9) as u64), duration((b * 1e9) as u64)) }
                            <button class="link" onclick={{
                                let state = state.clone();
                                Callback::from(move |_| state.dispatch(Action::SetUrl(UrlState { window: None, ..state.url.clone() })))
                            }}>{ "Show the whole trace" }</button>
                        </p>
                    }
                    { view }
                </>
            }
        }
    };

    html! {
        <main data-testid="app" data-phase={match state.phase {
            Phase::Idle => "idle", Phase::Loading(_) => "loading", Phase::Failed { .. } => "failed",
            Phase::Cancelled { .. } => "cancelled", Phase::Ready => "ready" }}>
            <header class="top">
                <h1>{ "Blocksight" }</h1>
                <DropZone on_file={on_file} compact={state.results.is_some()} />
            </header>
            { status }
            { views }
        </main>
    }
}
