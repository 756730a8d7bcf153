//! LRU stack distances in O(log M) per access: the engine behind the exact miss-ratio curve and
//! SHARDS.
//!
//! Every key has one mark at the position (logical time) of its latest access. The stack distance
//! of an access is one plus the number of marks after the key's previous mark: the distinct keys
//! touched since. Marks live in a bitset with a Fenwick tree over the popcounts of its 64-bit
//! words, so a query costs one popcount plus a Fenwick walk over `positions / 64` entries (small
//! enough to stay in the CPU cache for millions of keys).
//!
//! Positions grow with every access; when they run out the live marks are renumbered 0..M in
//! order (compaction) and the capacity set to a multiple of M. Memory is therefore proportional
//! to the number of distinct keys M, never to the number of accesses N, and the amortised cost
//! stays O(log M) per access.
//!
//! Keys map to dense slot numbers once (one hash lookup per access); compaction walks the
//! position → slot array and rewrites the slot → position array without touching the hash map.

use crate::hash::IntMap;

/// Smallest position capacity (a multiple of 64).
const MIN_CAPACITY: usize = 1 << 12;

/// Capacity after compaction, as a multiple of the live keys: higher means rarer compactions
/// and more memory (4 bytes per position).
const CAPACITY_FACTOR: usize = 3;

const NO_SLOT: u32 = u32::MAX;

/// Computes LRU stack distances for a stream of `u64` keys.
#[derive(Debug, Default)]
pub struct StackDistance {
    slot_of: IntMap<u64, u32>,
    /// Position of each slot's latest access.
    pos_of_slot: Vec<u32>,
    /// Slot whose latest access is at each position (`NO_SLOT` for stale positions).
    slot_at_pos: Vec<u32>,
    free_slots: Vec<u32>,
    /// Live marks, one bit per position.
    words: Vec<u64>,
    /// Fenwick tree (1-based) over `words[i].count_ones()`.
    tree: Vec<u32>,
    next_pos: usize,
    live: usize,
    /// Position capacity never shrinks below this (0: [`MIN_CAPACITY`]).
    min_capacity: usize,
}

impl StackDistance {
    pub fn new() -> StackDistance {
        StackDistance::with_min_capacity(MIN_CAPACITY)
    }

    /// A stack whose position array starts (and stays at least) `min_capacity` long: many small
    /// stacks (one per device, `analysis::devices`) then cost little each.
    pub fn with_min_capacity(min_capacity: usize) -> StackDistance {
        let min_capacity = min_capacity.max(64);
        let mut s = StackDistance {
            min_capacity,
            ..StackDistance::default()
        };
        s.reset_capacity(min_capacity);
        s
    }

    /// Distinct keys currently tracked.
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Approximate heap bytes in use, for reports and benchmarks.
    pub fn memory_bytes(&self) -> usize {
        self.slot_of.capacity() * 17
            + self.pos_of_slot.capacity() * 4
            + self.slot_at_pos.capacity() * 4
            + self.words.capacity() * 8
            + self.tree.capacity() * 4
            + self.free_slots.capacity() * 4
    }

    /// Records an access to `key` and returns its stack distance: `Some(d)` with `d >= 1` when
    /// the key was seen before (an LRU cache of `c` entries hits exactly when `d <= c`), `None`
    /// for a first access (a cold miss at every size).
    #[inline]
    pub fn access(&mut self, key: u64) -> Option<u64> {
        if self.next_pos == self.slot_at_pos.len() {
            self.compact();
        }
        let new_pos = self.next_pos;
        self.next_pos += 1;
        match self.slot_of.get(&key) {
            Some(&slot) => {
                let old = self.pos_of_slot[slot as usize] as usize;
                let after = self.live - self.prefix_inclusive(old);
                self.clear(old);
                self.set(new_pos);
                self.slot_at_pos[old] = NO_SLOT;
                self.slot_at_pos[new_pos] = slot;
                self.pos_of_slot[slot as usize] = new_pos as u32;
                Some(after as u64 + 1)
            }
            None => {
                let slot = match self.free_slots.pop() {
                    Some(s) => {
                        self.pos_of_slot[s as usize] = new_pos as u32;
                        s
                    }
                    None => {
                        self.pos_of_slot.push(new_pos as u32);
                        (self.pos_of_slot.len() - 1) as u32
                    }
                };
                self.slot_of.insert(key, slot);
                self.set(new_pos);
                self.slot_at_pos[new_pos] = slot;
                self.live += 1;
                None
            }
        }
    }

    /// Forgets `key` (SHARDS fixed-size evicts keys from its sample this way). Returns whether
    /// the key was tracked.
    pub fn remove(&mut self, key: u64) -> bool {
        let Some(slot) = self.slot_of.remove(&key) else {
            return false;
        };
        let pos = self.pos_of_slot[slot as usize] as usize;
        self.clear(pos);
        self.slot_at_pos[pos] = NO_SLOT;
        self.free_slots.push(slot);
        self.live -= 1;
        true
    }

