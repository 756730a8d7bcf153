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
//!
//! A request reads only the streams that can match it: each device's streams are indexed by the
//! 128 KiB bucket of their end, the offset their stride predicts and the 16 MiB bucket of their
//! last offset (small hash maps from a key to a bit mask of stream slots), and kept in a
//! least-recently-used list. Ties go to the lowest slot, as a scan of every stream in slot order
//! would break them (that scan is the tests' reference).

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, Op};

pub const STREAMS_PER_DEVICE: usize = 64;
pub const NEAR_GAP_BYTES: u64 = 128 << 10;
pub const MAX_STRIDE_BYTES: u64 = 16 << 20;
const MAX_DEVICES: usize = 4096;

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
/// (The detector looks strides up by [`predicted`] offset; the scan it replaced, kept in the
/// tests as the reference, compared them.)
#[cfg(test)]
fn repeats_stride(off: u64, last: u64, stride: i64) -> bool {
    off.wrapping_sub(last) == stride as u64 && (stride > 0) == (off > last)
}

/// Slots of one device's streams (at most [`STREAMS_PER_DEVICE`], a bit each in a `u64`).
const NO_SLOT: u8 = u8::MAX;

/// Keys of the streams' indices: the 128 KiB bucket of a stream's end (an exact or
/// near-sequential request ends in its own bucket or the one before), the 16 MiB bucket of its
/// last offset (the nearest stream within the maximum stride is in its own bucket or a
/// neighbour), and the offset its stride predicts next.
const END_BUCKET_SHIFT: u32 = NEAR_GAP_BYTES.trailing_zeros();
const LAST_BUCKET_SHIFT: u32 = MAX_STRIDE_BYTES.trailing_zeros();
const _: () = assert!(NEAR_GAP_BYTES.is_power_of_two() && MAX_STRIDE_BYTES.is_power_of_two());

/// Entries of a [`SlotIndex`]: twice the most keys it holds (one per stream).
const INDEX_ENTRIES: usize = 2 * STREAMS_PER_DEVICE;

/// A small hash map from a key to the set of stream slots (a bit mask) that have that key:
/// linear probing, an entry empty when its mask is 0, backward-shift deletion.
#[derive(Clone, Debug)]
struct SlotIndex {
    keys: [u64; INDEX_ENTRIES],
    masks: [u64; INDEX_ENTRIES],
}

impl SlotIndex {
    const EMPTY: SlotIndex = SlotIndex {
        keys: [0; INDEX_ENTRIES],
        masks: [0; INDEX_ENTRIES],
    };

    #[inline]
    fn home(key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as usize
    }

    /// The entry holding `key`, or the empty entry where it would go.
    #[inline]
    fn find(&self, key: u64) -> usize {
        let mut i = Self::home(key);
        while self.masks[i] != 0 && self.keys[i] != key {
            i = (i + 1) % INDEX_ENTRIES;
        }
        i
    }

    /// The slots with `key`.
    #[inline]
    fn get(&self, key: u64) -> u64 {
        self.masks[self.find(key)]
    }

    fn add(&mut self, key: u64, slot: usize) {
        let i = self.find(key);
        self.keys[i] = key;
        self.masks[i] |= 1 << slot;
    }

    fn remove(&mut self, key: u64, slot: usize) {
        let mut hole = self.find(key);
        self.masks[hole] &= !(1 << slot);
        if self.masks[hole] != 0 {
            return;
        }
        // The entry is empty now: entries after it that may move into it do, so that every
        // probe still ends at the first empty entry.
        let mut j = (hole + 1) % INDEX_ENTRIES;
        while self.masks[j] != 0 {
            let from_home = (j + INDEX_ENTRIES - Self::home(self.keys[j])) % INDEX_ENTRIES;
            let from_hole = (j + INDEX_ENTRIES - hole) % INDEX_ENTRIES;
            if from_home >= from_hole {
                self.keys[hole] = self.keys[j];
                self.masks[hole] = self.masks[j];
                self.masks[j] = 0;
                hole = j;
            }
            j = (j + 1) % INDEX_ENTRIES;
        }
    }
}

