//! A Linux md array rebuilding its failed members onto replacements while the load runs: the
//! recovery's own member I/O, and md's rule for yielding to other I/O, in the same queues as
//! the host's requests.
//!
//! md's sync thread (`md_do_sync` in drivers/md/md.c, Linux 6.1, as it behaves) walks the
//! members from the start: for every piece it reads the lost data's sources (RAID 1 and 10: a
//! surviving copy; RAID 5/6: every other block of the stripe) and writes the replacement. After
//! each `window` of 32 pages (128 KiB of each member) it has issued, it looks at its speed, in
//! KiB/s over its marks (one every 3 s, ten kept, so about the last 30 s; `currspeed` counts
//! whole seconds plus one):
//!
//! - above `sync_speed_max` it sleeps 500 ms and looks again;
//! - above `sync_speed_min`, when the array is not idle, it waits until every piece it has in
//!   flight is done before issuing more ("Give other IO more of a chance", NeilBrown's 2015
//!   change; before it md slowed down to the minimum). Not idle means: some member completed
//!   more than 64 sectors that were not md's own sync I/O since the last look
//!   (`is_mddev_idle`, which counts sync I/O when it is submitted and disk statistics when
//!   they complete);
//! - otherwise it goes on. What bounds it then is how many pieces md lets be in flight: RAID
//!   1/10's resync barrier admits `RESYNC_DEPTH` 32 requests of `RESYNC_PAGES` 64 KiB, RAID
//!   5/6 recovers through the stripe cache, one 4 KiB page of each member per stripe head.
//!
//! So under a load md rebuilds one window at a time, each waiting in the members' queues
//! behind the host's requests, and the rebuild's speed follows the load: what the model
//! measures. md's recovery pieces (4 KiB stripe heads, 64 KiB requests) are issued here as one
//! command per member and window, as the block layer's plugging merges them; the replacement
//! is taken to be empty (a full recovery, no bitmap shortcut); host requests still see the
//! array degraded (the recovery point moves about a window per few milliseconds, so over a
//! replay it covers a negligible part of the members); RAID 5/6 recovery's stripe handling is
//! not charged to `raid5d`.

use super::{Engine, Kind, EV_REBUILD};
use crate::array::controller::MdSettings;
use crate::array::layout::{DiskOp, Level, Member, Node};

/// md's check window: 32 pages of 4 KiB (`window = 32 * PAGE_SECTORS`).
pub const MD_SYNC_WINDOW_BYTES: u64 = 32 * 4096;
/// md's speed marks: `SYNC_MARKS` kept, one every `SYNC_MARK_STEP` (3 s).
const SYNC_MARKS: usize = 10;
const SYNC_MARK_STEP_NANOS: u64 = 3_000_000_000;
/// How long md sleeps when above `sync_speed_max`.
const MAX_SLEEP_NANOS: u64 = 500_000_000;
/// RAID 1/10's resync barrier: `RESYNC_DEPTH` requests of `RESYNC_PAGES` (64 KiB) in flight.
const RESYNC_DEPTH_BYTES: u64 = 32 * 64 * 1024;
/// Sectors of other I/O a member may complete between two looks and still count as idle.
const IDLE_SECTORS: i64 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Issuing pieces.
    Run,
    /// A window was issued: look at the speed before the next.
    Look,
    /// Waiting for every piece in flight (not idle, above the minimum).
    Drain,
    /// Sleeping above the maximum; an event wakes it.
    Sleep,
    /// Every member rebuilt, or the run is over.
    Done,
}

/// One degraded md array's recovery.
pub(super) struct Stream {
    node: Node,
    /// The failed members (indices into `node.members`) and their disks.
    failed: Vec<(usize, u32)>,
    /// Every member's disk, for the idle test.
    member_disks: Vec<u32>,
    member_bytes: u64,
    cursor_bytes: u64,
    inflight_bytes: u64,
    inflight_cap_bytes: u64,
    /// Per-member bytes issued (md's `io_sectors`) and completed.
    issued_bytes: u64,
    done_bytes: u64,
    last_look_bytes: u64,
    marks: [(u64, u64); SYNC_MARKS],
    last_mark: usize,
    resync_mark: (u64, u64),
    /// md's `last_events` per member: sectors completed less sync sectors submitted.
    last_events: Vec<i64>,
    state: State,
    min_kib: u64,
    max_kib: u64,
    /// Per-member bytes rebuilt while measuring, and when the rebuild finished.
    pub(super) measured_bytes: u64,
    pub(super) finished_at_nanos: Option<u64>,
}

