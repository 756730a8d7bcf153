//! A deterministic synthetic block trace shaped like a busy database server, for decode
//! benchmarks (host and wasm share this file so both measure the same workload).
//!
//! Shape: Poisson arrivals at about 20k IOPS with nanosecond timestamps; 40% of requests come in
//! sequential runs (mean 32 requests of 4 KiB-128 KiB, one process per run), the rest are random
//! 4-64 KiB requests whose 4 KiB block is drawn Zipf-like (log-uniform rank, scattered by a hash)
//! over a 512 GiB device; 70% reads, 28% writes, 1% discards, 1% flushes; nanosecond-precise
//! latencies between 50 µs and 20 ms; 24 process ids; two devices. (The float maths may round
//! differently on wasm32, so its trace differs in a few events: sizes agree within 1%.)

use analyzer_core::{DeviceInfo, IoEvent, Op, TraceHeader};

/// splitmix64: small, fast, and identical on every platform.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

pub fn header() -> TraceHeader {
    TraceHeader {
        devices: vec![
            DeviceInfo {
                size_bytes: Some(512 << 30),
                ..DeviceInfo::named("nvme0n1")
            },
            DeviceInfo {
                size_bytes: Some(2 << 40),
                ..DeviceInfo::named("sdb")
            },
        ],
        host: Some("synthetic-db".into()),
        tool_version: Some("blocksight bench".into()),
        ..TraceHeader::new("synthetic")
    }
}

pub fn events(count: usize) -> Vec<IoEvent> {
    const BLOCK_BYTES: u64 = 4096;
    let device_blocks = (512u64 << 30) / BLOCK_BYTES;
    let mut rng = Rng::new(0x0b5e_55ed);
    let mut out = Vec::with_capacity(count);
    let mut time_nanos = 0u64;
    // The current sequential run: next offset, request size, requests left, device, pid, op.
    let mut run = (0u64, 0u32, 0u32, 0u32, 0u32, Op::Read);
    while out.len() < count {
        // Exponential inter-arrival times, mean 50 µs.
        time_nanos += (-(1.0 - rng.unit()).ln() * 50_000.0) as u64 + 1;
        let op_draw = rng.below(100);
        let latency_nanos = Some((50_000.0 * (400f64).powf(rng.unit())) as u64 + rng.below(997));
        if op_draw == 99 {
            out.push(IoEvent {
                time_nanos,
                device: rng.below(2) as u32,
                offset_bytes: 0,
                len_bytes: 0,
                op: Op::Flush,
                latency_nanos,
                pid: Some(rng.below(24) as u32 + 1000),
            });
            continue;
        }
        if run.2 == 0 && rng.below(100) < 40 / 4 {
            // Start a run; runs are long, so a tenth of the starts gives 40% of requests.
            let size = [4096u32, 16384, 65536, 131072][rng.below(4) as usize];
            let op = if rng.below(10) < 7 {
                Op::Read
            } else {
                Op::Write
            };
            run = (
                rng.below(device_blocks) * BLOCK_BYTES,
                size,
                1 + rng.below(63) as u32,
                rng.below(2) as u32,
                rng.below(24) as u32 + 1000,
                op,
            );
        }
        if run.2 > 0 {
            out.push(IoEvent {
                time_nanos,
                device: run.3,
                offset_bytes: run.0,
                len_bytes: run.1,
                op: run.5,
                latency_nanos,
                pid: Some(run.4),
            });
            run.0 += u64::from(run.1);
            run.2 -= 1;
            continue;
        }
        let rank = (device_blocks as f64).powf(rng.unit()) as u64;
        let block = rank.wrapping_mul(0x9e37_79b9_7f4a_7c15) % device_blocks;
        let op = match op_draw {
            0..=69 => Op::Read,
            70..=97 => Op::Write,
            _ => Op::Discard,
        };
        out.push(IoEvent {
            time_nanos,
            device: u32::from(rng.below(10) == 0),
            offset_bytes: block * BLOCK_BYTES,
            len_bytes: [4096u32, 4096, 4096, 8192, 16384, 65536][rng.below(6) as usize],
            op,
            latency_nanos,
            pid: Some(rng.below(24) as u32 + 1000),
        });
    }
    out
}
