//! Cache sizing from a hit-ratio curve: the knee, the sizes reaching 90% and 95% of the
//! achievable hit ratio, and the "5–10% of array capacity" rule of thumb beside them.
//!
//! Definitions (also in docs/analysis.md):
//! * Achievable hit ratio: the hit ratio of a cache as large as the footprint (every access but
//!   the first to each line hits).
//! * Knee (Kneedle, Satopää et al. 2011): normalise the curve to x = size / footprint and
//!   y = hit ratio / achievable hit ratio; the knee is the size maximising y − x, the point
//!   farthest above the chord from (0, 0) to (1, 1). Evaluated on a grid of 2,048 sizes. A
//!   curve whose best y − x is below 0.05 is nearly straight and has no knee worth naming.
//! * Back-end I/O reduction at a size: the share of line accesses served by the cache, which is
//!   the hit ratio, assuming a write-back, write-allocate cache and ignoring destaging of dirty
//!   lines (the simulator models modes exactly).
//! * Recommended size: the larger of the knee and the 90% size.

use serde::{Deserialize, Serialize};

use super::profile::DistanceProfile;

const KNEE_GRID: u64 = 2048;
const KNEE_MIN_GAIN: f64 = 0.05;

/// Something that gives a hit ratio per cache size in lines.
pub trait HitCurve {
    fn hit_ratio(&self, size_lines: u64) -> f64;
    /// Smallest size reaching `hit_ratio`, if any.
    fn size_for_hit_ratio(&self, hit_ratio: f64) -> Option<u64>;
}

impl HitCurve for DistanceProfile {
    fn hit_ratio(&self, size_lines: u64) -> f64 {
        self.hit_ratio_at(size_lines)
    }
    fn size_for_hit_ratio(&self, hit_ratio: f64) -> Option<u64> {
        // A tiny tolerance so that "reach 100% of the achievable" finds the largest distance
        // despite rounding in the prefix sums.
        self.size_for_hits(hit_ratio * self.total() * (1.0 - 1e-12))
    }
}

/// A curve known at a few sizes (MiniSim), linearly interpolated between them and taken as 0 at
/// size 0. Not necessarily monotone (FIFO-like policies can have anomalies).
#[derive(Clone, Debug)]
pub struct PointCurve {
    /// `(size_lines, hit_ratio)` sorted by size.
    pub points: Vec<(u64, f64)>,
}

impl HitCurve for PointCurve {
    fn hit_ratio(&self, size_lines: u64) -> f64 {
        let i = self.points.partition_point(|&(s, _)| s <= size_lines);
        let (s0, h0) = if i == 0 { (0, 0.0) } else { self.points[i - 1] };
        match self.points.get(i) {
            Some(&(s1, h1)) if s1 > s0 => {
                h0 + (h1 - h0) * (size_lines - s0) as f64 / (s1 - s0) as f64
            }
            _ => h0,
        }
    }
    fn size_for_hit_ratio(&self, hit_ratio: f64) -> Option<u64> {
        let mut prev = (0u64, 0.0f64);
        for &(s, h) in &self.points {
            if h >= hit_ratio {
                if h <= prev.1 || s <= prev.0 {
                    return Some(s);
                }
                let f = ((hit_ratio - prev.1) / (h - prev.1)).clamp(0.0, 1.0);
                return Some(prev.0 + ((s - prev.0) as f64 * f).ceil() as u64);
            }
            prev = (s, h);
        }
        None
    }
}

/// One cache size with what it achieves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizePoint {
    pub size_lines: u64,
    pub size_bytes: u64,
    pub hit_ratio: f64,
    pub miss_ratio: f64,
    /// Share of back-end line I/Os the cache removes (see the module docs for assumptions).
    pub backend_io_reduction: f64,
}

/// What the cache size is compared with for the rule of thumb.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapacityBasis {
    /// The sum of the devices' sizes from the trace header.
    DeviceCapacity,
    /// Device sizes are unknown; the trace's footprint stands in for the array capacity.
    Footprint,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    pub line_bytes: u64,
    pub footprint_lines: u64,
    pub footprint_bytes: u64,
    /// Hit ratio of a cache as large as the footprint.
    pub achievable_hit_ratio: f64,
    /// `None` when the curve has no pronounced knee (nearly straight).
    pub knee: Option<SizePoint>,
    pub for_90pct_of_achievable: Option<SizePoint>,
    pub for_95pct_of_achievable: Option<SizePoint>,
    /// The larger of the knee and the 90% size.
    pub recommended: Option<SizePoint>,
    pub capacity_basis: CapacityBasis,
    pub capacity_bytes: u64,
    pub rule_of_thumb_5pct: SizePoint,
    pub rule_of_thumb_10pct: SizePoint,
}

