//! Workload and hot-data analysis in one streaming pass: what `blocksight analyze` prints and
//! what the web app's worker sends to the UI.
//!
//! [`Analysis::observe`] takes events one at a time; [`Analysis::finish`] returns an
//! [`AnalysisReport`], a compact serde struct (no per-event or per-block data). Every part keeps
//! bounded memory: fixed bin counts that re-bin by doubling (timeline, heat maps), log-bucketed
//! histograms (latency, sizes), a bounded stream table (sequentiality), per-block counts exact up
//! to a limit and spatially sampled past it (hot data), and a fixed-size SHARDS sample for the
//! LRU miss-ratio curve behind the cache-size recommendation.

pub mod devices;
pub mod heatmap;
pub mod hot;
pub mod latency;
pub mod length;
pub mod sequential;
pub mod timeline;

use serde::{Deserialize, Serialize};

use crate::decode::Diagnostics;
use crate::event::{IoEvent, Op, TraceHeader};
use crate::hash::{block_key, mix64};
use crate::mrc::shards::ShardsMode;
use crate::mrc::{LruMrc, MrcReport, SizeSpec};
use crate::stat::{empty_size_histogram, size_bucket, SizeBucket};

use self::devices::{DeviceReport, Devices};
use self::heatmap::{HeatMap, HeatMapReport};
use self::hot::{HotBlocks, HotPart, HotReport};
use self::latency::{LatencyHistogram, LatencySummary};
use self::length::{LengthReport, TraceLength};
use self::sequential::{Sequentiality, SequentialityReport};
use self::timeline::{Timeline, TimelineReport};

/// Blocks of each request whose table slots [`Analysis::observe_batch`] reads ahead.
const PREFETCH_BLOCKS: u64 = 16;

/// How many requests ahead [`Analysis::observe_batch`] reads the tables' slots.
const PREFETCH_AHEAD: usize = 32;

/// Knobs of the analysis. The defaults suit traces of any length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalysisConfig {
    /// Granularity of hot-data counts and cache lines (4 KiB … 1 MiB).
    pub block_bytes: u64,
    pub time_bins: u32,
    pub heat_time_bins: u32,
    pub heat_lba_bins: u32,
    /// Distinct blocks counted exactly before hot data switches to spatial sampling.
    pub exact_block_limit: u64,
    /// SHARDS fixed-size sample (lines) for the LRU curve; 0 computes the curve exactly
    /// (memory then grows with the footprint).
    pub mrc_sample_lines: u64,
    /// Sizes on the LRU curve.
    pub mrc_points: u32,
    /// Rows of the per-device table (`analysis::devices`); 0 leaves it out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub device_rows: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Default for AnalysisConfig {
    fn default() -> Self {
        AnalysisConfig {
            block_bytes: 4096,
            time_bins: 256,
            heat_time_bins: 256,
            heat_lba_bins: 256,
            exact_block_limit: 1 << 21,
            mrc_sample_lines: 1 << 16,
            mrc_points: 64,
            device_rows: 0,
        }
    }
}

/// Requests and bytes of one op.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpTotal {
    pub op: Op,
    pub requests: u64,
    pub bytes: u64,
}

/// Latency percentiles by op, when the trace has completions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyReport {
    pub all: LatencySummary,
    pub reads: LatencySummary,
    pub writes: LatencySummary,
    /// Upper bound of the relative error of every percentile (means, min and max are exact).
    pub percentile_relative_error: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSummary {
    pub events: u64,
    pub ops: Vec<OpTotal>,
    pub first_time_nanos: Option<u64>,
    pub last_time_nanos: Option<u64>,
    pub duration_nanos: u64,
    /// Whether the rates were measured (see [`crate::stat::rates_measurable`]): false, and the
    /// rates 0, for a trace without timestamps or shorter than ten ticks of its clock.
    #[serde(default)]
    pub rates_measured: bool,
    /// The finest time step of the trace's clock (`None`: no timestamps).
    #[serde(default)]
    pub clock_resolution_nanos: Option<u64>,
    pub mean_iops: f64,
    pub read_mib_per_sec: f64,
    pub write_mib_per_sec: f64,
    /// Share of data requests (reads and writes) that are reads.
    pub read_fraction: f64,
    pub size_histogram: Vec<SizeBucket>,
    pub mean_read_bytes: f64,
    pub mean_write_bytes: f64,
}

