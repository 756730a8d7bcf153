//! Miss-ratio curves and cache sizing: the hit ratio of every cache size in one pass.
//!
//! * [`exact::ExactLru`]: exact LRU curve from stack distances ([`stack::StackDistance`], a
//!   Fenwick tree over access times), O(N log M), memory proportional to the footprint.
//! * [`shards::Shards`]: SHARDS fixed-rate and fixed-size sampling with bias correction, for
//!   traces whose footprint is too large to track exactly; memory bounded by the sample.
//! * [`minisim::MiniSim`]: scaled-down simulation of any policy of the cache simulator, many
//!   sizes in one pass.
//! * [`recommend::recommend`]: the knee, the 90%/95%-of-achievable sizes, the rule of thumb.
//!
//! Every curve is per line access at the simulator's cache-line granularity; [`MrcReport`] is
//! the serde result that `blocksight mrc --json` prints (docs/analysis.md).

pub mod exact;
pub mod minisim;

pub mod profile;
pub mod recommend;
pub mod shards;
pub mod stack;
pub mod synth;

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, TraceHeader};

use self::exact::ExactLru;
use self::profile::DistanceProfile;
use self::recommend::{recommend, HitCurve, Recommendation};
use self::shards::{Shards, ShardsMode};

/// How a curve was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Exact LRU stack distances.
    Exact,
    /// SHARDS spatial sampling of LRU stack distances.
    Shards,
    /// Scaled-down simulation of the policy.
    Minisim,
}

impl Method {
    pub const ALL: [Method; 3] = [Method::Exact, Method::Shards, Method::Minisim];

    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Shards => "shards",
            Method::Minisim => "minisim",
        }
    }

    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name.trim()))
    }
}

/// One size on a curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MrcPoint {
    pub size_lines: u64,
    pub size_bytes: u64,
    pub miss_ratio: f64,
    pub hit_ratio: f64,
}

/// How a sampled curve sampled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingInfo {
    /// `fixed_rate`, `fixed_size` (SHARDS) or `minisim`.
    pub scheme: String,
    /// The rate at the end of the pass (fixed size: the final, lowest rate; MiniSim: the
    /// smallest rate of any simulator).
    pub rate: f64,
    /// SHARDS fixed size: the sample bound in lines.
    pub max_lines: Option<u64>,
    /// Line accesses in the sample (SHARDS) or in the sample of the highest-rate miniature.
    pub sampled_accesses: u64,
    /// Whether SHARDS' bias correction was applied.
    pub bias_corrected: bool,
}

/// A miss-ratio curve with its context; `blocksight mrc --json` prints this.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MrcReport {
    /// Cache policy name as `--policy` takes it.
    pub policy: String,
    pub method: Method,
    pub line_bytes: u64,
    /// Read and write requests of non-zero length.
    pub requests: u64,
    pub line_accesses: u64,
    /// Distinct lines (estimated from the sample when sampled).
    pub footprint_lines: u64,
    pub footprint_exact: bool,
    pub sampling: Option<SamplingInfo>,
    /// Miss ratio per line access at each size.
    pub points: Vec<MrcPoint>,
    /// Miss ratio per request (a request hits only if all its lines hit); exact method only.
    pub request_points: Vec<MrcPoint>,
    pub recommendation: Option<Recommendation>,
}

/// Which sizes a curve is reported at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeSpec {
    /// This many sizes evenly spaced up to the footprint (`footprint/n, 2·footprint/n, …`).
    Count(u32),
    /// These sizes, in lines.
    Lines(Vec<u64>),
}

impl SizeSpec {
    pub const DEFAULT_COUNT: u32 = 64;

