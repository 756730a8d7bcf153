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
use crate::cache::list::{Table, NIL};

/// Lists (and tags) in the table.
const AIN: u8 = 0;
const AM: u8 = 1;
const AOUT: u8 = 2;

pub struct TwoQ {
    capacity: u64,
    ain_max: u64,
    aout_max: u64,
    am_max: u64,
    table: Table,
}

impl TwoQ {
    pub fn new(capacity: u64) -> TwoQ {
        let ain_max = ((capacity as f64 * 0.25) as u64).max(1);
        let aout_max = (capacity as f64 * 0.5) as u64;
        TwoQ {
            capacity,
            ain_max,
            aout_max,
            am_max: capacity.saturating_sub(ain_max).max(1),
            table: Table::new(3, 0, capacity.saturating_add(aout_max)),
        }
    }

    fn len_of(&self, l: u8) -> u64 {
        self.table.list(l as usize).len
    }

    fn resident(&self) -> u64 {
        self.len_of(AIN) + self.len_of(AM)
    }

    fn evict_am_tail(&mut self, evicted: &mut Vec<u64>) {
        if let Some(t) = self.table.pop_tail(AM as usize) {
            evicted.push(self.table.remove_at(t));
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
        let i = self.table.find(key);
        i != NIL && self.table.slot(i).tag != AOUT
    }

    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        match self.table.slot(i).tag {
            AIN => true,
            AM => {
                self.table.move_to_head(AM as usize, i);
                true
            }
            _ => false,
        }
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        let ghost = if i == NIL {
            false
        } else if self.table.slot(i).tag == AOUT {
            self.table.unlink(AOUT as usize, i);
            self.table.remove_at(i);
            true
        } else {
            return true;
        };
        while self.resident() + 1 > self.capacity && self.resident() > 0 {
            if self.len_of(AIN) > self.ain_max || self.len_of(AM) == 0 {
                if let Some(t) = self.table.pop_tail(AIN as usize) {
                    let k = self.table.remove_at(t);
                    evicted.push(k);
                    self.table.remember(AOUT as usize, k, AOUT, self.aout_max);
                }
            } else {
                self.evict_am_tail(evicted);
            }
        }
        let to = if ghost {
            while self.len_of(AM) + 1 > self.am_max && self.len_of(AM) > 0 {
                self.evict_am_tail(evicted);
            }
            AM
        } else {
            AIN
        };
        let i = self.table.insert(key, to, 0);
        self.table.push_head(to as usize, i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        let tag = self.table.slot(i).tag;
        self.table.unlink(tag as usize, i);
        self.table.remove_at(i);
        tag != AOUT
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
}
