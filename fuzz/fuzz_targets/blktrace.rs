//! blktrace binary, single input (either action).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::decode(analyzer_core::TraceFormat::BlktraceBin, data);
    common::sniff(data);
});