/// Where the trace came from and what went wrong reading it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceInfo {
    pub source_format: String,
    pub devices: Vec<crate::event::DeviceInfo>,
    pub sampling_rate: Option<f64>,
    pub dropped_events: u64,
    pub skipped_records: u64,
    pub truncated_tail_bytes: u64,
}

/// Everything `blocksight analyze --json` prints (documented in docs/analysis.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalysisReport {
    pub trace: TraceInfo,
    pub config: AnalysisConfig,
    pub summary: WorkloadSummary,
    pub sequentiality: SequentialityReport,
    pub latency: Option<LatencyReport>,
    pub timeline: TimelineReport,
    pub hot: HotReport,
    pub heatmaps: HeatMapReport,
    /// The LRU miss-ratio curve and the cache-size recommendation.
    pub cache_sizing: MrcReport,
    /// Whether the trace is long enough to size a cache from (`analysis::length`).
    #[serde(default)]
    pub trace_length: Option<LengthReport>,
    /// Per device, ranked by what a cache would save (`analysis::devices`), when asked for
    /// (`AnalysisConfig::device_rows`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_device: Option<DeviceReport>,
}

/// Which share of the analysis one [`Analysis`] computes. Hot data (a probe of a table of up
/// to millions of blocks for every block accessed) costs about as much as everything else
/// together, so a host with two cores counts it on one and the rest on the other, each fed
/// every event, then joins them: [`Analysis::finish_with_hot`] of a [`AnalysisPart::Rest`] with
/// [`Analysis::finish_hot`] of a [`AnalysisPart::HotData`] is [`Analysis::finish`] of a
/// [`AnalysisPart::Whole`] on the same events, to the last digit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnalysisPart {
    #[default]
    Whole,
    /// Everything but hot data.
    Rest,
    /// Hot data alone.
    HotData,
}

/// The streaming analysis.
#[derive(Debug)]
pub struct Analysis {
    config: AnalysisConfig,
    part: AnalysisPart,
    counts: [u64; 4],
    bytes: [u64; 4],
    first_time: Option<u64>,
    last_time: Option<u64>,
    sizes: Vec<SizeBucket>,
    latency: [LatencyHistogram; 2],
    latency_all: LatencyHistogram,
    sequentiality: Sequentiality,
    timeline: Timeline,
    /// Whether this analysis counts the timeline: the whole and the rest do, unless
    /// [`Analysis::move_timeline`] gave it to the hot-data part.
    counts_timeline: bool,
    hot: HotBlocks,
    heatmap: HeatMap,
    mrc: LruMrc,
    length: TraceLength,
    devices: Option<Devices>,
}

impl Analysis {
    pub fn new(config: AnalysisConfig) -> Analysis {
        Analysis::part(config, AnalysisPart::Whole)
    }

    /// An analysis computing only `part` of the report (see [`AnalysisPart`]).
    pub fn part(config: AnalysisConfig, part: AnalysisPart) -> Analysis {
        let sizes = empty_size_histogram();
        let block = config.block_bytes.max(1);
        let mrc = if config.mrc_sample_lines == 0 {
            LruMrc::exact(block)
        } else {
            LruMrc::shards(
                block,
                ShardsMode::FixedSize {
                    max_lines: config.mrc_sample_lines,
                },
            )
        };
        Analysis {
            part,
            counts: [0; 4],
            bytes: [0; 4],
            first_time: None,
            last_time: None,
            sizes,
            latency: Default::default(),
            latency_all: LatencyHistogram::default(),
            sequentiality: Sequentiality::default(),
            timeline: Timeline::new(config.time_bins as usize),
            counts_timeline: part != AnalysisPart::HotData,
            hot: HotBlocks::new(
                block,
                usize::try_from(config.exact_block_limit).unwrap_or(usize::MAX),
            ),
            heatmap: HeatMap::new(
                config.heat_time_bins as usize,
                config.heat_lba_bins as usize,
            ),
            mrc,
            length: TraceLength::new(block),
            devices: (config.device_rows > 0)
                .then(|| Devices::new(block, config.device_rows as usize)),
            config,
        }
    }

