//! The narrow interface between the array model and an SSD cache in front of it. A cache
//! simulator implements [`CacheTier`]: for each front-end request it says whether the cache
//! devices serve it and appends the back-end requests (what the disks see) it causes. The
//! engine then sends hits to the cache devices, misses and back-end traffic to the array.
//!
//! [`SimulatorTier`] adapts the analysis engine's cache simulator
//! ([`crate::cache::Simulator::observe_with_backend`]: every policy, product preset, write mode
//! and admission rule); [`LruTier`] is a small exact LRU the array's own tests use, so they do
//! not depend on the simulator's policy choices.

use crate::cache::{Admission, ConfigError, SimConfig, Simulator, WriteMode};
use crate::event::{IoEvent, Op};
use crate::hash::IntMap;

/// What the cache tier did with one front-end request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheAccess {
    /// All of the request's data is served by (read) or absorbed by (write) the cache devices.
    pub hit: bool,
    /// The request's data is written to the cache devices (a fill after a read miss, or a
    /// write the cache keeps).
    pub writes_cache: bool,
}

pub trait CacheTier {
    /// Handles one front-end request; appends the back-end I/Os it causes to `backend`.
    fn access(&mut self, request: &IoEvent, backend: &mut Vec<IoEvent>) -> CacheAccess;
    /// Whether writes complete in the cache (write-back) rather than on the array.
    fn writes_back(&self) -> bool;
    /// A one-line description for the stated assumptions.
    fn describe(&self) -> String;
}

/// Exact LRU over fixed-size lines, allocate on read miss and on write; write-back or
/// write-through. Reads of partially cached requests count as misses.
pub struct LruTier {
    line_bytes: u64,
    capacity_lines: usize,
    write_back: bool,
    /// line -> (prev, next, dirty) in a doubly linked list by recency, keyed by line number.
    map: IntMap<u64, (u64, u64, bool)>,
    head: u64,
    tail: u64,
}

const NIL: u64 = u64::MAX;

impl LruTier {
    pub fn new(capacity_bytes: u64, line_bytes: u64, write_back: bool) -> LruTier {
        let line_bytes = line_bytes.max(512);
        LruTier {
            line_bytes,
            capacity_lines: (capacity_bytes / line_bytes).max(1) as usize,
            write_back,
            map: IntMap::default(),
            head: NIL,
            tail: NIL,
        }
    }

    fn unlink(&mut self, line: u64) {
        let Some(&(prev, next, _)) = self.map.get(&line) else {
            return;
        };
        if prev != NIL {
            if let Some(p) = self.map.get_mut(&prev) {
                p.1 = next;
            }
        } else {
            self.head = next;
        }
        if next != NIL {
            if let Some(n) = self.map.get_mut(&next) {
                n.0 = prev;
            }
        } else {
            self.tail = prev;
        }
    }

    fn push_front(&mut self, line: u64, dirty: bool) {
        let old_head = self.head;
        self.map.insert(line, (NIL, old_head, dirty));
        if old_head != NIL {
            if let Some(h) = self.map.get_mut(&old_head) {
                h.0 = line;
            }
        }
        self.head = line;
        if self.tail == NIL {
            self.tail = line;
        }
    }

    /// Touches a line; returns whether it was present.
    fn touch(
        &mut self,
        line: u64,
        dirty: bool,
        backend: &mut Vec<IoEvent>,
        time_nanos: u64,
    ) -> bool {
        if let Some(&(_, _, was_dirty)) = self.map.get(&line) {
            self.unlink(line);
            self.push_front(line, was_dirty || dirty);
            return true;
        }
        if self.map.len() >= self.capacity_lines && self.tail != NIL {
            let victim = self.tail;
            let victim_dirty = self.map.get(&victim).is_some_and(|v| v.2);
            self.unlink(victim);
            self.map.remove(&victim);
            if victim_dirty {
                backend.push(IoEvent {
                    time_nanos,
                    device: 0,
                    offset_bytes: victim * self.line_bytes,
                    len_bytes: self.line_bytes as u32,
                    op: Op::Write,
                    latency_nanos: None,
                    pid: None,
                });
            }
        }
        self.push_front(line, dirty);
        false
    }
}

impl CacheTier for LruTier {
    fn access(&mut self, r: &IoEvent, backend: &mut Vec<IoEvent>) -> CacheAccess {
        let lines = r.block_range(self.line_bytes);
        let write = r.op == Op::Write;
        let mut all_present = true;
        for line in lines {
            all_present &= self.touch(line, write && self.write_back, backend, r.time_nanos);
        }
        if write {
            if !self.write_back {
                backend.push(*r);
            }
            return CacheAccess {
                hit: self.write_back,
                writes_cache: true,
            };
        }
        if !all_present {
            backend.push(*r);
        }
        CacheAccess {
            hit: all_present,
            writes_cache: !all_present,
        }
    }

    fn writes_back(&self) -> bool {
        self.write_back
    }

    fn describe(&self) -> String {
        format!(
            "built-in LRU over {} lines of {} bytes, {}",
            self.capacity_lines,
            self.line_bytes,
            if self.write_back {
                "write-back"
            } else {
                "write-through"
            }
        )
    }
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
            Op::Discard | Op::Flush => CacheAccess {
                hit: true,
                writes_cache: false,
            },
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
    fn lru_hits_evicts_and_writes_back_dirty_lines() {
        let mut c = LruTier::new(2 * 65536, 65536, true);
        let mut be = Vec::new();
        assert!(!c.access(&read(0), &mut be).hit);
        assert_eq!(be.len(), 1);
        assert!(c.access(&read(4096), &mut be).hit);
        let w = IoEvent {
            op: Op::Write,
            ..read(65536)
        };
        assert!(c.access(&w, &mut be).hit);
        be.clear();
        // Line 0 is most recent after this; line 1 (dirty) becomes the LRU victim.
        c.access(&read(0), &mut be);
        c.access(&read(3 * 65536), &mut be);
        assert!(be
            .iter()
            .any(|e| e.op == Op::Write && e.offset_bytes == 65536));
        assert!(!c.access(&read(65536), &mut be).hit);
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
