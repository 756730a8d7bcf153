//! Parquet export and input (issue 15): a round trip through `export --to parquet` equals the
//! `.bst` it came from in every field, alone or partitioned by device; Parquet written by other
//! tools (other integer types, integer devices, one-letter ops, rows out of order, no latency or
//! pid) reads with the same rules; a file without a required column is refused by name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use analyzer_core::native::{encode_all, EncodeOptions};
use analyzer_core::{DeviceInfo, IoEvent, Op, TraceHeader};
use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, Int64Array, RecordBatch, StringArray};
use blocksight_host::input::{read_events_with_header, InputArgs, ReadSummary};
use blocksight_tests::run_blocksight;

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("blocksight-parquet-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn args(paths: &[&Path]) -> InputArgs {
    InputArgs {
        inputs: paths.iter().map(|p| p.to_path_buf()).collect(),
        format: None,
        action: None,
        csv_columns: None,
        quiet: true,
    }
}

fn read(paths: &[&Path]) -> (Vec<IoEvent>, ReadSummary) {
    let mut events = Vec::new();
    let summary = read_events_with_header(&args(paths), |_, e| events.push(*e)).expect("reads");
    (events, summary)
}

/// A deterministic trace over three devices (one with a `/` in its name) with every op, some
/// requests without latency or pid, and a full header.
fn trace() -> (TraceHeader, Vec<IoEvent>) {
    let mut header = TraceHeader::new("native");
    header.host = Some("db-1".into());
    header.tool_version = Some("blocksight test".into());
    header.start_unix_nanos = Some(1_700_000_000_123_456_789);
    header.dropped_events = 3;
    header.devices = vec![
        DeviceInfo {
            name: "sda".into(),
            major: Some(8),
            minor: Some(0),
            size_bytes: Some(1 << 40),
        },
        DeviceInfo::named("a/b"),
        DeviceInfo {
            name: "vol 7".into(),
            major: None,
            minor: None,
            size_bytes: Some(1 << 30),
        },
    ];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut t = 0;
    let events = (0..20_000)
        .map(|i| {
            t += next() % 50_000;
            let op = Op::ALL[(next() % 4) as usize];
            IoEvent {
                time_nanos: t,
                device: (next() % 3) as u32,
                offset_bytes: (next() % (1 << 30)) * 512,
                len_bytes: if op == Op::Flush {
                    0
                } else {
                    ((next() % 256) as u32 + 1) * 512
                },
                op,
                latency_nanos: (i % 5 != 0).then(|| next() % 10_000_000),
                pid: (i % 7 != 0).then(|| (next() % 40_000) as u32),
            }
        })
        .collect();
    (header, events)
}

fn write_bst(dir: &Path) -> PathBuf {
    let (header, events) = trace();
    let path = dir.join("t.bst");
    std::fs::write(
        &path,
        encode_all(&header, &events, EncodeOptions::default()),
    )
    .expect("write");
    path
}

