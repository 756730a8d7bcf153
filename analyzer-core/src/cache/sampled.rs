//! A simulation of a cache too large to hold in memory, estimated from a spatial sample: the
//! MiniSim idea (see [`crate::mrc::minisim`]) applied to one cache. With `C` lines and room for
//! at most `M`, only the lines whose hash falls in a sample of rate `R = M / C` are simulated, in
//! a cache of `C × R` lines, and every count is scaled back by `1 / R`.
//!
//! The simulator's memory is about 45 bytes per resident line (LRU), so a 1 TiB cache of 4 KiB
//! lines would need 12 GB: more than a browser tab may have. Memory here is bounded by `M`
//! lines whatever the cache size. Ratios (hit ratio, back-end reduction) are estimates with the
//! sampling error MiniSim measures (within 0.005 mean absolute error at 65,536 sampled lines on
//! our test workloads); counts are those estimates times the trace's totals. Requests are
//! counted when at least one of their lines is in the sample, so request counts and back-end
//! operation counts are scaled line-level estimates, not exact request tallies.

use crate::event::{IoEvent, Op};
use crate::hash::{block_key, mix64};
use crate::mrc::shards::{rate_of_threshold, threshold_for_rate};

use super::admission::SMQ_REGION_LINES;
use super::sim::{BackendCounts, Counters, OpCounts, SimConfig, SimResult, Simulator, Summary};
use super::{Admission, ConfigError, WriteMode};

/// A simulator that samples when the cache has more lines than it may hold.
pub struct SampledSimulator {
    sim: Simulator,
    full: SimConfig,
    /// Lines with hash `<= threshold` are simulated; `u64::MAX` when not sampling.
    threshold: u64,
    rate: f64,
    /// [`SampledSimulator::with_bias_correction`].
    bias_correction: bool,
    /// Lines of every read and write, sampled or not (for the bias correction).
    line_accesses: u64,
    /// Log2 of the lines per unit of the sample ([`sample_unit_lines`]): a line is sampled when
    /// its unit's hash falls below the threshold (a shift on the per-line path, not a division).
    unit_shift: u32,
}

const _: () = assert!(SMQ_REGION_LINES.is_power_of_two());

/// The sample's unit for a cache: its line, or, under smq admission, smq's region of
/// `SMQ_REGION_LINES` lines. smq promotes a line by its region's heat (the accesses to all
/// of its lines); a sample of lines keeps about `rate` of each region's lines and so of its
/// heat, and the scaled cache promoted far less (a 256 MiB dm-cache-approx cache on
/// `make_trace 13` filled 200,008 lines on a quarter sample for 340,774 in full, and estimated
/// 0.142 for 0.182). A sample of whole regions keeps each sampled region's heat exact.
fn sample_unit_lines(config: &SimConfig) -> u64 {
    if config.admission == Admission::Smq {
        SMQ_REGION_LINES
    } else {
        1
    }
}

impl SampledSimulator {
    /// Simulates `config` exactly when its capacity is at most `max_lines`, otherwise on a
    /// spatial sample of rate `max_lines / capacity_lines`.
    pub fn new(config: &SimConfig, max_lines: u64) -> Result<SampledSimulator, ConfigError> {
        config.validate()?;
        let max_lines = max_lines.max(1);
        if config.capacity_lines <= max_lines {
            return SampledSimulator::with_rate(config, 1.0);
        }
        SampledSimulator::with_rate(config, max_lines as f64 / config.capacity_lines as f64)
    }

    /// Simulates `config` on a spatial sample of about `rate` of the lines (exactly when `rate`
    /// is 1 or more), in a cache scaled by the same rate: an estimate of any cache from a
    /// bounded amount of work (the Cache view's first answer).
    pub fn with_rate(config: &SimConfig, rate: f64) -> Result<SampledSimulator, ConfigError> {
        config.validate()?;
        let (threshold, rate) = if rate >= 1.0 {
            (u64::MAX, 1.0)
        } else {
            let threshold = threshold_for_rate(rate);
            (threshold, rate_of_threshold(threshold))
        };
        let mut scaled = config.clone();
        scaled.capacity_lines = ((config.capacity_lines as f64 * rate).round() as u64).max(1);
        Ok(SampledSimulator {
            sim: Simulator::new(&scaled)?,
            unit_shift: sample_unit_lines(config).trailing_zeros(),
            full: config.clone(),
            threshold,
            rate,
            bias_correction: false,
            line_accesses: 0,
        })
    }

    /// Corrects the line hits for the sample's surplus or deficit of line accesses (SHARDS_adj,
    /// as [`crate::mrc::minisim::MiniSimConfig::bias_correction`]): the difference between
    /// the accesses the rate should have sampled and the ones it did is counted as line hits
    /// (the few hottest lines, in or out of the sample, hit in any cache), split between reads
    /// and writes as the sample's lines are. Back-end counts are not corrected.
    pub fn with_bias_correction(mut self) -> SampledSimulator {
        self.bias_correction = true;
        self
    }

