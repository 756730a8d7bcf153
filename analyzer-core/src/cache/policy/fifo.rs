//! FIFO: evict the line that entered the cache first; hits change nothing.
//!
//! The oldest replacement rule (Belady, "A study of replacement algorithms for a virtual-storage
//! computer", IBM Systems Journal 5(2), 1966, studies it alongside MIN). Matches libCacheSim's
//! `FIFO.c`. Hardware and log-structured flash caches use it because a hit costs no metadata
//! write.
//!
//! Poor fit: a hot line is evicted on schedule however often it is hit, so FIFO trails LRU on
//! workloads with a stable hot set; it is also scan-sensitive.

use super::{Policy, PolicyKind};
use crate::cache::list::{Table, NIL};

/// The one list's index in the table.
const L: usize = 0;

pub struct Fifo {
    capacity: u64,
    table: Table,
}

impl Fifo {
    pub fn new(capacity: u64) -> Fifo {
        Fifo {
            capacity,
            table: Table::new(1, capacity),
        }
    }
}

impl Policy for Fifo {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Fifo
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
        self.table.find(key) != NIL
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

    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
}
