//! md's superblock updates around safe mode in the timing engine
//! ([`crate::array::md_super`] has the rules). The first write after the array was clean marks
//! it dirty: the superblock (and, with a bitmap, the bitmap's superblock page before it) is
//! written to every member, and that write and every write arriving meanwhile wait for it.
//! Each write's end re-arms the safe-mode timer; when it fires with no write in flight the
//! array is marked clean, the same writes in the background, and a write arriving during that
//! update waits for it and for the dirty update after it. A run that ends dirty is marked
//! clean after it: those writes are counted on the members but not timed.

use std::cmp::Reverse;

use super::{Engine, Kind, EV_MD_SUPER};
use crate::array::layout::{DiskOp, Node};
use crate::array::md_bitmap::BITMAP_OFFSET_BYTES;
use crate::array::md_super::{
    has_safe_mode, safe_mode_fires_at, SUPERBLOCK_OFFSET_BYTES, SUPERBLOCK_WRITE_BYTES,
};

pub(super) struct SafeModeTiming {
    delay_nanos: u64,
    /// The members md writes its superblock to (the live ones).
    members: Vec<u32>,
    in_sync: bool,
    /// The update being written (its internal request), and whether the md superblock (true)
    /// or the bitmap's superblock page before it is being written.
    updating: Option<u32>,
    writing_md_super: bool,
    /// A write marked the array dirty while a clean update was writing: another update
    /// follows it.
    again: bool,
    /// Writes waiting for the updates to be on disk.
    waiters: Vec<u32>,
    /// Writes past `md_write_start` and not yet ended.
    in_flight: u32,
    /// When the safe-mode timer fires (its event on the heap; others are stale).
    timer_at: Option<u64>,
    /// During the measurement window: superblock updates and their member writes.
    pub(super) updates: u64,
    pub(super) member_writes: u64,
    /// Count the update after the run even when the window closed before it
    /// ([`Engine::count_clean_after_run`]).
    count_after_run: bool,
}

impl SafeModeTiming {
    /// Safe mode for a software array `node` with a persistent superblock
    /// (`delay_nanos` `Some`) that keeps one ([`has_safe_mode`]); `None` otherwise.
    pub(super) fn for_layout(node: &Node, delay_nanos: Option<u64>) -> Option<SafeModeTiming> {
        let delay_nanos = delay_nanos?;
        if !has_safe_mode(node) {
            return None;
        }
        Some(SafeModeTiming {
            delay_nanos,
            members: super::md_live_members(node),
            in_sync: true,
            updating: None,
            writing_md_super: false,
            again: false,
            waiters: Vec::new(),
            in_flight: 0,
            timer_at: None,
            updates: 0,
            member_writes: 0,
            count_after_run: false,
        })
    }

    pub(super) fn delay_nanos(&self) -> u64 {
        self.delay_nanos
    }

    /// A new measurement window starts.
    pub(super) fn restart_window(&mut self) {
        self.updates = 0;
        self.member_writes = 0;
    }
}

impl Engine {
    /// Safe mode's part of admitting request `id` (`md_write_start`): marks a clean array
    /// dirty, and parks the write while an update is being written (true); [`Engine::admit`]
    /// runs again when it is on disk.
    pub(super) fn safe_mode_gate(&mut self, id: u32) -> bool {
        if self.reqs[id as usize].safe_started || self.safe_mode.is_none() || !self.is_md_write(id)
        {
            return false;
        }
        let Some(s) = self.safe_mode.as_mut() else {
            return false;
        };
        if s.in_sync {
            s.in_sync = false;
            if s.updating.is_some() {
                s.again = true;
            } else {
                self.super_update();
            }
            // Marking the array dirty wakes md's thread.
            self.bitmap_wake();
        }
        let Some(s) = self.safe_mode.as_mut() else {
            return false;
        };
        if s.updating.is_some() {
            s.waiters.push(id);
            return true;
        }
        s.in_flight += 1;
        self.reqs[id as usize].safe_started = true;
        false
    }

