//! Merging partial results: the results of one job run on the parts of a trace (its devices,
//! its spatial hash slices, or its time slices) combined into the result of the whole, with
//! one function, [`merge`], so that every host that spreads a job (the Python `blocksight.dask`
//! module) adds the same way.
//!
//! What merges exactly depends on how the trace was split ([`Split`]):
//!
//! - **Counts, byte totals and histograms** (stat's counts and size histogram, a simulation's
//!   counters) add exactly under any split.
//! - **Footprints** add exactly when the parts touch disjoint blocks ([`Split::Device`],
//!   [`Split::Hash`]); time slices may touch the same block, so their sum is an upper bound and
//!   the merged footprint says it is not exact.
//! - **Sequential share** is exact under a device split (streams are per device) and counted
//!   per part otherwise (a stream cut by a slice boundary loses one request).
//! - **Caches.** Under [`Split::Device`] each part is its own cache (a fleet of volumes), so
//!   capacities and counts add exactly. Under [`Split::Hash`] each of the k slices simulates a
//!   cache of size/k over the blocks whose `mix64(block_key)` falls in it: the sum estimates one
//!   cache of the whole size (the SHARDS argument: a uniform spatial sample of the blocks sees
//!   the same reuse at 1/k the size). Time slices of one cache do not merge (each slice starts
//!   cold): [`MergeError::Split`].
//! - **Miss-ratio curves** merge by the SHARDS rule under [`Split::Hash`]: at whole size S, the
//!   misses of each slice at S/k (interpolated on its curve) add, over the accesses of all.
//!
//! - **Heat maps** ([`HeatMapReport`]) merge exactly under every split: their grids are aligned
//!   to absolute multiples of bin widths that are the initial widths times powers of two, so
//!   each part's map re-bins onto the grid the whole would choose (the widest width that fits
//!   the span of all parts' rows and every device's largest offset) and the counts add. The
//!   one exception is a trace whose timestamps go backwards: a request before its part's first
//!   one sits in row 0 of that part, not where the whole would put it (the report cannot tell).
//!   Under [`Split::Device`], parts that share the trace's header keep their device numbers;
//!   parts read on their own (each volume its own device 0) are numbered in the order given,
//!   and those past [`crate::analysis::heatmap::MAX_DEVICES`] count as omitted, as in one run.
//!
//! Time bins of simulations add bin by bin when the parts share their bin width and origin
//! (device and hash splits of one trace do); otherwise the merged result has none.

use serde::{Deserialize, Serialize};

use crate::analysis::heatmap::{DeviceHeatMap, HeatMapReport, MAX_DEVICES};
use crate::cache::sim::{Counters, OpCounts, SimResult, Summary};
use crate::hash::{block_key, mix64};
use crate::mrc::{MrcPoint, MrcReport};
use crate::stat::StatSummary;
use crate::IoEvent;

/// How a trace was split into the parts whose results are merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// One part per device (volume): disjoint blocks, independent streams, one cache each.
    Device,
    /// `slices` parts by the hash of each request's first extent ([`hash_slice`]), each simulated
    /// with 1/`slices` of the cache.
    Hash { slices: u32 },
    /// Consecutive time slices of one trace.
    Time,
}

/// Why parts cannot be merged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    #[error("nothing to merge: no parts")]
    Empty,
    /// The parts were made with different settings (policy, line size, method ...).
    #[error("the parts differ in {0}; only results of the same request merge")]
    Mismatch(&'static str),
    /// The result does not merge under this split.
    #[error("{0}")]
    Split(String),
}

/// A result type whose partial results combine.
pub trait Mergeable: Sized {
    /// The result of the whole trace from the results of its parts, split as `split` says.
    fn merge_parts(parts: &[Self], split: Split) -> Result<Self, MergeError>;
}

/// Merges partial results (see the module documentation for what is exact).
pub fn merge<T: Mergeable>(parts: &[T], split: Split) -> Result<T, MergeError> {
    if parts.is_empty() {
        return Err(MergeError::Empty);
    }
    T::merge_parts(parts, split)
}

