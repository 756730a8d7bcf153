//! The self-contained HTML report, shared by `blocksight report` (collector) and the web app's
//! "Export report" button, so the two cannot drift: the page assembly ([`render`]), its
//! Content-Security-Policy ([`csp`]) and the compact trace copy ([`TraceCopy`], with its
//! SHARDS-style spatial sampling). Sans-IO: the caller brings the bundle's bytes, the results
//! JSON and the events; this module returns bytes and strings.
//!
//! The page is the app `trunk build` produces, with everything inlined: CSS in a `<style>`, the
//! UI's wasm and JS glue started by one inline module script (the bootstrap), and the worker's
//! glue and wasm turned into a `blob:` URL. The bundle's parts, the results and the trace copy are
//! base64 inside non-executable `<script type="application/octet-stream">` elements: base64 has
//! no `<`, so nothing from a trace (device or host names, paths) can end the element or become
//! markup. The UI's JS glue is there as data too, so an opened report can export itself again.
//!
//! Content-Security-Policy (a `<meta>` in the page):
//! - `default-src 'none'`: nothing is fetched, so `connect-src`, `img-src` from the network,
//!   fonts, frames and forms are all refused; the report cannot phone home.
//! - `script-src 'sha256-…' 'wasm-unsafe-eval'`: only the one bootstrap script whose hash
//!   [`render`] computed runs (an injected `<script>` would not), and wasm may be compiled.
//! - `worker-src blob:`: the engine worker is built from the page's own bytes.
//! - `style-src 'unsafe-inline'`: the stylesheet is inline and Yew sets `style` attributes (the
//!   progress bar); trace text is never markup, so this opens no script path.
//! - `img-src data:`: the empty favicon. `base-uri 'none'; form-action 'none'`.

use base64::Engine;
use sha2::{Digest, Sha256};

use crate::hash::{block_key, mix64};
use crate::native::{Compression, EncodeOptions, NativeEncoder};
use crate::{IoEvent, Sampling, TraceHeader};

/// Element ids of the page's data (read by `web-app/src/embedded.rs`).
pub const RESULTS_ID: &str = "bs-results";
pub const TRACE_ID: &str = "bs-trace";
pub const TRACE_NAME_ID: &str = "bs-trace-name";
/// The URL hash (view and knobs) the report opens at when its location has none.
pub const URL_HASH_ID: &str = "bs-url-hash";
pub const MAIN_JS_ID: &str = "bs-main-js";
pub const MAIN_WASM_ID: &str = "bs-main-wasm";
pub const WORKER_JS_ID: &str = "bs-worker-js";
pub const WORKER_WASM_ID: &str = "bs-worker-wasm";
/// The global the bootstrap sets to the worker's `blob:` URL.
pub const WORKER_URL_GLOBAL: &str = "__blocksightWorkerUrl";

/// Most events of the embedded trace copy unless the user says otherwise.
pub const DEFAULT_EMBED_EVENTS: u64 = 2_000_000;
/// Modulus of the spatial sampling hash for the embedded copy.
pub const SAMPLE_MODULUS: u64 = 1 << 24;
/// Requests are sampled by the hash of their first block of this size.
pub const SAMPLE_BLOCK_BYTES: u64 = 4096;

/// The parts of the built web bundle a report inlines (`trunk build` output: `style.css`,
/// `web-app.js`, `web-app_bg.wasm`, `worker.js`, `worker_bg.wasm`).
#[derive(Clone, Debug, Default)]
pub struct Bundle {
    pub css: String,
    pub main_js: String,
    pub main_wasm: Vec<u8>,
    pub worker_js: Vec<u8>,
    pub worker_wasm: Vec<u8>,
}

impl Bundle {
    /// Refuses a bundle a single file cannot hold (JS snippets imported by path).
    pub fn check(&self) -> Result<(), BundleError> {
        if self.main_js.contains("from './snippets/") || self.main_js.contains("from \"./snippets/")
        {
            return Err(BundleError::Snippets);
        }
        if self.main_wasm.is_empty() || self.worker_wasm.is_empty() || self.worker_js.is_empty() {
            return Err(BundleError::Incomplete);
        }
        Ok(())
    }
}

/// A web bundle a single-file report cannot be made from ([`Bundle::check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    #[error("web-app.js imports JS snippets, which a single-file report cannot inline")]
    Snippets,
    #[error("the web bundle is incomplete (a wasm or JS file is empty)")]
    Incomplete,
}

