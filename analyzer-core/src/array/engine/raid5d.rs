//! Linux md's RAID 5/6 server: the stripe model that decides each member's I/O, the stripe
//! heads waiting for a thread (md's handle list), and the `raid5d` thread plus its
//! `group_thread_cnt` workers that handle them.
//!
//! How md gathers, as the engine models it (drivers/md/raid5.c): a write bio adds its pages
//! to stripe heads and releases them when its submission ends; a released head waits on the
//! handle list until a thread takes it, and every page written to it meanwhile joins it, so
//! bios in flight fill heads before their pre-reads are decided. A thread decides rmw, rcw
//! or full stripe on the pages pending when it takes the head. A full-stripe head takes the
//! adjacent full-stripe heads of its chunk queued behind it into one batch (Linux 4.1,
//! "RAID5: batch adjacent full stripe write"), which runs the state machine once. Every
//! write is taken to be a `REQ_SYNC` write, as O_DIRECT writes (the benchmarks') are: md
//! marks their heads pre-read-active at once, so they never wait on md's delayed list for
//! other pre-reads to finish (`IO_THRESHOLD`), which only page-cache writeback does.

use std::cmp::Reverse;
use std::collections::VecDeque;

use super::{Engine, HostIo, Kind, EV_MD_PICK, EV_REQ_START};
use crate::array::controller::MdSettings;
use crate::array::layout::{DiskOp, Level, Member, Node, MAX_COMMAND_BYTES};
use crate::array::md::{MdConfig, MdLevel, MdModel, MdOp};
use crate::event::{IoEvent, Op};
use crate::hash::IntMap;

/// The md RAID 5/6 state of a software array: the stripe model that decides member I/O, the
/// heads waiting for a thread, and the threads that handle stripe heads.
pub(super) struct MdTiming {
    pub(super) model: MdModel,
    /// Layout member → device index.
    pub(super) disk_of: Vec<u32>,
    pub(super) settings: MdSettings,
    page_cost_nanos: f64,
    /// When each handling thread is next free (`raid5d` first).
    pub(super) threads_free_at_nanos: Vec<f64>,
    pub(super) busy_nanos: f64,
    /// Stripe heads handled during the measurement window.
    pub(super) heads: u64,
    /// Passes of the state machine during the window (a batch is one).
    pub(super) passes: u64,
    /// Heads released and not yet taken by a thread, in release order (md's handle list);
    /// `queued` holds the same keys for lookups (a key leaves it when taken).
    queue: VecDeque<u64>,
    queued: IntMap<u64, ()>,
    /// Requests waiting for each pending head, one entry per page they wrote there.
    waiters: IntMap<u64, Vec<u32>>,
    /// A thread-pick event is on the heap.
    pick_scheduled: bool,
    ops: Vec<MdOp>,
    touched: Vec<u64>,
    forced: Vec<(u64, u32)>,
}

impl MdTiming {
    /// md's model for a flat RAID 5/6 over disks, healthy or degraded (its failed members'
    /// pages are reconstructed, never read or written); `None` for anything md's RAID 5/6
    /// code would not run as modelled (nested nodes, chunks that are not whole pages), which
    /// keeps the layout's generic rule.
    pub(super) fn for_layout(node: &Node, settings: &MdSettings) -> Option<MdTiming> {
        let level = match node.level {
            Level::Raid5 => MdLevel::Raid5,
            Level::Raid6 => MdLevel::Raid6,
            _ => return None,
        };
        let disk_of: Vec<u32> = node
            .members
            .iter()
            .map(|m| match m {
                Member::Disk(d) => Some(*d),
                Member::Node(_) => None,
            })
            .collect::<Option<_>>()?;
        let mut config = MdConfig::new(level, disk_of.len() as u32, node.chunk_bytes);
        config.stripe_cache_size = settings.stripe_cache_size;
        config.group_thread_cnt = settings.group_thread_cnt;
        config.failed = node.failed.iter().map(|&f| f as u32).collect();
        let mut model = MdModel::new(&config).ok()?;
        model.record_ops();
        model.defer_handling();
        model.without_superblock();
        Some(MdTiming {
            model,
            disk_of,
            page_cost_nanos: settings.page_cost_nanos(level == MdLevel::Raid6).max(0.0),
            threads_free_at_nanos: vec![0.0; settings.group_thread_cnt as usize + 1],
            settings: settings.clone(),
            busy_nanos: 0.0,
            heads: 0,
            passes: 0,
            queue: VecDeque::new(),
            queued: IntMap::default(),
            waiters: IntMap::default(),
            pick_scheduled: false,
            ops: Vec::new(),
            touched: Vec::new(),
            forced: Vec::new(),
        })
    }