/// The extent hash slicing assigns as a unit: 1 MiB. A request goes whole to the slice of its
/// first extent, so the extent must be large against requests (few cross an extent boundary,
/// and a line cached in two slices wastes both) yet small against the footprint (enough
/// extents for a uniform sample). On the sample trace (256 MiB LRU), 64 KiB extents gave a line-hit-ratio
/// error of 0.03–0.05 at k = 2–8, 1 MiB extents 0.004–0.010 (tests/tests/merge.rs).
pub const SLICE_EXTENT_BYTES: u64 = 1 << 20;

/// The hash slice (0..`slices`) of a request: the `mix64(block_key)` of its first
/// `extent_bytes` extent ([`SLICE_EXTENT_BYTES`] unless a host has reason for another), the
/// hash that drives every spatial sample in the engine. The whole request goes to one slice.
pub fn hash_slice(e: &IoEvent, extent_bytes: u64, slices: u32) -> u32 {
    let key = block_key(e.device, e.offset_bytes / extent_bytes.max(1));
    // The top 32 bits scaled to the slice count: uniform, and slices of k and 2k nest.
    (((mix64(key) >> 32) * u64::from(slices.max(1))) >> 32) as u32
}

fn sum<T>(parts: &[T], f: impl Fn(&T) -> u64) -> u64 {
    parts.iter().map(f).fold(0, u64::saturating_add)
}

impl Mergeable for StatSummary {
    fn merge_parts(parts: &[StatSummary], split: Split) -> Result<StatSummary, MergeError> {
        let first = &parts[0];
        let mut m = first.clone();
        m.events = sum(parts, |p| p.events);
        m.reads = sum(parts, |p| p.reads);
        m.writes = sum(parts, |p| p.writes);
        m.discards = sum(parts, |p| p.discards);
        m.flushes = sum(parts, |p| p.flushes);
        m.read_bytes = sum(parts, |p| p.read_bytes);
        m.write_bytes = sum(parts, |p| p.write_bytes);
        m.discard_bytes = sum(parts, |p| p.discard_bytes);
        m.events_with_latency = sum(parts, |p| p.events_with_latency);
        m.skipped_records = sum(parts, |p| p.skipped_records);
        m.truncated_tail_bytes = sum(parts, |p| p.truncated_tail_bytes);
        m.out_of_order_records = sum(parts, |p| p.out_of_order_records);
        m.clamped_records = sum(parts, |p| p.clamped_records);
        // Any part cut before its end marker makes the whole input cut.
        m.end_marker_missing = parts.iter().any(|p| p.end_marker_missing);
        m.dropped_events = parts.iter().map(|p| p.dropped_events).max().unwrap_or(0);
        m.footprint_blocks = sum(parts, |p| p.footprint_blocks);
        m.footprint_bytes = sum(parts, |p| p.footprint_bytes);
        m.footprint_exact =
            parts.iter().all(|p| p.footprint_exact) && !matches!(split, Split::Time);
        for p in &parts[1..] {
            for d in &p.devices {
                if !m.devices.contains(d) {
                    m.devices.push(d.clone());
                }
            }
            for r in &p.skip_reasons {
                if m.skip_reasons.len() < crate::decode::MAX_REASONS {
                    m.skip_reasons.push(r.clone());
                }
            }
            if p.size_histogram.len() != m.size_histogram.len() {
                return Err(MergeError::Mismatch("size histogram buckets"));
            }
            for (a, b) in m.size_histogram.iter_mut().zip(&p.size_histogram) {
                if (a.min_bytes, a.max_bytes) != (b.min_bytes, b.max_bytes) {
                    return Err(MergeError::Mismatch("size histogram buckets"));
                }
                a.reads += b.reads;
                a.writes += b.writes;
                a.other += b.other;
            }
        }
        m.order_warning = parts.iter().find_map(|p| p.order_warning.clone());
        m.first_time_nanos = parts.iter().filter_map(|p| p.first_time_nanos).min();
        m.last_time_nanos = parts.iter().filter_map(|p| p.last_time_nanos).max();
        m.duration_nanos = match (m.first_time_nanos, m.last_time_nanos) {
            (Some(a), Some(b)) => b - a,
            _ => 0,
        };
        // Derived numbers, recomputed as `Stat::finish` computes them.
        m.rates_measured =
            crate::stat::rates_measurable(m.duration_nanos, m.clock_resolution_nanos);
        let secs = m.duration_nanos as f64 / 1e9;
        let per_sec = |x: f64| if m.rates_measured { x / secs } else { 0.0 };
        m.iops = per_sec(m.events as f64);
        m.read_mib_per_sec = per_sec(m.read_bytes as f64 / 1048576.0);
        m.write_mib_per_sec = per_sec(m.write_bytes as f64 / 1048576.0);
        let data_requests = m.reads + m.writes + m.discards;
        let data_bytes = m.read_bytes + m.write_bytes + m.discard_bytes;
        m.mean_request_bytes = if data_requests == 0 {
            0.0
        } else {
            data_bytes as f64 / data_requests as f64
        };
        // The sequential counts are recovered from each part's share of its reads and writes.
        let rw = |p: &StatSummary| p.reads + p.writes;
        let sequential: u64 = parts
            .iter()
            .map(|p| (p.sequential_fraction * rw(p) as f64).round() as u64)
            .sum();
        let total_rw = sum(parts, rw);
        m.sequential_fraction = if total_rw == 0 {
            0.0
        } else {
            sequential as f64 / total_rw as f64
        };
        Ok(m)
    }
}

