//! Hot data: accesses per block at a chosen granularity, the skew curve, the hot-data size at
//! 80/90/95/99% of I/Os, read-hot vs write-hot, and the hottest regions.
//!
//! An I/O here is a block access: a request touching k blocks counts once for each. Counts are
//! exact while the trace touches at most `limit` distinct blocks. Past that, the tracker switches
//! to spatial sampling (the same scheme as SHARDS): a new block is tracked only when the hash of
//! its address is below a threshold, and the threshold halves whenever the tracked set outgrows
//! the limit. Pure spatial sampling is unreliable for skewed workloads, where a handful of blocks
//! serve a large share of the I/Os and their falling in or out of the sample swings every
//! estimate; so at the first shrink, while every count is still exact, the hottest `limit / 8`
//! blocks are pinned and kept whatever their hash. (Pins are never re-chosen later: choosing
//! them from the sample would take sampled blocks out of the population they stand for and bias
//! the estimates.) Every tracked block has been tracked since its first access, so its count
//! is exact; a pinned block stands for itself, a sampled one for `1 / rate` blocks like it.
//! Shares are ratios within these weighted counts. The report states the rate. Memory is bounded
//! by `limit` whatever the footprint.
//!
//! The sampled and the pinned blocks live in two tables, and a filter of the pinned blocks'
//! hashes lets a block outside the sample pass without touching either: on a trace sampled at
//! 1/4, three block accesses in four cost a hash and a bit test instead of a cache miss. The
//! report is built from runs of equal `(count, weight)` pairs rather than from a sorted list of
//! every tracked block (the same figures, bit for bit: every sum is exact).

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, Op, TraceHeader};
use crate::hash::{block_key, mix64, split_block_key, BlockTable, IntMap};

/// Shares of I/Os for which the hot-data size is reported.
pub const HOT_SHARES: [f64; 4] = [0.80, 0.90, 0.95, 0.99];

/// Footprint fractions at which the skew curve is reported (percent).
const SKEW_PERCENTS: [f64; 26] = [
    0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 7.5, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0,
    50.0, 55.0, 60.0, 65.0, 70.0, 75.0, 80.0, 90.0, 100.0,
];

/// Blocks in the hot set (the 80% share) become regions; this many are reported.
pub const TOP_REGIONS: usize = 20;

/// One point of the skew curve: the hottest `footprint_fraction` of the data serves
/// `io_fraction` of the I/Os.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkewPoint {
    pub footprint_fraction: f64,
    pub bytes: u64,
    pub io_fraction: f64,
}

/// The smallest amount of the hottest data serving `io_fraction` of the I/Os.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HotSize {
    pub io_fraction: f64,
    pub bytes: u64,
    pub footprint_fraction: f64,
}

/// Hot-data figures for one population of I/Os (all, reads or writes).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HotSet {
    /// Block accesses.
    pub ios: u64,
    /// Bytes of distinct blocks touched.
    pub footprint_bytes: u64,
    pub hot_sizes: Vec<HotSize>,
    pub skew: Vec<SkewPoint>,
}

/// A run of adjacent hot blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HotRegion {
    pub device: u32,
    pub device_name: String,
    pub start_bytes: u64,
    pub end_bytes: u64,
    /// Block accesses inside the region (scaled when sampled).
    pub ios: u64,
    pub reads: u64,
    pub writes: u64,
    pub io_fraction: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HotReport {
    pub block_bytes: u64,
    /// Whether every block was counted (false: spatially sampled at `sampling_rate`).
    pub exact: bool,
    pub sampling_rate: f64,
    /// Blocks counted (the sample when sampled).
    pub tracked_blocks: u64,
    pub all: HotSet,
    pub reads: HotSet,
    pub writes: HotSet,
    /// Of the blocks in the read hot set (90% of reads), the share that is also written.
    pub read_hot_also_written: f64,
    /// Of the blocks in the write hot set (90% of writes), the share that is also read.
    pub write_hot_also_read: f64,
    /// The hottest regions: adjacent blocks of the 80% hot set merged (when sampled, gaps up to
    /// two expected sample spacings are bridged), by I/Os.
    pub top_regions: Vec<HotRegion>,
}

/// Streaming per-block access counter.
#[derive(Debug)]
pub struct HotBlocks {
    block_bytes: u64,
    limit: usize,
    /// Blocks are sampled when `mix64(key) <= threshold`.
    threshold: u64,
    rate: f64,
    /// The sampled blocks' counts, each block tracked since its first access (before the first
    /// shrink: every block).
    sampled: BlockTable<[u32; 2]>,
    /// The pinned blocks' counts (fixed at the first shrink, kept whatever their hash).
    pinned: BlockTable<[u32; 2]>,
    /// Which hashes may be pinned: a block outside the sample is looked up only when this says
    /// it may be pinned, so most blocks of a sampled trace touch no table at all.
    pinned_filter: HashFilter,
    ios: [u64; 2],
}