/// The offset a stream's stride predicts next, when it has a stride and the offset exists.
fn predicted(last_offset: u64, stride: i64) -> Option<u64> {
    if stride == 0 {
        return None;
    }
    u64::try_from(i128::from(last_offset) + i128::from(stride)).ok()
}

/// One device's streams: slot `i` of every array is stream `i`; indices find the streams a
/// request may match (and the nearest ones) without reading all of them, and a list orders
/// them by last use.
#[derive(Clone, Debug)]
struct Streams {
    len: usize,
    last_offset: [u64; STREAMS_PER_DEVICE],
    end: [u64; STREAMS_PER_DEVICE],
    stride: [i64; STREAMS_PER_DEVICE],
    requests: [u64; STREAMS_PER_DEVICE],
    bytes: [u64; STREAMS_PER_DEVICE],
    by_end: SlotIndex,
    by_last: SlotIndex,
    by_prediction: SlotIndex,
    /// Least recently used first: `newer[i]` follows slot `i`, `older[i]` precedes it.
    oldest: u8,
    newest: u8,
    newer: [u8; STREAMS_PER_DEVICE],
    older: [u8; STREAMS_PER_DEVICE],
}

impl Streams {
    fn new() -> Streams {
        Streams {
            len: 0,
            last_offset: [0; STREAMS_PER_DEVICE],
            end: [0; STREAMS_PER_DEVICE],
            stride: [0; STREAMS_PER_DEVICE],
            requests: [0; STREAMS_PER_DEVICE],
            bytes: [0; STREAMS_PER_DEVICE],
            by_end: SlotIndex::EMPTY,
            by_last: SlotIndex::EMPTY,
            by_prediction: SlotIndex::EMPTY,
            oldest: NO_SLOT,
            newest: NO_SLOT,
            newer: [NO_SLOT; STREAMS_PER_DEVICE],
            older: [NO_SLOT; STREAMS_PER_DEVICE],
        }
    }

    /// The slots whose end is at most [`NEAR_GAP_BYTES`] before `off` or anywhere in the
    /// same bucket (a superset of the exact and near-sequential matches).
    fn ends_near(&self, off: u64) -> u64 {
        let b = off >> END_BUCKET_SHIFT;
        let before = if b > 0 { self.by_end.get(b - 1) } else { 0 };
        self.by_end.get(b) | before
    }

    /// The slots whose last offset is within [`MAX_STRIDE_BYTES`] of `off` (and others in
    /// the same buckets).
    fn lasts_near(&self, off: u64) -> u64 {
        let b = off >> LAST_BUCKET_SHIFT;
        let before = if b > 0 { self.by_last.get(b - 1) } else { 0 };
        before | self.by_last.get(b) | self.by_last.get(b + 1)
    }

    fn index(&mut self, i: usize) {
        self.by_end.add(self.end[i] >> END_BUCKET_SHIFT, i);
        self.by_last
            .add(self.last_offset[i] >> LAST_BUCKET_SHIFT, i);
        if let Some(p) = predicted(self.last_offset[i], self.stride[i]) {
            self.by_prediction.add(p, i);
        }
    }

    fn unindex(&mut self, i: usize) {
        self.by_end.remove(self.end[i] >> END_BUCKET_SHIFT, i);
        self.by_last
            .remove(self.last_offset[i] >> LAST_BUCKET_SHIFT, i);
        if let Some(p) = predicted(self.last_offset[i], self.stride[i]) {
            self.by_prediction.remove(p, i);
        }
    }

    /// Makes slot `i` the most recently used (`linked`: it is in the list already).
    fn touch(&mut self, i: usize, linked: bool) {
        let slot = i as u8;
        if linked {
            if self.newest == slot {
                return;
            }
            let (older, newer) = (self.older[i], self.newer[i]);
            if older == NO_SLOT {
                self.oldest = newer;
            } else {
                self.newer[usize::from(older)] = newer;
            }
            // `slot` is not the newest, so it has a newer neighbour.
            self.older[usize::from(newer)] = older;
        }
        self.older[i] = self.newest;
        self.newer[i] = NO_SLOT;
        if self.newest == NO_SLOT {
            self.oldest = slot;
        } else {
            self.newer[usize::from(self.newest)] = slot;
        }
        self.newest = slot;
    }

