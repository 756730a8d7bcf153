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
use crate::cache::logs::{LogQueues, NIL};

/// Queues.
const AIN: usize = 0;
const AM: usize = 1;
const AOUT: usize = 2;

/// The three lists as logs over one table ([`LogQueues`], as ARC and S3-FIFO keep theirs): a
/// hit in `Am` appends to its log, a line evicted from `A1in` becomes a ghost in its own slot,
/// a ghost hit enters `Am` in it. Property-tested against the reference in `reference.rs`.
pub struct TwoQ {
    capacity: u64,
    ain_max: u64,
    aout_max: u64,
    am_max: u64,
    queues: LogQueues,
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
            queues: LogQueues::new(3, capacity.saturating_add(aout_max)),
        }
    }

    fn resident(&self) -> u64 {
        self.queues.len(AIN) + self.queues.len(AM)
    }

    fn evict_am_tail(&mut self, evicted: &mut Vec<u64>) {
        if let Some(k) = self.queues.forget_oldest(AM) {
            evicted.push(k);
        }
    }

    /// Evicts `A1in`'s oldest line, remembering its key in `A1out`.
    fn evict_ain_tail(&mut self, evicted: &mut Vec<u64>) {
        let Some(t) = self.queues.pop_oldest(AIN) else {
            return;
        };
        evicted.push(self.queues.key(t));
        self.queues.remember(t, AOUT, self.aout_max);
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
        let i = self.queues.find(key);
        i != NIL && self.queues.queue(i) != AOUT
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.queues.find(key);
        if i == NIL {
            return false;
        }
        match self.queues.queue(i) {
            AIN => true,
            AM => {
                self.queues.move_to(i, AM);
                true
            }
            _ => false,
        }
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let i = self.queues.find(key);
        let ghost = if i == NIL {
            false
        } else if self.queues.queue(i) == AOUT {
            // Out of A1out before any eviction (which may trim it); it enters Am below (found
            // again: the evictions' removals may move its slot).
            self.queues.detach(i);
            true
        } else {
            return true;
        };
        while self.resident() + 1 > self.capacity && self.resident() > 0 {
            if self.queues.len(AIN) > self.ain_max || self.queues.len(AM) == 0 {
                self.evict_ain_tail(evicted);
            } else {
                self.evict_am_tail(evicted);
            }
        }
        if ghost {
            while self.queues.len(AM) + 1 > self.am_max && self.queues.len(AM) > 0 {
                self.evict_am_tail(evicted);
            }
            self.queues.move_to(self.queues.find(key), AM);
        } else {
            self.queues.insert(key, AIN, 0);
        }
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let i = self.queues.find(key);
        if i == NIL {
            return false;
        }
        let resident = self.queues.queue(i) != AOUT;
        self.queues.remove_at(i);
        resident
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.queues.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.queues.heap_bytes()
    }
}
