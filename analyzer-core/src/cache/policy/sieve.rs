//! SIEVE: a FIFO queue with a visited bit and a hand that sweeps from old to new, evicting the
//! first unvisited line; survivors stay in place (no reordering on a hit or a pass).
//!
//! Zhang et al., "SIEVE is Simpler than LRU: an Efficient Turn-Key Eviction Algorithm for Web
//! Caches", NSDI 2024. Matches libCacheSim's `Sieve.c` (the hand resumes where it stopped and
//! wraps to the tail).
//!
//! Poor fit: it was designed for web-cache traces dominated by one-hit wonders; on block
//! workloads with loops or scans slightly larger than the cache it can trail LRU, and like CLOCK
//! it has no frequency beyond one bit.

use super::{Policy, PolicyKind};
use crate::cache::list::{renumber_slot, PosSlot, PosTable, NIL_SLOT, PENDING};

/// The queue in an array, oldest first: each line's slot, appended on insertion. A line's
/// slot holds its index here (with its visited bit), so an entry is current when the slot it
/// names holds that index; an evicted or removed line's entry stays until the queue is
/// compacted. The hand is an index that moves towards the newest end and wraps to the oldest.
///
/// The same decisions as the linked list the paper describes (the property test below runs a
/// list beside it), but the hand's sweep reads the queue in order and the slots it will visit
/// are known, so they are read ahead ([`SWEEP_AHEAD`]), where a list's sweep follows one
/// `prev` link after another to slots inserted long ago, a memory load at a time.
pub struct Sieve {
    capacity: u64,
    table: PosTable,
    queue: Vec<u32>,
    /// Index into `queue` where the next sweep starts (0 when it starts at the oldest).
    hand: usize,
    /// Entries of `queue` that are no longer current.
    stale: usize,
}

/// The visited bit, kept in the slot's position.
const VISITED: u64 = 1 << 62;

/// Queue entries read ahead of the hand.
const SWEEP_AHEAD: usize = 16;

impl Sieve {
    pub fn new(capacity: u64) -> Sieve {
        Sieve {
            capacity,
            table: PosTable::new(capacity),
            queue: Vec::new(),
            hand: 0,
            stale: 0,
        }
    }

    /// Whether `queue[j]` is its line's entry (the line is resident and placed there).
    #[inline]
    fn is_current(&self, j: usize) -> bool {
        let slot = self.queue[j];
        self.table
            .slots
            .get(slot as usize)
            .is_some_and(|s| s.pos < PENDING && s.pos & !VISITED == j as u64)
    }

    /// Moves the hand to the first current entry at or after it, or to the oldest end when
    /// there is none (as the list's hand becomes "none" past the newest line).
    fn settle_hand(&mut self) {
        while self.hand < self.queue.len() && !self.is_current(self.hand) {
            self.hand += 1;
        }
        if self.hand >= self.queue.len() {
            self.hand = 0;
        }
    }

    /// Evicts the first unvisited line from the hand on, clearing visited bits on the way.
    fn evict(&mut self) -> Option<u64> {
        if self.table.live == 0 {
            return None;
        }
        let mut j = self.hand;
        loop {
            if j >= self.queue.len() {
                j = 0;
            }
            if let Some(&ahead) = self.queue.get(j + SWEEP_AHEAD) {
                crate::prefetch::ahead(&self.table.slots, ahead as usize);
            }
            if self.is_current(j) {
                let slot = self.queue[j] as usize;
                let s = &mut self.table.slots[slot];
                if s.pos & VISITED == 0 {
                    let key = s.key;
                    self.remove_at(slot);
                    self.stale += 1;
                    self.hand = j + 1;
                    self.settle_hand();
                    return Some(key);
                }
                s.pos &= !VISITED;
            }
            j += 1;
        }
    }

    /// Removes the line in `slot` from the table (its queue entry goes stale); the lines the
    /// table moves keep their entries, which now name their new slots.
    #[inline]
    fn remove_at(&mut self, slot: usize) {
        let queue = &mut self.queue;
        self.table.remove_at(slot, |pos, to| {
            if let Some(entry) = queue.get_mut((pos & !VISITED) as usize) {
                *entry = to as u32;
            }
        });
    }

    /// Drops the stale entries, keeping the current ones in order and the hand on its entry.
    fn compact(&mut self) {
        let mut kept = 0;
        let mut hand = 0;
        for j in 0..self.queue.len() {
            if let Some(&ahead) = self.queue.get(j + SWEEP_AHEAD) {
                crate::prefetch::ahead(&self.table.slots, ahead as usize);
            }
            if j == self.hand {
                hand = kept;
            }
            if self.is_current(j) {
                let slot = self.queue[j];
                let s = &mut self.table.slots[slot as usize];
                s.pos = (s.pos & VISITED) | kept as u64;
                self.queue[kept] = slot;
                kept += 1;
            }
        }
        self.queue.truncate(kept);
        self.hand = if hand >= kept { 0 } else { hand };
        self.stale = 0;
    }
}

