//! LRU: evict the line whose last use is oldest.
//!
//! The classic recency policy (Mattson et al., "Evaluation techniques for storage hierarchies",
//! IBM Systems Journal 9(2), 1970, which also gives the stack property the exact MRC relies on).
//! Matches libCacheSim's `LRU.c`.
//!
//! Poor fit: scans and loops larger than the cache flush it completely (a backup or a full-table
//! scan evicts the whole working set), and it ignores frequency, so one-hit wonders displace
//! lines that are used over and over at longer intervals.

use super::{Policy, PolicyKind};
use crate::cache::list::{Table, NIL};

/// The one list's index in the table.
const L: usize = 0;

pub struct Lru {
    capacity: u64,
    table: Table,
}

impl Lru {
    pub fn new(capacity: u64) -> Lru {
        Lru {
            capacity,
            table: Table::new(1, 0, capacity),
        }
    }
}

impl Policy for Lru {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Lru
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
        self.table.move_to_head(L, i);
        true
    }

    #[inline]
    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        if self.table.list(L).len >= self.capacity {
            if let Some(t) = self.table.pop_tail(L) {
                evicted.push(self.table.remove_at(t));
            }
        }
        let i = self.table.insert(key, 0, 0);
        self.table.push_head(L, i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        self.table.remove_key(L, key)
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    #[inline]
    fn prefetch_links(&self, key: u64) {
        self.table.prefetch_links(key);
    }

    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
}
