//! Reading table slots ahead of their use.
//!
//! The engine's per-block and per-line tables (the simulator's key → node table, the LRU
//! stack's entries, hot data's and the footprint's tables) are larger than the CPU's caches, and
//! the trace says which slots the next requests will probe. Their callers read those slots a
//! few requests ahead so that the cache misses overlap instead of stalling one request after
//! another. On x86_64 that read is a prefetch instruction (`prefetch-index`, one
//! `_mm_prefetch` behind a safe function; the core itself has no `unsafe`): it retires at once,
//! so as many misses are in flight as the CPU has fill buffers, where a plain load holds a
//! place in the reorder window until its data arrives and caps them at a handful. Elsewhere
//! (wasm32 has no prefetch) it is a plain load, kept alive with `black_box`.
//!
//! Either way it changes nothing but timing.

/// Starts bringing `data[index]`'s cache line in (an index out of range does nothing).
#[inline(always)]
pub fn ahead<T: Copy>(data: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    if index < data.len() {
        prefetch_index::prefetch_index(data, index);
    }
    #[cfg(not(target_arch = "x86_64"))]
    if let Some(&x) = data.get(index) {
        std::hint::black_box(x);
    }
}