impl Policy for Sieve {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Sieve
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn len(&self) -> u64 {
        self.table.live as u64
    }
    fn contains(&self, key: u64) -> bool {
        self.table.find(key) != NIL_SLOT
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        if i == NIL_SLOT {
            return false;
        }
        self.table.slots[i].pos |= VISITED;
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        while self.table.live as u64 >= self.capacity {
            match self.evict() {
                Some(k) => evicted.push(k),
                None => break,
            }
        }
        if self.stale > self.table.live.max(64) {
            self.compact();
        }
        let queue = &mut self.queue;
        let i = self.table.insert(key, &mut |renumber| {
            for slot in queue.iter_mut() {
                *slot = renumber_slot(renumber, *slot);
            }
        });
        self.table.slots[i].pos = self.queue.len() as u64;
        self.queue.push(i as u32);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let i = self.table.find(key);
        if i == NIL_SLOT {
            return false;
        }
        let at_hand = self.queue.get(self.hand) == Some(&(i as u32)) && self.is_current(self.hand);
        self.remove_at(i);
        self.stale += 1;
        if at_hand {
            self.settle_hand();
        }
        true
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.table.slots.capacity() * std::mem::size_of::<PosSlot>()
            + self.queue.capacity() * std::mem::size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// SIEVE as the paper draws it, in a vector: index 0 is the oldest line, the hand an index
    /// moving towards newer ones, `None` meaning "start at the oldest". Removing a line moves a
    /// hand that was on it to the next newer line, as a list's `prev` would.
    struct ListSieve {
        capacity: usize,
        lines: Vec<(u64, bool)>,
        hand: Option<usize>,
    }

    impl ListSieve {
        fn access(&mut self, k: u64) -> bool {
            match self.lines.iter_mut().find(|e| e.0 == k) {
                Some(e) => {
                    e.1 = true;
                    true
                }
                None => false,
            }
        }

        fn insert(&mut self, k: u64, evicted: &mut Vec<u64>) {
            while self.lines.len() >= self.capacity && !self.lines.is_empty() {
                let mut i = self.hand.unwrap_or(0);
                while self.lines[i].1 {
                    self.lines[i].1 = false;
                    i = (i + 1) % self.lines.len();
                }
                evicted.push(self.lines.remove(i).0);
                self.hand = (i < self.lines.len()).then_some(i);
            }
            self.lines.push((k, false));
        }

        fn remove(&mut self, k: u64) -> bool {
            let Some(r) = self.lines.iter().position(|e| e.0 == k) else {
                return false;
            };
            self.lines.remove(r);
            self.hand = match self.hand {
                Some(h) if h == r => (r < self.lines.len()).then_some(r),
                Some(h) if h > r => Some(h - 1),
                other => other,
            };
            true
        }
    }

    /// Removing the line under the hand when no newer line is resident sends the hand to the
    /// oldest line, not to lines inserted afterwards.
    #[test]
    fn removing_the_hands_line_with_nothing_newer_wraps_the_hand() {
        let mut sieve = Sieve::new(3);
        let mut ev = Vec::new();
        for k in [1, 2, 3] {
            sieve.insert(k, 0, &mut ev);
        }
        assert!(sieve.access(1, 0, &mut ev));
        sieve.insert(4, 0, &mut ev);
        assert_eq!(ev, vec![2], "1 was visited: 2 goes, the hand rests on 3");
        assert!(sieve.remove(4) && sieve.remove(3));
        sieve.insert(5, 0, &mut ev);
        sieve.insert(6, 0, &mut ev);
        sieve.insert(7, 0, &mut ev);
        assert_eq!(ev, vec![2, 1], "the sweep starts at the oldest line, 1");
    }

    proptest! {
        /// Long runs with removals, over few keys (many hits: the sweep clears bits and
        /// wraps) and many (many evictions: the queue compacted and the table rebuilt under
        /// it): the same hits, evictions and removals as the list.
        #[test]
        fn the_queue_sweeps_as_the_list_does(
            ops in proptest::collection::vec((0u64..1u64 << 40, 0u64..200, 0u8..10), 0..3000),
            wide in proptest::bool::ANY,
            capacity in 1u64..120,
        ) {
            let mut list = ListSieve { capacity: capacity as usize, lines: Vec::new(), hand: None };
            let mut sieve = Sieve::new(capacity);
            for (big, small, op) in ops {
                let k = if wide { big % 4000 } else { small };
                if op == 0 {
                    prop_assert_eq!(list.remove(k), sieve.remove(k));
                    continue;
                }
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let hit = list.access(k);
                prop_assert_eq!(hit, sieve.access(k, 0, &mut b));
                if !hit {
                    list.insert(k, &mut a);
                    sieve.insert(k, 0, &mut b);
                }
                prop_assert_eq!(a, b);
                prop_assert_eq!(list.lines.len() as u64, sieve.len());
            }
        }
    }
}
