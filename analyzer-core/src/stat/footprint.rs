//! [`Footprint`]: how many distinct blocks a trace touches, exact while memory allows and then
//! estimated by spatial sampling. It is `stat`'s footprint and the line footprint behind cache
//! sizes given as a share of it (`job::LineFootprint`).
//!
//! Exact counting keeps each touched block in one of two forms, chosen per region of
//! [`REGION_BLOCKS`] consecutive block keys (128 MiB of a device at 4 KiB blocks):
//!
//! - a region touched here and there keeps its blocks' keys in a hash table ([`BlockTable`],
//!   8 bytes a block plus the table's slack), as every block was kept before;
//! - a region that has gathered [`PROMOTE_BLOCKS`] keys gets a bitmap leaf, one bit per block
//!   (4 KiB), and its blocks then cost one bit operation each, without hashing; a sequential
//!   run sets whole 64-bit words at once. The keys the region left in the hash table are moved
//!   into its leaf by a sweep before the table next grows (and counted once at the end).
//!
//! Which regions have gathered enough keys is counted in a fixed array of counters indexed by
//! a hash of the region: regions that share a counter only get their leaves sooner, which costs
//! memory within the leaves' budget, never accuracy.
//!
//! Memory: the hash table holds at most `limit` keys, as before the leaves existed, and the
//! leaves take at most `16 × limit` bytes, the table's own size at its limit (64 MiB for
//! `stat`'s 4 Mi blocks: a bit for every block of 2 TiB of touched regions), and the index from a
//! region to its leaf 64 KiB for each of the first 64 devices that has a leaf (4 MiB at most)
//! plus a hash table of the leaves of other regions. When the table
//! passes its limit even after a sweep (the leaf budget spent, or blocks too scattered for
//! leaves), counting falls back to the spatial sampling it always used past the limit
//! (fixed-size SHARDS over `mix64` of the key): every key held is fed to the sampler, whose
//! outcome depends only on the set of distinct keys, so the estimate is the one sampling from
//! the first block on would have given. A count is exact whenever the old table's would have
//! been (at most `limit` distinct blocks), and often far beyond.

use std::ops::Range;

use crate::hash::{block_key, mix64, BlockTable, BLOCK_KEY_DEVICE_SHIFT};

/// Consecutive block keys that share one bitmap leaf.
pub const REGION_BLOCKS: u64 = 1 << REGION_SHIFT;
const REGION_SHIFT: u32 = 15;
const REGION_MASK: u64 = REGION_BLOCKS - 1;
const LEAF_WORDS: usize = (REGION_BLOCKS / 64) as usize;
const LEAF_BYTES: usize = LEAF_WORDS * 8;

/// Keys a region gathers in the hash table before it gets a bitmap leaf.
pub const PROMOTE_BLOCKS: u32 = 64;

/// Counters of keys per region hash (`2^COUNTER_BITS` of them, 128 KiB).
const COUNTER_BITS: u32 = 16;

/// Bytes of leaves allowed per key of the table's limit: the table's own size at its limit
/// (8-byte slots, between three eighths and three quarters full).
const LEAF_BYTES_PER_LIMIT_KEY: usize = 16;

/// Sampled keys are kept when `mix64(key) >> 40 < threshold` (a 24-bit hash space).
const HASH_SPACE: u64 = 1 << 24;

/// Counts distinct keys ([`block_key`]s) exactly as long as memory allows, then by spatial
/// sampling with a shrinking threshold (see the module documentation). Memory never exceeds
/// the limit's table plus its leaf budget.
#[derive(Debug)]
pub struct Footprint {
    /// Exact: the keys of regions without a leaf (plus keys of regions whose leaf came after
    /// them, until a sweep). Sampled: the sample.
    set: BlockTable<()>,
    limit: usize,
    threshold: u64,
    /// The leaves while counting is exact; `None` once sampling.
    leaves: Option<Leaves>,
}

/// Devices (the first ones of a trace) whose regions [`RegionIndex`] indexes directly.
const DIRECT_DEVICES: u64 = 64;
/// Regions of each such device indexed directly: the first 2 TiB of the device at 4 KiB blocks,
/// 64 KiB of index per device that has a leaf.
const DIRECT_REGIONS: u64 = 1 << 14;
/// The bits of a region number below the device's (see [`block_key`]).
const REGION_DEVICE_SHIFT: u32 = BLOCK_KEY_DEVICE_SHIFT - REGION_SHIFT;

