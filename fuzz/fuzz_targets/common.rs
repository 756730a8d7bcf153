//! Shared driver for the fuzz targets: decode `data` with a format's decoder, in chunks whose size
//! comes from the first input byte, and check the invariants that hold for any input.
//! [`sniff`] runs format detection over the same bytes; a target calls it once per input (it
//! runs every text format's parser, so calling it per decoded format doubled a target's time).

use analyzer_core::decode::{decode_chunked, Action, DecodeOptions};
use analyzer_core::TraceFormat;

pub fn decode(format: TraceFormat, data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(first % 64) + 1;
    let action = if first & 0x80 != 0 {
        Action::Queue
    } else {
        Action::Issue
    };
    let options = DecodeOptions {
        action,
        ..DecodeOptions::default()
    };
    let Ok(decoder) = format.decoder(&options) else {
        return;
    };
    if let Ok(d) = decode_chunked(decoder, rest, chunk) {
        for e in &d.events {
            assert!(
                (e.device as usize) < d.header.devices.len(),
                "device index out of range"
            );
        }
        assert!(d.diagnostics.truncated_tail_bytes <= rest.len() as u64);
    }
}

/// Format detection over the bytes [`decode`] decodes: must not panic.
pub fn sniff(data: &[u8]) {
    if let Some((_, rest)) = data.split_first() {
        let _ = analyzer_core::format::sniff(rest);
    }
}