/// What one report page holds.
#[derive(Clone, Copy, Debug)]
pub struct Page<'a> {
    pub bundle: &'a Bundle,
    /// The web app's `Results` as JSON.
    pub results_json: &'a [u8],
    /// The trace copy (a native `.bst`), if any.
    pub trace: Option<&'a [u8]>,
    /// The trace's display name (title, file name of the copy).
    pub name: &'a str,
    /// The URL hash to open at (`#view=cache&cache=…`), if any.
    pub url_hash: Option<&'a str>,
}

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// Escapes text for an HTML text node or attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The bootstrap: the UI's wasm-bindgen glue (an ES module) followed by code that builds the
/// worker's `blob:` URL from the embedded worker glue and wasm, then starts the UI.
pub fn bootstrap(main_js: &str) -> String {
    format!(
        "{main_js}\n;\n\
         const bsBytes = (id) => {{ const s = atob(document.getElementById(id).textContent.trim()); \
         const b = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i); return b; }};\n\
         const bsWorker = new TextDecoder().decode(bsBytes('{WORKER_JS_ID}')) + \
         \"\\n;(function () {{ const s = atob(\" + JSON.stringify(document.getElementById('{WORKER_WASM_ID}').textContent.trim()) + \
         \"); const b = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i); \
         wasm_bindgen({{ module_or_path: b }}); }})();\\n\";\n\
         window.{WORKER_URL_GLOBAL} = URL.createObjectURL(new Blob([bsWorker], {{ type: 'text/javascript' }}));\n\
         await __wbg_init({{ module_or_path: bsBytes('{MAIN_WASM_ID}') }});\n"
    )
}

/// The CSP source of a script: `'sha256-<base64>'`.
pub fn script_hash(script: &str) -> String {
    format!("'sha256-{}'", b64(&Sha256::digest(script.as_bytes())))
}

/// The page's Content-Security-Policy for its one `script` (see the module documentation).
pub fn csp(script: &str) -> String {
    format!(
        "default-src 'none'; script-src {} 'wasm-unsafe-eval'; worker-src blob:; \
         style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'",
        script_hash(script)
    )
}

/// The whole page.
pub fn render(page: &Page<'_>) -> String {
    let bundle = page.bundle;
    let script = bootstrap(&bundle.main_js);
    let data = |html: &mut String, id: &str, bytes: &[u8]| {
        html.push_str("<script type=\"application/octet-stream\" id=\"");
        html.push_str(id);
        html.push_str("\">");
        html.push_str(&b64(bytes));
        html.push_str("</script>\n");
    };
    let mut html = String::with_capacity(
        (bundle.main_wasm.len()
            + bundle.worker_wasm.len()
            + bundle.worker_js.len()
            + bundle.main_js.len()
            + page.results_json.len()
            + page.trace.map_or(0, <[u8]>::len))
            * 4
            / 3
            + bundle.main_js.len()
            + bundle.css.len()
            + (64 << 10),
    );
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n",
        csp(&script)
    ));
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html.push_str("<link rel=\"icon\" href=\"data:,\">\n");
    html.push_str(&format!(
        "<title>Blocksight report: {}</title>\n",
        escape(page.name)
    ));
    html.push_str(&format!(
        "<style>{}</style>\n",
        bundle.css.replace("</", "<\\/")
    ));
    data(&mut html, RESULTS_ID, page.results_json);
    if let Some(t) = page.trace {
        data(&mut html, TRACE_ID, t);
        data(&mut html, TRACE_NAME_ID, page.name.as_bytes());
    }
    if let Some(h) = page.url_hash.filter(|h| !h.is_empty()) {
        data(&mut html, URL_HASH_ID, h.as_bytes());
    }
    data(&mut html, MAIN_JS_ID, bundle.main_js.as_bytes());
    data(&mut html, MAIN_WASM_ID, &bundle.main_wasm);
    data(&mut html, WORKER_JS_ID, &bundle.worker_js);
    data(&mut html, WORKER_WASM_ID, &bundle.worker_wasm);
    html.push_str("<script type=\"module\">");
    html.push_str(&script);
    html.push_str("</script>\n</head>\n<body></body>\n</html>\n");
    html
}

