//! `blocksight report IN -o report.html`: one self-contained HTML file with the web app, the
//! analysis results and a compact copy of the trace, which opens from `file://` with no network.
//!
//! The page is the same app `trunk build` produces (found at run time, see [`web_dir`]), with
//! everything inlined: CSS in a `<style>`, the UI's wasm and JS glue started by one inline module
//! script, and the worker's glue and wasm turned into a `blob:` URL. Results and the trace copy
//! are base64 inside non-executable `<script type="application/octet-stream">` elements: base64
//! has no `<`, so nothing from a trace (device or host names, paths) can end the element or
//! become markup.
//!
//! Content-Security-Policy (a `<meta>` in the page):
//! - `default-src 'none'`: nothing is fetched, so `connect-src`, `img-src` from the network,
//!   fonts, frames and forms are all refused; the report cannot phone home.
//! - `script-src 'sha256-…' 'wasm-unsafe-eval'`: only the one bootstrap script whose hash this
//!   command computed runs (an injected `<script>` would not), and wasm may be compiled.
//! - `worker-src blob:`: the engine worker is built from the page's own bytes.
//! - `style-src 'unsafe-inline'`: the stylesheet is inline and Yew sets `style` attributes (the
//!   progress bar); trace text is never markup, so this opens no script path.
//! - `img-src data:`: the empty favicon. `base-uri 'none'; form-action 'none'`.

use std::io::Write;
use std::path::{Path, PathBuf};

use analyzer_core::analysis::{Analysis, AnalysisConfig};
use analyzer_core::compress::Codec;
use analyzer_core::hash::{block_key, mix64};
use analyzer_core::native::{Compression, EncodeOptions, NativeEncoder};
use analyzer_core::stat::Stat;
use analyzer_core::{IoEvent, Sampling, TraceHeader};
use anyhow::{bail, Context};
use base64::Engine;
use sha2::{Digest, Sha256};

use crate::input::{self, InputArgs};
use crate::output::{bytes, count};

/// Element ids shared with the web app (`web-app/src/embedded.rs`).
const RESULTS_ID: &str = "bs-results";
const TRACE_ID: &str = "bs-trace";
const TRACE_NAME_ID: &str = "bs-trace-name";

