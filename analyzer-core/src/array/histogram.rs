//! A bounded log-linear latency histogram: constant memory whatever the run length, about 3 %
//! relative precision for the percentiles the predictions report.

/// Sub-buckets per power of two. 32 gives a worst-case relative bucket width of 1/32.
const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = 64 * SUB;

#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    sum_nanos: u128,
    max_nanos: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

fn index_of(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB_BITS;
    let mantissa = (v >> shift) as usize & (SUB - 1);
    ((shift as usize + 1) << SUB_BITS) + mantissa
}

/// The middle of a bucket, used as the value reported for it.
fn value_of(index: usize) -> u64 {
    if index < SUB {
        return index as u64;
    }
    let shift = (index >> SUB_BITS) - 1;
    let mantissa = (index & (SUB - 1)) as u64;
    let low = (SUB as u64 + mantissa) << shift;
    low + ((1u64 << shift) >> 1)
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram {
            counts: vec![0; BUCKETS],
            total: 0,
            sum_nanos: 0,
            max_nanos: 0,
        }
    }

    pub fn record(&mut self, nanos: u64) {
        self.counts[index_of(nanos).min(BUCKETS - 1)] += 1;
        self.total += 1;
        self.sum_nanos += u128::from(nanos);
        self.max_nanos = self.max_nanos.max(nanos);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn mean_nanos(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum_nanos as f64 / self.total as f64
        }
    }

    /// The value below which `q` (0..=1) of the samples fall.
    pub fn quantile_nanos(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return value_of(i).min(self.max_nanos);
            }
        }
        self.max_nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_bucket_precision() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for (q, want) in [
            (0.5, 50_000_000.0),
            (0.95, 95_000_000.0),
            (0.99, 99_000_000.0),
        ] {
            let got = h.quantile_nanos(q) as f64;
            assert!((got - want).abs() / want < 0.04, "q{q}: {got} vs {want}");
        }
        assert!((h.mean_nanos() - 50_000_500.0).abs() < 1.0);
        assert_eq!(Histogram::new().quantile_nanos(0.5), 0);
    }

    #[test]
    fn index_and_value_agree() {
        for v in [0u64, 1, 31, 32, 33, 1000, 123_456_789, u64::MAX / 3] {
            let back = value_of(index_of(v));
            assert!(
                (back as f64 - v as f64).abs() <= v as f64 / 16.0 + 1.0,
                "{v} -> {back}"
            );
        }
    }
}