/// A file name for the report of trace `name`: `<stem>-blocksight.html`, where the stem drops a
/// compression suffix and one format suffix, and keeps only letters, digits, `.`, `-` and `_`.
pub fn file_name(name: &str) -> String {
    let mut stem = name.rsplit(['/', '\\']).next().unwrap_or(name);
    for suffix in [".gz", ".zst", ".xz"] {
        if let Some(s) = stem.strip_suffix(suffix) {
            stem = s;
            break;
        }
    }
    if let Some((s, ext)) = stem.rsplit_once('.') {
        if !s.is_empty() && ext.len() <= 5 {
            stem = s;
        }
    }
    let mut clean: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    let trimmed = clean.trim_start_matches('.').len();
    if trimmed == 0 {
        clean = "trace".into();
    } else {
        clean = clean[clean.len() - trimmed..].to_owned();
    }
    format!("{clean}-blocksight.html")
}

/// The sampling threshold (of [`SAMPLE_MODULUS`]) that keeps about `embed_events` of
/// `total_events`, or `None` when the whole trace fits.
pub fn sample_threshold(embed_events: u64, total_events: u64) -> Option<u64> {
    if total_events <= embed_events {
        return None;
    }
    let rate = embed_events as f64 / total_events as f64;
    Some(((rate * SAMPLE_MODULUS as f64) as u64).clamp(1, SAMPLE_MODULUS))
}

/// The compact trace copy: a native `.bst` (LZ4) built event by event, optionally keeping only
/// requests whose first 4 KiB block hashes below a threshold (so a block is either wholly in the
/// copy or not at all), abandoned past `limit` events (memory stays bounded by the limit).
pub struct TraceCopy {
    limit: u64,
    threshold: Option<u64>,
    out: Vec<u8>,
    encoder: Option<NativeEncoder>,
    events: u64,
    overflowed: bool,
    /// Keep the first `limit` events and ignore the rest, instead of abandoning the copy.
    prefix: bool,
    /// Events offered to a prefix copy, kept or not.
    seen: u64,
}

/// What a report's embedded trace copy holds, for the page's results and the CLI's message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CopyKind {
    /// Every request of the trace.
    Whole,
    /// A block-address sample keeping this share of the blocks.
    Sample { rate: f64 },
    /// The first requests of the trace, because the block sample kept none (all the I/O falls
    /// on blocks the hash leaves out, for example one hot block); `of` is the trace's count.
    Prefix { of: u64 },
}

/// A finished trace copy: its `.bst` bytes, the real number of events in it and what it is.
#[derive(Clone, Debug, PartialEq)]
pub struct EmbeddedCopy {
    pub bytes: Vec<u8>,
    pub events: u64,
    pub kind: CopyKind,
}

impl EmbeddedCopy {
    /// The sample rate the page's results carry (`embedded_sample_rate`): only a block sample
    /// has one; analyses of a copy rescale by it.
    pub fn sample_rate(&self) -> Option<f64> {
        match self.kind {
            CopyKind::Sample { rate } => Some(rate),
            CopyKind::Whole | CopyKind::Prefix { .. } => None,
        }
    }

    /// What the copy holds in words, with its real event count (never an estimate).
    pub fn describe(&self, size: &str) -> String {
        let n = self.events;
        match self.kind {
            CopyKind::Whole => format!("the whole trace ({size}, {n} events)"),
            CopyKind::Sample { rate } => format!(
                "a {:.2}% spatial sample of the trace ({size}, {n} events)",
                rate * 100.0
            ),
            CopyKind::Prefix { of } => format!(
                "the first {n} of {of} events ({size}): the spatial sample kept no request, \
                 as the I/O falls on too few blocks"
            ),
        }
    }
}

/// The copy of a trace with more than `embed_events` events, built in one pass over it: a block
/// sample at [`sample_threshold`], and beside it the first `embed_events` events, which replace
/// the sample when the hash keeps nothing (the sample then holds no data at all, while the
/// report claimed a sample of the trace). Memory stays bounded: the prefix by `embed_events`,
/// the sample by 4 × `embed_events` (I/O concentrated on a few sampled blocks can exceed the
/// target; past the bound the prefix is used too).
pub struct SampledCopy {
    sample: TraceCopy,
    prefix: TraceCopy,
    total_events: u64,
}

impl SampledCopy {
    pub fn new(embed_events: u64, total_events: u64) -> SampledCopy {
        let threshold = sample_threshold(embed_events, total_events);
        SampledCopy {
            sample: TraceCopy::new(embed_events.saturating_mul(4), threshold),
            prefix: TraceCopy::first(embed_events),
            total_events,
        }
    }

