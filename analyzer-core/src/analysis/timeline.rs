//! Load over time: IOPS, MB/s, mean latency and queue depth in a fixed number of time bins.
//!
//! The bins start 1 ms wide; when an event falls past the last bin, neighbouring bins are merged
//! pairwise and the width doubles, as often as needed. Memory is the fixed bin count for any
//! trace length, and every bin covers the same span.
//!
//! Queue depth needs both issue and completion: from the issue time and the latency each request
//! is in flight over `[issue, issue + latency)`. The mean depth of a bin is the in-flight time
//! falling in it divided by its width (Little's law); the maximum is the depth each arrival sees,
//! from a heap of pending completions (capped at [`MAX_PENDING`] requests).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, Op};

const INITIAL_WIDTH_NANOS: u64 = 1_000_000;

/// Latencies above this are taken as broken data and left out of the queue depth.
pub const MAX_PLAUSIBLE_LATENCY_NANOS: u64 = 60_000_000_000;

/// Pending completions tracked for the maximum queue depth.
pub const MAX_PENDING: usize = 1 << 16;

#[derive(Clone, Copy, Debug, Default)]
struct Bin {
    reads: u64,
    writes: u64,
    other: u64,
    read_bytes: u64,
    write_bytes: u64,
    latency_sum_nanos: u128,
    latency_count: u64,
    in_flight_nanos: u128,
    max_depth: u32,
}

impl Bin {
    fn merge(&mut self, o: &Bin) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.other += o.other;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.latency_sum_nanos += o.latency_sum_nanos;
        self.latency_count += o.latency_count;
        self.in_flight_nanos += o.in_flight_nanos;
        self.max_depth = self.max_depth.max(o.max_depth);
    }
}

/// One time bin of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimeBin {
    /// Start of the bin, relative to the first event.
    pub start_nanos: u64,
    pub reads: u64,
    pub writes: u64,
    /// Discards and flushes.
    pub other: u64,
    pub iops: f64,
    pub read_mib_per_sec: f64,
    pub write_mib_per_sec: f64,
    pub mean_latency_nanos: Option<f64>,
    pub mean_queue_depth: Option<f64>,
    pub max_queue_depth: Option<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelineReport {
    /// Time of the first event (the timeline's zero), in the trace's clock.
    pub origin_nanos: u64,
    pub bin_nanos: u64,
    pub bins: Vec<TimeBin>,
    /// Whether queue depth could be computed (issue and completion both present).
    pub has_queue_depth: bool,
    /// Requests left out of the queue depth for a latency above a minute.
    pub implausible_latencies: u64,
    /// Whether more than [`MAX_PENDING`] requests were ever in flight at once (the maximum
    /// depth is then a lower bound).
    pub pending_capped: bool,
}

/// Streaming timeline.
#[derive(Debug)]
pub struct Timeline {
    n_bins: usize,
    origin: Option<u64>,
    width_nanos: u64,
    /// Doublings so far: `width_nanos` is `INITIAL_WIDTH_NANOS << width_doublings` (a width
    /// doubles only while some time is at least twice it, so it never saturates).
    width_doublings: u32,
    bins: Vec<Bin>,
    last_bin: usize,
    pending: BinaryHeap<Reverse<u64>>,
    with_latency: u64,
    implausible: u64,
    pending_capped: bool,
}

impl Timeline {
    pub fn new(n_bins: usize) -> Timeline {
        let n_bins = n_bins.clamp(2, 1 << 16) & !1;
        Timeline {
            n_bins,
            origin: None,
            width_nanos: INITIAL_WIDTH_NANOS,
            width_doublings: 0,
            bins: vec![Bin::default(); n_bins],
            last_bin: 0,
            pending: BinaryHeap::new(),
            with_latency: 0,
            implausible: 0,
            pending_capped: false,
        }
    }

    /// Bin index of `t`, doubling the width until it fits.
    fn bin_of(&mut self, t: u64) -> usize {
        let origin = *self.origin.get_or_insert(t);
        let rel = t.saturating_sub(origin);
        while self.bins_in(rel) >= self.n_bins as u64 {
            self.double();
        }
        self.bins_in(rel) as usize
    }