    /// The thread free first and when.
    fn first_free_thread(&self) -> (usize, f64) {
        self.threads_free_at_nanos
            .iter()
            .copied()
            .enumerate()
            .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a })
    }
}

/// Sorts member commands by phase, disk and offset and merges adjacent ones of the same kind
/// on one disk (md's 4 KiB bios as the block layer's plug merges them), up to
/// [`MAX_COMMAND_BYTES`] and to `cap(disk, bytes)` for a disk given `bytes` in that phase.
fn merge_adjacent(ops: &mut Vec<DiskOp>, cap: impl Fn(u32, u64) -> u64) {
    ops.sort_by_key(|o| (o.phase, o.disk, o.offset_bytes));
    let mut merged = 0usize;
    let mut group_start = 0usize;
    let mut limit = MAX_COMMAND_BYTES;
    for i in 0..ops.len() {
        let o = ops[i];
        if i == group_start {
            // A new (phase, disk) group: its total bytes set the disk's merge limit.
            let end = ops[i..]
                .iter()
                .position(|p| p.phase != o.phase || p.disk != o.disk)
                .map_or(ops.len(), |n| i + n);
            let bytes: u64 = ops[i..end].iter().map(|p| u64::from(p.len_bytes)).sum();
            limit = cap(o.disk, bytes).clamp(4096, MAX_COMMAND_BYTES);
            group_start = end;
        }
        if merged > 0 {
            let last = &mut ops[merged - 1];
            let end = last.offset_bytes + u64::from(last.len_bytes);
            if last.phase == o.phase
                && last.disk == o.disk
                && last.write == o.write
                && end == o.offset_bytes
                && u64::from(last.len_bytes) + u64::from(o.len_bytes) <= limit
            {
                last.len_bytes += o.len_bytes;
                continue;
            }
        }
        ops[merged] = o;
        merged += 1;
    }
    ops.truncate(merged);
}

impl Engine {
    /// A read through md: its member commands (md's chunk-aligned read path, straight to the
    /// members, no stripe head), counted per member.
    pub(super) fn md_read(&mut self, io: HostIo, ops: &mut Vec<DiskOp>) {
        let now = self.now;
        let Some(md) = self.md.as_mut() else {
            return;
        };
        md.model.observe(&host_event(now, io));
        self.md_take_member_ops(ops, self.measuring);
        merge_adjacent(ops, |_, _| MAX_COMMAND_BYTES);
    }

    /// Moves the member bios the stripe model logged into `ops` as commands (writes after
    /// the pre-reads, in phase 1), counting them per member while measuring.
    fn md_take_member_ops(&mut self, ops: &mut Vec<DiskOp>, measuring: bool) {
        let Some(md) = self.md.as_mut() else {
            return;
        };
        md.ops.clear();
        md.model.take_ops(&mut md.ops);
        for o in &md.ops {
            let disk = md.disk_of.get(o.member as usize).copied().unwrap_or(0);
            if measuring {
                self.disks[disk as usize].count(o.write, o.len_bytes);
            }
            ops.push(DiskOp {
                disk,
                offset_bytes: o.offset_bytes,
                len_bytes: o.len_bytes,
                write: o.write,
                phase: u8::from(o.write),
            });
        }
    }

    /// A write through md: its pages join their stripe heads, which are released to the
    /// handle list; the request completes when every head holding its pages has been handled
    /// and written (`md_wait` counts them down).
    pub(super) fn md_write(&mut self, id: u32) {
        let io = self.reqs[id as usize].io;
        let now = self.now;
        let Some(md) = self.md.as_mut() else {
            return;
        };
        md.model.observe(&host_event(now, io));
        md.touched.clear();
        md.forced.clear();
        md.model.take_touched(&mut md.touched, &mut md.forced);
        // Heads md had to handle first because this write overlapped a page pending there:
        // their earlier writers wait for that pass, this write for the next.
        if !md.forced.is_empty() {
            let keys: Vec<u64> = md.forced.iter().map(|&(k, _)| k).collect();
            let pages = md.forced.iter().map(|&(_, p)| p).sum();
            self.md_issue(&keys, pages);
        }
        let Some(md) = self.md.as_mut() else {
            return;
        };
        let mut touched = std::mem::take(&mut md.touched);
        for &key in &touched {
            md.waiters.entry(key).or_default().push(id);
        }
        let waits = touched.len() as u32;
        touched.sort_unstable();
        touched.dedup();
        for &key in &touched {
            if md.queued.insert(key, ()).is_none() {
                md.queue.push_back(key);
            }
        }
        md.touched = touched;
        self.reqs[id as usize].md_wait = waits;
        if waits == 0 {
            self.request_done(id);
            return;
        }
        self.md_schedule_pick();
    }