    pub fn push(&mut self, e: &IoEvent) {
        self.sample.push(e);
        self.prefix.push(e);
    }

    /// The sample when it kept something and stayed in bounds, else the prefix.
    pub fn finish(self, header: &TraceHeader) -> EmbeddedCopy {
        let rate = self.sample.sample_rate();
        if self.sample.complete() && self.sample.events() > 0 {
            let events = self.sample.events();
            let kind = rate.map_or(CopyKind::Whole, |rate| CopyKind::Sample { rate });
            return EmbeddedCopy {
                bytes: self.sample.finish(header),
                events,
                kind,
            };
        }
        let of = self.total_events.max(self.prefix.seen);
        let events = self.prefix.events();
        EmbeddedCopy {
            bytes: self.prefix.finish(header),
            events,
            kind: CopyKind::Prefix { of },
        }
    }
}

impl TraceCopy {
    /// Up to `limit` events (0: no copy), sampled at `threshold` / [`SAMPLE_MODULUS`] if given.
    pub fn new(limit: u64, threshold: Option<u64>) -> TraceCopy {
        let mut out = Vec::new();
        let options = EncodeOptions {
            compression: Compression::Lz4,
            ..EncodeOptions::default()
        };
        // The header is only complete at the end (text formats find devices as they go); the
        // final one supersedes this one in `finish`.
        let encoder =
            (limit > 0).then(|| NativeEncoder::new(&TraceHeader::new("native"), options, &mut out));
        TraceCopy {
            limit,
            threshold,
            out,
            encoder,
            events: 0,
            overflowed: false,
            prefix: false,
            seen: 0,
        }
    }

    /// The first `limit` events, unsampled; later ones are ignored and, in the final header,
    /// counted as dropped (so whatever reads the copy knows it is not the whole trace).
    pub fn first(limit: u64) -> TraceCopy {
        TraceCopy {
            prefix: true,
            ..TraceCopy::new(limit, None)
        }
    }

    /// Whether the sample keeps this request.
    pub fn keeps(&self, e: &IoEvent) -> bool {
        self.threshold.is_none_or(|t| {
            mix64(block_key(e.device, e.offset_bytes / SAMPLE_BLOCK_BYTES)) % SAMPLE_MODULUS < t
        })
    }

    pub fn push(&mut self, e: &IoEvent) {
        if self.overflowed || !self.keeps(e) {
            return;
        }
        self.seen += 1;
        if self.prefix && self.events >= self.limit {
            return;
        }
        self.events += 1;
        if self.events > self.limit {
            self.overflowed = true;
            self.encoder = None;
            self.out = Vec::new();
            return;
        }
        if let Some(enc) = self.encoder.as_mut() {
            enc.push(e, &mut self.out);
        }
    }

    /// False once more than `limit` events were kept (the copy was dropped).
    pub fn complete(&self) -> bool {
        !self.overflowed
    }

    /// Events kept so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The share of requests kept, when sampled.
    pub fn sample_rate(&self) -> Option<f64> {
        self.threshold.map(|t| t as f64 / SAMPLE_MODULUS as f64)
    }