    /// Starts an update: the bitmap's superblock page first when there is a bitmap, then the
    /// md superblock, each on every member.
    fn super_update(&mut self) {
        let page = self.bitmap.as_ref().map(|b| b.super_page_bytes());
        let Some(s) = self.safe_mode.as_mut() else {
            return;
        };
        if self.measuring {
            s.updates += 1;
        }
        match page {
            Some(bytes) => self.super_write(BITMAP_OFFSET_BYTES, bytes, false),
            None => self.super_write(SUPERBLOCK_OFFSET_BYTES, SUPERBLOCK_WRITE_BYTES, true),
        }
    }

    /// One write of `len_bytes` at `offset_bytes` to every member, the update's step (`md` the
    /// md superblock, else the bitmap's page).
    fn super_write(&mut self, offset_bytes: u64, len_bytes: u32, md: bool) {
        if self.measuring {
            self.count_super_step(len_bytes, md);
        }
        let Some(s) = self.safe_mode.as_mut() else {
            return;
        };
        let mut ops = self.op_pool.pop().unwrap_or_default();
        ops.clear();
        ops.extend(s.members.iter().map(|&disk| DiskOp {
            disk,
            offset_bytes,
            len_bytes,
            write: true,
            phase: 0,
        }));
        s.writing_md_super = md;
        let id = self.alloc_internal(Kind::MdSuper, ops, Vec::new());
        if let Some(s) = self.safe_mode.as_mut() {
            s.updating = Some(id);
        }
        self.start_phase(id);
    }

    /// A step of an update is on every member: the md superblock follows the bitmap's page;
    /// after it, another update if a write asked for one meanwhile, else the waiting writes
    /// go on.
    pub(super) fn super_write_done(&mut self, id: u32) {
        self.free_req(id);
        let Some(s) = self.safe_mode.as_mut() else {
            return;
        };
        if s.updating != Some(id) {
            return;
        }
        s.updating = None;
        if !s.writing_md_super {
            self.super_write(SUPERBLOCK_OFFSET_BYTES, SUPERBLOCK_WRITE_BYTES, true);
            return;
        }
        if std::mem::take(&mut s.again) {
            self.super_update();
            return;
        }
        let waiters = std::mem::take(&mut s.waiters);
        for w in waiters {
            self.admit(w);
        }
        self.md_schedule_pick();
    }

    /// A write that passed `md_write_start` has ended: the safe-mode timer is re-armed
    /// (`md_write_end`).
    pub(super) fn safe_mode_end_write(&mut self, id: u32) {
        if !std::mem::take(&mut self.reqs[id as usize].safe_started) {
            return;
        }
        let now = self.now;
        let Some(s) = self.safe_mode.as_mut() else {
            return;
        };
        s.in_flight = s.in_flight.saturating_sub(1);
        let Some(t) = safe_mode_fires_at(now, s.delay_nanos) else {
            return;
        };
        // Ends within one rounding period arm the same time: one event for them all.
        if s.timer_at != Some(t) {
            s.timer_at = Some(t);
            self.heap.push(Reverse((t, EV_MD_SUPER, 0)));
        }
    }

    /// The safe-mode timer (an `EV_MD_SUPER` event): with no write in flight the array is
    /// marked clean.
    pub(super) fn safe_mode_timer(&mut self) {
        let now = self.now;
        let Some(s) = self.safe_mode.as_mut() else {
            return;
        };
        if s.timer_at != Some(now) {
            return;
        }
        s.timer_at = None;
        if s.in_flight == 0 && !s.in_sync && s.updating.is_none() {
            s.in_sync = true;
            self.super_update();
        }
        // The timer wakes md's thread whether or not it marks the array clean.
        self.bitmap_wake();
    }

    /// A replay of a whole trace counts the update that marks the array clean after it even
    /// though its window closed before the drain: the member I/O is then what md sends for
    /// the trace's bios, as the count model ([`crate::array::md`]) gives it.
    pub fn count_clean_after_run(&mut self) {
        if let Some(s) = self.safe_mode.as_mut() {
            s.count_after_run = true;
        }
    }