fn add_ops(a: &mut OpCounts, b: &OpCounts) {
    a.requests += b.requests;
    a.request_hits += b.request_hits;
    a.bytes += b.bytes;
    a.lines += b.lines;
    a.line_hits += b.line_hits;
}

fn add_counters(a: &mut Counters, b: &Counters) {
    add_ops(&mut a.read, &b.read);
    add_ops(&mut a.write, &b.write);
    a.discards += b.discards;
    a.flushes += b.flushes;
    a.backend.read_ops += b.backend.read_ops;
    a.backend.read_bytes += b.backend.read_bytes;
    a.backend.write_ops += b.backend.write_ops;
    a.backend.write_bytes += b.backend.write_bytes;
    a.fills += b.fills;
    a.fill_reads += b.fill_reads;
    a.bypassed_lines += b.bypassed_lines;
    a.evictions += b.evictions;
    a.dirty_evictions += b.dirty_evictions;
    a.invalidations += b.invalidations;
}

impl Mergeable for SimResult {
    fn merge_parts(parts: &[SimResult], split: Split) -> Result<SimResult, MergeError> {
        if split == Split::Time {
            return Err(MergeError::Split(
                "a cache simulation does not merge across time slices: each slice starts with a \
                 cold cache; split by device or by hash slice"
                    .into(),
            ));
        }
        let first = &parts[0];
        let mut whole = first.whole.counts;
        let mut after = first.after_warmup.counts;
        let mut m = first.clone();
        let same_bins = parts
            .iter()
            .all(|p| p.bin_nanos == first.bin_nanos && p.bins.len() == first.bins.len());
        for p in &parts[1..] {
            if p.config.policy != first.config.policy
                || p.config.line_bytes != first.config.line_bytes
                || p.config.mode != first.config.mode
            {
                return Err(MergeError::Mismatch("policy, line size or write mode"));
            }
            add_counters(&mut whole, &p.whole.counts);
            add_counters(&mut after, &p.after_warmup.counts);
            m.capacity_bytes += p.capacity_bytes;
            m.final_flush_lines += p.final_flush_lines;
            m.final_flush_bytes += p.final_flush_bytes;
            m.occupancy_lines += p.occupancy_lines;
            m.memory_bytes += p.memory_bytes;
            m.duration_nanos = m.duration_nanos.max(p.duration_nanos);
            m.warmup_longer_than_trace &= p.warmup_longer_than_trace;
            m.time_to_warm_nanos = match (m.time_to_warm_nanos, p.time_to_warm_nanos) {
                (Some(a), Some(b)) => Some(a.max(b)),
                _ => None,
            };
            if same_bins {
                for (a, b) in m.bins.iter_mut().zip(&p.bins) {
                    a.requests += b.requests;
                    a.lines += b.lines;
                    a.line_hits += b.line_hits;
                    a.fills += b.fills;
                    a.occupancy_lines += b.occupancy_lines;
                }
            }
        }
        if !same_bins {
            m.bins.clear();
        }
        m.config.capacity_lines = parts.iter().map(|p| p.config.capacity_lines).sum();
        m.whole = Summary::of(whole);
        m.after_warmup = Summary::of(after);
        Ok(m)
    }
}

