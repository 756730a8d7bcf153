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
use crate::cache::logs::{LogQueues, NIL};

/// Queues.
const SMALL: usize = 0;
const MAIN: usize = 1;
const GHOST: usize = 2;

/// The three FIFOs as logs over one table ([`LogQueues`]): a line's slot holds its queue, its
/// log position and its frequency (capped at [`crate::cache::logs::AUX_MAX`]; the rules below
/// never tell apart counts above 3). Moving a line from small to main or reinserting it in
/// main pops a log's front and appends to main's; a ghost keeps its slot, so a line evicted
/// from small becomes a ghost without leaving the table, and a ghost hit enters main in the same
/// slot. The same decisions as the lists of `S3FIFO.c` (property tests against the reference in
/// `reference.rs`, with removals), but the queues' fronts are read in order and ahead.
pub struct S3Fifo {
    capacity: u64,
    small_max: u64,
    main_max: u64,
    ghost_max: u64,
    has_evicted: bool,
    queues: LogQueues,
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
            queues: LogQueues::new(3, capacity.saturating_add(ghost_max)),
        }
    }

    fn resident(&self) -> u64 {
        self.queues.len(SMALL) + self.queues.len(MAIN)
    }

    fn evict_small(&mut self, evicted: &mut Vec<u64>) {
        while let Some(t) = self.queues.pop_oldest(SMALL) {
            if self.queues.aux(t) >= 2 {
                self.queues.set_aux(t, 0);
                self.queues.move_to(t, MAIN);
            } else {
                evicted.push(self.queues.key(t));
                // The line becomes a ghost in its own slot (the list version drops it and
                // records its key anew: the same bounded FIFO of keys).
                self.queues.set_aux(t, 0);
                self.queues.remember(t, GHOST, self.ghost_max);
                return;
            }
        }
    }

    fn evict_main(&mut self, evicted: &mut Vec<u64>) {
        while let Some(t) = self.queues.pop_oldest(MAIN) {
            let f = self.queues.aux(t);
            if f >= 1 {
                self.queues.set_aux(t, f.min(3) - 1);
                self.queues.move_to(t, MAIN);
            } else {
                evicted.push(self.queues.key(t));
                self.queues.remove_at(t);
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
        let i = self.queues.find(key);
        i != NIL && self.queues.queue(i) != GHOST
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.queues.find(key);
        if i == NIL || self.queues.queue(i) == GHOST {
            return false;
        }
        let f = self.queues.aux(i);
        self.queues.set_aux(i, f.saturating_add(1));
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let i = self.queues.find(key);
        let ghost = if i == NIL {
            false
        } else if self.queues.queue(i) == GHOST {
            // Out of the ghost queue before any eviction (which may trim it), as the list
            // version unlinks it first; it enters main below (found again: the evictions'
            // removals may move its slot).
            self.queues.detach(i);
            true
        } else {
            return true;
        };
        while self.resident() + 1 > self.capacity && self.resident() > 0 {
            self.has_evicted = true;
            if self.queues.len(MAIN) > self.main_max || self.queues.len(SMALL) == 0 {
                self.evict_main(evicted);
            } else {
                self.evict_small(evicted);
            }
        }
        if ghost {
            self.queues.move_to(self.queues.find(key), MAIN);
        } else {
            let to_main = !self.has_evicted && self.queues.len(SMALL) >= self.small_max;
            self.queues
                .insert(key, if to_main { MAIN } else { SMALL }, 0);
        }
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let i = self.queues.find(key);
        if i == NIL {
            return false;
        }
        let resident = self.queues.queue(i) != GHOST;
        self.queues.remove_at(i);
        resident
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.queues.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.queues.heap_bytes()
    }
}
