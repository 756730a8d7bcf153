//! SIEVE: a FIFO queue with a visited bit and a hand that sweeps from old to new, evicting the
//! first unvisited line; survivors stay in place (no reordering on a hit or a pass).
//!
//! Zhang et al., "SIEVE is Simpler than LRU: an Efficient Turn-Key Eviction Algorithm for Web
//! Caches", NSDI 2024. Matches libCacheSim's `Sieve.c` (the hand resumes where it stopped and
//! wraps to the tail).
//!
//! Poor fit: it was designed for web-cache traces dominated by one-hit wonders; on block
//! workloads with loops or scans slightly larger than the cache it can trail LRU, and like CLOCK
//! it has no frequency beyond one bit.

use super::{Policy, PolicyKind};
use crate::cache::list::{Table, NIL};

/// The one list's index in the table.
const L: usize = 0;
/// The hand's cursor in the table (it follows the slots through rehashes).
const HAND: usize = 0;

pub struct Sieve {
    capacity: u64,
    table: Table,
}

impl Sieve {
    pub fn new(capacity: u64) -> Sieve {
        Sieve {
            capacity,
            table: Table::new(1, 1, capacity),
        }
    }
}

impl Policy for Sieve {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Sieve
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn len(&self) -> u64 {
        self.table.list(L).len
    }
    fn contains(&self, key: u64) -> bool {
        self.table.find(key) != NIL
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        self.table.slot_mut(i).aux = 1;
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        while self.table.list(L).len >= self.capacity && self.table.list(L).len > 0 {
            let hand = self.table.cursor(HAND);
            let mut i = if hand == NIL {
                self.table.list(L).tail
            } else {
                hand
            };
            loop {
                let n = self.table.slot_mut(i);
                if n.aux == 0 {
                    break;
                }
                n.aux -= 1;
                let p = n.prev;
                i = if p == NIL { self.table.list(L).tail } else { p };
            }
            let prev = self.table.slot(i).prev;
            self.table.set_cursor(HAND, prev);
            self.table.unlink(L, i);
            evicted.push(self.table.remove_at(i));
        }
        let i = self.table.insert(key, 0, 0);
        self.table.push_head(L, i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        if self.table.cursor(HAND) == i {
            let prev = self.table.slot(i).prev;
            self.table.set_cursor(HAND, prev);
        }
        self.table.unlink(L, i);
        self.table.remove_at(i);
        true
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
}
