//! Cache-simulator throughput: requests per second per policy on a deterministic synthetic Zipf
//! trace, one thread, through the full simulator (line splitting, policy, statistics, time
//! bins) in batches of 1,024 requests (`Simulator::observe_batch`, which reads the table slots
//! ahead, as the `simulate` job's exact cells do).
//!
//! `cargo bench -p analyzer-core --bench cache` runs criterion on a 2M-request slice per policy.
//! `BLOCKSIGHT_BENCH_FULL=1 cargo bench -p analyzer-core --bench cache` additionally replays the
//! whole 50M-request trace once per policy and prints requests/s (per CPU second, which is what
//! matters on a shared machine, and per wall second), the simulator's own memory estimate and
//! the process's peak RSS (VmHWM). `BLOCKSIGHT_BENCH_UNIVERSE_LINES` sets the number of distinct
//! lines (default 2^20; the cache holds a tenth of them).

use std::time::Instant;

use analyzer_core::cache::{PolicyKind, SimConfig, Simulator};
use analyzer_core::hash::mix64;
use analyzer_core::{IoEvent, Op};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

#[path = "../examples/common/cpu.rs"]
mod cpu;
use cpu::cpu_secs;

const ZIPF_ALPHA: f64 = 0.99;

/// Requests handed to the simulator at once (a decoder's batch).
const BATCH: usize = 1024;

fn universe_lines() -> usize {
    std::env::var("BLOCKSIGHT_BENCH_UNIVERSE_LINES")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n: &usize| n >= 16)
        .unwrap_or(1 << 20)
}

/// Deterministic Zipf(alpha) line numbers over `universe` lines, ranks scattered by a hash so
/// hot lines are not adjacent.
fn zipf_lines(n: usize, universe: usize, seed: u64) -> Vec<u32> {
    let mut cdf = Vec::with_capacity(universe);
    let mut sum = 0.0;
    for r in 1..=universe {
        sum += 1.0 / (r as f64).powf(ZIPF_ALPHA);
        cdf.push(sum);
    }
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let u = (mix64(state) >> 11) as f64 / (1u64 << 53) as f64 * sum;
            let rank = cdf.partition_point(|&c| c < u).min(universe - 1);
            (mix64(rank as u64) % universe as u64) as u32
        })
        .collect()
}

fn event(i: usize, line: u32) -> IoEvent {
    IoEvent {
        time_nanos: i as u64 * 10_000,
        device: 0,
        offset_bytes: u64::from(line) * 4096,
        len_bytes: 4096,
        // One write in four, so the write path is exercised too.
        op: if i % 4 == 3 { Op::Write } else { Op::Read },
        latency_nanos: None,
        pid: None,
    }
}

fn run(kind: PolicyKind, cache_lines: u64, lines: &[u32]) -> (u64, u64) {
    let config = SimConfig::new(kind, cache_lines, 4096);
    let mut sim = if kind.needs_future() {
        let events = lines.iter().enumerate().map(|(i, &l)| event(i, l));
        let mut b = analyzer_core::cache::NextUseBuilder::new(4096);
        for e in events {
            b.observe(&e);
        }
        Simulator::with_future(&config, b.finish())
    } else {
        Simulator::new(&config)
    }
    .expect("valid config");
    let mut batch = Vec::with_capacity(BATCH);
    for (first, chunk) in lines.chunks(BATCH).enumerate() {
        batch.clear();
        batch.extend(
            chunk
                .iter()
                .enumerate()
                .map(|(j, &l)| event(first * BATCH + j, l)),
        );
        sim.observe_batch(&batch);
    }
    let r = sim.finish();
    (
        r.whole.counts.read.line_hits + r.whole.counts.write.line_hits,
        r.memory_bytes,
    )
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn bench(c: &mut Criterion) {
    let universe = universe_lines();
    let cache_lines = universe as u64 / 10;
    let lines = zipf_lines(2_000_000, universe, 1);
    let mut group = c.benchmark_group("simulate_zipf_2m");
    group.sample_size(10);
    group.throughput(Throughput::Elements(lines.len() as u64));
    for kind in PolicyKind::ALL {
        group.bench_with_input(
            BenchmarkId::from_parameter(kind.name()),
            &lines,
            |b, lines| b.iter(|| run(kind, cache_lines, lines)),
        );
    }
    group.finish();

    if std::env::var_os("BLOCKSIGHT_BENCH_FULL").is_some() {
        let n = 50_000_000;
        let lines = zipf_lines(n, universe, 2);
        println!(
            "full run: {n} requests, Zipf {ZIPF_ALPHA} over {universe} lines, cache {cache_lines} lines"
        );
        for kind in PolicyKind::ALL {
            let (cpu0, start) = (cpu_secs(), Instant::now());
            let (hits, mem) = run(kind, cache_lines, &lines);
            let (cpu, wall) = (cpu_secs() - cpu0, start.elapsed().as_secs_f64());
            println!(
                "{:<7} {:>6.2} M req/s per CPU s, {:>6.2} per wall s  hit ratio {:.4}  sim memory {:>6.1} MiB  peak RSS so far {:?} KiB{}",
                kind.name(),
                n as f64 / cpu.max(0.01) / 1e6,
                n as f64 / wall / 1e6,
                hits as f64 / n as f64,
                mem as f64 / (1 << 20) as f64,
                peak_rss_kib(),
                if kind.needs_future() { " (time includes building the future)" } else { "" }
            );
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
