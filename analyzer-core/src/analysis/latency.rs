//! Latency percentiles from a log-bucketed histogram with bounded memory and stated error.
//!
//! Bins are exact below 256 ns, then 128 per power of two, so a bin is at most 1/128 (0.8%) of
//! its values wide. A percentile is reported as the middle of its bin: its relative error is at
//! most 0.4%. The histogram holds at most about 7,000 counters whatever the trace length.
//! Mean, minimum and maximum are exact.

use serde::{Deserialize, Serialize};

const SUB_BITS: u32 = 7;
const EXACT_BELOW: u64 = 1 << (SUB_BITS + 1);

/// Percentiles of one latency population, in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_nanos: f64,
    pub min_nanos: u64,
    pub max_nanos: u64,
    pub p50_nanos: u64,
    pub p90_nanos: u64,
    pub p95_nanos: u64,
    pub p99_nanos: u64,
    pub p999_nanos: u64,
}

/// Streaming latency histogram.
#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    count: u64,
    sum_nanos: u128,
    min_nanos: u64,
    max_nanos: u64,
}

fn index(v: u64) -> usize {
    if v < EXACT_BELOW {
        v as usize
    } else {
        let e = 63 - v.leading_zeros();
        let shift = e - SUB_BITS;
        (EXACT_BELOW
            + u64::from(e - SUB_BITS - 1) * (1 << SUB_BITS)
            + ((v >> shift) - (1 << SUB_BITS))) as usize
    }
}

/// The middle of bin `i`.
fn representative(i: usize) -> u64 {
    let i = i as u64;
    if i < EXACT_BELOW {
        i
    } else {
        let j = i - EXACT_BELOW;
        let shift = j / (1 << SUB_BITS) + 1;
        let m = j % (1 << SUB_BITS) + (1 << SUB_BITS);
        (m << shift) + ((1u64 << shift) - 1) / 2
    }
}

impl LatencyHistogram {
    pub fn add(&mut self, nanos: u64) {
        let i = index(nanos);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        if self.count == 0 || nanos < self.min_nanos {
            self.min_nanos = nanos;
        }
        self.max_nanos = self.max_nanos.max(nanos);
        self.count += 1;
        self.sum_nanos += u128::from(nanos);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `q` quantile (0..=1), within 0.4%, clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return representative(i).clamp(self.min_nanos, self.max_nanos);
            }
        }
        self.max_nanos
    }

    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count,
            mean_nanos: if self.count == 0 {
                0.0
            } else {
                self.sum_nanos as f64 / self.count as f64
            },
            min_nanos: self.min_nanos,
            max_nanos: self.max_nanos,
            p50_nanos: self.quantile(0.50),
            p90_nanos: self.quantile(0.90),
            p95_nanos: self.quantile(0.95),
            p99_nanos: self.quantile(0.99),
            p999_nanos: self.quantile(0.999),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn quantiles_within_stated_error(mut values in proptest::collection::vec(0u64..10_000_000_000, 1..2000), q in 0.0f64..=1.0) {
            let mut h = LatencyHistogram::default();
            for &v in &values { h.add(v); }
            values.sort_unstable();
            let rank = ((q * values.len() as f64).ceil() as usize).max(1);
            let exact = values[rank - 1];
            let got = h.quantile(q);
            prop_assert!((got as f64 - exact as f64).abs() <= exact as f64 * 0.004 + 0.5, "q {} exact {} got {}", q, exact, got);
        }
    }
}