/// What the rebuild did during a run's measured window.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RebuildUse {
    /// Bytes of each replacement written during the window, and per second.
    pub member_bytes: u64,
    pub bytes_per_sec: f64,
    /// Bytes each replacement needs in all.
    pub member_capacity_bytes: u64,
    /// Looks at which md waited for its pieces in flight (the array was busy), and at which
    /// it slept (above `sync_speed_max`).
    pub yields: u64,
    pub sleeps: u64,
    /// When every replacement was rebuilt, nanoseconds after the run started (a small array
    /// rebuilt within the replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_nanos: Option<u64>,
}

impl RebuildUse {
    /// Seconds the whole rebuild takes: when it finished within the run, else each
    /// replacement's bytes at the speed it reached (`None` when it made no progress).
    pub fn secs(&self) -> Option<f64> {
        match self.finished_nanos {
            Some(t) => Some(t as f64 * 1e-9),
            None => (self.bytes_per_sec > 0.0)
                .then(|| self.member_capacity_bytes as f64 / self.bytes_per_sec),
        }
    }
}

/// Every degraded array's recovery.
pub(super) struct RebuildTiming {
    pub(super) streams: Vec<Stream>,
    /// Sectors each disk completed (any I/O) and sync sectors submitted to it.
    completed_sectors: Vec<i64>,
    sync_submitted_sectors: Vec<i64>,
    stopped: bool,
    yields: u64,
    sleeps: u64,
}

impl RebuildTiming {
    /// A recovery for every degraded node over disks in `layout`, or `None` when none is
    /// degraded.
    pub(super) fn for_layout(
        layout: &Node,
        md: &MdSettings,
        disks: usize,
        cap: &dyn Fn(u32) -> u64,
    ) -> Option<RebuildTiming> {
        let mut streams = Vec::new();
        collect(layout, md, cap, &mut streams);
        (!streams.is_empty()).then(|| RebuildTiming {
            streams,
            completed_sectors: vec![0; disks],
            sync_submitted_sectors: vec![0; disks],
            stopped: false,
            yields: 0,
            sleeps: 0,
        })
    }

    pub(super) fn disk_done(&mut self, disk: usize, len_bytes: u32) {
        if let Some(c) = self.completed_sectors.get_mut(disk) {
            *c += i64::from(len_bytes / 512);
        }
    }

    pub(super) fn restart_window(&mut self) {
        for s in &mut self.streams {
            s.measured_bytes = 0;
        }
        self.yields = 0;
        self.sleeps = 0;
    }

    pub(super) fn result(&self, window_nanos: u64) -> RebuildUse {
        let member_bytes = self
            .streams
            .iter()
            .map(|s| s.measured_bytes)
            .min()
            .unwrap_or(0);
        RebuildUse {
            member_bytes,
            bytes_per_sec: member_bytes as f64 * 1e9 / window_nanos.max(1) as f64,
            member_capacity_bytes: self
                .streams
                .iter()
                .map(|s| s.member_bytes)
                .max()
                .unwrap_or(0),
            yields: self.yields,
            sleeps: self.sleeps,
            finished_nanos: self
                .streams
                .iter()
                .map(|s| s.finished_at_nanos)
                .collect::<Option<Vec<u64>>>()
                .and_then(|t| t.into_iter().max()),
        }
    }
}