/// The miss ratio of a curve at `size_lines`, linear between its points; 1 below the first
/// point (an empty cache misses everything), the last point's beyond the last.
fn miss_ratio_at(points: &[MrcPoint], size_lines: f64) -> f64 {
    let mut prev = (0.0, 1.0);
    for p in points {
        let x = p.size_lines as f64;
        if size_lines <= x {
            let (x0, y0) = prev;
            if x <= x0 {
                return p.miss_ratio;
            }
            return y0 + (p.miss_ratio - y0) * (size_lines - x0) / (x - x0);
        }
        prev = (x, p.miss_ratio);
    }
    prev.1
}

fn merge_points(
    parts: &[MrcReport],
    slices: u32,
    curve: impl Fn(&MrcReport) -> &[MrcPoint],
    weight: impl Fn(&MrcReport) -> u64,
) -> Vec<MrcPoint> {
    let total: u64 = parts.iter().map(&weight).sum();
    let k = f64::from(slices.max(1));
    // The whole curve's sizes: every part's sizes scaled by k (the SHARDS rule), deduplicated.
    let mut sizes: Vec<u64> = parts
        .iter()
        .flat_map(|p| {
            curve(p)
                .iter()
                .map(|q| q.size_lines.saturating_mul(u64::from(slices)))
        })
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let line_bytes = parts[0].line_bytes;
    sizes
        .into_iter()
        .map(|s| {
            let misses: f64 = parts
                .iter()
                .map(|p| miss_ratio_at(curve(p), s as f64 / k) * weight(p) as f64)
                .sum();
            let miss_ratio = if total == 0 {
                0.0
            } else {
                misses / total as f64
            };
            MrcPoint {
                size_lines: s,
                size_bytes: s.saturating_mul(line_bytes),
                miss_ratio,
                hit_ratio: 1.0 - miss_ratio,
            }
        })
        .collect()
}

impl Mergeable for MrcReport {
    fn merge_parts(parts: &[MrcReport], split: Split) -> Result<MrcReport, MergeError> {
        let Split::Hash { slices } = split else {
            return Err(MergeError::Split(
                "miss-ratio curves merge only across hash slices (the SHARDS rule); per-device \
                 curves describe separate caches, and time slices start cold"
                    .into(),
            ));
        };
        if parts.len() != slices as usize {
            return Err(MergeError::Mismatch("the number of slices"));
        }
        let first = &parts[0];
        if parts.iter().any(|p| {
            p.policy != first.policy || p.line_bytes != first.line_bytes || p.method != first.method
        }) {
            return Err(MergeError::Mismatch("policy, line size or method"));
        }
        let mut m = first.clone();
        m.requests = sum(parts, |p| p.requests);
        m.line_accesses = sum(parts, |p| p.line_accesses);
        m.footprint_lines = sum(parts, |p| p.footprint_lines);
        m.footprint_exact = parts.iter().all(|p| p.footprint_exact);
        m.points = merge_points(parts, slices, |p| &p.points, |p| p.line_accesses);
        m.request_points = merge_points(parts, slices, |p| &p.request_points, |p| p.requests);
        // The knee of the merged curve is not the merge of the parts' knees.
        m.recommendation = None;
        Ok(m)
    }
}

/// The initial bin widths of the heat maps' axes: every width is one of these times a power of
/// two (`analysis::heatmap`).
const HEAT_TIME_NANOS: u64 = 1_000_000;
const HEAT_LBA_BYTES: u64 = 1 << 20;

fn is_width(w: u64, initial: u64) -> bool {
    w >= initial && w % initial == 0 && (w / initial).is_power_of_two()
}

/// The first and last non-empty rows and the last non-empty column of a map.
type Extent = (u64, u64, u64);

/// A part's map the whole keeps: the part's time origin, the map, its merged device number
/// and its extent.
type KeptMap<'a> = (u64, &'a DeviceHeatMap, u32, Extent);

