//! One engine, two hosts: for every job, what `blocksight … --json` prints equals what the web
//! worker posts for the same request. The worker's path is reproduced here without a browser:
//! the request crosses a serde round trip (as `postMessage` does), the file is pushed in the
//! worker's 4 MiB slices through the decompressing decoder, pass by pass, and the job's result
//! is compared with the CLI's JSON with `assert_eq!`.
//!
//! Also the CLI's printing rules: escaped trace text and paths, named constraints, per-file
//! formats.

use std::path::{Path, PathBuf};

use analyzer_core::compress::Decompressing;
use analyzer_core::job::copy::{Copy, CopyRequest};
use analyzer_core::job::load::{Load, LoadRequest};
use analyzer_core::job::mrc::{Mrc, MrcRequest, Sizes};
use analyzer_core::job::predict::{Predict, PredictRequest};
use analyzer_core::job::simulate::model::{KernelModel, Model, ModelRequest};
use analyzer_core::job::simulate::{Simulate, SimulateRequest};
use analyzer_core::job::Job;
use analyzer_core::{DeviceInfo, IoEvent, Op, TraceFormat, TraceHeader};
use blocksight_tests::{data_dir, run_blocksight};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The worker's slice size (`web-app/src/worker/reader.rs`).
const SLICE_BYTES: usize = 4 << 20;

fn sample_bst() -> PathBuf {
    data_dir().join("sample/pgbench.bst")
}

fn sample_zst() -> PathBuf {
    data_dir().join("sample/pgbench.tracefs.txt.zst")
}

/// The request as the worker receives it: serialised and read back.
fn posted<T: Serialize + DeserializeOwned>(request: &T) -> T {
    serde_json::from_str(&serde_json::to_string(request).expect("serialises")).expect("reads")
}

