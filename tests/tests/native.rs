//! The native `.bst` format end to end: golden decodes of the fixtures in `tests/data/native/`
//! (made by its `make.sh`), byte-stable re-encoding, and `blocksight import` followed by
//! `blocksight stat`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use analyzer_core::decode::{decode_chunked, Decoded};
use analyzer_core::native::{Compression, EncodeOptions, NativeDecoder, NativeEncoder};
use blocksight_tests::{assert_golden, data_dir, run_blocksight};

fn native_dir() -> PathBuf {
    data_dir().join("native")
}

fn fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(native_dir())
        .expect("tests/data/native exists")
        .map(|e| e.expect("readable dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "bst"))
        .collect();
    files.sort();
    files
}

fn decode(bytes: &[u8], chunk: usize) -> Decoded {
    decode_chunked(NativeDecoder::new(), bytes, chunk).expect("fixture decodes")
}

/// The decoded trace as reviewable text: header and diagnostics as JSON, one line per event.
fn render(d: &Decoded) -> String {
    let mut out = String::new();
    writeln!(out, "header {}", json(&d.header)).expect("write to String");
    writeln!(out, "diagnostics {}", json(&d.diagnostics)).expect("write to String");
    writeln!(out, "events {}", d.events.len()).expect("write to String");
    for e in &d.events {
        let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        writeln!(
            out,
            "{} dev={} {} off={} len={} lat={} pid={}",
            e.time_nanos,
            e.device,
            e.op.name(),
            e.offset_bytes,
            e.len_bytes,
            opt(e.latency_nanos),
            opt(e.pid.map(u64::from)),
        )
        .expect("write to String");
    }
    out
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serialises")
}

#[test]
fn golden_fixtures_decode_the_same_in_any_chunking() {
    let files = fixtures();
    assert!(files.len() >= 4, "fixtures missing: {files:?}");
    for path in files {
        let bytes = std::fs::read(&path).expect("fixture readable");
        let one_shot = decode(&bytes, bytes.len());
        for chunk in [1, 7] {
            assert_eq!(
                decode(&bytes, chunk),
                one_shot,
                "{} in {chunk}-byte pushes",
                path.display()
            );
        }
        let mut expected = path.clone().into_os_string();
        expected.push(".expected");
        assert_golden(Path::new(&expected), &render(&one_shot));
    }
}

#[test]
fn cut_and_corrupted_fixtures_report_what_was_lost() {
    let whole = decode(
        &std::fs::read(native_dir().join("0001_fio_loop.bst")).expect("read"),
        7,
    );
    let cut = decode(
        &std::fs::read(native_dir().join("0003_cut.bst")).expect("read"),
        7,
    );
    assert!(cut.diagnostics.truncated_tail_bytes > 0);
    assert!(!cut.events.is_empty() && cut.events.len() < whole.events.len());
    assert_eq!(cut.events[..], whole.events[..cut.events.len()]);

    let bad = decode(
        &std::fs::read(native_dir().join("0004_bad_crc.bst")).expect("read"),
        7,
    );
    assert_eq!(bad.diagnostics.skipped_records, 1);
    assert!(
        bad.diagnostics.reasons[0].contains("CRC mismatch"),
        "{:?}",
        bad.diagnostics
    );
    // The first events chunk (16 events) is lost, the rest survives.
    assert_eq!(bad.events[..], whole.events[16..]);
}

#[test]
fn the_writer_still_produces_the_fixture_bytes() {
    // 0001 was written by `blocksight import --compress none --chunk-events 16`: a header chunk,
    // events chunks, the final header chunk and the end marker. Encoding the decoded trace the
    // same way must give the same bytes, so an accidental format change fails here.
    let bytes = std::fs::read(native_dir().join("0001_fio_loop.bst")).expect("read");
    let d = decode(&bytes, bytes.len());
    let mut out = Vec::new();
    let options = EncodeOptions {
        chunk_events: 16,
        compression: Compression::None,
    };
    let mut encoder = NativeEncoder::new(&d.header, options, &mut out);
    for e in &d.events {
        encoder.push(e, &mut out);
    }
    encoder.update_header(&d.header, &mut out);
    encoder.finish(&mut out);
    // The fixture is a version 1.0 file; the writer now says 1.1 (the devices chunk, which this
    // file does not need). Everything else must be byte for byte the same.
    assert_eq!(&bytes[8..12], &[1, 0, 0, 0]);
    assert_eq!(&out[8..12], &[1, 0, 1, 0]);
    out[10] = 0;
    assert!(
        out == bytes,
        "re-encoded {} bytes differ from the {}-byte fixture",
        out.len(),
        bytes.len()
    );
}

fn stat_json(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let mut all: Vec<&std::ffi::OsStr> = vec!["stat".as_ref(), "--json".as_ref(), "-q".as_ref()];
    all.extend_from_slice(args);
    let out = run_blocksight(&all);
    assert!(
        out.status.success(),
        "stat failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stat --json prints JSON")
}

#[test]
fn import_then_stat_matches_the_source() {
    let dir = std::env::temp_dir().join(format!("blocksight-native-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let sources = [
        data_dir().join("tracefs/fio_loop.trace"),
        // Per-CPU blktrace files given by their base name.
        data_dir().join("blktrace/mixed"),
    ];
    for (i, source) in sources.iter().enumerate() {
        for compress in ["lz4", "none"] {
            let out_path = dir.join(format!("{i}-{compress}.bst"));
            let out = run_blocksight([
                "import".as_ref(),
                source.as_os_str(),
                "-o".as_ref(),
                out_path.as_os_str(),
                "--compress".as_ref(),
                compress.as_ref(),
            ]);
            assert!(
                out.status.success(),
                "import: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let line = String::from_utf8_lossy(&out.stdout);
            assert!(
                line.starts_with("imported ") && line.contains("bytes/event"),
                "{line}"
            );
            assert!(!dir.join(format!("{i}-{compress}.bst.partial")).exists());
            assert_eq!(
                stat_json(&[out_path.as_os_str()]),
                stat_json(&[source.as_os_str()]),
                "{} via {compress}",
                source.display()
            );
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn import_refuses_bad_options_and_leaves_nothing_behind() {
    let dir = std::env::temp_dir().join(format!("blocksight-native-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out_path = dir.join("x.bst");
    let source = data_dir().join("tracefs/fio_loop.trace");
    let out = run_blocksight([
        "import".as_ref(),
        source.as_os_str(),
        "-o".as_ref(),
        out_path.as_os_str(),
        "--compress".as_ref(),
        "xz".as_ref(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--compress takes lz4 or none"));
    // A source that is not a trace: the import fails and no output file appears.
    let not_a_trace = dir.join("junk.bin");
    std::fs::write(&not_a_trace, [0x89u8, b'B', b'S', b'T', 0, 0]).expect("write");
    let out = run_blocksight([
        "import".as_ref(),
        not_a_trace.as_os_str(),
        "-o".as_ref(),
        out_path.as_os_str(),
        "--format".as_ref(),
        "native".as_ref(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("native: at byte 0"));
    assert!(!out_path.exists());
    assert!(!dir.join("x.bst.partial").exists());
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn stat_warns_about_a_cut_recording() {
    let out = run_blocksight([
        "stat".as_ref(),
        native_dir().join("0003_cut.bst").as_os_str(),
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("incomplete record"));
}

#[test]
fn fuzz_regressions_decode_the_same_in_any_chunking() {
    let bytes =
        std::fs::read(native_dir().join("regressions/resync_false_start.bst")).expect("read");
    let one_shot = decode_chunked(NativeDecoder::new(), &bytes, bytes.len());
    for chunk in [1, 3, 7, 16] {
        assert_eq!(
            decode_chunked(NativeDecoder::new(), &bytes, chunk),
            one_shot,
            "chunk {chunk}"
        );
    }
}

/// Where the last events chunk of a `.bst` file ends (docs/format.md: a 12-byte file header,
/// then frames of a 20-byte header, kind at byte 4 (2: events), length at bytes 8..12).
fn last_events_chunk_end(bytes: &[u8]) -> usize {
    let mut pos = 12;
    let mut end = 0;
    while pos + 20 <= bytes.len() {
        let len =
            u32::from_le_bytes(bytes[pos + 8..pos + 12].try_into().expect("4 bytes")) as usize;
        if bytes[pos + 4] == 2 {
            end = pos + 20 + len;
        }
        pos += 20 + len;
    }
    end
}

#[test]
fn issue_11_stat_json_says_a_cut_recording_has_no_end_marker() {
    // Cut exactly after the last events chunk, as a SIGKILLed recorder leaves the file: every
    // record is whole, so only the missing end marker tells.
    let whole_path = native_dir().join("0001_fio_loop.bst");
    let whole = std::fs::read(&whole_path).expect("fixture");
    let cut_at = last_events_chunk_end(&whole);
    assert!(
        cut_at > 0 && cut_at < whole.len(),
        "{cut_at} of {}",
        whole.len()
    );
    let dir = std::env::temp_dir().join(format!("blocksight-native-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cut_path = dir.join("killed.bst");
    std::fs::write(&cut_path, &whole[..cut_at]).expect("write the cut file");
    let cut = stat_json(&[cut_path.as_os_str()]);
    let full = stat_json(&[whole_path.as_os_str()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        cut["end_marker_missing"],
        serde_json::Value::Bool(true),
        "{cut}"
    );
    assert_eq!(
        full["end_marker_missing"],
        serde_json::Value::Bool(false),
        "{full}"
    );
    // Nothing else is lost: the cut fell after the last event.
    assert_eq!(cut["events"], full["events"]);
    assert_eq!(cut["truncated_tail_bytes"], serde_json::Value::from(0));
}
