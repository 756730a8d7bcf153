//! The exact LRU miss-ratio curve in one pass: every line access gets its stack distance from
//! [`StackDistance`], and the distance histogram gives the hit ratio of every LRU size at once
//! (Mattson et al., 1970). O(N log M) time, memory proportional to the footprint M in lines.
//!
//! Lines come from requests as in the simulator: a request touching any byte of a line touches
//! the whole line. Reads and writes access lines (a write miss allocates, as in write-through
//! and write-back caches); discards and flushes touch no line. Besides the per-line curve, the
//! per-request curve is exact too: a request hits in a cache of `c` lines exactly when the
//! largest stack distance among its lines is at most `c` (LRU's inclusion property).

use crate::event::{IoEvent, Op};
use crate::hash::block_key;

use super::profile::{DenseHistogram, DistanceProfile};
use super::stack::StackDistance;

/// Streaming exact LRU stack-distance collector.
#[derive(Debug)]
pub struct ExactLru {
    line_bytes: u64,
    stack: StackDistance,
    lines: DenseHistogram,
    cold_lines: u64,
    requests: DenseHistogram,
    cold_requests: u64,
    line_accesses: u64,
    request_count: u64,
}

impl ExactLru {
    pub fn new(line_bytes: u64) -> ExactLru {
        ExactLru {
            line_bytes: line_bytes.max(1),
            stack: StackDistance::new(),
            lines: DenseHistogram::default(),
            cold_lines: 0,
            requests: DenseHistogram::default(),
            cold_requests: 0,
            line_accesses: 0,
            request_count: 0,
        }
    }

    #[inline]
    pub fn observe(&mut self, e: &IoEvent) {
        if !matches!(e.op, Op::Read | Op::Write) || e.len_bytes == 0 {
            return;
        }
        self.request_count += 1;
        let mut max_distance = 0u64;
        let mut cold = false;
        for line in e.block_range(self.line_bytes) {
            self.line_accesses += 1;
            match self.stack.access(block_key(e.device, line)) {
                Some(d) => {
                    self.lines.add(d);
                    max_distance = max_distance.max(d);
                }
                None => {
                    self.cold_lines += 1;
                    cold = true;
                }
            }
        }
        if cold {
            self.cold_requests += 1;
        } else {
            self.requests.add(max_distance);
        }
    }

    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    /// Requests that accessed lines (reads and writes of non-zero length).
    pub fn requests(&self) -> u64 {
        self.request_count
    }

    pub fn line_accesses(&self) -> u64 {
        self.line_accesses
    }

    /// Distinct lines seen.
    pub fn footprint_lines(&self) -> u64 {
        self.stack.len() as u64
    }

    pub fn memory_bytes(&self) -> usize {
        self.stack.memory_bytes()
    }

    /// Stack distances of line accesses.
    pub fn line_profile(&self) -> DistanceProfile {
        self.lines.profile(self.cold_lines as f64)
    }

    /// Largest stack distance per request (a request hits only if all its lines hit).
    pub fn request_profile(&self) -> DistanceProfile {
        self.requests.profile(self.cold_requests as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(offset_bytes: u64, len_bytes: u32) -> IoEvent {
        IoEvent {
            time_nanos: 0,
            device: 0,
            offset_bytes,
            len_bytes,
            op: Op::Read,
            latency_nanos: None,
            pid: None,
        }
    }

    #[test]
    fn request_hits_need_every_line() {
        let mut m = ExactLru::new(4096);
        m.observe(&ev(0, 8192)); // lines 0, 1 cold
        m.observe(&ev(8192, 4096)); // line 2 cold
        m.observe(&ev(0, 8192)); // line 0 at distance 3, line 1 at distance 3
        let lines = m.line_profile();
        assert_eq!(lines.total(), 5.0);
        assert_eq!(lines.hits_at(2), 0.0);
        assert_eq!(lines.hits_at(3), 2.0);
        let reqs = m.request_profile();
        assert_eq!(reqs.total(), 3.0);
        assert_eq!(reqs.hits_at(3), 1.0);
        assert_eq!(m.footprint_lines(), 3);
    }
}