    /// Makes sure a thread will look at the handle list: now if one is free, else when the
    /// first one is.
    pub(super) fn md_schedule_pick(&mut self) {
        let now = self.now as f64;
        let Some(md) = self.md.as_mut() else {
            return;
        };
        if md.pick_scheduled || md.queue.is_empty() {
            return;
        }
        let (_, free) = md.first_free_thread();
        if !free.is_finite() {
            // raid5d is writing the bitmap (and has no workers): the unplug's end schedules.
            return;
        }
        md.pick_scheduled = true;
        let t = free.max(now).ceil() as u64;
        self.heap.push(Reverse((t, EV_MD_PICK, 0)));
    }

    /// Free threads take heads off the handle list: each takes one head, or a full-stripe
    /// head with the adjacent full-stripe heads of its chunk queued behind it (one batch).
    pub(super) fn md_pick(&mut self) {
        let now = self.now as f64;
        if let Some(md) = self.md.as_mut() {
            md.pick_scheduled = false;
        }
        loop {
            let Some(md) = self.md.as_mut() else {
                return;
            };
            let (_, free) = md.first_free_thread();
            if free > now {
                break;
            }
            let Some(key) = md.queue.pop_front() else {
                break;
            };
            if md.queued.remove(&key).is_none() {
                continue;
            }
            if !md.model.head_is_pending(key) {
                // Handled early (an overlapping write); its waiters were served then.
                continue;
            }
            let mut batch = vec![key];
            if md.model.head_is_full(key) {
                let chunk_pages = md.model.chunk_pages().max(1);
                let mut next = key + 1;
                while next % chunk_pages != 0
                    && md.queued.contains_key(&next)
                    && md.model.head_is_full(next)
                {
                    md.queued.remove(&next);
                    batch.push(next);
                    next += 1;
                }
            }
            let mut pages = 0u32;
            for &k in &batch {
                if let Some(h) = md.model.handle_head(k) {
                    pages += h.parity_source_pages;
                }
            }
            self.md_issue(&batch, pages);
        }
        self.md_schedule_pick();
    }

    /// One pass of the state machine over `keys` (handled just now in the model, their
    /// member bios logged): a free thread spends the pass's CPU time, then the heads' member
    /// I/O runs as one internal request (pre-reads, then writes) whose end completes the
    /// requests waiting for these heads.
    fn md_issue(&mut self, keys: &[u64], pages: u32) {
        let now = self.now as f64;
        let Some(md) = self.md.as_mut() else {
            return;
        };
        let mut waiters = Vec::new();
        for k in keys {
            if let Some(w) = md.waiters.remove(k) {
                waiters.extend(w);
            }
        }
        // The pass's member I/O and heads count when a request it serves was issued in the
        // measurement window (as a read's member I/O counts when the read is issued).
        let counted = waiters
            .iter()
            .any(|&w| self.reqs.get(w as usize).is_some_and(|r| r.measured));
        let Some(md) = self.md.as_mut() else {
            return;
        };
        let cost = md.settings.stripe_cost_nanos.max(0.0) + f64::from(pages) * md.page_cost_nanos;
        let (thread, free) = md.first_free_thread();
        // (Every thread busy for good cannot happen: `raid5d` waits only for a bitmap unplug,
        // and no write reaches its stripes meanwhile. Should it, the pass starts now.)
        let done = if free.is_finite() { free.max(now) } else { now } + cost;
        md.threads_free_at_nanos[thread] = done;
        if self.measuring {
            md.busy_nanos += cost;
        }
        if counted {
            md.heads += keys.len() as u64;
            md.passes += 1;
        }
        let mut ops = self.op_pool.pop().unwrap_or_default();
        ops.clear();
        self.md_take_member_ops(&mut ops, counted);
        // The block layer merges a pass's bios into large requests; a flash member stripes a
        // large request over its parallel units, which the device model (one lane per
        // command) cannot, so on a device with L lanes the merged requests are cut into L
        // pieces at most (whole 4 KiB pages). A hard disk (one lane) gets them whole.
        let disks = &self.disks;
        merge_adjacent(&mut ops, |d, bytes| {
            let lanes = u64::from(disks.get(d as usize).map_or(1, |x| x.parallelism).max(1));
            bytes.div_ceil(lanes).div_ceil(4096) * 4096
        });
        let id = self.alloc_internal(Kind::MdStripe, ops, waiters);
        self.heap
            .push(Reverse((done.ceil() as u64, EV_REQ_START, id)));
    }

