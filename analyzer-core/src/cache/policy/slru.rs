//! Segmented LRU: the cache is split into LRU segments; a hit promotes a line one segment up,
//! and a full segment demotes its LRU line one segment down. Lines leave from the lowest
//! non-empty segment.
//!
//! Karedla, Love and Wherry, "Caching strategies to improve disk system performance", IEEE
//! Computer 27(3), 1994. Segment count and sizes follow libCacheSim's `SLRU.c` defaults: four
//! segments of `capacity / 4` lines each; a new line goes to the lowest segment with room (so
//! while the cache fills, new lines land in upper segments too), and a promotion that overfills
//! segment 0 through cascading demotions evicts from it even on a hit. Caches of fewer than four
//! lines get one line per segment.
//!
//! Poor fit: fixed segment sizes do not adapt; a workload whose reuse set is bigger than the
//! protected segments behaves like a smaller LRU.

use super::{Policy, PolicyKind};
use crate::cache::list::{Arena, List};
use crate::hash::IntMap;

const SEGMENTS: usize = 4;

pub struct Slru {
    capacity: u64,
    len: u64,
    map: IntMap<u64, u32>,
    arena: Arena,
    segs: [List; SEGMENTS],
    max: [u64; SEGMENTS],
}

impl Slru {
    pub fn new(capacity: u64) -> Slru {
        let n = capacity.min(super::PREALLOC_LINES) as usize;
        let per = (capacity / SEGMENTS as u64).max(1);
        Slru {
            capacity,
            len: 0,
            map: IntMap::with_capacity_and_hasher(n, Default::default()),
            arena: Arena::with_capacity(n),
            segs: [List::default(); SEGMENTS],
            max: [per; SEGMENTS],
        }
    }

    /// Evicts the LRU line of the lowest non-empty segment.
    fn evict(&mut self, evicted: &mut Vec<u64>) {
        for s in 0..SEGMENTS {
            if let Some(t) = self.arena.pop_tail(&mut self.segs[s]) {
                let old = self.arena.get(t).key;
                self.arena.release(t);
                self.map.remove(&old);
                self.len -= 1;
                evicted.push(old);
                return;
            }
        }
    }

    /// Moves the LRU line of segment `id` down to the head of `id - 1`, cascading.
    fn cool(&mut self, id: usize, evicted: &mut Vec<u64>) {
        if id == 0 {
            self.evict(evicted);
            return;
        }
        let Some(t) = self.arena.pop_tail(&mut self.segs[id]) else {
            return;
        };
        self.arena.push_head(&mut self.segs[id - 1], t);
        self.arena.get_mut(t).tag = (id - 1) as u8;
        while self.segs[id - 1].len > self.max[id - 1] {
            self.cool(id - 1, evicted);
        }
    }
}

impl Policy for Slru {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Slru
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn len(&self) -> u64 {
        self.len
    }
    fn contains(&self, key: u64) -> bool {
        self.map.contains_key(&key)
    }

    fn access(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let Some(&i) = self.map.get(&key) else {
            return false;
        };
        let s = self.arena.get(i).tag as usize;
        if s == SEGMENTS - 1 {
            self.arena.move_to_head(&mut self.segs[s], i);
        } else {
            self.arena.unlink(&mut self.segs[s], i);
            self.arena.push_head(&mut self.segs[s + 1], i);
            self.arena.get_mut(i).tag = (s + 1) as u8;
            while self.segs[s + 1].len > self.max[s + 1] {
                self.cool(s + 1, evicted);
            }
        }
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        while self.len + 1 > self.capacity && self.len > 0 {
            self.evict(evicted);
        }
        let seg = (0..SEGMENTS)
            .find(|&s| self.segs[s].len < self.max[s])
            .unwrap_or(0);
        let i = self.arena.alloc(key, seg as u8, 0);
        self.arena.push_head(&mut self.segs[seg], i);
        self.map.insert(key, i);
        self.len += 1;
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let Some(i) = self.map.remove(&key) else {
            return false;
        };
        let s = self.arena.get(i).tag as usize;
        self.arena.unlink(&mut self.segs[s], i);
        self.arena.release(i);
        self.len -= 1;
        true
    }

    fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.map.capacity() * 16
    }
}