    /// Stream `i` continued by a request at `off` ending at `end` of `len` bytes.
    fn extend(&mut self, i: usize, off: u64, end: u64, len: u64) {
        self.unindex(i);
        self.stride[i] = (off as i128 - self.last_offset[i] as i128)
            .clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        self.last_offset[i] = off;
        self.end[i] = end;
        self.requests[i] += 1;
        self.bytes[i] += len;
        self.index(i);
        self.touch(i, true);
    }

    /// A new stream, in a new slot while there are fewer than [`STREAMS_PER_DEVICE`], else in
    /// the least recently used one; the replaced stream's `(requests, bytes)`.
    fn start(&mut self, off: u64, end: u64, stride: i64, len: u64) -> (u64, u64) {
        let (i, old, linked) = if self.len < STREAMS_PER_DEVICE {
            self.len += 1;
            (self.len - 1, (0, 0), false)
        } else {
            let i = usize::from(self.oldest);
            self.unindex(i);
            (i, (self.requests[i], self.bytes[i]), true)
        };
        self.last_offset[i] = off;
        self.end[i] = end;
        self.stride[i] = stride;
        self.requests[i] = 1;
        self.bytes[i] = len;
        self.index(i);
        self.touch(i, linked);
        old
    }
}

/// The slots of `mask`, lowest first.
fn slots(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}

