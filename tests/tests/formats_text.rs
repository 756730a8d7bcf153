//! The text trace decoders on their fixtures: golden outputs, chunking independence, sniffing,
//! CRLF, headers, bounded memory on input without newlines, and skip reasons naming lines.

use analyzer_core::decode::{decode_chunked, Action, DecodeOptions, Decoded, MAX_LINE_BYTES};
use analyzer_core::format::sniff;
use analyzer_core::{Decoder, Op, TraceFormat};
use blocksight_tests::{assert_golden, data_dir};

/// Every text fixture: (path under tests/data, format, `--csv-columns` file if any).
const FIXTURES: &[(&str, TraceFormat, Option<&str>)] = &[
    ("blkparse/fio_loop.txt", TraceFormat::BlkparseText, None),
    (
        "blktrace/mixed.blkparse.txt",
        TraceFormat::BlkparseText,
        None,
    ),
    ("tracefs/fio_loop.trace", TraceFormat::TracefsText, None),
    ("tracefs/old_kernels.trace", TraceFormat::TracefsText, None),
    ("msr/hm_0_sample.csv", TraceFormat::MsrCsv, None),
    ("spc/financial_sample.spc", TraceFormat::Spc, None),
    (
        "alibaba/io_traces_sample.csv",
        TraceFormat::AlibabaCsv,
        None,
    ),
    ("tencent/cbs_sample.csv", TraceFormat::TencentCsv, None),
    ("fiu/homes_shape.txt", TraceFormat::Fiu, None),
    ("fio/two_files.v3.iolog", TraceFormat::FioIologV3, None),
    ("fio/trim.v3.iolog", TraceFormat::FioIologV3, None),
    ("fio/two_files.v2.iolog", TraceFormat::FioIologV2, None),
    (
        "csv/semicolon_us.csv",
        TraceFormat::GenericCsv,
        Some("csv/semicolon_us.columns"),
    ),
    ("csv/export_header.csv", TraceFormat::GenericCsv, None),
];

/// Where a fixture's golden output lives: beside it, except for fixtures borrowed from another
/// area's folder, whose goldens stay in this area's folders.
fn golden_path(path: &str) -> std::path::PathBuf {
    match path.strip_prefix("blktrace/") {
        Some(name) => data_dir().join(format!("blkparse/from_blktrace_{name}.expected")),
        None => data_dir().join(format!("{path}.expected")),
    }
}

