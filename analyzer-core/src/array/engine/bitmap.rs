//! md's write-intent bitmap in the timing engine ([`crate::array::md_bitmap`] has the
//! bitmap's own rules). A write to the array passes the bitmap first: it marks its chunks,
//! and waits for the next unplug, which writes the dirty bitmap pages to every member and
//! waits for them before the writes it holds go on. Unplugs follow one another: a write
//! arriving while one is writing waits for the next, which starts when that one ends and
//! writes whatever was dirtied meanwhile. RAID 5/6 writes all wait for it (their stripes sit
//! on `raid5d`'s bitmap list until its next unplug) and `raid5d` itself handles no stripe
//! while it writes; a RAID 1/10 write that set no bit goes on at once unless a page is dirty.
//! The daemon's passes every `daemon_sleep` clear idle chunks and write those pages in the
//! background. The daemon runs in md's thread, and only while that thread wakes: `raid5d`
//! runs for every RAID 5/6 write, so there the passes follow one another every 5 s; RAID 1/10
//! writes go to the members from the submitter, and md's thread (`raid1d`, `raid10d`) wakes
//! for the bitmap only when safe mode marks the array dirty or its timer fires
//! ([`super::md_super`]: 200-400 ms after the writes pause) or when its own timer runs, which
//! a pass arms only while it finds work. A
//! pass that finds the bitmap clean lets the thread sleep, so under a steady stream of
//! RAID 1/10 writes no chunk is cleared until the writes pause (found on the lab's
//! `bm-r1-sparse`: md never cleared a bit during a 12 s job, and wrote the cleared bits 0.3 s
//! and 5.3 s after it, at the safe-mode wake-up and the timer after it).

use std::cmp::Reverse;

use super::{Engine, HostIo, Kind, EV_MD_BITMAP};

/// `EV_MD_BITMAP` ids: a daemon pass.
const EV_PASS: u32 = 0;
/// The next unplug starts (after md's threads have looked at the stripes the last one let go).
const EV_NEXT_UNPLUG: u32 = 2;
use crate::array::layout::{DiskOp, Node};
use crate::array::md_bitmap::{
    Bitmap, BitmapExtent, MdBitmapSetting, BITMAP_OFFSET_BYTES, DEFAULT_DAEMON_SLEEP_NANOS,
};

pub(super) struct BitmapTiming {
    bitmap: Bitmap,
    extent: BitmapExtent,
    /// Every member disk: each holds a copy of the bitmap.
    members: Vec<u32>,
    /// The unplug writing now (its internal request) and the writes waiting for it.
    unplug: Option<u32>,
    next_waiters: Vec<u32>,
    /// The next unplug is on the heap (`EV_NEXT_UNPLUG`).
    next_due: bool,
    /// `raid5d`'s own free time when the unplug started.
    raid5d_free_at_nanos: f64,
    /// When the daemon's next pass is due (its event on the heap; others are stale).
    next_pass_nanos: Option<u64>,
    last_pass_nanos: u64,
    pages: Vec<u64>,
    /// During the measurement window: unplugs that wrote pages, daemon passes that wrote
    /// pages, and the bitmap's page writes per member.
    pub(super) unplug_writes: u64,
    pub(super) daemon_writes: u64,
    pub(super) page_writes: u64,
    /// Time an unplug was writing during the window, and when the one writing now started
    /// (or the window did, if later).
    busy_nanos: u64,
    busy_since_nanos: u64,
}

