//! The discrete-event engine: host requests enter the controller, become member-disk commands
//! through the layout, queue at each disk, and complete when the last command of their last
//! phase does. Time is a `u64` of simulated nanoseconds; nothing reads a clock, and every run is
//! a pure function of its inputs.
//!
//! The engine is push-driven so that a trace of any length streams through it: a closed-loop
//! driver calls [`Engine::submit_closed`] (which runs the simulation until one of the N slots is
//! free), an open-loop driver calls [`Engine::submit_at`] with the request's time. Both end with
//! [`Engine::finish`].

mod bitmap;
mod controller_state;
mod disk;
mod md_super;
mod raid5d;
mod rebuild;
mod results;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::controller::{ControllerModel, DirtyMap};
use super::device::{DeviceModel, Placement};
use super::histogram::Histogram;
use super::layout::{DiskOp, Level, Member, Node, ReadBalance};

use bitmap::BitmapTiming;
use disk::{timing_of, Disk, InDisk, Timing, View};
use md_super::SafeModeTiming;
use raid5d::MdTiming;
use rebuild::RebuildTiming;
pub use rebuild::{RebuildUse, MD_SYNC_WINDOW_BYTES};
pub use results::{BitmapUse, DiskUse, Latency, RunResult, SuperblockUse, Tier};

/// Host requests in flight beyond which an open-loop replay waits (the array is overloaded;
/// bounded memory matters more than modelling an unbounded queue).
pub const MAX_OUTSTANDING: usize = 1 << 16;

/// Which set of devices a request goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Array,
    /// The SSD cache tier (only when the engine was built with one).
    Cache,
}

/// A request as the host (or the cache tier) issues it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostIo {
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub write: bool,
    pub target: Target,
    /// The bytes the host asked for, reported in MB/s: `len_bytes` unless a cache turned the
    /// request into a larger back-end read (a whole-line fill).
    pub host_bytes: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Counted in the results; `closed` requests hold one of the closed loop's slots.
    Host {
        closed: bool,
    },
    /// Issued on the host's behalf but not waited for (cache fills, async write-back).
    Background,
    Destage,
    Prefetch,
    /// One pass of md's stripe state machine: the member I/O of a stripe head or a batch of
    /// them; `waiters` are the requests whose pages it writes.
    MdStripe,
    /// md's write-intent bitmap pages written to every member: an unplug, whose `waiters`
    /// go on when it is done, or the bitmap daemon's write.
    MdBitmap,
    /// A step of an md superblock update (safe mode) on every member.
    MdSuper,
    /// A piece of md's recovery of a failed member (`engine/rebuild.rs`).
    Rebuild {
        stream: u32,
    },
}

struct Req {
    kind: Kind,
    arrival_nanos: u64,
    io: HostIo,
    ops: Vec<DiskOp>,
    next_op: usize,
    remaining: u32,
    parity_chunks: u32,
    /// Host reads waiting for this prefetch to land.
    waiters: Vec<u32>,
    /// Host requests that are served by other requests (e.g. a read-ahead hit).
    done: bool,
    /// Linux md RAID 5/6 writes: the write still has to join its stripe heads when it starts
    /// (`md_deferred`), and the stripe passes it still waits for (`md_wait`).
    md_deferred: bool,
    md_wait: u32,
    /// A write that marked its chunks in md's write-intent bitmap and has not ended yet.
    bitmap_started: bool,
    /// A write that passed md's safe mode (`md_write_start`) and has not ended yet.
    safe_started: bool,
    /// Admitted while measuring: the member I/O done on its behalf counts in the window.
    measured: bool,
}

