//! The error of hash-sliced simulation against the exact run on a large native trace
//! (`scripts/bench-fleet.sh`, docs/python.md "Measurements"): one LRU write-back cache of a
//! share of the footprint, simulated whole and as k = 1, 2, 4, 8, 16 hash slices of size/k
//! merged by `analyzer_core::merge` (`Split::Hash`), as `blocksight.dask.simulate_sliced` runs
//! them on k workers. Here every slice of every k runs in one process over one decode of the
//! trace, so the measurement costs one read instead of 31; the slices' simulations are the
//! same jobs the workers run.
//!
//! `cargo run --release -p analyzer-core --example hash_slices -- TRACE.bst [PERCENT]`
//! (default 10: the cache is 10% of the distinct lines).

use std::time::Instant;

use analyzer_core::cache::sim::SimResult;
use analyzer_core::job::simulate::{Simulate, SimulateRequest};
use analyzer_core::job::{run_events, CacheParams, CacheSize, Job};
use analyzer_core::merge::{hash_slice, merge, Split, SLICE_EXTENT_BYTES};
use analyzer_core::native::NativeDecoder;
use analyzer_core::{Decoder, Diagnostics, IoEvent};

fn job(size: CacheSize) -> Simulate {
    let cache = CacheParams::choose(None, Some("lru"), None, Some("wb"), None, size)
        .expect("lru write-back parameters");
    Simulate::new(SimulateRequest::new(cache)).expect("a simulation")
}

fn ratios(r: &SimResult) -> (f64, f64) {
    let q = &r.whole.ratios;
    (
        q.line_hit_ratio.unwrap_or(0.0),
        q.request_hit_ratio.unwrap_or(0.0),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: hash_slices TRACE.bst [PERCENT]");
        std::process::exit(2);
    };
    let percent: f64 = args.get(2).and_then(|p| p.parse().ok()).unwrap_or(10.0);
    let t = Instant::now();
    let bytes = std::fs::read(path).expect("the trace reads");
    let mut dec = NativeDecoder::new();
    dec.push(&bytes);
    dec.finish();
    drop(bytes);
    let mut events: Vec<IoEvent> = Vec::new();
    while let Ok(Some(e)) = dec.next_event() {
        events.push(e);
    }
    let header = dec.header().clone();
    println!(
        "trace {path}: {} requests decoded in {:.1} s",
        events.len(),
        t.elapsed().as_secs_f64()
    );

    let t = Instant::now();
    let exact = run_events(job(CacheSize::FootprintPercent(percent)), &header, &events)
        .expect("the exact run")
        .runs
        .remove(0)
        .result;
    let size = exact.capacity_bytes;
    let (line, req) = ratios(&exact);
    println!(
        "exact: LRU write-back, {percent}% of the footprint = {:.3} GiB; line hit ratio {line:.5}, \
         request hit ratio {req:.5} ({:.1} s, two passes)",
        size as f64 / f64::from(1u32 << 30),
        t.elapsed().as_secs_f64()
    );

    let ks = [1u32, 2, 4, 8, 16];
    let t = Instant::now();
    let mut jobs: Vec<Vec<Simulate>> = ks
        .iter()
        .map(|&k| {
            (0..k)
                .map(|_| job(CacheSize::Bytes(size / u64::from(k))))
                .collect()
        })
        .collect();
    let passes = jobs[0][0].passes();
    let diagnostics = Diagnostics::default();
    for pass in 0..passes {
        jobs.iter_mut().flatten().for_each(|j| j.begin_pass(pass));
        for e in &events {
            for (slices, &k) in jobs.iter_mut().zip(&ks) {
                slices[hash_slice(e, SLICE_EXTENT_BYTES, k) as usize].observe(e);
            }
        }
        for j in jobs.iter_mut().flatten() {
            j.end_pass(&header, &diagnostics).expect("a pass ends");
        }
    }
    println!(
        "all slices of all k: {:.1} s in one process, one decode",
        t.elapsed().as_secs_f64()
    );
    println!("| k | line hit ratio | error | request hit ratio | error | largest slice / ideal |");
    println!("|---|---|---|---|---|---|");
    for (slices, &k) in jobs.into_iter().zip(&ks) {
        let parts: Vec<SimResult> = slices
            .into_iter()
            .map(|j| j.finish().expect("a slice finishes").runs.remove(0).result)
            .collect();
        let requests = |r: &SimResult| r.whole.counts.read.requests + r.whole.counts.write.requests;
        let largest = parts.iter().map(requests).max().unwrap_or(0);
        let total: u64 = parts.iter().map(requests).sum();
        let merged = merge(&parts, Split::Hash { slices: k }).expect("slices merge");
        let (l, r) = ratios(&merged);
        println!(
            "| {k} | {l:.5} | {:+.5} | {r:.5} | {:+.5} | {:.3} |",
            l - line,
            r - req,
            largest as f64 * f64::from(k) / total.max(1) as f64
        );
    }
}
