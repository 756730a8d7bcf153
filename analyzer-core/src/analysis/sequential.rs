//! Sequentiality per stream: many concurrent streams per device, and the near-sequential and
//! strided patterns a single "next offset equals last end" test misses.
//!
//! Each device keeps up to [`STREAMS_PER_DEVICE`] streams (least recently used replaced). A read
//! or write is classified against them, first match wins:
//! * sequential: it starts exactly where a stream's last request ended;
//! * near-sequential: it starts after a stream's end by at most [`NEAR_GAP_BYTES`] (128 KiB). Such
//!   small forward skips (a file system skipping a metadata block, a database reading most pages
//!   of an extent) cost a disk no seek beyond the track buffer and are served by read-ahead;
//! * strided: it repeats a stream's last stride exactly (offset − previous offset), with a
//!   stride of at most [`MAX_STRIDE_BYTES`] in either direction: a pattern stride prefetchers
//!   (array controllers, SSD caches) detect, though plain read-ahead does not; backward
//!   sequential scans land here;
//! * random otherwise: it starts a new stream, whose stride is the distance from the nearest
//!   stream's last request (if within the maximum stride) so that a strided pattern is
//!   recognised from its third request on.
//!
//! A run is a stream's life from its first to its last request; runs of at least two requests
//! are counted when the stream is replaced or at the end.

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, Op};

pub const STREAMS_PER_DEVICE: usize = 64;
pub const NEAR_GAP_BYTES: u64 = 128 << 10;
pub const MAX_STRIDE_BYTES: u64 = 16 << 20;
const MAX_DEVICES: usize = 4096;

#[derive(Clone, Copy, Debug, Default)]
struct Stream {
    last_offset: u64,
    end: u64,
    stride: i64,
    requests: u64,
    bytes: u64,
    last_used: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SequentialityReport {
    /// Reads and writes classified.
    pub requests: u64,
    pub sequential: u64,
    pub near_sequential: u64,
    pub strided: u64,
    pub random: u64,
    pub sequential_fraction: f64,
    pub near_sequential_fraction: f64,
    pub strided_fraction: f64,
    pub random_fraction: f64,
    /// Share of reads (writes) that are sequential or near-sequential.
    pub read_sequential_fraction: f64,
    pub write_sequential_fraction: f64,
    /// Runs of two or more requests in one stream.
    pub runs: u64,
    pub mean_run_requests: f64,
    pub mean_run_bytes: f64,
    pub streams_per_device: u32,
    pub near_gap_bytes: u64,
    pub max_stride_bytes: u64,
}

/// Whether `off - last` (exactly, as integers) equals `stride`, in u64 arithmetic: the wrapped
/// difference matches and its sign agrees (a wrapped match of the other sign is 2^64 away).
#[inline]
fn repeats_stride(off: u64, last: u64, stride: i64) -> bool {
    off.wrapping_sub(last) == stride as u64 && (stride > 0) == (off > last)
}

#[derive(Debug, Default)]
pub struct Sequentiality {
    streams: Vec<Vec<Stream>>,
    clock: u64,
    counts: [u64; 4],
    by_op: [[u64; 2]; 2],
    runs: u64,
    run_requests: u64,
    run_bytes: u64,
}

impl Sequentiality {
    pub fn observe(&mut self, e: &IoEvent) {
        let op = match e.op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return,
        };
        let dev = e.device as usize;
        if dev >= MAX_DEVICES {
            self.counts[3] += 1;
            self.by_op[op][1] += 1;
            return;
        }
        if dev >= self.streams.len() {
            self.streams.resize_with(dev + 1, Vec::new);
        }
        self.clock += 1;
        let off = e.offset_bytes;
        let streams = &mut self.streams[dev];
        let mut best: Option<(usize, usize)> = None; // (class, slot)
                                                     // For a request that continues no stream (the common case), the same pass finds the
                                                     // nearest stream's distance (the first of the smallest) and the least recently used
                                                     // stream, both among the streams it does not match, which are all of them then: the
                                                     // streams are read once.
        let mut nearest: Option<(u64, bool)> = None; // (|distance|, negative)
        let mut oldest: (usize, u64) = (0, u64::MAX);
        for (i, s) in streams.iter().enumerate() {
            let class = if off == s.end {
                0
            } else if off > s.end && off - s.end <= NEAR_GAP_BYTES {
                1
            } else if s.stride != 0 && repeats_stride(off, s.last_offset, s.stride) {
                2
            } else {
                let d = off.abs_diff(s.last_offset);
                if d != 0 && d <= MAX_STRIDE_BYTES && nearest.is_none_or(|(n, _)| d < n) {
                    nearest = Some((d, off < s.last_offset));
                }
                if s.last_used < oldest.1 {
                    oldest = (i, s.last_used);
                }
                continue;
            };
            // A match: `nearest` and `oldest` are not needed any more.
            if best.is_none_or(|(c, _)| class < c) {
                best = Some((class, i));
                if class == 0 {
                    break;
                }
            }
        }
        let len = u64::from(e.len_bytes);
        match best {
            Some((class, i)) => {
                let s = &mut streams[i];
                s.stride = (off as i128 - s.last_offset as i128)
                    .clamp(i64::MIN as i128, i64::MAX as i128) as i64;
                s.last_offset = off;
                s.end = e.end_bytes();
                s.requests += 1;
                s.bytes += len;
                s.last_used = self.clock;
                self.counts[class] += 1;
                if class <= 1 {
                    self.by_op[op][0] += 1;
                }
                self.by_op[op][1] += 1;
            }
            None => {
                self.counts[3] += 1;
                self.by_op[op][1] += 1;
                // The stride from the nearest stream, so that a strided pattern interleaved
                // with others is recognised from its third request. (At most
                // `MAX_STRIDE_BYTES`, so it fits an i64.)
                let stride = match nearest {
                    Some((d, true)) => -(d as i64),
                    Some((d, false)) => d as i64,
                    None => 0,
                };
                let new = Stream {
                    last_offset: off,
                    end: e.end_bytes(),
                    stride,
                    requests: 1,
                    bytes: len,
                    last_used: self.clock,
                };
                if streams.len() < STREAMS_PER_DEVICE {
                    streams.push(new);
                } else {
                    let i = oldest.0;
                    let old = std::mem::replace(&mut streams[i], new);
                    if old.requests >= 2 {
                        self.runs += 1;
                        self.run_requests += old.requests;
                        self.run_bytes += old.bytes;
                    }
                }
            }
        }
    }