pub struct Engine {
    now: u64,
    heap: BinaryHeap<Reverse<(u64, u8, u32)>>,
    disks: Vec<Disk>,
    array_disks: usize,
    capacities: Vec<u64>,
    layout: Node,
    cache_layout: Option<Node>,
    controller: ControllerModel,
    stripe_bytes: u64,
    reqs: Vec<Req>,
    free_reqs: Vec<u32>,
    in_disk: Vec<InDisk>,
    free_in_disk: Vec<u32>,
    op_pool: Vec<Vec<DiskOp>>,
    // Closed loop.
    closed_outstanding: usize,
    host_outstanding: usize,
    // Controller state.
    ctrl_free_at_nanos: f64,
    parity_free_at_nanos: f64,
    ctrl_busy_nanos: f64,
    parity_busy_nanos: f64,
    dirty: DirtyMap,
    dirty_inflight_bytes: u64,
    destage_cursor_bytes: u64,
    destage_inflight: u32,
    destaging: bool,
    blocked_writes: VecDeque<u32>,
    last_read_end_bytes: u64,
    ra_start_bytes: u64,
    ra_end_bytes: u64,
    ra_inflight: Option<u32>,
    // Measurement.
    measuring: bool,
    window_start: u64,
    window_end: Option<u64>,
    hist: Histogram,
    read_hist: Histogram,
    reads_done: u64,
    writes_done: u64,
    bytes_done: u64,
    backend_ops: u64,
    throttled: u64,
    md: Option<MdTiming>,
    bitmap: Option<BitmapTiming>,
    safe_mode: Option<SafeModeTiming>,
    rebuild: Option<RebuildTiming>,
}

const EV_DISK_DONE: u8 = 0;
const EV_REQ_DONE: u8 = 1;
const EV_REQ_START: u8 = 2;
/// md's threads look at the handle list (after every other event of the same instant, so
/// that requests issued at that instant join their stripe heads first).
const EV_MD_PICK: u8 = 3;
/// A pass of md's bitmap daemon.
const EV_MD_BITMAP: u8 = 4;
/// md's safe-mode timer.
const EV_MD_SUPER: u8 = 5;
/// md's sync thread wakes from its sleep above `sync_speed_max`.
const EV_REBUILD: u8 = 6;

/// The member disks of a software array that md writes its metadata (superblock, bitmap) to:
/// every disk under `node`, less the failed members of an array over disks.
fn md_live_members(node: &Node) -> Vec<u32> {
    let mut members = Vec::new();
    node.disks(&mut members);
    if node.members.iter().all(|m| matches!(m, Member::Disk(_))) {
        members = members
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !node.failed.contains(i))
            .map(|(_, d)| d)
            .collect();
    }
    members
}

/// Bytes of one full stripe of the top node (the destage and read-ahead unit).
pub fn stripe_bytes(node: &Node) -> u64 {
    let n = node.members.len() as u64;
    match node.level {
        Level::Raid0 => node.chunk_bytes * n,
        Level::Raid5 => node.chunk_bytes * (n - 1),
        Level::Raid6 => node.chunk_bytes * (n - 2),
        // A row of distinct chunks: n / near of them (far copies repeat whole rows elsewhere).
        Level::Raid10 => {
            let near = u64::from(node.raid10.unwrap_or_default().near.max(1));
            node.chunk_bytes * (n / near).max(1)
        }
        Level::Concat | Level::Raid1 => match node.members.first() {
            Some(Member::Node(child)) => stripe_bytes(child),
            _ => 1 << 20,
        },
    }
}

impl Engine {
    /// `devices` are the array's members (indexed by the layout's disk numbers); `cache` is
    /// the optional SSD tier with its own layout over its own device list.
    pub fn new(
        devices: &[DeviceModel],
        layout: Node,
        controller: ControllerModel,
        cache: Option<(&[DeviceModel], Node)>,
    ) -> Engine {
        let mut disks = Vec::new();
        let mut capacities = Vec::new();
        let mut push = |m: &DeviceModel| {
            let (timing, parallelism) = timing_of(m);
            capacities.push(m.capacity_bytes());
            disks.push(Disk {
                timing,
                parallelism,
                queue: VecDeque::new(),
                in_service: 0,
                head_radial: 0.0,
                head_bytes: 0,
                ra_valid: false,
                ra_start_bytes: 0,
                ra_base_bytes: 0,
                ra_time_nanos: 0.0,
                ra_rate_bytes_per_nano: 1.0,
                busy_nanos: 0.0,
                ops: 0,
                reads: 0,
                writes: 0,
                read_bytes: 0,
                write_bytes: 0,
            });
        };
        devices.iter().for_each(&mut push);
        let array_disks = devices.len();
        let cache_layout = cache.map(|(cache_devices, mut node)| {
            cache_devices.iter().for_each(&mut push);
            shift_disks(&mut node, array_disks as u32);
            node
        });
        let stripe = stripe_bytes(&layout).max(4096);
        let md = controller
            .md
            .as_ref()
            .and_then(|s| MdTiming::for_layout(&layout, s));
        let bitmap = controller.md.as_ref().and_then(|s| {
            let cap = |d: u32| capacities.get(d as usize).copied().unwrap_or(0);
            BitmapTiming::for_layout(&layout, s.bitmap, &cap)
        });
        let safe_mode = controller
            .md
            .as_ref()
            .and_then(|s| SafeModeTiming::for_layout(&layout, s.safe_mode_delay_nanos));
        Engine {
            now: 0,
            heap: BinaryHeap::new(),
            disks,
            array_disks,
            capacities,
            layout,
            cache_layout,
            controller,
            stripe_bytes: stripe,
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            in_disk: Vec::new(),
            free_in_disk: Vec::new(),
            op_pool: Vec::new(),
            closed_outstanding: 0,
            host_outstanding: 0,
            ctrl_free_at_nanos: 0.0,
            parity_free_at_nanos: 0.0,
            ctrl_busy_nanos: 0.0,
            parity_busy_nanos: 0.0,
            dirty: DirtyMap::default(),
            dirty_inflight_bytes: 0,
            destage_cursor_bytes: 0,
            destage_inflight: 0,
            destaging: false,
            blocked_writes: VecDeque::new(),
            last_read_end_bytes: u64::MAX,
            ra_start_bytes: 0,
            ra_end_bytes: 0,
            ra_inflight: None,
            measuring: true,
            window_start: 0,
            window_end: None,
            hist: Histogram::new(),
            read_hist: Histogram::new(),
            reads_done: 0,
            writes_done: 0,
            bytes_done: 0,
            backend_ops: 0,
            throttled: 0,
            md,
            bitmap,
            safe_mode,
            rebuild: None,
        }
    }