    /// `nanos / width_nanos`, as a shift and a division by a constant (a multiplication)
    /// rather than a division by a variable, several times per request.
    #[inline]
    fn bins_in(&self, nanos: u64) -> u64 {
        // Exact: floor(x / (c·2^k)) = floor(floor(x / 2^k) / c).
        (nanos >> self.width_doublings.min(63)) / INITIAL_WIDTH_NANOS
    }

    fn double(&mut self) {
        for i in 0..self.n_bins / 2 {
            let mut b = self.bins[2 * i];
            b.merge(&self.bins[2 * i + 1]);
            self.bins[i] = b;
        }
        for b in &mut self.bins[self.n_bins / 2..] {
            *b = Bin::default();
        }
        self.last_bin /= 2;
        self.width_nanos = self.width_nanos.saturating_mul(2);
        self.width_doublings += 1;
    }

    pub fn observe(&mut self, e: &IoEvent) {
        let t = e.time_nanos;
        self.origin.get_or_insert(t);
        let latency = e.latency_nanos.filter(|&l| {
            let ok = l <= MAX_PLAUSIBLE_LATENCY_NANOS;
            if !ok {
                self.implausible += 1;
            }
            ok
        });
        // Make room for the completion first so both indices use the same width.
        if let Some(l) = latency {
            self.bin_of(t.saturating_add(l));
        }
        let i = self.bin_of(t);
        self.last_bin = self.last_bin.max(i);
        let b = &mut self.bins[i];
        match e.op {
            Op::Read => {
                b.reads += 1;
                b.read_bytes += u64::from(e.len_bytes);
            }
            Op::Write => {
                b.writes += 1;
                b.write_bytes += u64::from(e.len_bytes);
            }
            Op::Discard | Op::Flush => b.other += 1,
        }
        let Some(l) = latency else { return };
        self.with_latency += 1;
        b.latency_sum_nanos += u128::from(l);
        b.latency_count += 1;
        // Depth seen by this arrival.
        while self.pending.peek().is_some_and(|&Reverse(c)| c <= t) {
            self.pending.pop();
        }
        if self.pending.len() >= MAX_PENDING {
            self.pending.pop();
            self.pending_capped = true;
        }
        let end = t.saturating_add(l);
        self.pending.push(Reverse(end));
        let depth = self.pending.len() as u32;
        b.max_depth = b.max_depth.max(depth);
        // Spread the in-flight time over the bins it covers.
        let origin = self.origin.unwrap_or(t);
        let (mut from, to) = (t.saturating_sub(origin), end.saturating_sub(origin));
        while from < to {
            let j = self.bins_in(from) as usize;
            let bin_end = (j as u64 + 1) * self.width_nanos;
            let upto = to.min(bin_end);
            self.bins[j.min(self.n_bins - 1)].in_flight_nanos += u128::from(upto - from);
            self.last_bin = self.last_bin.max(j.min(self.n_bins - 1));
            from = upto;
        }
    }

    /// The report with bins no finer than the trace's clock (`clock_resolution_nanos`; `None`,
    /// a format without timestamps, gives no bins at all): bins narrower than one tick would
    /// show the clock's rounding as bursts (a 1 s clock put every second's requests in one 1 ms
    /// bin, a thousand times the real rate).
    pub fn finish_at(&self, clock_resolution_nanos: Option<u64>) -> TimelineReport {
        let Some(resolution) = clock_resolution_nanos else {
            return TimelineReport {
                bin_nanos: 0,
                bins: Vec::new(),
                ..self.finish()
            };
        };
        if self.width_nanos >= resolution {
            return self.finish();
        }
        let mut coarse = self.clone_bins();
        while coarse.width_nanos < resolution {
            coarse.double();
        }
        coarse.finish()
    }

    fn clone_bins(&self) -> Timeline {
        Timeline {
            n_bins: self.n_bins,
            origin: self.origin,
            width_nanos: self.width_nanos,
            width_doublings: self.width_doublings,
            bins: self.bins.clone(),
            last_bin: self.last_bin,
            pending: BinaryHeap::new(),
            with_latency: self.with_latency,
            implausible: self.implausible,
            pending_capped: self.pending_capped,
        }
    }