fn collect(node: &Node, md: &MdSettings, cap: &dyn Fn(u32) -> u64, out: &mut Vec<Stream>) {
    let over_disks: Option<Vec<u32>> = node
        .members
        .iter()
        .map(|m| match m {
            Member::Disk(d) => Some(*d),
            Member::Node(_) => None,
        })
        .collect();
    match over_disks {
        Some(member_disks) if !node.failed.is_empty() => {
            let member_bytes = if node.rebuild_sources(node.failed[0], 0, 1, cap).is_some() {
                node.per_member_bytes(cap)
            } else {
                0
            };
            if member_bytes == 0 {
                return;
            }
            let inflight_cap_bytes = match node.level {
                Level::Raid5 | Level::Raid6 => u64::from(md.stripe_cache_size.max(1)) * 4096,
                _ => RESYNC_DEPTH_BYTES,
            };
            out.push(Stream {
                failed: node.failed.iter().map(|&f| (f, member_disks[f])).collect(),
                last_events: vec![0; member_disks.len()],
                member_disks,
                node: node.clone(),
                member_bytes,
                cursor_bytes: 0,
                inflight_bytes: 0,
                inflight_cap_bytes: inflight_cap_bytes.max(MD_SYNC_WINDOW_BYTES),
                issued_bytes: 0,
                done_bytes: 0,
                last_look_bytes: 0,
                marks: [(0, 0); SYNC_MARKS],
                last_mark: 0,
                resync_mark: (0, 0),
                state: State::Run,
                min_kib: u64::from(md.sync_speed_min_kib),
                max_kib: u64::from(md.sync_speed_max_kib.max(1)),
                measured_bytes: 0,
                finished_at_nanos: None,
            });
        }
        Some(_) => {}
        None => {
            for m in &node.members {
                if let Member::Node(child) = m {
                    collect(child, md, cap, out);
                }
            }
        }
    }
}

impl Engine {
    /// Starts every degraded array's recovery now.
    pub(super) fn start_rebuild(&mut self) {
        let Some(r) = self.rebuild.as_mut() else {
            return;
        };
        let now = self.now;
        for s in &mut r.streams {
            s.marks = [(now, 0); SYNC_MARKS];
            s.resync_mark = (now, 0);
        }
        for i in 0..r.streams.len() {
            // md's first look (`is_mddev_idle(mddev, 1)`) records every member's count.
            let Some(r) = self.rebuild.as_mut() else {
                return;
            };
            let s = &mut r.streams[i];
            for (k, &d) in s.member_disks.iter().enumerate() {
                s.last_events[k] =
                    r.completed_sectors[d as usize] - r.sync_submitted_sectors[d as usize];
            }
            self.pump_rebuild(i);
        }
    }

    /// No more pieces are issued (the run is ending); those in flight complete.
    pub(super) fn stop_rebuild(&mut self) {
        if let Some(r) = self.rebuild.as_mut() {
            r.stopped = true;
        }
    }

    /// md's sleep above the maximum ended.
    pub(super) fn rebuild_wake(&mut self, stream: u32) {
        if let Some(s) = self
            .rebuild
            .as_mut()
            .and_then(|r| r.streams.get_mut(stream as usize))
        {
            if s.state == State::Sleep {
                s.state = State::Look;
            }
        }
        self.pump_rebuild(stream as usize);
    }

    /// A piece of stream `stream` covering `len` bytes of each replacement is done.
    pub(super) fn rebuild_piece_done(&mut self, stream: u32, len: u64) {
        let measuring = self.measuring;
        if let Some(s) = self
            .rebuild
            .as_mut()
            .and_then(|r| r.streams.get_mut(stream as usize))
        {
            s.inflight_bytes -= len;
            s.done_bytes += len;
            if measuring {
                s.measured_bytes += len;
            }
            if s.done_bytes >= s.member_bytes && s.finished_at_nanos.is_none() {
                s.finished_at_nanos = Some(self.now);
            }
        }
        self.pump_rebuild(stream as usize);
    }

