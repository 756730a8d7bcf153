//! Exporters and `blocksight export`: round trips through the importers (CSV exactly, fio iolog
//! v3 at millisecond precision), a property test over random events, the CLI on every text
//! fixture, and a real `fio --read_iolog` replay of an exported log.

use std::path::{Path, PathBuf};

use analyzer_core::decode::{decode_chunked, DecodeOptions, Decoded};
use analyzer_core::event::DeviceInfo;
use analyzer_core::export::{export_all, ExportFormat};
use analyzer_core::{IoEvent, Op, TraceFormat, TraceHeader};
use blocksight_tests::{data_dir, run_blocksight};
use proptest::prelude::*;

fn decode(format: TraceFormat, bytes: &[u8]) -> Decoded {
    let decoder = format.decoder(&DecodeOptions::default()).expect("decoder");
    decode_chunked(decoder, bytes, 4096).expect("decodes")
}

fn header_with(names: &[String]) -> TraceHeader {
    let mut h = TraceHeader::new("test");
    h.devices = names.iter().map(|n| DeviceInfo::named(n.clone())).collect();
    h
}

/// Events with their device indices replaced by names, so traces whose device tables differ
/// in order can be compared.
fn named(d: &Decoded) -> Vec<(String, IoEvent)> {
    d.events
        .iter()
        .map(|e| {
            let name = d.header.devices[e.device as usize].name.clone();
            (name, IoEvent { device: 0, ..*e })
        })
        .collect()
}

/// What a fio iolog keeps of an event: millisecond times, no latency or PID, no length for
/// flushes.
fn as_fio_keeps(e: &IoEvent) -> IoEvent {
    IoEvent {
        time_nanos: e.time_nanos / 1_000_000 * 1_000_000,
        latency_nanos: None,
        pid: None,
        len_bytes: if e.op == Op::Flush { 0 } else { e.len_bytes },
        ..*e
    }
}

const DEVICE_NAMES: [&str; 5] = ["8,0", "nvme0n1", "hm_0", "1063", "/dev/loop7"];

