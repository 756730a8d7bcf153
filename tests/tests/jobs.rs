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
use analyzer_core::job::load::{Load, LoadRequest};
use analyzer_core::job::mrc::{Mrc, MrcRequest, Sizes};
use analyzer_core::job::predict::{Predict, PredictRequest};
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
        &["raid10", "at least 4"],
    );
    fails(
        &with(&["--layout", "raid10", "--disks", "5"]),
        &["raid10", "even number"],
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