/// Runs a job as the worker does: every pass re-reads the file in slices through a fresh
/// decompressing decoder of the sniffed format.
fn worker_run<J: Job>(mut job: J, file: &Path) -> J::Output {
    let bytes = std::fs::read(file).expect("fixture");
    let mut plain = Vec::new();
    {
        let mut d = analyzer_core::compress::Decompressor::new();
        d.push(&bytes[..bytes.len().min(1 << 20)]);
        while plain.len() < 64 << 10 {
            match d.read(&mut plain) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }
    let format =
        analyzer_core::format::sniff(&plain[..plain.len().min(64 << 10)]).expect("a known format");
    let mut pass = 0;
    while pass < job.passes() {
        job.begin_pass(pass);
        let mut decoder = Decompressing::new(format.decoder(&Default::default()).expect("decoder"));
        for slice in bytes.chunks(SLICE_BYTES) {
            analyzer_core::Decoder::push(&mut decoder, slice);
            while let Some(e) = analyzer_core::Decoder::next_event(&mut decoder).expect("decodes") {
                job.observe(&e);
            }
        }
        analyzer_core::Decoder::finish(&mut decoder);
        while let Some(e) = analyzer_core::Decoder::next_event(&mut decoder).expect("decodes") {
            job.observe(&e);
        }
        let header = analyzer_core::Decoder::header(&decoder).clone();
        let diagnostics = analyzer_core::Decoder::diagnostics(&decoder).clone();
        job.end_pass(&header, &diagnostics).expect("pass ends");
        pass += 1;
    }
    job.finish().expect("job finishes")
}

fn cli_json(args: &[&str]) -> serde_json::Value {
    let out = run_blocksight(args);
    assert!(
        out.status.success(),
        "blocksight {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn json<T: Serialize>(t: &T) -> serde_json::Value {
    serde_json::to_value(t).expect("serialises")
}

/// A brushed window and a cached curve: the CLI's prediction is the worker's.
#[test]
fn predict_cli_equals_worker_with_a_window_and_a_cached_curve() {
    let file = sample_bst();
    let cli = cli_json(&[
        "predict",
        file.to_str().expect("utf-8 path"),
        "-q",
        "--layout",
        "raid5",
        "--disks",
        "6",
        "--disk",
        "sas-10k",
        "--qd",
        "8",
        "--curve",
        "--cache-size",
        "256MiB",
        "--preset",
        "bcache",
        "--window",
        "5s..25s",
        "--json",
    ]);
    let request: PredictRequest = serde_json::from_value(cli["request"].clone()).expect("request");
    assert_eq!(request.window_nanos, Some((5_000_000_000, 25_000_000_000)));
    assert!(request.curve && request.cache.is_some());
    let worker = worker_run(Predict::new(posted(&request)).expect("job"), &file);
    assert_eq!(cli, json(&worker));
    let c = &worker.configs[0];
    assert_eq!(c.curve_with_cache.len(), 9, "the cached curve, every depth");
    // The window holds only part of the trace.
    assert!(worker.replayed_requests > 1000 && worker.replayed_requests < 106_356);
}

/// The kernels' caches are jobs too: `simulate --preset dm-cache-smq` (two passes, the first
/// measuring the origin) and `--preset bcache-kernel` print what the worker's run of the same
/// request gives, over a window.
#[test]
fn kernel_models_cli_equal_worker() {
    let file = sample_bst();
    for (preset, model, extra) in [
        (
            "dm-cache-smq",
            KernelModel::DmCacheSmq,
            &["--mode", "wt"][..],
        ),
        (
            "bcache-kernel",
            KernelModel::Bcache,
            &["--bucket-size", "64KiB"][..],
        ),
    ] {
        let mut args = vec![
            "simulate",
            file.to_str().expect("utf-8 path"),
            "-q",
            "--preset",
            preset,
            "--cache-size",
            "64MiB",
            "--window",
            "3s..30s",
            "--json",
        ];
        args.extend_from_slice(extra);
        let cli = cli_json(&args);
        let request: ModelRequest =
            serde_json::from_value(cli["request"].clone()).expect("request");
        assert_eq!(request.model, model);
        assert_eq!(request.window_nanos, Some((3_000_000_000, 30_000_000_000)));
        let job = Model::new(posted(&request)).expect("job");
        assert_eq!(
            job.passes(),
            if model == KernelModel::DmCacheSmq {
                2
            } else {
                1
            }
        );
        let worker = worker_run(job, &file);
        assert_eq!(cli, json(&worker), "{preset}");
        // The counters the lab tests read are there, and the window cut the trace.
        let counted = match model {
            KernelModel::DmCacheSmq => {
                let s = &cli["result"]["status"];
                ["read_hits", "read_misses", "write_hits", "write_misses"]
                    .iter()
                    .map(|k| s[k].as_u64().expect("counter"))
                    .sum::<u64>()
            }
            KernelModel::Bcache => {
                let s = &cli["result"]["stats"];
                [
                    "cache_hits",
                    "cache_misses",
                    "cache_bypass_hits",
                    "cache_bypass_misses",
                ]
                .iter()
                .map(|k| s[k].as_u64().expect("counter"))
                .sum::<u64>()
            }
        };
        assert!(counted > 0, "{preset}: nothing counted");
        let whole: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| *a != "--window" && *a != "3s..30s")
            .collect();
        let whole = cli_json(&whole);
        assert_ne!(
            whole["result"], cli["result"],
            "{preset}: the window changed nothing"
        );
    }
}

/// The report's trace copy: what `blocksight report` embeds is what the web app's export job
/// builds for the same trace (which knows the event count from its load: one pass, where the
/// CLI counts in a first pass and samples in a second).
#[test]
fn report_copy_equals_the_export_job() {
    let file = sample_bst();
    let dir = std::env::temp_dir().join(format!("bs-jobs-copy-{}", std::process::id()));
    let web = dir.join("web");
    std::fs::create_dir_all(&web).expect("web dir");
    for (name, body) in [
        ("index.html", "<!DOCTYPE html><title>t</title>"),
        ("web-app.js", "async function __wbg_init(x) {}"),
        ("web-app_bg.wasm", "\0asm"),
        ("worker.js", "let wasm_bindgen;"),
        ("worker_bg.wasm", "\0asm"),
    ] {
        std::fs::write(web.join(name), body).expect("bundle file");
    }
    let total = cli_json(&["stat", file.to_str().expect("utf-8 path"), "--json", "-q"])["events"]
        .as_u64()
        .expect("events");
    for embed in [5_000u64, 1_000_000] {
        let html = dir.join(format!("r{embed}.html"));
        let out = std::process::Command::new(blocksight_tests::blocksight_bin())
            .env("BLOCKSIGHT_WEB_DIR", &web)
            .args(["report", "-q", "--embed-events", &embed.to_string(), "-o"])
            .arg(&html)
            .arg(&file)
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let page = std::fs::read_to_string(&html).expect("report");
        let open = "<script type=\"application/octet-stream\" id=\"bs-trace\">";
        let b64 = page
            .split(open)
            .nth(1)
            .and_then(|t| t.split("</script>").next())
            .expect("a trace copy");
        use base64::Engine;
        let embedded = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("base64");
        let request = CopyRequest {
            embed_events: embed,
            total_events: Some(total),
        };
        let job = Copy::new(posted(&request));
        assert_eq!(job.passes(), 1);
        let copy = worker_run(job, &file).expect("a copy");
        assert_eq!(embedded, copy.bytes, "embed {embed}");
        // The sample holds about the target; the whole trace when it fits.
        if embed < total {
            let rate = copy.sample_rate().expect("a block sample");
            assert!(rate < 1.0);
            assert!(
                copy.events < total && copy.events > embed / 4,
                "{}",
                copy.events
            );
        } else {
            assert_eq!(copy.events, total);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A grid of policies × sizes (the CLI's threads) equals the worker's one-thread run of the same
/// request, over a window, from the compressed text trace.
#[test]
fn simulate_grid_cli_equals_worker() {
    let file = sample_zst();
    let cli = cli_json(&[
        "simulate",
        file.to_str().expect("utf-8 path"),
        "-q",
        "--policy",
        "lru,arc,s3fifo",
        "--cache-size",
        "1%,64MiB",
        "--window",
        "2s..40s",
        "--json",
    ]);
    let request: SimulateRequest = serde_json::from_value(cli["request"].clone()).expect("request");
    assert_eq!(request.policies.len() * request.sizes.len(), 6);
    let worker = worker_run(Simulate::new(posted(&request)).expect("job"), &file);
    assert_eq!(cli, json(&worker));
    // Each cell is the simulation of its own cache alone.
    let one = cli_json(&[
        "simulate",
        file.to_str().expect("utf-8 path"),
        "-q",
        "--policy",
        "arc",
        "--cache-size",
        "64MiB",
        "--window",
        "2s..40s",
        "--json",
    ]);
    assert_eq!(one["runs"][0], cli["runs"][3]);
}

/// MiniSim's ARC curve sized in percentages: the CLI and the worker agree, and 10% is 10% of the
/// footprint the exact LRU curve counts (issue 14.7).
#[test]
fn mrc_cli_equals_worker_and_percentages_share_one_footprint() {
    let file = sample_bst();
    let path = file.to_str().expect("utf-8 path");
    let cli = cli_json(&[
        "mrc", path, "-q", "--policy", "arc", "--sizes", "10%,20%", "--json",
    ]);
    let request = MrcRequest {
        sizes: Sizes::parse("10%,20%").expect("sizes"),
        ..MrcRequest::new("arc")
    };
    let worker = worker_run(Mrc::new(posted(&request)).expect("job"), &file);
    assert_eq!(cli, json(&worker));
    let lru = cli_json(&[
        "mrc", path, "-q", "--policy", "lru", "--sizes", "10%", "--json",
    ]);
    let footprint = lru["footprint_lines"].as_u64().expect("footprint");
    assert_eq!(lru["footprint_exact"], true);
    let tenth = (footprint as f64 * 0.1).round() as u64;
    assert_eq!(cli["points"][0]["size_lines"].as_u64(), Some(tenth));
    assert_eq!(lru["points"][0]["size_lines"].as_u64(), Some(tenth));
}

/// The simulate job's curves with a work bound (`curve_passes`, the Cache view's first curves
/// before the estimate stage replaced them) are `blocksight mrc --minisim-max-passes` policy by
/// policy.
#[test]
fn the_cache_views_sampled_curves_are_blocksight_mrc_with_a_work_bound() {
    use analyzer_core::job::simulate::{CURVE_POLICIES, INTERACTIVE_CURVE_PASSES};
    use analyzer_core::job::CacheParams;
    let file = sample_bst();
    let path = file.to_str().expect("utf-8 path");
    let request = SimulateRequest {
        with_curves: true,
        curve_passes: Some(INTERACTIVE_CURVE_PASSES),
        ..SimulateRequest::new(CacheParams {
            size_bytes: 256 << 20,
            ..CacheParams::default()
        })
    };
    let worker = worker_run(Simulate::new(posted(&request)).expect("job"), &file);
    assert_eq!(worker.curves.len(), CURVE_POLICIES.len());
    let passes = INTERACTIVE_CURVE_PASSES.to_string();
    for curve in &worker.curves {
        let cli = cli_json(&[
            "mrc",
            path,
            "-q",
            "--policy",
            &curve.policy,
            "--sizes",
            "16",
            "--minisim-max-passes",
            &passes,
            "--json",
        ]);
        assert_eq!(cli, json(curve), "{}", curve.policy);
        let rate = curve.sampling.as_ref().expect("sampled").rate;
        assert!(rate < 0.5, "{}: sampled, rate {rate}", curve.policy);
    }
    // Without the bound, the same job gives MiniSim's default curves (the refinement).
    let refined = worker_run(
        Simulate::new(SimulateRequest {
            curve_passes: None,
            ..request
        })
        .expect("job"),
        &file,
    );
    let cli = cli_json(&[
        "mrc", path, "-q", "--policy", "arc", "--sizes", "16", "--json",
    ]);
    assert_eq!(cli, json(&refined.curves[1]));
    assert_ne!(
        refined.curves[1], worker.curves[1],
        "the bound changes the curve"
    );
}

/// The load: `stat --json` and `analyze --json` are the worker's load results.
#[test]
fn load_cli_equals_worker() {
    let file = sample_zst();
    let path = file.to_str().expect("utf-8 path");
    let worker = worker_run(Load::new(posted(&LoadRequest::new())).expect("job"), &file);
    assert_eq!(
        cli_json(&["stat", path, "-q", "--json"]),
        json(&worker.stat)
    );
    assert_eq!(
        cli_json(&["analyze", path, "-q", "--json"]),
        json(&worker.analysis.expect("analysis"))
    );
}

fn ev(i: u64) -> IoEvent {
    IoEvent {
        time_nanos: i * 1_000_000,
        device: 0,
        offset_bytes: (i % 64) * 4096,
        len_bytes: 4096,
        op: if i % 3 == 0 { Op::Write } else { Op::Read },
        latency_nanos: None,
        pid: None,
    }
}

/// A native trace whose device name and source format carry terminal escapes.
fn hostile_trace(dir: &Path) -> PathBuf {
    let mut header = TraceHeader::new("native\u{1b}]0;pwned\u{7}");
    let mut dev = DeviceInfo::named("sda\u{1b}[2J\u{202e}gpj.exe\r");
    dev.size_bytes = Some(1 << 30);
    header.devices.push(dev);
    let mut out = Vec::new();
    let mut enc = analyzer_core::native::NativeEncoder::new(&header, Default::default(), &mut out);
    for i in 0..200 {
        enc.push(&ev(i), &mut out);
    }
    enc.finish(&mut out);
    let path = dir.join("hostile.bst");
    std::fs::write(&path, out).expect("write");
    path
}

fn assert_clean(what: &str, text: &str) {
    for bad in ['\u{1b}', '\u{7}', '\r', '\0', '\u{8}', '\u{202e}'] {
        assert!(!text.contains(bad), "{what}: raw {bad:?} in {text:?}");
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("blocksight-jobs-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Issue 13.6: text from a trace or a path never reaches the terminal raw.
#[test]
fn trace_text_and_paths_are_escaped_everywhere() {
    let dir = temp_dir("escape");
    let trace = hostile_trace(&dir);
    let t = trace.to_str().expect("utf-8 path");
    for args in [
        vec!["stat", t],
        vec!["analyze", t],
        vec!["mrc", t, "--sizes", "4"],
        vec!["simulate", t, "--cache-size", "10%"],
    ] {
        let out = run_blocksight(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert_clean(&format!("{args:?}"), &text);
        assert_clean(
            &format!("{args:?} stderr"),
            &String::from_utf8_lossy(&out.stderr),
        );
    }
    let stat = String::from_utf8_lossy(&run_blocksight(["stat", t]).stdout).into_owned();
    assert!(
        stat.contains("sda\\u{1b}[2J\\u{202e}gpj.exe\\u{d}"),
        "{stat}"
    );
    // A path with escapes, in `cannot open`.
    let missing = dir.join("no\u{1b}[31mfile\u{7}");
    let out = run_blocksight([std::ffi::OsStr::new("stat"), missing.as_os_str()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot open"), "{err}");
    assert_clean("cannot open", &err);
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 13.9 (CLI part): impossible settings are refused naming the setting and the rule.
#[test]
fn impossible_settings_name_the_constraint() {
    let file = sample_bst();
    let t = file.to_str().expect("utf-8 path");
    let fails = |args: &[&str], needles: &[&str]| {
        let out = run_blocksight(args);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        for n in needles {
            assert!(err.contains(n), "{args:?}: {n:?} not in {err}");
        }
    };
    let array = ["--disk", "sas-10k", "-q"];
    let with = |extra: &[&'static str]| -> Vec<&str> {
        let mut v = vec!["predict", t];
        v.extend_from_slice(&array);
        v.extend_from_slice(extra);
        v
    };
    fails(
        &with(&["--layout", "raid10", "--disks", "0"]),
        &["raid10", "needs 2 to 4,096 disks"],
    );
    // Five disks are md's RAID 10 (n2); a hardware controller's RAID 10 needs pairs.
    fails(
        &with(&[
            "--layout",
            "raid10",
            "--disks",
            "5",
            "--controller-cache",
            "1GiB",
        ]),
        &["raid10", "mirrored pairs", "even number"],
    );
    fails(
        &with(&[
            "--layout",
            "raid10",
            "--disks",
            "4",
            "--raid10-layout",
            "f5",
        ]),
        &["raid10", "f5", "needs 5 to 4,096 disks"],
    );
    fails(
        &with(&["--layout", "raid5", "--disks", "4", "--raid10-layout", "f2"]),
        &["RAID 10 layout \"f2\"", "raid10 only"],
    );
    fails(
        &with(&[
            "--layout",
            "raid10",
            "--disks",
            "4",
            "--raid10-layout",
            "x2",
        ]),
        &["unknown RAID 10 layout", "n2, f2, o2"],
    );
    fails(
        &with(&["--layout", "raid5", "--disks", "6", "--qd", "0"]),
        &["--qd 0"],
    );
    fails(
        &[
            "simulate",
            t,
            "--cache-size",
            "1GiB",
            "--warmup",
            "99999999999h",
        ],
        &["--warmup", "out of range"],
    );
}

/// Issue 13.9 (sampling part): a header whose sampling threshold is above its modulus (a rate
/// over 1) is named as such by `stat` and `analyze`, never printed as a rate (before: "rate
/// 18446744073709552000"), and counts are not rescaled by it.
#[test]
fn a_sampling_threshold_above_its_modulus_is_named_not_printed_as_a_rate() {
    let dir = temp_dir("sampling");
    let mut header = TraceHeader::new("native");
    header.devices.push(DeviceInfo::named("sda"));
    header.sampling = Some(analyzer_core::Sampling {
        block_bytes: 4096,
        threshold: u64::MAX,
        modulus: 1,
    });
    let mut out = Vec::new();
    let mut enc = analyzer_core::native::NativeEncoder::new(&header, Default::default(), &mut out);
    for i in 0..200 {
        enc.push(&ev(i), &mut out);
    }
    enc.finish(&mut out);
    let path = dir.join("oversampled.bst");
    std::fs::write(&path, out).expect("write");
    let t = path.to_str().expect("utf-8 path");
    for args in [vec!["stat", t], vec!["analyze", t]] {
        let out = run_blocksight(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("threshold is not below its modulus"),
            "{args:?}: {text}"
        );
        assert!(!text.contains("18446744073709552"), "{args:?}: {text}");
        assert!(!text.contains("spatially sampled"), "{args:?}: {text}");
    }
    let out = run_blocksight(["stat", t, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["events"].as_u64(), Some(200), "{v}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 14.5: inputs of different formats are detected one by one and merged; an error names
/// its file.
#[test]
fn mixed_formats_are_detected_per_file_and_errors_name_the_file() {
    let dir = temp_dir("mixed");
    let bst = sample_bst();
    let text = data_dir().join("tracefs/fio_loop.trace");
    let stat = |paths: &[&Path]| {
        let mut args: Vec<&std::ffi::OsStr> =
            vec!["stat".as_ref(), "--json".as_ref(), "-q".as_ref()];
        args.extend(paths.iter().map(|p| p.as_os_str()));
        run_blocksight(args)
    };
    let events = |out: &std::process::Output| -> u64 {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["events"].as_u64().expect("events")
    };
    let both = events(&stat(&[&bst, &text]));
    assert_eq!(both, events(&stat(&[&bst])) + events(&stat(&[&text])));
    let junk = dir.join("junk.bin");
    std::fs::write(&junk, [0xde_u8, 0xad, 0xbe, 0xef].repeat(64)).expect("write");
    let out = stat(&[&bst, &junk]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("junk.bin"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 14.8: predict's text ends with a newline; counts of one are singular; rates are never
/// rounded to zero.
#[test]
fn text_output_follows_one_set_of_rules() {
    let file = sample_bst();
    let out = run_blocksight([
        "predict",
        file.to_str().expect("utf-8 path"),
        "-q",
        "--layout",
        "raid1",
        "--disks",
        "2",
        "--disk",
        "nvme",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.ends_with('\n'));
    assert!(text.contains("1 outstanding I/O,"), "{text}");
    assert!(
        !text.contains(" 0.0 MiB/s") && !text.contains("-0.0%"),
        "{text}"
    );
    assert_eq!(TraceFormat::from_name("native"), Some(TraceFormat::Native));
}

/// Issue 14.8, the rest of the rules: a count of one line is singular in `mrc` and in
/// `simulate`'s final flush, and the peak rate has thousands separators like every other count.
#[test]
fn one_line_is_singular_and_peaks_have_separators() {
    let dir = temp_dir("rules");
    let one = dir.join("one.csv");
    std::fs::write(&one, "time,op,offset,len\n0,W,0,4096\n").expect("write");
    let text = |args: &[&str]| {
        let out = run_blocksight(args.iter().copied());
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let path = one.to_str().expect("utf-8 path");
    let mrc = text(&["mrc", path, "-q"]);
    assert!(mrc.contains("footprint     4.0 KiB (1 line)"), "{mrc}");
    // A cache that saves nothing: "back-end I/O 0.0%", not "-0.0%".
    assert!(
        mrc.contains("back-end I/O 0.0%") && !mrc.contains("-0.0%"),
        "{mrc}"
    );
    let sim = text(&[
        "simulate",
        path,
        "-q",
        "--cache-size",
        "1MiB",
        "--mode",
        "wb",
    ]);
    assert!(sim.contains("1 line / 4.0 KiB"), "{sim}");
    // 5,000 requests 100 µs apart: a peak of thousands of IOPS.
    let busy = dir.join("busy.csv");
    let mut csv = String::from("time,op,offset,len\n");
    for i in 0..5_000u64 {
        csv.push_str(&format!("{},R,{},4096\n", i * 100_000, i * 4096));
    }
    std::fs::write(&busy, csv).expect("write");
    let analyze = text(&["analyze", busy.to_str().expect("utf-8 path"), "-q"]);
    let peak = analyze
        .lines()
        .find_map(|l| l.strip_prefix("peak"))
        .unwrap_or_else(|| panic!("no peak line: {analyze}"));
    let number = peak.split_whitespace().next().expect("a number");
    assert!(
        number.contains(',')
            && number
                .replace(',', "")
                .parse::<u64>()
                .is_ok_and(|n| n >= 1000),
        "{peak}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
