//! The narrow interface between the array model and an SSD cache in front of it. A cache
//! simulator implements [`CacheTier`]: for each front-end request it says whether the cache
//! devices serve it and appends the back-end requests (what the disks see) it causes. The
//! engine then sends hits to the cache devices, misses and back-end traffic to the array.
//!
//! [`SimulatorTier`] adapts the analysis engine's cache simulator
//! ([`crate::cache::Simulator::observe_with_backend`]: every policy, product preset, write mode
//! and admission rule). It is the only tier: the array's calibration tests run on the simulator
//! users get, not on a private cache.

use crate::cache::{Admission, ConfigError, SimConfig, Simulator, WriteMode};
use crate::event::{IoEvent, Op};

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
}

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
        })
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
        self.sim.observe_with_backend(r, backend);
        let new = &backend[before..];
        let line = self.line_bytes;
        match r.op {
            Op::Read => {
                let misses: Vec<&IoEvent> = new.iter().filter(|b| b.op == Op::Read).collect();
                // An admitted miss is filled in whole lines; a bypassed one reads only the request.
                let filled = misses
                    .iter()
                    .any(|b| b.offset_bytes % line == 0 && u64::from(b.len_bytes) % line == 0);
                CacheAccess {
                    hit: misses.is_empty(),
                    writes_cache: !misses.is_empty() && filled,
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
}