    /// The sampling rate: 1 when the simulation is exact.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn observe(&mut self, e: &IoEvent) {
        if self.threshold == u64::MAX {
            // Exact: buffered, so the simulator runs groups of requests with their table slots
            // read ahead (only `finish` reads the results, and it simulates what is buffered).
            self.sim.observe_buffered(e);
        } else {
            if matches!(e.op, Op::Read | Op::Write) {
                let lines = e.block_range(self.full.line_bytes);
                self.line_accesses += lines.end - lines.start;
            }
            let (t, shift) = (self.threshold, self.unit_shift);
            self.sim
                .observe_filtered(e, |line| mix64(block_key(e.device, line >> shift)) <= t);
        }
    }

    /// The result, with counts scaled to the whole trace and the configuration of the full-size
    /// cache.
    pub fn finish(self) -> SimResult {
        let mut r = self.sim.finish();
        if self.rate < 1.0 && self.bias_correction {
            let expected = self.rate * self.line_accesses as f64;
            let writes_hit = self.full.mode != WriteMode::ReadOnly;
            correct_bias(&mut r.whole.counts, expected, writes_hit);
            if self.full.warmup_nanos == 0 {
                r.after_warmup.counts = r.whole.counts;
            }
        }
        if self.rate < 1.0 {
            let k = 1.0 / self.rate;
            let s = |n: u64| (n as f64 * k).round() as u64;
            let ops = |o: &OpCounts| OpCounts {
                requests: s(o.requests),
                request_hits: s(o.request_hits),
                bytes: s(o.bytes),
                lines: s(o.lines),
                line_hits: s(o.line_hits),
            };
            let counters = |c: &Counters| Counters {
                read: ops(&c.read),
                write: ops(&c.write),
                discards: s(c.discards),
                flushes: s(c.flushes),
                backend: BackendCounts {
                    read_ops: s(c.backend.read_ops),
                    read_bytes: s(c.backend.read_bytes),
                    write_ops: s(c.backend.write_ops),
                    write_bytes: s(c.backend.write_bytes),
                },
                fills: s(c.fills),
                fill_reads: s(c.fill_reads),
                bypassed_lines: s(c.bypassed_lines),
                evictions: s(c.evictions),
                dirty_evictions: s(c.dirty_evictions),
                invalidations: s(c.invalidations),
            };
            r.whole = Summary::of(counters(&r.whole.counts));
            r.after_warmup = Summary::of(counters(&r.after_warmup.counts));
            r.final_flush_lines = s(r.final_flush_lines);
            r.final_flush_bytes = s(r.final_flush_bytes);
            r.occupancy_lines = s(r.occupancy_lines).min(self.full.capacity_lines);
            for b in &mut r.bins {
                b.requests = s(b.requests);
                b.lines = s(b.lines);
                b.line_hits = s(b.line_hits);
                b.fills = s(b.fills);
                b.occupancy_lines = s(b.occupancy_lines).min(self.full.capacity_lines);
            }
        }
        r.capacity_bytes = self.full.capacity_lines * self.full.line_bytes;
        r.config = self.full;
        r
    }
}