    /// Issues pieces of stream `i` until md would wait.
    fn pump_rebuild(&mut self, i: usize) {
        loop {
            let now = self.now;
            let Some(r) = self.rebuild.as_mut() else {
                return;
            };
            let stopped = r.stopped;
            let Some(s) = r.streams.get_mut(i) else {
                return;
            };
            match s.state {
                State::Done | State::Sleep => return,
                State::Drain => {
                    if s.inflight_bytes > 0 {
                        return;
                    }
                    s.state = State::Run;
                }
                State::Look => {
                    let speed = s.look_speed_kib(now);
                    if speed > s.min_kib {
                        if speed > s.max_kib {
                            s.state = State::Sleep;
                            r.sleeps += 1;
                            self.heap.push(std::cmp::Reverse((
                                now + MAX_SLEEP_NANOS,
                                EV_REBUILD,
                                i as u32,
                            )));
                            return;
                        }
                        let mut idle = true;
                        for (k, &d) in s.member_disks.iter().enumerate() {
                            let curr = r.completed_sectors[d as usize]
                                - r.sync_submitted_sectors[d as usize];
                            if curr - s.last_events[k] > IDLE_SECTORS {
                                s.last_events[k] = curr;
                                idle = false;
                            }
                        }
                        if !idle {
                            r.yields += 1;
                            s.state = State::Drain;
                            continue;
                        }
                    }
                    s.state = State::Run;
                }
                State::Run => {
                    if stopped || s.cursor_bytes >= s.member_bytes {
                        if s.inflight_bytes == 0 {
                            s.state = State::Done;
                        }
                        return;
                    }
                    if s.inflight_bytes + MD_SYNC_WINDOW_BYTES > s.inflight_cap_bytes {
                        return;
                    }
                    let caps = &self.capacities;
                    let cap = |d: u32| caps.get(d as usize).copied().unwrap_or(0);
                    let mut ops = self.op_pool.pop().unwrap_or_default();
                    ops.clear();
                    let want = MD_SYNC_WINDOW_BYTES - (s.issued_bytes - s.last_look_bytes);
                    let mut len = 0;
                    for &(member, disk) in &s.failed {
                        let Some((sources, n)) =
                            s.node.rebuild_sources(member, s.cursor_bytes, want, &cap)
                        else {
                            continue;
                        };
                        len = if len == 0 { n } else { len.min(n) };
                        for (m, at) in sources {
                            let Member::Disk(src) = s.node.members[m] else {
                                continue;
                            };
                            if !ops
                                .iter()
                                .any(|o: &DiskOp| o.disk == src && o.offset_bytes == at)
                            {
                                ops.push(DiskOp {
                                    disk: src,
                                    offset_bytes: at,
                                    len_bytes: 0,
                                    write: false,
                                    phase: 0,
                                });
                            }
                        }
                        ops.push(DiskOp {
                            disk,
                            offset_bytes: s.cursor_bytes,
                            len_bytes: 0,
                            write: true,
                            phase: 1,
                        });
                    }
                    if len == 0 {
                        // No data here (a RAID 10 row past the array's end): skip it.
                        s.cursor_bytes += want.min(s.member_bytes - s.cursor_bytes);
                        self.op_pool.push(ops);
                        continue;
                    }
                    for o in &mut ops {
                        o.len_bytes = len as u32;
                        r.sync_submitted_sectors[o.disk as usize] += (len / 512) as i64;
                    }
                    // A flash member stripes a large request over its parallel units, which
                    // the device model (one lane per command) cannot: on a device of L lanes
                    // a piece is cut into L at most (whole 4 KiB pages), as a stripe pass's
                    // merged requests are (`raid5d.rs`). A hard disk gets it whole.
                    let whole = ops.len();
                    for k in 0..whole {
                        let o = ops[k];
                        let lanes = u64::from(
                            self.disks
                                .get(o.disk as usize)
                                .map_or(1, |d| d.parallelism)
                                .max(1),
                        );
                        let piece = (len.div_ceil(lanes).div_ceil(4096) * 4096).max(4096);
                        let mut at = piece;
                        ops[k].len_bytes = piece.min(len) as u32;
                        while at < len {
                            ops.push(DiskOp {
                                offset_bytes: o.offset_bytes + at,
                                len_bytes: piece.min(len - at) as u32,
                                ..o
                            });
                            at += piece;
                        }
                    }
                    ops.sort_by_key(|o| o.phase);
                    s.cursor_bytes += len;
                    s.inflight_bytes += len;
                    s.issued_bytes += len;
                    if s.issued_bytes - s.last_look_bytes >= MD_SYNC_WINDOW_BYTES
                        || s.cursor_bytes >= s.member_bytes
                    {
                        s.last_look_bytes = s.issued_bytes;
                        s.state = State::Look;
                    }
                    if self.measuring {
                        for o in &ops {
                            self.disks[o.disk as usize].count(o.write, o.len_bytes);
                        }
                    }
                    let id =
                        self.alloc_internal(Kind::Rebuild { stream: i as u32 }, ops, Vec::new());
                    self.reqs[id as usize].io.len_bytes = len as u32;
                    self.start_phase(id);
                }
            }
        }
    }
}

