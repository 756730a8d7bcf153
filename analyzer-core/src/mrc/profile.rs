//! Stack-distance distributions and the hit-ratio curves read from them.
//!
//! [`DenseHistogram`] counts exact distances (the exact MRC); [`LogHistogram`] keeps weighted,
//! scaled distances in log-linear bins with bounded memory (SHARDS). Both turn into a
//! [`DistanceProfile`]: sorted bins with prefix sums, which answers "how many accesses hit in an
//! LRU cache of `c` lines" for any `c` in O(log bins) and finds the smallest size reaching a hit
//! count. Within a bin that spans several distances the weight is spread uniformly (linear
//! interpolation); bins of width one are exact.

use serde::{Deserialize, Serialize};

/// Exact counts by distance (index = distance, index 0 unused). Counts are 32-bit, half the
/// memory (and the cache lines an increment touches) of 64-bit ones; a distance seen 2^32 times
/// or more keeps the excess in `overflow` (a trace of billions of accesses at one distance).
#[derive(Clone, Debug, Default)]
pub struct DenseHistogram {
    counts: Vec<u32>,
    overflow: std::collections::BTreeMap<usize, u64>,
}

impl DenseHistogram {
    #[inline]
    pub fn add(&mut self, distance: u64) {
        let d = distance as usize;
        if d >= self.counts.len() {
            self.counts
                .resize((d + 1).max(self.counts.len() * 2).max(64), 0);
        }
        let c = &mut self.counts[d];
        if *c == u32::MAX {
            // 2^32 - 1 counted and this one: 2^32 move to the overflow.
            *self.overflow.entry(d).or_insert(0) += 1 << 32;
            *c = 0;
        } else {
            *c += 1;
        }
    }

    fn count(&self, d: usize) -> u64 {
        u64::from(self.counts[d]) + self.overflow.get(&d).copied().unwrap_or(0)
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().map(|&c| u64::from(c)).sum::<u64>() + self.overflow.values().sum::<u64>()
    }

    /// The profile of these counts plus `cold` first accesses, over `total` accesses.
    pub fn profile(&self, cold: f64) -> DistanceProfile {
        let bins = (0..self.counts.len())
            .map(|d| (d, self.count(d)))
            .filter(|&(_, c)| c > 0)
            .map(|(d, c)| (d as u64, d as u64, c as f64))
            .collect();
        DistanceProfile::from_bins(bins, cold)
    }
}

/// Bits of sub-bucket resolution per power of two: bins are at most 2^-10 (0.1%) of their
/// distance wide; distances below 2^11 get a bin each.
const SUB_BITS: u32 = 10;
const EXACT_BELOW: u64 = 1 << (SUB_BITS + 1);

/// Weighted distances in log-linear bins (HDR-histogram layout): exact below 2048, then 1024
/// bins per power of two, so a bin is never wider than 0.1% of the distances it holds. At most
/// about 55,000 bins for any u64 distance; allocated as distances grow.
#[derive(Clone, Debug, Default)]
pub struct LogHistogram {
    weights: Vec<f64>,
}

impl LogHistogram {
    fn index(distance: u64) -> usize {
        if distance < EXACT_BELOW {
            distance as usize
        } else {
            let e = 63 - distance.leading_zeros();
            let shift = e - SUB_BITS;
            let m = (distance >> shift) - (1 << SUB_BITS);
            (EXACT_BELOW + u64::from(e - SUB_BITS - 1) * (1 << SUB_BITS) + m) as usize
        }
    }

    /// The inclusive distance range of bin `i`.
    fn bounds(i: usize) -> (u64, u64) {
        let i = i as u64;
        if i < EXACT_BELOW {
            (i, i)
        } else {
            let j = i - EXACT_BELOW;
            let shift = j / (1 << SUB_BITS) + 1;
            let m = j % (1 << SUB_BITS) + (1 << SUB_BITS);
            let lo = m << shift;
            (lo, lo + (1u64 << shift) - 1)
        }
    }

    #[inline]
    pub fn add(&mut self, distance: u64, weight: f64) {
        let i = Self::index(distance);
        if i >= self.weights.len() {
            self.weights
                .resize((i + 1).max(self.weights.len() * 2).max(64), 0.0);
        }
        self.weights[i] += weight;
    }

    pub fn profile(&self, cold: f64, first_bin_adjustment: f64) -> DistanceProfile {
        let mut bins: Vec<(u64, u64, f64)> = self
            .weights
            .iter()
            .enumerate()
            .filter(|&(_, &w)| w != 0.0)
            .map(|(i, &w)| {
                let (lo, hi) = Self::bounds(i);
                (lo, hi, w)
            })
            .collect();
        if first_bin_adjustment != 0.0 {
            match bins.first_mut() {
                Some(b) if b.0 <= 1 => b.2 += first_bin_adjustment,
                _ => bins.insert(0, (1, 1, first_bin_adjustment)),
            }
        }
        DistanceProfile::from_bins(bins, cold)
    }
}