    /// The run has ended: an array left dirty is marked clean after it, which is counted on
    /// the members (not timed) when the window is open or [`Engine::count_clean_after_run`]
    /// asked for it.
    pub(super) fn safe_mode_after_run(&mut self) {
        let measuring = self.measuring;
        let page = self.bitmap.as_ref().map(|b| b.super_page_bytes());
        let Some(s) = self.safe_mode.as_mut() else {
            return;
        };
        if s.in_sync || !(measuring || s.count_after_run) {
            return;
        }
        s.in_sync = true;
        s.updates += 1;
        if let Some(bytes) = page {
            self.count_super_step(bytes, false);
        }
        self.count_super_step(SUPERBLOCK_WRITE_BYTES, true);
    }

    /// Counts one step of an update on the members: `len_bytes` written to each, the md
    /// superblock (`md`) or the bitmap's first page (also a bitmap page write).
    fn count_super_step(&mut self, len_bytes: u32, md: bool) {
        let Some(s) = self.safe_mode.as_mut() else {
            return;
        };
        let n = s.members.len() as u64;
        s.member_writes += n;
        for &disk in &s.members {
            self.disks[disk as usize].count(true, len_bytes);
        }
        if !md {
            if let Some(b) = self.bitmap.as_mut() {
                b.page_writes += n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{HostIo, RunResult, Target};
    use super::*;
    use crate::array::controller::{ControllerModel, MdBitmapSetting, MdSettings};
    use crate::array::device::{DeviceModel, DiskPreset, SsdTiming};
    use crate::array::layout::Level;
    use crate::array::md_bitmap::Bitmap;

    const MS: u64 = 1_000_000;

    fn write(offset_bytes: u64) -> HostIo {
        HostIo {
            offset_bytes,
            len_bytes: 4096,
            write: true,
            target: Target::Array,
            host_bytes: 4096,
        }
    }

    /// A `level` array of `n` SATA SSDs with safe mode after `delay` (`None`: no superblock)
    /// and `bitmap`; the SSD's 4 KiB write time, its superblock write time and its bitmap
    /// page write time.
    fn array(
        level: Level,
        n: u32,
        delay: Option<u64>,
        bitmap: MdBitmapSetting,
    ) -> (Engine, f64, f64, f64) {
        let model = DiskPreset::SataSsd.model();
        let DeviceModel::Ssd(s) = &model else {
            panic!("ssd")
        };
        let timing = SsdTiming::new(s);
        let mut c = ControllerModel::software();
        c.md = Some(MdSettings {
            bitmap,
            safe_mode_delay_nanos: delay,
            ..MdSettings::default()
        });
        let page = Bitmap::new(64 << 20, s.capacity_bytes).page_write_bytes(0);
        let e = Engine::new(
            &vec![model.clone(); n as usize],
            Node::over_disks(level, 65536, 0, n),
            c,
            None,
        );
        (
            e,
            timing.service_nanos(4096, true),
            timing.service_nanos(SUPERBLOCK_WRITE_BYTES, true),
            timing.service_nanos(page, true),
        )
    }

    fn member_writes(r: &RunResult) -> Vec<u64> {
        r.disks.iter().map(|d| d.writes).collect()
    }

    const DELAY: Option<u64> = Some(crate::array::md_super::SAFE_MODE_DELAY_NANOS);

    #[test]
    fn the_first_write_waits_for_the_superblock_on_every_member() {
        let (mut e, data, sb, _) = array(Level::Raid1, 2, DELAY, MdBitmapSetting::None);
        e.submit_at(0, write(0));
        let r = e.finish();
        assert!(
            (r.latency.mean_nanos - (sb.ceil() + data.ceil())).abs() <= 2.0,
            "{} vs {sb} + {data}",
            r.latency.mean_nanos
        );
        // Marked dirty, the data, and marked clean after the run, on both members.
        assert_eq!(member_writes(&r), vec![3, 3]);
        let s = r.md_superblock.as_ref().expect("superblock");
        assert_eq!((s.updates, s.member_writes), (2, 4));
        // Without a persistent superblock: the data alone.
        let (mut e, data, _, _) = array(Level::Raid1, 2, None, MdBitmapSetting::None);
        e.submit_at(0, write(0));
        let r = e.finish();
        assert!(r.md_superblock.is_none());
        assert_eq!(member_writes(&r), vec![1, 1]);
        assert!((r.latency.mean_nanos - data).abs() <= 2.0);
    }

    #[test]
    fn an_idle_period_marks_the_array_clean_and_the_next_write_waits_again() {
        for level in [Level::Raid1, Level::Raid5, Level::Raid6, Level::Raid10] {
            let n = 4;
            // Writes 50 ms apart keep the array dirty; after 1 s without a write it is marked
            // clean (200-400 ms after the last end) and the next write marks it dirty.
            let (mut e, _, _, _) = array(level, n, DELAY, MdBitmapSetting::None);
            for t in [0, 50, 100, 1_100] {
                e.submit_at(t * MS, write(t * 4096));
            }
            let r = e.finish();
            let s = r.md_superblock.as_ref().expect("superblock");
            assert_eq!(
                s.updates, 4,
                "{level:?}: dirty, clean, dirty, clean after the run"
            );
            assert_eq!(s.member_writes, 4 * u64::from(n), "{level:?}");
            // Safe mode off: marked dirty once, and clean when stopped.
            let (mut e, _, _, _) = array(level, n, Some(0), MdBitmapSetting::None);
            for t in [0, 50, 100, 1_100] {
                e.submit_at(t * MS, write(t * 4096));
            }
            let r = e.finish();
            assert_eq!(r.md_superblock.as_ref().map(|s| s.updates), Some(2));
        }
        // RAID 0 has no superblock to mark.
        let (mut e, _, _, _) = array(Level::Raid0, 4, DELAY, MdBitmapSetting::None);
        e.submit_at(0, write(0));
        let r = e.finish();
        assert!(r.md_superblock.is_none());
        assert_eq!(member_writes(&r).iter().sum::<u64>(), 1);
    }

    #[test]
    fn a_write_during_the_clean_update_waits_for_it_and_the_dirty_one() {
        let (mut e, data, sb, _) = array(Level::Raid1, 2, DELAY, MdBitmapSetting::None);
        e.submit_at(0, write(0));
        // The first write ends within a few hundred µs: the timer fires at 400 ms (the end
        // rounded up to 200 ms, plus 200 ms), when the clean update starts; a write arriving
        // just after waits for it and for a dirty one.
        e.submit_at(400 * MS + 1_000, write(4096));
        let r = e.finish();
        let s = r.md_superblock.as_ref().expect("superblock");
        assert_eq!(s.updates, 4);
        let second = r.latency.mean_nanos * 2.0 - (sb.ceil() + data.ceil());
        assert!(
            (second - (2.0 * sb.ceil() + data.ceil() - 1_000.0)).abs() <= 4.0,
            "{second} vs 2 x {sb} + {data}"
        );
    }

    #[test]
    fn with_a_bitmap_each_update_writes_its_first_page_before_the_superblock() {
        let (mut e, data, sb, page) = array(
            Level::Raid1,
            2,
            DELAY,
            MdBitmapSetting::Internal {
                chunk_bytes: 64 << 20,
            },
        );
        e.submit_at(0, write(0));
        let r = e.finish();
        // The bitmap's page and the superblock (dirty), the unplug's page, the data.
        let want = page.ceil() + sb.ceil() + page.ceil() + data.ceil();
        assert!(
            (r.latency.mean_nanos - want).abs() <= 4.0,
            "{} vs {want}",
            r.latency.mean_nanos
        );
        let s = r.md_superblock.as_ref().expect("superblock");
        assert_eq!((s.updates, s.member_writes), (2, 8));
        let b = r.md_bitmap.as_ref().expect("bitmap");
        // Two updates' pages and the unplug's, on both members.
        assert_eq!(b.member_writes, 6);
        assert_eq!(member_writes(&r), vec![6, 6]);
    }
}
