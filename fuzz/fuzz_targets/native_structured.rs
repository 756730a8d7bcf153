//! Structure-aware fuzzing of the native format: the input drives a generator of valid `.bst`
//! files (events, options, devices found on the way, header updates) encoded by
//! `NativeEncoder`; the valid file must round-trip exactly. Then the rest of the input mutates
//! it at the chunk level (payload bytes changed with both CRCs fixed, so the column decoder sees
//! the damage instead of a CRC rejection; chunks dropped, duplicated or cut), and the damaged
//! file must decode the same in one piece and in small chunks, without panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    blocksight_fuzz::native_structured(data);
});
