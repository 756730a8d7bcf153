//! blktrace binary decode throughput, in MB/s of input and requests/s, on a synthetic stream
//! built in memory: every request has the Q, G, I, D and C records a real blk-mq trace carries
//! (5 × 48 bytes), random 4–64 KiB reads and writes, up to 32 in flight, completions out of order.
//! Measured through the single-input decoder and through the per-CPU merge (issues on one CPU's
//! input, completions on the other's), both fed in 1 MiB slices like the CLI and the browser.

use analyzer_core::decode::blktrace::{BlktraceDecoder, BlktraceMulti, MAGIC};
use analyzer_core::decode::{DecodeOptions, Decoder, MultiDecoder};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const REQUESTS: u64 = 200_000;
const DEV: u32 = (259 << 20) | 1;

fn record(out: &mut Vec<u8>, time: u64, sector: u64, bytes: u32, action: u32, cpu: u32) {
    out.extend_from_slice(&(MAGIC | 7).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&time.to_le_bytes());
    out.extend_from_slice(&sector.to_le_bytes());
    out.extend_from_slice(&bytes.to_le_bytes());
    out.extend_from_slice(&action.to_le_bytes());
    out.extend_from_slice(&1234u32.to_le_bytes());
    out.extend_from_slice(&DEV.to_le_bytes());
    out.extend_from_slice(&cpu.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
}

/// Returns (records of CPU 0: Q/G/I/D, records of CPU 1: C), each in time order.
fn synthetic() -> (Vec<u8>, Vec<u8>) {
    let mut issues = Vec::new();
    let mut completions = Vec::new();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut in_flight: Vec<(u64, u64, u32, u32)> = Vec::new();
    let mut time = 0u64;
    for _ in 0..REQUESTS {
        let r = next();
        let write = r & 1 == 1;
        let cat = if write { 1 << 1 } else { 1 << 0 };
        let bytes = 4096 * (1 + (r >> 8) % 16) as u32;
        let sector = ((r >> 16) % (1 << 28)) & !7;
        for (step, act, extra_cat) in [
            (0, 1, 1 << 4),
            (300, 4, 1 << 4),
            (600, 12, 1 << 4),
            (900, 7, 1 << 6),
        ] {
            record(
                &mut issues,
                time + step,
                sector,
                bytes,
                act | ((cat | extra_cat) << 16),
                0,
            );
        }
        in_flight.push((time + 900, sector, bytes, cat));
        time += 2_000;
        if in_flight.len() >= 32 {
            // Complete a random one of the in-flight requests (out of order, like a real device).
            let i = (next() % in_flight.len() as u64) as usize;
            let (_, s, b, c) = in_flight.swap_remove(i);
            record(&mut completions, time, s, b, 8 | ((c | 1 << 7) << 16), 1);
            time += 100;
        }
    }
    for (_, s, b, c) in in_flight {
        record(&mut completions, time, s, b, 8 | ((c | 1 << 7) << 16), 1);
        time += 100;
    }
    (issues, completions)
}

fn interleaved(issues: &[u8], completions: &[u8]) -> Vec<u8> {
    let time = |r: &[u8]| u64::from_le_bytes(r[8..16].try_into().expect("8 bytes"));
    let (mut a, mut b) = (
        issues.chunks(48).peekable(),
        completions.chunks(48).peekable(),
    );
    let mut out = Vec::with_capacity(issues.len() + completions.len());
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => time(x) <= time(y),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let r = if take_a { a.next() } else { b.next() };
        out.extend_from_slice(r.expect("peeked"));
    }
    out
}

fn single(bytes: &[u8]) -> u64 {
    let mut d = BlktraceDecoder::new(&DecodeOptions::default());
    let mut n = 0;
    for chunk in bytes.chunks(1 << 20) {
        d.push(chunk);
        while let Ok(Some(_)) = d.next_event() {
            n += 1;
        }
    }
    d.finish();
    while let Ok(Some(_)) = d.next_event() {
        n += 1;
    }
    n
}

fn multi(inputs: &[&[u8]; 2]) -> u64 {
    let mut d = BlktraceMulti::new(2, &DecodeOptions::default());
    let mut fed = [0usize; 2];
    let mut n = 0;
    loop {
        while let Ok(Some(_)) = d.next_event() {
            n += 1;
        }
        let Some(i) = d.wants() else { break };
        if fed[i] == inputs[i].len() {
            d.finish_input(i);
        } else {
            let end = (fed[i] + (1 << 20)).min(inputs[i].len());
            d.push(i, &inputs[i][fed[i]..end]);
            fed[i] = end;
        }
    }
    n
}

fn bench(c: &mut Criterion) {
    let (issues, completions) = synthetic();
    let one = interleaved(&issues, &completions);
    assert_eq!(single(&one), REQUESTS);
    assert_eq!(multi(&[&issues, &completions]), REQUESTS);
    eprintln!(
        "blktrace synthetic: {REQUESTS} requests, {} bytes ({} records)",
        one.len(),
        one.len() / 48
    );

    let mut bytes = c.benchmark_group("blktrace_decode_bytes");
    bytes.sample_size(10);
    bytes.throughput(Throughput::Bytes(one.len() as u64));
    bytes.bench_function("single", |b| b.iter(|| single(&one)));
    bytes.bench_function("per_cpu_merge", |b| {
        b.iter(|| multi(&[&issues, &completions]))
    });
    bytes.finish();

    let mut events = c.benchmark_group("blktrace_decode_events");
    events.sample_size(10);
    events.throughput(Throughput::Elements(REQUESTS));
    events.bench_function("single", |b| b.iter(|| single(&one)));
    events.bench_function("per_cpu_merge", |b| {
        b.iter(|| multi(&[&issues, &completions]))
    });
    events.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
