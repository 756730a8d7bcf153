//! Linux md's superblock updates around safe mode: an md array with redundancy (RAID 1, 4, 5,
//! 6, 10) is marked clean in its superblock when no write has been in flight for a while, and
//! dirty again before the next write goes on (md.rst "safe_mode_delay": "When an md array has
//! seen no write requests for a certain period of time, it will be marked as 'clean'. When
//! another write request arrives, the array is marked as 'dirty' before the write commences.
//! This is known as 'safe_mode'. … The default is 200msec."). Written from md.rst, md(4) and
//! how `drivers/md/md.c` behaves in Linux 6.1:
//!
//! - **Dirty.** The first write after the array turned clean (or was assembled clean) marks it
//!   dirty: md's thread writes the superblock to every member, and that write and every write
//!   arriving meanwhile wait until it is on disk (`md_write_start` waits while
//!   `MD_SB_CHANGE_PENDING` is set).
//! - **Clean.** Each write's end re-arms a timer for `safe_mode_delay` after the end, rounded up
//!   to a multiple of the delay on the kernel's clock (`md_write_end`:
//!   `roundup(jiffies, safemode_delay) + safemode_delay`, so 200–400 ms after the last write).
//!   When it fires with no write in flight, md's thread marks the array clean and writes the
//!   superblock to every member in the background; a write arriving during that update waits
//!   for it and for the dirty update after it.
//! - **What is written.** The version 1.2 superblock, 4 KiB from the start of every member, one
//!   512-byte block (the lab's member traces: one sector at sector 8, `REQ_PREFLUSH | REQ_FUA`,
//!   on every md workload), and, before it, the write-intent bitmap's superblock page when the
//!   array has a bitmap (`md_update_sb` calls `md_bitmap_update_sb`, which writes the bitmap's
//!   first page and waits for it).
//!
//! RAID 0 and linear arrays have no redundancy to resync and never call `md_write_start`: the
//! lab's RAID 0 workload sent its members exactly the data writes.

use super::layout::{Level, Member, Node};

/// md's `safe_mode_delay` default (md.rst "md/safe_mode_delay", 200 ms).
pub const SAFE_MODE_DELAY_NANOS: u64 = 200_000_000;
/// Where the version 1.2 superblock is on each member (md(4): "The superblock is 4K from the
/// start of the device" for metadata 1.2, mdadm's default).
pub const SUPERBLOCK_OFFSET_BYTES: u64 = 4096;
/// One superblock write: 256 bytes and two per device slot, rounded up to the 512-byte
/// sector (the lab's member traces: `+ 1` sector at sector 8 on arrays of 2 to 8 members).
pub const SUPERBLOCK_WRITE_BYTES: u32 = 512;

/// Whether md keeps safe mode for a software array `node`: RAID 1, 5, 6 and 10 over disks, or
/// RAID 0 over mirrored pairs (md's RAID 10 `n2` as the layout describes it); not RAID 0 or
/// linear arrays, which have no redundancy to resync.
pub fn has_safe_mode(node: &Node) -> bool {
    let over_disks = |n: &Node| n.members.iter().all(|m| matches!(m, Member::Disk(_)));
    match node.level {
        Level::Raid1 | Level::Raid5 | Level::Raid6 | Level::Raid10 => over_disks(node),
        Level::Raid0 => node
            .members
            .iter()
            .all(|m| matches!(m, Member::Node(n) if n.level == Level::Raid1 && over_disks(n))),
        Level::Concat => false,
    }
}

/// When the safe-mode timer armed by a write ending at `end_nanos` fires: the end rounded up
/// to a multiple of `delay_nanos`, plus the delay (`md_write_end`). The kernel rounds on its
/// own clock (jiffies), whose phase against the trace's clock is unknown; the trace's clock is
/// taken for it. `None` when safe mode is off (a delay of 0: md.rst, "Writing a value of 0
/// disables safemode").
pub fn safe_mode_fires_at(end_nanos: u64, delay_nanos: u64) -> Option<u64> {
    if delay_nanos == 0 {
        return None;
    }
    Some(end_nanos.div_ceil(delay_nanos) * delay_nanos + delay_nanos)
}

/// Safe mode over a stream of write bios in issue order, for the count model, which has no
/// clock of its own: the trace's issue times and, where it has them, completion times. A
/// write without a completion time may have ended at any time before the next write, so no
/// clean period is assumed after it (the array stays dirty until the stream ends).
#[derive(Clone, Debug)]
pub struct SafeModeCount {
    delay_nanos: u64,
    dirty: bool,
    /// The latest end of the writes since the array turned dirty, while every one of them had
    /// a completion time.
    last_end_nanos: Option<u64>,
    /// Superblock updates so far.
    pub updates: u64,
}