fn point(curve: &dyn HitCurve, size_lines: u64, line_bytes: u64) -> SizePoint {
    let hit_ratio = curve.hit_ratio(size_lines);
    SizePoint {
        size_lines,
        size_bytes: size_lines.saturating_mul(line_bytes),
        hit_ratio,
        miss_ratio: 1.0 - hit_ratio,
        backend_io_reduction: hit_ratio,
    }
}

/// The knee by Kneedle on a grid; `None` for a nearly straight curve.
pub fn knee(curve: &dyn HitCurve, footprint_lines: u64, achievable: f64) -> Option<u64> {
    if footprint_lines == 0 || achievable <= 0.0 {
        return None;
    }
    let steps = KNEE_GRID.min(footprint_lines);
    let mut best = (f64::MIN, 0u64);
    for i in 1..=steps {
        let size = (footprint_lines as u128 * i as u128 / steps as u128) as u64;
        let gain = curve.hit_ratio(size) / achievable - size as f64 / footprint_lines as f64;
        if gain > best.0 {
            best = (gain, size);
        }
    }
    (best.0 >= KNEE_MIN_GAIN).then_some(best.1)
}

/// Builds the sizing advice. `capacity_bytes` is the array capacity when known (sum of device
/// sizes); otherwise the footprint stands in.
pub fn recommend(
    curve: &dyn HitCurve,
    line_bytes: u64,
    footprint_lines: u64,
    capacity_bytes: Option<u64>,
) -> Recommendation {
    let achievable = curve.hit_ratio(footprint_lines);
    let at = |size: u64| point(curve, size, line_bytes);
    let for_share = |share: f64| {
        (achievable > 0.0)
            .then(|| curve.size_for_hit_ratio(share * achievable))
            .flatten()
            .map(|s| at(s.min(footprint_lines)))
    };
    let knee = knee(curve, footprint_lines, achievable).map(at);
    let p90 = for_share(0.90);
    let p95 = for_share(0.95);
    let recommended = match (&knee, &p90) {
        (Some(k), Some(p)) => Some(if k.size_lines >= p.size_lines {
            k.clone()
        } else {
            p.clone()
        }),
        (Some(k), None) => Some(k.clone()),
        (None, p) => p.clone(),
    };
    let (capacity_basis, capacity_bytes) = match capacity_bytes {
        Some(c) if c > 0 => (CapacityBasis::DeviceCapacity, c),
        _ => (
            CapacityBasis::Footprint,
            footprint_lines.saturating_mul(line_bytes),
        ),
    };
    let lb = line_bytes.max(1);
    Recommendation {
        line_bytes,
        footprint_lines,
        footprint_bytes: footprint_lines.saturating_mul(line_bytes),
        achievable_hit_ratio: achievable,
        knee,
        for_90pct_of_achievable: p90,
        for_95pct_of_achievable: p95,
        recommended,
        capacity_basis,
        capacity_bytes,
        rule_of_thumb_5pct: at(capacity_bytes / 20 / lb),
        rule_of_thumb_10pct: at(capacity_bytes / 10 / lb),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knee_of_a_concave_curve() {
        // Hit ratio rises linearly to 0.8 at 100 lines, then flat to the footprint of 1000.
        let curve = PointCurve {
            points: vec![(100, 0.8), (1000, 0.8)],
        };
        let r = recommend(&curve, 4096, 1000, None);
        assert_eq!(r.knee.as_ref().map(|k| k.size_lines), Some(100));
        assert_eq!(
            r.for_90pct_of_achievable.as_ref().map(|k| k.size_lines),
            Some(90)
        );
        assert_eq!(
            r.for_95pct_of_achievable.as_ref().map(|k| k.size_lines),
            Some(95)
        );
        assert_eq!(r.recommended.as_ref().map(|k| k.size_lines), Some(100));
        assert_eq!(r.capacity_basis, CapacityBasis::Footprint);
        assert_eq!(r.rule_of_thumb_10pct.size_lines, 100);
        assert!((r.rule_of_thumb_5pct.hit_ratio - 0.4).abs() < 1e-9);
    }

    #[test]
    fn straight_curve_has_no_knee() {
        let curve = PointCurve {
            points: vec![(1000, 0.5)],
        };
        let r = recommend(&curve, 4096, 1000, Some(1 << 30));
        assert!(r.knee.is_none());
        assert_eq!(r.for_90pct_of_achievable.map(|k| k.size_lines), Some(900));
        assert_eq!(r.capacity_basis, CapacityBasis::DeviceCapacity);
        assert_eq!(
            r.rule_of_thumb_10pct.size_bytes,
            (1 << 30) / 10 / 4096 * 4096
        );
    }
}