/// A one-hash Bloom filter over block hashes: no false negatives; about one false positive in
/// 16 at 16 bits per key.
#[derive(Debug, Default)]
struct HashFilter {
    words: Vec<u64>,
}

impl HashFilter {
    fn with_keys(keys: usize, hashes: impl Iterator<Item = u64>) -> HashFilter {
        let bits = (keys * 16).next_power_of_two().max(64);
        let mut words = vec![0u64; bits / 64];
        let mask = bits as u64 - 1;
        for h in hashes {
            let b = h & mask;
            words[(b / 64) as usize] |= 1 << (b % 64);
        }
        HashFilter { words }
    }

    #[inline]
    fn may_hold(&self, hash: u64) -> bool {
        if self.words.is_empty() {
            return false;
        }
        let b = hash & (self.words.len() as u64 * 64 - 1);
        self.words[(b / 64) as usize] & (1 << (b % 64)) != 0
    }
}

/// Hot data's share of a finished analysis: what [`super::Analysis::finish_hot`] gives and
/// [`super::Analysis::finish_with_hot`] takes, so that a host can count hot data on another
/// thread (or in another worker) than the rest of the analysis. Small: no per-block data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HotPart {
    pub report: HotReport,
    /// Per device, by device number (empty unless the per-device table is asked for): its hot
    /// data at 90% of its block accesses and its footprint, in (weighted) blocks.
    pub per_device_90: Vec<(u32, f64, f64)>,
    /// Whether every block was counted (no spatial sample).
    pub exact: bool,
    /// The load over time, when it was counted beside hot data rather than with the rest of the
    /// analysis (`Load::with_threads`, which balances its two threads so, in one process);
    /// `None` otherwise. Not serialized: the web app's two workers keep the timeline in the
    /// first one, for its live chart (and the worker's wasm keeps no code for it).
    #[serde(skip)]
    pub timeline: Option<super::timeline::TimelineReport>,
}

/// `(count, weight, blocks)`: `blocks` tracked blocks of `count` accesses, each standing for
/// `weight` blocks; the input of [`HotBlocks::hot_set`], hottest first ([`runs_hottest_first`]).
type Run = (u64, f64, u64);

fn total(ops: &[u32; 2]) -> u64 {
    u64::from(ops[0]) + u64::from(ops[1])
}

impl HotBlocks {
    pub fn new(block_bytes: u64, limit: usize) -> HotBlocks {
        HotBlocks {
            block_bytes: block_bytes.max(1),
            limit: limit.max(64),
            threshold: u64::MAX,
            rate: 1.0,
            sampled: BlockTable::new(),
            pinned: BlockTable::new(),
            pinned_filter: HashFilter::default(),
            ios: [0; 2],
        }
    }