    /// Starts Linux md's recovery of every failed member onto a replacement, beside the load
    /// (`engine/rebuild.rs`); true when there is one (a software array with a degraded node
    /// over disks). A hardware controller's array is left degraded: how its firmware paces a
    /// rebuild is not published.
    pub fn start_rebuilding(&mut self) -> bool {
        let Some(md) = self.controller.md.as_ref() else {
            return false;
        };
        let caps = &self.capacities;
        let cap = |d: u32| caps.get(d as usize).copied().unwrap_or(0);
        self.rebuild = RebuildTiming::for_layout(&self.layout, md, self.disks.len(), &cap);
        self.start_rebuild();
        self.rebuild.is_some()
    }

    pub fn now_nanos(&self) -> u64 {
        self.now
    }

    /// Host requests currently in flight.
    pub fn outstanding(&self) -> usize {
        self.host_outstanding
    }

    /// Issues `io` as soon as fewer than `depth` closed-loop requests are outstanding.
    pub fn submit_closed(&mut self, depth: usize, io: HostIo) {
        while self.closed_outstanding >= depth.max(1) {
            if !self.step() {
                break;
            }
        }
        self.closed_outstanding += 1;
        self.issue_host(io, Kind::Host { closed: true });
    }

    /// Issues `io` at simulated time `time_nanos` (open loop). Times earlier than the engine's
    /// clock are issued now.
    pub fn submit_at(&mut self, time_nanos: u64, io: HostIo) {
        // Every event up to this instant, except md's threads looking at the handle list at
        // this very instant: requests issued together join their stripe heads first.
        while let Some(Reverse((t, kind, _))) = self.heap.peek() {
            if (*t, *kind) >= (time_nanos, EV_MD_PICK) {
                break;
            }
            self.step();
        }
        self.now = self.now.max(time_nanos);
        if self.host_outstanding >= MAX_OUTSTANDING {
            self.throttled += 1;
            while self.host_outstanding >= MAX_OUTSTANDING && self.step() {}
        }
        self.now = self.now.max(time_nanos);
        self.issue_host(io, Kind::Host { closed: false });
    }

    /// Issues `io` without waiting for it and without counting it (cache fills, write-back of
    /// dirty cache lines, bonnie's asynchronous write-backs).
    pub fn submit_background(&mut self, io: HostIo) {
        self.issue_host(io, Kind::Background);
    }

    /// Runs every event up to `time_nanos` and moves the clock there.
    pub fn run_until(&mut self, time_nanos: u64) {
        while let Some(Reverse((t, _, _))) = self.heap.peek() {
            if *t > time_nanos {
                break;
            }
            self.step();
        }
        self.now = self.now.max(time_nanos);
    }