#[derive(Debug, Default)]
pub struct Sequentiality {
    /// Per device, created at its first request.
    streams: Vec<Option<Box<Streams>>>,
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
            self.streams.resize_with(dev + 1, || None);
        }
        let streams = self.streams[dev].get_or_insert_with(|| Box::new(Streams::new()));
        let off = e.offset_bytes;
        // The first stream (by slot) of the best class the request matches: exact, then near,
        // then strided (a stream's class is the first of its tests that holds; near excludes
        // exact, and strided is only looked at when no stream is exact or near).
        let (mut exact, mut near) = (None, None);
        for i in slots(streams.ends_near(off)) {
            let end = streams.end[i];
            if off == end {
                exact = exact.or(Some(i));
            } else if off > end && off - end <= NEAR_GAP_BYTES {
                near = near.or(Some(i));
            }
        }
        let best = match (exact, near) {
            (Some(i), _) => Some((0, i)),
            (None, Some(i)) => Some((1, i)),
            (None, None) => slots(streams.by_prediction.get(off)).next().map(|i| (2, i)),
        };
        let len = u64::from(e.len_bytes);
        match best {
            Some((class, i)) => {
                streams.extend(i, off, e.end_bytes(), len);
                self.counts[class] += 1;
                if class <= 1 {
                    self.by_op[op][0] += 1;
                }
                self.by_op[op][1] += 1;
            }
            None => {
                self.counts[3] += 1;
                self.by_op[op][1] += 1;
                // The stride from the nearest stream (the first of the nearest), so that a
                // strided pattern interleaved with others is recognised from its third
                // request. (At most `MAX_STRIDE_BYTES`, so it fits an i64.)
                let mut nearest: Option<(u64, bool)> = None;
                for i in slots(streams.lasts_near(off)) {
                    let last = streams.last_offset[i];
                    let d = off.abs_diff(last);
                    if d != 0 && d <= MAX_STRIDE_BYTES && nearest.is_none_or(|(n, _)| d < n) {
                        nearest = Some((d, off < last));
                    }
                }
                let stride = match nearest {
                    Some((d, true)) => -(d as i64),
                    Some((d, false)) => d as i64,
                    None => 0,
                };
                let (requests, bytes) = streams.start(off, e.end_bytes(), stride, len);
                if requests >= 2 {
                    self.runs += 1;
                    self.run_requests += requests;
                    self.run_bytes += bytes;
                }
            }
        }
    }

    pub fn finish(&self) -> SequentialityReport {
        let (mut runs, mut run_requests, mut run_bytes) =
            (self.runs, self.run_requests, self.run_bytes);
        for s in self.streams.iter().flatten() {
            for i in 0..s.len {
                if s.requests[i] >= 2 {
                    runs += 1;
                    run_requests += s.requests[i];
                    run_bytes += s.bytes[i];
                }
            }
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
    use crate::hash::mix64;

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

    /// The detector before its indices (issue 12): every request read every stream of its
    /// device. The reference for `matches_the_scan_of_every_stream`.
    #[derive(Clone, Copy, Debug, Default)]
    struct Stream {
        last_offset: u64,
        end: u64,
        stride: i64,
        requests: u64,
        bytes: u64,
        last_used: u64,
    }

    #[derive(Debug, Default)]
    struct Scan {
        streams: Vec<Vec<Stream>>,
        clock: u64,
        counts: [u64; 4],
        by_op: [[u64; 2]; 2],
        runs: u64,
        run_requests: u64,
        run_bytes: u64,
    }

    impl Scan {
        fn observe(&mut self, e: &IoEvent) {
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
                        .clamp(i64::MIN as i128, i64::MAX as i128)
                        as i64;
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

        fn finish(&self) -> SequentialityReport {
            let (mut runs, mut run_requests, mut run_bytes) =
                (self.runs, self.run_requests, self.run_bytes);
            for s in self.streams.iter().flatten().filter(|s| s.requests >= 2) {
                runs += 1;
                run_requests += s.requests;
                run_bytes += s.bytes;
            }
            Sequentiality {
                counts: self.counts,
                by_op: self.by_op,
                runs,
                run_requests,
                run_bytes,
                streams: Vec::new(),
            }
            .finish()
        }
    }

    /// The indexed detector classifies every request as the scan of every stream did, on
    /// random mixes of sequential, near, strided (both directions), repeated and random
    /// requests over several devices, with offsets near 0 and near 2^64, and more streams
    /// than a device keeps.
    #[test]
    fn matches_the_scan_of_every_stream() {
        let mut x = 11u64;
        let mut seen = [0u64; 5];
        for case in 0..40u64 {
            let (mut fast, mut slow) = (Sequentiality::default(), Scan::default());
            let streams = 1 + case as usize * 3;
            let mut heads: Vec<(u64, i64)> = (0..streams)
                .map(|i| {
                    let base = match i % 4 {
                        0 => mix64(case * 100 + i as u64) % (1 << 30),
                        1 => u64::MAX - mix64(i as u64) % (1 << 24),
                        2 => mix64(i as u64) % (1 << 20),
                        _ => mix64(i as u64),
                    };
                    (base, 0)
                })
                .collect();
            for step in 0..3000u64 {
                x = mix64(x ^ step);
                let k = (x % streams as u64) as usize;
                let (off, stride) = heads[k];
                let len = [0u32, 512, 4096, 8192, 65536][(x >> 8) as usize % 5];
                let device = ((x >> 16) % 3) as u32 * (1 + (case % 2) as u32 * 2000);
                let e = IoEvent {
                    device,
                    op: if x >> 20 & 1 == 0 {
                        Op::Read
                    } else {
                        Op::Write
                    },
                    ..ev(off, len)
                };
                fast.observe(&e);
                slow.observe(&e);
                let next = match (x >> 24) % 8 {
                    0..=2 => off.wrapping_add(u64::from(len)),
                    3 => off.wrapping_add(u64::from(len) + (x >> 32) % (200 << 10)),
                    4 => off.wrapping_add_signed(stride),
                    5 => off,
                    6 => mix64(x),
                    _ => off.wrapping_sub(8192),
                };
                let stride = (next as i128 - off as i128).clamp(-(1 << 30), 1 << 30) as i64;
                heads[k] = (next, stride);
            }
            let r = fast.finish();
            assert_eq!(r, slow.finish(), "case {case}");
            seen = [
                seen[0] + r.sequential,
                seen[1] + r.near_sequential,
                seen[2] + r.strided,
                seen[3] + r.random,
                seen[4] + r.runs,
            ];
        }
        assert!(seen.iter().all(|&n| n > 100), "every class met: {seen:?}");
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
