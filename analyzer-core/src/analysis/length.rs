//! Is the trace long enough to size a cache from? A capture that stops while the workload is
//! still touching new data, or while the recommended cache size is still growing, undersizes the
//! cache; the user should record again, longer. Measured from the trace itself, in one pass:
//!
//! - **First touches at the end**: the share of block accesses in the last tenth of the
//!   requests that touch a block never seen before (footprint still growing). Counted on a
//!   spatial sample of blocks (a block is followed when `mix64(key)` is below a threshold that
//!   halves when more than [`SAMPLED_BLOCKS`] are followed), so memory is bounded; each bin's
//!   share is a ratio of counts taken at one rate, so the sampling rate cancels.
//! - **Recommendation drift**: the recommended cache size from the first half of the requests
//!   against the one from the whole trace (from snapshots of the running LRU curve taken every
//!   `step` requests; at most [`MAX_SNAPSHOTS`] are kept, the step doubling when full).
//! - **Footprint growth**: the footprint of the first half against the whole.
//!
//! The verdict thresholds are Blocksight's own rule, stated in docs/analysis.md: a trace is
//! long enough when under [`OK_FIRST_TOUCH_SHARE`] of the last tenth's accesses are first touches
//! and the recommendation moved by under [`OK_DRIFT`] from half to whole; too short when over
//! [`SHORT_FIRST_TOUCH_SHARE`] or [`SHORT_DRIFT`]; borderline in between.

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, Op, TraceHeader};
use crate::hash::{block_key, mix64, BlockTable};
use crate::mrc::{LruMrc, SizeSpec};

/// Blocks followed for first touches (the spatial sample's size).
pub const SAMPLED_BLOCKS: usize = 1 << 18;
/// Request bins for the first-touch share (merged pairwise when full).
const BINS: usize = 64;
/// Snapshots of the recommendation kept.
pub const MAX_SNAPSHOTS: usize = 32;

pub const OK_FIRST_TOUCH_SHARE: f64 = 0.05;
pub const SHORT_FIRST_TOUCH_SHARE: f64 = 0.20;
pub const OK_DRIFT: f64 = 0.10;
pub const SHORT_DRIFT: f64 = 0.25;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LengthVerdict {
    LongEnough,
    Borderline,
    TooShort,
    /// Too few requests to judge.
    Unknown,
}

/// What [`TraceLength::finish`] found (in `AnalysisReport::trace_length`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LengthReport {
    pub verdict: LengthVerdict,
    /// Share of block accesses in the last tenth of the requests that were first touches.
    pub first_touch_share_last_tenth: f64,
    /// Recommended cache size from the first half of the requests, and from all of them.
    pub recommended_first_half_bytes: Option<u64>,
    pub recommended_whole_bytes: Option<u64>,
    /// `whole / first half − 1`.
    pub recommendation_drift: Option<f64>,
    /// Footprint of the first half over the whole footprint (sampled estimate).
    pub first_half_footprint_fraction: Option<f64>,
    /// How many times the present length to record, when not long enough.
    pub record_factor: Option<f64>,
    /// The verdict in one sentence.
    pub advice: String,
}

#[derive(Clone, Copy, Debug, Default)]
struct Bin {
    accesses: f64,
    first: f64,
}

#[derive(Clone, Copy, Debug)]
struct Snapshot {
    requests: u64,
    recommended_bytes: Option<u64>,
    /// Distinct sampled blocks so far, scaled by the rate at the time.
    footprint: f64,
}

/// The streaming measurement.
#[derive(Debug)]
pub struct TraceLength {
    block_bytes: u64,
    seen: BlockTable<()>,
    threshold: u64,
    distinct_scaled: f64,
    bins: Vec<Bin>,
    requests_per_bin: u64,
    requests: u64,
    snapshots: Vec<Snapshot>,
    snapshot_step: u64,
    /// The current request's bin and the weight of its sampled accesses.
    bin: usize,
    weight: f64,
}

impl TraceLength {
    pub fn new(block_bytes: u64) -> TraceLength {
        TraceLength {
            block_bytes: block_bytes.max(1),
            seen: BlockTable::new(),
            threshold: u64::MAX,
            distinct_scaled: 0.0,
            bins: vec![Bin::default(); BINS],
            requests_per_bin: 64,
            requests: 0,
            snapshots: Vec::new(),
            snapshot_step: 1024,
            bin: 0,
            weight: 1.0,
        }
    }

    fn rate(&self) -> f64 {
        if self.threshold == u64::MAX {
            1.0
        } else {
            self.threshold as f64 / u64::MAX as f64
        }
    }

