//! Linux md's write-intent bitmap: before md writes a region of the array it marks the region
//! dirty in a bitmap kept on the members, so that after a crash only dirty regions are
//! resynced (md(4) "BITMAP WRITE-INTENT LOGGING", `Documentation/admin-guide/md.rst`
//! "bitmap/*", mdadm(8) `--bitmap`, `--bitmap-chunk`). Written from those documents and from
//! how `drivers/md/md-bitmap.c` behaves in Linux 6.1:
//!
//! - **Chunks and counters.** One bit per bitmap chunk (mdadm's default for an internal
//!   bitmap: 64 MiB, `/proc/mdstat` "65536KB chunk") of the member's address space for RAID
//!   5/6 (stripe sectors), of the array's for RAID 1/10. In memory each chunk has a counter of
//!   writes in flight. A write that finds its chunk's bit clear sets it, which makes the page
//!   of the bitmap holding it dirty (`md_bitmap_startwrite`).
//! - **Unplug.** No write to a chunk whose bit is not yet on disk may reach the members: md
//!   writes every dirty bitmap page to every member and waits for them (`md_bitmap_unplug`,
//!   synchronous, `REQ_PREFLUSH | REQ_FUA` superblock writes). RAID 5/6 do it in `raid5d`,
//!   whose stripes wait on its bitmap list until the next unplug (`STRIPE_BIT_DELAY`), and
//!   `raid5d` handles no stripe meanwhile; RAID 1/10 before submitting the queued writes.
//! - **Clearing.** A chunk with no write in flight is cleared lazily by the bitmap daemon,
//!   which runs every `daemon_sleep` (5 s): a pass moves a just-idle chunk's counter from 2 to
//!   1, the next pass clears its bit and marks the page pending, and the pass after that
//!   writes the page (unless a dirty page is waiting for an unplug, which then writes it). A
//!   chunk written at least once every ~10 s never costs a bitmap write again; a chunk
//!   written less often costs one to set and one to clear.
//!
//! The bitmap file is a 256-byte superblock followed by the bits; a page written to a member
//! is 4 KiB, the last one only the bytes it holds rounded up to 512 (`write_sb_page`).
//! mdadm adds an internal bitmap by itself when the members are larger than 100 GiB
//! ("automatically enabling write-intent bitmap on large array", `Create.c`).
//!
//! Memory: a counter for each chunk written (the footprint divided by the chunk size).

use serde::{Deserialize, Serialize};

use super::layout::{Level, Member, Node};
use crate::hash::{IntMap, IntSet};

/// mdadm's default bitmap chunk for an internal bitmap (mdadm(8) `--bitmap-chunk`; the
/// "65536KB chunk" of `/proc/mdstat` on arrays created with defaults).
pub const DEFAULT_BITMAP_CHUNK_BYTES: u64 = 64 << 20;
/// The bitmap daemon's period, `daemon_sleep` (md.rst "bitmap/time_base": "a bit will be
/// cleared between 2 and 3 times time_base after all the covered blocks are known to be
/// in-sync"; mdadm(8) `--delay`, 5 seconds by default).
pub const DEFAULT_DAEMON_SLEEP_NANOS: u64 = 5_000_000_000;
/// mdadm enables an internal bitmap when each member is larger than this (`Create.c`: a size
/// over 100 GiB).
pub const AUTO_BITMAP_MEMBER_BYTES: u64 = 100 << 30;
/// Where an internal bitmap starts on a member with mdadm's default 1.2 metadata: the
/// superblock at 4 KiB, the bitmap 8 sectors after it.
pub const BITMAP_OFFSET_BYTES: u64 = 8192;
/// The bitmap file's superblock (`bitmap_super_t`), before the bits.
pub const BITMAP_SUPER_BYTES: u64 = 256;
const PAGE_BYTES: u64 = 4096;
const PAGE_BITS: u64 = PAGE_BYTES * 8;

