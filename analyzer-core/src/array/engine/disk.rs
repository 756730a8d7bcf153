//! The member disks: each device's queue, its service-time model (hard-disk mechanics with the
//! drive's look-ahead buffer, or SSD lanes) and the dispatcher that starts commands on it.

use std::cmp::Reverse;
use std::collections::VecDeque;

use super::{Engine, EV_DISK_DONE};
use crate::array::device::{DeviceModel, DiskScheduling, HddGeometry, Placement, SsdTiming};
use crate::array::layout::{DiskOp, DiskView};

/// A member command queued or in service at a disk, with the fields the scheduler reads
/// copied in (no indirection through the request in the SATF loop).
pub(super) struct InDisk {
    pub(super) req: u32,
    pub(super) op: DiskOp,
    pub(super) place: Placement,
}

pub(super) enum Timing {
    Hdd(HddGeometry, u32, DiskScheduling),
    Ssd(SsdTiming),
}

pub(super) struct Disk {
    pub(super) timing: Timing,
    pub(super) parallelism: u32,
    pub(super) queue: VecDeque<u32>,
    pub(super) in_service: u32,
    pub(super) head_radial: f64,
    pub(super) head_bytes: u64,
    /// Look-ahead: the drive read up to `ra_base` at `ra_time` and keeps reading from there.
    pub(super) ra_valid: bool,
    pub(super) ra_start: u64,
    pub(super) ra_base: u64,
    pub(super) ra_time: f64,
    pub(super) ra_rate: f64,
    pub(super) busy_nanos: f64,
    pub(super) ops: u64,
    /// Member I/O as the RAID layer issued it (md: one bio per stripe page).
    pub(super) reads: u64,
    pub(super) writes: u64,
    pub(super) read_bytes: u64,
    pub(super) write_bytes: u64,
}

impl Disk {
    /// Counts one member I/O the RAID layer issued.
    pub(super) fn count(&mut self, write: bool, len_bytes: u32) {
        if write {
            self.writes += 1;
            self.write_bytes += u64::from(len_bytes);
        } else {
            self.reads += 1;
            self.read_bytes += u64::from(len_bytes);
        }
    }
}

pub(super) struct View<'a>(pub(super) &'a [Disk]);

impl DiskView for View<'_> {
    fn outstanding(&self, disk: u32) -> u32 {
        self.0
            .get(disk as usize)
            .map(|d| d.queue.len() as u32 + d.in_service)
            .unwrap_or(0)
    }
    fn head_bytes(&self, disk: u32) -> u64 {
        self.0.get(disk as usize).map(|d| d.head_bytes).unwrap_or(0)
    }
}

pub(super) fn timing_of(m: &DeviceModel) -> (Timing, u32) {
    match m {
        DeviceModel::Hdd(h) => (
            Timing::Hdd(HddGeometry::new(h), h.queue_depth.max(1), h.scheduling),
            1,
        ),
        DeviceModel::Ssd(s) => {
            let t = SsdTiming::new(s);
            let lanes = t.lanes;
            (Timing::Ssd(t), lanes)
        }
    }
}

impl Engine {
    /// Starts commands on `disk` while it has free capacity.
    pub(super) fn dispatch(&mut self, disk: usize) {
        loop {
            let d = &self.disks[disk];
            if d.in_service >= d.parallelism || d.queue.is_empty() {
                return;
            }
            let now = self.now;
            let mut media_done = 0.0;
            let (pick, service) = match &d.timing {
                Timing::Ssd(t) => {
                    let op = &self.in_disk[d.queue[0] as usize].op;
                    (0usize, t.service_nanos(op.len_bytes, op.write))
                }
                Timing::Hdd(g, depth, sched) => {
                    let window = match sched {
                        DiskScheduling::Fifo => 1,
                        DiskScheduling::Satf => (*depth as usize).min(d.queue.len()),
                    };
                    let mut best = (0usize, f64::INFINITY, 0.0, 0.0);
                    for (i, &slot) in d.queue.iter().take(window).enumerate() {
                        let rec = &self.in_disk[slot as usize];
                        if let Some((positioning, service, media_done)) =
                            hdd_cost(d, g, now, &rec.op, &rec.place, best.1)
                        {
                            if positioning < best.1 {
                                best = (i, positioning, service, media_done);
                            }
                        }
                    }
                    media_done = now as f64 + best.3;
                    (best.0, best.2)
                }
            };
            let d = &mut self.disks[disk];
            let Some(slot) = d.queue.remove(pick) else {
                return;
            };
            d.in_service += 1;
            let done = now as f64 + service;
            if self.measuring {
                d.busy_nanos += service;
                d.ops += 1;
            }
            let rec = &self.in_disk[slot as usize];
            let op = rec.op;
            if let Timing::Hdd(g, _, _) = &d.timing {
                d.head_radial = rec.place.radial;
                if op.write {
                    d.ra_valid = false;
                } else {
                    let continuing = d.ra_valid
                        && op.offset_bytes >= d.ra_start
                        && op.offset_bytes <= d.ra_base + g.lookahead_bytes;
                    if !continuing {
                        d.ra_start = op.offset_bytes;
                    }
                    d.ra_valid = true;
                    d.ra_base = op.offset_bytes + u64::from(op.len_bytes);
                    d.ra_time = media_done;
                    d.ra_rate = g.rate_at(&rec.place);
                }
            }
            d.head_bytes = op.offset_bytes + u64::from(op.len_bytes);
            self.heap
                .push(Reverse((done.ceil() as u64, EV_DISK_DONE, slot)));
        }
    }
}

/// Cost of a hard-disk command started at `now`: (positioning, service, media-done offset), or
/// `None` when its positioning cannot beat `bound`. A read that continues the drive's last read
/// is served from the look-ahead buffer: the head kept reading while the previous data crossed
/// the interface, so only the part not yet read waits for the media.
#[inline]
pub(super) fn hdd_cost(
    d: &Disk,
    g: &HddGeometry,
    now: u64,
    op: &DiskOp,
    place: &Placement,
    bound: f64,
) -> Option<(f64, f64, f64)> {
    if !op.write && d.ra_valid && d.in_service == 0 {
        let end = op.offset_bytes + u64::from(op.len_bytes);
        if op.offset_bytes >= d.ra_start && end <= d.ra_base + g.lookahead_bytes {
            let ready = if end <= d.ra_base {
                d.ra_time
            } else {
                d.ra_time + (end - d.ra_base) as f64 / d.ra_rate
            };
            let start = now as f64 + g.overhead_nanos();
            let wait = (ready - start).max(0.0);
            let positioning = g.overhead_nanos() + wait;
            return Some((
                positioning,
                positioning + place.bus_nanos,
                (ready - now as f64).max(0.0),
            ));
        }
    }
    let positioning = g.positioning_below(now, d.head_radial, place, op.write, bound)?;
    Some((
        positioning,
        positioning + place.media_nanos,
        positioning + place.media_nanos,
    ))
}