    /// One data request; `mrc` is the analysis's running LRU curve (already fed this event).
    pub fn observe(&mut self, e: &IoEvent, mrc: &LruMrc) {
        if !matches!(e.op, Op::Read | Op::Write) {
            return;
        }
        self.begin_request();
        for block in e.block_range(self.block_bytes) {
            let key = block_key(e.device, block);
            self.access(key, mix64(key));
        }
        self.end_request(mrc);
    }

    /// Starts a data request ([`Self::observe`] in three steps, for a caller that hashes each
    /// block once for several analyses): then [`Self::access`] for each of its blocks, then
    /// [`Self::end_request`].
    pub fn begin_request(&mut self) {
        while self.requests / self.requests_per_bin >= BINS as u64 {
            for i in 0..BINS / 2 {
                let (a, b) = (self.bins[2 * i], self.bins[2 * i + 1]);
                self.bins[i] = Bin {
                    accesses: a.accesses + b.accesses,
                    first: a.first + b.first,
                };
            }
            for b in &mut self.bins[BINS / 2..] {
                *b = Bin::default();
            }
            self.requests_per_bin *= 2;
        }
        self.bin = (self.requests / self.requests_per_bin) as usize;
        // The request's accesses weigh what the rate at its start says, even if the sample
        // shrinks during it.
        self.weight = 1.0 / self.rate();
    }

    /// One block of the current request: `key` from [`block_key`], `hash` its `mix64`.
    #[inline]
    pub fn access(&mut self, key: u64, hash: u64) {
        if hash > self.threshold {
            return;
        }
        let (bin, weight) = (self.bin, self.weight);
        self.bins[bin].accesses += weight;
        if self.seen.insert_if_absent(key, ()) {
            self.bins[bin].first += weight;
            self.distinct_scaled += weight;
            if self.seen.len() > SAMPLED_BLOCKS {
                self.threshold /= 2;
                let t = self.threshold;
                self.seen.retain(|k, _| mix64(k) <= t);
                self.distinct_scaled = self.seen.len() as f64 / self.rate();
            }
        }
    }

    /// Ends the current request; `mrc` has seen it.
    pub fn end_request(&mut self, mrc: &LruMrc) {
        self.requests += 1;
        if self.requests % self.snapshot_step == 0 {
            if self.snapshots.len() >= MAX_SNAPSHOTS {
                let kept: Vec<Snapshot> =
                    self.snapshots.iter().copied().skip(1).step_by(2).collect();
                self.snapshots = kept;
                self.snapshot_step *= 2;
            }
            if self.requests % self.snapshot_step == 0 {
                self.snapshots.push(Snapshot {
                    requests: self.requests,
                    recommended_bytes: recommended(mrc),
                    footprint: self.distinct_scaled,
                });
            }
        }
    }

    /// Reads the table slot the block `key` (hash `hash`) will use when it is in the sample
    /// ([`BlockTable::prefetch`]).
    #[inline]
    pub fn prefetch(&self, key: u64, hash: u64) {
        if hash <= self.threshold {
            self.seen.prefetch(key)
        }
    }

    pub fn finish(&self, mrc: &LruMrc, duration_nanos: Option<u64>) -> LengthReport {
        let n = self.requests;
        let whole = recommended(mrc);
        let half = self
            .snapshots
            .iter()
            .filter(|s| s.requests <= n / 2)
            .max_by_key(|s| s.requests);
        let used = (n.div_ceil(self.requests_per_bin) as usize).min(BINS);
        // The last bins holding about a tenth of the requests.
        let mut tail = Bin::default();
        let mut tail_requests = 0u64;
        for i in (0..used).rev() {
            if tail_requests * 10 >= n {
                break;
            }
            tail.accesses += self.bins[i].accesses;
            tail.first += self.bins[i].first;
            let start = i as u64 * self.requests_per_bin;
            tail_requests = n - start;
        }
        let first_touch = if tail.accesses > 0.0 {
            tail.first / tail.accesses
        } else {
            0.0
        };
        let drift = match (half.and_then(|h| h.recommended_bytes), whole) {
            (Some(h), Some(w)) if h > 0 => Some(w as f64 / h as f64 - 1.0),
            _ => None,
        };
        let footprint_fraction = half
            .filter(|_| self.distinct_scaled > 0.0)
            .map(|h| (h.footprint / self.distinct_scaled).min(1.0));
        let verdict = if n < 10 * 1024 || half.is_none() {
            LengthVerdict::Unknown
        } else if first_touch > SHORT_FIRST_TOUCH_SHARE || drift.is_some_and(|d| d > SHORT_DRIFT) {
            LengthVerdict::TooShort
        } else if first_touch < OK_FIRST_TOUCH_SHARE && drift.is_none_or(|d| d.abs() < OK_DRIFT) {
            LengthVerdict::LongEnough
        } else {
            LengthVerdict::Borderline
        };
        // Doubling the trace moved the answer by `drift`: record at least one more doubling
        // (two when it moved by more than half), so the next comparison can show it settled.
        let record_factor = match verdict {
            LengthVerdict::TooShort if drift.is_some_and(|d| d > 0.5) => Some(4.0),
            LengthVerdict::TooShort | LengthVerdict::Borderline => Some(2.0),
            _ => None,
        };
        let longer = |factor: f64| match duration_nanos {
            Some(d) if d > 0 => format!(
                "record at least {factor:.0}× as long (about {} in all)",
                words_duration(d as f64 * factor)
            ),
            _ => format!("record at least {factor:.0}× as many requests"),
        };
        let why = format!(
            "{:.0}% of the accesses in the last tenth touch new data{}",
            first_touch * 100.0,
            match drift {
                Some(d) => format!(
                    ", and the recommended cache size changed by {:+.0}% from the first half to \
                     the whole trace",
                    d * 100.0
                ),
                None => String::new(),
            }
        );
        let advice = match verdict {
            LengthVerdict::Unknown => {
                "too few requests to tell whether the trace is long enough".to_string()
            }
            LengthVerdict::LongEnough => format!("long enough: {why}"),
            LengthVerdict::Borderline => format!(
                "borderline: {why}; {}",
                longer(record_factor.unwrap_or(2.0))
            ),
            LengthVerdict::TooShort => format!(
                "too short: {why}; the workload was still growing when the capture stopped; {}",
                longer(record_factor.unwrap_or(2.0))
            ),
        };
        LengthReport {
            verdict,
            first_touch_share_last_tenth: first_touch,
            recommended_first_half_bytes: half.and_then(|h| h.recommended_bytes),
            recommended_whole_bytes: whole,
            recommendation_drift: drift,
            first_half_footprint_fraction: footprint_fraction,
            record_factor,
            advice,
        }
    }
}

