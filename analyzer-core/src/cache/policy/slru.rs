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
use crate::cache::logs::{LogQueues, NIL};

const SEGMENTS: usize = 4;

/// The segments as LRU logs over one table ([`LogQueues`], as ARC keeps its lists): a hit or a
/// promotion appends to a segment's log, a demotion pops one log's front and appends to the
/// next one down. Property-tested against the reference in `reference.rs`.
pub struct Slru {
    capacity: u64,
    /// One queue per segment.
    queues: LogQueues,
    max: [u64; SEGMENTS],
}

impl Slru {
    pub fn new(capacity: u64) -> Slru {
        let per = (capacity / SEGMENTS as u64).max(1);
        Slru {
            capacity,
            queues: LogQueues::new(SEGMENTS, capacity),
            max: [per; SEGMENTS],
        }
    }

    fn resident(&self) -> u64 {
        (0..SEGMENTS).map(|s| self.queues.len(s)).sum()
    }

    /// Evicts the LRU line of the lowest non-empty segment.
    fn evict(&mut self, evicted: &mut Vec<u64>) {
        for s in 0..SEGMENTS {
            if let Some(k) = self.queues.forget_oldest(s) {
                evicted.push(k);
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
        let Some(t) = self.queues.pop_oldest(id) else {
            return;
        };
        self.queues.move_to(t, id - 1);
        while self.queues.len(id - 1) > self.max[id - 1] {
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
        self.queues.find(key) != NIL
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let i = self.queues.find(key);
        if i == NIL {
            return false;
        }
        let s = self.queues.queue(i);
        if s == SEGMENTS - 1 {
            self.queues.move_to(i, s);
        } else {
            self.queues.move_to(i, s + 1);
            while self.queues.len(s + 1) > self.max[s + 1] {
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
            .find(|&s| self.queues.len(s) < self.max[s])
            .unwrap_or(0);
        self.queues.insert(key, seg, 0);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let i = self.queues.find(key);
        if i == NIL {
            return false;
        }
        self.queues.remove_at(i);
        true
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.queues.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.queues.heap_bytes()
    }
}
