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
use crate::cache::list::{Table, NIL};

const SEGMENTS: usize = 4;

pub struct Slru {
    capacity: u64,
    /// One list per segment; a node's tag is its segment.
    table: Table,
    max: [u64; SEGMENTS],
}

impl Slru {
    pub fn new(capacity: u64) -> Slru {
        let per = (capacity / SEGMENTS as u64).max(1);
        Slru {
            capacity,
            table: Table::new(SEGMENTS, 0, capacity),
            max: [per; SEGMENTS],
        }
    }

    fn resident(&self) -> u64 {
        self.table.len() as u64
    }

    /// Evicts the LRU line of the lowest non-empty segment.
    fn evict(&mut self, evicted: &mut Vec<u64>) {
        for s in 0..SEGMENTS {
            if let Some(t) = self.table.pop_tail(s) {
                evicted.push(self.table.remove_at(t));
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
        let Some(t) = self.table.pop_tail(id) else {
            return;
        };
        self.table.push_head(id - 1, t);
        self.table.slot_mut(t).tag = (id - 1) as u8;
        while self.table.list(id - 1).len > self.max[id - 1] {
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
        self.resident()
    }
    fn contains(&self, key: u64) -> bool {
        self.table.find(key) != NIL
    }

    fn access(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        let s = self.table.slot(i).tag as usize;
        if s == SEGMENTS - 1 {
            self.table.move_to_head(s, i);
        } else {
            self.table.unlink(s, i);
            self.table.push_head(s + 1, i);
            self.table.slot_mut(i).tag = (s + 1) as u8;
            while self.table.list(s + 1).len > self.max[s + 1] {
                self.cool(s + 1, evicted);
            }
        }
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        while self.resident() + 1 > self.capacity && self.resident() > 0 {
            self.evict(evicted);
        }
        let seg = (0..SEGMENTS)
            .find(|&s| self.table.list(s).len < self.max[s])
            .unwrap_or(0);
        let i = self.table.insert(key, seg as u8, 0);
        self.table.push_head(seg, i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        let s = self.table.slot(i).tag as usize;
        self.table.unlink(s, i);
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
