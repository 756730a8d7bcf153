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
use crate::cache::list::{Arena, List};
use crate::hash::IntMap;

pub struct Lru {
    capacity: u64,
    map: IntMap<u64, u32>,
    arena: Arena,
    list: List,
}

impl Lru {
    pub fn new(capacity: u64) -> Lru {
        let n = capacity.min(super::PREALLOC_LINES) as usize;
        Lru {
            capacity,
            map: IntMap::with_capacity_and_hasher(n, Default::default()),
            arena: Arena::with_capacity(n),
            list: List::default(),
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
        self.list.len
    }
    fn contains(&self, key: u64) -> bool {
        self.map.contains_key(&key)
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        match self.map.get(&key) {
            Some(&i) => {
                self.arena.move_to_head(&mut self.list, i);
                true
            }
            None => false,
        }
    }

    #[inline]
    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        if self.list.len >= self.capacity {
            if let Some(t) = self.arena.pop_tail(&mut self.list) {
                let old = self.arena.get(t).key;
                self.map.remove(&old);
                evicted.push(old);
                // Reuse the victim's node for the newcomer: no allocation on the hot path.
                let n = self.arena.get_mut(t);
                n.key = key;
                self.arena.push_head(&mut self.list, t);
                self.map.insert(key, t);
                return true;
            }
        }
        let i = self.arena.alloc(key, 0, 0);
        self.arena.push_head(&mut self.list, i);
        self.map.insert(key, i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        match self.map.remove(&key) {
            Some(i) => {
                self.arena.unlink(&mut self.list, i);
                self.arena.release(i);
                true
            }
            None => false,
        }
    }

    fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.map.capacity() * 16
    }
}
