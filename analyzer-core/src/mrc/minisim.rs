//! MiniSim: miss-ratio curves for any policy by scaled-down simulation (Waldspurger, Saemundsson,
//! Ahmad, Park, "Cache Modeling and Optimization using Miniature Simulations", USENIX ATC '17).
//!
//! To estimate a cache of `C` lines, simulate a cache of `C × R` lines fed only the lines whose
//! hash falls in a spatial sample of rate `R` (the same hash as SHARDS). The sampled trace keeps
//! the original's reuse structure at `R` scale, so the miniature's hit ratio estimates the full
//! cache's. Every size gets its own miniature; all of them run in one pass over the trace, using
//! the cache simulator's [`Simulator::observe_filtered`].
//!
//! Rate per size: `R_i = min(1, max(base_rate, min_sampled_lines / C_i))`. A small miniature is
//! noisy: which lines fall in the sample shifts its cold-miss share, and that error is shared by
//! all sizes. With 8,192-line miniatures the mean absolute error on our 1.2M-request test
//! workload was 0.013 for LRU; with 65,536 lines (the default) it is within 0.005 (see
//! docs/analysis.md). Small sizes get higher rates; the total work is about `Σ R_i` simulations
//! of the full trace, and memory about `Σ min(C_i, min_sampled_lines)` cached lines. Samples are
//! nested (a lower threshold selects a subset), and an event is handed only to the miniatures
//! whose threshold admits at least one of its lines.
//!
//! Belady needs the future of each miniature's sampled sequence: [`MiniSimFuture`] builds it in
//! a first pass over the same events.

use serde::{Deserialize, Serialize};

use crate::cache::policy::{new_policy, Policy};
use crate::cache::{
    Admission, ConfigError, NextUse, NextUseBuilder, PolicyKind, SimConfig, Simulator, WriteMode,
};
use crate::event::{IoEvent, Op, TraceHeader};
use crate::hash::{block_key, mix64, IntSet};

use super::recommend::{recommend, PointCurve};
use super::{capacity_bytes, points, Method, MrcReport, SamplingInfo};

/// Settings of a MiniSim run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MiniSimConfig {
    /// The simulated cache (policy, line size, mode, admission); its capacity is ignored.
    pub sim: SimConfig,
    /// Full-size cache sizes, in lines.
    pub sizes_lines: Vec<u64>,
    /// Lowest sampling rate of any miniature.
    pub base_rate: f64,
    /// Miniatures get at least this many lines (the rate rises for small sizes, up to 1).
    pub min_sampled_lines: u64,
    /// A bound on the work: the miniatures together see at most this many times the trace's
    /// line accesses (`Σ R_i`). When `min_sampled_lines` would cost more, it is lowered until
    /// the sum fits (never below `base_rate`). `None`: no bound.
    #[serde(default)]
    pub max_passes: Option<f64>,
    /// SHARDS_adj's bias correction for every miniature (lean ones: admission always): the
    /// difference between the line accesses a miniature should have seen (its rate times the
    /// trace's) and the ones it saw is counted as hits, since a sample's surplus or deficit is
    /// mostly the few hottest lines, which hit in any cache. What a small sample's estimate
    /// needs ([`crate::job::simulate::Stage::Estimate`]).
    #[serde(default)]
    pub bias_correction: bool,
}

impl MiniSimConfig {
    pub const DEFAULT_BASE_RATE: f64 = 0.001;
    pub const DEFAULT_MIN_SAMPLED_LINES: u64 = 65536;

    pub fn new(policy: PolicyKind, line_bytes: u64, sizes_lines: Vec<u64>) -> MiniSimConfig {
        MiniSimConfig {
            sim: SimConfig::new(policy, 1, line_bytes),
            sizes_lines,
            base_rate: Self::DEFAULT_BASE_RATE,
            min_sampled_lines: Self::DEFAULT_MIN_SAMPLED_LINES,
            max_passes: None,
            bias_correction: false,
        }
    }

    /// Work bound of [`MiniSimConfig::interactive`], in passes over the trace per policy.
    pub const INTERACTIVE_PASSES: f64 = 0.25;