impl Stream {
    /// md's `currspeed`: KiB/s completed since its oldest mark, over whole seconds plus one
    /// (moving the marks on every 3 s, as md does when it looks).
    fn look_speed_kib(&mut self, now: u64) -> u64 {
        if now >= self.marks[self.last_mark].0 + SYNC_MARK_STEP_NANOS {
            let next = (self.last_mark + 1) % SYNC_MARKS;
            self.resync_mark = self.marks[next];
            self.marks[next] = (now, self.done_bytes);
            self.last_mark = next;
        }
        let (at, done) = self.resync_mark;
        let secs = now.saturating_sub(at) / 1_000_000_000 + 1;
        (self.done_bytes.saturating_sub(done) / 1024) / secs + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::controller::ControllerModel;
    use crate::array::device::{DeviceModel, DiskPreset};
    use crate::array::engine::{HostIo, RunResult, Target};

    const GIB: u64 = 1 << 30;
    const SEC: u64 = 1_000_000_000;

    fn device(preset: DiskPreset, bytes: u64) -> DeviceModel {
        let mut m = preset.model();
        match &mut m {
            DeviceModel::Hdd(h) => h.capacity_bytes = bytes,
            DeviceModel::Ssd(s) => s.capacity_bytes = bytes,
        }
        m
    }

    fn engine(
        layout: Node,
        n: usize,
        dev: DeviceModel,
        ctrl: ControllerModel,
        rebuild: bool,
    ) -> Engine {
        let mut e = Engine::new(&vec![dev; n], layout, ctrl, None);
        if rebuild {
            assert!(e.start_rebuilding(), "a degraded md array rebuilds");
        }
        e
    }

    fn degraded(level: Level, n: u32, failed: &[usize]) -> Node {
        let mut node = Node::over_disks(level, 64 << 10, 0, n);
        node.failed = failed.to_vec();
        node
    }

    /// Random 4 KiB reads kept `depth` outstanding for `requests`.
    fn closed_reads(e: &mut Engine, depth: usize, requests: u64, span: u64) {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..requests {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            e.submit_closed(
                depth,
                HostIo {
                    offset_bytes: (x % (span / 4096)) * 4096,
                    len_bytes: 4096,
                    write: false,
                    target: Target::Array,
                    host_bytes: 4096,
                },
            );
        }
    }

    /// Alone, md rebuilds as fast as it may: NVMe members that could go several times faster
    /// are held near `sync_speed_max` (here 50,000 KiB/s) by its sleeps, and every byte of the
    /// replacement is written once and read once from each survivor.
    #[test]
    fn alone_md_rebuilds_at_sync_speed_max_and_writes_every_byte_once() {
        let mut ctrl = ControllerModel::software_without_bitmap();
        ctrl.md.as_mut().unwrap().sync_speed_max_kib = 50_000;
        let mut e = engine(
            degraded(Level::Raid5, 4, &[1]),
            4,
            device(DiskPreset::Nvme, GIB),
            ctrl,
            true,
        );
        e.run_until(60 * SEC);
        let r = e.finish();
        let rb = r.rebuild.expect("rebuild result");
        let t = rb.finished_nanos.expect("1 GiB rebuilt within a minute");
        let speed = GIB as f64 / (t as f64 * 1e-9);
        let max = 50_000.0 * 1024.0;
        assert!(
            speed <= max * 1.05 && speed >= max * 0.8,
            "{speed} B/s against sync_speed_max {max}"
        );
        assert!(rb.sleeps > 0);
        assert_eq!(rb.yields, 0, "nothing else ran");
        for (i, d) in r.disks.iter().enumerate() {
            if i == 1 {
                assert_eq!((d.read_bytes, d.write_bytes), (0, GIB), "replacement");
            } else {
                assert_eq!((d.read_bytes, d.write_bytes), (GIB, 0), "survivor {i}");
            }
        }
        // md's default maximum lets it go at the members' own speed.
        let mut e = engine(
            degraded(Level::Raid5, 4, &[1]),
            4,
            device(DiskPreset::Nvme, GIB),
            ControllerModel::software_without_bitmap(),
            true,
        );
        e.run_until(60 * SEC);
        let fast = e.finish().rebuild.unwrap().finished_nanos.unwrap();
        assert!(fast * 3 < t, "{fast} ns unthrottled against {t} ns");
    }

    fn busy_run(rebuild: bool, min_kib: u32) -> RunResult {
        let mut ctrl = ControllerModel::software_without_bitmap();
        ctrl.md.as_mut().unwrap().sync_speed_min_kib = min_kib;
        let mut e = engine(
            degraded(Level::Raid1, 2, &[1]),
            2,
            DiskPreset::Sas10k.model(),
            ctrl,
            rebuild,
        );
        closed_reads(&mut e, 4, 20_000, 64 * GIB);
        e.stop_measuring();
        e.finish()
    }

    /// Under a load md looks, finds members busy, and lets its window finish before the next:
    /// the rebuild goes slower than alone, and the load slower than on the degraded array
    /// with no rebuild. A minimum above what the disks give turns the yielding off: faster
    /// rebuild, slower load.
    #[test]
    fn under_load_md_yields_and_sync_speed_min_overrides_it() {
        let degraded_only = busy_run(false, 1_000);
        let yielding = busy_run(true, 1_000);
        let forced = busy_run(true, 10_000_000);
        let (y, f) = (
            yielding.rebuild.clone().unwrap(),
            forced.rebuild.clone().unwrap(),
        );
        assert!(y.yields > 0, "{y:?}");
        assert_eq!(f.yields, 0, "below the minimum md never yields: {f:?}");
        assert!(
            y.bytes_per_sec > 1_000.0 * 1024.0 && y.bytes_per_sec < f.bytes_per_sec,
            "{y:?} {f:?}"
        );
        assert!(
            degraded_only.iops > yielding.iops && yielding.iops > forced.iops,
            "{} {} {}",
            degraded_only.iops,
            yielding.iops,
            forced.iops
        );
        // Alone, the same disks rebuild faster than under the load.
        let mut e = engine(
            degraded(Level::Raid1, 2, &[1]),
            2,
            DiskPreset::Sas10k.model(),
            ControllerModel::software_without_bitmap(),
            true,
        );
        e.run_until(yielding.elapsed_nanos);
        let alone = e.finish().rebuild.unwrap();
        assert!(
            alone.bytes_per_sec > y.bytes_per_sec * 1.3,
            "{alone:?} {y:?}"
        );
    }

    /// Where the pieces go: RAID 1 reads its survivor, md's RAID 10 `n2` the failed disk's
    /// partner, RAID 6 with two failed reads the four others and writes both replacements.
    #[test]
    fn each_level_reads_the_lost_datas_sources() {
        let cases: [(Node, usize, &[usize], &[usize]); 3] = [
            (degraded(Level::Raid1, 3, &[0]), 3, &[1], &[0]),
            (
                {
                    let mut n = Node::md_raid10(Default::default(), 64 << 10, 0, 4);
                    n.failed = vec![2];
                    n
                },
                4,
                &[3],
                &[2],
            ),
            (
                degraded(Level::Raid6, 6, &[1, 4]),
                6,
                &[0, 2, 3, 5],
                &[1, 4],
            ),
        ];
        for (node, n, read, written) in cases {
            let mut e = engine(
                node,
                n,
                device(DiskPreset::Nvme, 256 << 20),
                ControllerModel::software_without_bitmap(),
                true,
            );
            e.run_until(60 * SEC);
            let r = e.finish();
            assert!(r.rebuild.as_ref().unwrap().finished_nanos.is_some());
            for (i, d) in r.disks.iter().enumerate() {
                let expect_read = if read.contains(&i) { 256 << 20 } else { 0 };
                let expect_write = if written.contains(&i) { 256 << 20 } else { 0 };
                assert_eq!(
                    (d.read_bytes, d.write_bytes),
                    (expect_read, expect_write),
                    "disk {i} of {n}"
                );
            }
        }
    }
}