    /// Live marks at positions `0..=pos`.
    #[inline]
    fn prefix_inclusive(&self, pos: usize) -> usize {
        let w = pos / 64;
        let bit = pos % 64;
        let mask = if bit == 63 {
            u64::MAX
        } else {
            (1u64 << (bit + 1)) - 1
        };
        let mut sum = (self.words[w] & mask).count_ones() as usize;
        // Fenwick prefix over words 0..w (1-based index w covers words < w).
        let mut i = w;
        while i > 0 {
            sum += self.tree[i] as usize;
            i &= i - 1;
        }
        sum
    }

    #[inline]
    fn set(&mut self, pos: usize) {
        let w = pos / 64;
        self.words[w] |= 1u64 << (pos % 64);
        let mut i = w + 1;
        while i < self.tree.len() {
            self.tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }

    #[inline]
    fn clear(&mut self, pos: usize) {
        let w = pos / 64;
        self.words[w] &= !(1u64 << (pos % 64));
        let mut i = w + 1;
        while i < self.tree.len() {
            self.tree[i] -= 1;
            i += i & i.wrapping_neg();
        }
    }

    fn reset_capacity(&mut self, capacity: usize) {
        let capacity = capacity.div_ceil(64) * 64;
        let n_words = capacity / 64;
        self.words.clear();
        self.words.resize(n_words, 0);
        self.tree.clear();
        self.tree.resize(n_words + 1, 0);
        self.slot_at_pos.clear();
        self.slot_at_pos.resize(capacity, NO_SLOT);
        self.next_pos = 0;
    }

    /// Renumbers the live marks to positions 0..live, keeping their order.
    fn compact(&mut self) {
        let old = std::mem::take(&mut self.slot_at_pos);
        let capacity = (self.live * CAPACITY_FACTOR)
            .max(if self.min_capacity == 0 {
                MIN_CAPACITY
            } else {
                self.min_capacity
            })
            .max(self.live + 64);
        self.reset_capacity(capacity);
        let mut next = 0usize;
        for slot in old.into_iter().filter(|&s| s != NO_SLOT) {
            self.slot_at_pos[next] = slot;
            self.pos_of_slot[slot as usize] = next as u32;
            self.words[next / 64] |= 1u64 << (next % 64);
            next += 1;
        }
        self.next_pos = next;
        // Build the Fenwick tree in O(n): each node adds itself to its parent.
        for w in 0..self.words.len() {
            self.tree[w + 1] += self.words[w].count_ones();
            let parent = (w + 1) + ((w + 1) & (w + 1).wrapping_neg());
            if parent < self.tree.len() {
                let v = self.tree[w + 1];
                self.tree[parent] += v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The textbook LRU stack: a vector, most recent first.
    fn naive(keys: &[u64]) -> Vec<Option<u64>> {
        let mut stack: Vec<u64> = Vec::new();
        keys.iter()
            .map(|&k| {
                let d = stack.iter().position(|&x| x == k);
                if let Some(i) = d {
                    stack.remove(i);
                }
                stack.insert(0, k);
                d.map(|i| i as u64 + 1)
            })
            .collect()
    }

    #[test]
    fn small_sequence() {
        let mut s = StackDistance::new();
        let got: Vec<_> = [1, 2, 3, 1, 1, 3, 2].iter().map(|&k| s.access(k)).collect();
        assert_eq!(
            got,
            vec![None, None, None, Some(3), Some(1), Some(2), Some(3)]
        );
    }

    #[test]
    fn survives_many_compactions() {
        let keys: Vec<u64> = (0..200_000u64)
            .map(|i| crate::hash::mix64(i) % 700)
            .collect();
        let mut s = StackDistance::new();
        let got: Vec<_> = keys.iter().map(|&k| s.access(k)).collect();
        assert_eq!(got, naive(&keys));
    }

    proptest! {
        #[test]
        fn matches_naive_stack(keys in proptest::collection::vec(0u64..300, 0..6000)) {
            let mut s = StackDistance::new();
            let got: Vec<_> = keys.iter().map(|&k| s.access(k)).collect();
            prop_assert_eq!(got, naive(&keys));
        }

        #[test]
        fn removal_matches_naive(ops in proptest::collection::vec((0u64..200, any::<bool>()), 0..5000)) {
            let mut s = StackDistance::new();
            let mut stack: Vec<u64> = Vec::new();
            for (k, remove) in ops {
                if remove && k % 3 == 0 {
                    let was = stack.iter().position(|&x| x == k);
                    if let Some(i) = was { stack.remove(i); }
                    prop_assert_eq!(s.remove(k), was.is_some());
                } else {
                    let d = stack.iter().position(|&x| x == k);
                    if let Some(i) = d { stack.remove(i); }
                    stack.insert(0, k);
                    prop_assert_eq!(s.access(k), d.map(|i| i as u64 + 1));
                }
                prop_assert_eq!(s.len(), stack.len());
            }
        }
    }
}