/// Whether an md array has a write-intent bitmap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MdBitmapSetting {
    /// What mdadm creates by default: an internal bitmap of 64 MiB chunks on members over
    /// 100 GiB, none on smaller ones.
    #[default]
    Auto,
    None,
    /// An internal bitmap (on every member) with this chunk size.
    Internal {
        chunk_bytes: u64,
    },
}

impl MdBitmapSetting {
    /// The bitmap chunk this setting gives members of `member_bytes`, `None` for no bitmap.
    pub fn chunk_bytes(self, member_bytes: u64) -> Option<u64> {
        match self {
            MdBitmapSetting::Auto => {
                (member_bytes > AUTO_BITMAP_MEMBER_BYTES).then_some(DEFAULT_BITMAP_CHUNK_BYTES)
            }
            MdBitmapSetting::None => None,
            MdBitmapSetting::Internal { chunk_bytes } => Some(chunk_bytes),
        }
    }

    /// Parses `auto`, `none`, `internal` (64 MiB chunks) or a chunk size (`internal` with that
    /// chunk: `128MiB`, `internal:128MiB`).
    pub fn parse(s: &str) -> Result<MdBitmapSetting, String> {
        let t = s.trim();
        let size = t
            .strip_prefix("internal:")
            .or_else(|| t.strip_prefix("internal="))
            .unwrap_or(t);
        match t.to_ascii_lowercase().as_str() {
            "auto" => return Ok(MdBitmapSetting::Auto),
            "none" => return Ok(MdBitmapSetting::None),
            "internal" => {
                return Ok(MdBitmapSetting::Internal {
                    chunk_bytes: DEFAULT_BITMAP_CHUNK_BYTES,
                })
            }
            _ => {}
        }
        let chunk_bytes = crate::units::parse_size(size)
            .map_err(|e| format!("expected auto, none, internal or a chunk size ({e})"))?;
        if chunk_bytes < 4096 || !chunk_bytes.is_power_of_two() {
            return Err(
                "a bitmap chunk is a power of two of at least 4 KiB, as mdadm takes it".into(),
            );
        }
        Ok(MdBitmapSetting::Internal { chunk_bytes })
    }
}

/// Where an array's bitmap lies: its chunk, the bytes it covers and how writes map onto it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitmapExtent {
    pub chunk_bytes: u64,
    /// A member's bytes (RAID 5/6) or the array's (RAID 1/10).
    pub covered_bytes: u64,
    /// RAID 5/6: the md chunk and the data members of a stripe row (writes map to stripe
    /// sectors, `raid5d` writes the bitmap); `None` for RAID 1/10 (array sectors).
    pub stripes: Option<(u64, u64)>,
}

impl BitmapExtent {
    /// The bitmap md keeps for a software array `node` with `setting` (members of
    /// `capacity(disk)` bytes): RAID 1, 5, 6 and 10 (md's, or RAID 0 over mirrored pairs, as
    /// md's `n2` places them) over disks; `None` when it has none.
    pub fn of(
        node: &Node,
        setting: MdBitmapSetting,
        capacity: &dyn Fn(u32) -> u64,
    ) -> Option<BitmapExtent> {
        let mut disks = Vec::new();
        node.disks(&mut disks);
        let member_bytes = disks.iter().map(|&d| capacity(d)).min()?;
        let chunk_bytes = setting.chunk_bytes(member_bytes)?;
        let over_disks = |n: &Node| n.members.iter().all(|m| matches!(m, Member::Disk(_)));
        let mirrored_pairs = node.level == Level::Raid0
            && node
                .members
                .iter()
                .all(|m| matches!(m, Member::Node(n) if n.level == Level::Raid1 && over_disks(n)));
        let (covered_bytes, stripes) = match node.level {
            Level::Raid5 | Level::Raid6 if over_disks(node) => {
                let data = (node.members.len() as u64)
                    .saturating_sub(node.level.parity_members() as u64)
                    .max(1);
                (member_bytes, Some((node.chunk_bytes.max(4096), data)))
            }
            Level::Raid1 | Level::Raid10 if over_disks(node) => {
                (node.capacity_bytes(capacity), None)
            }
            Level::Raid0 if mirrored_pairs => (node.capacity_bytes(capacity), None),
            _ => return None,
        };
        Some(BitmapExtent {
            chunk_bytes,
            covered_bytes,
            stripes,
        })
    }

