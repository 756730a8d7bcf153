//! `stat`: the first look at a trace. Counts by op, bytes, footprint, duration, request sizes and
//! the sequential fraction, in one streaming pass with bounded memory.

use serde::{Deserialize, Serialize};

use crate::decode::Diagnostics;
use crate::event::{IoEvent, Op, TraceHeader};

pub mod footprint;

pub use self::footprint::Footprint;

/// Block size for the footprint, as the issue and the users count it.
pub const FOOTPRINT_BLOCK_BYTES: u64 = 4096;

/// Distinct blocks tracked exactly before the footprint switches to spatial sampling.
pub const FOOTPRINT_EXACT_LIMIT: usize = 1 << 22;

/// Request-size histogram bucket upper bounds (inclusive), powers of two from 512 B to 4 MiB; a
/// last bucket takes everything larger.
pub const SIZE_BUCKETS_BYTES: [u64; 14] = [
    512,
    1 << 10,
    2 << 10,
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
    2 << 20,
    4 << 20,
];

/// How many concurrent sequential streams per device the detector follows.
const STREAMS_PER_DEVICE: usize = 32;

/// The index in [`SIZE_BUCKETS_BYTES`] (plus the open last bucket) of a request of `len`
/// bytes: the first bucket whose bound is at least `len`. The bounds are the powers of two
/// from 512 B, so that is a count of the bits of `len - 1`, not a search.
#[inline]
pub fn size_bucket(len: u64) -> usize {
    const FIRST_BITS: u32 = SIZE_BUCKETS_BYTES[0].trailing_zeros();
    let bits = u64::BITS - len.saturating_sub(1).leading_zeros();
    (bits.saturating_sub(FIRST_BITS) as usize).min(SIZE_BUCKETS_BYTES.len())
}

/// The result of `stat`. Field names and meanings are stable: `blocksight stat --json` prints
/// this struct, documented in docs/json.md.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StatSummary {
    pub source_format: String,
    pub devices: Vec<String>,
    pub events: u64,
    pub reads: u64,
    pub writes: u64,
    pub discards: u64,
    pub flushes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub discard_bytes: u64,
    /// Distinct 4 KiB blocks touched by reads, writes and discards, over all devices.
    pub footprint_blocks: u64,
    pub footprint_bytes: u64,
    /// False when the trace touched more than [`FOOTPRINT_EXACT_LIMIT`] blocks and the footprint
    /// was estimated by spatial sampling (error about 1%).
    pub footprint_exact: bool,
    pub first_time_nanos: Option<u64>,
    pub last_time_nanos: Option<u64>,
    pub duration_nanos: u64,
    /// Whether the rates below were measured: false (and the rates 0) when the trace has no
    /// timestamps or spans fewer than [`MIN_RATE_CLOCK_TICKS`] ticks of its clock
    /// ([`rates_measurable`]).
    #[serde(default)]
    pub rates_measured: bool,
    /// The finest time step of the trace's clock (`None`: the format has no timestamps).
    #[serde(default)]
    pub clock_resolution_nanos: Option<u64>,
    /// Mean requests per second over the duration (0 when not [`StatSummary::rates_measured`]).
    pub iops: f64,
    pub read_mib_per_sec: f64,
    pub write_mib_per_sec: f64,
    pub mean_request_bytes: f64,
    pub size_histogram: Vec<SizeBucket>,
    /// Share of reads and writes that continue a recent sequential stream on their device.
    pub sequential_fraction: f64,
    /// Requests whose completion (and so latency) the trace has.
    pub events_with_latency: u64,
    pub dropped_events: u64,
    pub sampling_rate: Option<f64>,
    pub skipped_records: u64,
    pub skip_reasons: Vec<String>,
    pub truncated_tail_bytes: u64,
    /// The format has an end marker and the input ended without it (a recording killed with
    /// SIGKILL, a full disk, a copy cut short): events after the last complete chunk are missing
    /// (`Diagnostics::end_marker_missing`).
    #[serde(default)]
    pub end_marker_missing: bool,
    /// Records earlier than a record before them, sorted back into order (`decode::order`).
    #[serde(default)]
    pub out_of_order_records: u64,
    /// Records too far out of order to sort, moved forward in time.
    #[serde(default)]
    pub clamped_records: u64,
    /// The warning about both, naming the first record and stating the rule.
    #[serde(default)]
    pub order_warning: Option<String>,
    /// What the decoder decided that changes what the events mean (`Diagnostics::notes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A rate is computed only from a duration of at least this many ticks of the trace's clock,
