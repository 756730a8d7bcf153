//! The member disks: each device's queue, its service-time model (hard-disk mechanics with the
//! drive's look-ahead buffer, or SSD lanes) and the dispatcher that starts commands on it.

use std::cmp::Reverse;
use std::collections::VecDeque;

use super::{Engine, EV_DISK_DONE};
use crate::array::device::{DeviceModel, DiskScheduling, HddGeometry, Placement, SsdTiming};
use crate::array::layout::{DiskOp, DiskView, ReadBalance};

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
    /// Look-ahead: the drive read up to `ra_base_bytes` at `ra_time_nanos` and keeps reading
    /// from there at `ra_rate_bytes_per_nano` (the media rate at that zone).
    pub(super) ra_valid: bool,
    pub(super) ra_start_bytes: u64,
    pub(super) ra_base_bytes: u64,
    pub(super) ra_time_nanos: f64,
    pub(super) ra_rate_bytes_per_nano: f64,
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

/// The disks as the layout sees them when it places a request, and how its mirrors balance
/// reads.
pub(super) struct View<'a>(pub(super) &'a [Disk], pub(super) ReadBalance);

impl DiskView for View<'_> {
    fn read_balance(&self) -> ReadBalance {
        self.1
    }
    fn rotational(&self, disk: u32) -> bool {
        self.0
            .get(disk as usize)
            .is_none_or(|d| matches!(d.timing, Timing::Hdd(..)))
    }
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
            let mut media_done_nanos = 0.0;
            let (pick, service_nanos) = match &d.timing {
                Timing::Ssd(t) => {
                    let op = &self.in_disk[d.queue[0] as usize].op;
                    (0usize, t.service_nanos(op.len_bytes, op.write))
                }
                Timing::Hdd(g, depth, sched) => {
                    let window = match sched {
                        DiskScheduling::Fifo => 1,
                        DiskScheduling::Satf => (*depth as usize).min(d.queue.len()),
                    };
                    let mut best = (
                        0usize,
                        HddCost {
                            positioning_nanos: f64::INFINITY,
                            service_nanos: 0.0,
                            media_done_after_nanos: 0.0,
                        },
                    );
                    for (i, &slot) in d.queue.iter().take(window).enumerate() {
                        let rec = &self.in_disk[slot as usize];
                        if let Some(cost) =
                            hdd_cost(d, g, now, &rec.op, &rec.place, best.1.positioning_nanos)
                        {
                            if cost.positioning_nanos < best.1.positioning_nanos {
                                best = (i, cost);
                            }
                        }
                    }
                    media_done_nanos = now as f64 + best.1.media_done_after_nanos;
                    (best.0, best.1.service_nanos)
                }
            };
            let d = &mut self.disks[disk];
            let Some(slot) = d.queue.remove(pick) else {
                return;
            };
            d.in_service += 1;
            let done_nanos = now as f64 + service_nanos;
            if self.measuring {
                d.busy_nanos += service_nanos;
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
                        && op.offset_bytes >= d.ra_start_bytes
                        && op.offset_bytes <= d.ra_base_bytes + g.lookahead_bytes;
                    if !continuing {
                        d.ra_start_bytes = op.offset_bytes;
                    }
                    d.ra_valid = true;
                    d.ra_base_bytes = op.offset_bytes + u64::from(op.len_bytes);
                    d.ra_time_nanos = media_done_nanos;
                    d.ra_rate_bytes_per_nano = g.rate_at(&rec.place);
                }
            }
            d.head_bytes = op.offset_bytes + u64::from(op.len_bytes);
            self.heap
                .push(Reverse((done_nanos.ceil() as u64, EV_DISK_DONE, slot)));
        }
    }
}

/// What a hard-disk command started at `now` costs, in nanoseconds from `now`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct HddCost {
    /// Until the head is on track and the data under it (the SATF key).
    pub(super) positioning_nanos: f64,
    /// Until the command completes at the interface (positioning + media or bus transfer).
    pub(super) service_nanos: f64,
    /// Until the media has read the command's last byte (the look-ahead's start point).
    pub(super) media_done_after_nanos: f64,
}

/// Cost of a hard-disk command started at `now` (an [`HddCost`]), or
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
) -> Option<HddCost> {
    if !op.write && d.ra_valid && d.in_service == 0 {
        let end = op.offset_bytes + u64::from(op.len_bytes);
        if op.offset_bytes >= d.ra_start_bytes && end <= d.ra_base_bytes + g.lookahead_bytes {
            let ready = if end <= d.ra_base_bytes {
                d.ra_time_nanos
            } else {
                d.ra_time_nanos + (end - d.ra_base_bytes) as f64 / d.ra_rate_bytes_per_nano
            };
            let start = now as f64 + g.overhead_nanos();
            let wait = (ready - start).max(0.0);
            let positioning = g.overhead_nanos() + wait;
            return Some(HddCost {
                positioning_nanos: positioning,
                service_nanos: positioning + place.bus_nanos,
                media_done_after_nanos: (ready - now as f64).max(0.0),
            });
        }
    }
    let positioning = g.positioning_below(now, d.head_radial, place, op.write, bound)?;
    Some(HddCost {
        positioning_nanos: positioning,
        service_nanos: positioning + place.media_nanos,
        media_done_after_nanos: positioning + place.media_nanos,
    })
}