    /// The bitmap's address range `[start, end)` for an array write of `[offset, offset +
    /// len)`.
    pub fn covered_range(&self, offset: u64, len: u64) -> (u64, u64) {
        let end = offset + len.max(1);
        match self.stripes {
            None => (offset, end),
            Some((chunk, data)) => {
                let row = chunk * data;
                let member = |off: u64| off / row * chunk + off % chunk;
                let (a, b) = (member(offset), member(end - 1));
                (a.min(b), a.max(b) + 1)
            }
        }
    }
}

/// The bitmap's state: counters of the chunks written, the pages waiting to be written.
#[derive(Debug)]
pub struct Bitmap {
    chunk_bytes: u64,
    chunks: u64,
    /// Per chunk written: 0 (absent) bit clear; 1 or 2 bit set and idle (the daemon clears it
    /// in one or two passes); 2 + n with n writes in flight.
    counters: IntMap<u64, u32>,
    /// Chunks the daemon's next pass looks at (their counter went to 2 or less).
    idle: IntSet<u64>,
    dirty: std::collections::BTreeSet<u64>,
    pending: std::collections::BTreeSet<u64>,
    needwrite: std::collections::BTreeSet<u64>,
    allclean: bool,
    /// Bits set and cleared so far.
    pub sets: u64,
    pub clears: u64,
}

impl Bitmap {
    /// A clean bitmap of `chunk_bytes` chunks over `covered_bytes` (a member's size for RAID
    /// 5/6, the array's for RAID 1/10).
    pub fn new(chunk_bytes: u64, covered_bytes: u64) -> Bitmap {
        let chunk_bytes = chunk_bytes.max(4096);
        Bitmap {
            chunk_bytes,
            chunks: covered_bytes.div_ceil(chunk_bytes).max(1),
            counters: IntMap::default(),
            idle: IntSet::default(),
            dirty: Default::default(),
            pending: Default::default(),
            needwrite: Default::default(),
            allclean: true,
            sets: 0,
            clears: 0,
        }
    }

    pub fn chunk_bytes(&self) -> u64 {
        self.chunk_bytes
    }

    /// Bits in the bitmap.
    pub fn chunks(&self) -> u64 {
        self.chunks
    }

    /// The chunks `[first, last]` covering bytes `[start, end)` of the bitmap's address space
    /// (`end > start`), clamped to the bitmap.
    pub fn chunk_range(&self, start: u64, end: u64) -> (u64, u64) {
        let last_chunk = self.chunks - 1;
        (
            (start / self.chunk_bytes).min(last_chunk),
            (end.saturating_sub(1).max(start) / self.chunk_bytes).min(last_chunk),
        )
    }

    fn page_of(chunk: u64) -> u64 {
        (BITMAP_SUPER_BYTES * 8 + chunk) / PAGE_BITS
    }

    /// Pages of the bitmap file.
    pub fn pages(&self) -> u64 {
        (BITMAP_SUPER_BYTES + self.chunks.div_ceil(8)).div_ceil(PAGE_BYTES)
    }

    /// Bytes md writes for `page`: 4 KiB, the last page its bytes rounded up to 512.
    pub fn page_write_bytes(&self, page: u64) -> u32 {
        let file = BITMAP_SUPER_BYTES + self.chunks.div_ceil(8);
        if page + 1 < self.pages() {
            return PAGE_BYTES as u32;
        }
        let last = match file % PAGE_BYTES {
            0 => PAGE_BYTES,
            n => n,
        };
        last.div_ceil(512) as u32 * 512
    }