    pub fn finish(&self) -> TimelineReport {
        let has_qd = self.with_latency > 0;
        let w = self.width_nanos as f64;
        let secs = w / 1e9;
        let used = if self.origin.is_some() {
            self.last_bin + 1
        } else {
            0
        };
        let bins = self.bins[..used]
            .iter()
            .enumerate()
            .map(|(i, b)| TimeBin {
                start_nanos: i as u64 * self.width_nanos,
                reads: b.reads,
                writes: b.writes,
                other: b.other,
                iops: (b.reads + b.writes + b.other) as f64 / secs,
                read_mib_per_sec: b.read_bytes as f64 / 1048576.0 / secs,
                write_mib_per_sec: b.write_bytes as f64 / 1048576.0 / secs,
                mean_latency_nanos: (b.latency_count > 0)
                    .then(|| b.latency_sum_nanos as f64 / b.latency_count as f64),
                mean_queue_depth: has_qd.then(|| b.in_flight_nanos as f64 / w),
                max_queue_depth: has_qd.then_some(b.max_depth),
            })
            .collect();
        TimelineReport {
            origin_nanos: self.origin.unwrap_or(0),
            bin_nanos: self.width_nanos,
            bins,
            has_queue_depth: has_qd,
            implausible_latencies: self.implausible,
            pending_capped: self.pending_capped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, lat: Option<u64>) -> IoEvent {
        IoEvent {
            time_nanos: t,
            device: 0,
            offset_bytes: 0,
            len_bytes: 4096,
            op: Op::Read,
            latency_nanos: lat,
            pid: None,
        }
    }

    #[test]
    fn rebinning_keeps_totals_and_queue_depth() {
        let mut tl = Timeline::new(8);
        // Two overlapping requests of 1 ms each, then one 100 ms later.
        tl.observe(&ev(0, Some(1_000_000)));
        tl.observe(&ev(500_000, Some(1_000_000)));
        tl.observe(&ev(100_000_000, Some(1_000_000)));
        let r = tl.finish();
        assert_eq!(r.bin_nanos, 16_000_000);
        assert_eq!(r.bins.iter().map(|b| b.reads).sum::<u64>(), 3);
        assert_eq!(r.bins[0].max_queue_depth, Some(2));
        // 2 ms in flight over a 16 ms bin.
        assert!(
            (r.bins[0].mean_queue_depth.unwrap_or(0.0) - 0.125).abs() < 1e-9,
            "{r:?}"
        );
        assert_eq!(r.bins.len(), 7);
        let total_in_flight: f64 = r
            .bins
            .iter()
            .filter_map(|b| b.mean_queue_depth)
            .sum::<f64>()
            * 16e6;
        assert!((total_in_flight - 3e6).abs() < 1.0);
    }

    #[test]
    fn bins_are_never_finer_than_the_clock() {
        // Regression (issue 14.2): a one-second clock gave a 1 ms bin holding a whole second's
        // requests, printed as a peak a thousand times the real rate.
        let mut tl = Timeline::new(256);
        for s in 0..3u64 {
            for _ in 0..50 {
                tl.observe(&ev(s * 1_000_000_000, None));
            }
        }
        let r = tl.finish_at(Some(1_000_000_000));
        assert!(r.bin_nanos >= 1_000_000_000, "{}", r.bin_nanos);
        assert_eq!(r.bins.iter().map(|b| b.reads).sum::<u64>(), 150);
        let peak = r.bins.iter().map(|b| b.iops).fold(0.0, f64::max);
        // 50 requests a second: a bin of just over a second holds at most two seconds' worth
        // (the 1 ms bins said 50,000 IOPS).
        assert!(peak < 100.0, "{peak}");
        // Finer clocks keep the finer bins; no clock gives no bins.
        assert_eq!(tl.finish_at(Some(1)).bin_nanos, tl.finish().bin_nanos);
        assert!(tl.finish_at(None).bins.is_empty());
    }

    #[test]
    fn no_latency_no_queue_depth() {
        let mut tl = Timeline::new(256);
        for t in 0..1000 {
            tl.observe(&ev(t * 1_000_000_000, None));
        }
        let r = tl.finish();
        assert!(!r.has_queue_depth);
        assert!(r.bins.len() <= 256);
        assert_eq!(r.bins.iter().map(|b| b.reads).sum::<u64>(), 1000);
    }
}