fn arb_events() -> impl Strategy<Value = (Vec<String>, Vec<IoEvent>)> {
    let event = (
        0u64..5_000_000_000,
        0usize..DEVICE_NAMES.len(),
        0u64..(1 << 40),
        1u32..(1 << 24),
        prop_oneof![
            Just(Op::Read),
            Just(Op::Write),
            Just(Op::Discard),
            Just(Op::Flush)
        ],
        proptest::option::of(0u64..10_000_000_000),
        proptest::option::of(0u32..4_000_000),
    );
    proptest::collection::vec(event, 0..60).prop_map(|raw| {
        // Devices are numbered in order of first appearance, as every decoder does; times only
        // grow, as in any trace.
        let mut names: Vec<String> = Vec::new();
        let mut time_nanos = 0;
        let events = raw
            .into_iter()
            .map(|(gap, dev, offset_bytes, len, op, latency_nanos, pid)| {
                time_nanos += gap;
                let name = DEVICE_NAMES[dev].to_string();
                let device = match names.iter().position(|n| *n == name) {
                    Some(i) => i as u32,
                    None => {
                        names.push(name);
                        (names.len() - 1) as u32
                    }
                };
                let len_bytes = if op == Op::Flush { 0 } else { len };
                IoEvent {
                    time_nanos,
                    device,
                    offset_bytes,
                    len_bytes,
                    op,
                    latency_nanos,
                    pid,
                }
            })
            .collect();
        (names, events)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn csv_export_then_import_is_identity((names, events) in arb_events()) {
        let header = header_with(&names);
        let bytes = export_all(ExportFormat::Csv, 4096, &header, &events);
        let back = decode(TraceFormat::GenericCsv, &bytes);
        prop_assert_eq!(&back.events, &events);
        let back_names: Vec<String> = back.header.devices.iter().map(|d| d.name.clone()).collect();
        prop_assert_eq!(back_names, names);
        prop_assert_eq!(back.diagnostics.skipped_records, 0);
    }

    #[test]
    fn fio_export_then_import_keeps_milliseconds((names, events) in arb_events()) {
        let header = header_with(&names);
        let bytes = export_all(ExportFormat::FioIolog, 4096, &header, &events);
        let back = decode(TraceFormat::FioIologV3, &bytes);
        let expected: Vec<IoEvent> = events.iter().map(as_fio_keeps).collect();
        prop_assert_eq!(&back.events, &expected);
        prop_assert_eq!(back.diagnostics.skipped_records, 0);
        // The export is also chunking-independent to read.
        let decoder = TraceFormat::FioIologV3.decoder(&DecodeOptions::default()).expect("decoder");
        prop_assert_eq!(decode_chunked(decoder, &bytes, 7).expect("decodes").events, back.events);
    }

    #[test]
    fn libcachesim_rows_cover_every_block((names, events) in arb_events()) {
        let header = header_with(&names);
        let bytes = export_all(ExportFormat::LibCacheSim, 4096, &header, &events);
        let text = String::from_utf8(bytes).expect("utf8");
        let expected: u64 = events.iter().filter(|e| e.op != Op::Flush).map(|e| {
            let r = e.block_range(4096);
            r.end - r.start
        }).sum();
        prop_assert_eq!(text.lines().count() as u64, 1 + expected);
    }
}

/// Text fixtures (path, format, `--csv-columns` file).
const FIXTURES: &[(&str, &str, Option<&str>)] = &[
    ("blkparse/fio_loop.txt", "blkparse", None),
    ("tracefs/fio_loop.trace", "tracefs", None),
    ("tracefs/old_kernels.trace", "tracefs", None),
    ("msr/hm_0_sample.csv", "msr", None),
    ("spc/financial_sample.spc", "spc", None),
    ("alibaba/io_traces_sample.csv", "alibaba", None),
    ("tencent/cbs_sample.csv", "tencent", None),
    ("fio/two_files.v3.iolog", "fio-v3", None),
    ("fio/two_files.v2.iolog", "fio-v2", None),
    (
        "csv/semicolon_us.csv",
        "csv",
        Some("csv/semicolon_us.columns"),
    ),
    ("csv/export_header.csv", "csv", None),
];

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("blocksight-export-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn export_cli(input: &Path, format: &str, columns: Option<&str>, to: &str, out: &Path) {
    let mut args: Vec<String> = vec![
        "export".into(),
        input.display().to_string(),
        "--format".into(),
        format.into(),
        "--to".into(),
        to.into(),
        "-o".into(),
        out.display().to_string(),
        "-q".into(),
    ];
    if let Some(c) = columns {
        let map = std::fs::read_to_string(data_dir().join(c)).expect("columns");
        args.push("--csv-columns".into());
        args.push(map.trim().into());
    }
    let output = run_blocksight(&args);
    assert!(
        output.status.success(),
        "export {}: {}",
        input.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn decode_fixture(path: &str, format: &str, columns: Option<&str>) -> Decoded {
    let opts = DecodeOptions {
        csv_columns: columns.map(|c| {
            std::fs::read_to_string(data_dir().join(c))
                .expect("columns")
                .trim()
                .to_owned()
        }),
        ..DecodeOptions::default()
    };
    let format = TraceFormat::from_name(format).expect("format");
    let bytes = std::fs::read(data_dir().join(path)).expect("fixture");
    decode_chunked(format.decoder(&opts).expect("decoder"), &bytes, 1 << 16).expect("decodes")
}

#[test]
fn cli_csv_export_reimports_every_fixture_exactly() {
    let dir = temp_dir("csv");
    for &(path, format, columns) in FIXTURES {
        let out = dir.join("out.csv");
        export_cli(&data_dir().join(path), format, columns, "csv", &out);
        let original = decode_fixture(path, format, columns);
        let bytes = std::fs::read(&out).expect("exported");
        let back = decode(TraceFormat::GenericCsv, &bytes);
        assert_eq!(back.diagnostics.skipped_records, 0, "{path}");
        assert_eq!(named(&back), named(&original), "{path}");
        // The export is detected as CSV with no options.
        assert_eq!(
            analyzer_core::format::sniff(&bytes),
            Some(TraceFormat::GenericCsv),
            "{path}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cli_fio_export_reimports_at_millisecond_precision() {
    let dir = temp_dir("fio");
    for &(path, format, columns) in FIXTURES {
        let out = dir.join("out.iolog");
        export_cli(&data_dir().join(path), format, columns, "fio", &out);
        let original = decode_fixture(path, format, columns);
        let back = decode(
            TraceFormat::FioIologV3,
            &std::fs::read(&out).expect("exported"),
        );
        assert_eq!(back.diagnostics.skipped_records, 0, "{path}");
        let expected: Vec<(String, IoEvent)> = named(&original)
            .into_iter()
            .map(|(n, e)| (n.replace(char::is_whitespace, "_"), as_fio_keeps(&e)))
            .collect();
        assert_eq!(named(&back), expected, "{path}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cli_libcachesim_export_has_one_row_per_block() {
    let dir = temp_dir("lcs");
    let out = dir.join("out.csv");
    let path = "tracefs/fio_loop.trace";
    let output = run_blocksight([
        "export",
        &data_dir().join(path).display().to_string(),
        "--to",
        "libcachesim",
        "--block-size",
        "8KiB",
        "-o",
        &out.display().to_string(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(&out).expect("exported");
    let original = decode_fixture(path, "tracefs", None);
    let blocks: u64 = original
        .events
        .iter()
        .filter(|e| e.op != Op::Flush)
        .map(|e| e.block_range(8192).end - e.block_range(8192).start)
        .sum();
    assert_eq!(text.lines().next(), Some("time,obj_id,obj_size,op"));
    assert_eq!(text.lines().count() as u64, 1 + blocks);
    assert!(text
        .lines()
        .skip(1)
        .all(|l| l.split(',').nth(2) == Some("8192")));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cli_export_rejects_an_unknown_target_and_a_bad_mapping() {
    let input = data_dir()
        .join("spc/financial_sample.spc")
        .display()
        .to_string();
    let out = run_blocksight(["export", &input, "--to", "xlsx", "-o", "-"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--to \"xlsx\" is not one of csv"), "{err}");
    let out = run_blocksight([
        "export",
        &input,
        "--csv-columns",
        "time=0,op=1",
        "--to",
        "csv",
        "-o",
        "-",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--csv-columns: no offset=N column"), "{err}");
}

#[test]
fn cli_export_to_stdout_streams_csv() {
    let input = data_dir()
        .join("tencent/cbs_sample.csv")
        .display()
        .to_string();
    let out = run_blocksight(["export", &input, "--to", "csv", "-o", "-"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf8");
    assert_eq!(text.lines().count(), 1 + 36);
    // The decoder's warnings about the fixture's bad lines go to stderr, naming the lines.
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 4: IOType \"2\""));
}

/// fio replays an exported iolog: every read, write and sync of the trace is issued. Runs
/// against a sparse regular file, so it needs fio but not root.
#[test]
fn exported_iolog_replays_with_fio() {
    if std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!(
            "SKIPPED exported_iolog_replays_with_fio: fio is not installed (apt-get install fio)"
        );
        return;
    }
    let dir = temp_dir("replay");
    let log = dir.join("trace.iolog");
    let path = "tracefs/fio_loop.trace";
    export_cli(&data_dir().join(path), "tracefs", None, "fio", &log);
    let original = decode_fixture(path, "tracefs", None);
    let target = dir.join("target.img");
    let end = original
        .events
        .iter()
        .map(|e| e.end_bytes())
        .max()
        .unwrap_or(0);
    std::fs::File::create(&target)
        .and_then(|f| f.set_len(end.next_multiple_of(1 << 20)))
        .expect("target");
    let output = std::process::Command::new("fio")
        .args([
            "--name=replay",
            &format!("--read_iolog={}", log.display()),
            &format!("--replay_redirect={}", target.display()),
            "--replay_no_stall=1",
            "--output-format=json",
        ])
        .output()
        .expect("fio runs");
    assert!(
        output.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("fio JSON");
    let job = &json["jobs"][0];
    let count = |op: Op| original.events.iter().filter(|e| e.op == op).count() as u64;
    assert_eq!(job["read"]["total_ios"].as_u64(), Some(count(Op::Read)));
    assert_eq!(job["write"]["total_ios"].as_u64(), Some(count(Op::Write)));
    assert_eq!(job["sync"]["total_ios"].as_u64(), Some(count(Op::Flush)));
    let bytes = |op: Op| {
        original
            .events
            .iter()
            .filter(|e| e.op == op)
            .map(|e| u64::from(e.len_bytes))
            .sum::<u64>()
    };
    assert_eq!(job["read"]["io_bytes"].as_u64(), Some(bytes(Op::Read)));
    assert_eq!(job["write"]["io_bytes"].as_u64(), Some(bytes(Op::Write)));
    let _ = std::fs::remove_dir_all(dir);
}

/// import → native → export → import, for every text fixture: the whole chain keeps every event
/// (exactly through CSV, at millisecond precision through fio).
#[test]
fn import_native_export_import_round_trip() {
    use analyzer_core::native::{encode_all, EncodeOptions};
    for &(path, format, columns) in FIXTURES {
        let original = decode_fixture(path, format, columns);
        let native = encode_all(&original.header, &original.events, EncodeOptions::default());
        let from_native = decode(TraceFormat::Native, &native);
        assert_eq!(named(&from_native), named(&original), "{path} via native");
        let csv = export_all(
            ExportFormat::Csv,
            4096,
            &from_native.header,
            &from_native.events,
        );
        assert_eq!(
            named(&decode(TraceFormat::GenericCsv, &csv)),
            named(&original),
            "{path} via native and CSV"
        );
        let fio = export_all(
            ExportFormat::FioIolog,
            4096,
            &from_native.header,
            &from_native.events,
        );
        let expected: Vec<(String, IoEvent)> = named(&original)
            .into_iter()
            .map(|(n, e)| (n.replace(char::is_whitespace, "_"), as_fio_keeps(&e)))
            .collect();
        assert_eq!(
            named(&decode(TraceFormat::FioIologV3, &fio)),
            expected,
            "{path} via native and fio"
        );
    }
}