    /// The quick curve for an interactive first answer: as [`MiniSimConfig::new`], with the
    /// miniatures' total work bounded to [`Self::INTERACTIVE_PASSES`] simulated passes over the
    /// trace. Sizes whose default rates fit keep them; otherwise every miniature is smaller
    /// than the default 65,536 lines and the sampling error larger (`examples/cache_curves.rs`
    /// measures both).
    pub fn interactive(
        policy: PolicyKind,
        line_bytes: u64,
        sizes_lines: Vec<u64>,
    ) -> MiniSimConfig {
        MiniSimConfig {
            max_passes: Some(Self::INTERACTIVE_PASSES),
            ..MiniSimConfig::new(policy, line_bytes, sizes_lines)
        }
    }

    /// The wanted rate of a size when miniatures get at least `min_lines` lines.
    fn want(&self, size: u64, min_lines: f64) -> f64 {
        (min_lines / size as f64).max(self.base_rate).min(1.0)
    }

    /// `min_sampled_lines`, lowered (by bisection) until the rates sum to `max_passes`.
    fn min_lines(&self, sizes: &[u64]) -> f64 {
        let full = self.min_sampled_lines as f64;
        let Some(budget) = self.max_passes.filter(|b| b.is_finite() && *b > 0.0) else {
            return full;
        };
        let work = |k: f64| sizes.iter().map(|&s| self.want(s, k)).sum::<f64>();
        if work(full) <= budget {
            return full;
        }
        let (mut lo, mut hi) = (0.0, full);
        for _ in 0..64 {
            let mid = (lo + hi) / 2.0;
            if work(mid) <= budget {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// `(size_lines, rate, threshold, scaled capacity)` per size, largest threshold first.
    fn plan(&self) -> Vec<(u64, f64, u64, u64)> {
        let mut sizes = self.sizes_lines.clone();
        sizes.retain(|&s| s > 0);
        sizes.sort_unstable();
        sizes.dedup();
        let min_lines = self.min_lines(&sizes);
        let mut plan: Vec<_> = sizes
            .into_iter()
            .map(|size| {
                let want = self.want(size, min_lines);
                let threshold = super::shards::threshold_for_rate(want);
                let rate = super::shards::rate_of_threshold(threshold);
                let capacity = ((size as f64 * rate).round() as u64).max(1);
                (size, rate, threshold, capacity)
            })
            .collect();
        plan.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        plan
    }
}

#[inline]
fn line_hash(device: u32, line: u64) -> u64 {
    mix64(block_key(device, line))
}

/// Smallest line hash of a request's lines, or `None` when it touches no line.
#[inline]
fn min_hash(e: &IoEvent, line_bytes: u64) -> Option<u64> {
    if e.len_bytes == 0 || e.op == Op::Flush {
        return None;
    }
    e.block_range(line_bytes)
        .map(|l| line_hash(e.device, l))
        .min()
}

/// First pass for Belady: the future of every miniature's sampled line sequence.
#[derive(Debug)]
pub struct MiniSimFuture {
    line_bytes: u64,
    thresholds: Vec<u64>,
    builders: Vec<NextUseBuilder>,
}

impl MiniSimFuture {
    pub fn new(config: &MiniSimConfig) -> MiniSimFuture {
        let plan = config.plan();
        MiniSimFuture {
            line_bytes: config.sim.line_bytes,
            thresholds: plan.iter().map(|p| p.2).collect(),
            builders: plan
                .iter()
                .map(|_| NextUseBuilder::new(config.sim.line_bytes))
                .collect(),
        }
    }

    pub fn observe(&mut self, e: &IoEvent) {
        let Some(h) = min_hash(e, self.line_bytes) else {
            return;
        };
        for (t, b) in self.thresholds.iter().zip(&mut self.builders) {
            if h > *t {
                break;
            }
            let t = *t;
            b.observe_filtered(e, |line| line_hash(e.device, line) <= t);
        }
    }
}

/// One miniature. The curve needs only line hits, and with admission "always" and no
/// sequential cutoff a line hits exactly when the bare policy hits (the write mode only decides
/// what a write does), so those miniatures skip the simulator's request, back-end and time-bin
/// bookkeeping ([`Lean`]); any other admission rule runs the full [`Simulator`].
enum Miniature {
    Lean(Lean),
    Full(Box<Simulator>),
}

impl Miniature {
    /// The hit ratio; with `expected_lines` (the accesses a miniature's rate should have
    /// sampled), bias-corrected ([`MiniSimConfig::bias_correction`], lean miniatures).
    fn hit_ratio(self, expected_lines: Option<f64>) -> f64 {
        match self {
            Miniature::Lean(m) => match expected_lines.filter(|&n| n >= 1.0) {
                // The surplus (or deficit) hits as the sample's hittable accesses do.
                Some(n) => {
                    let hittable = 1.0 - m.unhittable as f64 / m.lines.max(1) as f64;
                    ((m.hits as f64 + (n - m.lines as f64) * hittable) / n).clamp(0.0, 1.0)
                }
                None => m.hits as f64 / m.lines.max(1) as f64,
            },
            Miniature::Full(sim) => sim.finish().whole.ratios.line_hit_ratio.unwrap_or(0.0),
        }
    }
}

/// A sampled line access waiting for the lean miniatures ([`MiniSim::run_pending`]).
#[derive(Clone, Copy, Debug)]
struct Pending {
    key: u64,
    hash: u64,
    access: LineAccess,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LineAccess {
    Read,
    Write,
    Discard,
}

/// Sampled line accesses gathered before the lean miniatures run over them one miniature after
/// the other: each miniature's table then stays in the CPU cache for the whole batch (fed line
/// by line, every miniature evicted the others'). 16 Ki accesses of 24 bytes.
const PENDING_LINES: usize = 1 << 14;

/// A policy fed line by line under the simulator's rules for line hits: reads and allocating
/// writes look the line up and insert it on a miss, write-around writes only look it up,
/// read-only writes and discards invalidate it. `vtime` numbers line accesses as the
/// simulator does (Belady's future is indexed by it).
struct Lean {
    policy: Box<dyn Policy>,
    mode: WriteMode,
    evicted: Vec<u64>,
    vtime: u64,
    lines: u64,
    /// Line accesses that are writes to a read-only cache (they never hit).
    unhittable: u64,
    hits: u64,
}

impl Lean {
    #[inline]
    fn line(&mut self, key: u64, write: bool) {
        let now = self.vtime;
        self.vtime += 1;
        self.lines += 1;
        if write && self.mode == WriteMode::ReadOnly {
            self.unhittable += 1;
            self.policy.remove(key);
            return;
        }
        self.evicted.clear();
        if self.policy.access(key, now, &mut self.evicted) {
            self.hits += 1;
            return;
        }
        if write && self.mode == WriteMode::WriteAround {
            return;
        }
        self.evicted.clear();
        self.policy.insert(key, now, &mut self.evicted);
    }
}

/// The miniatures, fed in one pass.
pub struct MiniSim {
    config: MiniSimConfig,
    /// `(size_lines, rate, threshold, miniature)`, largest threshold first.
    sims: Vec<(u64, f64, u64, Miniature)>,
    /// Whether every miniature is [`Miniature::Lean`].
    lean: bool,
    line_bytes: u64,
    requests: u64,
    line_accesses: u64,
    sampled_accesses: u64,
    /// Sampled line accesses not yet run through the lean miniatures.
    pending: Vec<Pending>,
    /// Distinct sampled lines at the lowest rate, for the footprint estimate.
    distinct: IntSet<u64>,
    distinct_threshold: u64,
    distinct_rate: f64,
}

impl std::fmt::Debug for MiniSim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniSim")
            .field("config", &self.config)
            .field("miniatures", &self.sims.len())
            .finish()
    }
}

impl MiniSim {
    /// Miniatures for every policy but Belady (which needs [`MiniSim::with_future`]).
    pub fn new(config: MiniSimConfig) -> Result<MiniSim, ConfigError> {
        if config.sim.policy.needs_future() {
            return Err(ConfigError::NeedsFuture);
        }
        Self::build(config, None)
    }

    /// Miniatures with the future from a [`MiniSimFuture`] pass over the same events.
    pub fn with_future(
        config: MiniSimConfig,
        future: MiniSimFuture,
    ) -> Result<MiniSim, ConfigError> {
        let futures = future
            .builders
            .into_iter()
            .map(NextUseBuilder::finish)
            .collect();
        Self::build(config, Some(futures))
    }

    fn build(config: MiniSimConfig, futures: Option<Vec<NextUse>>) -> Result<MiniSim, ConfigError> {
        let plan = config.plan();
        let lean = config.sim.admission == Admission::Always
            && config.sim.sequential_cutoff_bytes.is_none();
        let mut futures = futures.map(|f| f.into_iter());
        let mut sims = Vec::with_capacity(plan.len());
        for (size, rate, threshold, capacity) in plan {
            let mut c = config.sim.clone();
            c.capacity_lines = capacity;
            c.time_bins = 1;
            let future = futures.as_mut().and_then(|f| f.next());
            let mini = if lean {
                c.validate()?;
                Miniature::Lean(Lean {
                    policy: new_policy(c.policy, capacity, future.map(|f| f.next))?,
                    mode: c.mode,
                    evicted: Vec::new(),
                    vtime: 0,
                    lines: 0,
                    unhittable: 0,
                    hits: 0,
                })
            } else {
                Miniature::Full(Box::new(match future {
                    Some(future) => Simulator::with_future(&c, future)?,
                    None => Simulator::new(&c)?,
                }))
            };
            sims.push((size, rate, threshold, mini));
        }
        let (distinct_threshold, distinct_rate) =
            sims.last().map_or((u64::MAX, 1.0), |s| (s.2, s.1));
        Ok(MiniSim {
            line_bytes: config.sim.line_bytes,
            config,
            sims,
            lean,
            requests: 0,
            line_accesses: 0,
            sampled_accesses: 0,
            pending: Vec::new(),
            distinct: IntSet::default(),
            distinct_threshold,
            distinct_rate,
        })
    }

    pub fn observe(&mut self, e: &IoEvent) {
        if self.lean {
            self.observe_lean(e);
            return;
        }
        if matches!(e.op, Op::Read | Op::Write) && e.len_bytes > 0 {
            self.requests += 1;
            for line in e.block_range(self.line_bytes) {
                self.line_accesses += 1;
                let h = line_hash(e.device, line);
                if h <= self.distinct_threshold {
                    self.distinct.insert(h);
                }
                if self.sims.first().is_some_and(|s| h <= s.2) {
                    self.sampled_accesses += 1;
                }
            }
        }
        let Some(h) = min_hash(e, self.line_bytes) else {
            return;
        };
        for (_, _, t, sim) in &mut self.sims {
            if h > *t {
                break;
            }
            let t = *t;
            if let Miniature::Full(sim) = sim {
                sim.observe_filtered(e, |line| line_hash(e.device, line) <= t);
            }
        }
    }

    /// [`MiniSim::observe`] for lean miniatures: each line is hashed once and handed to the
    /// miniatures whose sample holds it.
    fn observe_lean(&mut self, e: &IoEvent) {
        if e.len_bytes == 0 {
            return;
        }
        let write = match e.op {
            Op::Read => false,
            Op::Write => true,
            Op::Discard => {
                let top = self.sims.first().map_or(0, |s| s.2);
                for line in e.block_range(self.line_bytes) {
                    let key = block_key(e.device, line);
                    let hash = mix64(key);
                    if hash <= top {
                        self.push_pending(Pending {
                            key,
                            hash,
                            access: LineAccess::Discard,
                        });
                    }
                }
                return;
            }
            Op::Flush => return,
        };
        self.requests += 1;
        let top = self.sims.first().map_or(0, |s| s.2);
        for line in e.block_range(self.line_bytes) {
            self.line_accesses += 1;
            let key = block_key(e.device, line);
            let h = mix64(key);
            if h <= self.distinct_threshold {
                self.distinct.insert(h);
            }
            if h > top {
                continue;
            }
            self.sampled_accesses += 1;
            self.push_pending(Pending {
                key,
                hash: h,
                access: if write {
                    LineAccess::Write
                } else {
                    LineAccess::Read
                },
            });
        }
    }

    #[inline]
    fn push_pending(&mut self, p: Pending) {
        self.pending.push(p);
        if self.pending.len() >= PENDING_LINES {
            self.run_pending();
        }
    }

    /// Runs the pending sampled accesses through the lean miniatures, one miniature at a time
    /// (each sees its own sample's accesses in trace order, as fed one by one).
    fn run_pending(&mut self) {
        for (_, _, t, m) in &mut self.sims {
            let Miniature::Lean(m) = m else {
                continue;
            };
            let t = *t;
            for p in &self.pending {
                if p.hash > t {
                    continue;
                }
                match p.access {
                    LineAccess::Discard => {
                        m.policy.remove(p.key);
                    }
                    LineAccess::Read => m.line(p.key, false),
                    LineAccess::Write => m.line(p.key, true),
                }
            }
        }
        self.pending.clear();
    }

    /// The curve, with a recommendation against the header's device capacity.
    pub fn finish(mut self, header: &TraceHeader) -> MrcReport {
        self.run_pending();
        let policy = self.config.sim.policy;
        let min_rate = self.sims.iter().map(|s| s.1).fold(1.0, f64::min);
        let correct = self.config.bias_correction && self.lean;
        let line_accesses = self.line_accesses as f64;
        let mut curve: Vec<(u64, f64)> = self
            .sims
            .into_iter()
            .map(|(size, rate, _, mini)| {
                let expected = (correct && rate < 1.0).then_some(rate * line_accesses);
                (size, mini.hit_ratio(expected))
            })
            .collect();
        curve.sort_by_key(|p| p.0);
        let footprint = (self.distinct.len() as f64 / self.distinct_rate).round() as u64;
        let sizes: Vec<u64> = curve.iter().map(|p| p.0).collect();
        let curve = PointCurve { points: curve };
        let line_bytes = self.line_bytes;
        let recommendation = (self.line_accesses > 0 && footprint > 0)
            .then(|| recommend(&curve, line_bytes, footprint, capacity_bytes(header)));
        MrcReport {
            policy: policy.name().into(),
            method: Method::Minisim,
            line_bytes,
            requests: self.requests,
            line_accesses: self.line_accesses,
            footprint_lines: footprint,
            footprint_exact: self.distinct_rate >= 1.0,
            sampling: Some(SamplingInfo {
                scheme: "minisim".into(),
                rate: min_rate,
                max_lines: None,
                sampled_accesses: self.sampled_accesses,
                bias_corrected: correct && min_rate < 1.0,
            }),
            points: points(&curve, &sizes, line_bytes),
            request_points: Vec::new(),
            recommendation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrc::linear_sizes;

    fn ev(block: u64) -> IoEvent {
        IoEvent {
            time_nanos: 0,
            device: 0,
            offset_bytes: block * 4096,
            len_bytes: 4096,
            op: Op::Read,
            latency_nanos: None,
            pid: None,
        }
    }

    /// Reads, writes and discards over 3,000 lines, 1–3 lines each.
    fn mixed_events() -> Vec<IoEvent> {
        (0..30_000u64)
            .map(|i| {
                let op = match i % 11 {
                    0 | 5 => Op::Write,
                    7 if i % 77 == 7 => Op::Discard,
                    _ => Op::Read,
                };
                IoEvent {
                    op,
                    len_bytes: 4096 * (1 + (i % 3) as u32),
                    ..ev(mix64(i) % 3000 / (1 + i % 3))
                }
            })
            .collect()
    }

    /// At rate 1 every miniature is the full cache: the lean miniatures must give the full
    /// simulator's line hit ratio to the last bit, in every write mode.
    #[test]
    fn rate_one_equals_full_simulation() {
        let events = mixed_events();
        let sizes = vec![10, 100, 500, 1000, 2000];
        for mode in WriteMode::ALL {
            for policy in [PolicyKind::Lru, PolicyKind::Arc, PolicyKind::S3Fifo] {
                let mut cfg = MiniSimConfig::new(policy, 4096, sizes.clone());
                cfg.base_rate = 1.0;
                cfg.sim.mode = mode;
                let mut m = MiniSim::new(cfg).expect("config");
                assert!(m.lean);
                for e in &events {
                    m.observe(e);
                }
                let r = m.finish(&TraceHeader::default());
                for p in &r.points {
                    let mut c = SimConfig::new(policy, p.size_lines, 4096);
                    c.mode = mode;
                    let mut full = Simulator::new(&c).expect("config");
                    for e in &events {
                        full.observe(e);
                    }
                    let h = full.finish().whole.ratios.line_hit_ratio.unwrap_or(0.0);
                    assert_eq!(h, p.hit_ratio, "{mode:?} {policy:?} {}", p.size_lines);
                }
            }
        }
    }

    /// Sampled lean miniatures see the same lines as sampled full simulators.
    #[test]
    fn lean_and_full_miniatures_agree_when_sampled() {
        let events = mixed_events();
        let sizes = vec![100, 1000, 2000];
        let curve = |admission| {
            let mut cfg = MiniSimConfig::new(PolicyKind::Arc, 4096, sizes.clone());
            cfg.min_sampled_lines = 50;
            cfg.sim.admission = admission;
            let mut m = MiniSim::new(cfg).expect("config");
            events.iter().for_each(|e| m.observe(e));
            (m.lean, m.finish(&TraceHeader::default()))
        };
        let (lean, a) = curve(Admission::Always);
        // An n-hit rule of 1 admits every miss, like "always", but takes the full simulator.
        let (full, b) = curve(Admission::NHit { n: 1 });
        assert!(lean && !full);
        assert_eq!(a.points, b.points);
        assert!(a.sampling.expect("sampled").rate < 0.1);
    }

    fn free_rates(sizes: &[u64]) -> Vec<f64> {
        let c = MiniSimConfig::new(PolicyKind::Fifo, 4096, sizes.to_vec());
        c.plan().iter().map(|p| p.1).collect()
    }

    #[test]
    fn a_work_bound_caps_the_sum_of_rates() {
        let sizes = linear_sizes(200_000, 16);
        let free = MiniSimConfig::new(PolicyKind::Fifo, 4096, sizes.clone());
        let bounded = MiniSimConfig::interactive(PolicyKind::Fifo, 4096, sizes);
        let work = |c: &MiniSimConfig| c.plan().iter().map(|p| p.1).sum::<f64>();
        assert!(work(&free) > 4.0, "{}", work(&free));
        let w = work(&bounded);
        assert!(
            w <= MiniSimConfig::INTERACTIVE_PASSES * 1.001
                && w > MiniSimConfig::INTERACTIVE_PASSES * 0.9,
            "{w}"
        );
        // Sizes the bound affords keep their rates.
        let cheap = MiniSimConfig::interactive(PolicyKind::Fifo, 4096, vec![1 << 20, 1 << 21]);
        assert_eq!(
            cheap.plan().iter().map(|p| p.1).collect::<Vec<_>>(),
            free_rates(&[1 << 20, 1 << 21])
        );
    }

    #[test]
    fn belady_runs_with_its_future() {
        let events: Vec<IoEvent> = (0..20_000u64).map(|i| ev(mix64(i) % 5000)).collect();
        let mut cfg = MiniSimConfig::new(PolicyKind::Belady, 4096, vec![100, 1000, 4000]);
        cfg.min_sampled_lines = 50;
        assert!(MiniSim::new(cfg.clone()).is_err());
        let mut fut = MiniSimFuture::new(&cfg);
        events.iter().for_each(|e| fut.observe(e));
        let mut m = MiniSim::with_future(cfg, fut).expect("config");
        events.iter().for_each(|e| m.observe(e));
        let r = m.finish(&TraceHeader::default());
        assert!(r
            .points
            .windows(2)
            .all(|w| w[0].hit_ratio <= w[1].hit_ratio + 0.02));
        assert!(r.points[2].hit_ratio > 0.5);
    }
}
