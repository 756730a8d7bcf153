//! Fixtures shared by the unit tests: the bundled real sample trace, decoded once per test
//! binary (the browser runs every unit test in one page, within the runner's time limit).

use std::sync::OnceLock;

use analyzer_core::compress::Decompressing;
use analyzer_core::decode::DecodeOptions;
use analyzer_core::native::{EncodeOptions, NativeEncoder};
use analyzer_core::{Decoder, IoEvent, TraceFormat, TraceHeader};

/// The real pgbench sample as zstd-compressed tracefs text (tests/data/sample).
pub const SAMPLE_ZST: &[u8] = include_bytes!("../../tests/data/sample/pgbench.tracefs.txt.zst");

fn decoded() -> &'static (Vec<IoEvent>, TraceHeader) {
    static ALL: OnceLock<(Vec<IoEvent>, TraceHeader)> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut d = Decompressing::new(
            TraceFormat::TracefsText
                .decoder(&DecodeOptions::default())
                .expect("decoder"),
        );
        d.push(SAMPLE_ZST);
        d.finish();
        let mut events = Vec::new();
        while let Some(e) = d.next_event().expect("sample decodes") {
            events.push(e);
        }
        (events, d.header().clone())
    })
}

/// The first `n` events of the sample (all of them for `usize::MAX`) and its header.
pub fn sample_events(n: usize) -> (Vec<IoEvent>, TraceHeader) {
    let (all, header) = decoded();
    (all[..n.min(all.len())].to_vec(), header.clone())
}

/// `events` written as a native .bst file with `header`.
pub fn native(header: &TraceHeader, events: &[IoEvent]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut enc = NativeEncoder::new(header, EncodeOptions::default(), &mut out);
    for e in events {
        enc.push(e, &mut out);
    }
    enc.finish(&mut out);
    out
}