    #[inline]
    pub fn observe(&mut self, e: &IoEvent) {
        let op = match e.op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return,
        };
        for block in e.block_range(self.block_bytes) {
            let key = block_key(e.device, block);
            self.access(key, mix64(key), op);
        }
    }

    /// One access of `op` (0 read, 1 write) to the block `key` ([`block_key`]), whose
    /// `hash` is `mix64(key)`.
    #[inline]
    pub fn access(&mut self, key: u64, hash: u64, op: usize) {
        self.ios[op] += 1;
        if self.pinned_filter.may_hold(hash) {
            if let Some(c) = self.pinned.get_mut(key) {
                c[op] = c[op].saturating_add(1);
                return;
            }
        }
        // A block not tracked yet is tracked from now on when its hash is in the sample; a
        // block outside it is not tracked (the sample only shrinks).
        if hash > self.threshold {
            return;
        }
        let Some(c) = self.sampled.get_or_insert_with(key, || Some([0; 2])) else {
            return;
        };
        c[op] = c[op].saturating_add(1);
        if self.sampled.len() + self.pinned.len() > self.limit {
            self.shrink();
        }
    }

    /// Reads the table slot the block `key` (hash `hash`) will use, if any
    /// ([`BlockTable::prefetch`]).
    #[inline]
    pub fn prefetch(&self, key: u64, hash: u64) {
        if hash <= self.threshold {
            self.sampled.prefetch(key)
        } else if self.pinned_filter.may_hold(hash) {
            self.pinned.prefetch(key)
        }
    }

    fn shrink(&mut self) {
        if self.threshold == u64::MAX {
            self.pin_hottest();
        }
        while self.sampled.len() + self.pinned.len() > self.limit && self.threshold > 0 {
            self.threshold /= 2;
            let t = self.threshold;
            self.sampled.retain(|k, _| mix64(k) <= t);
        }
        self.rate = (self.threshold as f64 + 1.0) / 18_446_744_073_709_551_616.0;
    }

    /// Pins the hottest `limit / 8` blocks (at least two accesses each): moves them from the
    /// sample's table to `pinned`. Blocks tied at the cut are pinned by ascending key until the
    /// quota is full, so the choice does not depend on the table's layout.
    fn pin_hottest(&mut self) {
        let quota = self.limit / 8;
        let mut totals: Vec<u64> = self.sampled.values().map(total).collect();
        let cut = if quota == 0 || totals.is_empty() {
            u64::MAX
        } else {
            let k = quota.min(totals.len()) - 1;
            *totals.select_nth_unstable_by(k, |a, b| b.cmp(a)).1
        };
        drop(totals);
        let cut = cut.max(2);
        // Fewer than `quota` blocks are above the cut (it is the quota-th largest count).
        let mut above = 0;
        let mut tied: Vec<u64> = Vec::new();
        for (k, c) in self.sampled.iter() {
            if total(c) > cut {
                above += 1;
            } else if total(c) == cut {
                tied.push(k);
            }
        }
        tied.sort_unstable();
        tied.truncate(quota.saturating_sub(above));
        let mut pinned = BlockTable::new();
        self.sampled.retain(|k, c| {
            let pin = total(c) > cut || (total(c) == cut && tied.binary_search(&k).is_ok());
            if pin {
                pinned.insert_if_absent(k, *c);
            }
            !pin
        });
        self.pinned_filter =
            HashFilter::with_keys(pinned.len(), pinned.iter().map(|(k, _)| mix64(k)));
        self.pinned = pinned;
    }

    /// Every tracked block's counts and weight (the blocks it stands for: a pinned block
    /// itself, a sampled one `1 / rate`).
    fn entries(&self) -> impl Iterator<Item = (u64, &[u32; 2], f64)> + '_ {
        let sampled_weight = 1.0 / self.rate;
        let pinned = self.pinned.iter().map(|(k, c)| (k, c, 1.0));
        pinned.chain(
            self.sampled
                .iter()
                .map(move |(k, c)| (k, c, sampled_weight)),
        )
    }

    /// Hot-data figures from `runs` (hottest first, [`runs_hottest_first`]): what the sorted
    /// list of every block's `(count, weight)` gives, one run of equal pairs at a time. Every
    /// sum is of integers times powers of two, exact in `f64` (below 2^53), so the cumulative
    /// sums at any block equal the running sums over that list.
    fn hot_set(&self, runs: &[Run], ios: u64) -> HotSet {
        let runs = &runs[..runs.iter().take_while(|r| r.0 > 0).count()];
        // Cumulative (blocks, I/Os) before each run, both weighted.
        let mut starts = Vec::with_capacity(runs.len());
        let (mut b, mut s) = (0.0, 0.0);
        for &(v, w, n) in runs {
            starts.push((b, s));
            b += n as f64 * w;
            s += n as f64 * (v as f64 * w);
        }
        let (blocks_total, total) = (b, s);
        let bytes_of = |blocks: f64| (blocks * self.block_bytes as f64).round() as u64;
        // The first block (run index, 1-based place in it) whose cumulative sum `at(run, j)`
        // reaches `target`, with `step` the sum's increment per block of a run.
        let first_reaching = |target: f64,
                              at: &dyn Fn(usize, u64) -> f64,
                              step: &dyn Fn(usize) -> f64|
         -> Option<(usize, u64)> {
            let r = (0..runs.len()).find(|&r| at(r, runs[r].2) >= target)?;
            let step = step(r);
            let guess = if step > 0.0 {
                ((target - at(r, 0)) / step)
                    .ceil()
                    .clamp(1.0, runs[r].2 as f64) as u64
            } else {
                1
            };
            let mut j = guess.max(1);
            while j > 1 && at(r, j - 1) >= target {
                j -= 1;
            }
            while at(r, j) < target {
                j += 1;
            }
            Some((r, j))
        };
        let blocks_at = |r: usize, j: u64| starts[r].0 + j as f64 * runs[r].1;
        let ios_at = |r: usize, j: u64| starts[r].1 + j as f64 * (runs[r].0 as f64 * runs[r].1);
        let hot_sizes = HOT_SHARES
            .iter()
            .map(|&q| {
                let blocks = if runs.is_empty() {
                    0.0
                } else {
                    match first_reaching(q * total * (1.0 - 1e-12), &ios_at, &|r| {
                        runs[r].0 as f64 * runs[r].1
                    }) {
                        Some((r, j)) => blocks_at(r, j),
                        None => blocks_total,
                    }
                };
                HotSize {
                    io_fraction: q,
                    bytes: bytes_of(blocks),
                    footprint_fraction: if blocks_total == 0.0 {
                        0.0
                    } else {
                        blocks / blocks_total
                    },
                }
            })
            .collect();
        let skew = SKEW_PERCENTS
            .iter()
            .map(|&p| {
                let want = p / 100.0 * blocks_total;
                // I/Os of the hottest `want` blocks, interpolating inside a weighted entry.
                let served = match first_reaching(want, &blocks_at, &|r| runs[r].1) {
                    None => total,
                    Some((r, j)) => {
                        let (b0, s0) = (blocks_at(r, j - 1), ios_at(r, j - 1));
                        s0 + (want - b0) * runs[r].0 as f64
                    }
                };
                SkewPoint {
                    footprint_fraction: p / 100.0,
                    bytes: bytes_of(want),
                    io_fraction: if total == 0.0 {
                        0.0
                    } else {
                        (served / total).min(1.0)
                    },
                }
            })
            .collect();
        HotSet {
            ios,
            footprint_bytes: bytes_of(blocks_total),
            hot_sizes,
            skew,
        }
    }

    /// The count at which a block is in the hot set serving `share` of `runs`' I/Os (`runs`
    /// hottest first).
    fn hot_threshold(runs: &[Run], share: f64) -> u64 {
        let total: f64 = runs
            .iter()
            .map(|&(v, w, n)| n as f64 * (v as f64 * w))
            .sum();
        let mut s = 0.0;
        for &(v, w, n) in runs {
            s += n as f64 * (v as f64 * w);
            if s >= share * total * (1.0 - 1e-12) {
                return v.max(1);
            }
        }
        1
    }

    /// What the rest of the analysis needs of hot data ([`HotPart`]): the report, and per
    /// device (when `per_device`) its hot data at 90% and footprint.
    pub fn part(&self, header: &TraceHeader, per_device: bool) -> HotPart {
        let mut per_device_90: Vec<(u32, f64, f64)> = if per_device {
            self.per_device_hot(0.9)
                .into_iter()
                .map(|(dev, (hot, footprint))| (dev, hot, footprint))
                .collect()
        } else {
            Vec::new()
        };
        per_device_90.sort_unstable_by_key(|&(dev, _, _)| dev);
        HotPart {
            report: self.finish(header),
            per_device_90,
            exact: self.is_exact(),
            timeline: None,
        }
    }

    /// Whether every block is counted (no spatial sampling yet).
    pub fn is_exact(&self) -> bool {
        self.threshold == u64::MAX
    }

    /// Per device: the hottest data serving `share` of the device's block accesses and its
    /// footprint, both in (weighted) blocks. Computed from runs of equal `(count, weight)`
    /// pairs per device, as [`Self::hot_set`] is: the figures of the hottest-first list of
    /// every block (exact sums), without sorting it.
    pub fn per_device_hot(&self, share: f64) -> IntMap<u32, (f64, f64)> {
        // (device, count) -> blocks pinned, blocks sampled.
        let mut tally: IntMap<(u32, u64), [u64; 2]> = IntMap::default();
        for (table, side) in [(&self.pinned, 0), (&self.sampled, 1)] {
            for (k, c) in table.iter() {
                tally.entry((split_block_key(k).0, total(c))).or_default()[side] += 1;
            }
        }
        let mut runs: Vec<(u32, Run)> = tally
            .into_iter()
            .flat_map(|((dev, v), [p, s])| [(dev, (v, 1.0, p)), (dev, (v, 1.0 / self.rate, s))])
            .filter(|(_, r)| r.2 > 0)
            .collect();
        runs.sort_unstable_by_key(|&(dev, _)| dev);
        runs.chunk_by(|a, b| a.0 == b.0)
            .map(|device| {
                let mut runs: Vec<Run> = device.iter().map(|&(_, r)| r).collect();
                runs_hottest_first(&mut runs);
                let total: f64 = runs
                    .iter()
                    .map(|&(v, w, n)| n as f64 * (v as f64 * w))
                    .sum();
                let footprint: f64 = runs.iter().map(|&(_, w, n)| n as f64 * w).sum();
                let target = share * total * (1.0 - 1e-12);
                // The hottest blocks, one at a time, while what they serve is short of the
                // target: of each run, the first `taken` blocks.
                let (mut served, mut blocks) = (0.0, 0.0);
                for &(v, w, n) in &runs {
                    if served >= target {
                        break;
                    }
                    let step = v as f64 * w;
                    let below = |j: u64| served + j as f64 * step < target;
                    let mut taken = if step > 0.0 {
                        ((target - served) / step).ceil().clamp(1.0, n as f64) as u64
                    } else {
                        n
                    };
                    while taken > 1 && !below(taken - 1) {
                        taken -= 1;
                    }
                    while taken < n && below(taken) {
                        taken += 1;
                    }
                    served += taken as f64 * step;
                    blocks += taken as f64 * w;
                    if taken < n {
                        break;
                    }
                }
                (device[0].0, (blocks, footprint))
            })
            .collect()
    }

    /// The runs of [`Self::hot_set`] for every access, the reads and the writes, in one sweep
    /// of the tables.
    fn all_runs(&self) -> [Vec<Run>; 3] {
        /// Counts below this are tallied in an array, the rare larger ones in a map.
        const SMALL: usize = 256;
        // Per count: blocks pinned, blocks sampled.
        let mut small = vec![[[0u64; 2]; SMALL]; 3];
        let mut large: [IntMap<u64, [u64; 2]>; 3] = Default::default();
        for (table, side) in [(&self.pinned, 0), (&self.sampled, 1)] {
            for c in table.values() {
                let [r, w] = *c;
                for (k, v) in [total(c), r.into(), w.into()].into_iter().enumerate() {
                    if v < SMALL as u64 {
                        small[k][v as usize][side] += 1;
                    } else {
                        large[k].entry(v).or_default()[side] += 1;
                    }
                }
            }
        }
        let mut k = 0;
        large.map(|map| {
            let tallies = small[k].iter().enumerate().map(|(v, &t)| (v as u64, t));
            k += 1;
            let mut runs: Vec<Run> = tallies
                .chain(map)
                .flat_map(|(v, [p, s])| [(v, 1.0, p), (v, 1.0 / self.rate, s)])
                .filter(|r| r.2 > 0)
                .collect();
            runs_hottest_first(&mut runs);
            runs
        })
    }

    pub fn finish(&self, header: &TraceHeader) -> HotReport {
        let [all, reads, writes] = self.all_runs();
        let read_t = Self::hot_threshold(&reads, 0.9);
        let write_t = Self::hot_threshold(&writes, 0.9);
        let hot_t = Self::hot_threshold(&all, 0.8);
        // One sweep of the tables for the rest (every sum here is exact, so its order is free):
        // of the read-hot blocks the (weighted) share also written, of the write-hot ones the
        // share also read, and every tracked access weighted.
        let (mut read_hot, mut read_hot_written) = (0.0, 0.0);
        let (mut write_hot, mut write_hot_read) = (0.0, 0.0);
        let mut sampled_total = 0.0;
        for (_, c, w) in self.entries() {
            if u64::from(c[0]) >= read_t && c[0] > 0 {
                read_hot += w;
                if c[1] > 0 {
                    read_hot_written += w;
                }
            }
            if u64::from(c[1]) >= write_t && c[1] > 0 {
                write_hot += w;
                if c[0] > 0 {
                    write_hot_read += w;
                }
            }
            sampled_total += total(c) as f64 * w;
        }
        let ratio = |m: f64, n: f64| if n == 0.0 { 0.0 } else { m / n };
        let read_hot_also_written = ratio(read_hot_written, read_hot);
        let write_hot_also_read = ratio(write_hot_read, write_hot);
        let top_regions = self.regions(header, hot_t, sampled_total);
        HotReport {
            block_bytes: self.block_bytes,
            exact: self.threshold == u64::MAX,
            sampling_rate: self.rate,
            tracked_blocks: (self.sampled.len() + self.pinned.len()) as u64,
            all: self.hot_set(&all, self.ios[0] + self.ios[1]),
            reads: self.hot_set(&reads, self.ios[0]),
            writes: self.hot_set(&writes, self.ios[1]),
            read_hot_also_written,
            write_hot_also_read,
            top_regions,
        }
    }

    fn regions(&self, header: &TraceHeader, hot_t: u64, sampled_total: f64) -> Vec<HotRegion> {
        // The hot blocks by key: each table's sorted on its own (16 bytes a block), then merged.
        let sorted = |table: &BlockTable<[u32; 2]>| {
            let mut hot: Vec<(u64, [u32; 2])> = table
                .iter()
                .filter(|(_, c)| total(c) >= hot_t)
                .map(|(k, &c)| (k, c))
                .collect();
            hot.sort_unstable_by_key(|&(k, _)| k);
            hot
        };
        let (pinned, sampled) = (sorted(&self.pinned), sorted(&self.sampled));
        let sampled_weight = 1.0 / self.rate;
        let (mut p, mut s) = (pinned.iter().peekable(), sampled.iter().peekable());
        let hot = std::iter::from_fn(|| match (p.peek(), s.peek()) {
            (Some(&&(a, c)), Some(&&(b, _))) if a < b => p.next().map(|_| (a, c, 1.0)),
            (_, Some(&&(b, c))) => s.next().map(|_| (b, c, sampled_weight)),
            (Some(&&(a, c)), None) => p.next().map(|_| (a, c, 1.0)),
            (None, None) => None,
        });
        let gap_blocks = if self.rate >= 1.0 {
            1
        } else {
            (2.0 / self.rate).ceil() as u64
        };
        // (key_start, key_end, weighted reads, weighted writes)
        let mut regions: Vec<(u64, u64, f64, f64)> = Vec::new();
        for (k, c, w) in hot {
            let (r, wr) = (f64::from(c[0]) * w, f64::from(c[1]) * w);
            match regions.last_mut() {
                // Same device and close enough.
                Some(g)
                    if split_block_key(k).0 == split_block_key(g.0).0 && k - g.1 <= gap_blocks =>
                {
                    g.1 = k + 1;
                    g.2 += r;
                    g.3 += wr;
                }
                _ => regions.push((k, k + 1, r, wr)),
            }
        }
        regions.sort_unstable_by(|a, b| (b.2 + b.3).total_cmp(&(a.2 + a.3)).then(a.0.cmp(&b.0)));
        regions.truncate(TOP_REGIONS);
        regions
            .into_iter()
            .map(|(start, end, r, w)| {
                // `end` is one past the last key, so its block is the start's plus the length.
                let (device, first_block) = split_block_key(start);
                let last_block = first_block + (end - start);
                HotRegion {
                    device,
                    device_name: header
                        .devices
                        .get(device as usize)
                        .map(|d| d.name.clone())
                        .unwrap_or_default(),
                    start_bytes: first_block.saturating_mul(self.block_bytes),
                    end_bytes: last_block.saturating_mul(self.block_bytes),
                    ios: (r + w).round() as u64,
                    reads: r.round() as u64,
                    writes: w.round() as u64,
                    io_fraction: if sampled_total == 0.0 {
                        0.0
                    } else {
                        (r + w) / sampled_total
                    },
                }
            })
            .collect()
    }
}

