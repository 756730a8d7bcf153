//! Fuzzes gzip/zstd decompression (and the native decoder behind it): no panic, bounded
//! memory, chunking-independent output.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    blocksight_fuzz::decompress(data);
});
