//! The narrow interface between the array model and an SSD cache in front of it. A cache
//! simulator implements [`CacheTier`]: for each front-end request it says whether the cache
//! devices serve it and appends the back-end requests (what the disks see) it causes. The
//! engine then sends hits to the cache devices, misses and back-end traffic to the array.
//!
//! [`SimulatorTier`] adapts the analysis engine's cache simulator
//! ([`crate::cache::Simulator::observe_with_backend`]: every policy, product preset, write mode
//! and admission rule). It is the only tier: the array's calibration tests run on the simulator
//! users get, not on a private cache.

use std::rc::Rc;

use crate::cache::policy::lru::WeightedLru;
use crate::cache::{Admission, ConfigError, PolicyKind, SimConfig, Simulator, WriteMode};
use crate::event::{IoEvent, Op};
use crate::hash::{block_key, mix64, IntSet};

/// What the cache tier did with one front-end request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheAccess {
    /// All of the request's data is served by (read) or absorbed by (write) the cache devices.
    pub hit: bool,
    /// The request's data is written to the cache devices (a fill after a read miss, or a
    /// write the cache keeps).
    pub writes_cache: bool,
}

impl CacheAccess {
    /// A discard or a flush: no data for the cache devices or the array.
    pub const NO_DATA: CacheAccess = CacheAccess {
        hit: true,
        writes_cache: false,
    };
}

pub trait CacheTier {
    /// Handles one front-end request; appends the back-end I/Os it causes to `backend`.
    fn access(&mut self, request: &IoEvent, backend: &mut Vec<IoEvent>) -> CacheAccess;
    /// Handles a request whose answer and back-end I/O nobody reads (an estimate's requests
    /// outside its slices): the tier's state changes exactly as with [`CacheTier::access`].
    /// `scratch` is a buffer the tier may use.
    fn observe(&mut self, request: &IoEvent, scratch: &mut Vec<IoEvent>) {
        scratch.clear();
        self.access(request, scratch);
    }
    /// Whether writes complete in the cache (write-back) rather than on the array.
    fn writes_back(&self) -> bool;
    /// A one-line description for the stated assumptions.
    fn describe(&self) -> String;
}

/// The analysis engine's cache simulator (any policy, preset, write mode and admission rule)
/// as a cache tier.
pub struct SimulatorTier {
    sim: Simulator,
    mode: WriteMode,
    line_bytes: u64,
    description: String,
    sample: Option<LineSample>,
}

/// The lines a sampled tier simulates ([`SimulatorTier::sampled`]).
struct LineSample {
    /// Kept whatever their hash: the lines of the requests whose answers are wanted.
    light: Rc<IntSet<u64>>,
    /// Other lines are kept when `mix64(key) >> 40` is below this (a 24-bit hash space).
    threshold: u64,
    /// A one-hash Bloom filter of `light` over the low bits of `mix64(key)` (16 bits a key, so
    /// about one line in sixteen that is not light is looked up in `light`): most lines of a
    /// trace are neither, and the filter, unlike the set, stays in the processor's caches.
    filter: Vec<u64>,
    filter_mask: u64,
}

impl LineSample {
    fn new(light: Rc<IntSet<u64>>, threshold: u64) -> LineSample {
        let bits = (light.len() as u64 * 16).next_power_of_two().max(1 << 12);
        let mut filter = vec![0u64; (bits / 64) as usize];
        let filter_mask = bits - 1;
        for &key in light.iter() {
            let b = mix64(key) & filter_mask;
            filter[(b / 64) as usize] |= 1 << (b % 64);
        }
        LineSample {
            light,
            threshold,
            filter,
            filter_mask,
        }
    }

    #[inline]
    fn keeps(&self, key: u64) -> bool {
        let h = mix64(key);
        if (h >> 40) < self.threshold {
            return true;
        }
        let b = h & self.filter_mask;
        self.filter[(b / 64) as usize] & (1 << (b % 64)) != 0 && self.light.contains(&key)
    }
}

/// The hash space of [`LineSample::threshold`].
pub const SAMPLE_HASH_SPACE: u64 = 1 << 24;

impl SimulatorTier {
    pub fn new(
        config: &SimConfig,
        description: impl Into<String>,
    ) -> Result<SimulatorTier, ConfigError> {
        config.validate()?;
        Ok(SimulatorTier {
            sim: Simulator::new(config)?,
            mode: config.mode,
            line_bytes: config.line_bytes,
            description: description.into(),
            sample: None,
        })
    }

