//! The controller's state between requests: its write-back cache (absorbing writes, blocking
//! them when full, destaging in elevator order) and its sequential read-ahead.

use std::cmp::Reverse;

use super::{Engine, HostIo, Kind, Target, EV_REQ_DONE};
use crate::array::layout::MAX_COMMAND_BYTES;

impl Engine {
    pub(super) fn absorb_write(&mut self, id: u32) {
        let io = self.reqs[id as usize].io;
        self.dirty
            .insert(io.offset_bytes, io.offset_bytes + u64::from(io.len_bytes));
        self.complete_from_cache(id);
    }

    /// Read-ahead: returns true when the read is served (now or when a prefetch lands).
    pub(super) fn read_ahead(&mut self, id: u32) -> bool {
        let io = self.reqs[id as usize].io;
        let start = io.offset_bytes;
        let end = start + u64::from(io.len_bytes);
        let sequential = start == self.last_read_end_bytes
            || (start >= self.ra_start_bytes && start < self.ra_end_bytes);
        self.last_read_end_bytes = end;
        if !sequential {
            return false;
        }
        let window = self.controller.read_ahead_bytes;
        let covered = start >= self.ra_start_bytes && end <= self.ra_end_bytes;
        // Keep one window ahead of the reader.
        if self.ra_inflight.is_none() && end + window / 2 > self.ra_end_bytes {
            let from = self.ra_end_bytes.max(end);
            let len = window.min(MAX_COMMAND_BYTES);
            let pf = self.alloc_req(
                Kind::Prefetch,
                HostIo {
                    offset_bytes: from,
                    len_bytes: len as u32,
                    write: false,
                    target: Target::Array,
                    host_bytes: 0,
                },
            );
            if !covered {
                self.ra_start_bytes = from;
            }
            self.ra_end_bytes = from + len;
            self.ra_inflight = Some(pf);
            self.admit(pf);
        }
        if !covered {
            return false;
        }
        match self.ra_inflight {
            Some(pf) if start >= self.reqs[pf as usize].io.offset_bytes => {
                self.reqs[pf as usize].waiters.push(id);
            }
            _ => self.complete_from_cache(id),
        }
        true
    }

    /// A host request the controller serves from its memory (a write absorbed by the write-back
    /// cache, a read of dirty or prefetched data) still passes the controller's processor: the
    /// IOPS ceiling (`max_iops`, the RAID-on-Chip's request rate) serves it before it
    /// completes. The MB/s ceilings stay on the requests that reach the disks, since they model
    /// the drive-side links.
    pub(super) fn complete_from_cache(&mut self, id: u32) {
        let Some(max_iops) = self.controller.max_iops else {
            self.complete_after_overhead(id);
            return;
        };
        let service = 1e9 / max_iops.max(1e-9);
        let start = (self.now as f64).max(self.ctrl_free_at_nanos);
        self.ctrl_free_at_nanos = start + service;
        self.ctrl_busy_nanos += service;
        let t = start.ceil() as u64 + self.controller.overhead_nanos;
        if t <= self.now {
            self.finish_host(id);
        } else {
            self.heap.push(Reverse((t, EV_REQ_DONE, id)));
        }
    }

    pub(super) fn complete_after_overhead(&mut self, id: u32) {
        if self.controller.overhead_nanos == 0 {
            // No controller time to add: complete now and save an event.
            self.finish_host(id);
            return;
        }
        let t = self.now + self.controller.overhead_nanos;
        self.heap.push(Reverse((t, EV_REQ_DONE, id)));
    }

    pub(super) fn admit_blocked(&mut self) {
        while let Some(&id) = self.blocked_writes.front() {
            let len = u64::from(self.reqs[id as usize].io.len_bytes);
            if self.dirty.bytes() + self.dirty_inflight_bytes + len
                > self.controller.write_back_bytes
            {
                // A write larger than the whole cache goes straight through.
                if len > self.controller.write_back_bytes
                    && self.destage_inflight == 0
                    && self.dirty.is_empty()
                {
                    self.blocked_writes.pop_front();
                    self.admit(id);
                    continue;
                }
                return;
            }
            self.blocked_writes.pop_front();
            self.absorb_write(id);
        }
    }

    /// Keeps destage commands in flight while dirty data exists (elevator order, cut at
    /// full stripes so sequential writes become full-stripe writes).
    pub(super) fn pump_destage(&mut self) {
        let limit =
            (self.controller.destage_per_disk.max(1) as usize * self.array_disks.max(1)) as u32;
        let cache = self.controller.write_back_bytes as f64;
        let dirty = self.dirty.bytes() as f64;
        if dirty >= cache * self.controller.destage_high_fraction
            || !self.blocked_writes.is_empty()
            || self.host_outstanding == 0
        {
            self.destaging = true;
        } else if dirty < cache * self.controller.destage_low_fraction {
            self.destaging = false;
        }
        while self.destaging && self.destage_inflight < limit {
            let Some((s, e)) = self
                .dirty
                .take_next(self.destage_cursor_bytes, self.stripe_bytes)
            else {
                break;
            };
            self.destage_cursor_bytes = e;
            self.dirty_inflight_bytes += e - s;
            self.destage_inflight += 1;
            let io = HostIo {
                offset_bytes: s,
                len_bytes: (e - s) as u32,
                write: true,
                target: Target::Array,
                host_bytes: 0,
            };
            let id = self.alloc_req(Kind::Destage, io);
            self.admit(id);
        }
        if self.blocked_writes.front().is_some() && self.destage_inflight == 0 {
            self.admit_blocked();
        }
    }
}