    /// The member I/O of a stripe pass is done: the requests waiting for its heads count
    /// down, and those with nothing left complete.
    pub(super) fn md_pass_done(&mut self, id: u32) {
        let waiters = std::mem::take(&mut self.reqs[id as usize].waiters);
        self.free_req(id);
        for w in waiters {
            let r = &mut self.reqs[w as usize];
            r.md_wait = r.md_wait.saturating_sub(1);
            if r.md_wait == 0 {
                self.request_done(w);
            }
        }
    }
}

fn host_event(time_nanos: u64, io: HostIo) -> IoEvent {
    IoEvent {
        time_nanos,
        device: 0,
        offset_bytes: io.offset_bytes,
        len_bytes: io.len_bytes,
        op: if io.write { Op::Write } else { Op::Read },
        latency_nanos: None,
        pid: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::controller::ControllerModel;
    use crate::array::device::DiskPreset;
    use crate::array::engine::Target;

    fn io(offset_bytes: u64, len_bytes: u32, write: bool) -> HostIo {
        HostIo {
            offset_bytes,
            len_bytes,
            write,
            target: Target::Array,
            host_bytes: len_bytes,
        }
    }

    /// md without a bitmap or superblock updates: the stripe handling alone.
    fn stripes_only() -> ControllerModel {
        let mut ctrl = ControllerModel::software_without_bitmap();
        if let Some(md) = &mut ctrl.md {
            md.safe_mode_delay_nanos = None;
        }
        ctrl
    }

    fn engine(disks: u32, chunk_bytes: u64) -> Engine {
        let model = DiskPreset::Nvme.model();
        let layout = Node::over_disks(Level::Raid5, chunk_bytes, 0, disks);
        Engine::new(&vec![model; disks as usize], layout, stripes_only(), None)
    }

    fn member_totals(r: &super::super::RunResult) -> (u64, u64, u64, u64) {
        r.disks.iter().fold((0, 0, 0, 0), |a, d| {
            (
                a.0 + d.reads,
                a.1 + d.read_bytes,
                a.2 + d.writes,
                a.3 + d.write_bytes,
            )
        })
    }

    #[test]
    fn writes_in_flight_gather_into_one_head_before_its_pre_reads() {
        // RAID 5 of 3 with 4 KiB chunks: offsets 0 and 4096 are the two data pages of head 0.
        // Arriving together, both join the head before a thread takes it: a full stripe, no
        // pre-read.
        let mut e = engine(3, 4096);
        e.submit_at(1_000, io(0, 4096, true));
        e.submit_at(1_000, io(4096, 4096, true));
        let r = e.finish();
        assert_eq!(r.requests, 2);
        assert_eq!(member_totals(&r), (0, 0, 3, 3 * 4096));
        assert_eq!(r.md_stripe_heads, 1);
        // One at a time, the first is handled alone: reconstruct-write reads the other page
        // (the second then finds the head's pages up to date in the stripe cache).
        let mut e = engine(3, 4096);
        e.submit_closed(1, io(0, 4096, true));
        e.submit_closed(1, io(4096, 4096, true));
        let r = e.finish();
        assert_eq!(member_totals(&r), (1, 4096, 4, 4 * 4096));
        assert_eq!(r.md_stripe_heads, 2);
    }

    #[test]
    fn a_busy_thread_lets_later_bios_join_the_heads_it_has_not_reached() {
        // With raid5d taking 1 ms a pass, the first write's head is handled at once, and the
        // next seven (which arrive while it is busy) gather: the second half of head 0 is a
        // new pass, and heads 1..=3 become full stripes before the thread reaches them (each
        // its own chunk row with 4 KiB chunks, so no batch).
        let mut ctrl = stripes_only();
        if let Some(md) = &mut ctrl.md {
            md.stripe_cost_nanos = 1e6;
            md.page_cost_nanos = Some(0.0);
        }
        let model = DiskPreset::Nvme.model();
        let layout = Node::over_disks(Level::Raid5, 4096, 0, 3);
        let mut e = Engine::new(&vec![model; 3], layout, ctrl, None);
        for i in 0..8u64 {
            e.submit_at(i * 10_000, io(i * 4096, 4096, true));
        }
        let r = e.finish();
        assert_eq!(r.requests, 8);
        // Head 0: its first page alone (one rcw pre-read), then its second page on its own
        // pass (now up to date); heads 1..=3 gathered whole while raid5d was busy.
        assert_eq!(member_totals(&r).0, 1);
        assert_eq!(r.md_stripe_heads, 5);
    }

    #[test]
    fn adjacent_full_stripes_of_a_chunk_are_one_batch() {
        // 4 disks, 64 KiB chunks: one 192 KiB write fills 16 heads of one chunk row.
        let mut e = engine(4, 64 << 10);
        e.submit_at(0, io(0, 192 << 10, true));
        // And 16 heads of the next row, written by 48 bios of 4 KiB arriving together.
        for i in 0..48u64 {
            e.submit_at(0, io((192 << 10) + i * 4096, 4096, true));
        }
        let md = e.md.as_ref().map(|m| m.passes);
        let r = e.finish();
        assert_eq!(r.requests, 49);
        assert_eq!(r.md_stripe_heads, 32);
        assert_eq!(member_totals(&r).0, 0);
        // The passes are counted as the thread takes them; both batches were taken after the
        // submissions, at the first pick.
        assert_eq!(md, Some(0));
    }

    #[test]
    fn batches_cost_one_pass_each_and_stop_at_the_chunk() {
        let mut e = engine(4, 64 << 10);
        for i in 0..96u64 {
            e.submit_at(0, io(i * 4096, 4096, true));
        }
        e.run_until(1_000_000);
        // 96 pages = 32 heads over two chunk rows (16 heads each): two batches.
        assert_eq!(e.md.as_ref().map(|m| (m.heads, m.passes)), Some((32, 2)));
        let r = e.finish();
        assert_eq!(r.requests, 96);
    }

    /// Property: at any queue depth every request completes, and gathering never adds member
    /// writes or stripe heads to what md does with one bio at a time (the count model's
    /// `gather_bios` 1); at queue depth 1 member I/O equals it exactly.
    #[test]
    fn gathering_only_saves_work_and_every_request_completes() {
        use crate::array::md::{MdConfig, MdLevel};
        use crate::event::{IoEvent, Op};
        for seed in 1..=6u64 {
            let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut reqs = Vec::new();
            for _ in 0..1500 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let len = [4096u32, 8192, 4096, 65536][(x >> 60) as usize % 4];
                let sequential = (x >> 40) % 3 == 0;
                let offset = if sequential {
                    reqs.last()
                        .map_or(0, |&(o, l, _): &(u64, u32, bool)| o + u64::from(l))
                        % (1 << 24)
                } else {
                    ((x >> 20) % 4096) * 4096
                };
                reqs.push((offset, len, (x >> 33) % 4 != 0));
            }
            let events: Vec<IoEvent> = reqs
                .iter()
                .enumerate()
                .map(|(i, &(o, l, w))| IoEvent {
                    time_nanos: i as u64,
                    device: 0,
                    offset_bytes: o,
                    len_bytes: l,
                    op: if w { Op::Write } else { Op::Read },
                    latency_nanos: None,
                    pid: None,
                })
                .collect();
            // md's stripe handling one bio at a time (no superblock writes, as `engine` has).
            let mut model = MdModel::new(&MdConfig::new(MdLevel::Raid5, 5, 64 << 10)).unwrap();
            model.without_superblock();
            events.iter().for_each(|e| model.observe(e));
            let one = model.finish();
            let one_heads = one.rmw_stripes + one.rcw_stripes + one.full_stripes;
            let one_writes: u64 = one.members.iter().map(|m| m.write_bytes).sum();
            let one_reads: u64 = one.members.iter().map(|m| m.read_bytes).sum();
            for qd in [1usize, 4, 32, 256] {
                let mut e = engine(5, 64 << 10);
                for &(o, l, w) in &reqs {
                    e.submit_closed(qd, io(o, l, w));
                }
                let r = e.finish();
                assert_eq!(r.requests, reqs.len() as u64, "seed {seed} qd {qd}");
                let (_, read_bytes, _, write_bytes) = member_totals(&r);
                assert!(write_bytes <= one_writes, "seed {seed} qd {qd}");
                assert!(r.md_stripe_heads <= one_heads, "seed {seed} qd {qd}");
                if qd == 1 {
                    assert_eq!((read_bytes, write_bytes), (one_reads, one_writes));
                    assert_eq!(r.md_stripe_heads, one_heads);
                }
            }
        }
    }
}
