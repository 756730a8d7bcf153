//! Fuzzes the FIU text decoder: no panic, bounded work, chunking-independent results.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    blocksight_fuzz::decode_format(analyzer_core::TraceFormat::Fiu, data);
});
