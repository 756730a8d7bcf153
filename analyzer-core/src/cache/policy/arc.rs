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
use crate::cache::list::{Table, NIL};

/// Lists (and tags) in the table.
const T1: u8 = 0;
const T2: u8 = 1;
const B1: u8 = 2;
const B2: u8 = 3;

pub struct Arc {
    capacity: u64,
    /// Target size of T1, in lines (fractional, as in libCacheSim).
    p: f64,
    table: Table,
}

impl Arc {
    pub fn new(capacity: u64) -> Arc {
        Arc {
            capacity,
            p: 0.0,
            table: Table::new(4, 0, capacity.saturating_mul(2)),
        }
    }

    fn len_of(&self, l: u8) -> u64 {
        self.table.list(l as usize).len
    }

    fn resident(&self) -> u64 {
        self.len_of(T1) + self.len_of(T2)
    }

    fn move_to(&mut self, i: u32, to: u8) {
        let from = self.table.slot(i).tag;
        self.table.unlink(from as usize, i);
        self.table.push_head(to as usize, i);
        self.table.slot_mut(i).tag = to;
    }

    /// REPLACE from the paper: demote T1's or T2's LRU line to its ghost list.
    fn replace(&mut self, in_b2: bool, evicted: &mut Vec<u64>) {
        let t1 = self.len_of(T1) as f64;
        let from_t1 = t1 > 0.0 && (t1 > self.p || (t1 == self.p && in_b2));
        let (src, ghost) = if from_t1 || self.len_of(T2) == 0 {
            (T1, B1)
        } else {
            (T2, B2)
        };
        let t = self.table.list(src as usize).tail;
        if t == NIL {
            return;
        }
        evicted.push(self.table.slot(t).key);
        self.move_to(t, ghost);
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
        let i = self.table.find(key);
        i != NIL && self.table.slot(i).tag <= T2
    }

    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        match self.table.slot(i).tag {
            T1 => {
                self.move_to(i, T2);
                true
            }
            T2 => {
                self.table.move_to_head(T2 as usize, i);
                true
            }
            _ => false,
        }
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let c = self.capacity;
        let b1 = self.len_of(B1);
        let b2 = self.len_of(B2);
        let i = self.table.find(key);
        if i != NIL {
            let tag = self.table.slot(i).tag;
            if tag <= T2 {
                return true;
            }
            // Cases II and III: a ghost hit adapts p, makes room, and the line enters T2.
            if tag == B1 {
                let delta = (b2 as f64 / b1.max(1) as f64).max(1.0);
                self.p = (self.p + delta).min(c as f64);
            } else {
                let delta = (b1 as f64 / b2.max(1) as f64).max(1.0);
                self.p = (self.p - delta).max(0.0);
            }
            self.replace(tag == B2, evicted);
            while self.resident() + 1 > c && self.resident() > 0 {
                self.replace(tag == B2, evicted);
            }
            self.move_to(i, T2);
            return true;
        }
        // Case IV: a line in no list.
        let t1 = self.len_of(T1);
        if self.resident() + 1 > c {
            if t1 + b1 + 1 > c {
                if t1 < c {
                    self.table.forget_oldest(B1 as usize);
                    self.replace(false, evicted);
                } else if let Some(k) = self.table.forget_oldest(T1 as usize) {
                    evicted.push(k);
                }
            } else {
                if self.resident() + b1 + b2 >= 2 * c {
                    self.table.forget_oldest(B2 as usize);
                }
                self.replace(false, evicted);
            }
        } else {
            if t1 + b1 + 1 > c && b1 > 0 {
                self.table.forget_oldest(B1 as usize);
            }
            if self.resident() + self.len_of(B1) + b2 >= 2 * c && b2 > 0 {
                self.table.forget_oldest(B2 as usize);
            }
        }
        let i = self.table.insert(key, T1, 0);
        self.table.push_head(T1 as usize, i);
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
        tag <= T2
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
}