    /// Runs until nothing is left (all host requests done, cache destaged) and reports.
    pub fn finish(mut self) -> RunResult {
        self.stop_rebuild();
        // The host-visible window ends with the last counted completion, before the cache has
        // finished destaging.
        while self.host_outstanding > 0 && self.step() {}
        if self.measuring {
            self.window_end = Some(self.now);
        }
        self.safe_mode_after_run();
        self.result()
    }

    fn alloc_req(&mut self, kind: Kind, io: HostIo) -> u32 {
        let ops = self.op_pool.pop().unwrap_or_default();
        let req = Req {
            kind,
            arrival_nanos: self.now,
            io,
            ops,
            next_op: 0,
            remaining: 0,
            parity_chunks: 0,
            waiters: Vec::new(),
            done: false,
            md_deferred: false,
            md_wait: 0,
            bitmap_started: false,
            safe_started: false,
            measured: self.measuring,
        };
        if let Some(id) = self.free_reqs.pop() {
            self.reqs[id as usize] = req;
            id
        } else {
            self.reqs.push(req);
            (self.reqs.len() - 1) as u32
        }
    }

    /// An md-internal request (a stripe pass, a bitmap write) with its member commands and the
    /// requests waiting for it.
    fn alloc_internal(&mut self, kind: Kind, ops: Vec<DiskOp>, waiters: Vec<u32>) -> u32 {
        let io = HostIo {
            offset_bytes: 0,
            len_bytes: 0,
            write: true,
            target: Target::Array,
            host_bytes: 0,
        };
        let id = self.alloc_req(kind, io);
        let r = &mut self.reqs[id as usize];
        let pooled = std::mem::replace(&mut r.ops, ops);
        self.op_pool.push(pooled);
        r.waiters = waiters;
        id
    }

    fn free_req(&mut self, id: u32) {
        let mut ops = std::mem::take(&mut self.reqs[id as usize].ops);
        ops.clear();
        self.op_pool.push(ops);
        self.free_reqs.push(id);
    }

    fn issue_host(&mut self, io: HostIo, kind: Kind) {
        if matches!(kind, Kind::Host { .. }) {
            self.host_outstanding += 1;
        }
        let id = self.alloc_req(kind, io);
        let ctrl = &self.controller;
        if io.target == Target::Array {
            // Write-back cache: the write completes once it is in controller memory.
            if io.write && ctrl.write_back_bytes > 0 {
                if self.dirty.bytes() + self.dirty_inflight_bytes + u64::from(io.len_bytes)
                    <= ctrl.write_back_bytes
                {
                    self.absorb_write(id);
                } else {
                    self.blocked_writes.push_back(id);
                }
                self.pump_destage();
                return;
            }
            if !io.write {
                let end = io.offset_bytes + u64::from(io.len_bytes);
                if ctrl.write_back_bytes > 0 && self.dirty.covers(io.offset_bytes, end) {
                    self.complete_from_cache(id);
                    return;
                }
                if ctrl.read_ahead_bytes > 0 && self.read_ahead(id) {
                    return;
                }
            }
        }
        self.admit(id);
    }

    /// Whether request `id` is a write to the array that md receives (not md's own member
    /// I/O): what its safe mode and bitmap see.
    fn is_md_write(&self, id: u32) -> bool {
        let r = &self.reqs[id as usize];
        r.io.write
            && r.io.target == Target::Array
            && !matches!(
                r.kind,
                Kind::MdStripe | Kind::MdBitmap | Kind::MdSuper | Kind::Rebuild { .. }
            )
    }