impl BitmapTiming {
    /// The bitmap of a software array, when `setting` gives it one and md would keep one
    /// ([`BitmapExtent::of`]).
    pub(super) fn for_layout(
        node: &Node,
        setting: MdBitmapSetting,
        capacity: &dyn Fn(u32) -> u64,
    ) -> Option<BitmapTiming> {
        let extent = BitmapExtent::of(node, setting, capacity)?;
        // md writes the bitmap to the members it still has.
        let members = super::md_live_members(node);
        Some(BitmapTiming {
            bitmap: Bitmap::new(extent.chunk_bytes, extent.covered_bytes),
            extent,
            members,
            unplug: None,
            next_waiters: Vec::new(),
            next_due: false,
            raid5d_free_at_nanos: 0.0,
            next_pass_nanos: None,
            last_pass_nanos: 0,
            pages: Vec::new(),
            unplug_writes: 0,
            daemon_writes: 0,
            page_writes: 0,
            busy_nanos: 0,
            busy_since_nanos: 0,
        })
    }

    /// The bitmap chunks a write of `io` covers.
    fn chunks_of(&self, io: &HostIo) -> (u64, u64) {
        let (start, end) = self
            .extent
            .covered_range(io.offset_bytes, u64::from(io.len_bytes));
        self.bitmap.chunk_range(start, end)
    }

    /// A new measurement window starts at `now`.
    pub(super) fn restart_window(&mut self, now: u64) {
        self.unplug_writes = 0;
        self.daemon_writes = 0;
        self.page_writes = 0;
        self.busy_nanos = 0;
        self.busy_since_nanos = now;
    }

    /// Time an unplug was writing, from the window's start to `end`.
    pub(super) fn unplug_busy_nanos(&self, end: u64) -> f64 {
        let open = if self.unplug.is_some() {
            end.saturating_sub(self.busy_since_nanos)
        } else {
            0
        };
        (self.busy_nanos + open) as f64
    }

    /// RAID 5/6 (the bitmap covers stripes): every write waits for the next unplug and
    /// `raid5d` waits with it.
    fn raid5(&self) -> bool {
        self.extent.stripes.is_some()
    }

    /// Bytes of the bitmap's first page as md writes it (its superblock and first bits): what
    /// a superblock update writes before the md superblock.
    pub(super) fn super_page_bytes(&self) -> u32 {
        self.bitmap.page_write_bytes(0)
    }

    /// Bitmap chunk size and bits, for the result's description.
    pub(super) fn describe(&self) -> (u64, u64) {
        (self.bitmap.chunk_bytes(), self.bitmap.chunks())
    }
}

impl Engine {
    /// The bitmap's part of admitting request `id`: marks its chunks and, when it has to wait
    /// for an unplug, parks it (true); [`Engine::admit`] runs again when the unplug is done.
    pub(super) fn bitmap_gate(&mut self, id: u32) -> bool {
        if self.reqs[id as usize].bitmap_started || self.bitmap.is_none() || !self.is_md_write(id) {
            return false;
        }
        self.reqs[id as usize].bitmap_started = true;
        let io = self.reqs[id as usize].io;
        let Some(b) = self.bitmap.as_mut() else {
            return false;
        };
        let (first, last) = b.chunks_of(&io);
        b.bitmap.start_write(first, last);
        if b.unplug.is_some() || b.next_due {
            if b.raid5() || b.bitmap.has_dirty() {
                b.next_waiters.push(id);
                return true;
            }
            return false;
        }
        b.bitmap.take_unplug(&mut b.pages);
        if b.pages.is_empty() {
            return false;
        }
        self.bitmap_write(vec![id], true);
        true
    }

