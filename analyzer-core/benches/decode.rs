//! Decode throughput of the trace decoders, in MB/s of input and events/s (criterion reports
//! both). Each format has its own group function; `scripts/bench-decode.sh` runs these and the
//! wasm32 build of the same loops (benches/wasm-decode).

use analyzer_core::native::{encode_all, Compression, EncodeOptions, NativeDecoder};
use analyzer_core::Decoder;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

#[path = "common/synth.rs"]
mod synth;

/// Events in the benchmark trace: enough to span many chunks, small enough to stay in cache-ish
/// memory on small machines.
const EVENTS: usize = 1_000_000;

/// Pushes `bytes` in 1 MiB slices like the CLI and the browser do and counts the events.
fn decode_count(mut decoder: impl Decoder, bytes: &[u8]) -> u64 {
    let mut n = 0u64;
    for chunk in bytes.chunks(1 << 20) {
        decoder.push(chunk);
        while let Ok(Some(_)) = decoder.next_event() {
            n += 1;
        }
    }
    decoder.finish();
    while let Ok(Some(_)) = decoder.next_event() {
        n += 1;
    }
    n
}

/// [`decode_count`] in batches of 1,024 (`Decoder::next_events`), as the CLI's job loop reads.
fn decode_count_batches(mut decoder: impl Decoder, bytes: &[u8]) -> u64 {
    let mut n = 0u64;
    let mut batch = Vec::with_capacity(1024);
    let mut drain = |decoder: &mut dyn Decoder| loop {
        batch.clear();
        match decoder.next_events(&mut batch, 1024) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k as u64,
        }
    };
    for chunk in bytes.chunks(1 << 20) {
        decoder.push(chunk);
        drain(&mut decoder);
    }
    decoder.finish();
    drain(&mut decoder);
    n
}

fn native(c: &mut Criterion) {
    let events = synth::events(EVENTS);
    let header = synth::header();
    let mut group = c.benchmark_group("native_decode");
    group.sample_size(20);
    for compression in [Compression::None, Compression::Lz4] {
        let options = EncodeOptions {
            compression,
            ..EncodeOptions::default()
        };
        let bytes = encode_all(&header, &events, options);
        eprintln!(
            "native {compression:?}: {} events, {} bytes, {:.2} bytes/event",
            events.len(),
            bytes.len(),
            bytes.len() as f64 / events.len() as f64
        );
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("bytes", format!("{compression:?}")),
            &bytes,
            |b, bytes| b.iter(|| decode_count(NativeDecoder::new(), bytes)),
        );
        group.bench_with_input(
            BenchmarkId::new("bytes_batches", format!("{compression:?}")),
            &bytes,
            |b, bytes| b.iter(|| decode_count_batches(NativeDecoder::new(), bytes)),
        );
        group.throughput(Throughput::Elements(events.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("events", format!("{compression:?}")),
            &bytes,
            |b, bytes| b.iter(|| decode_count(NativeDecoder::new(), bytes)),
        );
    }
    group.finish();
}

criterion_group!(benches, native);
criterion_main!(benches);