/// so that the clock's rounding moves it by at most 10%.
pub const MIN_RATE_CLOCK_TICKS: u64 = 10;

/// Whether rates can be computed from `duration_nanos` of a trace whose clock ticks every
/// `clock_resolution_nanos` (`None`: no timestamps): at least [`MIN_RATE_CLOCK_TICKS`] ticks, and
/// at least a microsecond.
pub fn rates_measurable(duration_nanos: u64, clock_resolution_nanos: Option<u64>) -> bool {
    clock_resolution_nanos.is_some_and(|r| {
        duration_nanos >= 1000 && duration_nanos >= r.saturating_mul(MIN_RATE_CLOCK_TICKS)
    })
}

/// Why rates are not given, in words for the CLI and the web app, or `None` when they are
/// ([`rates_measurable`]).
pub fn rates_unmeasured_reason(
    duration_nanos: u64,
    clock_resolution_nanos: Option<u64>,
) -> Option<String> {
    if rates_measurable(duration_nanos, clock_resolution_nanos) {
        return None;
    }
    Some(match clock_resolution_nanos {
        None => "not measured: this format has no timestamps".into(),
        Some(r) if r > 1 => format!(
            "not measured: the trace spans less than {MIN_RATE_CLOCK_TICKS} ticks of its {} clock",
            tick_words(r)
        ),
        Some(_) => "not measured: the trace spans less than a microsecond".into(),
    })
}