    /// Resolves to sizes in lines, ascending and distinct.
    pub fn resolve(&self, footprint_lines: u64) -> Vec<u64> {
        let mut v = match self {
            SizeSpec::Count(n) => linear_sizes(footprint_lines, *n),
            SizeSpec::Lines(v) => v.clone(),
        };
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// `count` sizes evenly spaced from `footprint/count` to the footprint, at least one line each.
pub fn linear_sizes(footprint_lines: u64, count: u32) -> Vec<u64> {
    let n = u64::from(count.max(1));
    let mut v: Vec<u64> = (1..=n)
        .map(|i| ((u128::from(footprint_lines) * u128::from(i) / u128::from(n)) as u64).max(1))
        .collect();
    v.dedup();
    v
}

/// Mean absolute difference of the miss ratios of two curves over the sizes both have.
pub fn mean_absolute_error(a: &[MrcPoint], b: &[MrcPoint]) -> Option<f64> {
    let mut sum = 0.0;
    let mut n = 0usize;
    for p in a {
        if let Some(q) = b.iter().find(|q| q.size_lines == p.size_lines) {
            sum += (p.miss_ratio - q.miss_ratio).abs();
            n += 1;
        }
    }
    (n > 0).then(|| sum / n as f64)
}

/// The reference a sampled curve is measured against: every point of `points` simulated in
/// full over `events` by a cold [`crate::cache::Simulator`] of `policy` (write-through, admit
/// always, `line_bytes` lines). One simulation of the whole trace per point: for tests and
/// accuracy measurements (`examples/cache_stages.rs`).
pub fn simulated_points(
    policy: crate::cache::PolicyKind,
    line_bytes: u64,
    points: &[MrcPoint],
    events: &[IoEvent],
) -> Result<Vec<MrcPoint>, crate::cache::ConfigError> {
    points
        .iter()
        .map(|p| {
            let config = crate::cache::SimConfig::new(policy, p.size_lines, line_bytes);
            let mut sim = crate::cache::Simulator::new(&config)?;
            events.iter().for_each(|e| sim.observe(e));
            let h = sim.finish().whole.ratios.line_hit_ratio.unwrap_or(0.0);
            Ok(MrcPoint {
                hit_ratio: h,
                miss_ratio: 1.0 - h,
                ..p.clone()
            })
        })
        .collect()
}

/// Points of `curve` at `sizes`.
pub fn points(curve: &dyn HitCurve, sizes: &[u64], line_bytes: u64) -> Vec<MrcPoint> {
    sizes
        .iter()
        .map(|&s| {
            let h = curve.hit_ratio(s);
            MrcPoint {
                size_lines: s,
                size_bytes: s.saturating_mul(line_bytes),
                miss_ratio: 1.0 - h,
                hit_ratio: h,
            }
        })
        .collect()
}

/// The sum of the devices' sizes, when every device's size is known.
pub fn capacity_bytes(header: &TraceHeader) -> Option<u64> {
    if header.devices.is_empty() {
        return None;
    }
    header
        .devices
        .iter()
        .map(|d| d.size_bytes)
        .sum::<Option<u64>>()
        .filter(|&c| c > 0)
}

/// An LRU curve collector: exact or SHARDS.
#[derive(Debug)]
pub enum LruMrc {
    Exact(Box<ExactLru>),
    Shards {
        shards: Box<Shards>,
        bias_correction: bool,
    },
}

impl LruMrc {
    pub fn exact(line_bytes: u64) -> LruMrc {
        LruMrc::Exact(Box::new(ExactLru::new(line_bytes)))
    }

    pub fn shards(line_bytes: u64, mode: ShardsMode) -> LruMrc {
        LruMrc::Shards {
            shards: Box::new(Shards::new(line_bytes, mode)),
            bias_correction: true,
        }
    }

    #[inline]
    pub fn observe(&mut self, e: &IoEvent) {
        match self {
            LruMrc::Exact(x) => x.observe(e),
            LruMrc::Shards { shards, .. } => shards.observe(e),
        }
    }

    /// [`Self::observe`] in steps: observes `e` whole when the curve is exact; when it is
    /// sampled, counts the request and returns the collector, which then takes each line's
    /// hash ([`Shards::line`]), or `None` when the curve does not follow `e`.
    #[inline]
    pub fn begin_request(&mut self, e: &IoEvent) -> Option<&mut Shards> {
        match self {
            LruMrc::Exact(x) => {
                x.observe(e);
                None
            }
            LruMrc::Shards { shards, .. } => shards.begin_request(e).then_some(&mut **shards),
        }
    }

    /// Loads what the sampled curve's next access to the line of hash `hash` will probe
    /// ([`Shards::prefetch`]); nothing for an exact curve. Changes nothing.
    #[inline]
    pub fn prefetch_line(&self, hash: u64) {
        if let LruMrc::Shards { shards, .. } = self {
            shards.prefetch(hash);
        }
    }

    pub fn line_bytes(&self) -> u64 {
        match self {
            LruMrc::Exact(x) => x.line_bytes(),
            LruMrc::Shards { shards, .. } => shards.line_bytes(),
        }
    }

    pub fn footprint_lines(&self) -> u64 {
        match self {
            LruMrc::Exact(x) => x.footprint_lines(),
            LruMrc::Shards { shards, .. } => shards.footprint_lines(),
        }
    }

    /// The distance profile of line accesses.
    pub fn profile(&self) -> DistanceProfile {
        match self {
            LruMrc::Exact(x) => x.line_profile(),
            LruMrc::Shards {
                shards,
                bias_correction,
            } => shards.profile(*bias_correction),
        }
    }

    /// The report at `sizes`, with a recommendation against the header's device capacity.
    pub fn finish(&self, sizes: &SizeSpec, header: &TraceHeader) -> MrcReport {
        let profile = self.profile();
        let line_bytes = self.line_bytes();
        // The footprint for sizing: sampled estimates can fall short of the largest scaled
        // distance, and no size beyond that distance hits more.
        let footprint = self.footprint_lines().max(profile.max_distance());
        let sizes = sizes.resolve(footprint);
        let recommendation = (profile.total() > 0.0)
            .then(|| recommend(&profile, line_bytes, footprint, capacity_bytes(header)));
        let (method, requests, line_accesses, sampling, request_points) = match self {
            LruMrc::Exact(x) => (
                Method::Exact,
                x.requests(),
                x.line_accesses(),
                None,
                points(&x.request_profile(), &sizes, line_bytes),
            ),
            LruMrc::Shards {
                shards,
                bias_correction,
            } => {
                let (scheme, max_lines) = match shards.mode() {
                    ShardsMode::FixedRate { .. } => ("fixed_rate", None),
                    ShardsMode::FixedSize { max_lines } => ("fixed_size", Some(max_lines)),
                };
                let info = SamplingInfo {
                    scheme: scheme.into(),
                    rate: shards.rate(),
                    max_lines,
                    sampled_accesses: shards.sampled_accesses(),
                    bias_corrected: *bias_correction,
                };
                (
                    Method::Shards,
                    shards.requests(),
                    shards.line_accesses(),
                    Some(info),
                    Vec::new(),
                )
            }
        };
        MrcReport {
            policy: "lru".into(),
            method,
            line_bytes,
            requests,
            line_accesses,
            footprint_lines: footprint,
            footprint_exact: match self {
                LruMrc::Exact(_) => true,
                LruMrc::Shards { shards, .. } => shards.rate() >= 1.0,
            },
            sampling,
            points: points(&profile, &sizes, line_bytes),
            request_points,
            recommendation,
        }
    }
}
