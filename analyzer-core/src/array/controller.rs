//! The RAID controller between the host and the layout: its per-command latency, a battery-
//! backed write-back cache with elevator destage, sequential read-ahead, and the calibratable
//! ceilings (IOPS and MB/s per logical drive, parity-engine throughput, rebuild rate) that real
//! arrays often hit before their disks do.

use serde::{Deserialize, Serialize};

pub use super::md_bitmap::MdBitmapSetting;

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

/// Default CPU time of one pass of md's stripe state machine (`handle_stripe`) over a stripe
/// head, or over a batch of adjacent full-stripe heads (Linux 4.1's batching runs the state
/// machine once for the batch), besides the per-page work below: 4.5 µs, a 2012-class Xeon
/// core's.
///
/// Source: Shaohua Li on linux-raid, 2012 (mail.spinics.net/lists/raid/msg39330.html, the
/// series behind `group_thread_cnt`): on a 3-disk RAID 5 of PCIe flash "raid5 thread must
/// handle > 450k requests per second" and cannot, and two worker threads besides `raid5d`
/// gave "130% throughput improvement" to "pretty close to theory value". `raid5d` alone then
/// handled about 450,000 / 2.3 = 196,000 4 KiB writes (one stripe head each) per second,
/// 5.1 µs a head; less the two data pages' copy and parity at [`MD_PAGE_COST_NANOS`] that
/// leaves 4.5 µs. docs/model.md checks it against the other published figures.
pub const MD_STRIPE_COST_NANOS: f64 = 4_500.0;

/// The Linux kernel's boot-time XOR benchmark on a cloud Xeon core (`xor: automatically using
/// best checksumming function: avx : 27444.000 MB/sec`, a Travis CI VM at 2.3 GHz, public
/// build log): bytes of one 4 KiB page XORed into another per second.
pub const MD_XOR_BYTES_PER_SEC: f64 = 27.444e9;

/// The kernel's boot-time RAID 6 syndrome benchmark on the same class of VM (`raid6: using
/// algorithm avx2x4 gen() 21820 MB/s`, public Travis CI build log): data bytes per second
/// turned into P and Q.
pub const MD_PQ_BYTES_PER_SEC: f64 = 21.82e9;

/// Default CPU time per 4 KiB page a stripe head's parity computation reads, RAID 5: the page
/// copied from the bio into the stripe cache (md's default `skip_copy` 0) and XORed, each at
/// the XOR benchmark's rate: 2 × 4096 / 27.444e9 s = 0.30 µs.
pub const MD_PAGE_COST_NANOS: f64 = 2.0 * 4096.0 / MD_XOR_BYTES_PER_SEC * 1e9;

/// The per-page cost of kernel commit 765d704db1f5's Atom server (2016): a 9-disk RAID 5
/// whose `raid5d` alone handled ~600 MB/s of large sequential writes, 18,300 eight-page full
/// stripes a second, 54.6 µs each, 6.8 µs a page (with batching the pass cost is spread over
/// up to a chunk of heads, so the page cost is what that figure measures). Give
/// `--md-page-cost 6.8us` to model such a CPU; it was the default (as 54.6 µs a head) before.
pub const MD_ATOM_PAGE_COST_NANOS: f64 = 54_600.0 / 8.0;

/// `dev.raid.speed_limit_min`'s default, KiB/s (md.rst: "the minimum rate at which resync
/// will proceed even if there is other activity").
pub const MD_SYNC_SPEED_MIN_KIB: u32 = 1_000;
/// `dev.raid.speed_limit_max`'s default, KiB/s.
pub const MD_SYNC_SPEED_MAX_KIB: u32 = 200_000;

/// How md handles RAID 5/6 writes (drivers/md/raid5.c, Documentation/admin-guide/md.rst).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MdSettings {
    /// Stripe heads in md's stripe cache (`stripe_cache_size`, default 256).
    pub stripe_cache_size: u32,
    /// Worker threads handling stripe heads besides `raid5d` (`group_thread_cnt`, default 0:
    /// `raid5d` alone).
    pub group_thread_cnt: u32,
    /// CPU time of one pass of the stripe state machine (a head, or a batch of adjacent
    /// full-stripe heads) in the thread that handles it.
    pub stripe_cost_nanos: f64,
    /// CPU time per 4 KiB page the parity computation reads (copy into the stripe cache and
    /// XOR or P+Q); `None`: from [`MD_XOR_BYTES_PER_SEC`] and, for RAID 6,
    /// [`MD_PQ_BYTES_PER_SEC`].
    pub page_cost_nanos: Option<f64>,
    /// md's write-intent bitmap (RAID 1/5/6/10): by default what mdadm creates, an internal
    /// bitmap of 64 MiB chunks on members over 100 GiB ([`MdBitmapSetting`]).
    pub bitmap: MdBitmapSetting,
    /// md's `safe_mode_delay` (RAID 1/5/6/10; default 200 ms, 0 turns safe mode off): the
    /// superblock updates that mark the array clean after its writes end and dirty before the
    /// next one ([`crate::array::md_super`]). `None`: an array without a persistent
    /// superblock (`mdadm --build`), which md never updates.
    pub safe_mode_delay_nanos: Option<u64>,
    /// md's resync and recovery speed limits in KiB/s (`sync_speed_min`, `sync_speed_max`
    /// in sysfs; the defaults are the sysctls `dev.raid.speed_limit_min` 1,000 and
    /// `speed_limit_max` 200,000, Documentation/admin-guide/md.rst). Below the minimum a
    /// rebuild never yields to other I/O; above the maximum it sleeps.
    pub sync_speed_min_kib: u32,
    pub sync_speed_max_kib: u32,
}

impl MdSettings {
    /// The per-page cost for RAID 5 (`raid6` false) or RAID 6: the given one, or the copy at
    /// the XOR rate plus the XOR (RAID 5) or syndrome (RAID 6) computation.
    pub fn page_cost_nanos(&self, raid6: bool) -> f64 {
        self.page_cost_nanos.unwrap_or_else(|| {
            let copy = 4096.0 / MD_XOR_BYTES_PER_SEC;
            let parity = 4096.0
                / if raid6 {
                    MD_PQ_BYTES_PER_SEC
                } else {
                    MD_XOR_BYTES_PER_SEC
                };
            (copy + parity) * 1e9
        })
    }
}

impl Default for MdSettings {
    fn default() -> Self {
        MdSettings {
            stripe_cache_size: super::md::DEFAULT_STRIPE_CACHE_SIZE,
            group_thread_cnt: 0,
            stripe_cost_nanos: MD_STRIPE_COST_NANOS,
            page_cost_nanos: None,
            bitmap: MdBitmapSetting::Auto,
            safe_mode_delay_nanos: Some(super::md_super::SAFE_MODE_DELAY_NANOS),
            sync_speed_min_kib: MD_SYNC_SPEED_MIN_KIB,
            sync_speed_max_kib: MD_SYNC_SPEED_MAX_KIB,
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

    /// Linux md without a write-intent bitmap (`mdadm --bitmap=none`), as the lab's arrays
    /// and md's stripe model ([`crate::array::md`]) have.
    pub fn software_without_bitmap() -> ControllerModel {
        ControllerModel {
            md: Some(MdSettings {
                bitmap: MdBitmapSetting::None,
                ..MdSettings::default()
            }),
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
