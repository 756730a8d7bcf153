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
use crate::cache::list::{Arena, List};
use crate::hash::IntMap;

pub struct Fifo {
    capacity: u64,
    map: IntMap<u64, u32>,
    arena: Arena,
    list: List,
}

impl Fifo {
    pub fn new(capacity: u64) -> Fifo {
        let n = capacity.min(super::PREALLOC_LINES) as usize;
        Fifo {
            capacity,
            map: IntMap::with_capacity_and_hasher(n, Default::default()),
            arena: Arena::with_capacity(n),
            list: List::default(),
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
        self.list.len
    }
    fn contains(&self, key: u64) -> bool {
        self.map.contains_key(&key)
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        self.map.contains_key(&key)
    }

    #[inline]
    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        if self.list.len >= self.capacity {
            if let Some(t) = self.arena.pop_tail(&mut self.list) {
                let old = self.arena.get(t).key;
                self.map.remove(&old);
                evicted.push(old);
                self.arena.get_mut(t).key = key;
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
