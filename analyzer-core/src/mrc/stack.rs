//! LRU stack distances in O(log M) per access: the engine behind the exact miss-ratio curve and
//! SHARDS.
//!
//! Every key has one mark at the position (logical time) of its latest access. The stack distance
//! of an access is one plus the number of marks after the key's previous mark: the distinct keys
//! touched since. Marks live in a bitset cut into blocks of [`BLOCK`] positions (one 64-byte cache
//! line each) with a Fenwick tree over the blocks' mark counts, so a query costs the popcounts of
//! at most eight words plus a Fenwick walk over `positions / 512` entries: for the 51 M positions
//! of a 17 M-line footprint that tree is 400 KB, resident in the CPU's L2 cache, where a tree
//! over 64-position words (3.2 MB) was not.
//!
//! New marks always land at the newest position, in the *tail* block; the tree holds only the
//! blocks before it and takes the tail block's count once, when the positions move past it. So
//! an access makes one Fenwick walk to count and one to clear its old mark (none when that mark
//! is in the tail block), and setting its new mark costs one bit.
//!
//! Positions grow with every access; when they run out the live marks are renumbered 0..M in
//! order (compaction) and the capacity set to a multiple of M. Memory is therefore proportional
//! to the number of distinct keys M, never to the number of accesses N, and the amortised cost
//! stays O(log M) per access.
//!
//! Keys live in an open-addressing table (linear probing) whose entries hold the key's latest
//! position, so an access costs one probe and no further indirection. Nothing maps a position
//! back to its key: compaction walks the table and gives each entry its mark's rank among the
//! live marks (a block's count before it plus a popcount), which keeps their order, so an access
//! touches only its table entry, its old mark's block and the tail. Probing starts from a Fibonacci
//! hash of the key with its two low bits cleared, plus those bits, as in the simulator's table
//! (`cache::list`): the lines of a multi-line request share cache lines of the table.

/// Positions per block of the mark bitset: eight 64-bit words, one cache line.
const BLOCK: usize = 512;

/// Smallest position capacity (a multiple of [`BLOCK`]).
const MIN_CAPACITY: usize = 1 << 12;

/// Capacity after compaction, as a multiple of the live keys: higher means rarer compactions
/// and more memory (one bit per position).
const CAPACITY_FACTOR: usize = 3;

/// The position of an empty table entry.
const NO_POS: u32 = u32::MAX;

/// Fibonacci hashing's multiplier, 2^64 / φ.
const FIB: u64 = 0x9E37_79B9_7F4A_7C15;

/// Smallest table (entries, a power of two).
const MIN_TABLE: usize = 64;

/// One block of marks, aligned to a cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct Block([u64; BLOCK / 64]);

/// A key and the position of its latest access ([`NO_POS`]: the entry is empty).
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    pos: u32,
}

const EMPTY: Entry = Entry {
    key: 0,
    pos: NO_POS,
};

/// Computes LRU stack distances for a stream of `u64` keys.
#[derive(Debug)]
pub struct StackDistance {
    /// Open addressing, a power of two long, at most 5/8 full.
    table: Vec<Entry>,
    /// `64 - log2(table.len())`.
    shift: u32,
    /// Positions before the next compaction (a multiple of [`BLOCK`]).
    capacity: usize,
    /// Live marks, one bit per position.
    blocks: Vec<Block>,
    /// Fenwick tree (1-based) over the marks of blocks `0..tail`.
    tree: Vec<u32>,
    /// The block of the newest positions, not yet in the tree.
    tail: usize,
    next_pos: usize,
    live: usize,
    /// Position capacity never shrinks below this.
    min_capacity: usize,
}

