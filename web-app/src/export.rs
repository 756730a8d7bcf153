//! "Export report" in the browser: the same self-contained HTML file `blocksight report` writes
//! (`analyzer_core::report::render`), built in the tab and downloaded through a `blob:` URL.
//!
//! Parts:
//! - the bundle (UI glue and wasm, worker glue and wasm, CSS): in a report, from the page's own
//!   data elements; when served over http (`blocksight serve`, any static server of `dist/`), by
//!   same-origin fetches of the bundle's files by name (Trunk's `filehash = false`), the CSS
//!   falling back to `document.styleSheets`. Opened any other way (`dist/index.html` from
//!   `file://`), there is nothing to read the bundle from, and the error says so;
//! - the results: the whole trace's, as the views have them, as JSON;
//! - the trace copy: built by an engine worker of its own (`Request::Export`), which re-reads the
//!   source in the same 4 MiB slices and samples at a rate fixed up front from the known event
//!   count (one pass); a report whose copy is already a sample passes its copy on unchanged;
//! - the URL hash, so the report opens at the same view and knobs.

use std::cell::RefCell;
use std::rc::Rc;

use analyzer_core::report::{self, Bundle, Page};
use gloo_worker::Spawnable;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::embedded;
use crate::worker::codec::JsCodec;
use crate::worker::protocol::{Request, Response, Results, Source};
use crate::worker::EngineWorker;

/// The bundle's files, as Trunk names them (Trunk.toml: `filehash = false`).
pub const BUNDLE_FILES: [&str; 5] = [
    "web-app.js",
    "web-app_bg.wasm",
    "worker.js",
    "worker_bg.wasm",
    "style.css",
];

/// What the export button shows.
#[derive(Clone, Debug, PartialEq)]
pub enum ExportStatus {
    Idle,
    Working { stage: String },
    Done(ExportDone),
    Failed(String),
}

/// A finished export.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportDone {
    pub file_name: String,
    pub bytes: u64,
    pub millis: f64,
    /// What the trace copy is, in words.
    pub copy: String,
}

/// Builds the trace copy in a worker of its own (so it does not queue behind a running cache
/// simulation or array prediction, and runs on another core), which ends when this returns.
async fn worker_copy(
    source: Source,
    total_events: u64,
) -> Result<(Vec<u8>, Option<f64>, u64), String> {
    let answer: Rc<RefCell<Option<Response>>> = Rc::new(RefCell::new(None));
    let resolve: Rc<RefCell<Option<js_sys::Function>>> = Rc::new(RefCell::new(None));
    let promise = js_sys::Promise::new(&mut |ok, _| *resolve.borrow_mut() = Some(ok));
    let mut spawner = EngineWorker::spawner();
    {
        let answer = answer.clone();
        spawner.callback(move |response| {
            if matches!(
                response,
                Response::Exported { .. } | Response::ExportFailed { .. }
            ) {
                *answer.borrow_mut() = Some(response);
                if let Some(ok) = resolve.borrow_mut().take() {
                    let _ = ok.call0(&JsValue::NULL);
                }
            }
        });
    }
    let url = embedded::worker_url().unwrap_or_else(|| crate::app::WORKER_LOADER.to_owned());
    let bridge = spawner.encoding::<JsCodec>().spawn_with_loader(&url);
    bridge.send(Request::Export {
        job: 1,
        source,
        embed_events: report::DEFAULT_EMBED_EVENTS,
        total_events,
    });
    JsFuture::from(promise)
        .await
        .map_err(|_| "the engine worker stopped".to_owned())?;
    drop(bridge);
    let answer = answer.borrow_mut().take();
    match answer {
        Some(Response::Exported {
            trace,
            sample_rate,
            events,
            ..
        }) => {
            let buffer = JsFuture::from(trace.array_buffer())
                .await
                .map_err(|e| format!("cannot read the trace copy: {}", js_error(e)))?;
            Ok((
                js_sys::Uint8Array::new(&buffer).to_vec(),
                sample_rate,
                events,
            ))
        }
        Some(Response::ExportFailed { error, .. }) => {
            Err(format!("the trace copy could not be built: {error}"))
        }
        _ => Err("the engine worker gave no trace copy".into()),
    }
}

fn js_error(e: JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// A same-origin file of the bundle, by name (relative to the page).
async fn fetch_bytes(name: &str) -> Result<Vec<u8>, String> {
    let window = web_sys::window().ok_or("no window")?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_str(name))
        .await
        .map_err(|e| format!("cannot fetch {name}: {}", js_error(e)))?
        .dyn_into()
        .map_err(|_| format!("cannot fetch {name}"))?;
    if !response.ok() {
        return Err(format!("cannot fetch {name}: HTTP {}", response.status()));
    }
    let buffer = JsFuture::from(response.array_buffer().map_err(js_error)?)
        .await
        .map_err(js_error)?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// The page's stylesheets as text (`document.styleSheets`, rule by rule).
fn css_from_document() -> String {
    let mut css = String::new();
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return css;
    };
    let sheets = js_sys::Reflect::get(&doc, &"styleSheets".into()).unwrap_or(JsValue::NULL);
    let get = |v: &JsValue, k: &str| js_sys::Reflect::get(v, &k.into()).unwrap_or(JsValue::NULL);
    let len = |v: &JsValue| get(v, "length").as_f64().unwrap_or(0.0) as u32;
    let item = |v: &JsValue, i: u32| js_sys::Reflect::get_u32(v, i).unwrap_or(JsValue::NULL);
    for i in 0..len(&sheets) {
        // `cssRules` throws for a cross-origin sheet; there are none, but skip one anyway.
        let Ok(rules) = js_sys::Reflect::get(&item(&sheets, i), &"cssRules".into()) else {
            continue;
        };
        for j in 0..len(&rules) {
            if let Some(text) = get(&item(&rules, j), "cssText").as_string() {
                css.push_str(&text);
                css.push('\n');
            }
        }
    }
    css
}