/// Region (key >> [`REGION_SHIFT`]) → its leaf. Looked up for every request, twice (the read
/// ahead, then the count), so the usual regions are an array per device rather than a hash
/// table, whose probe runs of varying length the branch predictor missed about once a look-up;
/// other regions (a device past the first [`DIRECT_DEVICES`], blocks past 2 TiB) are hashed.
#[derive(Debug, Default)]
struct RegionIndex {
    /// Per device, the leaf + 1 of each of its first [`DIRECT_REGIONS`] regions (0: none),
    /// allocated with the device's first leaf.
    direct: Vec<Option<Box<[u32]>>>,
    hashed: BlockTable<u32>,
}

impl RegionIndex {
    /// Where `region` goes in `direct`: (device, region within it).
    #[inline]
    fn direct_place(region: u64) -> Option<(usize, usize)> {
        let device = region >> REGION_DEVICE_SHIFT;
        let within = region & ((1 << REGION_DEVICE_SHIFT) - 1);
        (device < DIRECT_DEVICES && within < DIRECT_REGIONS)
            .then_some((device as usize, within as usize))
    }

    #[inline]
    fn get(&self, region: u64) -> Option<u32> {
        match Self::direct_place(region) {
            Some((device, within)) => self
                .direct
                .get(device)?
                .as_ref()?
                .get(within)?
                .checked_sub(1),
            None => self.hashed.get(region).copied(),
        }
    }

    /// Gives `region` the leaf `leaf` unless it has one.
    fn insert_if_absent(&mut self, region: u64, leaf: u32) {
        match Self::direct_place(region) {
            Some((device, within)) => {
                if self.direct.len() <= device {
                    self.direct.resize_with(device + 1, || None);
                }
                let regions = self.direct[device]
                    .get_or_insert_with(|| vec![0; DIRECT_REGIONS as usize].into_boxed_slice());
                if regions[within] == 0 {
                    regions[within] = leaf.saturating_add(1);
                }
            }
            None => {
                self.hashed.insert_if_absent(region, leaf);
            }
        }
    }

    /// Every (region, leaf).
    fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let direct =
            self.direct
                .iter()
                .enumerate()
                .flat_map(|(device, regions)| {
                    regions.iter().flat_map(move |regions| {
                        regions.iter().enumerate().filter(|&(_, &l)| l != 0).map(
                            move |(within, &l)| {
                                (
                                    ((device as u64) << REGION_DEVICE_SHIFT) | within as u64,
                                    l - 1,
                                )
                            },
                        )
                    })
                });
        direct.chain(self.hashed.iter().map(|(region, &leaf)| (region, leaf)))
    }
}

#[derive(Debug, Default)]
struct Leaves {
    /// Region (key >> [`REGION_SHIFT`]) → its leaf in `words`.
    index: RegionIndex,
    words: Vec<Box<[u64]>>,
    /// The most leaves allowed.
    max: usize,
    /// Keys added to the table per region hash, saturating (allocated at the first).
    counters: Vec<u16>,
    /// Leaves were made since the last sweep: the table may hold keys that belong in them.
    unswept: bool,
}

impl Leaves {
    #[inline]
    fn leaf_of(&self, key: u64) -> Option<usize> {
        self.index.get(key >> REGION_SHIFT).map(|i| i as usize)
    }

    /// Whether `key`'s bit is set in its region's leaf.
    fn holds(&self, key: u64) -> bool {
        self.leaf_of(key).is_some_and(|leaf| {
            let bit = (key & REGION_MASK) as usize;
            self.words[leaf][bit / 64] & (1 << (bit % 64)) != 0
        })
    }

    /// Counts `added` new table keys in `region`; gives the region a leaf once its counter
    /// reaches [`PROMOTE_BLOCKS`] while the budget lasts.
    fn count(&mut self, region: u64, added: u32) {
        if self.words.len() >= self.max {
            return;
        }
        if self.counters.is_empty() {
            self.counters = vec![0; 1 << COUNTER_BITS];
        }
        let c = &mut self.counters[(mix64(region) >> (64 - COUNTER_BITS)) as usize];
        *c = c.saturating_add(u16::try_from(added).unwrap_or(u16::MAX));
        if u32::from(*c) >= PROMOTE_BLOCKS {
            let leaf = self.words.len() as u32;
            self.words.push(vec![0; LEAF_WORDS].into_boxed_slice());
            self.index.insert_if_absent(region, leaf);
            self.unswept = true;
        }
    }