/// The [`Extent`] of a map, if any cell counts. Counters only grow, so these are the rows and
/// column of the requests it saw.
fn extent(m: &DeviceHeatMap) -> Option<Extent> {
    let cols = m.lba_bins as usize;
    let (mut first, mut last, mut col) = (None, 0, 0);
    for (i, (&r, &w)) in m.reads.iter().zip(&m.writes).enumerate() {
        if r > 0 || w > 0 {
            let row = (i / cols.max(1)) as u64;
            first.get_or_insert(row);
            last = row;
            col = col.max((i % cols.max(1)) as u64);
        }
    }
    first.map(|f| (f, last, col))
}

impl Mergeable for HeatMapReport {
    fn merge_parts(parts: &[HeatMapReport], split: Split) -> Result<HeatMapReport, MergeError> {
        let first = &parts[0];
        let (tb, lb) = (first.max_time_bins, first.max_lba_bins);
        if tb < 2 || lb < 2 {
            return Err(MergeError::Mismatch(
                "heat-map bin limits (a report without them cannot be merged)",
            ));
        }
        if parts
            .iter()
            .any(|p| (p.max_time_bins, p.max_lba_bins) != (tb, lb))
        {
            return Err(MergeError::Mismatch("heat-map bin counts"));
        }
        let mut omitted = sum(parts, |p| p.omitted_requests);
        // Device numbers: kept when the parts agree on them (one header), else by order.
        let mut names: Vec<(&str, u32)> = Vec::new();
        for m in parts.iter().flat_map(|p| &p.maps) {
            if !names
                .iter()
                .any(|&(n, d)| n == m.device_name && d == m.device)
            {
                names.push((&m.device_name, m.device));
            }
        }
        let by_name = |name: &str| names.iter().filter(|&&(n, _)| n == name).count();
        let by_number = |dev: u32| names.iter().filter(|&&(_, d)| d == dev).count();
        let shared = !matches!(split, Split::Device)
            || names
                .iter()
                .all(|&(n, d)| by_name(n) == 1 && by_number(d) == 1);
        let mut order: Vec<&str> = Vec::new();
        let mut kept: Vec<KeptMap> = Vec::new();
        for p in parts {
            for m in &p.maps {
                if m.reads.len() != m.writes.len()
                    || m.reads.len() as u64 != u64::from(m.time_bins) * u64::from(m.lba_bins)
                {
                    return Err(MergeError::Mismatch("a heat map's cell count"));
                }
                if !is_width(m.time_bin_nanos, HEAT_TIME_NANOS)
                    || !is_width(m.lba_bin_bytes, HEAT_LBA_BYTES)
                    || p.time_origin_nanos % m.time_bin_nanos != 0
                {
                    return Err(MergeError::Mismatch("heat-map bin widths or origin"));
                }
                let dev = if shared {
                    m.device
                } else {
                    match order.iter().position(|&n| n == m.device_name) {
                        Some(i) => i as u32,
                        None => {
                            order.push(&m.device_name);
                            (order.len() - 1) as u32
                        }
                    }
                };
                let Some(ext) = extent(m) else { continue };
                if dev as usize >= MAX_DEVICES {
                    let cells = m.reads.iter().chain(&m.writes);
                    omitted = omitted.saturating_add(cells.map(|&c| u64::from(c)).sum::<u64>());
                    continue;
                }
                kept.push((p.time_origin_nanos, m, dev, ext));
            }
        }
        let mut merged = HeatMapReport {
            maps: Vec::new(),
            omitted_requests: omitted,
            time_origin_nanos: 0,
            max_time_bins: tb,
            max_lba_bins: lb,
        };
        let Some(mut width) = kept.iter().map(|(_, m, ..)| m.time_bin_nanos).max() else {
            return Ok(merged);
        };
        // A part's row as an absolute bin of a (wider) width: exact, since the part's origin is
        // a multiple of its width and widths nest.
        let abs_row = |origin: u64, m: &DeviceHeatMap, row: u64, width: u64| {
            (origin / m.time_bin_nanos + row) / (width / m.time_bin_nanos)
        };
        // The whole's width: the narrowest doubling of the widest part's that holds the span of
        // all rows, as the streaming map chooses it.
        let (first_row, last_row) = loop {
            let span = kept.iter().fold((u64::MAX, 0), |(lo, hi), (o, m, _, e)| {
                (
                    lo.min(abs_row(*o, m, e.0, width)),
                    hi.max(abs_row(*o, m, e.1, width)),
                )
            });
            if span.1 - span.0 < u64::from(tb) || width >= u64::MAX / 2 {
                break span;
            }
            width *= 2;
        };
        merged.time_origin_nanos = first_row.saturating_mul(width);
        let rows = (last_row - first_row + 1).min(u64::from(tb)) as usize;
        let mut devices: Vec<u32> = kept.iter().map(|k| k.2).collect();
        devices.sort_unstable();
        devices.dedup();
        for dev in devices {
            let of_dev = || kept.iter().filter(move |k| k.2 == dev);
            let lba_width = of_dev()
                .map(|k| k.1.lba_bin_bytes)
                .max()
                .unwrap_or(HEAT_LBA_BYTES);
            let size = of_dev().find_map(|k| k.1.device_size_bytes);
            let last_col = of_dev()
                .map(|k| k.3 .2 / (lba_width / k.1.lba_bin_bytes))
                .max()
                .unwrap_or(0);
            let by_size = size.map_or(0, |s| s.div_ceil(lba_width));
            let cols = (last_col + 1).max(by_size).min(u64::from(lb)) as usize;
            let mut reads = vec![0u32; rows * cols];
            let mut writes = vec![0u32; rows * cols];
            for &(origin, m, _, _) in of_dev() {
                let part_cols = m.lba_bins as usize;
                let col_factor = lba_width / m.lba_bin_bytes;
                for (i, (&r, &w)) in m.reads.iter().zip(&m.writes).enumerate() {
                    if r == 0 && w == 0 {
                        continue;
                    }
                    let row = abs_row(origin, m, (i / part_cols) as u64, width) - first_row;
                    let col = (i % part_cols) as u64 / col_factor;
                    let at = (row as usize).min(rows - 1) * cols + (col as usize).min(cols - 1);
                    reads[at] = reads[at].saturating_add(r);
                    writes[at] = writes[at].saturating_add(w);
                }
            }
            let name = of_dev().map(|k| k.1.device_name.clone()).next();
            merged.maps.push(DeviceHeatMap {
                device: dev,
                device_name: name.unwrap_or_default(),
                time_bins: rows as u32,
                lba_bins: cols as u32,
                time_bin_nanos: width,
                lba_bin_bytes: lba_width,
                device_size_bytes: size,
                reads,
                writes,
            });
        }
        Ok(merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Op;

    #[test]
    fn hash_slices_are_uniform_and_nest() {
        let mut counts = [0u32; 8];
        for i in 0..80_000u64 {
            let e = IoEvent {
                time_nanos: i,
                device: (i % 3) as u32,
                offset_bytes: i * 4096,
                len_bytes: 4096,
                op: Op::Read,
                latency_nanos: None,
                pid: None,
            };
            let s8 = hash_slice(&e, 4096, 8);
            counts[s8 as usize] += 1;
            // Slice i of 4 is slices 2i and 2i+1 of 8.
            assert_eq!(hash_slice(&e, 4096, 4), s8 / 2);
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn curve_interpolation_starts_from_an_empty_cache() {
        let p = |s, m| MrcPoint {
            size_lines: s,
            size_bytes: s * 4096,
            miss_ratio: m,
            hit_ratio: 1.0 - m,
        };
        let curve = [p(10, 0.5), p(20, 0.25)];
        assert_eq!(miss_ratio_at(&curve, 0.0), 1.0);
        assert_eq!(miss_ratio_at(&curve, 5.0), 0.75);
        assert_eq!(miss_ratio_at(&curve, 15.0), 0.375);
        assert_eq!(miss_ratio_at(&curve, 40.0), 0.25);
    }

    #[test]
    fn a_cut_part_makes_the_merged_stat_cut() {
        let whole = StatSummary::default();
        let cut = StatSummary {
            end_marker_missing: true,
            ..StatSummary::default()
        };
        let merged = merge(&[whole.clone(), cut], Split::Device).unwrap();
        assert!(merged.end_marker_missing);
        let merged = merge(&[whole.clone(), whole], Split::Device).unwrap();
        assert!(!merged.end_marker_missing);
    }
}
