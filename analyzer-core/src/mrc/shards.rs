//! SHARDS: approximate LRU miss-ratio curves from a spatially hashed sample of the lines
//! (Waldspurger, Park, Garthwaite, Ahmad, "Efficient MRC Construction with SHARDS", FAST '15).
//!
//! A line is sampled when the hash of its key is below a threshold `T`; the sampling rate is
//! `R = T / 2^64`. Every access to a sampled line goes through the exact stack-distance engine,
//! and its distance among the sampled lines is scaled by `1/R` to estimate the distance among all
//! lines. Each sampled access stands for `1/R` accesses (a Horvitz–Thompson weight).
//!
//! * Fixed rate: `R` is constant; memory is about `R × footprint` lines.
//! * Fixed size: at most `s_max` lines are kept. When a new line would exceed that, the line with
//!   the largest hash leaves the sample and `T` drops to its hash, so memory is bounded for any
//!   footprint. Accesses seen at an earlier, higher rate keep their smaller weights; relative to
//!   each other this is exactly the paper's rescaling of old histogram counts by `R_new/R_old`.
//! * Bias correction (the paper's SHARDS_adj): a few very hot lines landing in or out of the
//!   sample skew the total. The difference between the expected weight of all accesses (the
//!   trace's real line-access count N) and the sampled weight is added to the first histogram
//!   bucket, so the weights sum to N.
//!
//! The hash is `mix64`, a bijection, so the hash itself identifies a line in the sample.

use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, Op};
use crate::hash::{block_key, mix64};

use super::profile::{DistanceProfile, LogHistogram};
use super::stack::StackDistance;

/// How SHARDS chooses its sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShardsMode {
    /// A constant sampling rate in (0, 1].
    FixedRate { rate: f64 },
    /// At most `max_lines` sampled lines; the rate adapts downwards from 1.
    FixedSize { max_lines: u64 },
}

impl ShardsMode {
    /// The paper's usual fixed rate.
    pub const DEFAULT_RATE: f64 = 0.001;
    /// The paper's usual fixed sample size.
    pub const DEFAULT_MAX_LINES: u64 = 8192;
}

/// 2^64 as a float, the size of the hash space.
const HASH_SPACE: f64 = 18_446_744_073_709_551_616.0;

/// Sampling state: a line is sampled when its hash is `<= threshold`.
pub(crate) fn threshold_for_rate(rate: f64) -> u64 {
    if rate.is_nan() || rate <= 0.0 {
        0
    } else if rate >= 1.0 {
        u64::MAX
    } else {
        ((rate * HASH_SPACE) as u64).saturating_sub(1)
    }
}

/// The sampling rate of a threshold (lines with hash `<= threshold` are sampled).
pub(crate) fn rate_of_threshold(threshold: u64) -> f64 {
    ((threshold as f64 + 1.0) / HASH_SPACE).min(1.0)
}

/// Streaming SHARDS collector.
#[derive(Debug)]
pub struct Shards {
    line_bytes: u64,
    mode: ShardsMode,
    threshold: u64,
    rate: f64,
    stack: StackDistance,
    /// Hashes of the sampled lines, largest first (fixed-size mode only).
    heap: BinaryHeap<u64>,
    hist: LogHistogram,
    cold_weight: f64,
    sampled_weight: f64,
    sampled_accesses: u64,
    line_accesses: u64,
    requests: u64,
}

impl Shards {
    pub fn new(line_bytes: u64, mode: ShardsMode) -> Shards {
        let threshold = match mode {
            ShardsMode::FixedRate { rate } => threshold_for_rate(rate),
            ShardsMode::FixedSize { .. } => u64::MAX,
        };
        let mut s = Shards {
            line_bytes: line_bytes.max(1),
            mode,
            threshold,
            rate: 1.0,
            stack: StackDistance::new(),
            heap: BinaryHeap::new(),
            hist: LogHistogram::default(),
            cold_weight: 0.0,
            sampled_weight: 0.0,
            sampled_accesses: 0,
            line_accesses: 0,
            requests: 0,
        };
        s.rate = s.rate_of_threshold();
        s
    }

    /// A fixed-size collector for one of many small populations (a device of a fleet trace):
    /// its stack starts small, and [`Shards::set_max_lines`] can lower the limit later.
    pub fn small(line_bytes: u64, max_lines: u64) -> Shards {
        let mut s = Shards::new(line_bytes, ShardsMode::FixedSize { max_lines });
        s.stack = StackDistance::with_min_capacity(256);
        s
    }

    /// Lowers (or raises) a fixed-size collector's limit; past samples above it leave at once,
    /// exactly as if the limit had been reached by new lines. No effect in fixed-rate mode.
    pub fn set_max_lines(&mut self, max_lines: u64) {
        if let ShardsMode::FixedSize { .. } = self.mode {
            self.mode = ShardsMode::FixedSize { max_lines };
            self.enforce_limit(max_lines);
        }
    }