/// `action` only for the formats that choose among a request's events (the others refuse it).
fn options(format: TraceFormat, columns: Option<&str>, action: Action) -> DecodeOptions {
    DecodeOptions {
        action: format.takes_action().then_some(action),
        csv_columns: columns.map(|c| {
            std::fs::read_to_string(data_dir().join(c))
                .expect("columns file")
                .trim()
                .to_owned()
        }),
    }
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(data_dir().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn decode(format: TraceFormat, opts: &DecodeOptions, bytes: &[u8], chunk: usize) -> Decoded {
    let decoder = format.decoder(opts).expect("decoder builds");
    decode_chunked(decoder, bytes, chunk).expect("decodes")
}

/// A stable text rendering of everything a decoder produced, for golden files.
fn render(d: &Decoded) -> String {
    let mut s = String::new();
    s.push_str(&format!("format {}\n", d.header.source_format));
    for (i, dev) in d.header.devices.iter().enumerate() {
        let dev_t = dev
            .dev_t()
            .map(|(a, b)| format!(" ({a}:{b})"))
            .unwrap_or_default();
        s.push_str(&format!("device {i} {}{dev_t}\n", dev.name));
    }
    s.push_str(&format!(
        "start_unix_nanos {:?}\n",
        d.header.start_unix_nanos
    ));
    s.push_str(&format!("dropped_events {}\n", d.header.dropped_events));
    let g = &d.diagnostics;
    s.push_str(&format!(
        "skipped {} ignored {} truncated_tail_bytes {}\n",
        g.skipped_records, g.ignored_records, g.truncated_tail_bytes
    ));
    for r in &g.reasons {
        s.push_str(&format!("reason {r}\n"));
    }
    s.push_str(&format!("events {}\n", d.events.len()));
    s.push_str("time_nanos device offset_bytes len_bytes op latency_nanos pid\n");
    for e in &d.events {
        let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        s.push_str(&format!(
            "{} {} {} {} {} {} {}\n",
            e.time_nanos,
            e.device,
            e.offset_bytes,
            e.len_bytes,
            e.op.name(),
            opt(e.latency_nanos),
            opt(e.pid.map(u64::from))
        ));
    }
    s
}

#[test]
fn golden_outputs_per_fixture() {
    for &(path, format, columns) in FIXTURES {
        let decoded = decode(
            format,
            &options(format, columns, Action::Issue),
            &read(path),
            usize::MAX,
        );
        assert!(!decoded.events.is_empty(), "{path}: no events");
        assert_golden(&golden_path(path), &render(&decoded));
    }
}

#[test]
fn blkparse_queue_action_is_golden_too() {
    let path = "blkparse/fio_loop.txt";
    let decoded = decode(
        TraceFormat::BlkparseText,
        &options(TraceFormat::BlkparseText, None, Action::Queue),
        &read(path),
        usize::MAX,
    );
    assert_golden(
        &data_dir().join("blkparse/fio_loop.txt.queue.expected"),
        &render(&decoded),
    );
}

#[test]
fn chunks_of_1_and_7_bytes_equal_one_shot() {
    for &(path, format, columns) in FIXTURES {
        let bytes = read(path);
        for action in [Action::Issue, Action::Queue] {
            let opts = options(format, columns, action);
            // A fixture of requests read with `Q` is an error naming `--action D`: the same
            // error in any chunking.
            let run = |chunk| {
                let decoder = format.decoder(&opts).expect("decoder builds");
                decode_chunked(decoder, &bytes, chunk)
            };
            let one_shot = run(usize::MAX);
            assert!(
                one_shot.is_ok() || action == Action::Queue,
                "{path}: {one_shot:?}"
            );
            for chunk in [1, 7] {
                assert_eq!(run(chunk), one_shot, "{path} in {chunk}-byte chunks");
            }
        }
    }
}

#[test]
fn every_fixture_is_sniffed_as_its_format() {
    for &(path, format, columns) in FIXTURES {
        if columns.is_some() {
            // A CSV that needs a mapping is no known layout; `--csv-columns` implies the format.
            assert_eq!(sniff(&read(path)), None, "{path}");
            continue;
        }
        assert_eq!(sniff(&read(path)), Some(format), "{path}");
        // The sniffer sees only the first 64 KiB, usually cut mid-line.
        let bytes = read(path);
        let head = &bytes[..bytes.len().min(1500)];
        assert_eq!(sniff(head), Some(format), "{path}, first 1500 bytes");
    }
}

#[test]
fn crlf_line_endings_read_the_same() {
    for &(path, format, columns) in FIXTURES {
        let bytes = read(path);
        let crlf: Vec<u8> = bytes
            .iter()
            .flat_map(|&b| {
                if b == b'\n' {
                    vec![b'\r', b'\n']
                } else {
                    vec![b]
                }
            })
            .collect();
        let opts = options(format, columns, Action::Issue);
        let unix = decode(format, &opts, &bytes, usize::MAX);
        let dos = decode(format, &opts, &crlf, 7);
        assert_eq!(dos.events, unix.events, "{path}");
        assert_eq!(dos.header, unix.header, "{path}");
    }
}

#[test]
fn header_lines_are_recognised_and_skipped() {
    let cases = [
        (
            "msr/hm_0_sample.csv",
            TraceFormat::MsrCsv,
            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
        ),
        (
            "spc/financial_sample.spc",
            TraceFormat::Spc,
            "ASU,LBA,Size,Opcode,Timestamp",
        ),
        (
            "alibaba/io_traces_sample.csv",
            TraceFormat::AlibabaCsv,
            "device_id,opcode,offset,length,timestamp",
        ),
        (
            "tencent/cbs_sample.csv",
            TraceFormat::TencentCsv,
            "Timestamp,Offset,Size,IOType,VolumeID",
        ),
    ];
    for (path, format, header) in cases {
        let bytes = read(path);
        let mut with_header = format!("{header}\n").into_bytes();
        with_header.extend_from_slice(&bytes);
        let opts = DecodeOptions::default();
        let plain = decode(format, &opts, &bytes, usize::MAX);
        let headed = decode(format, &opts, &with_header, 7);
        assert_eq!(headed.events, plain.events, "{path}");
        assert_eq!(
            headed.diagnostics.skipped_records, plain.diagnostics.skipped_records,
            "{path}"
        );
        assert_eq!(
            headed.diagnostics.ignored_records,
            plain.diagnostics.ignored_records + 1,
            "{path}"
        );
        // A header makes the sniffer sure.
        assert_eq!(sniff(&with_header), Some(format), "{path} with header");
    }
}

#[test]
fn csv_shapes_are_told_apart() {
    // One line of each published layout; each is only its own format.
    let lines = [
        (
            "128166372003061629,hm,0,Read,3718418432,65536,57936\n",
            TraceFormat::MsrCsv,
        ),
        ("0,20941264,8192,W,0.551706\n", TraceFormat::Spc),
        (
            "419,W,8743329792,4096,1577808000000065\n",
            TraceFormat::AlibabaCsv,
        ),
        ("1538323200,12910952,128,0,1063\n", TraceFormat::TencentCsv),
        (
            "fio version 2 iolog\n/dev/sdb add\n",
            TraceFormat::FioIologV2,
        ),
        (
            "fio version 3 iolog\n0 /dev/sdb add\n",
            TraceFormat::FioIologV3,
        ),
    ];
    for (line, format) in lines {
        assert_eq!(sniff(line.as_bytes()), Some(format), "{line}");
    }
    assert_eq!(sniff(b"hello,world\n1,2\n"), None);
}

#[test]
fn skip_reasons_name_the_line() {
    for &(path, format, columns) in FIXTURES {
        let decoded = decode(
            format,
            &options(format, columns, Action::Issue),
            &read(path),
            usize::MAX,
        );
        for r in &decoded.diagnostics.reasons {
            assert!(
                r.starts_with("line "),
                "{path}: reason {r:?} does not name its line"
            );
        }
    }
    // A bad line in the middle is reported with its own number.
    let input = b"0,1,512,r,0.1\n0,1,512,q,0.2\n0,1,512,w,0.3\n";
    let d = decode(TraceFormat::Spc, &DecodeOptions::default(), input, 1);
    assert_eq!(d.events.len(), 2);
    assert_eq!(
        d.diagnostics.reasons,
        vec!["line 2: Opcode \"q\" is neither r nor w".to_string()]
    );
}

#[test]
fn input_without_newlines_stays_bounded() {
    // 64 MiB without a newline, then one good line: fed in 1 MiB chunks, the decoder keeps at
    // most one line's worth of bytes and reports the over-long line once.
    for (format, good) in [
        (TraceFormat::Spc, &b"\n0,8,4096,w,1.5\n"[..]),
        (TraceFormat::TencentCsv, &b"\n1538323200,8,8,1,5\n"[..]),
        (
            TraceFormat::TracefsText,
            &b"\nfio-1 [000] ..... 1.000000: block_rq_issue: 8,0 W 4096 () 8 + 8 [fio]\n"[..],
        ),
        (TraceFormat::FioIologV3, &b"\n5 /dev/sdb write 0 4096\n"[..]),
    ] {
        let mut decoder = format.decoder(&DecodeOptions::default()).expect("decoder");
        let chunk = vec![b'7'; 1 << 20];
        let mut events = 0;
        for _ in 0..64 {
            decoder.push(&chunk);
            while decoder.next_event().expect("no fatal error").is_some() {
                events += 1;
            }
        }
        decoder.push(good);
        decoder.finish();
        while decoder.next_event().expect("no fatal error").is_some() {
            events += 1;
        }
        assert_eq!(events, 1, "{format:?}");
        let d = decoder.diagnostics();
        assert_eq!(d.skipped_records, 1, "{format:?}");
        assert!(
            d.reasons[0].contains(&format!("longer than {MAX_LINE_BYTES} bytes")),
            "{:?}",
            d.reasons
        );
    }
}

#[test]
fn wrong_format_fails_with_a_clear_error() {
    let bytes = read("tencent/cbs_sample.csv");
    let many: Vec<u8> = bytes
        .iter()
        .copied()
        .cycle()
        .take(bytes.len() * 5)
        .collect();
    let decoder = TraceFormat::AlibabaCsv
        .decoder(&DecodeOptions::default())
        .expect("decoder");
    let err = decode_chunked(decoder, &many, 4096).expect_err("tencent lines are not alibaba");
    let msg = err.to_string();
    assert!(msg.starts_with("alibaba: "), "{msg}");
    assert!(msg.contains("not alibaba input"), "{msg}");
    assert!(msg.contains("line 1:"), "{msg}");
}

#[test]
fn generic_csv_needs_a_mapping_or_a_header() {
    let decoder = TraceFormat::GenericCsv
        .decoder(&DecodeOptions::default())
        .expect("decoder");
    let err = decode_chunked(decoder, b"1,2,3\n", 1).expect_err("no mapping");
    assert!(err.to_string().contains("--csv-columns"), "{err}");
    let bad = DecodeOptions {
        csv_columns: Some("time=0,op=1,offset=2".into()),
        ..DecodeOptions::default()
    };
    let err = TraceFormat::GenericCsv
        .decoder(&bad)
        .err()
        .expect("bad mapping is rejected");
    assert!(err.to_string().contains("no len=N column"), "{err}");
}

#[test]
fn blkparse_latencies_come_from_completions() {
    let d = decode(
        TraceFormat::BlkparseText,
        &DecodeOptions::default(),
        &read("blkparse/fio_loop.txt"),
        usize::MAX,
    );
    assert!(
        d.events.iter().all(|e| e.latency_nanos.is_some()),
        "every D has its C"
    );
    assert_eq!(d.events.iter().filter(|e| e.op == Op::Flush).count(), 1);
    assert_eq!(d.events.iter().filter(|e| e.op == Op::Discard).count(), 3);
    // Issue order is time order.
    assert!(d
        .events
        .windows(2)
        .all(|w| w[0].time_nanos <= w[1].time_nanos));
}

#[test]
fn tracefs_latencies_come_from_completions() {
    let d = decode(
        TraceFormat::TracefsText,
        &DecodeOptions::default(),
        &read("tracefs/fio_loop.trace"),
        usize::MAX,
    );
    assert!(
        d.events.iter().all(|e| e.latency_nanos.is_some()),
        "every issue has its completion"
    );
    assert_eq!(d.events.iter().filter(|e| e.op == Op::Flush).count(), 2);
    assert_eq!(d.events.iter().filter(|e| e.op == Op::Discard).count(), 4);
    assert_eq!(d.diagnostics.skipped_records, 0);
}

#[test]
fn blkparse_and_blktrace_binary_agree() {
    // The blktrace fixtures come with blkparse's text of the same records.
    let text = decode(
        TraceFormat::BlkparseText,
        &DecodeOptions::default(),
        &read("blktrace/mixed.blkparse.txt"),
        usize::MAX,
    );
    let bin0 = read("blktrace/mixed.blktrace.0");
    let bin1 = read("blktrace/mixed.blktrace.1");
    let mut multi = TraceFormat::BlktraceBin
        .multi_decoder(2, &DecodeOptions::default())
        .expect("decoder");
    multi.push(0, &bin0);
    multi.push(1, &bin1);
    multi.finish_input(0);
    multi.finish_input(1);
    let mut bin_events = Vec::new();
    while let Some(e) = multi.next_event().expect("decodes") {
        bin_events.push(e);
    }
    assert_eq!(bin_events.len(), text.events.len());
    for (b, t) in bin_events.iter().zip(&text.events) {
        assert_eq!(
            (b.offset_bytes, b.len_bytes, b.op),
            (t.offset_bytes, t.len_bytes, t.op)
        );
        assert_eq!(b.latency_nanos.is_some(), t.latency_nanos.is_some());
    }
}

mod random_input {
    use super::*;
    use proptest::prelude::*;

    /// Pieces that look like parts of real lines, so random input reaches deep into the parsers.
    const PIECES: [&str; 24] = [
        "8,0",
        " ",
        ",",
        "\n",
        "\r\n",
        "+",
        "[fio]",
        "D",
        "C",
        "Q",
        "WS",
        "FN",
        "0.000001000",
        "block_rq_issue: ",
        "block_rq_complete: ",
        "fio-12 [001] ..... 1.5: ",
        "Read",
        "hm",
        "18446744073709551615",
        "4096",
        "fio version 3 iolog\n",
        "trim",
        "\"",
        "CPU0 (8,0):\n",
    ];

    fn soup() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                (0..PIECES.len()).prop_map(|i| PIECES[i].as_bytes().to_vec()),
                proptest::collection::vec(any::<u8>(), 0..6),
            ],
            0..80,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn any_input_decodes_the_same_in_any_chunks(input in soup(), chunk in 1usize..13) {
            for format in [
                TraceFormat::BlkparseText, TraceFormat::TracefsText, TraceFormat::MsrCsv,
                TraceFormat::Spc, TraceFormat::AlibabaCsv, TraceFormat::TencentCsv,
                TraceFormat::FioIologV2, TraceFormat::FioIologV3, TraceFormat::GenericCsv,
            ] {
                let opts = DecodeOptions::default();
                let one = decode_chunked(format.decoder(&opts).expect("decoder"), &input, usize::MAX);
                let many = decode_chunked(format.decoder(&opts).expect("decoder"), &input, chunk);
                prop_assert_eq!(&one, &many, "{:?}", format);
                if let Ok(d) = one {
                    for e in &d.events {
                        prop_assert!((e.device as usize) < d.header.devices.len());
                    }
                }
                let _ = sniff(&input);
            }
        }
    }
}