/// Modulus of the spatial sampling hash for the embedded copy.
const SAMPLE_MODULUS: u64 = 1 << 24;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// Where to write the HTML file.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
    /// Most events of the trace copy embedded in the report (as a compact .bst). Larger traces
    /// are spatially sampled down to about this many (SHARDS-style, by block address); 0 embeds
    /// no copy, only the results.
    #[arg(long, value_name = "N", default_value_t = 2_000_000)]
    pub embed_events: u64,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let web = web_dir()?;
    let bundle = Bundle::load(&web)?;

    let mut stat = Stat::new();
    let mut analysis = Analysis::new(AnalysisConfig::default());
    let mut copy = Copy::new(args.embed_events, None);
    let read = input::read_events(&args.input, |e| {
        stat.observe(e);
        analysis.observe(e);
        copy.push(e);
    })?;
    input::warn_diagnostics(&read);
    let stat = stat.finish(&read.header, &read.diagnostics);
    let analysis = analysis.finish(&read.header, &read.diagnostics);

    let mut sample_rate = None;
    let trace = if args.embed_events == 0 {
        None
    } else if copy.complete() {
        Some(copy.finish(&read.header))
    } else {
        // Too many events: a second pass keeps the requests whose first block hashes below a
        // threshold, so every block is either fully in the copy or not at all.
        let rate = args.embed_events as f64 / stat.events.max(1) as f64;
        let threshold = ((rate * SAMPLE_MODULUS as f64) as u64).max(1);
        let mut sampled = Copy::new(u64::MAX, Some(threshold));
        let mut quiet = args.input.clone();
        quiet.quiet = true;
        input::read_events(&quiet, |e| sampled.push(e))?;
        let mut header = read.header.clone();
        if header.sampling.is_none() {
            header.sampling = Some(Sampling {
                block_bytes: 4096,
                threshold,
                modulus: SAMPLE_MODULUS,
            });
        }
        sample_rate = Some(threshold as f64 / SAMPLE_MODULUS as f64);
        Some(sampled.finish(&header))
    };

    let file_name = display_name(&args.input.inputs);
    let file_bytes: u64 = args
        .input
        .inputs
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let compression = args
        .input
        .inputs
        .first()
        .and_then(|p| std::fs::File::open(p).ok())
        .and_then(|mut f| {
            let mut head = [0u8; 8];
            std::io::Read::read(&mut f, &mut head)
                .ok()
                .map(|n| head[..n].to_vec())
        })
        .and_then(|h| Codec::detect(&h))
        .map_or("none", Codec::name);
    // The web app's `Results` (web-app/src/worker/protocol.rs), field for field.
    let results = serde_json::json!({
        "file_name": file_name,
        "file_bytes": file_bytes,
        "format": read.format.name(),
        "format_description": read.format.description(),
        "compression": compression,
        "host": read.header.host,
        "stat": stat,
        "analysis": analysis,
        "embedded_sample_rate": sample_rate,
    });
    let results = serde_json::to_vec(&results)?;
    let html = render(&bundle, &results, trace.as_deref(), &file_name);
    let mut out = std::fs::File::create(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    out.write_all(html.as_bytes())
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    if !args.input.quiet {
        let embedded = match (&trace, sample_rate) {
            (None, _) => "no trace copy".to_owned(),
            (Some(t), None) => format!("the whole trace ({})", bytes(t.len() as u64)),
            (Some(t), Some(r)) => format!(
                "a {:.2}% spatial sample of the trace ({}, about {} events)",
                r * 100.0,
                bytes(t.len() as u64),
                count((stat.events as f64 * r) as u64)
            ),
        };
        eprintln!(
            "blocksight: wrote {} ({}; embeds {embedded})",
            args.output.display(),
            bytes(html.len() as u64)
        );
    }
    Ok(())
}

/// The name shown for the inputs: the file name, or `first (+N more)`.
fn display_name(inputs: &[PathBuf]) -> String {
    let first = inputs
        .first()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    match inputs.len() {
        0 | 1 => first,
        n => format!("{first} (+{} more)", n - 1),
    }
}

/// The compact trace copy: a native .bst built while reading, abandoned past `limit` events.
struct Copy {
    limit: u64,
    /// Keep only requests whose first 4 KiB block hashes below this (of [`SAMPLE_MODULUS`]).
    threshold: Option<u64>,
    out: Vec<u8>,
    encoder: Option<NativeEncoder>,
    events: u64,
    overflowed: bool,
}

impl Copy {
    fn new(limit: u64, threshold: Option<u64>) -> Copy {
        let mut out = Vec::new();
        let options = EncodeOptions {
            compression: Compression::Lz4,
            ..EncodeOptions::default()
        };
        // The header is only complete at the end (text formats find devices as they go); the
        // final one supersedes this one in `finish`.
        let encoder =
            (limit > 0).then(|| NativeEncoder::new(&TraceHeader::new("native"), options, &mut out));
        Copy {
            limit,
            threshold,
            out,
            encoder,
            events: 0,
            overflowed: false,
        }
    }

