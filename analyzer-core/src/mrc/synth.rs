//! A deterministic synthetic block workload with the structure of real ones, for tests and
//! benchmarks of the curves and analyses (never presented to users as a trace).
//!
//! Three components, mixed per request:
//! * a Zipf-distributed hot set over `zipf_lines` 4 KiB items placed pseudo-randomly on the
//!   device (OLTP-like random I/O, 4–64 KiB, a share of them writes);
//! * sequential scans: a few concurrent streams reading 32 KiB requests through one of a fixed
//!   set of regions (table scans and backups that come back to the same data);
//! * a drifting working set: every `drift_period` requests the Zipf ranks shift by one item, so
//!   the hottest data changes slowly over the trace.
//!
//! Arrivals are Poisson with a rate that swings ±50% over the trace; latencies are exponential
//! around 200 µs when requested. The same seed always gives the same events on every platform
//! (integer PRNG, IEEE arithmetic only).

use crate::event::{IoEvent, Op};
use crate::hash::mix64;

/// Parameters of [`Synthetic`].
#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticConfig {
    pub seed: u64,
    pub requests: u64,
    /// Items (4 KiB each) in the Zipf universe.
    pub zipf_lines: u64,
    pub zipf_exponent: f64,
    /// Share of requests that belong to sequential scans.
    pub scan_fraction: f64,
    /// Share of Zipf requests that are writes.
    pub write_fraction: f64,
    /// Requests between shifts of the Zipf ranks by one item (0: no drift).
    pub drift_period: u64,
    /// Device size; offsets stay below it.
    pub device_bytes: u64,
    pub mean_interarrival_nanos: f64,
    pub with_latency: bool,
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        SyntheticConfig {
            seed: 1,
            requests: 1_000_000,
            zipf_lines: 1 << 20,
            zipf_exponent: 0.9,
            scan_fraction: 0.1,
            write_fraction: 0.3,
            drift_period: 200,
            device_bytes: 64 << 30,
            mean_interarrival_nanos: 100_000.0,
            with_latency: true,
        }
    }
}

/// SplitMix64: small, fast, and reproducible everywhere.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }
    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n.max(1))) >> 64) as u64
    }
}

/// Zipf sampler over 1..=n by rejection-inversion (Hörmann and Derflinger, 1996), O(1) per
/// sample and no tables, following Apache Commons RNG's formulation.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    shift: f64,
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

impl Zipf {
    pub fn new(n: u64, exponent: f64) -> Zipf {
        let mut z = Zipf {
            n: n.max(1) as f64,
            s: exponent.max(1e-9),
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            shift: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(z.n + 0.5);
        z.shift = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.s) * log_x) * log_x
    }
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (helper1(t) * x).exp()
    }
    /// A rank in 1..=n; rank 1 is the most popular.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.shift || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

const SCAN_STREAMS: usize = 4;
const SCAN_REGIONS: u64 = 16;
const SCAN_REQUEST_BYTES: u32 = 32 << 10;
const LINE: u64 = 4096;

#[derive(Clone, Debug)]
struct Scan {
    next_bytes: u64,
    remaining: u64,
}

/// The workload as an iterator of events.
#[derive(Clone, Debug)]
pub struct Synthetic {
    cfg: SyntheticConfig,
    rng: Rng,
    zipf: Zipf,
    scans: [Scan; SCAN_STREAMS],
    issued: u64,
    time_nanos: f64,
    device_lines: u64,
    region_bytes: u64,
}

impl Synthetic {
    pub fn new(cfg: SyntheticConfig) -> Synthetic {
        let device_lines = (cfg.device_bytes / LINE).max(1024);
        // Scan regions: 16 regions of 1/64 of the device each, spread over its upper half.
        let region_bytes = (device_lines * LINE / 64) / LINE * LINE;
        Synthetic {
            rng: Rng::new(cfg.seed),
            zipf: Zipf::new(cfg.zipf_lines, cfg.zipf_exponent),
            scans: std::array::from_fn(|_| Scan {
                next_bytes: 0,
                remaining: 0,
            }),
            issued: 0,
            time_nanos: 0.0,
            device_lines,
            region_bytes,
            cfg,
        }
    }

    fn zipf_event(&mut self) -> (u64, u32, Op) {
        let rank = self.zipf.sample(&mut self.rng) - 1;
        let phase = self.issued.checked_div(self.cfg.drift_period).unwrap_or(0);
        let item = (rank + phase) % self.cfg.zipf_lines.max(1);
        let line = mix64(item ^ self.cfg.seed.rotate_left(17)) % (self.device_lines / 2);
        let r = self.rng.unit();
        let len = if r < 0.70 {
            4096
        } else if r < 0.85 {
            8192
        } else if r < 0.95 {
            16384
        } else {
            65536
        };
        let op = if self.rng.unit() < self.cfg.write_fraction {
            Op::Write
        } else {
            Op::Read
        };
        (line * LINE, len, op)
    }

    fn scan_event(&mut self) -> (u64, u32, Op) {
        let i = self.rng.below(SCAN_STREAMS as u64) as usize;
        if self.scans[i].remaining == 0 {
            let region = self.rng.below(SCAN_REGIONS);
            let base = self.device_lines / 2 * LINE + region * self.region_bytes;
            let requests_in_region = (self.region_bytes / u64::from(SCAN_REQUEST_BYTES)).max(1);
            let start = self.rng.below(requests_in_region / 2);
            self.scans[i] = Scan {
                next_bytes: base + start * u64::from(SCAN_REQUEST_BYTES),
                remaining: (requests_in_region - start).min(1000 + self.rng.below(20_000)),
            };
        }
        let s = &mut self.scans[i];
        let offset = s.next_bytes;
        s.next_bytes += u64::from(SCAN_REQUEST_BYTES);
        s.remaining -= 1;
        (offset, SCAN_REQUEST_BYTES, Op::Read)
    }
}

