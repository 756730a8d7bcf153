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
use crate::cache::list::{Table, NIL};

/// Lists (and tags) in the table.
const SMALL: u8 = 0;
const MAIN: u8 = 1;
const GHOST: u8 = 2;

pub struct S3Fifo {
    capacity: u64,
    small_max: u64,
    main_max: u64,
    ghost_max: u64,
    has_evicted: bool,
    table: Table,
}

impl S3Fifo {
    pub fn new(capacity: u64) -> S3Fifo {
        let small_max = ((capacity as f64 * 0.1) as u64).max(1);
        let ghost_max = (capacity as f64 * 0.9) as u64;
        S3Fifo {
            capacity,
            small_max,
            main_max: capacity.saturating_sub(small_max),
            ghost_max,
            has_evicted: false,
            table: Table::new(3, 0, capacity.saturating_add(ghost_max)),
        }
    }

    fn len_of(&self, l: u8) -> u64 {
        self.table.list(l as usize).len
    }

    fn resident(&self) -> u64 {
        self.len_of(SMALL) + self.len_of(MAIN)
    }

    fn evict_small(&mut self, evicted: &mut Vec<u64>) {
        while let Some(t) = self.table.pop_tail(SMALL as usize) {
            if self.table.slot(t).aux >= 2 {
                let n = self.table.slot_mut(t);
                n.tag = MAIN;
                n.aux = 0;
                self.table.push_head(MAIN as usize, t);
            } else {
                let k = self.table.remove_at(t);
                evicted.push(k);
                self.table
                    .remember(GHOST as usize, k, GHOST, self.ghost_max);
                return;
            }
        }
    }

    fn evict_main(&mut self, evicted: &mut Vec<u64>) {
        while let Some(t) = self.table.pop_tail(MAIN as usize) {
            let f = self.table.slot(t).aux;
            if f >= 1 {
                self.table.slot_mut(t).aux = f.min(3) - 1;
                self.table.push_head(MAIN as usize, t);
            } else {
                evicted.push(self.table.remove_at(t));
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
        let i = self.table.find(key);
        i != NIL && self.table.slot(i).tag != GHOST
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        let n = self.table.slot_mut(i);
        if n.tag == GHOST {
            return false;
        }
        n.aux = n.aux.saturating_add(1);
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        let ghost = if i == NIL {
            false
        } else if self.table.slot(i).tag == GHOST {
            self.table.unlink(GHOST as usize, i);
            self.table.remove_at(i);
            true
        } else {
            return true;
        };
        while self.resident() + 1 > self.capacity && self.resident() > 0 {
            self.has_evicted = true;
            if self.len_of(MAIN) > self.main_max || self.len_of(SMALL) == 0 {
                self.evict_main(evicted);
            } else {
                self.evict_small(evicted);
            }
        }
        let to_main = ghost || (!self.has_evicted && self.len_of(SMALL) >= self.small_max);
        let to = if to_main { MAIN } else { SMALL };
        let i = self.table.insert(key, to, 0);
        self.table.push_head(to as usize, i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        let tag = self.table.slot(i).tag;
        self.table.unlink(tag as usize, i);
        self.table.remove_at(i);
        tag != GHOST
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
}