/// Adds the difference between `expected` sampled line accesses and the counted ones to the
/// line accesses of reads and writes, in proportion to their lines, and to their line hits,
/// except to the writes' when writes never hit (a read-only cache: its hottest lines' writes
/// miss like any other).
fn correct_bias(c: &mut Counters, expected: f64, writes_hit: bool) {
    let counted = (c.read.lines + c.write.lines) as f64;
    if counted <= 0.0 || expected <= 0.0 {
        return;
    }
    let surplus = expected - counted;
    for (o, hit) in [(&mut c.read, true), (&mut c.write, writes_hit)] {
        let d = surplus * o.lines as f64 / counted;
        let lines = (o.lines as f64 + d).max(0.0);
        let hits = (o.line_hits as f64 + if hit { d } else { 0.0 }).clamp(0.0, lines);
        o.lines = lines.round() as u64;
        o.line_hits = hits.round() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read-only cache's writes never hit: the bias correction adds the writes' share of the
    /// surplus to their accesses and none to their hits.
    #[test]
    fn the_correction_gives_a_read_only_caches_writes_no_hits() {
        let mut c = Counters::default();
        c.read.lines = 300;
        c.read.line_hits = 30;
        c.write.lines = 100;
        let mut wt = c;
        correct_bias(&mut wt, 500.0, true);
        assert_eq!((wt.read.lines, wt.read.line_hits), (375, 105));
        assert_eq!((wt.write.lines, wt.write.line_hits), (125, 25));
        correct_bias(&mut c, 500.0, false);
        assert_eq!((c.read.lines, c.read.line_hits), (375, 105));
        assert_eq!((c.write.lines, c.write.line_hits), (125, 0));
    }
    use crate::cache::PolicyKind;
    use crate::mrc::synth::{Rng, Zipf};

    fn trace(n: u64) -> Vec<IoEvent> {
        let mut rng = Rng::new(9);
        let zipf = Zipf::new(400_000, 0.8);
        (0..n)
            .map(|i| IoEvent {
                time_nanos: i * 1000,
                device: 0,
                offset_bytes: zipf.sample(&mut rng) * 4096,
                len_bytes: 4096,
                op: if rng.below(4) == 0 {
                    Op::Write
                } else {
                    Op::Read
                },
                latency_nanos: None,
                pid: None,
            })
            .collect()
    }

    fn run(config: &SimConfig, max_lines: u64, events: &[IoEvent]) -> (SimResult, f64) {
        let mut s = SampledSimulator::new(config, max_lines).expect("valid");
        events.iter().for_each(|e| s.observe(e));
        let rate = s.rate();
        (s.finish(), rate)
    }

    /// Under smq admission the sample keeps whole regions: a sampled cache promotes about as
    /// many lines (scaled back) as the full one and estimates its hit ratio, where a sample of
    /// single lines (a region's heat cut by the rate) promoted far fewer.
    #[test]
    fn a_sample_under_smq_keeps_whole_regions_and_their_heat() {
        let events = trace(300_000);
        let mut config = SimConfig::new(PolicyKind::Lru, 20_000, 4096);
        config.admission = Admission::Smq;
        assert_eq!(sample_unit_lines(&config), SMQ_REGION_LINES);
        let (exact, _) = run(&config, u64::MAX, &events);
        let sampled = |unit_lines: u64| {
            let mut s = SampledSimulator::with_rate(&config, 0.125)
                .expect("valid")
                .with_bias_correction();
            s.unit_shift = unit_lines.trailing_zeros();
            events.iter().for_each(|e| s.observe(e));
            s.finish()
        };
        let (regions, lines) = (sampled(SMQ_REGION_LINES), sampled(1));
        let fills = |r: &SimResult| r.whole.counts.fills as f64 / exact.whole.counts.fills as f64;
        let hit = |r: &SimResult| r.whole.ratios.line_hit_ratio.unwrap_or(0.0);
        eprintln!(
            "fills: regions {:.3}, lines {:.3} of exact; hit {:.4} / {:.4} vs {:.4}",
            fills(&regions),
            fills(&lines),
            hit(&regions),
            hit(&lines),
            hit(&exact)
        );
        assert!((fills(&regions) - 1.0).abs() < 0.15);
        assert!((hit(&regions) - hit(&exact)).abs() < 0.02);
        assert!(
            fills(&lines) < 0.8,
            "a sample of lines loses the regions' heat"
        );
        // Other admission rules sample lines.
        assert_eq!(
            sample_unit_lines(&SimConfig::new(PolicyKind::Lru, 10, 4096)),
            1
        );
    }

    #[test]
    fn small_caches_are_simulated_exactly() {
        let events = trace(50_000);
        let config = SimConfig::new(PolicyKind::Lru, 10_000, 4096);
        let (sampled, rate) = run(&config, 10_000, &events);
        assert_eq!(rate, 1.0);
        let exact = crate::cache::sim::simulate(&config, &events).expect("valid");
        assert_eq!(sampled, exact);
    }

    #[test]
    fn a_sampled_large_cache_estimates_the_exact_one() {
        let events = trace(600_000);
        for policy in [PolicyKind::Lru, PolicyKind::Arc, PolicyKind::S3Fifo] {
            let config = SimConfig::new(policy, 120_000, 4096);
            let exact = crate::cache::sim::simulate(&config, &events).expect("valid");
            let (est, rate) = run(&config, 12_000, &events);
            assert!(rate > 0.09 && rate < 0.11, "{rate}");
            assert_eq!(est.config, config);
            assert_eq!(est.capacity_bytes, exact.capacity_bytes);
            let h = |r: &SimResult| r.whole.ratios.line_hit_ratio.expect("lines");
            assert!(
                (h(&est) - h(&exact)).abs() < 0.02,
                "{policy:?}: sampled {} exact {}",
                h(&est),
                h(&exact)
            );
            // Scaled counts land near the trace's totals.
            let lines = est.whole.counts.read.lines + est.whole.counts.write.lines;
            let share = lines as f64 / events.len() as f64;
            assert!((share - 1.0).abs() < 0.05, "{policy:?}: {share}");
            assert!(est.memory_bytes < exact.memory_bytes / 4);
        }
    }
}