    /// Issues the bitmap's page writes (`b.pages`) to every member: an unplug holding
    /// `waiters`, or (`unplug` false) the daemon's background write.
    fn bitmap_write(&mut self, waiters: Vec<u32>, unplug: bool) {
        let measuring = self.measuring;
        let Some(b) = self.bitmap.as_mut() else {
            return;
        };
        let mut ops = self.op_pool.pop().unwrap_or_default();
        ops.clear();
        for &disk in &b.members {
            for &p in &b.pages {
                ops.push(DiskOp {
                    disk,
                    offset_bytes: BITMAP_OFFSET_BYTES + p * 4096,
                    len_bytes: b.bitmap.page_write_bytes(p),
                    write: true,
                    phase: 0,
                });
            }
        }
        if measuring {
            b.page_writes += ops.len() as u64;
            if unplug {
                b.unplug_writes += 1;
            } else {
                b.daemon_writes += 1;
            }
            for o in &ops {
                self.disks[o.disk as usize].count(true, o.len_bytes);
            }
        }
        let id = self.alloc_internal(Kind::MdBitmap, ops, waiters);
        if unplug {
            let Some(b) = self.bitmap.as_mut() else {
                return;
            };
            b.unplug = Some(id);
            b.busy_since_nanos = self.now;
            if b.raid5() {
                // raid5d writes the bitmap itself and handles no stripe until it is on disk.
                if let Some(md) = self.md.as_mut() {
                    b.raid5d_free_at_nanos = md.threads_free_at_nanos[0];
                    md.threads_free_at_nanos[0] = f64::INFINITY;
                }
            }
        }
        self.start_phase(id);
    }

    /// A bitmap write is on every member: an unplug's writes go on, and the next unplug, for
    /// the writes that arrived meanwhile, starts once md's threads have taken the stripes
    /// this one let go (`raid5d` handles stripes between two unplugs).
    pub(super) fn bitmap_write_done(&mut self, id: u32) {
        let waiters = std::mem::take(&mut self.reqs[id as usize].waiters);
        self.free_req(id);
        let now = self.now;
        let Some(b) = self.bitmap.as_mut() else {
            return;
        };
        if b.unplug != Some(id) {
            return;
        }
        b.unplug = None;
        if self.measuring {
            b.busy_nanos += now.saturating_sub(b.busy_since_nanos);
        }
        if b.raid5() {
            if let Some(md) = self.md.as_mut() {
                md.threads_free_at_nanos[0] = b.raid5d_free_at_nanos.max(now as f64);
            }
        }
        if !b.next_waiters.is_empty() {
            b.next_due = true;
            self.heap.push(Reverse((now, EV_MD_BITMAP, EV_NEXT_UNPLUG)));
        }
        for w in waiters {
            self.admit(w);
        }
        self.md_schedule_pick();
    }

    /// The next unplug: it writes what the writes waiting for it dirtied, or lets them go on
    /// at once when nothing is dirty.
    fn bitmap_next_unplug(&mut self) {
        let Some(b) = self.bitmap.as_mut() else {
            return;
        };
        b.next_due = false;
        let next = std::mem::take(&mut b.next_waiters);
        b.bitmap.take_unplug(&mut b.pages);
        if b.pages.is_empty() {
            for w in next {
                self.admit(w);
            }
            self.md_schedule_pick();
        } else {
            self.bitmap_write(next, true);
        }
    }

    /// A write that passed the bitmap has completed: its chunks count down, and the daemon
    /// wakes if it was asleep.
    pub(super) fn bitmap_end_write(&mut self, id: u32) {
        if !std::mem::take(&mut self.reqs[id as usize].bitmap_started) {
            return;
        }
        let io = self.reqs[id as usize].io;
        let now = self.now;
        let Some(b) = self.bitmap.as_mut() else {
            return;
        };
        let (first, last) = b.chunks_of(&io);
        b.bitmap.end_write(first, last);
        if b.raid5() && b.next_pass_nanos.is_none() && !b.bitmap.all_clean() {
            // raid5d runs for every write: the pass comes as soon as 5 s have gone by.
            let t = now.max(b.last_pass_nanos + DEFAULT_DAEMON_SLEEP_NANOS);
            b.next_pass_nanos = Some(t);
            self.heap.push(Reverse((t, EV_MD_BITMAP, EV_PASS)));
        }
    }

