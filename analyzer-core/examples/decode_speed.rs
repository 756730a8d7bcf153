//! Decode throughput of one trace file, decoding alone (no analysis): MB/s of file bytes and
//! events/s, CPU time. The file is read into memory first and pushed in 1 MiB slices, as the
//! CLI and the worker do; events are taken in batches of 1,024 (`Decoder::next_events`).
//!
//! `cargo run --release -p analyzer-core --example decode_speed -- FILE [FORMAT] [RUNS]`

#[path = "common/cpu.rs"]
mod cpu;

use analyzer_core::decode::{DecodeOptions, Decoder};
use analyzer_core::format::{sniff, TraceFormat};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: decode_speed FILE [FORMAT] [RUNS]");
        std::process::exit(2);
    };
    let bytes = std::fs::read(path).expect("read the trace");
    let format = match args.get(1) {
        Some(name) => TraceFormat::from_name(name).expect("a format name"),
        None => sniff(&bytes[..bytes.len().min(1 << 16)]).expect("a known format"),
    };
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(3);
    let mut best = f64::MAX;
    let mut events = 0u64;
    for _ in 0..runs {
        let start = cpu::cpu_secs();
        let wall = std::time::Instant::now();
        let mut decoder = format
            .decoder(&DecodeOptions::default())
            .expect("a decoder");
        let mut batch = Vec::with_capacity(1024);
        let mut n = 0u64;
        let mut drain = |decoder: &mut dyn Decoder| loop {
            batch.clear();
            match decoder.next_events(&mut batch, 1024) {
                Ok(0) => break,
                Ok(k) => n += k as u64,
                Err(e) => panic!("{e}"),
            }
        };
        for slice in bytes.chunks(1 << 20) {
            decoder.push(slice);
            drain(decoder.as_mut());
        }
        decoder.finish();
        drain(decoder.as_mut());
        let cpu = cpu::cpu_secs() - start;
        let secs = wall.elapsed().as_secs_f64().max(cpu);
        best = best.min(secs);
        events = n;
        eprintln!(
            "{}: {n} events in {secs:.3} s (CPU {cpu:.2} s), skipped {}",
            format.name(),
            decoder.diagnostics().skipped_records
        );
    }
    println!(
        "{} {}: {} bytes, {events} events; best of {runs}: {best:.3} s, {:.0} MB/s, {:.2} M events/s",
        format.name(),
        path,
        bytes.len(),
        bytes.len() as f64 / best / 1e6,
        events as f64 / best / 1e6
    );
}
