//! Belady's MIN: evict the line whose next use lies furthest in the future. Offline and optimal
//! for hit count, so it is the upper bound every online policy is measured against.
//!
//! Belady, "A study of replacement algorithms for a virtual-storage computer", IBM Systems
//! Journal 5(2), 1966. Like libCacheSim's `Belady.c`, every miss is inserted (no bypass) and the
//! victim is chosen among the resident lines before the newcomer enters.
//!
//! Future knowledge comes from a [`crate::cache::NextUse`] built in a first pass over the same
//! events (see `cache/future.rs`): for every line access, the index of the next access to that
//! line. Lines never used again go first.
//!
//! Poor fit: it is not a policy you can buy. Use it as the ceiling: if Belady at a size barely
//! beats LRU, no smarter policy will help and only more capacity will.

use std::collections::BinaryHeap;

use super::{Policy, PolicyKind};
use crate::cache::future::NEVER;
use crate::hash::IntMap;

pub struct Belady {
    capacity: u64,
    next_use: Vec<u64>,
    /// Resident line -> its next use.
    map: IntMap<u64, u64>,
    /// (next use, line) for resident lines, plus stale entries skipped lazily.
    heap: BinaryHeap<(u64, u64)>,
}

impl Belady {
    pub fn new(capacity: u64, next_use: Vec<u64>) -> Belady {
        let n = capacity.min(super::PREALLOC_LINES) as usize;
        Belady {
            capacity,
            next_use,
            map: IntMap::with_capacity_and_hasher(n, Default::default()),
            heap: BinaryHeap::with_capacity(n),
        }
    }

    fn next_after(&self, now: u64) -> u64 {
        usize::try_from(now)
            .ok()
            .and_then(|i| self.next_use.get(i))
            .copied()
            .unwrap_or(NEVER)
    }

    fn push(&mut self, next: u64, key: u64) {
        self.heap.push((next, key));
        if self.heap.len() > 2 * self.map.len() + 1024 {
            let map = &self.map;
            self.heap.retain(|&(t, k)| map.get(&k) == Some(&t));
        }
    }
}

impl Policy for Belady {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Belady
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn len(&self) -> u64 {
        self.map.len() as u64
    }
    fn contains(&self, key: u64) -> bool {
        self.map.contains_key(&key)
    }

    fn access(&mut self, key: u64, now: u64, _evicted: &mut Vec<u64>) -> bool {
        if !self.map.contains_key(&key) {
            return false;
        }
        let next = self.next_after(now);
        self.map.insert(key, next);
        self.push(next, key);
        true
    }

    fn insert(&mut self, key: u64, now: u64, evicted: &mut Vec<u64>) -> bool {
        if self.map.contains_key(&key) {
            return true;
        }
        while self.map.len() as u64 >= self.capacity {
            let Some((t, k)) = self.heap.pop() else { break };
            if self.map.get(&k) == Some(&t) {
                self.map.remove(&k);
                evicted.push(k);
            }
        }
        let next = self.next_after(now);
        self.map.insert(key, next);
        self.push(next, key);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        self.map.remove(&key).is_some()
    }

    fn heap_bytes(&self) -> usize {
        self.next_use.capacity() * 8 + self.map.capacity() * 24 + self.heap.capacity() * 16
    }
}