    /// md's thread wakes for safe mode (the array marked dirty, or its timer fired:
    /// [`super::md_super`]): on RAID 1/10, whose writes do not wake it otherwise, the daemon
    /// passes now if its period has gone by, and otherwise, with work left, arms the thread's
    /// timer for a period from now (`md_bitmap_daemon_work` returning early still sets the
    /// timeout). `raid5d` wakes for every write and keeps its own 5 s passes.
    pub(super) fn bitmap_wake(&mut self) {
        let now = self.now;
        let Some(b) = self.bitmap.as_mut() else {
            return;
        };
        if b.raid5() {
            return;
        }
        if now >= b.last_pass_nanos + DEFAULT_DAEMON_SLEEP_NANOS {
            self.bitmap_pass();
        } else if !b.bitmap.all_clean() && b.next_pass_nanos.is_none() {
            let t = now + DEFAULT_DAEMON_SLEEP_NANOS;
            b.next_pass_nanos = Some(t);
            self.heap.push(Reverse((t, EV_MD_BITMAP, EV_PASS)));
        }
    }

    /// An `EV_MD_BITMAP` event: a pass that is still due, or the next unplug.
    pub(super) fn bitmap_event(&mut self, id: u32) {
        let now = self.now;
        let Some(b) = self.bitmap.as_ref() else {
            return;
        };
        match id {
            EV_NEXT_UNPLUG => self.bitmap_next_unplug(),
            _ if b.next_pass_nanos == Some(now) => self.bitmap_pass(),
            _ => {}
        }
    }

