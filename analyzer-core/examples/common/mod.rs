//! What the examples that time the engine share: their CPU clock and a `.bst` read into
//! memory (decoding is not what they time).

use std::io::Read;

use analyzer_core::decode::Decoder;
use analyzer_core::native::NativeDecoder;
use analyzer_core::{IoEvent, TraceHeader};

mod cpu;
pub use cpu::cpu_secs;

/// Every event of a native trace file, and its header.
pub fn read_bst(path: &str) -> std::io::Result<(Vec<IoEvent>, TraceHeader)> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    let mut dec = NativeDecoder::new();
    dec.push(&bytes);
    dec.finish();
    let mut events = Vec::new();
    while let Some(e) = dec
        .next_event()
        .map_err(|e| std::io::Error::other(e.to_string()))?
    {
        events.push(e);
    }
    Ok((events, dec.header().clone()))
}