    /// Passes the controller's ceilings, then expands the request onto the disks.
    fn admit(&mut self, id: u32) {
        if self.safe_mode_gate(id) || self.bitmap_gate(id) {
            return;
        }
        let io = self.reqs[id as usize].io;
        let ctrl = &self.controller;
        let now = self.now as f64;
        let mut start = now;
        if matches!(self.reqs[id as usize].kind, Kind::Host { .. }) && io.target == Target::Array {
            let by_iops = ctrl.max_iops.map(|c| 1e9 / c.max(1e-9)).unwrap_or(0.0);
            let by_bytes = ctrl
                .max_bytes_per_sec
                .map(|c| f64::from(io.len_bytes) * 1e9 / c.max(1e-9))
                .unwrap_or(0.0);
            let service = by_iops.max(by_bytes);
            if service > 0.0 {
                start = start.max(self.ctrl_free_at_nanos);
                self.ctrl_free_at_nanos = start + service;
                self.ctrl_busy_nanos += service;
            }
        }
        // A software array's mirrors are read as md balances them; the cache devices' and a
        // controller's by load.
        let read_balance = if io.target == Target::Array && ctrl.md.is_some() {
            ReadBalance::Md
        } else {
            ReadBalance::LeastLoaded
        };
        let view = View(&self.disks, read_balance);
        let caps = &self.capacities;
        let cap = |d: u32| caps.get(d as usize).copied().unwrap_or(0);
        let node = match io.target {
            Target::Cache => self.cache_layout.as_ref().unwrap_or(&self.layout),
            Target::Array => &self.layout,
        };
        let mut ops = std::mem::take(&mut self.reqs[id as usize].ops);
        ops.clear();
        let md_array = io.target == Target::Array && self.md.is_some();
        let parity = if md_array {
            // A controller parity ceiling in front of md counts one parity chunk per parity
            // member and stripe row written, as the layout does.
            if io.write && ctrl.parity_chunks_per_sec.is_some() {
                parity_rows(&self.layout, io.offset_bytes, u64::from(io.len_bytes))
            } else {
                0
            }
        } else {
            node.expand(
                io.write,
                io.offset_bytes,
                u64::from(io.len_bytes),
                0,
                &view,
                &cap,
                &mut ops,
            )
        };
        if md_array {
            if io.write {
                self.reqs[id as usize].md_deferred = true;
            } else {
                self.md_read(io, &mut ops);
            }
        } else {
            if ops.iter().any(|o| o.phase > 0) {
                ops.sort_by_key(|o| o.phase);
            }
            if self.measuring {
                for o in &ops {
                    self.disks[o.disk as usize].count(o.write, o.len_bytes);
                }
            }
        }
        let ctrl = &self.controller;
        if parity > 0 {
            if let Some(rate) = ctrl.parity_chunks_per_sec {
                let service = f64::from(parity) * 1e9 / rate.max(1e-9);
                start = start.max(self.parity_free_at_nanos);
                self.parity_free_at_nanos = start + service;
                self.parity_busy_nanos += service;
            }
        }
        let r = &mut self.reqs[id as usize];
        r.ops = ops;
        r.parity_chunks = parity;
        if start > now {
            self.heap
                .push(Reverse((start.ceil() as u64, EV_REQ_START, id)));
        } else {
            self.start_phase(id);
        }
    }

    /// Sends every op of the request's next phase to its disk.
    fn start_phase(&mut self, id: u32) {
        if self.reqs[id as usize].md_deferred {
            self.reqs[id as usize].md_deferred = false;
            self.md_write(id);
            return;
        }
        let (from, to) = {
            let r = &self.reqs[id as usize];
            if r.next_op >= r.ops.len() {
                (r.next_op, r.next_op)
            } else {
                let phase = r.ops[r.next_op].phase;
                let to = r.ops[r.next_op..]
                    .iter()
                    .position(|o| o.phase != phase)
                    .map_or(r.ops.len(), |p| r.next_op + p);
                (r.next_op, to)
            }
        };
        if from == to {
            self.request_done(id);
            return;
        }
        {
            let r = &mut self.reqs[id as usize];
            r.next_op = to;
            r.remaining = (to - from) as u32;
        }
        for i in from..to {
            let op = self.reqs[id as usize].ops[i];
            let place = match &self.disks[op.disk as usize].timing {
                Timing::Hdd(g, _, _) => g.place(op.offset_bytes, op.len_bytes),
                Timing::Ssd(_) => Placement::default(),
            };
            let rec = InDisk { req: id, op, place };
            let slot = if let Some(s) = self.free_in_disk.pop() {
                self.in_disk[s as usize] = rec;
                s
            } else {
                self.in_disk.push(rec);
                (self.in_disk.len() - 1) as u32
            };
            if self.measuring {
                self.backend_ops += 1;
            }
            self.disks[op.disk as usize].queue.push_back(slot);
            self.dispatch(op.disk as usize);
        }
    }

