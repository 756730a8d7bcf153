//! The engine in wasm32, in headless Chromium: the same bytes must give the same answers as on
//! the host, to the last digit. The expected summary is the host's `blocksight stat --json` on
//! the bundled sample (tests/data/sample/pgbench.stat.json, checked on the host by
//! tests/tests/sample.rs).
#![cfg(target_arch = "wasm32")]

use analyzer_core::compress::{self, Decompressing};
use analyzer_core::decode::{DecodeOptions, Decoder};
use analyzer_core::stat::{Stat, StatSummary};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

const SAMPLE_NATIVE: &[u8] = include_bytes!("../../tests/data/sample/pgbench.bst");
const SAMPLE_TRACEFS_ZST: &[u8] = include_bytes!("../../tests/data/sample/pgbench.tracefs.txt.zst");
const EXPECTED: &str = include_str!("../../tests/data/sample/pgbench.stat.json");

/// Feeds `input` in `File.slice`-like chunks, as the web worker does.
fn stat_of(mut decoder: impl Decoder, input: &[u8], chunk_bytes: usize) -> StatSummary {
    let mut stat = Stat::new();
    for chunk in input.chunks(chunk_bytes) {
        decoder.push(chunk);
        while let Some(e) = decoder.next_event().expect("sample decodes") {
            stat.observe(&e);
        }
    }
    decoder.finish();
    while let Some(e) = decoder.next_event().expect("sample decodes") {
        stat.observe(&e);
    }
    stat.finish(decoder.header(), decoder.diagnostics())
}

fn expected() -> StatSummary {
    serde_json::from_str(EXPECTED).expect("golden JSON parses")
}

#[wasm_bindgen_test]
fn native_sample_stat_equals_host() {
    let sniffed = compress::sniff(SAMPLE_NATIVE);
    let format = sniffed.format.expect("native format is sniffed");
    let decoder = format.decoder(&DecodeOptions::default()).expect("decoder");
    assert_eq!(stat_of(decoder, SAMPLE_NATIVE, 4 << 20), expected());
}

#[wasm_bindgen_test]
fn zstd_tracefs_sample_stat_equals_host() {
    let sniffed = compress::sniff(SAMPLE_TRACEFS_ZST);
    assert_eq!(sniffed.codec.name(), "zstd");
    let format = sniffed
        .format
        .expect("tracefs format is sniffed through zstd");
    let decoder = Decompressing::new(format.decoder(&DecodeOptions::default()).expect("decoder"));
    // An odd chunk size: frames and lines straddle chunk boundaries.
    assert_eq!(stat_of(decoder, SAMPLE_TRACEFS_ZST, 999_983), expected());
}
