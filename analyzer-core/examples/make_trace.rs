//! Writes a synthetic native trace (`.bst`) of a chosen size, for scale runs of the analysis
//! and the web app (a 2 GB trace in the browser); not a fixture generator for tests.
//!
//! `cargo run --release -p analyzer-core --example make_trace -- OUT.bst MEGABYTES`
//!
//! The workload (`mrc::synth::Oltp::make_trace`) is OLTP-shaped on one 2 TiB volume: 60,000
//! requests per second with exponential gaps, 70% reads; 85% of requests are 8 KiB at
//! Zipf-distributed (exponent 0.9) addresses over 64 Mi blocks of 8 KiB, whose popular set
//! drifts slowly, 15% are sequential 64–256 KiB streams (backups, scans); latencies are
//! log-normal-ish from 80 µs to tens of ms, with a few process ids. The LZ4-compressed encoding
//! takes about 8 bytes per event.

use std::io::Write;

use analyzer_core::mrc::synth::Oltp;
use analyzer_core::native::{Compression, EncodeOptions, NativeEncoder};
use analyzer_core::{DeviceInfo, TraceHeader};

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
    let mut events = 0u64;
    let mut written = 0u64;
    for e in Oltp::make_trace() {
        if written >= target_bytes {
            break;
        }
        enc.push(&e, &mut out);
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