    /// An LRU tier that answers only for the requests whose lines are all in `light`, from a
    /// spatial sample: it simulates those lines and the others whose hash falls below
    /// `threshold` (of [`SAMPLE_HASH_SPACE`]: a rate of `threshold / 2^24`), each of the latter
    /// standing for `2^24 / threshold` lines ([`WeightedLru`]). A request with a line outside
    /// the sample gets an answer for its sampled lines only. With `threshold` = 2^24 it is the
    /// exact tier. Only for LRU without dirty data: an evicted sampled line would stand for
    /// many write-backs.
    pub fn sampled(
        config: &SimConfig,
        description: impl Into<String>,
        light: IntSet<u64>,
        threshold: u64,
    ) -> Result<SimulatorTier, ConfigError> {
        config.validate()?;
        let threshold = threshold.clamp(1, SAMPLE_HASH_SPACE);
        let light = Rc::new(light);
        // Once full it holds the light lines it has and `capacity × rate` sampled ones.
        let held = (config.capacity_lines as f64 * threshold as f64 / SAMPLE_HASH_SPACE as f64)
            .ceil() as u64
            + light.len() as u64;
        let policy = WeightedLru::new(
            config.capacity_lines,
            light.clone(),
            threshold,
            SAMPLE_HASH_SPACE,
        )
        .with_expected_lines(held);
        Ok(SimulatorTier {
            sim: Simulator::with_policy(config, Box::new(policy))?,
            mode: config.mode,
            line_bytes: config.line_bytes,
            description: description.into(),
            sample: Some(LineSample::new(light, threshold)),
        })
    }

    /// Whether [`SimulatorTier::sampled`] takes `config` (LRU, no write-back, no admission rule
    /// that counts misses per line).
    pub fn samples(config: &SimConfig) -> bool {
        config.policy == PolicyKind::Lru
            && config.mode != WriteMode::WriteBack
            && matches!(
                config.admission,
                Admission::Always | Admission::SeqCutoff { .. }
            )
    }

    /// Lines the cache holds now (its memory grows with them).
    pub fn occupancy_lines(&self) -> u64 {
        self.sim.occupancy_lines()
    }

    /// How many times more warm-up requests than an allocate-on-miss cache this admission rule
    /// needs (an n-hit rule promotes a line on its n-th miss).
    pub fn warmup_factor(config: &SimConfig) -> u64 {
        match config.admission {
            Admission::NHit { n } => u64::from(n.max(1)),
            Admission::Smq => 4,
            Admission::Always | Admission::SeqCutoff { .. } => 1,
        }
    }
}

impl CacheTier for SimulatorTier {
    fn access(&mut self, r: &IoEvent, backend: &mut Vec<IoEvent>) -> CacheAccess {
        let before = backend.len();
        match &self.sample {
            None => self.sim.observe_with_backend(r, backend),
            Some(sample) => self.sim.observe_filtered_with_backend(
                r,
                |line| sample.keeps(block_key(r.device, line)),
                backend,
            ),
        }
        let new = &backend[before..];
        let line = self.line_bytes;
        match r.op {
            Op::Read => {
                let mut misses = new.iter().filter(|b| b.op == Op::Read).peekable();
                let hit = misses.peek().is_none();
                // An admitted miss is filled in whole lines; a bypassed one reads only the request.
                let filled = misses
                    .any(|b| b.offset_bytes % line == 0 && u64::from(b.len_bytes) % line == 0);
                CacheAccess {
                    hit,
                    writes_cache: filled,
                }
            }
            Op::Write => {
                let through = new.iter().any(|b| {
                    b.op == Op::Write
                        && b.offset_bytes <= r.offset_bytes
                        && b.end_bytes() >= r.end_bytes()
                });
                match self.mode {
                    WriteMode::WriteBack => CacheAccess {
                        hit: !through,
                        writes_cache: !through,
                    },
                    WriteMode::WriteThrough => CacheAccess {
                        hit: false,
                        writes_cache: true,
                    },
                    WriteMode::ReadOnly | WriteMode::WriteAround => CacheAccess {
                        hit: false,
                        writes_cache: false,
                    },
                }
            }
            Op::Discard | Op::Flush => CacheAccess::NO_DATA,
        }
    }

