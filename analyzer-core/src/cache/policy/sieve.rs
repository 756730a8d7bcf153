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
use crate::cache::list::{Arena, List, NIL};
use crate::hash::IntMap;

pub struct Sieve {
    capacity: u64,
    map: IntMap<u64, u32>,
    arena: Arena,
    list: List,
    hand: u32,
}

impl Sieve {
    pub fn new(capacity: u64) -> Sieve {
        let n = capacity.min(super::PREALLOC_LINES) as usize;
        Sieve {
            capacity,
            map: IntMap::with_capacity_and_hasher(n, Default::default()),
            arena: Arena::with_capacity(n),
            list: List::default(),
            hand: NIL,
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
        self.list.len
    }
    fn contains(&self, key: u64) -> bool {
        self.map.contains_key(&key)
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        match self.map.get(&key) {
            Some(&i) => {
                self.arena.get_mut(i).aux = 1;
                true
            }
            None => false,
        }
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        while self.list.len >= self.capacity && self.list.len > 0 {
            let mut i = if self.hand == NIL {
                self.list.tail
            } else {
                self.hand
            };
            loop {
                let n = self.arena.get_mut(i);
                if n.aux == 0 {
                    break;
                }
                n.aux -= 1;
                let p = n.prev;
                i = if p == NIL { self.list.tail } else { p };
            }
            self.hand = self.arena.get(i).prev;
            let old = self.arena.get(i).key;
            self.arena.unlink(&mut self.list, i);
            self.arena.release(i);
            self.map.remove(&old);
            evicted.push(old);
        }
        let i = self.arena.alloc(key, 0, 0);
        self.arena.push_head(&mut self.list, i);
        self.map.insert(key, i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        match self.map.remove(&key) {
            Some(i) => {
                if self.hand == i {
                    self.hand = self.arena.get(i).prev;
                }
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