    /// One pass of the bitmap daemon.
    pub(super) fn bitmap_pass(&mut self) {
        let now = self.now;
        let Some(b) = self.bitmap.as_mut() else {
            return;
        };
        b.last_pass_nanos = now;
        b.bitmap.daemon_pass(&mut b.pages);
        let write = !b.pages.is_empty();
        // With work left the thread's timer brings the next pass; a clean bitmap lets it
        // sleep until something wakes it.
        b.next_pass_nanos = None;
        if !b.bitmap.all_clean() {
            let t = now + DEFAULT_DAEMON_SLEEP_NANOS;
            b.next_pass_nanos = Some(t);
            self.heap.push(Reverse((t, EV_MD_BITMAP, EV_PASS)));
        }
        if write {
            self.bitmap_write(Vec::new(), false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{RunResult, Target};
    use super::*;
    use crate::array::controller::{ControllerModel, MdSettings};
    use crate::array::device::{DeviceModel, DiskPreset, SsdTiming};
    use crate::array::layout::Level;

    const CHUNK: u64 = 64 << 20;

    fn write(offset_bytes: u64) -> HostIo {
        HostIo {
            offset_bytes,
            len_bytes: 4096,
            write: true,
            target: Target::Array,
            host_bytes: 4096,
        }
    }

    /// md with `bitmap` and no superblock updates: the bitmap alone, whose RAID 1/10 daemon
    /// then runs only when its own timer does (safe mode's wake-ups: [`safe_mode`]).
    fn software(bitmap: MdBitmapSetting) -> ControllerModel {
        let mut c = ControllerModel::software();
        c.md = Some(MdSettings {
            bitmap,
            safe_mode_delay_nanos: None,
            ..MdSettings::default()
        });
        c
    }

    /// `e` with md's safe mode (its default delay), whose transitions wake md's thread.
    fn safe_mode(level: Level, n: u32) -> Engine {
        let model = DiskPreset::SataSsd.model();
        let mut c = software(INTERNAL);
        if let Some(md) = &mut c.md {
            md.safe_mode_delay_nanos = MdSettings::default().safe_mode_delay_nanos;
        }
        Engine::new(
            &vec![model; n as usize],
            Node::over_disks(level, 65536, 0, n),
            c,
            None,
        )
    }

    /// A RAID `level` of `n` SATA SSDs with `bitmap`, an SSD's 4 KiB write time and the
    /// time of its write of the bitmap's (one) page.
    fn array(level: Level, n: u32, bitmap: MdBitmapSetting) -> (Engine, f64, f64) {
        let model = DiskPreset::SataSsd.model();
        let DeviceModel::Ssd(s) = &model else {
            panic!("ssd")
        };
        let timing = SsdTiming::new(s);
        let layout = Node::over_disks(level, 65536, 0, n);
        let page = Bitmap::new(CHUNK, s.capacity_bytes).page_write_bytes(0);
        let e = Engine::new(
            &vec![model.clone(); n as usize],
            layout,
            software(bitmap),
            None,
        );
        (
            e,
            timing.service_nanos(4096, true),
            timing.service_nanos(page, true),
        )
    }

    fn member_writes(r: &RunResult) -> u64 {
        r.disks.iter().map(|d| d.writes).sum()
    }

    const INTERNAL: MdBitmapSetting = MdBitmapSetting::Internal { chunk_bytes: CHUNK };

    #[test]
    fn a_write_to_a_clean_chunk_waits_for_the_bitmap_page_on_every_member() {
        let (mut e, service, page) = array(Level::Raid1, 2, INTERNAL);
        e.submit_at(0, write(0));
        let r = e.finish();
        let b = r.md_bitmap.as_ref().expect("bitmap");
        assert_eq!((b.unplug_writes, b.member_writes), (1, 2));
        assert_eq!(member_writes(&r), 4, "bitmap page and data on both members");
        assert!(
            (r.latency.mean_nanos - (page.ceil() + service.ceil())).abs() <= 2.0,
            "{} vs {page} + {service}",
            r.latency.mean_nanos
        );
        // Without a bitmap: the data alone.
        let (mut e, service, _) = array(Level::Raid1, 2, MdBitmapSetting::None);
        e.submit_at(0, write(0));
        let r = e.finish();
        assert!(r.md_bitmap.is_none());
        assert_eq!(member_writes(&r), 2);
        assert!((r.latency.mean_nanos - service).abs() <= 2.0);
    }

    #[test]
    fn a_degraded_array_writes_the_bitmap_to_the_members_it_has() {
        let model = DiskPreset::SataSsd.model();
        let mut layout = Node::over_disks(Level::Raid1, 65536, 0, 2);
        layout.failed = vec![1];
        let mut e = Engine::new(&vec![model; 2], layout, software(INTERNAL), None);
        e.submit_at(0, write(0));
        let r = e.finish();
        let b = r.md_bitmap.as_ref().expect("bitmap");
        assert_eq!((b.unplug_writes, b.member_writes), (1, 1));
        assert_eq!(r.disks[1].writes, 0);
    }

    #[test]
    fn a_chunk_stays_set_while_written_and_is_cleared_by_the_daemon_after_it_idles() {
        let (_, service, page) = array(Level::Raid1, 2, INTERNAL);
        let mut e = safe_mode(Level::Raid1, 2);
        // Writes to one chunk every 4 s: set once.
        for i in 0..5u64 {
            e.submit_at(i * 4_000_000_000, write(i * 4096));
        }
        e.run_until(16_000_000_001);
        // Then idle: passes at 20 s (2 -> 1), 25 s (cleared), 30 s (page written).
        e.run_until(40_000_000_000);
        e.submit_at(40_000_000_000, write(0));
        let r = e.finish();
        let b = r.md_bitmap.as_ref().expect("bitmap");
        assert_eq!(b.unplug_writes, 2, "set at 0 s, set again at 40 s");
        assert_eq!(b.daemon_writes, 1, "the clear");
        // Each write found the array clean (safe mode marks it so 200-400 ms after a write):
        // twelve superblock updates, each the bitmap's first page and the superblock.
        assert_eq!(r.md_superblock.as_ref().map(|s| s.updates), Some(12));
        assert_eq!(member_writes(&r), 2 * (6 + 3 + 2 * 12));
        // The last write paid for the bit again: a page write more than the others, which
        // waited only for the dirty mark (the bitmap's page and the superblock) and their data.
        let (p50, p99) = (r.latency.p50_nanos as f64, r.latency.p99_nanos as f64);
        assert!(p99 >= p50 + page * 0.97, "{p99} vs {p50} + {page}");
        assert!(p50 <= (2.0 * page + service) * 1.03, "{p50}");
    }

    #[test]
    fn raid1_clears_no_bit_under_a_steady_stream_but_raid5_does() {
        // 300 chunks written once each, 50 ms apart (15 s), chunk 0 again at 15 s, then a
        // pause and chunk 0 once more at 40 s. RAID 5's raid5d runs the daemon every 5 s
        // throughout: chunk 0, idle since 0 s, is cleared at 10 s and set again at 15 s. RAID
        // 1's thread never wakes during the stream (the array stays dirty), so chunk 0 is
        // still set at 15 s; the pause (safe mode) wakes it and the daemon clears everything,
        // so 40 s sets chunk 0 again on both.
        for (level, disks, row_bytes, sets) in [
            (Level::Raid1, 2, 0u64, 301u64),
            (Level::Raid5, 4, 3 * 65536, 302),
        ] {
            let mut e = safe_mode(level, disks);
            // The array offset of chunk `c`'s first byte.
            let at = |c: u64| {
                if row_bytes == 0 {
                    c * CHUNK
                } else {
                    c * (CHUNK / 65536) * row_bytes
                }
            };
            for k in 0..300u64 {
                e.submit_at(k * 50_000_000, write(at(k)));
            }
            e.submit_at(15_000_000_000, write(at(0) + 4096));
            e.run_until(40_000_000_000);
            e.submit_at(40_000_000_000, write(at(0) + 8192));
            let r = e.finish();
            let b = r.md_bitmap.as_ref().expect("bitmap");
            assert_eq!(b.unplug_writes, sets, "{level:?}");
            assert!(b.daemon_writes >= 1, "{level:?}: the clears are written");
        }
    }

    #[test]
    fn overlapping_raid5_writes_through_the_bitmap_all_complete_in_time() {
        // Writes to the same pages (md handles a pending head early when a write overlaps
        // it) and to new chunks, arriving while unplugs write: every one completes, within
        // milliseconds on SSDs (raid5d is never left waiting for good).
        let (mut e, service, page) = array(Level::Raid5, 4, INTERNAL);
        for k in 0..400u64 {
            let offset = if k % 2 == 0 {
                0
            } else {
                (k / 2) * 1024 * 3 * 65536
            };
            e.submit_at(k * 20_000, write(offset));
        }
        let r = e.finish();
        assert_eq!(r.requests, 400);
        let b = r.md_bitmap.as_ref().expect("bitmap");
        assert!(b.unplug_writes >= 2 && b.unplug_writes <= 200, "{b:?}");
        assert!(
            (r.elapsed_nanos as f64) < 400.0 * 20_000.0 + 400.0 * (page + 4.0 * service),
            "{} ns",
            r.elapsed_nanos
        );
    }

    #[test]
    fn raid5_writes_arriving_during_an_unplug_wait_for_the_next_one() {
        let (mut e, service, page) = array(Level::Raid5, 4, INTERNAL);
        // Chunk 0 (member offsets 0..64 MiB), then chunk 1 (a stripe row of 192 KiB holds 64
        // KiB of each member: member offset 64 MiB is row 1024).
        e.submit_at(0, write(0));
        e.submit_at(1, write(1024 * 3 * 65536));
        // A write to chunk 0 again, while the first unplug writes: it waits for the second.
        e.submit_at(2, write(8192));
        let r = e.finish();
        let b = r.md_bitmap.as_ref().expect("bitmap");
        assert_eq!(b.unplug_writes, 2);
        assert_eq!(b.member_writes, 8);
        // The third waited for both unplugs; every write then read and wrote its stripe.
        assert!(
            r.latency.mean_nanos > page + service,
            "{}",
            r.latency.mean_nanos
        );
    }
}
