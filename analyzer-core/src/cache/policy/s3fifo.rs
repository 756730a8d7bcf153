//! S3-FIFO: a small FIFO (10%) filters one-hit wonders, a main FIFO (90%) with a 2-bit counter
//! keeps lines with reuse, and a ghost FIFO (keys only, 90% of the capacity) sends lines evicted
//! from the small queue straight to main when they come back.
//!
//! Yang et al., "FIFO queues are all you need for cache eviction", SOSP 2023. Details follow
//! libCacheSim's `S3FIFO.c` (the current version, not `S3FIFOv0.c`): a line leaves the small
//! queue for main when it was hit at least twice there (`move-to-main-threshold=2`), main
//! reinserts a line with `min(freq, 3) - 1`, and until the first eviction a full small queue
//! sends new lines to main. Deviation: libCacheSim refuses to insert an object as large as the
//! small queue, which with one-line objects means caches under 20 lines never cache anything;
//! here the small queue has at least one line instead. From 20 lines up the two agree exactly.
//!
//! Poor fit: workloads whose reuse comes only after a long gap (reuse distance well beyond the
//! ghost's reach) look like one-hit wonders and never reach main; LRU or ARC do better there.

use super::{Policy, PolicyKind};
use crate::cache::list::{Arena, List};
use crate::hash::IntMap;

const SMALL: u8 = 0;
const MAIN: u8 = 1;
const GHOST: u8 = 2;

pub struct S3Fifo {
    capacity: u64,
    small_max: u64,
    main_max: u64,
    ghost_max: u64,
    has_evicted: bool,
    map: IntMap<u64, u32>,
    arena: Arena,
    small: List,
    main: List,
    ghost: List,
}

impl S3Fifo {
    pub fn new(capacity: u64) -> S3Fifo {
        let n = capacity.min(super::PREALLOC_LINES) as usize;
        let small_max = ((capacity as f64 * 0.1) as u64).max(1);
        S3Fifo {
            capacity,
            small_max,
            main_max: capacity.saturating_sub(small_max),
            ghost_max: (capacity as f64 * 0.9) as u64,
            has_evicted: false,
            map: IntMap::with_capacity_and_hasher(n * 2, Default::default()),
            arena: Arena::with_capacity(n * 2),
            small: List::default(),
            main: List::default(),
            ghost: List::default(),
        }
    }

    fn resident(&self) -> u64 {
        self.small.len + self.main.len
    }

    fn drop_node(&mut self, i: u32) -> u64 {
        let k = self.arena.get(i).key;
        self.arena.release(i);
        self.map.remove(&k);
        k
    }

    fn remember(&mut self, key: u64) {
        if self.ghost_max == 0 {
            return;
        }
        while self.ghost.len >= self.ghost_max {
            if let Some(t) = self.arena.pop_tail(&mut self.ghost) {
                self.drop_node(t);
            }
        }
        let i = self.arena.alloc(key, GHOST, 0);
        self.arena.push_head(&mut self.ghost, i);
        self.map.insert(key, i);
    }

    fn evict_small(&mut self, evicted: &mut Vec<u64>) {
        while let Some(t) = self.arena.pop_tail(&mut self.small) {
            if self.arena.get(t).aux >= 2 {
                let n = self.arena.get_mut(t);
                n.tag = MAIN;
                n.aux = 0;
                self.arena.push_head(&mut self.main, t);
            } else {
                let k = self.drop_node(t);
                evicted.push(k);
                self.remember(k);
                return;
            }
        }
    }

    fn evict_main(&mut self, evicted: &mut Vec<u64>) {
        while let Some(t) = self.arena.pop_tail(&mut self.main) {
            let f = self.arena.get(t).aux;
            if f >= 1 {
                self.arena.get_mut(t).aux = f.min(3) - 1;
                self.arena.push_head(&mut self.main, t);
            } else {
                let k = self.drop_node(t);
                evicted.push(k);
                return;
            }
        }
    }
}

impl Policy for S3Fifo {
    fn kind(&self) -> PolicyKind {
        PolicyKind::S3Fifo
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn len(&self) -> u64 {
        self.resident()
    }
    fn contains(&self, key: u64) -> bool {
        self.map
            .get(&key)
            .is_some_and(|&i| self.arena.get(i).tag != GHOST)
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let Some(&i) = self.map.get(&key) else {
            return false;
        };
        let n = self.arena.get_mut(i);
        if n.tag == GHOST {
            return false;
        }
        n.aux = n.aux.saturating_add(1);
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let ghost = match self.map.get(&key) {
            Some(&i) if self.arena.get(i).tag == GHOST => {
                self.arena.unlink(&mut self.ghost, i);
                self.drop_node(i);
                true
            }
            Some(_) => return true,
            None => false,
        };
        while self.resident() + 1 > self.capacity && self.resident() > 0 {
            self.has_evicted = true;
            if self.main.len > self.main_max || self.small.is_empty() {
                self.evict_main(evicted);
            } else {
                self.evict_small(evicted);
            }
        }
        let to_main = ghost || (!self.has_evicted && self.small.len >= self.small_max);
        let i = self.arena.alloc(key, if to_main { MAIN } else { SMALL }, 0);
        if to_main {
            self.arena.push_head(&mut self.main, i);
        } else {
            self.arena.push_head(&mut self.small, i);
        }
        self.map.insert(key, i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let Some(&i) = self.map.get(&key) else {
            return false;
        };
        let tag = self.arena.get(i).tag;
        match tag {
            SMALL => self.arena.unlink(&mut self.small, i),
            MAIN => self.arena.unlink(&mut self.main, i),
            _ => self.arena.unlink(&mut self.ghost, i),
        }
        self.drop_node(i);
        tag != GHOST
    }

    fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.map.capacity() * 16
    }
}