    pub fn finish(&self) -> SequentialityReport {
        let (mut runs, mut run_requests, mut run_bytes) =
            (self.runs, self.run_requests, self.run_bytes);
        for s in self.streams.iter().flatten().filter(|s| s.requests >= 2) {
            runs += 1;
            run_requests += s.requests;
            run_bytes += s.bytes;
        }
        let requests: u64 = self.counts.iter().sum();
        let frac = |n: u64, d: u64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
        SequentialityReport {
            requests,
            sequential: self.counts[0],
            near_sequential: self.counts[1],
            strided: self.counts[2],
            random: self.counts[3],
            sequential_fraction: frac(self.counts[0], requests),
            near_sequential_fraction: frac(self.counts[1], requests),
            strided_fraction: frac(self.counts[2], requests),
            random_fraction: frac(self.counts[3], requests),
            read_sequential_fraction: frac(self.by_op[0][0], self.by_op[0][1]),
            write_sequential_fraction: frac(self.by_op[1][0], self.by_op[1][1]),
            runs,
            mean_run_requests: frac(run_requests, runs),
            mean_run_bytes: frac(run_bytes, runs),
            streams_per_device: STREAMS_PER_DEVICE as u32,
            near_gap_bytes: NEAR_GAP_BYTES,
            max_stride_bytes: MAX_STRIDE_BYTES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stride_test_agrees_with_exact_arithmetic() {
        let values = [
            0,
            1,
            4096,
            1 << 40,
            i64::MAX as u64,
            1 << 63,
            u64::MAX - 1,
            u64::MAX,
        ];
        let strides = [1, -1, 4096, -4096, i64::MAX, i64::MIN, i64::MIN + 1];
        for &off in &values {
            for &last in &values {
                for stride in strides
                    .into_iter()
                    .chain([off.wrapping_sub(last) as i64, last.wrapping_sub(off) as i64])
                {
                    let exact = stride != 0 && off as i128 - last as i128 == i128::from(stride);
                    assert_eq!(
                        stride != 0 && repeats_stride(off, last, stride),
                        exact,
                        "{off} {last} {stride}"
                    );
                }
            }
        }
    }

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
    fn classifies_interleaved_near_and_strided_streams() {
        let mut s = Sequentiality::default();
        for i in 0..10u64 {
            // Stream A: sequential 8 KiB reads.
            s.observe(&ev(i * 8192, 8192));
            // Stream B: 4 KiB reads every 1 MiB (strided) far away.
            s.observe(&ev((1 << 40) + i * (1 << 20), 4096));
            // Stream C: 4 KiB reads skipping 4 KiB (near-sequential).
            s.observe(&ev((1 << 35) + i * 8192, 4096));
        }
        let r = s.finish();
        assert_eq!(r.requests, 30);
        assert_eq!(r.sequential, 9);
        assert_eq!(r.near_sequential, 9);
        // B's second request starts a stream with B's stride, so B is strided from its third.
        assert_eq!(r.strided, 8);
        assert_eq!(r.random, 4);
        assert_eq!(r.runs, 3);
    }
}
