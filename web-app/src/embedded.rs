//! Data a self-contained report carries in its page (written by `blocksight report` or by the
//! app's "Export report"): the analysis results and a copy of the trace, each base64-encoded
//! inside a non-executable `<script type="application/octet-stream">` element. Base64 has no `<`,
//! so trace contents can never close the element or inject markup.

use base64::Engine;

use crate::worker::protocol::Results;

/// Element ids, shared with the report writer (`analyzer_core::report`).
pub use analyzer_core::report::{
    RESULTS_ID, TRACE_ID, TRACE_NAME_ID, URL_HASH_ID, WORKER_URL_GLOBAL,
};

fn element_text(id: &str) -> Option<String> {
    let doc = web_sys::window()?.document()?;
    let text = doc.get_element_by_id(id)?.text_content()?;
    let text: String = text.split_ascii_whitespace().collect();
    (!text.is_empty()).then_some(text)
}

/// The bytes of a report's data element `id` (base64 inside the page).
pub fn base64_bytes(id: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(element_text(id)?)
        .ok()
}

/// Precomputed results embedded in a report.
pub fn results() -> Option<Results> {
    serde_json::from_slice(&base64_bytes(RESULTS_ID)?).ok()
}

/// The URL hash a report opens at when its location has none (the view and knobs of the app
/// that exported it).
pub fn url_hash() -> Option<String> {
    String::from_utf8(base64_bytes(URL_HASH_ID)?).ok()
}

/// The embedded trace's name, if the page embeds one.
pub fn trace_name() -> Option<String> {
    String::from_utf8(base64_bytes(TRACE_NAME_ID)?).ok()
}

/// The embedded trace as a `Blob`, with its file name.
pub fn trace() -> Option<(web_sys::Blob, String)> {
    let bytes = base64_bytes(TRACE_ID)?;
    let name = base64_bytes(TRACE_NAME_ID)
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_else(|| "trace".into());
    let array = js_sys::Uint8Array::from(bytes.as_slice());
    let parts = js_sys::Array::of1(&array);
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).ok()?;
    Some((blob, name))
}

/// The worker script URL set by a report's bootstrap, if this page is a report.
pub fn worker_url() -> Option<String> {
    let window = web_sys::window()?;
    js_sys::Reflect::get(&window, &WORKER_URL_GLOBAL.into())
        .ok()?
        .as_string()
}

/// Records a timing mark (`drop`, `results`, `first-chart`) in `window.__blocksightTimings`, for
/// the end-to-end tests and benchmarks; `performance.now()` milliseconds.
pub fn mark(name: &str) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let now = window.performance().map(|p| p.now()).unwrap_or(0.0);
    let key = wasm_bindgen::JsValue::from_str("__blocksightTimings");
    let timings = match js_sys::Reflect::get(&window, &key) {
        Ok(v) if v.is_object() => v,
        _ => {
            let o = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&window, &key, &o);
            o.into()
        }
    };
    let _ = js_sys::Reflect::set(&timings, &name.into(), &now.into());
}

/// `performance.now()`, or 0 where there is no clock.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// The current location's hash and query, for `?url=` and the URL state.
pub fn location() -> Option<web_sys::Location> {
    web_sys::window().map(|w| w.location())
}

/// Resolves `?url=` against the page and accepts it only when it is same-origin: the app never
/// fetches from elsewhere.
pub fn same_origin_url(raw: &str) -> Option<String> {
    let loc = location()?;
    let href = loc.href().ok()?;
    let url = web_sys::Url::new_with_base(raw, &href).ok()?;
    (url.origin() == loc.origin().ok()? && matches!(url.protocol().as_str(), "http:" | "https:"))
        .then(|| url.href())
}

/// The `url` query parameter of the page, if any.
pub fn url_param() -> Option<String> {
    let search = location()?.search().ok()?;
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
    params.get("url")
}