    fn enforce_limit(&mut self, max_lines: u64) {
        while self.stack.len() as u64 > max_lines.max(1) {
            let Some(top) = self.heap.pop() else { break };
            self.stack.remove(top);
            self.threshold = top.saturating_sub(1);
            self.rate = self.rate_of_threshold();
        }
    }

    fn rate_of_threshold(&self) -> f64 {
        rate_of_threshold(self.threshold)
    }

    #[inline]
    pub fn observe(&mut self, e: &IoEvent) {
        if !self.begin_request(e) {
            return;
        }
        for line in e.block_range(self.line_bytes) {
            self.line(mix64(block_key(e.device, line)));
        }
    }

    /// Counts `e` if it is a request the curve follows (a read or write of some bytes), and
    /// says whether it is: then [`Self::line`] takes each of its lines ([`Self::observe`] in
    /// steps, for a caller that hashes each line once for several analyses).
    #[inline]
    pub fn begin_request(&mut self, e: &IoEvent) -> bool {
        if !matches!(e.op, Op::Read | Op::Write) || e.len_bytes == 0 {
            return false;
        }
        self.requests += 1;
        true
    }

    /// One line access of the current request, by its hash `mix64(block_key(device, line))`.
    #[inline]
    pub fn line(&mut self, hash: u64) {
        self.line_accesses += 1;
        if hash <= self.threshold {
            self.access(hash);
        }
    }

    /// Loads the stack entry that the line of hash `hash` will probe, when the sample holds
    /// that line, so that the access soon after finds it in the CPU cache (the caller does this
    /// for a batch of upcoming lines, whose misses then overlap; see
    /// [`StackDistance::prefetch`]). Changes nothing.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        if hash <= self.threshold {
            self.stack.prefetch(hash);
        }
    }

    fn access(&mut self, h: u64) {
        let weight = 1.0 / self.rate;
        self.sampled_accesses += 1;
        self.sampled_weight += weight;
        match self.stack.access(h) {
            Some(d) => {
                // Unsampled (every line kept), the distance is its own scaled value; skipping
                // the float round trip gives the same integer (d < 2^53).
                let scaled = if weight == 1.0 {
                    d
                } else {
                    (d as f64 * weight).round().max(1.0) as u64
                };
                self.hist.add(scaled, weight);
            }
            None => {
                self.cold_weight += weight;
                if let ShardsMode::FixedSize { max_lines } = self.mode {
                    self.heap.push(h);
                    self.enforce_limit(max_lines);
                }
            }
        }
    }

    pub fn mode(&self) -> ShardsMode {
        self.mode
    }

    /// The current (for fixed size: final) sampling rate.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    pub fn requests(&self) -> u64 {
        self.requests
    }

    pub fn line_accesses(&self) -> u64 {
        self.line_accesses
    }

    pub fn sampled_accesses(&self) -> u64 {
        self.sampled_accesses
    }

    /// Lines in the sample now.
    pub fn sampled_lines(&self) -> u64 {
        self.stack.len() as u64
    }

    /// Estimated distinct lines in the trace.
    pub fn footprint_lines(&self) -> u64 {
        (self.stack.len() as f64 / self.rate).round() as u64
    }

    pub fn memory_bytes(&self) -> usize {
        self.stack.memory_bytes() + self.heap.capacity() * 8
    }

    /// The estimated distance profile. `bias_correction` applies SHARDS_adj.
    pub fn profile(&self, bias_correction: bool) -> DistanceProfile {
        let adjustment = if bias_correction {
            self.line_accesses as f64 - self.sampled_weight
        } else {
            0.0
        };
        self.hist.profile(self.cold_weight, adjustment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrc::exact::ExactLru;

    fn ev(offset_bytes: u64) -> IoEvent {
        IoEvent {
            time_nanos: 0,
            device: 0,
            offset_bytes,
            len_bytes: 4096,
            op: Op::Read,
            latency_nanos: None,
            pid: None,
        }
    }

    #[test]
    fn rate_one_is_exact() {
        let mut exact = ExactLru::new(4096);
        let mut shards = Shards::new(4096, ShardsMode::FixedRate { rate: 1.0 });
        for i in 0..50_000u64 {
            let e = ev((mix64(i) % 1500) * 4096);
            exact.observe(&e);
            shards.observe(&e);
        }
        let (a, b) = (exact.line_profile(), shards.profile(true));
        for c in 0..1600 {
            assert_eq!(a.hits_at(c), b.hits_at(c), "size {c}");
        }
        assert_eq!(shards.footprint_lines(), exact.footprint_lines());
    }

    #[test]
    fn fixed_size_bounds_the_sample() {
        let mut shards = Shards::new(4096, ShardsMode::FixedSize { max_lines: 1000 });
        for i in 0..200_000u64 {
            shards.observe(&ev((mix64(i) % 100_000) * 4096));
        }
        assert!(shards.sampled_lines() <= 1000);
        let est = shards.footprint_lines() as f64;
        assert!((est - 86_466.0).abs() / 86_466.0 < 0.15, "{est}");
    }
}
