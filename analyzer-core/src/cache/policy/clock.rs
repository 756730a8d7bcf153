//! CLOCK: FIFO order with a reference bit; a referenced line gets a second chance.
//!
//! Corbató, "A paging experiment with the Multics system" (MIT Project MAC MAC-M-384, 1968).
//! The queue is kept as a list whose tail is under the clock hand: a line found with its bit
//! set has the bit cleared and moves to the head (the hand passes it), as in libCacheSim's
//! `Clock.c` with its default 1-bit counter (`n-bit-counter=1`, new lines start at 0).
//!
//! Poor fit: like LRU it is scan-sensitive, and with one bit it cannot tell a line used twice
//! from one used a thousand times.

use super::{Policy, PolicyKind};
use crate::cache::list::{Arena, List};
use crate::hash::IntMap;

pub struct Clock {
    capacity: u64,
    max_freq: u32,
    map: IntMap<u64, u32>,
    arena: Arena,
    list: List,
}

impl Clock {
    /// A CLOCK with a `bits`-bit reference counter (1 is the classic CLOCK).
    pub fn new(capacity: u64, bits: u32) -> Clock {
        let n = capacity.min(super::PREALLOC_LINES) as usize;
        Clock {
            capacity,
            max_freq: (1u32 << bits.clamp(1, 8)) - 1,
            map: IntMap::with_capacity_and_hasher(n, Default::default()),
            arena: Arena::with_capacity(n),
            list: List::default(),
        }
    }
}

impl Policy for Clock {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Clock
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
                let n = self.arena.get_mut(i);
                if n.aux < self.max_freq {
                    n.aux += 1;
                }
                true
            }
            None => false,
        }
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        while self.list.len >= self.capacity {
            let t = self.list.tail;
            let n = self.arena.get_mut(t);
            if n.aux >= 1 {
                n.aux -= 1;
                self.arena.move_to_head(&mut self.list, t);
                continue;
            }
            let old = n.key;
            self.arena.unlink(&mut self.list, t);
            self.arena.release(t);
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