    /// Processes one event; false when there is none.
    fn step(&mut self) -> bool {
        let Some(Reverse((t, kind, id))) = self.heap.pop() else {
            return false;
        };
        self.now = self.now.max(t);
        match kind {
            EV_DISK_DONE => {
                let InDisk { req, op, .. } = self.in_disk[id as usize];
                self.free_in_disk.push(id);
                let disk = op.disk as usize;
                self.disks[disk].in_service -= 1;
                if let Some(r) = self.rebuild.as_mut() {
                    r.disk_done(disk, op.len_bytes);
                }
                let r = &mut self.reqs[req as usize];
                r.remaining -= 1;
                if r.remaining == 0 {
                    self.start_phase(req);
                }
                self.dispatch(disk);
            }
            EV_REQ_START => self.start_phase(id),
            EV_MD_PICK => self.md_pick(),
            EV_MD_BITMAP => self.bitmap_event(id),
            EV_MD_SUPER => self.safe_mode_timer(),
            EV_REBUILD => self.rebuild_wake(id),
            _ => self.finish_host(id),
        }
        true
    }

    /// All member commands of the request are done.
    fn request_done(&mut self, id: u32) {
        self.bitmap_end_write(id);
        self.safe_mode_end_write(id);
        match self.reqs[id as usize].kind {
            Kind::Host { .. } => self.complete_after_overhead(id),
            Kind::Background => self.free_req(id),
            Kind::Destage => {
                let len = u64::from(self.reqs[id as usize].io.len_bytes);
                self.dirty_inflight_bytes -= len;
                self.destage_inflight -= 1;
                self.free_req(id);
                self.admit_blocked();
                self.pump_destage();
            }
            Kind::MdStripe => self.md_pass_done(id),
            Kind::MdBitmap => self.bitmap_write_done(id),
            Kind::MdSuper => self.super_write_done(id),
            Kind::Rebuild { stream } => {
                let len = u64::from(self.reqs[id as usize].io.len_bytes);
                self.free_req(id);
                self.rebuild_piece_done(stream, len);
            }
            Kind::Prefetch => {
                if self.ra_inflight == Some(id) {
                    self.ra_inflight = None;
                }
                let waiters = std::mem::take(&mut self.reqs[id as usize].waiters);
                for w in waiters {
                    self.complete_from_cache(w);
                }
                self.free_req(id);
            }
        }
    }

    fn finish_host(&mut self, id: u32) {
        let r = &self.reqs[id as usize];
        if r.done {
            return;
        }
        if let Kind::Host { closed } = r.kind {
            let latency = self.now - r.arrival_nanos;
            if self.measuring {
                self.hist.record(latency);
                if r.io.write {
                    self.writes_done += 1;
                } else {
                    self.reads_done += 1;
                    self.read_hist.record(latency);
                }
                self.bytes_done += u64::from(r.io.host_bytes);
            }
            if closed {
                self.closed_outstanding -= 1;
            }
            self.host_outstanding -= 1;
            if self.host_outstanding == 0 && !self.dirty.is_empty() {
                self.pump_destage();
            }
        }
        self.reqs[id as usize].done = true;
        self.free_req(id);
    }
}

/// Parity chunks a write of `[offset, offset + len)` updates on a flat RAID 5/6 node: one per
/// parity member and stripe row it touches.
fn parity_rows(node: &Node, offset_bytes: u64, len_bytes: u64) -> u32 {
    let parities: u64 = match node.level {
        Level::Raid5 => 1,
        Level::Raid6 => 2,
        _ => return 0,
    };
    let data = (node.members.len() as u64).saturating_sub(parities).max(1);
    let row_bytes = node.chunk_bytes.max(1) * data;
    if len_bytes == 0 {
        return 0;
    }
    let rows = (offset_bytes + len_bytes - 1) / row_bytes - offset_bytes / row_bytes + 1;
    (rows * parities).min(u64::from(u32::MAX)) as u32
}