fn export(bst: &Path, out: &Path, partition: bool) {
    let mut a = vec![
        "export".to_string(),
        bst.display().to_string(),
        "--to".into(),
        "parquet".into(),
    ];
    if partition {
        a.extend(["--partition-by".into(), "device".into()]);
    }
    a.extend(["-o".into(), out.display().to_string()]);
    let o = run_blocksight(&a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn sort_key(e: &IoEvent) -> (u64, u32, u64, u32, u8, Option<u64>, Option<u32>) {
    (
        e.time_nanos,
        e.device,
        e.offset_bytes,
        e.len_bytes,
        e.op as u8,
        e.latency_nanos,
        e.pid,
    )
}

#[test]
fn parquet_round_trip_equals_the_bst_in_every_field() {
    let dir = temp_dir("round-trip");
    let bst = write_bst(&dir);
    let file = dir.join("t.parquet");
    export(&bst, &file, false);
    assert_eq!(&std::fs::read(&file).expect("read")[..4], b"PAR1");
    let (want, want_summary) = read(&[&bst]);
    let (got, got_summary) = read(&[&file]);
    assert_eq!(want.len(), 20_000);
    assert_eq!(got, want, "events differ");
    assert_eq!(got_summary.header, want_summary.header, "header differs");
    assert_eq!(got_summary.format.name(), "parquet");
    assert_eq!(got_summary.diagnostics.skipped_records, 0);
    // Every command reads it: stat --json is the same as on the .bst.
    let stat = |p: &Path| run_blocksight(["stat", p.to_str().expect("utf-8"), "--json"]).stdout;
    assert_eq!(stat(&file), stat(&bst));
}

#[test]
fn partitioned_export_reads_back_as_one_trace_or_per_device() {
    let dir = temp_dir("partitioned");
    let bst = write_bst(&dir);
    let ds = dir.join("ds");
    export(&bst, &ds, true);
    let mut parts: Vec<String> = std::fs::read_dir(&ds)
        .expect("dataset")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    parts.sort();
    assert_eq!(parts, ["device=a%2Fb", "device=sda", "device=vol%207"]);
    let (mut want, want_summary) = read(&[&bst]);
    let (mut got, got_summary) = read(&[&ds]);
    assert_eq!(got_summary.header, want_summary.header);
    // Equal times on different devices may come out in another order; the events are the same.
    assert!(got.windows(2).all(|w| w[0].time_nanos <= w[1].time_nanos));
    want.sort_by_key(sort_key);
    got.sort_by_key(sort_key);
    assert_eq!(got, want);
    // One device's directory is that device's requests alone, named from the path.
    let (one, summary) = read(&[&ds.join("device=a%2Fb")]);
    let expected: Vec<IoEvent> = read(&[&bst])
        .0
        .into_iter()
        .filter(|e| e.device == 1)
        .collect();
    assert_eq!(one, expected);
    assert_eq!(summary.header.devices[1].name, "a/b");
    // A second export into the same directory is refused (stale parts would join the dataset).
    let mut a = vec!["export", bst.to_str().expect("utf-8"), "--to", "parquet"];
    a.extend([
        "--partition-by",
        "device",
        "-o",
        ds.to_str().expect("utf-8"),
    ]);
    let o = run_blocksight(&a);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not empty"));
}

fn write_batch(path: &Path, batch: &RecordBatch) {
    let file = std::fs::File::create(path).expect("create");
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).expect("writer");
    w.write(batch).expect("write");
    w.close().expect("close");
}

#[test]
fn parquet_from_other_tools_reads_with_the_same_rules() {
    let dir = temp_dir("foreign");
    // Int64 times out of order, Int32 device numbers, dictionary-encoded one-letter ops, no
    // latency or pid columns, an extra column, and one bad row (negative offset).
    let time: ArrayRef = Arc::new(Int64Array::from(vec![3_000, 1_000, 2_000, 4_000, 5_000]));
    let device: ArrayRef = Arc::new(Int32Array::from(vec![7, 7, 9, 7, 9]));
    let offset: ArrayRef = Arc::new(Int64Array::from(vec![4096, 0, 8192, -1, 12288]));
    let len: ArrayRef = Arc::new(Int32Array::from(vec![4096, 4096, 8192, 4096, 512]));
    let op: ArrayRef = Arc::new(
        vec!["W", "R", "r", "R", "D"]
            .into_iter()
            .collect::<DictionaryArray<Int8Type>>(),
    );
    let extra: ArrayRef = Arc::new(StringArray::from(vec!["x"; 5]));
    let batch = RecordBatch::try_from_iter([
        ("time_nanos", time),
        ("device", device),
        ("offset_bytes", offset),
        ("len_bytes", len),
        ("op", op),
        ("comment", extra),
    ])
    .expect("batch");
    let path = dir.join("foreign.parquet");
    write_batch(&path, &batch);
    let (events, summary) = read(&[&path]);
    let names: Vec<&str> = summary
        .header
        .devices
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(names, ["7", "9"]);
    assert_eq!(summary.header.source_format, "parquet");
    let got: Vec<(u64, u32, u64, Op)> = events
        .iter()
        .map(|e| (e.time_nanos, e.device, e.offset_bytes, e.op))
        .collect();
    assert_eq!(
        got,
        [
            (1_000, 0, 0, Op::Read),
            (2_000, 1, 8192, Op::Read),
            (3_000, 0, 4096, Op::Write),
            (5_000, 1, 12288, Op::Discard)
        ]
    );
    assert!(events
        .iter()
        .all(|e| e.latency_nanos.is_none() && e.pid.is_none()));
    let d = &summary.diagnostics;
    assert_eq!(d.skipped_records, 1);
    assert!(
        d.reasons[0].contains("row 3") && d.reasons[0].contains("offset_bytes"),
        "{:?}",
        d.reasons
    );
    assert_eq!(d.out_of_order_records, 2);

    // Without a required column the file is refused, naming the column.
    let batch = RecordBatch::try_from_iter([
        (
            "time_nanos",
            Arc::new(Int64Array::from(vec![1])) as ArrayRef,
        ),
        (
            "offset_bytes",
            Arc::new(Int64Array::from(vec![0])) as ArrayRef,
        ),
        ("op", Arc::new(StringArray::from(vec!["read"])) as ArrayRef),
    ])
    .expect("batch");
    let bad = dir.join("no-len.parquet");
    write_batch(&bad, &batch);
    let o = run_blocksight(["stat", bad.to_str().expect("utf-8")]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no len_bytes column"), "{err}");
}
