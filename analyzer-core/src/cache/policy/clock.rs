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
use crate::cache::list::{Table, NIL};

/// The one list's index in the table.
const L: usize = 0;

pub struct Clock {
    capacity: u64,
    max_freq: u32,
    table: Table,
}

impl Clock {
    /// A CLOCK with a `bits`-bit reference counter (1 is the classic CLOCK).
    pub fn new(capacity: u64, bits: u32) -> Clock {
        Clock {
            capacity,
            max_freq: (1u32 << bits.clamp(1, 8)) - 1,
            table: Table::new(1, capacity),
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
        self.table.list(L).len
    }
    fn contains(&self, key: u64) -> bool {
        self.table.find(key) != NIL
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        let n = self.table.slot_mut(i);
        if n.aux < self.max_freq {
            n.aux += 1;
        }
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        while self.table.list(L).len >= self.capacity {
            let t = self.table.list(L).tail;
            let n = self.table.slot_mut(t);
            if n.aux >= 1 {
                n.aux -= 1;
                self.table.move_to_head(L, t);
                continue;
            }
            self.table.unlink(L, t);
            evicted.push(self.table.remove_at(t));
        }
        let i = self.table.insert(key, 0, 0);
        self.table.push_head(L, i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        self.table.remove_key(L, key)
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
}