impl SafeModeCount {
    /// A clean array (as assembled) with safe mode after `delay_nanos`.
    pub fn new(delay_nanos: u64) -> SafeModeCount {
        SafeModeCount {
            delay_nanos,
            dirty: false,
            last_end_nanos: None,
            updates: 0,
        }
    }

    /// A write issued at `time_nanos` that took `latency_nanos` (when known): the superblock
    /// updates md makes before it goes on (0, 1: marked dirty, or 2: marked clean during an
    /// idle period, then dirty).
    pub fn write(&mut self, time_nanos: u64, latency_nanos: Option<u64>) -> u32 {
        let mut updates = 0;
        if self.dirty {
            let fired = self
                .last_end_nanos
                .and_then(|end| safe_mode_fires_at(end, self.delay_nanos))
                .is_some_and(|t| t <= time_nanos);
            if fired {
                self.dirty = false;
                updates += 1;
            }
        }
        if !self.dirty {
            self.dirty = true;
            self.last_end_nanos = Some(time_nanos);
            updates += 1;
        }
        self.last_end_nanos = match (self.last_end_nanos, latency_nanos) {
            (Some(end), Some(l)) => Some(end.max(time_nanos.saturating_add(l))),
            _ => None,
        };
        self.updates += u64::from(updates);
        updates
    }

    /// The stream has ended: a dirty array is marked clean once its writes are done (with safe
    /// mode off, when it is stopped), one more update.
    pub fn finish(&mut self) -> u32 {
        if std::mem::take(&mut self.dirty) {
            self.updates += 1;
            1
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_timer_fires_between_one_and_two_delays_after_the_end() {
        let d = SAFE_MODE_DELAY_NANOS;
        assert_eq!(safe_mode_fires_at(0, d), Some(200 * MS));
        assert_eq!(safe_mode_fires_at(MS, d), Some(400 * MS));
        assert_eq!(safe_mode_fires_at(200 * MS, d), Some(400 * MS));
        assert_eq!(safe_mode_fires_at(399 * MS, d), Some(600 * MS));
        assert_eq!(safe_mode_fires_at(5 * MS, 0), None);
    }

    #[test]
    fn a_stream_is_marked_dirty_once_and_clean_at_its_end() {
        let mut s = SafeModeCount::new(SAFE_MODE_DELAY_NANOS);
        assert_eq!(s.write(0, Some(MS)), 1);
        for i in 1..100 {
            assert_eq!(s.write(i * 50 * MS, Some(MS)), 0, "write {i}");
        }
        assert_eq!(s.finish(), 1);
        assert_eq!(s.finish(), 0);
        assert_eq!(s.updates, 2);
    }

    #[test]
    fn an_idle_period_with_known_ends_costs_a_clean_and_a_dirty_update() {
        let mut s = SafeModeCount::new(SAFE_MODE_DELAY_NANOS);
        s.write(0, Some(10 * MS));
        // Ended at 10 ms: the timer fires at 400 ms.
        assert_eq!(s.write(399 * MS, Some(MS)), 0);
        // Ended at 400 ms: fires at 600 ms.
        assert_eq!(s.write(600 * MS, Some(MS)), 2);
        // A long write keeps the array dirty past its issue.
        s.write(700 * MS, Some(900 * MS));
        assert_eq!(s.write(1_500 * MS, Some(MS)), 0, "still in flight");
        assert_eq!(s.updates, 3);
    }

    #[test]
    fn without_completions_no_idle_period_is_assumed() {
        let mut s = SafeModeCount::new(SAFE_MODE_DELAY_NANOS);
        s.write(0, None);
        assert_eq!(s.write(10_000 * MS, None), 0);
        assert_eq!(s.write(20_000 * MS, Some(MS)), 0);
        // Every write since the last dirty mark must have ended for the array to be idle.
        assert_eq!(s.write(30_000 * MS, Some(MS)), 0);
        assert_eq!(s.finish(), 1);
        assert_eq!(s.updates, 2);
    }

    #[test]
    fn safe_mode_off_marks_dirty_once() {
        let mut s = SafeModeCount::new(0);
        assert_eq!(s.write(0, Some(MS)), 1);
        assert_eq!(s.write(10_000 * MS, Some(MS)), 0);
        assert_eq!(s.finish(), 1);
    }
}
