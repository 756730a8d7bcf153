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
    /// Blocks are tracked when `mix64(key) <= threshold`.
    threshold: u64,
    rate: f64,
    counts: BlockTable<Entry>,
    ios: [u64; 2],
}

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    ops: [u32; 2],
    pinned: bool,
}

impl Entry {
    fn total(&self) -> u64 {
        u64::from(self.ops[0]) + u64::from(self.ops[1])
    }
}

impl HotBlocks {
    pub fn new(block_bytes: u64, limit: usize) -> HotBlocks {
        HotBlocks {
            block_bytes: block_bytes.max(1),
            limit: limit.max(64),
            threshold: u64::MAX,
            rate: 1.0,
            counts: BlockTable::new(),
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
            self.ios[op] += 1;
            let key = block_key(e.device, block);
            let threshold = self.threshold;
            // A block not tracked yet is tracked from now on when its hash is in the sample.
            let Some(c) = self
                .counts
                .get_or_insert_with(key, || (mix64(key) <= threshold).then(Entry::default))
            else {
                continue;
            };
            c.ops[op] = c.ops[op].saturating_add(1);
            if self.counts.len() > self.limit {
                self.shrink();
            }
        }
    }

    /// Reads the table slots `e`'s blocks will use ([`BlockTable::prefetch`]).
    #[inline]
    pub fn prefetch(&self, e: &IoEvent) -> u64 {
        self.counts
            .prefetch_blocks(e.device, e.block_range(self.block_bytes))
    }

    fn shrink(&mut self) {
        if self.threshold == u64::MAX {
            self.pin_hottest();
        }
        while self.counts.len() > self.limit && self.threshold > 0 {
            self.threshold /= 2;
            let t = self.threshold;
            self.counts.retain(|k, c| c.pinned || mix64(k) <= t);
        }
        self.rate = (self.threshold as f64 + 1.0) / 18_446_744_073_709_551_616.0;
    }

    /// Pins the hottest `limit / 8` blocks (at least two accesses each). Blocks tied at the
    /// cut are pinned by ascending key until the quota is full, so the choice does not depend
    /// on the table's layout.
    fn pin_hottest(&mut self) {
        let quota = self.limit / 8;
        let mut totals: Vec<u64> = self.counts.values().map(Entry::total).collect();
        let cut = if quota == 0 || totals.is_empty() {
            u64::MAX
        } else {
            let k = quota.min(totals.len()) - 1;
            *totals.select_nth_unstable_by(k, |a, b| b.cmp(a)).1
        };
        drop(totals);
        let cut = cut.max(2);
        // Fewer than `quota` blocks are above the cut (it is the quota-th largest count).
        let mut pinned = 0;
        let mut tied: Vec<u64> = Vec::new();
        for (k, c) in self.counts.iter() {
            if c.total() > cut {
                pinned += 1;
            } else if c.total() == cut {
                tied.push(k);
            }
        }
        tied.sort_unstable();
        tied.truncate(quota.saturating_sub(pinned));
        for c in self.counts.values_mut() {
            c.pinned = c.total() > cut;
        }
        for k in tied {
            if let Some(c) = self.counts.get_mut(k) {
                c.pinned = true;
            }
        }
    }

    /// The weight (blocks it stands for) of a tracked entry.
    fn weight(&self, c: &Entry) -> f64 {
        if c.pinned {
            1.0
        } else {
            1.0 / self.rate
        }
    }

