//! The block stream of a trace in libCacheSim's `oracleGeneral` binary format, so that
//! libCacheSim and `blocksight simulate` run the same line accesses (`scripts/bench-cache.sh`).
//! Not a fixture generator for tests.
//!
//! ```text
//! cargo run --release -p analyzer-core --example cache_stream -- from-bst IN.bst OUT LINE_BYTES
//! cargo run --release -p analyzer-core --example cache_stream -- synth LINE_ACCESSES OUT.bst OUT
//! ```
//!
//! `from-bst` reads a native trace; `synth` first writes a deterministic synthetic `.bst`
//! (`mrc::synth`: a drifting Zipf hot set over 4 Mi 4 KiB items, 10% sequential scans, 4–64 KiB
//! requests, 30% writes) with at least `LINE_ACCESSES` 4 KiB line accesses. Either way, every
//! line of every read and write (the simulator's rule: touching any byte touches the line) is
//! one record `{u32 time s, u64 obj_id, u32 size 1, i64 next_access_vtime -1}` with
//! `obj_id = block_key(device, line)`, the simulator's own line key. Prints
//! `line_accesses footprint_lines requests` on stdout.

use std::io::{Read, Write};

use analyzer_core::decode::Decoder;
use analyzer_core::hash::{block_key, IntSet};
use analyzer_core::mrc::synth::{Synthetic, SyntheticConfig};
use analyzer_core::native::{EncodeOptions, NativeDecoder, NativeEncoder};
use analyzer_core::{DeviceInfo, IoEvent, Op, TraceHeader};

struct Stream {
    out: std::io::BufWriter<std::fs::File>,
    line_bytes: u64,
    seen: IntSet<u64>,
    accesses: u64,
    requests: u64,
    first_nanos: Option<u64>,
}

impl Stream {
    fn new(path: &str, line_bytes: u64) -> std::io::Result<Stream> {
        Ok(Stream {
            out: std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?),
            line_bytes,
            seen: IntSet::default(),
            accesses: 0,
            requests: 0,
            first_nanos: None,
        })
    }

    fn event(&mut self, e: &IoEvent) -> std::io::Result<()> {
        if !matches!(e.op, Op::Read | Op::Write) || e.len_bytes == 0 {
            return Ok(());
        }
        self.requests += 1;
        let first = *self.first_nanos.get_or_insert(e.time_nanos);
        let secs = (e.time_nanos.saturating_sub(first) / 1_000_000_000) as u32;
        for line in e.block_range(self.line_bytes) {
            let key = block_key(e.device, line);
            self.seen.insert(key);
            self.accesses += 1;
            let mut rec = [0u8; 24];
            rec[0..4].copy_from_slice(&secs.to_le_bytes());
            rec[4..12].copy_from_slice(&key.to_le_bytes());
            rec[12..16].copy_from_slice(&1u32.to_le_bytes());
            rec[16..24].copy_from_slice(&(-1i64).to_le_bytes());
            self.out.write_all(&rec)?;
        }
        Ok(())
    }

    fn done(mut self) -> std::io::Result<()> {
        self.out.flush()?;
        println!("{} {} {}", self.accesses, self.seen.len(), self.requests);
        Ok(())
    }
}

fn from_bst(input: &str, out: &str, line_bytes: u64) -> std::io::Result<()> {
    let mut stream = Stream::new(out, line_bytes)?;
    let mut dec = NativeDecoder::new();
    let mut file = std::fs::File::open(input)?;
    let mut buf = vec![0u8; 1 << 20];
    let bad = |e: analyzer_core::decode::DecodeError| std::io::Error::other(e.to_string());
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            dec.finish();
        } else {
            dec.push(&buf[..n]);
        }
        while let Some(e) = dec.next_event().map_err(bad)? {
            stream.event(&e)?;
        }
        if n == 0 {
            break;
        }
    }
    stream.done()
}

fn synth(accesses: u64, bst: &str, out: &str) -> std::io::Result<()> {
    let mut stream = Stream::new(out, 4096)?;
    let mut header = TraceHeader::new("synthetic");
    let mut dev = DeviceInfo::named("synth");
    let cfg = SyntheticConfig {
        requests: u64::MAX,
        zipf_lines: 4 << 20,
        with_latency: false,
        ..SyntheticConfig::default()
    };
    dev.size_bytes = Some(cfg.device_bytes);
    header.devices.push(dev);
    let mut file = std::io::BufWriter::new(std::fs::File::create(bst)?);
    let mut buf = Vec::new();
    let mut enc = NativeEncoder::new(&header, EncodeOptions::default(), &mut buf);
    for e in Synthetic::new(cfg) {
        if stream.accesses >= accesses {
            break;
        }
        stream.event(&e)?;
        enc.push(&e, &mut buf);
        if buf.len() > 1 << 20 {
            file.write_all(&buf)?;
            buf.clear();
        }
    }
    enc.finish(&mut buf);
    file.write_all(&buf)?;
    file.flush()?;
    stream.done()
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    match (arg(1), arg(2), arg(3), arg(4)) {
        (Some("from-bst"), Some(input), Some(out), Some(line)) => {
            let line_bytes = line.parse().map_err(std::io::Error::other)?;
            from_bst(input, out, line_bytes)
        }
        (Some("synth"), Some(n), Some(bst), Some(out)) => {
            let n = n.parse().map_err(std::io::Error::other)?;
            synth(n, bst, out)
        }
        _ => {
            eprintln!(
                "usage: cache_stream from-bst IN.bst OUT LINE_BYTES | synth LINE_ACCESSES OUT.bst OUT"
            );
            std::process::exit(2);
        }
    }
}
