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
use crate::cache::list::{Arena, List};
use crate::hash::IntMap;

const T1: u8 = 0;
const T2: u8 = 1;
const B1: u8 = 2;
const B2: u8 = 3;

pub struct Arc {
    capacity: u64,
    /// Target size of T1, in lines (fractional, as in libCacheSim).
    p: f64,
    map: IntMap<u64, u32>,
    arena: Arena,
    lists: [List; 4],
}

impl Arc {
    pub fn new(capacity: u64) -> Arc {
        let n = capacity.min(super::PREALLOC_LINES) as usize;
        Arc {
            capacity,
            p: 0.0,
            map: IntMap::with_capacity_and_hasher(n * 2, Default::default()),
            arena: Arena::with_capacity(n * 2),
            lists: [List::default(); 4],
        }
    }

    fn resident(&self) -> u64 {
        self.lists[T1 as usize].len + self.lists[T2 as usize].len
    }

    fn move_to(&mut self, i: u32, to: u8) {
        let from = self.arena.get(i).tag;
        self.arena.unlink(&mut self.lists[from as usize], i);
        self.arena.push_head(&mut self.lists[to as usize], i);
        self.arena.get_mut(i).tag = to;
    }

    /// Forgets the LRU key of a ghost list.
    fn drop_ghost_tail(&mut self, ghost: u8) {
        if let Some(t) = self.arena.pop_tail(&mut self.lists[ghost as usize]) {
            let k = self.arena.get(t).key;
            self.arena.release(t);
            self.map.remove(&k);
        }
    }

    /// REPLACE from the paper: demote T1's or T2's LRU line to its ghost list.
    fn replace(&mut self, in_b2: bool, evicted: &mut Vec<u64>) {
        let t1 = self.lists[T1 as usize].len as f64;
        let from_t1 = t1 > 0.0 && (t1 > self.p || (t1 == self.p && in_b2));
        let (src, ghost) = if from_t1 || self.lists[T2 as usize].is_empty() {
            (T1, B1)
        } else {
            (T2, B2)
        };
        let t = self.lists[src as usize].tail;
        if t == crate::cache::list::NIL {
            return;
        }
        evicted.push(self.arena.get(t).key);
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
        self.map
            .get(&key)
            .is_some_and(|&i| self.arena.get(i).tag <= T2)
    }

    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let Some(&i) = self.map.get(&key) else {
            return false;
        };
        match self.arena.get(i).tag {
            T1 => {
                self.move_to(i, T2);
                true
            }
            T2 => {
                self.arena.move_to_head(&mut self.lists[T2 as usize], i);
                true
            }
            _ => false,
        }
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let c = self.capacity;
        let b1 = self.lists[B1 as usize].len;
        let b2 = self.lists[B2 as usize].len;
        if let Some(&i) = self.map.get(&key) {
            let tag = self.arena.get(i).tag;
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
        let t1 = self.lists[T1 as usize].len;
        if self.resident() + 1 > c {
            if t1 + b1 + 1 > c {
                if t1 < c {
                    self.drop_ghost_tail(B1);
                    self.replace(false, evicted);
                } else if let Some(t) = self.arena.pop_tail(&mut self.lists[T1 as usize]) {
                    let k = self.arena.get(t).key;
                    self.arena.release(t);
                    self.map.remove(&k);
                    evicted.push(k);
                }
            } else {
                if self.resident() + b1 + b2 >= 2 * c {
                    self.drop_ghost_tail(B2);
                }
                self.replace(false, evicted);
            }
        } else {
            if t1 + b1 + 1 > c && b1 > 0 {
                self.drop_ghost_tail(B1);
            }
            if self.resident() + self.lists[B1 as usize].len + b2 >= 2 * c && b2 > 0 {
                self.drop_ghost_tail(B2);
            }
        }
        let i = self.arena.alloc(key, T1, 0);
        self.arena.push_head(&mut self.lists[T1 as usize], i);
        self.map.insert(key, i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let Some(i) = self.map.remove(&key) else {
            return false;
        };
        let tag = self.arena.get(i).tag;
        self.arena.unlink(&mut self.lists[tag as usize], i);
        self.arena.release(i);
        tag <= T2
    }

    fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.map.capacity() * 16
    }
}
