//! The RAID controller between the host and the layout: its per-command latency, a battery-
//! backed write-back cache with elevator destage, sequential read-ahead, and the calibratable
//! ceilings (IOPS and MB/s per logical drive, parity-engine throughput, rebuild rate) that real
//! arrays often hit before their disks do.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerModel {
    /// Controller firmware time added to every host request (0 for Linux md, tens of
    /// microseconds for a hardware RAID controller).
    pub overhead_nanos: u64,
    /// Write-back cache size; 0 = write-through (every write waits for the disks).
    pub write_back_bytes: u64,
    /// Destage commands the cache keeps in flight at once, per member disk.
    pub destage_per_disk: u32,
    /// Destage starts when dirty data reaches this fraction of the cache and stops below
    /// `destage_low_fraction` (hysteresis lets the elevator sort a large batch); an idle
    /// host or a blocked write also starts it.
    pub destage_high_fraction: f64,
    pub destage_low_fraction: f64,
    /// Read-ahead on detected sequential reads; 0 = off.
    pub read_ahead_bytes: u64,
    /// Ceiling on host requests per second for the logical drive.
    pub max_iops: Option<f64>,
    /// Ceiling on host bytes per second for the logical drive.
    pub max_bytes_per_sec: Option<f64>,
    /// Ceiling on parity chunks computed per second (XOR/P+Q engine).
    pub parity_chunks_per_sec: Option<f64>,
    /// Rebuild speed limit (Linux md `speed_limit_max` defaults to 200,000 KB/s).
    pub rebuild_bytes_per_sec: f64,
    /// Linux md RAID 5/6 behaviour (stripe cache, rmw/rcw per stripe head, the `raid5d`
    /// thread): on for software RAID, off (`None`) behind a hardware controller.
    pub md: Option<MdSettings>,
}

/// Default cost of handling one md stripe head (one pass of md's stripe state machine, which
/// reads, computes parity and writes one 4 KiB page per member), in nanoseconds: 54.6 µs.
///
/// Source: kernel commit 765d704db1f5 ("raid5: only dispatch IO from raid5d for harddisk
/// raid", Shaohua Li, 2016): a 9-disk RAID 5 whose disks could take 1,440 MB/s of sequential
/// writes did ~600 MB/s with `raid5d` alone, which the commit names as the bottleneck. Eight
/// data pages of 4 KiB per stripe head: 600e6 / 32,768 = 18,300 heads per second, 54.6 µs
/// each. That machine was an Atom server; a current Xeon core handles a head several times
/// faster, so give `--md-stripe-cost` from a measurement on your CPU class when you have one
/// (docs/model.md compares both with published NVMe md RAID 5 figures).
pub const MD_STRIPE_COST_NANOS: f64 = 54_600.0;

/// How md handles RAID 5/6 writes (drivers/md/raid5.c, Documentation/admin-guide/md.rst).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MdSettings {
    /// Stripe heads in md's stripe cache (`stripe_cache_size`, default 256).
    pub stripe_cache_size: u32,
    /// Worker threads handling stripe heads besides `raid5d` (`group_thread_cnt`, default 0:
    /// `raid5d` alone).
    pub group_thread_cnt: u32,
    /// CPU time one stripe head takes in the thread that handles it.
    pub stripe_cost_nanos: f64,
}

impl Default for MdSettings {
    fn default() -> Self {
        MdSettings {
            stripe_cache_size: super::md::DEFAULT_STRIPE_CACHE_SIZE,
            group_thread_cnt: 0,
            stripe_cost_nanos: MD_STRIPE_COST_NANOS,
        }
    }
}

impl Default for ControllerModel {
    fn default() -> Self {
        ControllerModel {
            overhead_nanos: 0,
            write_back_bytes: 0,
            destage_per_disk: 2,
            destage_high_fraction: 0.5,
            destage_low_fraction: 0.25,
            read_ahead_bytes: 0,
            max_iops: None,
            max_bytes_per_sec: None,
            parity_chunks_per_sec: None,
            rebuild_bytes_per_sec: 200e6,
            md: None,
        }
    }
}