    /// The `.bst` bytes, with `header` as the final header (its sampling set to this copy's
    /// when sampled and the trace was not already). Empty when there is no copy.
    pub fn finish(mut self, header: &TraceHeader) -> Vec<u8> {
        let mut header = header.clone();
        if let (Some(threshold), None) = (self.threshold, &header.sampling) {
            header.sampling = Some(Sampling {
                block_bytes: SAMPLE_BLOCK_BYTES,
                threshold,
                modulus: SAMPLE_MODULUS,
            });
        }
        if self.prefix {
            header.dropped_events = header
                .dropped_events
                .saturating_add(self.seen - self.events);
        }
        if let Some(mut enc) = self.encoder.take() {
            enc.update_header(&header, &mut self.out);
            enc.finish(&mut self.out);
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Decoder;
    use crate::Op;

    fn bundle() -> Bundle {
        Bundle {
            css: "body{} a::after{content:\"</style>\"}".into(),
            main_js: "async function __wbg_init(x) {}".into(),
            main_wasm: vec![0, 97, 115, 109],
            worker_js: b"let wasm_bindgen;".to_vec(),
            worker_wasm: vec![1, 2, 3],
        }
    }

    fn data_element(html: &str, id: &str) -> Option<Vec<u8>> {
        let open = format!("<script type=\"application/octet-stream\" id=\"{id}\">");
        let text = html.split(&open).nth(1)?.split("</script>").next()?;
        base64::engine::general_purpose::STANDARD.decode(text).ok()
    }

    #[test]
    fn bundles_a_single_file_cannot_hold_are_refused() {
        assert_eq!(bundle().check(), Ok(()));
        let snippets = Bundle {
            main_js: "import * as x from './snippets/web-app-1/inline0.js';".into(),
            ..bundle()
        };
        assert_eq!(snippets.check(), Err(BundleError::Snippets));
        let empty = Bundle {
            worker_wasm: Vec::new(),
            ..bundle()
        };
        assert_eq!(empty.check(), Err(BundleError::Incomplete));
    }

    #[test]
    fn hostile_names_and_data_cannot_break_out() {
        let evil = "</script><img src=x onerror=alert(1)>";
        let results = format!("{{\"file_name\":\"{evil}\"}}");
        let hash = format!("#view=cache&x={evil}");
        let html = render(&Page {
            bundle: &bundle(),
            results_json: results.as_bytes(),
            trace: Some(evil.as_bytes()),
            name: evil,
            url_hash: Some(&hash),
        });
        assert!(!html.contains("<img"), "markup from the trace appeared");
        assert!(html.contains("&lt;/script&gt;&lt;img"), "title is escaped");
        assert!(!html.contains("</style>\"}"), "CSS cannot end its element");
        // The data comes back byte for byte.
        assert_eq!(
            data_element(&html, RESULTS_ID).as_deref(),
            Some(results.as_bytes())
        );
        assert_eq!(
            data_element(&html, TRACE_NAME_ID).as_deref(),
            Some(evil.as_bytes())
        );
        assert_eq!(
            data_element(&html, URL_HASH_ID).as_deref(),
            Some(hash.as_bytes())
        );
        // The UI's glue is there as data, so the report can export itself again.
        assert_eq!(
            data_element(&html, MAIN_JS_ID).as_deref(),
            Some(bundle().main_js.as_bytes())
        );
        // Exactly one executable script, and its hash is the policy's only script source.
        assert_eq!(html.matches("<script type=\"module\">").count(), 1);
        assert_eq!(html.matches("<script").count(), 1 + 8);
        let script = html
            .split("<script type=\"module\">")
            .nth(1)
            .and_then(|s| s.split("</script>").next())
            .expect("bootstrap present");
        let digest =
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(script.as_bytes()));
        let policy = html
            .split("http-equiv=\"Content-Security-Policy\" content=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("policy present");
        assert_eq!(policy, csp(script));
        assert!(policy.starts_with("default-src 'none'; "));
        assert!(policy.contains(&format!("script-src 'sha256-{digest}' 'wasm-unsafe-eval';")));
        assert!(!policy.contains("connect-src"));
        assert!(!policy.contains("'unsafe-eval'"));
        // A different glue gives a different hash: the policy is computed, not fixed.
        let other = Bundle {
            main_js: "async function __wbg_init(y) {}".into(),
            ..bundle()
        };
        assert_ne!(csp(&bootstrap(&other.main_js)), policy);
    }

    #[test]
    fn no_trace_no_hash_elements() {
        let html = render(&Page {
            bundle: &bundle(),
            results_json: b"{}",
            trace: None,
            name: "t",
            url_hash: Some(""),
        });
        assert!(data_element(&html, TRACE_ID).is_none());
        assert!(data_element(&html, URL_HASH_ID).is_none());
        assert!(data_element(&html, WORKER_WASM_ID).is_some());
    }

    #[test]
    fn file_names_are_plain() {
        assert_eq!(
            file_name("pgbench.tracefs.txt.zst"),
            "pgbench.tracefs-blocksight.html"
        );
        assert_eq!(file_name("db.bst"), "db-blocksight.html");
        assert_eq!(
            file_name("<img src=x onerror=1>.csv"),
            "_img_src_x_onerror_1_-blocksight.html"
        );
        assert_eq!(file_name("../../.."), "trace-blocksight.html");
        assert_eq!(file_name(""), "trace-blocksight.html");
    }

    fn ev(i: u64) -> IoEvent {
        IoEvent {
            time_nanos: i,
            device: 0,
            offset_bytes: i * 4096,
            len_bytes: 4096,
            op: Op::Read,
            latency_nanos: None,
            pid: None,
        }
    }

    #[test]
    fn copy_samples_by_block_and_overflows_past_its_limit() {
        let mut c = TraceCopy::new(10, None);
        (0..10).for_each(|i| c.push(&ev(i)));
        assert!(c.complete());
        c.push(&ev(10));
        assert!(!c.complete());
        assert!(c.finish(&TraceHeader::new("x")).is_empty());

        assert_eq!(sample_threshold(100, 100), None);
        let t = sample_threshold(10_000, 40_000).expect("sampled");
        assert_eq!(t, SAMPLE_MODULUS / 4);
        assert_eq!(sample_threshold(1, u64::MAX), Some(1));
        let mut s = TraceCopy::new(u64::MAX, Some(t));
        (0..40_000).for_each(|i| s.push(&ev(i % 20_000)));
        // Each block is kept every time or never: kept events are even in number.
        assert_eq!(s.events() % 2, 0);
        let share = s.events() as f64 / 40_000.0;
        assert!((share - 0.25).abs() < 0.03, "{share}");
        assert_eq!(s.sample_rate(), Some(0.25));
    }

    #[test]
    fn a_sampled_copy_decodes_with_its_sampling_in_the_header() {
        let t = sample_threshold(5_000, 20_000);
        let mut s = TraceCopy::new(DEFAULT_EMBED_EVENTS, t);
        (0..20_000).for_each(|i| s.push(&ev(i)));
        let kept = s.events();
        let mut header = TraceHeader::new("tracefs-text");
        header.host = Some("<b>host</b>".into());
        let bytes = s.finish(&header);
        let mut d = crate::native::NativeDecoder::new();
        d.push(&bytes);
        d.finish();
        let mut n = 0;
        while let Some(e) = d.next_event().expect("the copy decodes") {
            assert!(TraceCopy::new(1, t).keeps(&e));
            n += 1;
        }
        assert_eq!(n, kept);
        let sampling = d.header().sampling.expect("sampling recorded");
        assert_eq!(Some(sampling.threshold), t);
        assert_eq!(sampling.modulus, SAMPLE_MODULUS);
        assert_eq!(d.header().host.as_deref(), Some("<b>host</b>"));
    }

    fn decoded(bytes: &[u8]) -> (Vec<IoEvent>, TraceHeader) {
        let mut d = crate::native::NativeDecoder::new();
        d.push(bytes);
        d.finish();
        let mut events = Vec::new();
        while let Some(e) = d.next_event().expect("the copy decodes") {
            events.push(e);
        }
        (events, d.header().clone())
    }

    #[test]
    fn issue_13_a_sample_that_keeps_nothing_falls_back_to_a_prefix_and_says_so() {
        // Every request on one block, and a block the hash leaves out of a 1% sample: the old
        // copy held 0 events while the report said "about 1,000 events".
        let threshold = sample_threshold(1_000, 100_000);
        let block = (0u64..)
            .find(|b| !TraceCopy::new(1, threshold).keeps(&ev(*b)))
            .expect("some block is outside a 1% sample");
        let mut copy = SampledCopy::new(1_000, 100_000);
        for i in 0..100_000 {
            copy.push(&IoEvent {
                time_nanos: i,
                ..ev(block)
            });
        }
        let copy = copy.finish(&TraceHeader::new("csv"));
        assert_eq!(copy.kind, CopyKind::Prefix { of: 100_000 });
        assert_eq!(copy.events, 1_000);
        assert_eq!(copy.sample_rate(), None);
        let (events, header) = decoded(&copy.bytes);
        assert_eq!(events.len(), 1_000);
        assert_eq!(events[999].time_nanos, 999);
        // The copy's own header says it is not the whole trace.
        assert_eq!(header.dropped_events, 99_000);
        let text = copy.describe("5 KiB");
        assert!(text.contains("the first 1000 of 100000 events"), "{text}");
    }

    #[test]
    fn issue_13_a_sample_states_its_real_count() {
        let mut copy = SampledCopy::new(5_000, 20_000);
        (0..20_000).for_each(|i| copy.push(&ev(i)));
        let copy = copy.finish(&TraceHeader::new("csv"));
        let (events, _) = decoded(&copy.bytes);
        assert!(!events.is_empty());
        assert_eq!(copy.events, events.len() as u64);
        assert_eq!(copy.sample_rate(), Some(0.25));
        assert!(copy
            .describe("1 KiB")
            .contains(&format!("({} KiB, {} events)", 1, events.len())));
    }
}