    /// Moves the table's keys of regions that have a leaf into the leaf.
    fn sweep(&mut self, set: &mut BlockTable<()>) {
        self.unswept = false;
        let (index, words) = (&self.index, &mut self.words);
        set.retain(|key, _| match index.get(key >> REGION_SHIFT) {
            Some(leaf) => {
                set_bits(&mut words[leaf as usize], (key & REGION_MASK) as usize, 1);
                false
            }
            None => true,
        });
    }
}

/// Sets bits `lo .. lo + n` of a leaf (`n ≥ 1`, within the leaf).
#[inline]
fn set_bits(words: &mut [u64], lo: usize, n: usize) {
    let hi = lo + n - 1;
    let (first, last) = (lo / 64, hi / 64);
    let head = u64::MAX << (lo % 64);
    let tail = u64::MAX >> (63 - hi % 64);
    if first == last {
        words[first] |= head & tail;
    } else {
        words[first] |= head;
        words[first + 1..last].fill(u64::MAX);
        words[last] |= tail;
    }
}

impl Footprint {
    /// A footprint whose table holds at most `limit` keys (at least 16) and whose leaves take
    /// at most 16 bytes per key of the limit.
    pub fn new(limit: usize) -> Footprint {
        let limit = limit.max(16);
        Footprint {
            set: BlockTable::new(),
            limit,
            threshold: HASH_SPACE,
            leaves: Some(Leaves {
                max: limit.saturating_mul(LEAF_BYTES_PER_LIMIT_KEY) / LEAF_BYTES,
                ..Leaves::default()
            }),
        }
    }

    /// Counts one key.
    pub fn insert(&mut self, key: u64) {
        self.insert_run(key, 1);
    }

    /// Counts the blocks `blocks` of `device` (keys [`block_key`]`(device, block)`).
    #[inline]
    pub fn insert_blocks(&mut self, device: u32, blocks: Range<u64>) {
        let mut block = blocks.start;
        while block < blocks.end {
            // The keys of one region's blocks are consecutive: the device bits of a key lie
            // above the region bits.
            let end = blocks.end.min((block | REGION_MASK).saturating_add(1));
            self.insert_run(block_key(device, block), end - block);
            block = end;
        }
    }

    /// Counts keys `key .. key + n`, all in one region (`n ≥ 1`).
    #[inline]
    fn insert_run(&mut self, key: u64, n: u64) {
        let Some(leaves) = self.leaves.as_mut() else {
            for i in 0..n {
                self.insert_sampled(key + i);
            }
            return;
        };
        if let Some(leaf) = leaves.leaf_of(key) {
            set_bits(
                &mut leaves.words[leaf],
                (key & REGION_MASK) as usize,
                n as usize,
            );
            return;
        }
        let mut added = 0;
        for i in 0..n {
            if leaves.unswept && self.set.is_full() {
                leaves.sweep(&mut self.set);
            }
            if self.set.insert_if_absent(key + i, ()) {
                added += 1;
            }
        }
        if added == 0 {
            return;
        }
        leaves.count(key >> REGION_SHIFT, added);
        if self.set.len() > self.limit {
            leaves.sweep(&mut self.set);
            if self.set.len() > self.limit {
                self.fall_back();
            }
        }
    }