fn recommended(mrc: &LruMrc) -> Option<u64> {
    mrc.finish(&SizeSpec::Count(32), &TraceHeader::default())
        .recommendation
        .and_then(|r| r.recommended)
        .map(|p| p.size_bytes)
}

fn words_duration(nanos: f64) -> String {
    let s = nanos / 1e9;
    if s >= 7200.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 120.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s:.0} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrc::shards::ShardsMode;

    fn read(block: u64) -> IoEvent {
        IoEvent {
            time_nanos: 0,
            device: 0,
            offset_bytes: block * 4096,
            len_bytes: 4096,
            op: Op::Read,
            latency_nanos: None,
            pid: None,
        }
    }

    fn run(blocks: impl Iterator<Item = u64>) -> LengthReport {
        let mut mrc = LruMrc::shards(4096, ShardsMode::FixedSize { max_lines: 1 << 14 });
        let mut t = TraceLength::new(4096);
        for b in blocks {
            let e = read(b);
            mrc.observe(&e);
            t.observe(&e, &mrc);
        }
        t.finish(&mrc, Some(3_600_000_000_000))
    }

    #[test]
    fn a_workload_that_keeps_touching_new_data_is_too_short() {
        // Every request a new block: the footprint grows to the end.
        let r = run(0..200_000);
        assert_eq!(r.verdict, LengthVerdict::TooShort, "{r:?}");
        assert!(r.first_touch_share_last_tenth > 0.99, "{r:?}");
        assert!(r.advice.contains("record at least"), "{}", r.advice);
    }

    #[test]
    fn a_workload_that_loops_over_a_fixed_set_is_long_enough() {
        // 2,000 blocks read over and over: after the first pass nothing is new.
        let r = run((0..400_000u64).map(|i| mix64(i % 2_000) % 1_000_000));
        assert_eq!(r.verdict, LengthVerdict::LongEnough, "{r:?}");
        assert!(r.first_touch_share_last_tenth < 0.01, "{r:?}");
        assert!(
            r.recommendation_drift.is_some_and(|d| d.abs() < 0.1),
            "{r:?}"
        );
        assert_eq!(r.record_factor, None);
    }

    #[test]
    fn memory_stays_bounded_by_the_sample() {
        let mut mrc = LruMrc::shards(4096, ShardsMode::FixedSize { max_lines: 1 << 10 });
        let mut t = TraceLength::new(4096);
        for b in 0..(SAMPLED_BLOCKS as u64 * 4) {
            let e = read(b);
            mrc.observe(&e);
            t.observe(&e, &mrc);
        }
        assert!(t.seen.len() <= SAMPLED_BLOCKS);
        assert!(t.snapshots.len() <= MAX_SNAPSHOTS);
        let r = t.finish(&mrc, None);
        assert_eq!(r.verdict, LengthVerdict::TooShort);
        // Half the blocks were touched in the first half.
        let f = r.first_half_footprint_fraction.expect("a fraction");
        assert!((0.4..0.6).contains(&f), "{f}");
    }
}
