//! 2Q: new lines enter a FIFO `A1in`; lines evicted from it are remembered (key only) in a ghost
//! FIFO `A1out`; a miss that finds its key in `A1out` has proven reuse and goes to the main LRU
//! `Am`. Hits in `A1in` change nothing.
//!
//! Johnson and Shasha, "2Q: A Low Overhead High Performance Buffer Management Replacement
//! Algorithm", VLDB 1994 (the "full version"). Sizes follow libCacheSim's `TwoQ.c` defaults:
//! `A1in` = 25% and `A1out` = 50% of the capacity (rounded down), `Am` = the rest; `A1in` may
//! grow past its share while the cache fills, and `Am` evicts within itself when a ghost hit
//! arrives while it is full. Caches of fewer than four lines get a one-line `A1in`.
//!
//! Poor fit: the fixed `A1in`/`A1out` split suits OLTP-style skew; workloads whose reuse
//! distance exceeds `A1in + A1out` never get into `Am` and behave like a small FIFO.

use super::{Policy, PolicyKind};
use crate::cache::list::{Arena, List};
use crate::hash::IntMap;

const AIN: u8 = 0;
const AM: u8 = 1;
const AOUT: u8 = 2;

pub struct TwoQ {
    capacity: u64,
    ain_max: u64,
    aout_max: u64,
    am_max: u64,
    map: IntMap<u64, u32>,
    arena: Arena,
    ain: List,
    am: List,
    aout: List,
}

impl TwoQ {
    pub fn new(capacity: u64) -> TwoQ {
        let n = capacity.min(super::PREALLOC_LINES) as usize;
        let ain_max = ((capacity as f64 * 0.25) as u64).max(1);
        let aout_max = (capacity as f64 * 0.5) as u64;
        TwoQ {
            capacity,
            ain_max,
            aout_max,
            am_max: capacity.saturating_sub(ain_max).max(1),
            map: IntMap::with_capacity_and_hasher(n * 2, Default::default()),
            arena: Arena::with_capacity(n * 2),
            ain: List::default(),
            am: List::default(),
            aout: List::default(),
        }
    }

    fn resident(&self) -> u64 {
        self.ain.len + self.am.len
    }

    fn drop_node(&mut self, i: u32) -> u64 {
        let k = self.arena.get(i).key;
        self.arena.release(i);
        self.map.remove(&k);
        k
    }

    fn remember(&mut self, key: u64) {
        if self.aout_max == 0 {
            return;
        }
        while self.aout.len >= self.aout_max {
            if let Some(t) = self.arena.pop_tail(&mut self.aout) {
                self.drop_node(t);
            }
        }
        let i = self.arena.alloc(key, AOUT, 0);
        self.arena.push_head(&mut self.aout, i);
        self.map.insert(key, i);
    }

    fn evict_am_tail(&mut self, evicted: &mut Vec<u64>) {
        if let Some(t) = self.arena.pop_tail(&mut self.am) {
            let k = self.drop_node(t);
            evicted.push(k);
        }
    }
}

impl Policy for TwoQ {
    fn kind(&self) -> PolicyKind {
        PolicyKind::TwoQ
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn len(&self) -> u64 {
        self.resident()
    }
    fn contains(&self, key: u64) -> bool {
        self.map
            .get(&key)
            .is_some_and(|&i| self.arena.get(i).tag != AOUT)
    }

    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let Some(&i) = self.map.get(&key) else {
            return false;
        };
        match self.arena.get(i).tag {
            AIN => true,
            AM => {
                self.arena.move_to_head(&mut self.am, i);
                true
            }
            _ => false,
        }
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let ghost = match self.map.get(&key) {
            Some(&i) if self.arena.get(i).tag == AOUT => {
                self.arena.unlink(&mut self.aout, i);
                self.drop_node(i);
                true
            }
            Some(_) => return true,
            None => false,
        };
        while self.resident() + 1 > self.capacity && self.resident() > 0 {
            if self.ain.len > self.ain_max || self.am.is_empty() {
                if let Some(t) = self.arena.pop_tail(&mut self.ain) {
                    let k = self.drop_node(t);
                    evicted.push(k);
                    self.remember(k);
                }
            } else {
                self.evict_am_tail(evicted);
            }
        }
        if ghost {
            while self.am.len + 1 > self.am_max && !self.am.is_empty() {
                self.evict_am_tail(evicted);
            }
            let i = self.arena.alloc(key, AM, 0);
            self.arena.push_head(&mut self.am, i);
            self.map.insert(key, i);
        } else {
            let i = self.arena.alloc(key, AIN, 0);
            self.arena.push_head(&mut self.ain, i);
            self.map.insert(key, i);
        }
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let Some(&i) = self.map.get(&key) else {
            return false;
        };
        let tag = self.arena.get(i).tag;
        match tag {
            AIN => self.arena.unlink(&mut self.ain, i),
            AM => self.arena.unlink(&mut self.am, i),
            _ => self.arena.unlink(&mut self.aout, i),
        }
        self.drop_node(i);
        tag != AOUT
    }

    fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.map.capacity() * 16
    }
}