impl Iterator for Synthetic {
    type Item = IoEvent;

    fn next(&mut self) -> Option<IoEvent> {
        if self.issued >= self.cfg.requests {
            return None;
        }
        let (offset_bytes, len_bytes, op) = if self.rng.unit() < self.cfg.scan_fraction {
            self.scan_event()
        } else {
            self.zipf_event()
        };
        // The arrival rate swings ±50% over the trace (a daily cycle compressed).
        let progress = self.issued as f64 / self.cfg.requests.max(1) as f64;
        let rate_factor = 1.0 + 0.5 * (progress * std::f64::consts::TAU * 2.0).sin();
        let gap = -(1.0 - self.rng.unit()).ln() * self.cfg.mean_interarrival_nanos / rate_factor;
        self.time_nanos += gap;
        let latency_nanos = self
            .cfg
            .with_latency
            .then(|| (50_000.0 - (1.0 - self.rng.unit()).ln() * 150_000.0) as u64);
        self.issued += 1;
        Some(IoEvent {
            time_nanos: self.time_nanos as u64,
            device: 0,
            offset_bytes,
            len_bytes,
            op,
            latency_nanos,
            pid: None,
        })
    }
}

/// The OLTP-shaped workload of `examples/make_trace.rs` (the web app's scale traces): 60,000
/// requests per second with exponential gaps; 85% of requests are 8 KiB at Zipf(0.9) addresses
/// over `blocks` blocks of 8 KiB whose popular set drifts every 4 Mi requests, 70% of them
/// reads; 15% continue one sequential stream at a time of 32-543 requests of 64-256 KiB
/// starting anywhere in `stream_blocks` blocks (a quarter of the streams writes); latencies
/// from 80 µs to tens of ms, eight process ids. Over a large universe its hits are mostly the
/// hottest few lines'. Endless: take as many as needed.
#[derive(Clone, Debug)]
pub struct Oltp {
    rng: Rng,
    zipf: Zipf,
    blocks: u64,
    stream_blocks: u64,
    time_nanos: u64,
    /// Next offset, length and requests left of the current stream.
    stream: Option<(u64, u32, u32)>,
    events: u64,
}

impl Oltp {
    /// `make_trace`'s workload: 64 Mi blocks of Zipf universe, streams over 2 TiB, seed 42.
    pub fn make_trace() -> Oltp {
        Oltp::new(42, 64 << 20, 1 << 28)
    }

    pub fn new(seed: u64, blocks: u64, stream_blocks: u64) -> Oltp {
        Oltp {
            rng: Rng::new(seed),
            zipf: Zipf::new(blocks, 0.9),
            blocks: blocks.max(1),
            stream_blocks: stream_blocks.max(1),
            time_nanos: 1_700_000_000_000_000_000,
            stream: None,
            events: 0,
        }
    }
}

impl Iterator for Oltp {
    type Item = IoEvent;

    fn next(&mut self) -> Option<IoEvent> {
        let rng = &mut self.rng;
        let gap = -(1.0 - rng.unit()).ln() * 1e9 / 60_000.0;
        self.time_nanos += gap as u64;
        let (offset_bytes, len_bytes, op) = if rng.below(100) < 15 {
            // One stream at a time, interleaved with the random I/O.
            match self.stream {
                Some((next, len, left)) if left > 0 => {
                    self.stream = Some((next + u64::from(len), len, left - 1));
                    (next, len, Op::Read)
                }
                _ => {
                    let len = 65_536u32 << rng.below(3);
                    let start = rng.below(self.stream_blocks) * 8192;
                    self.stream = Some((start + u64::from(len), len, 32 + rng.below(512) as u32));
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
            let rank = self.zipf.sample(rng);
            let block = mix64(rank ^ (self.events >> 22)) % self.blocks;
            let op = if rng.below(10) < 7 {
                Op::Read
            } else {
                Op::Write
            };
            (block * 8192, 8192, op)
        };
        let latency_nanos = (80_000.0 * (rng.unit() * 6.0).exp()) as u64;
        self.events += 1;
        Some(IoEvent {
            time_nanos: self.time_nanos,
            device: 0,
            offset_bytes,
            len_bytes,
            op,
            latency_nanos: Some(latency_nanos),
            pid: Some(1000 + rng.below(8) as u32),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_ranks_follow_the_law() {
        let z = Zipf::new(1000, 1.0);
        let mut rng = Rng::new(7);
        let mut counts = vec![0u64; 1001];
        for _ in 0..200_000 {
            counts[z.sample(&mut rng) as usize] += 1;
        }
        // P(1)/P(2) = 2 for exponent 1.
        let ratio = counts[1] as f64 / counts[2] as f64;
        assert!((ratio - 2.0).abs() < 0.1, "{ratio}");
        assert_eq!(counts[0], 0);
    }

    #[test]
    fn deterministic_and_bounded() {
        let cfg = SyntheticConfig {
            requests: 10_000,
            ..Default::default()
        };
        let a: Vec<_> = Synthetic::new(cfg.clone()).collect();
        let b: Vec<_> = Synthetic::new(cfg.clone()).collect();
        assert_eq!(a, b);
        assert_eq!(a.len(), 10_000);
        assert!(a.iter().all(|e| e.end_bytes() <= cfg.device_bytes));
        assert!(a.windows(2).all(|w| w[0].time_nanos <= w[1].time_nanos));
    }
}