    /// Switches to sampling: the threshold shrinks until the table's keys fit, then every key
    /// of the leaves goes through the sampler, each leaf freed once read.
    #[cold]
    fn fall_back(&mut self) {
        let Some(Leaves {
            index, mut words, ..
        }) = self.leaves.take()
        else {
            return;
        };
        self.shrink();
        for (region, leaf) in index.iter() {
            let leaf = std::mem::take(&mut words[leaf as usize]);
            for (w, &word) in leaf.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let bit = u64::from(bits.trailing_zeros());
                    bits &= bits - 1;
                    self.insert_sampled((region << REGION_SHIFT) | (w as u64 * 64 + bit));
                }
            }
        }
    }

    fn insert_sampled(&mut self, key: u64) {
        if self.threshold < HASH_SPACE && (mix64(key) >> 40) >= self.threshold {
            return;
        }
        self.set.insert_if_absent(key, ());
        self.shrink();
    }

    /// Halves the sampling threshold until the table fits its limit.
    fn shrink(&mut self) {
        while self.set.len() > self.limit && self.threshold > 1 {
            self.threshold /= 2;
            let t = self.threshold;
            self.set.retain(|k, _| (mix64(k) >> 40) < t);
        }
    }

    /// Reads where the first of `blocks` will be counted and returns what it read: for a
    /// caller that starts the cache misses of several requests together
    /// ([`BlockTable::prefetch`]).
    #[inline]
    pub fn prefetch_blocks(&self, device: u32, blocks: Range<u64>) {
        if blocks.is_empty() {
            return;
        }
        let key = block_key(device, blocks.start);
        match self
            .leaves
            .as_ref()
            .and_then(|l| Some((l, l.leaf_of(key)?)))
        {
            Some((leaves, leaf)) => {
                crate::prefetch::ahead(&leaves.words[leaf], (key & REGION_MASK) as usize / 64)
            }
            None => self.set.prefetch(key),
        }
    }

    /// The distinct count (estimated when sampling kicked in) and whether it is exact.
    pub fn estimate(&self) -> (u64, bool) {
        match &self.leaves {
            Some(leaves) => {
                let in_leaves: u64 = leaves
                    .words
                    .iter()
                    .flat_map(|leaf| leaf.iter())
                    .map(|w| u64::from(w.count_ones()))
                    .sum();
                // Table keys whose leaf came later and that were touched again since are in
                // both.
                let twice = if leaves.unswept {
                    self.set.iter().filter(|&(k, _)| leaves.holds(k)).count()
                } else {
                    0
                };
                (in_leaves + (self.set.len() - twice) as u64, true)
            }
            None => {
                let rate = self.threshold as f64 / HASH_SPACE as f64;
                ((self.set.len() as f64 / rate).round() as u64, false)
            }
        }
    }

    /// Leaves made so far (for tests of the memory bound).
    #[cfg(test)]
    fn leaf_count(&self) -> usize {
        self.leaves.as_ref().map_or(0, |l| l.words.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// What counting `keys` must give, worked out from the set of distinct keys alone: the
    /// count itself while it fits `limit` (or when `exact` says the leaves held it); else the
    /// fixed-size sample's estimate, whose threshold is the largest of the halvings under which
    /// at most `limit` keys fall (the outcome of the table-only counter, whatever the order).
    fn reference(keys: &HashSet<u64>, limit: usize) -> u64 {
        let mut threshold = HASH_SPACE;
        let kept = |t: u64| keys.iter().filter(|&&k| (mix64(k) >> 40) < t).count();
        while kept(threshold) > limit && threshold > 1 {
            threshold /= 2;
        }
        if threshold == HASH_SPACE {
            return keys.len() as u64;
        }
        let rate = threshold as f64 / HASH_SPACE as f64;
        (kept(threshold) as f64 / rate).round() as u64
    }

    /// The counter as it was before the leaves, key by key in arrival order: a table that
    /// halves its sampling threshold whenever it holds more than `limit` keys.
    fn table_only(keys: impl IntoIterator<Item = u64>, limit: usize) -> (u64, bool) {
        let mut set: BlockTable<()> = BlockTable::new();
        let mut threshold = HASH_SPACE;
        for key in keys {
            if threshold < HASH_SPACE && (mix64(key) >> 40) >= threshold {
                continue;
            }
            set.insert_if_absent(key, ());
            while set.len() > limit && threshold > 1 {
                threshold /= 2;
                set.retain(|k, _| (mix64(k) >> 40) < threshold);
            }
        }
        if threshold == HASH_SPACE {
            (set.len() as u64, true)
        } else {
            let rate = threshold as f64 / HASH_SPACE as f64;
            ((set.len() as f64 / rate).round() as u64, false)
        }
    }

    /// Requests as (device, first block, blocks): runs in a few busy regions, scattered single
    /// blocks, runs across region boundaries and near the top of the block space.
    fn requests() -> impl Strategy<Value = Vec<(u32, u64, u64)>> {
        let start = prop_oneof![
            4 => (0u64..6).prop_flat_map(|r| r * REGION_BLOCKS..(r + 1) * REGION_BLOCKS),
            2 => any::<u64>().prop_map(|x| x % (1 << 36)),
            1 => (0u64..64).prop_map(|i| (i + 1) * REGION_BLOCKS - 3),
            1 => (1u64..100).prop_map(|i| u64::MAX - i * 40),
        ];
        let len = prop_oneof![4 => 1u64..4, 2 => 1u64..200, 1 => 1u64..3000];
        proptest::collection::vec((0u32..3, start, len), 0..300)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Against a brute-force set of the distinct keys: exact whenever the distinct keys fit
        /// the limit, equal to the set's size whenever it says exact, and otherwise the
        /// estimate the table-only counter gives; inserting block by block gives the same.
        #[test]
        fn counts_as_a_set_of_keys_would(
            reqs in requests(),
            limit in prop_oneof![16usize..64, 64usize..3000, 3000usize..20_000],
        ) {
            let mut runs = Footprint::new(limit);
            let mut singles = Footprint::new(limit);
            let mut keys = HashSet::new();
            let mut arrivals = Vec::new();
            for &(device, start, len) in &reqs {
                let blocks = start..start.saturating_add(len);
                runs.insert_blocks(device, blocks.clone());
                for b in blocks {
                    singles.insert(block_key(device, b));
                    keys.insert(block_key(device, b));
                    arrivals.push(block_key(device, b));
                }
            }
            let (n, exact) = runs.estimate();
            let limit = limit.max(16);
            if keys.len() <= limit {
                prop_assert!(exact, "{} keys fit the limit {limit}", keys.len());
            }
            if exact {
                prop_assert_eq!(n, keys.len() as u64);
            } else {
                prop_assert_eq!(n, reference(&keys, limit));
                // Bit for bit what the table-only counter gave.
                prop_assert_eq!((n, exact), table_only(arrivals, limit));
            }
            prop_assert_eq!(singles.estimate(), (n, exact));
            prop_assert!(runs.set.len() <= limit);
            prop_assert!(runs.leaf_count() * LEAF_BYTES <= limit * LEAF_BYTES_PER_LIMIT_KEY);
        }
    }

    #[test]
    fn dense_regions_stay_exact_far_past_the_table_limit() {
        // 1,024 keys of table allow 16 KiB of leaves: four regions, 131,072 blocks.
        let mut f = Footprint::new(1024);
        for round in 0..3 {
            for b in (0..4 * REGION_BLOCKS).step_by(5) {
                f.insert_blocks(round, b..b + 3);
            }
        }
        // Three devices × four regions need twelve leaves: the first device's fit, and the
        // rest overflow the table, so counting falls back to sampling.
        let (n, exact) = f.estimate();
        assert!(!exact);
        let want = 3.0 * (4 * REGION_BLOCKS) as f64 * 3.0 / 5.0;
        assert!((n as f64 - want).abs() / want < 0.1, "{n} vs {want}");

        let mut f = Footprint::new(1024);
        for b in (0..4 * REGION_BLOCKS).step_by(5) {
            f.insert_blocks(7, b..b + 3);
        }
        // Blocks b with b % 5 < 3, up to the last run's end (one block into a fifth region,
        // which stays in the table).
        let blocks = (0..4 * REGION_BLOCKS + 1).filter(|b| b % 5 < 3).count() as u64;
        assert_eq!(f.estimate(), (blocks, true));
        assert_eq!(f.leaf_count(), 4);
    }

    #[test]
    fn sampled_footprint_is_close_and_bounded() {
        // Scattered keys (no region gathers enough for a leaf) past the limit.
        let mut f = Footprint::new(10_000);
        for k in 0..1_000_000u64 {
            f.insert(mix64(k));
            f.insert(mix64(k / 2));
        }
        let (n, exact) = f.estimate();
        assert!(!exact);
        assert!(f.set.len() <= 10_000);
        let err = (n as f64 - 1e6).abs() / 1e6;
        assert!(err < 0.05, "{n}");
    }
}