fn shift_disks(node: &mut Node, by: u32) {
    for m in &mut node.members {
        match m {
            Member::Disk(d) => *d += by,
            Member::Node(n) => shift_disks(n, by),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::device::{DiskPreset, SsdTiming};
    use crate::event::{IoEvent, Op};

    fn ssd_engine() -> (Engine, f64) {
        let model = DiskPreset::SataSsd.model();
        let DeviceModel::Ssd(s) = &model else {
            panic!("ssd")
        };
        let service = SsdTiming::new(s).service_nanos(4096, false);
        let layout = Node::over_disks(Level::Raid0, 65536, 0, 1);
        (
            Engine::new(&[model], layout, ControllerModel::software(), None),
            service,
        )
    }

    fn read(offset_bytes: u64) -> HostIo {
        HostIo {
            offset_bytes,
            len_bytes: 4096,
            write: false,
            target: Target::Array,
            host_bytes: 4096,
        }
    }

    #[test]
    fn one_request_takes_exactly_its_service_time() {
        let (mut e, service) = ssd_engine();
        e.submit_at(1_000, read(0));
        let r = e.finish();
        assert_eq!(r.requests, 1);
        assert!(
            (r.latency.mean_nanos - service.ceil()).abs() <= 1.0,
            "{} vs {service}",
            r.latency.mean_nanos
        );
        assert_eq!(r.backend_requests, 1);
    }

    #[test]
    fn closed_loop_keeps_at_most_depth_outstanding_and_qd1_iops_is_one_over_latency() {
        let (mut e, service) = ssd_engine();
        for i in 0..1000 {
            e.submit_closed(1, read(i * 4096));
            assert!(e.outstanding() <= 1);
        }
        e.stop_measuring();
        let r = e.finish();
        let expected = 1e9 / service.ceil();
        assert!(
            (r.iops - expected).abs() / expected < 0.01,
            "{} vs {expected}",
            r.iops
        );
        let (mut e, _) = ssd_engine();
        for i in 0..1000 {
            e.submit_closed(4, read(i * 4096));
            assert!(e.outstanding() <= 4);
        }
    }

    #[test]
    fn write_back_cache_completes_writes_at_controller_latency() {
        let model = DiskPreset::Sata7k2.model();
        let layout = Node::over_disks(Level::Raid1, 0, 0, 2);
        let mut e = Engine::new(
            &[model.clone(), model],
            layout,
            ControllerModel::hardware(64 << 20),
            None,
        );
        for i in 0..100 {
            e.submit_closed(
                1,
                HostIo {
                    write: true,
                    ..read(i * 1_000_000_000)
                },
            );
        }
        let r = e.finish();
        // Exactly the controller's overhead (the mean is exact; percentiles are bucketed).
        assert_eq!(
            r.latency.mean_nanos,
            ControllerModel::hardware(0).overhead_nanos as f64
        );
    }

    #[test]
    fn software_raid5_member_io_is_mds_stripe_model() {
        use crate::array::md::{simulate_md, MdConfig, MdLevel};
        let model = DiskPreset::Nvme.model();
        let layout = Node::over_disks(Level::Raid5, 64 << 10, 0, 5);
        let mut e = Engine::new(
            &vec![model; 5],
            layout,
            ControllerModel::software_without_bitmap(),
            None,
        );
        // Small, partial-stripe, full-stripe and repeated writes, and reads, in one stream.
        let mut events = Vec::new();
        let mut x = 12345u64;
        for i in 0..3000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = [4096u32, 8192, 16384, 256 << 10][(x >> 60) as usize % 4];
            let offset = ((x >> 20) % 4096) * 4096;
            let write = i % 3 != 0;
            e.submit_closed(
                1,
                HostIo {
                    offset_bytes: offset,
                    len_bytes: len,
                    write,
                    target: Target::Array,
                    host_bytes: len,
                },
            );
            events.push(IoEvent {
                time_nanos: i,
                device: 0,
                offset_bytes: offset,
                len_bytes: len,
                op: if write { Op::Write } else { Op::Read },
                latency_nanos: None,
                pid: None,
            });
        }
        let r = e.finish();
        let md = simulate_md(&MdConfig::new(MdLevel::Raid5, 5, 64 << 10), events).unwrap();
        for (d, m) in r.disks.iter().zip(&md.members) {
            assert_eq!(
                (d.reads, d.read_bytes, d.writes, d.write_bytes),
                (m.read_bios, m.read_bytes, m.write_bios, m.write_bytes)
            );
        }
        assert!(md.rmw_stripes > 0 && md.rcw_stripes > 0 && md.full_stripes > 0);
        assert_eq!(
            r.md_stripe_heads,
            md.rmw_stripes + md.rcw_stripes + md.full_stripes
        );
        // Merged commands: never more than md's bios (one per 4 KiB page); on flash members
        // a stripe pass's writes are cut into one piece per lane at most, so here (NVMe, 49
        // lanes, at most 64 KiB per member and pass) they stay md's pages.
        let bios: u64 = md.members.iter().map(|m| m.read_bios + m.write_bios).sum();
        assert!(
            r.backend_requests <= bios,
            "{} vs {bios}",
            r.backend_requests
        );
    }
}
