//! Writes a synthetic native trace (`.bst`) of a chosen size, for scale runs of the analysis
//! and the web app (a 2 GB trace in the browser); not a fixture generator for tests.
//!
//! `cargo run --release -p analyzer-core --example make_trace -- OUT.bst MEGABYTES`
//!
//! The workload is OLTP-shaped on one 2 TiB volume: 60,000 requests per second with
//! exponential gaps, 70% reads; 85% of requests are 8 KiB at Zipf-distributed (exponent 0.9)
//! addresses over 64 Mi blocks of 8 KiB, whose popular set drifts slowly, 15% are sequential
//! 64–256 KiB streams (backups, scans); latencies are log-normal-ish from 80 µs to tens of ms,
//! with a few process ids. The LZ4-compressed encoding takes about 8 bytes per event.

use std::io::Write;

use analyzer_core::hash::mix64;
use analyzer_core::mrc::synth::{Rng, Zipf};
use analyzer_core::native::{Compression, EncodeOptions, NativeEncoder};
use analyzer_core::{DeviceInfo, IoEvent, Op, TraceHeader};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(mb)) = (args.get(1), args.get(2).and_then(|m| m.parse::<u64>().ok()))
    else {
        eprintln!("usage: make_trace OUT.bst MEGABYTES");
        std::process::exit(2);
    };
    let target_bytes = mb * 1_000_000;
    let mut header = TraceHeader::new("synthetic");
    let mut dev = DeviceInfo::named("sdb");
    dev.size_bytes = Some(2 << 40);
    header.devices.push(dev);
    header.host = Some("make_trace".into());
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut out = Vec::new();
    let options = EncodeOptions {
        compression: Compression::Lz4,
        ..EncodeOptions::default()
    };
    let mut enc = NativeEncoder::new(&header, options, &mut out);
    let mut rng = Rng::new(42);
    let zipf = Zipf::new(64 << 20, 0.9);
    let mut time_nanos = 1_700_000_000_000_000_000u64;
    let mut stream: Option<(u64, u32, u32)> = None; // next offset, length, remaining requests
    let mut written = 0u64;
    let mut events = 0u64;
    while written < target_bytes {
        // Exponential gaps at 60k requests per second.
        let gap = -(1.0 - rng.unit()).ln() * 1e9 / 60_000.0;
        time_nanos += gap as u64;
        let (offset_bytes, len_bytes, op) = if rng.below(100) < 15 {
            // One stream at a time, interleaved with the random I/O.
            match stream {
                Some((next, len, left)) if left > 0 => {
                    stream = Some((next + u64::from(len), len, left - 1));
                    (next, len, Op::Read)
                }
                _ => {
                    let len = 65_536u32 << rng.below(3);
                    let start = rng.below(1 << 28) * 8192;
                    stream = Some((start + u64::from(len), len, 32 + rng.below(512) as u32));
                    let op = if rng.below(4) == 0 {
                        Op::Write
                    } else {
                        Op::Read
                    };
                    (start, len, op)
                }
            }
        } else {
            // Drift: the popular ranks move over the address space as time passes.
            let rank = zipf.sample(&mut rng);
            let block = mix64(rank ^ (events >> 22)) % (64 << 20);
            let op = if rng.below(10) < 7 {
                Op::Read
            } else {
                Op::Write
            };
            (block * 8192, 8192, op)
        };
        let latency_nanos = (80_000.0 * (rng.unit() * 6.0).exp()) as u64;
        enc.push(
            &IoEvent {
                time_nanos,
                device: 0,
                offset_bytes,
                len_bytes,
                op,
                latency_nanos: Some(latency_nanos),
                pid: Some(1000 + rng.below(8) as u32),
            },
            &mut out,
        );
        events += 1;
        if out.len() >= 1 << 20 {
            file.write_all(&out)?;
            written += out.len() as u64;
            out.clear();
        }
    }
    enc.finish(&mut out);
    file.write_all(&out)?;
    written += out.len() as u64;
    file.flush()?;
    eprintln!(
        "make_trace: {events} events, {written} bytes ({:.2} bytes/event) in {path}",
        written as f64 / events as f64
    );
    Ok(())
}