    fn observe(&mut self, r: &IoEvent, _scratch: &mut Vec<IoEvent>) {
        match &self.sample {
            None => self.sim.observe(r),
            Some(sample) => self
                .sim
                .observe_filtered(r, |line| sample.keeps(block_key(r.device, line))),
        }
    }

    fn writes_back(&self) -> bool {
        self.mode == WriteMode::WriteBack
    }

    fn describe(&self) -> String {
        self.description.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(off: u64) -> IoEvent {
        IoEvent {
            time_nanos: 0,
            device: 0,
            offset_bytes: off,
            len_bytes: 4096,
            op: Op::Read,
            latency_nanos: None,
            pid: None,
        }
    }

    #[test]
    fn simulator_tier_reports_hits_fills_and_write_back() {
        use crate::cache::PolicyKind;
        let mut cfg = SimConfig::new(PolicyKind::Lru, 4, 65536);
        cfg.mode = WriteMode::WriteBack;
        let mut t = SimulatorTier::new(&cfg, "lru").expect("valid");
        let mut be = Vec::new();
        let a = t.access(&read(0), &mut be);
        assert!(!a.hit && a.writes_cache);
        assert!(be.iter().any(|e| e.op == Op::Read));
        be.clear();
        assert!(t.access(&read(4096), &mut be).hit);
        assert!(be.is_empty());
        let w = IoEvent {
            op: Op::Write,
            ..read(8192)
        };
        assert!(t.access(&w, &mut be).hit);
        assert!(t.writes_back());
        let mut ro = SimConfig::new(PolicyKind::Lru, 4, 65536);
        ro.mode = WriteMode::ReadOnly;
        let mut t = SimulatorTier::new(&ro, "ro").expect("valid");
        be.clear();
        let a = t.access(&w, &mut be);
        assert!(!a.hit && !a.writes_cache);
        assert_eq!(
            SimulatorTier::warmup_factor(
                &crate::cache::Preset::from_name("cachecade1")
                    .expect("preset")
                    .config(10)
            ),
            2
        );
    }

    fn zipf_events(n: u64, seed: u64) -> Vec<IoEvent> {
        crate::mrc::synth::Synthetic::new(crate::mrc::synth::SyntheticConfig {
            seed,
            requests: n,
            zipf_lines: 40_000,
            ..crate::mrc::synth::SyntheticConfig::default()
        })
        .collect()
    }

    /// The lines (keys) of the requests `pick` selects.
    fn lines_of(events: &[IoEvent], line: u64, pick: impl Fn(usize) -> bool) -> IntSet<u64> {
        let mut keys = IntSet::default();
        for (i, e) in events.iter().enumerate() {
            if pick(i) && matches!(e.op, Op::Read | Op::Write) && e.len_bytes > 0 {
                let (a, b) = (e.offset_bytes / line, (e.end_bytes() - 1) / line);
                keys.extend((a..=b).map(|l| block_key(e.device, l)));
            }
        }
        keys
    }

    /// Every request's answer and back-end I/O from `tier`, in order.
    fn answers(tier: &mut SimulatorTier, events: &[IoEvent]) -> Vec<(CacheAccess, Vec<IoEvent>)> {
        events
            .iter()
            .map(|e| {
                let mut be = Vec::new();
                let a = tier.access(e, &mut be);
                (a, be)
            })
            .collect()
    }

    /// A request only observed (its answer unread, as an estimate's requests outside its
    /// slices) changes the tier as `access` does: the answers of the requests that follow are
    /// the same, for the exact tier and a sampled one, in every mode.
    #[test]
    fn observing_a_request_changes_the_tier_as_accessing_it_does() {
        use crate::cache::PolicyKind;
        let ev = zipf_events(20_000, 11);
        let answered = |i: usize| i % 1_000 < 50;
        for mode in [
            WriteMode::WriteThrough,
            WriteMode::WriteAround,
            WriteMode::ReadOnly,
            WriteMode::WriteBack,
        ] {
            let mut cfg = SimConfig::new(PolicyKind::Lru, 1_500, 4096);
            cfg.mode = mode;
            let light = || lines_of(&ev, 4096, answered);
            let tiers = || {
                let exact = SimulatorTier::new(&cfg, "exact").expect("valid");
                let sampled = SimulatorTier::sampled(&cfg, "sampled", light(), 1 << 20);
                [exact, sampled.expect("valid")]
            };
            for (mut all, mut some) in tiers().into_iter().zip(tiers()) {
                let mut scratch = Vec::new();
                let (mut a, mut b) = (Vec::new(), Vec::new());
                for (i, e) in ev.iter().enumerate() {
                    let mut be = Vec::new();
                    let access = all.access(e, &mut be);
                    if answered(i) {
                        a.push((access, be));
                        let mut be = Vec::new();
                        b.push((some.access(e, &mut be), be));
                    } else {
                        some.observe(e, &mut scratch);
                    }
                }
                assert!(a.len() > 900 && a == b, "{mode:?}");
            }
        }
    }

    #[test]
    fn a_sampled_tier_at_the_full_rate_is_the_exact_tier() {
        use crate::cache::PolicyKind;
        let ev = zipf_events(30_000, 7);
        for (mode, lines) in [
            (WriteMode::WriteThrough, 2_000),
            (WriteMode::WriteAround, 500),
            (WriteMode::ReadOnly, 8_000),
        ] {
            let mut cfg = SimConfig::new(PolicyKind::Lru, lines, 8192);
            cfg.mode = mode;
            assert!(SimulatorTier::samples(&cfg));
            let light = lines_of(&ev, 8192, |i| i % 1000 < 100);
            let mut exact = SimulatorTier::new(&cfg, "exact").expect("valid");
            let mut sampled =
                SimulatorTier::sampled(&cfg, "sampled", light, SAMPLE_HASH_SPACE).expect("valid");
            assert!(
                answers(&mut exact, &ev) == answers(&mut sampled, &ev),
                "{mode:?}"
            );
        }
        let mut wb = SimConfig::new(PolicyKind::Lru, 100, 4096);
        wb.mode = WriteMode::WriteBack;
        assert!(!SimulatorTier::samples(&wb));
        assert!(!SimulatorTier::samples(&SimConfig::new(
            PolicyKind::Arc,
            100,
            4096
        )));
    }

    /// At a 1/16 sample the slices' requests hit about as often, and send about as much to the
    /// disks, as with the exact tier; the same sample without the weights (every kept line
    /// counting as one) would not.
    #[test]
    fn a_sampled_tier_estimates_the_slices_answers() {
        use crate::cache::PolicyKind;
        let ev = zipf_events(200_000, 3);
        let in_slice = |i: usize| i % 10_000 < 500;
        let cfg = SimConfig::new(PolicyKind::Lru, 12_000, 4096);
        let light = lines_of(&ev, 4096, in_slice);
        // (hit requests, back-end bytes) of the slices' requests.
        let tally = |tier: &mut SimulatorTier| {
            let (mut hits, mut bytes) = (0u64, 0u64);
            for (i, (a, be)) in answers(tier, &ev).iter().enumerate() {
                if in_slice(i) && matches!(ev[i].op, Op::Read | Op::Write) {
                    hits += u64::from(a.hit);
                    bytes += be.iter().map(|b| u64::from(b.len_bytes)).sum::<u64>();
                }
            }
            (hits as f64, bytes as f64)
        };
        let exact = tally(&mut SimulatorTier::new(&cfg, "exact").expect("valid"));
        let sampled = tally(
            &mut SimulatorTier::sampled(&cfg, "s", light.clone(), SAMPLE_HASH_SPACE / 16)
                .expect("valid"),
        );
        let light = Rc::new(light);
        let mut unweighted = SimulatorTier {
            sim: Simulator::with_policy(
                &cfg,
                Box::new(WeightedLru::new(cfg.capacity_lines, light.clone(), 1, 1)),
            )
            .expect("valid"),
            mode: cfg.mode,
            line_bytes: cfg.line_bytes,
            description: String::new(),
            sample: Some(LineSample::new(light, SAMPLE_HASH_SPACE / 16)),
        };
        let unweighted = tally(&mut unweighted);
        let off = |x: (f64, f64)| ((x.0 / exact.0 - 1.0).abs(), (x.1 / exact.1 - 1.0).abs());
        let (hits, bytes) = off(sampled);
        assert!(exact.0 > 1_000.0, "a test with hits: {exact:?}");
        assert!(
            hits < 0.03 && bytes < 0.03,
            "sampled {sampled:?} exact {exact:?}"
        );
        let (hits, _) = off(unweighted);
        assert!(hits > 0.1, "unweighted {unweighted:?} exact {exact:?}");
    }
}