impl Default for StackDistance {
    fn default() -> StackDistance {
        StackDistance::new()
    }
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
            table: vec![EMPTY; MIN_TABLE],
            shift: 64 - MIN_TABLE.trailing_zeros(),
            capacity: 0,
            blocks: Vec::new(),
            tree: Vec::new(),
            tail: 0,
            next_pos: 0,
            live: 0,
            min_capacity,
        };
        s.capacity = s.reset_marks(min_capacity);
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
        self.table.capacity() * std::mem::size_of::<Entry>()
            + self.blocks.capacity() * std::mem::size_of::<Block>()
            + self.tree.capacity() * 4
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        let group = ((key >> 2).wrapping_mul(FIB) >> self.shift) as usize;
        (group + (key & 3) as usize) & (self.table.len() - 1)
    }

    /// The entry holding `key`, or the empty entry where it would go.
    #[inline]
    fn probe(&self, key: u64) -> (usize, bool) {
        let mask = self.table.len() - 1;
        let mut i = self.home(key);
        loop {
            let e = self.table[i];
            if e.pos == NO_POS {
                return (i, false);
            }
            if e.key == key {
                return (i, true);
            }
            i = (i + 1) & mask;
        }
    }

    /// Reads `key`'s home entry ahead ([`crate::prefetch::ahead`]), so that an access soon after
    /// finds it in the CPU cache: called for upcoming keys (the trace is known ahead), their
    /// misses overlap.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        crate::prefetch::ahead(&self.table, self.home(key));
    }

    /// Reads ahead what an access to `key` (already tracked) will touch besides its table entry:
    /// its old mark's block. After [`StackDistance::prefetch`] brought the entry in; a key
    /// accessed again in between only makes the read useless, never wrong.
    #[inline]
    pub fn prefetch_marks(&self, key: u64) {
        let (slot, found) = self.probe(key);
        if found {
            let pos = self.table[slot].pos as usize;
            crate::prefetch::ahead(&self.blocks, pos / BLOCK);
        }
    }

    /// Records an access to `key` and returns its stack distance: `Some(d)` with `d >= 1` when
    /// the key was seen before (an LRU cache of `c` entries hits exactly when `d <= c`), `None`
    /// for a first access (a cold miss at every size).
    #[inline]
    pub fn access(&mut self, key: u64) -> Option<u64> {
        if self.next_pos == self.capacity {
            self.compact();
        }
        let new_pos = self.next_pos;
        self.next_pos += 1;
        if new_pos / BLOCK != self.tail {
            self.advance_tail(new_pos / BLOCK);
        }
        let (mut slot, found) = self.probe(key);
        if found {
            let old = self.table[slot].pos as usize;
            let after = self.live - self.prefix_inclusive(old);
            self.clear(old);
            self.mark(new_pos);
            self.table[slot].pos = new_pos as u32;
            return Some(after as u64 + 1);
        }
        if (self.live + 1) * 8 > self.table.len() * 5 {
            self.grow(self.table.len() * 2);
            slot = self.probe(key).0;
        }
        self.table[slot] = Entry {
            key,
            pos: new_pos as u32,
        };
        self.mark(new_pos);
        self.live += 1;
        None
    }

    /// Forgets `key` (SHARDS fixed-size evicts keys from its sample this way). Returns whether
    /// the key was tracked.
    pub fn remove(&mut self, key: u64) -> bool {
        let (slot, found) = self.probe(key);
        if !found {
            return false;
        }
        let pos = self.table[slot].pos as usize;
        self.clear(pos);
        self.live -= 1;
        // Backward-shift deletion: entries after the hole that may move to it do, so probes
        // still end at the first empty entry.
        let mask = self.table.len() - 1;
        let mut hole = slot;
        let mut j = (slot + 1) & mask;
        loop {
            let e = self.table[j];
            if e.pos == NO_POS {
                break;
            }
            let from_home = j.wrapping_sub(self.home(e.key)) & mask;
            let from_hole = j.wrapping_sub(hole) & mask;
            if from_home >= from_hole {
                self.table[hole] = e;
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.table[hole] = EMPTY;
        true
    }

    /// Moves the tail to block `to`, adding the blocks it leaves to the tree.
    fn advance_tail(&mut self, to: usize) {
        while self.tail < to {
            let n: u32 = self.blocks[self.tail]
                .0
                .iter()
                .map(|w| w.count_ones())
                .sum();
            if n > 0 {
                self.tree_add(self.tail, n, true);
            }
            self.tail += 1;
        }
    }

    #[inline]
    fn tree_add(&mut self, block: usize, n: u32, add: bool) {
        let mut i = block + 1;
        while i < self.tree.len() {
            if add {
                self.tree[i] += n;
            } else {
                self.tree[i] -= n;
            }
            i += i & i.wrapping_neg();
        }
    }

    /// Live marks at positions `0..=pos`.
    #[inline]
    fn prefix_inclusive(&self, pos: usize) -> usize {
        let b = pos / BLOCK;
        let w = (pos % BLOCK) / 64;
        let bit = pos % 64;
        let words = &self.blocks[b].0;
        let mask = if bit == 63 {
            u64::MAX
        } else {
            (1u64 << (bit + 1)) - 1
        };
        let mut sum = (words[w] & mask).count_ones() as usize;
        for x in &words[..w] {
            sum += x.count_ones() as usize;
        }
        // Fenwick prefix over blocks 0..b (1-based index b covers blocks < b); every block
        // before the tail is in the tree, and b is at most the tail.
        let mut i = b;
        while i > 0 {
            sum += self.tree[i] as usize;
            i &= i - 1;
        }
        sum
    }

    /// Sets the mark at `pos`, which is in the tail block.
    #[inline]
    fn mark(&mut self, pos: usize) {
        self.blocks[pos / BLOCK].0[(pos % BLOCK) / 64] |= 1u64 << (pos % 64);
    }

    #[inline]
    fn clear(&mut self, pos: usize) {
        let b = pos / BLOCK;
        self.blocks[b].0[(pos % BLOCK) / 64] &= !(1u64 << (pos % 64));
        if b < self.tail {
            self.tree_add(b, 1, false);
        }
    }

    /// Rebuilds the table at `n` entries (a power of two).
    fn grow(&mut self, n: usize) {
        let old = std::mem::replace(&mut self.table, vec![EMPTY; n]);
        self.shift = 64 - n.trailing_zeros();
        for e in old.into_iter().filter(|e| e.pos != NO_POS) {
            let (slot, _) = self.probe(e.key);
            self.table[slot] = e;
        }
    }

    /// Empties the marks and the tree for `capacity` positions (rounded up to a block) and
    /// returns the rounded capacity.
    fn reset_marks(&mut self, capacity: usize) -> usize {
        let capacity = capacity.div_ceil(BLOCK) * BLOCK;
        let n_blocks = capacity / BLOCK;
        self.blocks.clear();
        self.blocks.resize(n_blocks, Block::default());
        self.tree.clear();
        self.tree.resize(n_blocks + 1, 0);
        self.next_pos = 0;
        self.tail = 0;
        capacity
    }

    /// Renumbers the live marks to positions 0..live, keeping their order: each table entry's
    /// new position is its mark's rank, the live marks of the blocks before its own plus those
    /// before it in its block. Then every position below `live` is marked.
    fn compact(&mut self) {
        let mut before = Vec::with_capacity(self.blocks.len());
        let mut sum = 0u32;
        for b in &self.blocks {
            before.push(sum);
            sum += b.0.iter().map(|w| w.count_ones()).sum::<u32>();
        }
        for e in self.table.iter_mut().filter(|e| e.pos != NO_POS) {
            let pos = e.pos as usize;
            let words = &self.blocks[pos / BLOCK].0;
            let w = (pos % BLOCK) / 64;
            let below = (words[w] & ((1u64 << (pos % 64)) - 1)).count_ones()
                + words[..w].iter().map(|x| x.count_ones()).sum::<u32>();
            e.pos = before[pos / BLOCK] + below;
        }
        let live = self.live;
        let capacity = (live * CAPACITY_FACTOR)
            .max(self.min_capacity)
            .max(live + BLOCK);
        self.capacity = self.reset_marks(capacity);
        for b in 0..live / BLOCK {
            self.blocks[b] = Block([u64::MAX; BLOCK / 64]);
        }
        for p in live / BLOCK * BLOCK..live {
            self.mark(p);
        }
        self.next_pos = live;
        // The full blocks before the tail go in the tree, built in O(n): each node adds itself
        // to its parent.
        self.tail = live / BLOCK;
        for b in 0..self.tail {
            self.tree[b + 1] = BLOCK as u32;
        }
        for i in 1..self.tree.len() {
            let parent = i + (i & i.wrapping_neg());
            if parent < self.tree.len() {
                let v = self.tree[i];
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

    /// Distances by an independent method: a Fenwick tree over access times (a mark at each
    /// key's latest access; the distance counts the marks after the previous one), with
    /// removals. Every access of `ops` (`(key, remove)`) gets its distance compared, and the
    /// length after each step.
    fn matches_time_marks(ops: &[(u64, bool)], s: &mut StackDistance) {
        let n = ops.len() + 1;
        let mut tree = vec![0i64; n + 1];
        let add = |tree: &mut Vec<i64>, t: usize, v: i64| {
            let mut i = t + 1;
            while i <= n {
                tree[i] += v;
                i += i & i.wrapping_neg();
            }
        };
        let prefix = |tree: &Vec<i64>, t: usize| {
            let (mut i, mut sum) = (t + 1, 0);
            while i > 0 {
                sum += tree[i];
                i &= i - 1;
            }
            sum
        };
        let mut last: std::collections::HashMap<u64, usize> = Default::default();
        for (t, &(k, remove)) in ops.iter().enumerate() {
            let before = last.remove(&k);
            let want = before.map(|p| (prefix(&tree, t) - prefix(&tree, p)) as u64 + 1);
            if let Some(p) = before {
                add(&mut tree, p, -1);
            }
            if remove {
                assert_eq!(s.remove(k), want.is_some(), "removal {t}");
            } else {
                assert_eq!(s.access(k), want, "access {t} of key {k}");
                add(&mut tree, t, 1);
                last.insert(k, t);
            }
            assert_eq!(s.len(), last.len());
        }
    }

    /// Far more keys than the other tests use (at most 700, a tree of eight blocks): distances
    /// into the tens of thousands over a tree of hundreds of blocks, keys re-used soon and long
    /// after (a hot set, a cold set and a scan), with removals, across compactions and table
    /// growths, against a count that shares nothing with the stack's blocks.
    #[test]
    fn far_reuses_match_an_independent_count() {
        let ops: Vec<(u64, bool)> = (0..400_000u64)
            .map(|i| {
                let r = crate::hash::mix64(i);
                let key = match r % 10 {
                    0..=5 => r >> 40 & 255,
                    6..=8 => 1_000 + (r >> 20) % 40_000,
                    _ => 100_000 + i / 3,
                };
                (key, r >> 60 == 0 && key % 2 == 0)
            })
            .collect();
        matches_time_marks(&ops, &mut StackDistance::new());
        matches_time_marks(&ops, &mut StackDistance::with_min_capacity(1 << 16));
    }

    proptest! {
        #[test]
        fn matches_naive_stack(keys in proptest::collection::vec(0u64..300, 0..6000)) {
            let mut s = StackDistance::new();
            let got: Vec<_> = keys.iter().map(|&k| s.access(k)).collect();
            prop_assert_eq!(got, naive(&keys));
        }

        /// Keys far apart and in runs, removed and re-accessed across table growths: the
        /// backward-shift deletion keeps every probe chain whole.
        #[test]
        fn sparse_keys_and_removals_match_naive(ops in proptest::collection::vec(
            (0u64..64, 0u64..6, 0u8..4), 0..5000)) {
            let ops: Vec<_> = ops
                .into_iter()
                .map(|(hi, lo, action)| (crate::hash::mix64(hi) ^ lo, action == 0))
                .collect();
            removals_match_naive(&ops)?;
        }

        #[test]
        fn removal_matches_naive(ops in proptest::collection::vec((0u64..200, any::<bool>()), 0..5000)) {
            let ops: Vec<_> = ops.into_iter().map(|(k, remove)| (k, remove && k % 3 == 0)).collect();
            removals_match_naive(&ops)?;
        }
    }

    /// Accesses (`false`) and removals (`true`) against a naive stack: every distance, every
    /// removal's answer and the length after each step.
    fn removals_match_naive(
        ops: &[(u64, bool)],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut s = StackDistance::new();
        let mut stack: Vec<u64> = Vec::new();
        for &(k, remove) in ops {
            let at = stack.iter().position(|&x| x == k);
            if let Some(i) = at {
                stack.remove(i);
            }
            if remove {
                prop_assert_eq!(s.remove(k), at.is_some());
            } else {
                stack.insert(0, k);
                prop_assert_eq!(s.access(k), at.map(|i| i as u64 + 1));
            }
            prop_assert_eq!(s.len(), stack.len());
        }
        Ok(())
    }
}