/// The bundle, from the report this page is, or from the server that served it.
pub async fn bundle() -> Result<Bundle, String> {
    if let Some(main_js) = embedded::base64_bytes(report::MAIN_JS_ID) {
        let part = |id: &str| {
            embedded::base64_bytes(id).ok_or_else(|| {
                format!("this report lacks its {id} element, so it cannot be exported again")
            })
        };
        let bundle = Bundle {
            css: css_from_document(),
            main_js: String::from_utf8(main_js).map_err(|_| "the report's UI glue is not UTF-8")?,
            main_wasm: part(report::MAIN_WASM_ID)?,
            worker_js: part(report::WORKER_JS_ID)?,
            worker_wasm: part(report::WORKER_WASM_ID)?,
        };
        bundle.check().map_err(|e| e.to_string())?;
        return Ok(bundle);
    }
    let protocol = embedded::location()
        .and_then(|l| l.protocol().ok())
        .unwrap_or_default();
    if embedded::worker_url().is_some() {
        return Err(
            "This report was written by an older blocksight that did not embed the app's \
                    JavaScript, so it cannot export itself. Run `blocksight report` on the trace \
                    instead."
                .into(),
        );
    }
    if !matches!(protocol.as_str(), "http:" | "https:") {
        return Err(
            "Exporting needs the app's own files, and a page opened from disk cannot \
                    read them. Open the app through `blocksight serve` (or any web server of \
                    dist/), or run `blocksight report TRACE -o report.html`."
                .into(),
        );
    }
    let mut parts = Vec::new();
    for name in &BUNDLE_FILES[..4] {
        parts.push(fetch_bytes(name).await.map_err(|e| {
            format!(
                "Exporting needs the app's own files from the server, and {e}. Serve the whole \
                 dist/ folder (as `blocksight serve` does), or run `blocksight report`."
            )
        })?);
    }
    let css = match fetch_bytes(BUNDLE_FILES[4]).await {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(_) => css_from_document(),
    };
    let mut parts = parts.into_iter();
    let mut next = || parts.next().unwrap_or_default();
    let bundle = Bundle {
        main_js: String::from_utf8(next()).map_err(|_| "web-app.js is not UTF-8")?,
        main_wasm: next(),
        worker_js: next(),
        worker_wasm: next(),
        css,
    };
    bundle.check().map_err(|e| e.to_string())?;
    Ok(bundle)
}

/// What an export works from (taken from the app's state when the button is pressed).
pub struct ExportInput {
    /// The whole trace's results.
    pub results: Rc<Results>,
    /// Where the trace can be re-read, if it can.
    pub source: Option<Source>,
    /// The URL hash (view and knobs) to open at.
    pub url_hash: String,
}

/// Builds the report and downloads it; `stage` is told what is happening.
pub async fn export(input: ExportInput, stage: &dyn Fn(&str)) -> Result<ExportDone, String> {
    let started = embedded::now_ms();
    stage("Collecting the app's files…");
    let bundle = bundle().await?;
    let mut results = (*input.results).clone();
    let embedded_copy = embedded::base64_bytes(report::TRACE_ID);
    let (trace, copy) = match (&input.source, results.embedded_sample_rate, embedded_copy) {
        // A report whose copy is a sample: the copy travels on as it is.
        (_, Some(rate), Some(bytes)) => (
            Some(bytes),
            format!("the same {:.2}% spatial sample of the trace", rate * 100.0),
        ),
        (Some(source), _, _) => {
            stage("Building the trace copy in the worker…");
            let (bytes, rate, events) = worker_copy(source.clone(), results.stat.events).await?;
            results.embedded_sample_rate = rate;
            let words = match rate {
                None => format!("the whole trace, {} events", crate::units::count(events)),
                Some(r) => format!(
                    "a {:.2}% spatial sample of the trace, {} events",
                    r * 100.0,
                    crate::units::count(events)
                ),
            };
            (Some(bytes), words)
        }
        (None, _, _) => (None, "no trace copy (only the results)".into()),
    };
    stage("Writing the page…");
    let results_json = serde_json::to_vec(&results).map_err(|e| e.to_string())?;
    let name = embedded::trace_name().unwrap_or_else(|| results.file_name.clone());
    let html = report::render(&Page {
        bundle: &bundle,
        results_json: &results_json,
        trace: trace.as_deref(),
        name: &name,
        url_hash: Some(&input.url_hash),
    });
    let file_name = report::file_name(&name);
    download(&html, &file_name)?;
    Ok(ExportDone {
        file_name,
        bytes: html.len() as u64,
        millis: embedded::now_ms() - started,
        copy,
    })
}

/// Saves `html` as `file_name` through a `blob:` URL and a download link.
fn download(html: &str, file_name: &str) -> Result<(), String> {
    let window = web_sys::window().ok_or("no window")?;
    let doc = window.document().ok_or("no document")?;
    let parts = js_sys::Array::of1(&JsValue::from_str(html));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type("text/html");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag).map_err(js_error)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(js_error)?;
    let a: web_sys::HtmlAnchorElement = doc
        .create_element("a")
        .map_err(js_error)?
        .dyn_into()
        .map_err(|_| "cannot make a download link")?;
    a.set_href(&url);
    a.set_download(file_name);
    let body = doc.body().ok_or("no body")?;
    body.append_child(&a).map_err(js_error)?;
    a.click();
    let _ = body.remove_child(&a);
    // The browser has taken the blob once the click is handled; free it a minute later.
    let revoke = wasm_bindgen::closure::Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    let _ = window
        .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 60_000);
    Ok(())
}
