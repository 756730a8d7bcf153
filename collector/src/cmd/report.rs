//! `blocksight report IN -o report.html`: one self-contained HTML file with the web app, the
//! analysis results and a compact copy of the trace, which opens from `file://` with no network.
//!
//! The page is the same app `trunk build` produces (built into the binary, see [`crate::web`]), with
//! everything inlined: CSS in a `<style>`, the UI's wasm and JS glue started by one inline module
//! script, and the worker's glue and wasm turned into a `blob:` URL. Results and the trace copy
//! are base64 inside non-executable `<script type="application/octet-stream">` elements: base64
//! has no `<`, so nothing from a trace (device or host names, paths) can end the element or
//! become markup.
//!
//! The page assembly, its Content-Security-Policy and the trace copy live in
//! [`analyzer_core::report`], shared with the web app's "Export report" button (see its
//! documentation for the policy); this command takes the bundle, reads the trace and writes the
//! file.

use std::io::Write;
use std::path::PathBuf;

use analyzer_core::compress::Codec;
use analyzer_core::job::copy::{Copy, CopyRequest};
use analyzer_core::job::load::{Load, LoadRequest, TraceResults};
use analyzer_core::job::Pair;
use analyzer_core::report::{self, Bundle, EmbeddedCopy, Page};
use anyhow::{bail, Context};

use crate::input::{self, InputArgs};
use crate::web::{self, WebBundle};
use analyzer_core::units::bytes;

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
    #[arg(long, value_name = "N", default_value_t = report::DEFAULT_EMBED_EVENTS)]
    pub embed_events: u64,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let bundle = load_bundle(&web::bundle()?)?;

    // One read for the load and the copy; a second only when the copy must be sampled.
    let job = Pair::new(
        Load::with_threads(LoadRequest::app(), crate::cmd::threads(None)?)?,
        Copy::new(CopyRequest {
            embed_events: args.embed_events,
            total_events: None,
        }),
    );
    let ((load, copy), read) = input::run_job(&args.input, job)?;
    input::warn_diagnostics(&read);
    let stat = load.stat;
    let analysis = load.analysis.context("the load ran without the analysis")?;
    let trace = copy;
    let sample_rate = trace.as_ref().and_then(EmbeddedCopy::sample_rate);

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
    let results = TraceResults {
        file_name: file_name.clone(),
        file_bytes,
        format: read.format.name().into(),
        format_description: read.format.description().into(),
        compression: compression.into(),
        host: read.header.host.clone(),
        stat,
        analysis,
        embedded_sample_rate: sample_rate,
    };
    let results = serde_json::to_vec(&results)?;
    let html = report::render(&Page {
        bundle: &bundle,
        results_json: &results,
        trace: trace.as_ref().map(|t| &t.bytes[..]),
        name: &file_name,
        url_hash: None,
    });
    let mut out = std::fs::File::create(&args.output)
        .with_context(|| format!("cannot create {}", crate::input::shown(&args.output)))?;
    out.write_all(html.as_bytes())
        .with_context(|| format!("cannot write {}", crate::input::shown(&args.output)))?;
    if !args.input.quiet {
        let embedded = match &trace {
            None => "no trace copy".to_owned(),
            Some(t) => t.describe(&bytes(t.bytes.len() as u64)),
        };
        eprintln!(
            "blocksight: wrote {} ({}; embeds {embedded})",
            crate::input::shown(&args.output),
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

/// The parts of the web bundle a report inlines.
pub fn load_bundle(web: &WebBundle) -> anyhow::Result<Bundle> {
    let read = |name: &str| {
        web.file(name)
            .map(<[u8]>::to_vec)
            .with_context(|| format!("{} has no {name}", web.origin))
    };
    let index = String::from_utf8_lossy(&read("index.html")?).into_owned();
    // The stylesheet: Trunk copies it as style.css (or inlines it into index.html).
    let css = match web.file("style.css") {
        Some(css) => String::from_utf8_lossy(css).into_owned(),
        None => index
            .split_once("<style")
            .and_then(|(_, rest)| rest.split_once('>'))
            .and_then(|(_, rest)| rest.split_once("</style>"))
            .map(|(css, _)| css.to_owned())
            .unwrap_or_default(),
    };
    let main_js = String::from_utf8(read("web-app.js")?).context("web-app.js is not UTF-8")?;
    let bundle = Bundle {
        css,
        main_js,
        main_wasm: read("web-app_bg.wasm")?,
        worker_js: read("worker.js")?,
        worker_wasm: read("worker_bg.wasm")?,
    };
    if let Err(e) = bundle.check() {
        bail!("{e} ({})", web.origin);
    }
    Ok(bundle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use sha2::{Digest, Sha256};

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
        let html = report::render(&Page {
            bundle: &bundle(),
            results_json: results.as_bytes(),
            trace: Some(evil.as_bytes()),
            name: evil,
            url_hash: None,
        });
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
    fn display_name_counts_extra_inputs() {
        let one = [PathBuf::from("/x/a.bst")];
        assert_eq!(display_name(&one), "a.bst");
        let two = [
            PathBuf::from("/x/a.blktrace.0"),
            PathBuf::from("/x/a.blktrace.1"),
        ];
        assert_eq!(display_name(&two), "a.blktrace.0 (+1 more)");
    }
}
