//! Blocksight in the browser. The UI thread ([`app`], [`components`]) only renders results; the
//! engine runs in a Web Worker ([`worker`]) that reads the dropped file in `File.slice` chunks and
//! pushes them through analyzer-core's push decoders, so a multi-gigabyte trace never sits in
//! memory and the page never freezes.
//!
//! Invariants:
//! - Trace bytes and events never cross to the UI thread; the worker sends progress and results.
//!   The one exception is "Export report" ([`export`]): the worker's compact trace copy comes
//!   back as bytes and goes, base64-encoded, straight into the downloaded file.
//! - Text from a trace (device, host, file names) is only ever rendered as Yew text nodes, never
//!   as markup (`inner_html` is not used anywhere in this crate).
//! - Chart logic is pure: [`charts`] turns results into series and draws them on any plotters
//!   `DrawingBackend`; the canvas is only the browser's backend.

pub mod app;
pub mod charts;
pub mod components;
pub mod embedded;
pub mod error;
pub mod export;
pub mod state;
pub mod units;
pub mod url_state;
pub mod worker;

#[cfg(test)]
mod test_support;

// The browser tests (wasm-bindgen-test) run in headless Chromium: charts measure text on a canvas.
#[cfg(test)]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