/// A distance distribution ready for queries: bins `(lo, hi, weight)` sorted by distance with
/// prefix sums, plus the weight of cold accesses (misses at every size).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DistanceProfile {
    lo: Vec<u64>,
    hi: Vec<u64>,
    /// `cum[i]` = weight of bins `0..=i`.
    cum: Vec<f64>,
    cold: f64,
}

impl DistanceProfile {
    pub fn from_bins(bins: Vec<(u64, u64, f64)>, cold: f64) -> DistanceProfile {
        let mut p = DistanceProfile {
            cold,
            ..Default::default()
        };
        let mut sum = 0.0;
        for (lo, hi, w) in bins {
            sum += w;
            p.lo.push(lo.max(1));
            p.hi.push(hi.max(lo).max(1));
            p.cum.push(sum);
        }
        p
    }

    /// All accesses: hits at infinite size plus cold misses.
    pub fn total(&self) -> f64 {
        self.reuses() + self.cold
    }

    /// Accesses that are not first accesses (hits in a cache as large as the footprint).
    pub fn reuses(&self) -> f64 {
        self.cum.last().copied().unwrap_or(0.0)
    }

    pub fn cold(&self) -> f64 {
        self.cold
    }

    /// Largest distance with weight: no cache larger than this hits more.
    pub fn max_distance(&self) -> u64 {
        self.hi.last().copied().unwrap_or(0)
    }

    /// Accesses that hit in an LRU cache of `size_lines` lines.
    pub fn hits_at(&self, size_lines: u64) -> f64 {
        // First bin whose upper end exceeds the size.
        let i = self.hi.partition_point(|&h| h <= size_lines);
        let below = if i == 0 { 0.0 } else { self.cum[i - 1] };
        if i < self.lo.len() && self.lo[i] <= size_lines {
            let w = self.cum[i] - below;
            let span = (self.hi[i] - self.lo[i] + 1) as f64;
            below + w * (size_lines - self.lo[i] + 1) as f64 / span
        } else {
            below
        }
    }

    /// Hit ratio (0..=1) at `size_lines`; 0 for an empty profile.
    pub fn hit_ratio_at(&self, size_lines: u64) -> f64 {
        let total = self.total();
        if total <= 0.0 {
            return 0.0;
        }
        (self.hits_at(size_lines) / total).clamp(0.0, 1.0)
    }

    /// Smallest size in lines whose hits reach `target` accesses, if any size does.
    pub fn size_for_hits(&self, target: f64) -> Option<u64> {
        if target <= 0.0 {
            return Some(0);
        }
        let i = self.cum.partition_point(|&c| c < target);
        if i >= self.cum.len() {
            return None;
        }
        let below = if i == 0 { 0.0 } else { self.cum[i - 1] };
        let w = self.cum[i] - below;
        let (lo, hi) = (self.lo[i], self.hi[i]);
        if lo == hi || w <= 0.0 {
            return Some(hi);
        }
        let span = (hi - lo + 1) as f64;
        let k = ((target - below) / w * span).ceil().max(1.0) as u64;
        Some((lo + k - 1).min(hi))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn dense_counts_past_32_bits_spill_exactly() {
        let mut h = DenseHistogram::default();
        h.add(3);
        h.counts[3] = u32::MAX - 1;
        for _ in 0..3 {
            h.add(3);
        }
        h.add(5);
        assert_eq!((h.count(3), h.count(5)), ((1 << 32) + 1, 1));
        assert_eq!(h.total(), (1 << 32) + 2);
        let p = h.profile(0.0);
        assert_eq!(p.total(), h.total() as f64);
    }

    use super::*;

    #[test]
    fn log_bins_cover_every_distance_once() {
        let mut prev_hi = 0;
        for i in 1..40_000 {
            let (lo, hi) = LogHistogram::bounds(i);
            assert_eq!(lo, prev_hi + 1, "bin {i}");
            assert!(hi >= lo);
            assert_eq!(LogHistogram::index(lo), i);
            assert_eq!(LogHistogram::index(hi), i);
            assert!((hi - lo) as f64 <= lo as f64 / 1000.0, "bin {i} too wide");
            prev_hi = hi;
        }
        assert!(LogHistogram::index(u64::MAX) < 60_000);
    }

    #[test]
    fn profile_queries() {
        let mut h = DenseHistogram::default();
        for d in [1, 1, 2, 5, 5, 5] {
            h.add(d);
        }
        let p = h.profile(4.0);
        assert_eq!(p.total(), 10.0);
        assert_eq!(p.hits_at(0), 0.0);
        assert_eq!(p.hits_at(1), 2.0);
        assert_eq!(p.hits_at(4), 3.0);
        assert_eq!(p.hits_at(5), 6.0);
        assert_eq!(p.hits_at(500), 6.0);
        assert_eq!(p.size_for_hits(3.0), Some(2));
        assert_eq!(p.size_for_hits(3.5), Some(5));
        assert_eq!(p.size_for_hits(7.0), None);

        let wide = DistanceProfile::from_bins(vec![(1, 100, 100.0)], 0.0);
        assert!((wide.hits_at(50) - 50.0).abs() < 1e-9);
        assert_eq!(wide.size_for_hits(50.0), Some(50));
        assert_eq!(wide.size_for_hits(50.5), Some(51));
    }
}
