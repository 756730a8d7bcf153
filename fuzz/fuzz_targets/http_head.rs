//! Fuzzes `serve`'s request-head parser (`analyzer_core::http`): no panic, a bounded buffer,
//! and the same answer whether the head arrives in one piece or byte by byte.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    blocksight_fuzz::http_head(data);
});