fn tick_words(nanos: u64) -> String {
    match nanos {
        1_000_000_000 => "1 s".into(),
        1_000_000 => "1 ms".into(),
        1_000 => "1 µs".into(),
        n => format!("{n} ns"),
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeBucket {
    /// Smallest request size in the bucket (bytes, inclusive).
    pub min_bytes: u64,
    /// Largest request size in the bucket (bytes, inclusive); `None` for the open last bucket.
    pub max_bytes: Option<u64>,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
}

/// The request-size histogram with every count at zero: one bucket per bound of
/// [`SIZE_BUCKETS_BYTES`] plus an open last bucket. Shared by `stat` and `analysis`.
pub fn empty_size_histogram() -> Vec<SizeBucket> {
    let mut buckets = Vec::with_capacity(SIZE_BUCKETS_BYTES.len() + 1);
    let mut min = 0;
    for &max in &SIZE_BUCKETS_BYTES {
        buckets.push(SizeBucket {
            min_bytes: min,
            max_bytes: Some(max),
            ..Default::default()
        });
        min = max + 1;
    }
    buckets.push(SizeBucket {
        min_bytes: min,
        max_bytes: None,
        ..Default::default()
    });
    buckets
}

/// Which share of [`StatSummary`] a [`Stat`] counts: all of it, or one of two halves that two
/// threads can count side by side over the same events ([`StatSummary::with_places_of`] joins
/// them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatPart {
    Whole,
    /// What the requests are: counts, bytes, times, sizes, latencies present.
    Counts,
    /// Where they go: the footprint (its table of blocks: the costly half on a large trace)
    /// and the sequential fraction (the streams each request may continue).
    Places,
}

impl StatSummary {
    /// This summary (of a [`StatPart::Counts`] `Stat`) with the footprint and the sequential
    /// fraction of `other` (the [`StatPart::Places`] `Stat` of the same events): the summary of
    /// the whole.
    pub fn with_places_of(self, other: &StatSummary) -> StatSummary {
        StatSummary {
            footprint_blocks: other.footprint_blocks,
            footprint_bytes: other.footprint_bytes,
            footprint_exact: other.footprint_exact,
            sequential_fraction: other.sequential_fraction,
            ..self
        }
    }
}

/// Streaming accumulator for [`StatSummary`].
#[derive(Debug)]
pub struct Stat {
    part: StatPart,
    counts: [u64; 4],
    bytes: [u64; 4],
    /// The earliest and latest times (`u64::MAX` and 0 before the first event).
    first_time_nanos: u64,
    last_time_nanos: u64,
    /// Per size bucket, requests by op: reads, writes, discards (the buckets' `other`).
    size_counts: [[u64; 3]; SIZE_BUCKETS_BYTES.len() + 1],
    footprint: Footprint,
    streams: Vec<[u64; STREAMS_PER_DEVICE]>,
    stream_cursor: Vec<usize>,
    sequential: u64,
    data_requests: u64,
    with_latency: u64,
}

impl Default for Stat {
    fn default() -> Self {
        Stat::new()
    }
}

impl Stat {
    pub fn new() -> Stat {
        Stat::part(StatPart::Whole)
    }

    /// A `Stat` that counts only `part` of the summary: its other fields stay as for no events.
    pub fn part(part: StatPart) -> Stat {
        Stat {
            part,
            counts: [0; 4],
            bytes: [0; 4],
            first_time_nanos: u64::MAX,
            last_time_nanos: 0,
            size_counts: [[0; 3]; SIZE_BUCKETS_BYTES.len() + 1],
            footprint: Footprint::new(FOOTPRINT_EXACT_LIMIT),
            streams: Vec::new(),
            stream_cursor: Vec::new(),
            sequential: 0,
            data_requests: 0,
            with_latency: 0,
        }
    }

    pub fn observe(&mut self, e: &IoEvent) {
        if self.part != StatPart::Counts {
            self.place(e);
        }
        if self.part != StatPart::Places {
            self.count(e);
        }
    }

    /// The [`StatPart::Counts`] share. Counters are indexed by the op rather than chosen by it:
    /// reads and writes interleave at random, and a branch on the op was often mispredicted.
    #[inline]
    fn count(&mut self, e: &IoEvent) {
        let op = e.op.index();
        self.counts[op] += 1;
        self.bytes[op] += u64::from(e.len_bytes);
        self.first_time_nanos = self.first_time_nanos.min(e.time_nanos);
        self.last_time_nanos = self.last_time_nanos.max(e.time_nanos);
        self.with_latency += u64::from(e.latency_nanos.is_some());
        if e.op != Op::Flush {
            self.size_counts[size_bucket(u64::from(e.len_bytes))][op.min(2)] += 1;
        }
    }

    /// The [`StatPart::Places`] share.
    #[inline]
    fn place(&mut self, e: &IoEvent) {
        if e.op == Op::Flush {
            return;
        }
        self.footprint
            .insert_blocks(e.device, e.block_range(FOOTPRINT_BLOCK_BYTES));
        if matches!(e.op, Op::Read | Op::Write) {
            self.data_requests += 1;
            self.sequential += u64::from(self.continues_stream(e));
        }
    }

    /// [`Stat::observe`] for each of `events` in turn (the same result), after reading the
    /// footprint table's slots for all of them: their cache misses then overlap instead of
    /// stalling one request after another.
    pub fn observe_batch(&mut self, events: &[IoEvent]) {
        if self.part != StatPart::Counts {
            for e in events {
                if e.op != Op::Flush {
                    self.footprint
                        .prefetch_blocks(e.device, e.block_range(FOOTPRINT_BLOCK_BYTES));
                }
            }
        }
        match self.part {
            StatPart::Counts => {
                for e in events {
                    self.count(e);
                }
            }
            _ => {
                for e in events {
                    self.observe(e);
                }
            }
        }
    }

    /// A request is sequential when it starts exactly where one of the device's recently seen
    /// requests ended. Following many streams at once recognises interleaved sequential readers
    /// (several table scans, a backup beside OLTP) that a single "last end" would miss.
    fn continues_stream(&mut self, e: &IoEvent) -> bool {
        let dev = e.device as usize;
        if dev >= self.streams.len() {
            if dev > 4096 {
                return false;
            }
            self.streams.resize(dev + 1, [u64::MAX; STREAMS_PER_DEVICE]);
            self.stream_cursor.resize(dev + 1, 0);
        }
        let ends = &mut self.streams[dev];
        let end = e.end_bytes();
        if let Some(slot) = ends.iter().position(|&x| x == e.offset_bytes) {
            ends[slot] = end;
            true
        } else {
            let c = &mut self.stream_cursor[dev];
            ends[*c] = end;
            *c = (*c + 1) % STREAMS_PER_DEVICE;
            false
        }
    }

    pub fn finish(&self, header: &TraceHeader, diagnostics: &Diagnostics) -> StatSummary {
        let events = self.counts.iter().sum();
        let (first_time_nanos, last_time_nanos) = if events > 0 {
            (Some(self.first_time_nanos), Some(self.last_time_nanos))
        } else {
            (None, None)
        };
        let duration_nanos = self.last_time_nanos.saturating_sub(self.first_time_nanos);
        let secs = duration_nanos as f64 / 1e9;
        let clock_resolution_nanos =
            crate::format::TraceFormat::clock_resolution_of(&header.source_format);
        let rates_measured = rates_measurable(duration_nanos, clock_resolution_nanos);
        let per_sec = |x: f64| if rates_measured { x / secs } else { 0.0 };
        let data_bytes = self.bytes[0] + self.bytes[1] + self.bytes[2];
        let data_requests = self.counts[0] + self.counts[1] + self.counts[2];
        let (footprint_blocks, footprint_exact) = self.footprint.estimate();
        StatSummary {
            source_format: header.source_format.clone(),
            devices: header.devices.iter().map(|d| d.name.clone()).collect(),
            events,
            reads: self.counts[0],
            writes: self.counts[1],
            discards: self.counts[2],
            flushes: self.counts[3],
            read_bytes: self.bytes[0],
            write_bytes: self.bytes[1],
            discard_bytes: self.bytes[2],
            footprint_blocks,
            footprint_bytes: footprint_blocks * FOOTPRINT_BLOCK_BYTES,
            footprint_exact,
            first_time_nanos,
            last_time_nanos,
            duration_nanos,
            rates_measured,
            clock_resolution_nanos,
            iops: per_sec(events as f64),
            read_mib_per_sec: per_sec(self.bytes[0] as f64 / 1048576.0),
            write_mib_per_sec: per_sec(self.bytes[1] as f64 / 1048576.0),
            mean_request_bytes: if data_requests == 0 {
                0.0
            } else {
                data_bytes as f64 / data_requests as f64
            },
            size_histogram: empty_size_histogram()
                .into_iter()
                .zip(&self.size_counts)
                .map(|(bucket, &[reads, writes, other])| SizeBucket {
                    reads,
                    writes,
                    other,
                    ..bucket
                })
                .collect(),
            sequential_fraction: if self.data_requests == 0 {
                0.0
            } else {
                self.sequential as f64 / self.data_requests as f64
            },
            events_with_latency: self.with_latency,
            dropped_events: header.dropped_events,
            sampling_rate: header.sampling.map(|s| s.rate()),
            skipped_records: diagnostics.skipped_records,
            skip_reasons: diagnostics.reasons.clone(),
            truncated_tail_bytes: diagnostics.truncated_tail_bytes,
            end_marker_missing: diagnostics.end_marker_missing,
            out_of_order_records: diagnostics.out_of_order_records,
            clamped_records: diagnostics.clamped_records,
            order_warning: diagnostics.order_warning(),
            notes: diagnostics.notes.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two halves of `stat` counted apart and joined are the whole, on requests of every op
    /// (flushes, discards), sequential runs on several devices, times out of order and
    /// latencies missing: each half counts only its own share, the join takes each from its
    /// half.
    #[test]
    fn counts_and_places_joined_are_the_whole() {
        let mut header = TraceHeader::new("test");
        for d in 0..3 {
            header.device_index(&format!("d{d}"));
        }
        let events: Vec<IoEvent> = (0..20_000u64)
            .map(|i| {
                let r = crate::hash::mix64(i);
                // Every other request continues its device's run of 8 KiB requests; the rest
                // land anywhere.
                let (offset_bytes, len_bytes) = if i % 2 == 0 {
                    ((i / 6) * 8192, 8192)
                } else {
                    ((r >> 24) * 512, 512 << (r % 12))
                };
                IoEvent {
                    time_nanos: 1_000_000 * i + r % 3_000_000,
                    device: (i / 2 % 3) as u32,
                    offset_bytes,
                    len_bytes,
                    op: Op::from_index((r >> 8) as u8 % 4).expect("an op"),
                    latency_nanos: (r % 5 != 0).then_some(r % 10_000_000),
                    pid: None,
                }
            })
            .collect();
        let mut whole = Stat::new();
        let mut counts = Stat::part(StatPart::Counts);
        let mut places = Stat::part(StatPart::Places);
        for chunk in events.chunks(100) {
            whole.observe_batch(chunk);
            counts.observe_batch(chunk);
            places.observe_batch(chunk);
        }
        let diagnostics = Diagnostics::default();
        let whole = whole.finish(&header, &diagnostics);
        assert!(whole.sequential_fraction > 0.1 && whole.footprint_blocks > 0);
        assert!(whole.flushes > 0 && whole.discards > 0);
        let counts = counts.finish(&header, &diagnostics);
        let places = places.finish(&header, &diagnostics);
        assert_ne!(counts, whole);
        assert_ne!(places, whole);
        assert_eq!(counts.with_places_of(&places), whole);
    }

    /// The computed bucket is the first bound at least `len` (the search it replaces), at and
    /// around every bound.
    #[test]
    fn size_bucket_is_the_first_bound_at_least_the_length() {
        for (i, &bound) in SIZE_BUCKETS_BYTES.iter().enumerate() {
            assert!(bound.is_power_of_two() && (i == 0 || bound == 2 * SIZE_BUCKETS_BYTES[i - 1]));
        }
        let lens = SIZE_BUCKETS_BYTES
            .iter()
            .flat_map(|&b| [b - 1, b, b + 1])
            .chain([0, 1, 7, 4095, u64::from(u32::MAX), u64::MAX]);
        for len in lens {
            let search = SIZE_BUCKETS_BYTES
                .iter()
                .position(|&max| len <= max)
                .unwrap_or(SIZE_BUCKETS_BYTES.len());
            assert_eq!(size_bucket(len), search, "{len}");
        }
    }

    #[test]
    fn no_rate_from_a_zero_or_sub_resolution_duration() {
        // Regression (issue 14.2): `mean rate 0 IOPS` from a zero duration, and rates from a
        // duration of one tick of a one-second clock.
        let mut st = Stat::new();
        let mut header = TraceHeader::new("tencent");
        header.device_index("1063");
        for s in [0u64, 0, 1] {
            st.observe(&IoEvent {
                time_nanos: s * 1_000_000_000,
                device: 0,
                offset_bytes: 0,
                len_bytes: 4096,
                op: Op::Read,
                latency_nanos: None,
                pid: None,
            });
        }
        let r = st.finish(&header, &Diagnostics::default());
        assert!(!r.rates_measured);
        assert_eq!((r.iops, r.read_mib_per_sec), (0.0, 0.0));
        assert_eq!(
            rates_unmeasured_reason(r.duration_nanos, r.clock_resolution_nanos).as_deref(),
            Some("not measured: the trace spans less than 10 ticks of its 1 s clock")
        );
        let untimed = st.finish(&TraceHeader::new("arc"), &Diagnostics::default());
        assert_eq!(
            rates_unmeasured_reason(untimed.duration_nanos, untimed.clock_resolution_nanos)
                .as_deref(),
            Some("not measured: this format has no timestamps")
        );
        // Ten ticks of a microsecond clock are enough.
        assert!(rates_measurable(10_000, Some(1_000)));
        assert!(!rates_measurable(9_999, Some(1_000)));
    }

    fn ev(time_nanos: u64, offset_bytes: u64, len_bytes: u32, op: Op) -> IoEvent {
        IoEvent {
            time_nanos,
            device: 0,
            offset_bytes,
            len_bytes,
            op,
            latency_nanos: None,
            pid: None,
        }
    }

    #[test]
    fn counts_footprint_and_sequential_streams() {
        let mut s = Stat::new();
        // Two interleaved sequential streams: both continue after the first request.
        let events = [
            ev(0, 0, 4096, Op::Read),
            ev(1, 1 << 30, 8192, Op::Read),
            ev(2, 4096, 4096, Op::Read),
            ev(3, (1 << 30) + 8192, 8192, Op::Write),
            ev(4, 100, 10, Op::Write), // inside block 0: footprint unchanged
            ev(5_000_000_000, 0, 0, Op::Flush),
        ];
        for e in &events {
            s.observe(e);
        }
        let r = s.finish(&TraceHeader::new("test"), &Diagnostics::default());
        assert_eq!((r.events, r.reads, r.writes, r.flushes), (6, 3, 2, 1));
        assert_eq!(r.read_bytes, 4096 + 8192 + 4096);
        assert_eq!(r.footprint_blocks, 2 + 4);
        assert!(r.footprint_exact);
        assert_eq!(r.duration_nanos, 5_000_000_000);
        assert!((r.sequential_fraction - 2.0 / 5.0).abs() < 1e-12);
        assert_eq!(r.size_histogram[0].writes, 1); // 10 bytes
        assert_eq!(r.size_histogram[3].reads, 2); // 4 KiB
    }
}