    /// Moves the timeline between the two parts of a split analysis, for a host whose rest
    /// part is the busier one (natively, `Load::with_threads`: the timeline is about a sixth of
    /// the rest): `counts` true on the [`AnalysisPart::HotData`] analysis, false on the
    /// [`AnalysisPart::Rest`] one. The joined report is the same; the rest part then has no
    /// live timeline ([`Analysis::timeline_so_far`] is empty). No effect on a whole analysis.
    pub fn move_timeline(&mut self, counts: bool) {
        if self.part != AnalysisPart::Whole {
            self.counts_timeline = counts;
        }
    }

    /// Whether this analysis counts the timeline (see [`Analysis::move_timeline`]).
    pub fn counts_timeline(&self) -> bool {
        self.counts_timeline
    }

    pub fn observe(&mut self, e: &IoEvent) {
        if self.part == AnalysisPart::HotData {
            if self.counts_timeline {
                self.timeline.observe(e);
            }
            self.observe_hot(e);
            return;
        }
        let op = e.op.index();
        self.counts[op] += 1;
        self.bytes[op] += u64::from(e.len_bytes);
        self.first_time = Some(
            self.first_time
                .map_or(e.time_nanos, |t| t.min(e.time_nanos)),
        );
        self.last_time = Some(self.last_time.map_or(e.time_nanos, |t| t.max(e.time_nanos)));
        if let Some(l) = e.latency_nanos {
            self.latency_all.add(l);
            if op < 2 {
                self.latency[op].add(l);
            }
        }
        if self.counts_timeline {
            self.timeline.observe(e);
        }
        if e.op == Op::Flush {
            return;
        }
        let i = size_bucket(u64::from(e.len_bytes));
        match e.op {
            Op::Read => self.sizes[i].reads += 1,
            Op::Write => self.sizes[i].writes += 1,
            _ => self.sizes[i].other += 1,
        }
        self.sequentiality.observe(e);
        self.heatmap.observe(e);
        if let Some(d) = self.devices.as_mut() {
            d.observe(e);
        }
        let op = match e.op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return,
        };
        // The per-block analyses (hot data, the LRU curve's sample, first touches) share each
        // block's key and hash, and each looks at its tables only for the blocks its sample
        // holds.
        let count_hot = self.part == AnalysisPart::Whole;
        let mut shards = self.mrc.begin_request(e);
        self.length.begin_request();
        for block in e.block_range(self.config.block_bytes.max(1)) {
            let key = block_key(e.device, block);
            let hash = mix64(key);
            if count_hot {
                self.hot.access(key, hash, op);
            }
            if let Some(s) = shards.as_deref_mut() {
                s.line(hash);
            }
            self.length.access(key, hash);
        }
        self.length.end_request(&self.mrc);
    }

    /// [`Analysis::observe`] of the hot-data part alone.
    #[inline]
    fn observe_hot(&mut self, e: &IoEvent) {
        let op = match e.op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return,
        };
        for block in e.block_range(self.config.block_bytes.max(1)) {
            let key = block_key(e.device, block);
            self.hot.access(key, mix64(key), op);
        }
    }

    /// [`Analysis::observe`] for each of `events` in turn (the same result), after reading the
    /// per-block tables' slots of their first blocks (hot data, first touches, the LRU curve's
    /// stack) where the samples hold them: their cache misses then overlap instead of stalling one request after
    /// another.
    pub fn observe_batch(&mut self, events: &[IoEvent]) {
        // A sliding window: the slots of the request `PREFETCH_AHEAD` places on are read while
        // this one is observed. Reading a whole decoder batch's slots first (1,024 requests, a
        // few thousand lines in three tables) brought in more than the CPU's L2 holds, so the
        // first requests' slots were gone again by the time they were observed.
        for e in events.iter().take(PREFETCH_AHEAD) {
            self.prefetch(e);
        }
        for (i, e) in events.iter().enumerate() {
            if let Some(ahead) = events.get(i + PREFETCH_AHEAD) {
                self.prefetch(ahead);
            }
            self.observe(e);
        }
    }

    /// Reads ahead the table slots that observing `e` will probe first (see
    /// [`Self::observe_batch`] and [`crate::prefetch`]).
    #[inline]
    fn prefetch(&self, e: &IoEvent) {
        if matches!(e.op, Op::Read | Op::Write) {
            let blocks = e.block_range(self.config.block_bytes.max(1));
            for block in blocks.start..blocks.end.min(blocks.start + PREFETCH_BLOCKS) {
                let key = block_key(e.device, block);
                let hash = mix64(key);
                if self.part != AnalysisPart::Rest {
                    self.hot.prefetch(key, hash);
                }
                if self.part != AnalysisPart::HotData {
                    self.length.prefetch(key, hash);
                    self.mrc.prefetch_line(hash);
                }
            }
        }
    }

    /// The load over time of the events seen so far (cheap: the fixed bins), for a live chart
    /// while a long trace is still being read.
    pub fn timeline_so_far(&self) -> TimelineReport {
        self.timeline.finish()
    }

    /// The report of a [`AnalysisPart::Whole`] analysis.
    pub fn finish(&self, header: &TraceHeader, diagnostics: &Diagnostics) -> AnalysisReport {
        debug_assert_eq!(self.part, AnalysisPart::Whole);
        self.finish_with_hot(header, diagnostics, &self.finish_hot(header))
    }

    /// Hot data's share of the report (of a [`AnalysisPart::Whole`] or
    /// [`AnalysisPart::HotData`] analysis).
    pub fn finish_hot(&self, header: &TraceHeader) -> HotPart {
        let mut part = self.hot.part(header, self.devices.is_some());
        if self.part == AnalysisPart::HotData && self.counts_timeline {
            part.timeline = Some(self.timeline.finish_at(
                crate::format::TraceFormat::clock_resolution_of(&header.source_format),
            ));
        }
        part
    }

    /// The report, with hot data from `hot` (the [`Analysis::finish_hot`] of an analysis of
    /// the same events with the same configuration) instead of this analysis's own.
    pub fn finish_with_hot(
        &self,
        header: &TraceHeader,
        diagnostics: &Diagnostics,
        hot: &HotPart,
    ) -> AnalysisReport {
        let duration_nanos = match (self.first_time, self.last_time) {
            (Some(a), Some(b)) => b - a,
            _ => 0,
        };
        let secs = duration_nanos as f64 / 1e9;
        let clock_resolution_nanos =
            crate::format::TraceFormat::clock_resolution_of(&header.source_format);
        let rates_measured = crate::stat::rates_measurable(duration_nanos, clock_resolution_nanos);
        let per_sec = |x: f64| if rates_measured { x / secs } else { 0.0 };
        let events: u64 = self.counts.iter().sum();
        let data = self.counts[0] + self.counts[1];
        let mean = |i: usize| {
            if self.counts[i] == 0 {
                0.0
            } else {
                self.bytes[i] as f64 / self.counts[i] as f64
            }
        };
        let summary = WorkloadSummary {
            events,
            ops: Op::ALL
                .iter()
                .map(|&op| OpTotal {
                    op,
                    requests: self.counts[op.index()],
                    bytes: self.bytes[op.index()],
                })
                .collect(),
            first_time_nanos: self.first_time,
            last_time_nanos: self.last_time,
            duration_nanos,
            rates_measured,
            clock_resolution_nanos,
            mean_iops: per_sec(events as f64),
            read_mib_per_sec: per_sec(self.bytes[0] as f64 / 1048576.0),
            write_mib_per_sec: per_sec(self.bytes[1] as f64 / 1048576.0),
            read_fraction: if data == 0 {
                0.0
            } else {
                self.counts[0] as f64 / data as f64
            },
            size_histogram: self.sizes.clone(),
            mean_read_bytes: mean(0),
            mean_write_bytes: mean(1),
        };
        let latency = (self.latency_all.count() > 0).then(|| LatencyReport {
            all: self.latency_all.summary(),
            reads: self.latency[0].summary(),
            writes: self.latency[1].summary(),
            percentile_relative_error: 1.0 / 256.0,
        });
        AnalysisReport {
            trace: TraceInfo {
                source_format: header.source_format.clone(),
                devices: header.devices.clone(),
                sampling_rate: header.sampling.map(|s| s.rate()),
                dropped_events: header.dropped_events,
                skipped_records: diagnostics.skipped_records,
                truncated_tail_bytes: diagnostics.truncated_tail_bytes,
            },
            config: self.config.clone(),
            summary,
            sequentiality: self.sequentiality.finish(),
            latency,
            timeline: match &hot.timeline {
                Some(t) => t.clone(),
                None => self.timeline.finish_at(clock_resolution_nanos),
            },
            hot: hot.report.clone(),
            heatmaps: self.heatmap.finish(header),
            cache_sizing: self
                .mrc
                .finish(&SizeSpec::Count(self.config.mrc_points), header),
            trace_length: Some(
                self.length
                    .finish(&self.mrc, rates_measured.then_some(duration_nanos)),
            ),
            per_device: self.devices.as_ref().map(|d| d.finish(header, hot)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrc::synth::{Synthetic, SyntheticConfig};

    #[test]
    fn synthetic_workload_report_is_consistent_and_serialisable() {
        let cfg = SyntheticConfig {
            requests: 200_000,
            zipf_lines: 1 << 16,
            ..Default::default()
        };
        let mut a = Analysis::new(AnalysisConfig::default());
        for e in Synthetic::new(cfg) {
            a.observe(&e);
        }
        let r = a.finish(&TraceHeader::new("synthetic"), &Diagnostics::default());
        assert_eq!(r.summary.events, 200_000);
        assert_eq!(
            r.timeline
                .bins
                .iter()
                .map(|b| b.reads + b.writes)
                .sum::<u64>(),
            200_000
        );
        assert!(r.timeline.bins.len() <= 256 && r.timeline.has_queue_depth);
        let s = &r.sequentiality;
        assert_eq!(
            s.sequential + s.near_sequential + s.strided + s.random,
            200_000
        );
        // 10% of requests are scans: nearly all of them continue a stream.
        assert!(
            (0.08..0.12).contains(&(s.sequential_fraction + s.near_sequential_fraction)),
            "{s:?}"
        );
        let hs = &r.hot.all.hot_sizes;
        assert!(hs.windows(2).all(|w| w[0].bytes <= w[1].bytes));
        assert!(r.latency.as_ref().is_some_and(|l| l.all.p50_nanos > 50_000));
        let rec = r.cache_sizing.recommendation.as_ref().expect("a curve");
        assert!(rec.achievable_hit_ratio > 0.3);
        let json = serde_json::to_string(&r).expect("serialises");
        let back: AnalysisReport = serde_json::from_str(&json).expect("parses");
        assert_eq!(back.summary, r.summary);
    }

    /// Batches (prefetched table slots) give exactly what event-by-event observation gives,
    /// past hot data's switch to sampling and the first-touch sample's shrinking.
    #[test]
    fn batches_give_the_same_report_as_single_events() {
        let cfg = SyntheticConfig {
            requests: 150_000,
            zipf_lines: 1 << 20,
            ..Default::default()
        };
        let events: Vec<IoEvent> = Synthetic::new(cfg).collect();
        let config = AnalysisConfig {
            exact_block_limit: 1 << 14,
            ..Default::default()
        };
        let mut one = Analysis::new(config.clone());
        let mut stat_one = crate::stat::Stat::new();
        for e in &events {
            one.observe(e);
            stat_one.observe(e);
        }
        let mut batched = Analysis::new(config);
        let mut stat_batched = crate::stat::Stat::new();
        for chunk in events.chunks(37) {
            batched.observe_batch(chunk);
            stat_batched.observe_batch(chunk);
        }
        let (header, diagnostics) = (TraceHeader::new("synthetic"), Diagnostics::default());
        let r = one.finish(&header, &diagnostics);
        assert!(!r.hot.exact);
        assert_eq!(r, batched.finish(&header, &diagnostics));
        assert_eq!(
            stat_one.finish(&header, &diagnostics),
            stat_batched.finish(&header, &diagnostics)
        );
    }
}