    fn push(&mut self, e: &IoEvent) {
        if let Some(t) = self.threshold {
            let first_block = e.offset_bytes / 4096;
            if mix64(block_key(e.device, first_block)) % SAMPLE_MODULUS >= t {
                return;
            }
        }
        if self.overflowed {
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

    fn complete(&self) -> bool {
        !self.overflowed
    }

    fn finish(mut self, header: &TraceHeader) -> Vec<u8> {
        if let Some(mut enc) = self.encoder.take() {
            enc.update_header(header, &mut self.out);
            enc.finish(&mut self.out);
        }
        self.out
    }
}

/// Finds the built web bundle (`trunk build` output): `$BLOCKSIGHT_WEB_DIR`, then `web/` or
/// `dist/` next to the executable, then the source tree's `dist/`.
pub fn web_dir() -> anyhow::Result<PathBuf> {
    let mut tried = Vec::new();
    if let Some(dir) = std::env::var_os("BLOCKSIGHT_WEB_DIR") {
        let dir = PathBuf::from(dir);
        if is_bundle(&dir) {
            return Ok(dir);
        }
        bail!(
            "BLOCKSIGHT_WEB_DIR={} does not hold a built web app (no index.html, web-app_bg.wasm, \
             worker_bg.wasm); build it with scripts/build-web.sh",
            dir.display()
        );
    }
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
    {
        for name in ["web", "dist"] {
            let dir = exe_dir.join(name);
            if is_bundle(&dir) {
                return Ok(dir);
            }
            tried.push(dir);
        }
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("dist");
    if is_bundle(&repo) {
        return Ok(repo);
    }
    tried.push(repo);
    bail!(
        "the web app is not built (looked in {}). Build it with scripts/build-web.sh (needs what \
         scripts/setup.sh installs), or point BLOCKSIGHT_WEB_DIR at a `trunk build` output",
        tried
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn is_bundle(dir: &Path) -> bool {
    [
        "index.html",
        "web-app.js",
        "web-app_bg.wasm",
        "worker.js",
        "worker_bg.wasm",
    ]
    .iter()
    .all(|f| dir.join(f).is_file())
}

/// The parts of the web bundle a report inlines.
pub struct Bundle {
    css: String,
    main_js: String,
    main_wasm: Vec<u8>,
    worker_js: Vec<u8>,
    worker_wasm: Vec<u8>,
}

impl Bundle {
    pub fn load(dir: &Path) -> anyhow::Result<Bundle> {
        let read = |name: &str| {
            std::fs::read(dir.join(name))
                .with_context(|| format!("cannot read {}", dir.join(name).display()))
        };
        let index = String::from_utf8_lossy(&read("index.html")?).into_owned();
        // The stylesheet: Trunk copies it as style.css (or inlines it into index.html).
        let css = match std::fs::read_to_string(dir.join("style.css")) {
            Ok(css) => css,
            Err(_) => index
                .split_once("<style")
                .and_then(|(_, rest)| rest.split_once('>'))
                .and_then(|(_, rest)| rest.split_once("</style>"))
                .map(|(css, _)| css.to_owned())
                .unwrap_or_default(),
        };
        let main_js = String::from_utf8(read("web-app.js")?).context("web-app.js is not UTF-8")?;
        if main_js.contains("from './snippets/") || main_js.contains("from \"./snippets/") {
            bail!("web-app.js imports JS snippets, which a single-file report cannot inline");
        }
        Ok(Bundle {
            css,
            main_js,
            main_wasm: read("web-app_bg.wasm")?,
            worker_js: read("worker.js")?,
            worker_wasm: read("worker_bg.wasm")?,
        })
    }
}

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// Escapes text for an HTML text node or attribute.
fn escape(text: &str) -> String {
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
fn bootstrap(main_js: &str) -> String {
    format!(
        "{main_js}\n;\n\
         const bsBytes = (id) => {{ const s = atob(document.getElementById(id).textContent.trim()); \
         const b = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i); return b; }};\n\
         const bsWorker = new TextDecoder().decode(bsBytes('bs-worker-js')) + \
         \"\\n;(function () {{ const s = atob(\" + JSON.stringify(document.getElementById('bs-worker-wasm').textContent.trim()) + \
         \"); const b = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i); \
         wasm_bindgen({{ module_or_path: b }}); }})();\\n\";\n\
         window.__blocksightWorkerUrl = URL.createObjectURL(new Blob([bsWorker], {{ type: 'text/javascript' }}));\n\
         await __wbg_init({{ module_or_path: bsBytes('bs-main-wasm') }});\n"
    )
}

/// The whole page.
pub fn render(bundle: &Bundle, results_json: &[u8], trace: Option<&[u8]>, name: &str) -> String {
    let script = bootstrap(&bundle.main_js);
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(script.as_bytes()));
    let csp = format!(
        "default-src 'none'; script-src 'sha256-{hash}' 'wasm-unsafe-eval'; worker-src blob:; \
         style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    );
    let data = |id: &str, bytes: &[u8]| {
        format!(
            "<script type=\"application/octet-stream\" id=\"{id}\">{}</script>\n",
            b64(bytes)
        )
    };
    let mut html = String::with_capacity(
        (bundle.main_wasm.len() + bundle.worker_wasm.len() + trace.map_or(0, <[u8]>::len)) * 4 / 3
            + (1 << 20),
    );
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
    ));
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html.push_str("<link rel=\"icon\" href=\"data:,\">\n");
    html.push_str(&format!(
        "<title>Blocksight report: {}</title>\n",
        escape(name)
    ));
    html.push_str(&format!(
        "<style>{}</style>\n",
        bundle.css.replace("</", "<\\/")
    ));
    html.push_str(&data(RESULTS_ID, results_json));
    if let Some(t) = trace {
        html.push_str(&data(TRACE_ID, t));
        html.push_str(&data(TRACE_NAME_ID, name.as_bytes()));
    }
    html.push_str(&data("bs-main-wasm", &bundle.main_wasm));
    html.push_str(&data("bs-worker-js", &bundle.worker_js));
    html.push_str(&data("bs-worker-wasm", &bundle.worker_wasm));
    html.push_str("<script type=\"module\">");
    html.push_str(&script);
    html.push_str("</script>\n</head>\n<body></body>\n</html>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle() -> Bundle {
        Bundle {
            css: "body{}".into(),
            main_js: "async function __wbg_init(x) {}".into(),
            main_wasm: vec![0, 97, 115, 109],
            worker_js: b"let wasm_bindgen;".to_vec(),
            worker_wasm: vec![1, 2, 3],
        }
    }

    #[test]
    fn hostile_names_and_data_cannot_break_out() {
        let evil = "</script><img src=x onerror=alert(1)>";
        let results = format!("{{\"file_name\":\"{evil}\"}}");
        let html = render(&bundle(), results.as_bytes(), Some(evil.as_bytes()), evil);
        assert!(
            !html.contains("<img"),
            "markup from the trace appeared verbatim"
        );
        assert!(html.contains("&lt;/script&gt;&lt;img"), "title is escaped");
        // Exactly one executable script, and its hash is in the policy.
        assert_eq!(html.matches("<script type=\"module\">").count(), 1);
        let script = html
            .split("<script type=\"module\">")
            .nth(1)
            .and_then(|s| s.split("</script>").next());
        let script = script.expect("bootstrap present");
        let hash =
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(script.as_bytes()));
        assert!(html.contains(&format!("'sha256-{hash}'")));
        assert!(html.contains("default-src 'none'"));
    }

    #[test]
    fn copy_samples_by_block_and_overflows_past_its_limit() {
        let ev = |i: u64| IoEvent {
            time_nanos: i,
            device: 0,
            offset_bytes: i * 4096,
            len_bytes: 4096,
            op: analyzer_core::Op::Read,
            latency_nanos: None,
            pid: None,
        };
        let mut c = Copy::new(10, None);
        (0..10).for_each(|i| c.push(&ev(i)));
        assert!(c.complete());
        c.push(&ev(10));
        assert!(!c.complete());
        let mut s = Copy::new(u64::MAX, Some(SAMPLE_MODULUS / 4));
        (0..40_000).for_each(|i| s.push(&ev(i % 20_000)));
        // Each block is kept every time or never: kept events are even in number.
        assert_eq!(s.events % 2, 0);
        let share = s.events as f64 / 40_000.0;
        assert!((share - 0.25).abs() < 0.03, "{share}");
    }
}
