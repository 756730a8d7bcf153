//! The exact LRU miss-ratio curve in one pass: every line access gets its stack distance from
//! [`StackDistance`], and the distance histogram gives the hit ratio of every LRU size at once
//! (Mattson et al., 1970). O(N log M) time, memory proportional to the footprint M in lines.
//!
//! Lines come from requests as in the simulator: a request touching any byte of a line touches
//! the whole line. Reads and writes access lines (a write miss allocates, as in write-through
//! and write-back caches); discards and flushes touch no line. Besides the per-line curve, the
//! per-request curve is exact too: a request hits in a cache of `c` lines exactly when the
//! largest stack distance among its lines is at most `c` (LRU's inclusion property).

//!
//! Speed: an access's costs are cache misses (its table entry, its old mark's block, its
//! histogram bucket), so line accesses are queued and run [`PENDING_LINES`] at a time: first
//! every queued key's table entry is loaded, then every old mark's block, then the accesses run,
//! then the histogram updates: each step's loads are independent and miss in parallel instead of
//! one after another. Every accessor runs the queue first, so results are the same as one access
//! at a time.

use std::cell::RefCell;

use crate::event::{IoEvent, Op};
use crate::hash::block_key;

use super::profile::{DenseHistogram, DistanceProfile};
use super::stack::StackDistance;

/// Line accesses queued before they run (the queue runs at the first request boundary at or
/// past this many; a longer request runs at once).
const PENDING_LINES: usize = 256;

/// Streaming exact LRU stack-distance collector.
#[derive(Debug)]
pub struct ExactLru {
    line_bytes: u64,
    line_accesses: u64,
    request_count: u64,
    /// Everything the queue changes when it runs (from `&self` accessors too).
    state: RefCell<State>,
}

#[derive(Debug)]
struct State {
    stack: StackDistance,
    lines: DenseHistogram,
    cold_lines: u64,
    requests: DenseHistogram,
    cold_requests: u64,
    /// Queued line keys, request after request.
    keys: Vec<u64>,
    /// Lines of each queued request.
    request_lines: Vec<u32>,
    /// The queued accesses' stack distances (0: a first access), as they run.
    distances: Vec<u64>,
}

impl State {
    /// Runs the queued accesses.
    fn run(&mut self) {
        let n = self.keys.len();
        if n == 0 {
            return;
        }
        // Independent loads back to back miss in parallel; the accesses then find their
        // entries, blocks and position entries in the CPU cache.
        for &k in &self.keys {
            self.stack.prefetch(k);
        }
        for &k in &self.keys {
            self.stack.prefetch_marks(k);
        }
        self.distances.clear();
        for &k in &self.keys {
            self.distances.push(self.stack.access(k).unwrap_or(0));
        }
        let mut at = 0;
        for &len in &self.request_lines {
            let mut max_distance = 0;
            let mut cold = false;
            for &d in &self.distances[at..at + len as usize] {
                if d == 0 {
                    self.cold_lines += 1;
                    cold = true;
                } else {
                    self.lines.add(d);
                    max_distance = max_distance.max(d);
                }
            }
            at += len as usize;
            if cold {
                self.cold_requests += 1;
            } else {
                self.requests.add(max_distance);
            }
        }
        self.keys.clear();
        self.request_lines.clear();
    }
}

impl ExactLru {
    pub fn new(line_bytes: u64) -> ExactLru {
        ExactLru {
            line_bytes: line_bytes.max(1),
            line_accesses: 0,
            request_count: 0,
            state: RefCell::new(State {
                stack: StackDistance::new(),
                lines: DenseHistogram::default(),
                cold_lines: 0,
                requests: DenseHistogram::default(),
                cold_requests: 0,
                keys: Vec::with_capacity(2 * PENDING_LINES),
                request_lines: Vec::with_capacity(PENDING_LINES),
                distances: Vec::with_capacity(2 * PENDING_LINES),
            }),
        }
    }

    #[inline]
    pub fn observe(&mut self, e: &IoEvent) {
        if !matches!(e.op, Op::Read | Op::Write) || e.len_bytes == 0 {
            return;
        }
        self.request_count += 1;
        let s = self.state.get_mut();
        let range = e.block_range(self.line_bytes);
        let n = range.end - range.start;
        self.line_accesses += n;
        if n > PENDING_LINES as u64 {
            // A long request runs at once, line by line (the queue holds whole requests only,
            // and stays small).
            s.run();
            let mut max_distance = 0u64;
            let mut cold = false;
            for line in range {
                match s.stack.access(block_key(e.device, line)) {
                    Some(d) => {
                        s.lines.add(d);
                        max_distance = max_distance.max(d);
                    }
                    None => {
                        s.cold_lines += 1;
                        cold = true;
                    }
                }
            }
            if cold {
                s.cold_requests += 1;
            } else {
                s.requests.add(max_distance);
            }
            return;
        }
        for line in range {
            let key = block_key(e.device, line);
            s.keys.push(key);
        }
        s.request_lines.push(n as u32);
        if s.keys.len() >= PENDING_LINES {
            s.run();
        }
    }

    /// The state with the queue run.
    fn ran(&self) -> std::cell::RefMut<'_, State> {
        let mut s = self.state.borrow_mut();
        s.run();
        s
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
        self.ran().stack.len() as u64
    }

    pub fn memory_bytes(&self) -> usize {
        self.ran().stack.memory_bytes()
    }

    /// Stack distances of line accesses.
    pub fn line_profile(&self) -> DistanceProfile {
        let s = self.ran();
        s.lines.profile(s.cold_lines as f64)
    }

    /// Largest stack distance per request (a request hits only if all its lines hit).
    pub fn request_profile(&self) -> DistanceProfile {
        let s = self.ran();
        s.requests.profile(s.cold_requests as f64)
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

    /// The queued runs equal one access at a time (the distances straight from a
    /// [`StackDistance`]), whatever the mix of short and long requests, and an accessor called
    /// mid-stream sees every event observed so far.
    #[test]
    fn queued_runs_equal_one_access_at_a_time() {
        let mut m = ExactLru::new(4096);
        let mut stack = StackDistance::new();
        let (mut lines, mut requests) = (DenseHistogram::default(), DenseHistogram::default());
        let (mut cold_lines, mut cold_requests) = (0u64, 0u64);
        for i in 0..40_000u64 {
            let r = crate::hash::mix64(i);
            let n = if r % 97 == 0 {
                129 + r % 300
            } else {
                1 + (r >> 8) % 8
            };
            let first = (r >> 20) % 3000;
            let mut e = ev(first * 4096, (n * 4096) as u32);
            e.device = (r % 5 == 0) as u32;
            m.observe(&e);
            let (mut max, mut cold) = (0, false);
            for line in first..first + n {
                match stack.access(block_key(e.device, line)) {
                    Some(d) => {
                        lines.add(d);
                        max = max.max(d);
                    }
                    None => {
                        cold_lines += 1;
                        cold = true;
                    }
                }
            }
            if cold {
                cold_requests += 1;
            } else {
                requests.add(max);
            }
            if i % 9_999 == 0 || i == 39_999 {
                assert_eq!(m.footprint_lines(), stack.len() as u64, "at {i}");
                assert_eq!(m.line_profile(), lines.profile(cold_lines as f64), "at {i}");
                assert_eq!(
                    m.request_profile(),
                    requests.profile(cold_requests as f64),
                    "at {i}"
                );
            }
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
