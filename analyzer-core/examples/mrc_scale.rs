//! Scale runs of the miss-ratio-curve engines, too long for criterion: the exact LRU curve over
//! 100M requests and SHARDS over 1B requests. `scripts/bench-mrc.sh` runs them under
//! `/usr/bin/time -v` for the peak RSS.
//!
//! `cargo run --release -p analyzer-core --example mrc_scale -- MODE REQUESTS [ITEMS]`, MODE one
//! of `gen` (the generator alone, to subtract), `exact`, `shards-rate:R`, `shards-size:S`; ITEMS
//! the power-law universe (default 8M; the scan region is twice as many lines).
//!
//! The trace is generated on the fly (1B events would not fit in memory): 4 KiB requests, 90%
//! drawn from a power law (rank = U^u for uniform u, i.e. Zipf with exponent 1) over U items
//! whose ranks drift by one item every 64 requests, 10% from a sequential scan over 2U lines;
//! one in four requests is a write.

use std::time::Instant;

use analyzer_core::hash::mix64;
use analyzer_core::mrc::shards::ShardsMode;
use analyzer_core::mrc::{LruMrc, SizeSpec};
use analyzer_core::{IoEvent, Op, TraceHeader};

struct Gen {
    state: u64,
    scan: u64,
    i: u64,
    universe: f64,
    scan_lines: u64,
}

impl Gen {
    #[inline]
    fn next(&mut self) -> IoEvent {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let r = mix64(self.state);
        self.i += 1;
        let line = if r % 10 == 0 {
            self.scan = (self.scan + 1) % self.scan_lines;
            (1 << 40) + self.scan
        } else {
            let u = (r >> 11) as f64 / (1u64 << 53) as f64;
            let rank = self.universe.powf(u) as u64;
            mix64(rank + self.i / 64) % (1 << 30)
        };
        IoEvent {
            time_nanos: self.i * 1000,
            device: 0,
            offset_bytes: line * 4096,
            len_bytes: 4096,
            op: if r % 4 == 3 { Op::Write } else { Op::Read },
            latency_nanos: None,
            pid: None,
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(mode), Some(n)) = (args.get(1), args.get(2).and_then(|s| s.parse::<u64>().ok()))
    else {
        eprintln!("usage: mrc_scale gen|exact|shards-rate:R|shards-size:S REQUESTS [ITEMS]");
        std::process::exit(2);
    };
    let items = args
        .get(3)
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(8 << 20);
    let mut gen = Gen {
        state: 42,
        scan: 0,
        i: 0,
        universe: items as f64,
        scan_lines: 2 * items,
    };
    let mrc = if mode == "exact" {
        Some(LruMrc::exact(4096))
    } else if let Some(r) = mode.strip_prefix("shards-rate:") {
        Some(LruMrc::shards(
            4096,
            ShardsMode::FixedRate {
                rate: r.parse().expect("a rate"),
            },
        ))
    } else {
        mode.strip_prefix("shards-size:").map(|s| {
            LruMrc::shards(
                4096,
                ShardsMode::FixedSize {
                    max_lines: s.parse().expect("a size"),
                },
            )
        })
    };
    let mut mrc = mrc;
    let start = Instant::now();
    let mut checksum = 0u64;
    match &mut mrc {
        Some(m) => {
            for _ in 0..n {
                m.observe(&gen.next());
            }
        }
        None => {
            for _ in 0..n {
                checksum = checksum.wrapping_add(gen.next().offset_bytes);
            }
        }
    }
    let pass = start.elapsed().as_secs_f64();
    let t = Instant::now();
    let report = mrc
        .as_ref()
        .map(|m| m.finish(&SizeSpec::Count(100), &TraceHeader::new("synthetic")));
    let finish = t.elapsed().as_secs_f64();
    println!(
        "mode {mode} requests {n} pass {pass:.2} s ({:.1} M requests/s) finish {finish:.3} s",
        n as f64 / pass / 1e6
    );
    match report {
        Some(r) => println!(
            "footprint {} lines, miss ratio at 10%/50%/100% of footprint: {:.4} {:.4} {:.4}",
            r.footprint_lines,
            r.points[9].miss_ratio,
            r.points[49].miss_ratio,
            r.points[99].miss_ratio
        ),
        None => println!("checksum {checksum}"),
    }
}