/// Sorts runs by count, highest first, and equal counts by weight, so that the order (and
/// every figure read from it) does not depend on the table's iteration order; merges runs of
/// equal pairs.
fn runs_hottest_first(runs: &mut Vec<Run>) {
    runs.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.total_cmp(&b.1)));
    runs.dedup_by(|b, a| {
        let same = a.0 == b.0 && a.1 == b.1;
        if same {
            a.2 += b.2;
        }
        same
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(block: u64, op: Op) -> IoEvent {
        IoEvent {
            time_nanos: 0,
            device: 0,
            offset_bytes: block * 4096,
            len_bytes: 4096,
            op,
            latency_nanos: None,
            pid: None,
        }
    }

    #[test]
    fn skew_hot_sizes_and_regions() {
        let mut h = HotBlocks::new(4096, 1 << 20);
        // Blocks 10..20 read 9 times each (90 reads); blocks 100..110 written once each (10).
        for _ in 0..9 {
            for b in 10..20 {
                h.observe(&ev(b, Op::Read));
            }
        }
        for b in 100..110 {
            h.observe(&ev(b, Op::Write));
        }
        let r = h.finish(&TraceHeader::new("t"));
        assert!(r.exact);
        assert_eq!(r.all.ios, 100);
        assert_eq!(r.all.footprint_bytes, 20 * 4096);
        // 80% of I/Os: 9 hottest blocks (81 I/Os) = 36 KiB.
        assert_eq!(r.all.hot_sizes[0].bytes, 9 * 4096);
        // 90%: 10 blocks; 95%: 15 blocks; 99%: 19 blocks.
        assert_eq!(r.all.hot_sizes[1].bytes, 10 * 4096);
        assert_eq!(r.all.hot_sizes[2].bytes, 15 * 4096);
        assert_eq!(r.all.hot_sizes[3].bytes, 19 * 4096);
        assert_eq!(r.top_regions.len(), 1);
        assert_eq!(
            (r.top_regions[0].start_bytes, r.top_regions[0].end_bytes),
            (10 * 4096, 20 * 4096)
        );
        assert_eq!(r.top_regions[0].reads, 90);
        assert_eq!(r.writes.hot_sizes[0].bytes, 8 * 4096);
        assert_eq!(r.read_hot_also_written, 0.0);
        let half = r
            .all
            .skew
            .iter()
            .find(|p| p.footprint_fraction == 0.5)
            .map(|p| p.io_fraction);
        assert_eq!(half, Some(0.9));
    }

    #[test]
    fn regions_name_the_device_and_the_offset_on_it() {
        // Regression (issue 14.1): device 3's blocks were printed at the internal key, i.e.
        // petabyte offsets on one device.
        let mut h = HotBlocks::new(4096, 1 << 20);
        let header = TraceHeader {
            devices: (0..4)
                .map(|i| crate::event::DeviceInfo::named(format!("vol{i}")))
                .collect(),
            ..TraceHeader::new("t")
        };
        for _ in 0..10 {
            for b in 50..54 {
                h.observe(&IoEvent {
                    device: 3,
                    ..ev(b, Op::Read)
                });
            }
        }
        h.observe(&ev(7, Op::Write));
        let r = h.finish(&header);
        let g = &r.top_regions[0];
        assert_eq!((g.device, g.device_name.as_str()), (3, "vol3"));
        assert_eq!((g.start_bytes, g.end_bytes), (50 * 4096, 54 * 4096));
        assert_eq!(g.reads, 40);
    }

    /// The order of the old, per-block figures: by count, highest first, then by weight.
    fn sort_hottest_first(values: &mut [(u64, f64)]) {
        values.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.total_cmp(&b.1)));
    }

    /// The old, brute-force `hot_set`: one cumulative sum per block over the sorted pairs.
    fn hot_set_reference(block_bytes: u64, values: &mut [(u64, f64)], ios: u64) -> HotSet {
        sort_hottest_first(values);
        let n = values.iter().take_while(|v| v.0 > 0).count();
        let values = &values[..n];
        let (mut cum_blocks, mut cum_ios) = (Vec::new(), Vec::new());
        let (mut b, mut s) = (0.0, 0.0);
        for &(v, w) in values {
            b += w;
            s += v as f64 * w;
            cum_blocks.push(b);
            cum_ios.push(s);
        }
        let (blocks_total, total) = (b, s);
        let bytes_of = |blocks: f64| (blocks * block_bytes as f64).round() as u64;
        let hot_sizes = HOT_SHARES
            .iter()
            .map(|&q| {
                let i = cum_ios
                    .partition_point(|&c| c < q * total * (1.0 - 1e-12))
                    .min(n.saturating_sub(1));
                let blocks = cum_blocks.get(i).copied().unwrap_or(0.0);
                HotSize {
                    io_fraction: q,
                    bytes: bytes_of(blocks),
                    footprint_fraction: if blocks_total == 0.0 {
                        0.0
                    } else {
                        blocks / blocks_total
                    },
                }
            })
            .collect();
        let skew = SKEW_PERCENTS
            .iter()
            .map(|&p| {
                let want = p / 100.0 * blocks_total;
                let i = cum_blocks.partition_point(|&c| c < want);
                let served = if i >= n {
                    total
                } else {
                    let (b0, s0) = if i == 0 {
                        (0.0, 0.0)
                    } else {
                        (cum_blocks[i - 1], cum_ios[i - 1])
                    };
                    s0 + (want - b0) * values[i].0 as f64
                };
                SkewPoint {
                    footprint_fraction: p / 100.0,
                    bytes: bytes_of(want),
                    io_fraction: if total == 0.0 {
                        0.0
                    } else {
                        (served / total).min(1.0)
                    },
                }
            })
            .collect();
        HotSet {
            ios,
            footprint_bytes: bytes_of(blocks_total),
            hot_sizes,
            skew,
        }
    }

    /// The old, brute-force `hot_threshold` over sorted pairs.
    fn hot_threshold_reference(values: &[(u64, f64)], share: f64) -> u64 {
        let total: f64 = values.iter().map(|&(v, w)| v as f64 * w).sum();
        let mut s = 0.0;
        for &(v, w) in values {
            s += v as f64 * w;
            if s >= share * total * (1.0 - 1e-12) {
                return v.max(1);
            }
        }
        1
    }

    /// Hot sets and thresholds from runs of equal `(count, weight)` pairs equal, bit for bit,
    /// the figures from every block's pair, on random populations: skewed and flat counts,
    /// zeros, pinned blocks (weight 1) beside sampled ones (a power of two), few and many blocks.
    #[test]
    fn runs_give_what_every_block_gives() {
        let h = HotBlocks::new(4096, 1 << 10);
        let mut x = 7u64;
        for case in 0..300u64 {
            x = mix64(x ^ case);
            let blocks = [0, 1, 2, 5, 40, 1000, 20_000][(x % 7) as usize];
            let sampled_weight = [1.0, 2.0, 8.0, 1024.0][(x >> 8) as usize % 4];
            let max_count = [1, 2, 3, 100, 1 << 20][(x >> 16) as usize % 5];
            let mut pairs: Vec<(u64, f64)> = (0..blocks)
                .map(|i| {
                    let r = mix64(case * 1_000_003 + i);
                    // Skewed: a count's bits kept at a random length.
                    let count = (r % (max_count + 1)) >> (r >> 60);
                    let w = if r >> 58 & 1 == 1 {
                        1.0
                    } else {
                        sampled_weight
                    };
                    (count, w)
                })
                .collect();
            let ios = pairs.iter().map(|p| p.0).sum();
            let mut runs: Vec<Run> = pairs.iter().map(|&(v, w)| (v, w, 1)).collect();
            runs_hottest_first(&mut runs);
            assert_eq!(
                h.hot_set(&runs, ios),
                hot_set_reference(4096, &mut pairs, ios),
                "case {case}"
            );
            for share in [0.8, 0.9, 0.999] {
                assert_eq!(
                    HotBlocks::hot_threshold(&runs, share),
                    hot_threshold_reference(&pairs, share),
                    "case {case}"
                );
            }
        }
    }

    /// The old, brute-force `per_device_hot`: every block's pair, sorted per device.
    fn per_device_hot_reference(h: &HotBlocks, share: f64) -> IntMap<u32, (f64, f64)> {
        let mut by_device: IntMap<u32, Vec<(u64, f64)>> = IntMap::default();
        for (k, c, w) in h.entries() {
            by_device
                .entry(split_block_key(k).0)
                .or_default()
                .push((total(c), w));
        }
        by_device
            .into_iter()
            .map(|(dev, mut v)| {
                sort_hottest_first(&mut v);
                let total: f64 = v.iter().map(|&(n, w)| n as f64 * w).sum();
                let footprint: f64 = v.iter().map(|&(_, w)| w).sum();
                let (mut served, mut blocks) = (0.0, 0.0);
                for &(n, w) in &v {
                    if served >= share * total * (1.0 - 1e-12) {
                        break;
                    }
                    served += n as f64 * w;
                    blocks += w;
                }
                (dev, (blocks, footprint))
            })
            .collect()
    }

    /// Per-device hot data from runs equals the per-block computation, exact and sampled
    /// (with pinned blocks), at several shares.
    #[test]
    fn per_device_hot_from_runs_equals_every_block() {
        for (limit, blocks) in [(1 << 20, 3_000u64), (2_000, 200_000), (64, 5_000)] {
            let mut h = HotBlocks::new(4096, limit);
            let mut x = 5u64;
            for i in 0..60_000u64 {
                x = mix64(x ^ i);
                let block = if x % 3 == 0 {
                    x % 50
                } else {
                    (x >> 8) % blocks
                };
                let op = if x >> 40 & 1 == 0 {
                    Op::Read
                } else {
                    Op::Write
                };
                h.observe(&IoEvent {
                    device: (x >> 50) as u32 % 4,
                    ..ev(block, op)
                });
            }
            for share in [0.5, 0.9, 0.99, 1.0] {
                let mut got: Vec<_> = h.per_device_hot(share).into_iter().collect();
                let mut want: Vec<_> = per_device_hot_reference(&h, share).into_iter().collect();
                got.sort_by_key(|g| g.0);
                want.sort_by_key(|g| g.0);
                assert_eq!(got, want, "limit {limit}, share {share}");
            }
        }
    }

    /// A pinned block's counts go on after sampling starts, whatever its hash, and only pinned
    /// and sampled blocks are tracked: the same counts as one table holding both.
    #[test]
    fn pinned_blocks_keep_counting_outside_the_sample() {
        let mut h = HotBlocks::new(4096, 1024);
        // 128 hot blocks (pinned at the first shrink: 1024 / 8), then 20,000 cold ones.
        for _ in 0..5 {
            for b in 0..128 {
                h.observe(&ev(b, Op::Read));
            }
        }
        for b in 1000..21_000 {
            h.observe(&ev(b, Op::Write));
        }
        for b in 0..128 {
            h.observe(&ev(b, Op::Write));
        }
        assert!(!h.is_exact());
        assert_eq!(h.pinned.len(), 128);
        for b in 0..128 {
            assert_eq!(h.pinned.get(block_key(0, b)), Some(&[5, 1]), "block {b}");
        }
        let t = h.threshold;
        assert!(h.sampled.iter().all(|(k, c)| mix64(k) <= t && *c == [0, 1]));
        let r = h.finish(&TraceHeader::default());
        assert_eq!(r.tracked_blocks, (h.pinned.len() + h.sampled.len()) as u64);
        assert_eq!(r.all.ios, 128 * 6 + 20_000);
    }

    #[test]
    fn sampling_bounds_memory_and_keeps_shape() {
        let mut exact = HotBlocks::new(4096, 1 << 22);
        let mut sampled = HotBlocks::new(4096, 20_000);
        let mut rng = crate::mrc::synth::Rng::new(3);
        let zipf = crate::mrc::synth::Zipf::new(500_000, 1.0);
        for _ in 0..1_000_000 {
            let e = ev(mix64(zipf.sample(&mut rng)) % (1 << 30), Op::Read);
            exact.observe(&e);
            sampled.observe(&e);
        }
        assert!(sampled.sampled.len() + sampled.pinned.len() <= 20_000);
        let (a, b) = (
            exact.finish(&TraceHeader::default()),
            sampled.finish(&TraceHeader::default()),
        );
        assert!(a.exact && !b.exact);
        let fp = (b.all.footprint_bytes as f64 - a.all.footprint_bytes as f64).abs()
            / a.all.footprint_bytes as f64;
        assert!(fp < 0.05, "footprint off by {fp}");
        // The skew curve (share of I/Os by the hottest x% of the data) is the robust figure:
        // hot sizes sit where the curve is flat, so small share errors move them a lot.
        for (x, y) in a.all.skew.iter().zip(&b.all.skew) {
            assert!(
                (x.io_fraction - y.io_fraction).abs() < 0.03,
                "{x:?} vs {y:?}"
            );
        }
    }
}