    /// A write to chunks `[first, last]` starts (`md_bitmap_startwrite`): true when it set a
    /// bit, so that an unplug has a page to write before the write may go on.
    pub fn start_write(&mut self, first: u64, last: u64) -> bool {
        let mut set = false;
        for c in first..=last {
            let n = self.counters.entry(c).or_insert(0);
            if *n == 0 {
                self.dirty.insert(Self::page_of(c));
                self.sets += 1;
                set = true;
            }
            if *n <= 1 {
                *n = 2;
            }
            *n += 1;
        }
        set
    }

    /// A write to chunks `[first, last]` has completed (`md_bitmap_endwrite`).
    pub fn end_write(&mut self, first: u64, last: u64) {
        for c in first..=last {
            if let Some(n) = self.counters.get_mut(&c) {
                if *n > 2 {
                    *n -= 1;
                }
                if *n <= 2 {
                    self.idle.insert(c);
                    self.allclean = false;
                }
            }
        }
    }

    /// Whether a page waits for an unplug.
    pub fn has_dirty(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Whether the daemon has nothing left to do (it then sleeps until a write ends).
    pub fn all_clean(&self) -> bool {
        self.allclean
    }

    /// An unplug: the pages it writes (dirty, or waiting for the daemon's write), ascending;
    /// empty when there is none, and then the unplug costs nothing.
    pub fn take_unplug(&mut self, out: &mut Vec<u64>) {
        out.clear();
        out.extend(self.dirty.union(&self.needwrite).copied());
        for p in out.iter() {
            self.pending.remove(p);
        }
        self.dirty.clear();
        self.needwrite.clear();
    }

    /// One pass of the bitmap daemon (`md_bitmap_daemon_work`); `out` gets the pages it
    /// writes now, ascending.
    pub fn daemon_pass(&mut self, out: &mut Vec<u64>) {
        out.clear();
        if self.allclean {
            return;
        }
        self.allclean = true;
        // Pages marked pending by the last pass are written by this one.
        self.needwrite.extend(std::mem::take(&mut self.pending));
        let mut idle: Vec<u64> = self.idle.drain().collect();
        idle.sort_unstable();
        for c in idle {
            match self.counters.get(&c).copied() {
                Some(1) => {
                    self.counters.remove(&c);
                    self.clears += 1;
                    let p = Self::page_of(c);
                    if !self.needwrite.contains(&p) {
                        self.pending.insert(p);
                        self.allclean = false;
                    }
                }
                Some(2) => {
                    self.counters.insert(c, 1);
                    self.idle.insert(c);
                    self.allclean = false;
                }
                // Written again since (its end puts it back), or gone.
                _ => {}
            }
        }
        // Writes start in page order and stop at a dirty page: the unplug waiting for it
        // writes the rest.
        while let Some(&p) = self.needwrite.first() {
            if self.dirty.first().is_some_and(|&d| d <= p) {
                break;
            }
            self.needwrite.remove(&p);
            out.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_write_sets_a_bit_and_later_ones_to_the_chunk_do_not() {
        let mut b = Bitmap::new(64 << 20, 1 << 40);
        assert_eq!(b.chunks(), 16384);
        assert!(b.start_write(3, 3));
        assert!(b.has_dirty());
        let mut pages = Vec::new();
        b.take_unplug(&mut pages);
        assert_eq!(pages, vec![0]);
        assert!(!b.has_dirty());
        assert!(!b.start_write(3, 3), "the bit is set");
        b.end_write(3, 3);
        b.end_write(3, 3);
        assert!(!b.start_write(3, 3), "set until the daemon clears it");
        b.take_unplug(&mut pages);
        assert!(pages.is_empty());
    }

    #[test]
    fn the_daemon_clears_an_idle_chunk_on_its_second_pass_and_writes_it_on_the_third() {
        let mut b = Bitmap::new(64 << 20, 1 << 40);
        let mut pages = Vec::new();
        b.start_write(7, 7);
        b.take_unplug(&mut pages);
        // A pass while the write is in flight does nothing.
        b.daemon_pass(&mut pages);
        assert!(pages.is_empty());
        b.end_write(7, 7);
        b.daemon_pass(&mut pages); // 2 -> 1
        assert!(pages.is_empty() && !b.all_clean());
        b.daemon_pass(&mut pages); // 1 -> 0, page pending
        assert!(pages.is_empty());
        assert_eq!(b.clears, 1);
        b.daemon_pass(&mut pages); // pending -> written
        assert_eq!(pages, vec![0]);
        b.daemon_pass(&mut pages);
        assert!(pages.is_empty() && b.all_clean());
        // Cleared: the next write sets the bit again.
        assert!(b.start_write(7, 7));
    }

    #[test]
    fn a_write_between_passes_keeps_the_chunk_set() {
        let mut b = Bitmap::new(64 << 20, 1 << 40);
        let mut pages = Vec::new();
        b.start_write(1, 1);
        b.end_write(1, 1);
        b.daemon_pass(&mut pages); // 2 -> 1
        assert!(!b.start_write(1, 1), "1 -> 3: still set, no page to write");
        b.end_write(1, 1);
        b.daemon_pass(&mut pages); // 2 -> 1 again
        b.daemon_pass(&mut pages); // cleared now
        assert_eq!(b.clears, 1);
        assert_eq!(b.sets, 1);
    }

    #[test]
    fn an_unplug_takes_the_pages_the_daemon_left_to_write() {
        let mut b = Bitmap::new(4096, 1 << 30); // 262,144 chunks: 9 pages
        assert_eq!(b.pages(), 9);
        let mut pages = Vec::new();
        b.start_write(40_000, 40_000); // page 1
        b.take_unplug(&mut pages);
        b.end_write(40_000, 40_000);
        b.daemon_pass(&mut pages);
        b.daemon_pass(&mut pages); // cleared: page 1 pending
        b.start_write(0, 0); // page 0 dirty
        b.daemon_pass(&mut pages); // page 1 needs writing, but page 0 is dirty: left to the unplug
        assert!(pages.is_empty());
        b.take_unplug(&mut pages);
        assert_eq!(pages, vec![0, 1]);
    }

    #[test]
    fn page_sizes_follow_the_bitmap_file() {
        // 4 chunks: 256 + 1 bytes -> one 512-byte write.
        let b = Bitmap::new(64 << 20, 256 << 20);
        assert_eq!((b.pages(), b.page_write_bytes(0)), (1, 512));
        // 4096 chunks: 256 + 512 bytes -> 1 KiB.
        let b = Bitmap::new(64 << 10, 256 << 20);
        assert_eq!((b.pages(), b.page_write_bytes(0)), (1, 1024));
        // 16 TB of 64 MiB chunks: 256 + 32,768 bytes -> 9 pages, the last 256 bytes -> 512.
        let b = Bitmap::new(64 << 20, 1 << 44);
        assert_eq!(b.pages(), 9);
        assert_eq!(b.page_write_bytes(0), 4096);
        assert_eq!(b.page_write_bytes(8), 512);
    }

    #[test]
    fn settings_parse_as_mdadm_names_them() {
        assert_eq!(MdBitmapSetting::parse("none"), Ok(MdBitmapSetting::None));
        assert_eq!(MdBitmapSetting::parse("auto"), Ok(MdBitmapSetting::Auto));
        assert_eq!(
            MdBitmapSetting::parse("internal"),
            Ok(MdBitmapSetting::Internal {
                chunk_bytes: 64 << 20
            })
        );
        assert_eq!(
            MdBitmapSetting::parse("internal:128MiB"),
            Ok(MdBitmapSetting::Internal {
                chunk_bytes: 128 << 20
            })
        );
        assert_eq!(
            MdBitmapSetting::parse("1M"),
            Ok(MdBitmapSetting::Internal {
                chunk_bytes: 1 << 20
            })
        );
        assert!(MdBitmapSetting::parse("3000").is_err());
        assert!(MdBitmapSetting::parse("sometimes").is_err());
        assert_eq!(MdBitmapSetting::Auto.chunk_bytes(100 << 30), None);
        assert_eq!(MdBitmapSetting::Auto.chunk_bytes(4 << 40), Some(64 << 20));
    }
}