impl ControllerModel {
    /// Linux md software RAID: no controller latency, no cache of its own.
    pub fn software() -> ControllerModel {
        ControllerModel {
            md: Some(MdSettings::default()),
            ..ControllerModel::default()
        }
    }

    /// A hardware RAID controller of the LSI MegaRAID / Dell PERC kind with a battery-backed
    /// cache of `cache_bytes` (see docs/model.md for the overhead figure).
    pub fn hardware(cache_bytes: u64) -> ControllerModel {
        ControllerModel {
            overhead_nanos: 25_000,
            write_back_bytes: cache_bytes,
            ..ControllerModel::default()
        }
    }
}

/// Dirty extents of the write-back cache, kept merged and ordered so destage can run as an
/// elevator and sequential writes coalesce into full stripes.
#[derive(Clone, Debug, Default)]
pub struct DirtyMap {
    extents: std::collections::BTreeMap<u64, u64>,
    bytes: u64,
}

impl DirtyMap {
    /// Bytes held, counting overlaps once.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.extents.is_empty()
    }

    /// Adds `[start, end)`, merging with overlapping and adjacent extents. Returns the number of
    /// new bytes (bytes already dirty are overwritten in place, as in a real cache).
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let mut lo = start;
        let mut hi = end;
        let mut covered = 0;
        // The extent starting before `start` that reaches it.
        if let Some((&s, &e)) = self.extents.range(..=start).next_back() {
            if e >= start {
                lo = s;
                hi = hi.max(e);
                covered += e.min(end).saturating_sub(start);
                self.extents.remove(&s);
            }
        }
        let following: Vec<(u64, u64)> = self
            .extents
            .range(start..=end)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in following {
            covered += e.min(end).saturating_sub(s.max(start));
            hi = hi.max(e);
            self.extents.remove(&s);
        }
        let added = (end - start) - covered.min(end - start);
        self.extents.insert(lo, hi);
        self.bytes += added;
        added
    }

    /// True when `[start, end)` is entirely dirty (a read served by the cache).
    pub fn covers(&self, start: u64, end: u64) -> bool {
        self.extents
            .range(..=start)
            .next_back()
            .is_some_and(|(_, &e)| e >= end)
    }

    /// Removes and returns the next extent at or after `cursor` (wrapping to the lowest), cut
    /// so it does not cross a multiple of `boundary` bytes (a full stripe).
    pub fn take_next(&mut self, cursor: u64, boundary: u64) -> Option<(u64, u64)> {
        let (&s, &e) = self
            .extents
            .range(cursor..)
            .next()
            .or_else(|| self.extents.iter().next())?;
        self.extents.remove(&s);
        let boundary = boundary.max(512);
        let cut = (s / boundary + 1) * boundary;
        let end = e.min(cut);
        if end < e {
            self.extents.insert(end, e);
        }
        self.bytes -= end - s;
        Some((s, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirty_map_merges_counts_and_cuts_at_stripes() {
        let mut d = DirtyMap::default();
        assert_eq!(d.insert(0, 4096), 4096);
        assert_eq!(d.insert(4096, 8192), 4096);
        assert_eq!(d.insert(2048, 6144), 0);
        assert_eq!(d.bytes(), 8192);
        assert!(d.covers(1000, 8000));
        assert!(!d.covers(8000, 9000));
        d.insert(65536 - 4096, 65536 + 4096);
        assert_eq!(d.take_next(0, 65536), Some((0, 8192)));
        assert_eq!(d.take_next(10_000, 65536), Some((61440, 65536)));
        assert_eq!(d.take_next(70_000, 65536), Some((65536, 69632)));
        assert!(d.is_empty());
        assert_eq!(d.bytes(), 0);
    }
}
