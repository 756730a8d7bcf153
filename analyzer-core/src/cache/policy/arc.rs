//! ARC: two LRU lists, T1 (seen once recently) and T2 (seen at least twice), each shadowed by a
//! ghost list of keys it evicted (B1, B2). A ghost hit in B1 grows T1's target size `p`, one in
//! B2 shrinks it, so the cache tunes itself between recency and frequency.
//!
//! Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache", FAST 2003 (Figure 4).
//! As in libCacheSim's current `ARC.c`, the target `p` is a real number (`delta = max(|B2|/|B1|,
//! 1)` without rounding), and case IV only runs its directory upkeep and REPLACE when the cache
//! is full; after
//! invalidations leave room, a new line just enters T1 (ghost lists are still trimmed so the
//! directory stays within 2c).
//!
//! Poor fit: it adapts between two regimes only; workloads with a loop slightly larger than
//! the cache still thrash, and the ghost lists cost memory for up to another c keys.

use super::{Policy, PolicyKind};
use crate::cache::logs::{LogQueues, NIL};

/// Queues.
const T1: usize = 0;
const T2: usize = 1;
const B1: usize = 2;
const B2: usize = 3;

/// The four LRU lists as logs over one table ([`LogQueues`]): a hit appends the line's slot to
/// T2's log and leaves its older entry stale, REPLACE pops T1's or T2's oldest current entry and
/// appends it to a ghost log in the same slot, a ghost hit moves it to T2's. The same decisions
/// as the linked lists of the paper (property tests against the reference in `reference.rs`,
/// with removals), but every list's LRU end is read in order and ahead instead of through a
/// chain of `prev` links.
pub struct Arc {
    capacity: u64,
    /// Target size of T1, in lines (fractional, as in libCacheSim).
    p: f64,
    queues: LogQueues,
}

impl Arc {
    pub fn new(capacity: u64) -> Arc {
        Arc {
            capacity,
            p: 0.0,
            queues: LogQueues::new(4, capacity.saturating_mul(2)),
        }
    }

    fn resident(&self) -> u64 {
        self.queues.len(T1) + self.queues.len(T2)
    }

    /// REPLACE from the paper: demote T1's or T2's LRU line to its ghost list.
    fn replace(&mut self, in_b2: bool, evicted: &mut Vec<u64>) {
        let t1 = self.queues.len(T1) as f64;
        let from_t1 = t1 > 0.0 && (t1 > self.p || (t1 == self.p && in_b2));
        let (src, ghost) = if from_t1 || self.queues.len(T2) == 0 {
            (T1, B1)
        } else {
            (T2, B2)
        };
        if let Some(t) = self.queues.pop_oldest(src) {
            evicted.push(self.queues.key(t));
            self.queues.move_to(t, ghost);
        }
    }
}

impl Policy for Arc {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Arc
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn len(&self) -> u64 {
        self.resident()
    }
    fn contains(&self, key: u64) -> bool {
        let i = self.queues.find(key);
        i != NIL && self.queues.queue(i) <= T2
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.queues.find(key);
        if i == NIL || self.queues.queue(i) > T2 {
            return false;
        }
        self.queues.move_to(i, T2);
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let c = self.capacity;
        let b1 = self.queues.len(B1);
        let b2 = self.queues.len(B2);
        let i = self.queues.find(key);
        if i != NIL {
            let q = self.queues.queue(i);
            if q <= T2 {
                return true;
            }
            // Cases II and III: a ghost hit adapts p, makes room, and the line enters T2. It
            // stays on its ghost list meanwhile, as in the paper (REPLACE only moves lines to
            // ghost lists: it removes nothing from the table, so no slot moves).
            if q == B1 {
                let delta = (b2 as f64 / b1.max(1) as f64).max(1.0);
                self.p = (self.p + delta).min(c as f64);
            } else {
                let delta = (b1 as f64 / b2.max(1) as f64).max(1.0);
                self.p = (self.p - delta).max(0.0);
            }
            self.replace(q == B2, evicted);
            while self.resident() + 1 > c && self.resident() > 0 {
                self.replace(q == B2, evicted);
            }
            self.queues.move_to(i, T2);
            return true;
        }
        // Case IV: a line in no list.
        let t1 = self.queues.len(T1);
        if self.resident() + 1 > c {
            if t1 + b1 + 1 > c {
                if t1 < c {
                    self.queues.forget_oldest(B1);
                    self.replace(false, evicted);
                } else if let Some(k) = self.queues.forget_oldest(T1) {
                    evicted.push(k);
                }
            } else {
                if self.resident() + b1 + b2 >= 2 * c {
                    self.queues.forget_oldest(B2);
                }
                self.replace(false, evicted);
            }
        } else {
            if t1 + b1 + 1 > c && b1 > 0 {
                self.queues.forget_oldest(B1);
            }
            if self.resident() + self.queues.len(B1) + b2 >= 2 * c && b2 > 0 {
                self.queues.forget_oldest(B2);
            }
        }
        self.queues.insert(key, T1, 0);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let i = self.queues.find(key);
        if i == NIL {
            return false;
        }
        let resident = self.queues.queue(i) <= T2;
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