    /// Hot-data figures from `(count, weight)` pairs.
    fn hot_set(&self, values: &mut [(u64, f64)], ios: u64) -> HotSet {
        sort_hottest_first(values);
        let n = values.iter().take_while(|v| v.0 > 0).count();
        let values = &values[..n];
        // Cumulative (blocks, I/Os), both weighted.
        let mut cum_blocks = Vec::with_capacity(n);
        let mut cum_ios = Vec::with_capacity(n);
        let (mut b, mut s) = (0.0, 0.0);
        for &(v, w) in values {
            b += w;
            s += v as f64 * w;
            cum_blocks.push(b);
            cum_ios.push(s);
        }
        let (blocks_total, total) = (b, s);
        let bytes_of = |blocks: f64| (blocks * self.block_bytes as f64).round() as u64;
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
                // I/Os of the hottest `want` blocks, interpolating inside a weighted entry.
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

    /// The count at which a block is in the hot set serving `share` of `values`' I/Os
    /// (`values` hottest first, [`sort_hottest_first`]).
    fn hot_threshold(values: &[(u64, f64)], share: f64) -> u64 {
        let total: f64 = values.iter().map(|&(v, w)| v as f64 * w).sum();
        let mut s = 0.0;
        for &(v, w) in values.iter() {
            s += v as f64 * w;
            if s >= share * total * (1.0 - 1e-12) {
                return v.max(1);
            }
        }
        1
    }

    /// Whether every block is counted (no spatial sampling yet).
    pub fn is_exact(&self) -> bool {
        self.threshold == u64::MAX
    }

    /// Per device: the hottest data serving `share` of the device's block accesses and its
    /// footprint, both in (weighted) blocks.
    pub fn per_device_hot(&self, share: f64) -> IntMap<u32, (f64, f64)> {
        let mut by_device: IntMap<u32, Vec<(u64, f64)>> = IntMap::default();
        for (k, c) in self.counts.iter() {
            by_device
                .entry(split_block_key(k).0)
                .or_default()
                .push((c.total(), self.weight(c)));
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

    pub fn finish(&self, header: &TraceHeader) -> HotReport {
        let pairs = |f: &dyn Fn(&Entry) -> u64| -> Vec<(u64, f64)> {
            self.counts
                .values()
                .map(|c| (f(c), self.weight(c)))
                .collect()
        };
        let mut all = pairs(&|c| c.total());
        let mut reads = pairs(&|c| u64::from(c.ops[0]));
        let mut writes = pairs(&|c| u64::from(c.ops[1]));
        // Sorted once here; `hot_set` finds them sorted.
        for v in [&mut all, &mut reads, &mut writes] {
            sort_hottest_first(v);
        }
        let read_t = Self::hot_threshold(&reads, 0.9);
        let write_t = Self::hot_threshold(&writes, 0.9);
        let hot_t = Self::hot_threshold(&all, 0.8);
        let share = |sel: &dyn Fn(&[u32; 2]) -> bool, also: &dyn Fn(&[u32; 2]) -> bool| {
            let (mut n, mut m) = (0.0, 0.0);
            for c in self.counts.values().filter(|c| sel(&c.ops)) {
                n += self.weight(c);
                if also(&c.ops) {
                    m += self.weight(c);
                }
            }
            if n == 0.0 {
                0.0
            } else {
                m / n
            }
        };
        let read_hot_also_written =
            share(&|c| u64::from(c[0]) >= read_t && c[0] > 0, &|c| c[1] > 0);
        let write_hot_also_read = share(&|c| u64::from(c[1]) >= write_t && c[1] > 0, &|c| c[0] > 0);
        let sampled_total: f64 = self
            .counts
            .values()
            .map(|c| c.total() as f64 * self.weight(c))
            .sum();
        let top_regions = self.regions(header, hot_t, sampled_total);
        HotReport {
            block_bytes: self.block_bytes,
            exact: self.threshold == u64::MAX,
            sampling_rate: self.rate,
            tracked_blocks: self.counts.len() as u64,
            all: self.hot_set(&mut all, self.ios[0] + self.ios[1]),
            reads: self.hot_set(&mut reads, self.ios[0]),
            writes: self.hot_set(&mut writes, self.ios[1]),
            read_hot_also_written,
            write_hot_also_read,
            top_regions,
        }
    }

    fn regions(&self, header: &TraceHeader, hot_t: u64, sampled_total: f64) -> Vec<HotRegion> {
        let mut hot: Vec<(u64, Entry)> = self
            .counts
            .iter()
            .filter(|(_, c)| c.total() >= hot_t)
            .map(|(k, &c)| (k, c))
            .collect();
        hot.sort_unstable_by_key(|&(k, _)| k);
        let gap_blocks = if self.rate >= 1.0 {
            1
        } else {
            (2.0 / self.rate).ceil() as u64
        };
        // (key_start, key_end, weighted reads, weighted writes)
        let mut regions: Vec<(u64, u64, f64, f64)> = Vec::new();
        for (k, c) in hot {
            let w = self.weight(&c);
            let (r, wr) = (f64::from(c.ops[0]) * w, f64::from(c.ops[1]) * w);
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

/// Sorts `(count, weight)` pairs by count, highest first, and equal counts by weight, so that
/// the order (and every figure read from it) does not depend on the table's iteration order.
fn sort_hottest_first(values: &mut [(u64, f64)]) {
    values.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.total_cmp(&b.1)));
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
        assert!(sampled.counts.len() <= 20_000);
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
