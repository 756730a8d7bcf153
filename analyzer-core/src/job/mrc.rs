//! The miss-ratio curve of one policy over many sizes: exact LRU stack distances, SHARDS, or
//! MiniSim (any policy). Sizes are a count (evenly spaced up to the footprint) or a list of
//! sizes and shares of the footprint; every share is of the same footprint, the distinct lines
//! the trace touches, whatever the policy or method.

use serde::{Deserialize, Serialize};

use super::{CacheSize, Job, JobError, LineFootprint, WindowFilter, WindowNanos};
use crate::cache::PolicyKind;
use crate::mrc::minisim::{MiniSim, MiniSimConfig, MiniSimFuture};
use crate::mrc::shards::ShardsMode;
use crate::mrc::{linear_sizes, LruMrc, Method, MrcReport, SizeSpec};
use crate::{Diagnostics, IoEvent, TraceHeader};

/// The sizes of a curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sizes {
    /// This many sizes evenly spaced up to the footprint.
    Count(u32),
    /// These sizes (percentages of the footprint may go up to 1000%).
    List(Vec<CacheSize>),
}

impl Sizes {
    /// `64`, or `1GiB,2GiB,10%`.
    pub fn parse(text: &str) -> Result<Sizes, JobError> {
        let t = text.trim();
        if let Ok(n) = t.parse::<u32>() {
            if n == 0 {
                return Err(JobError::invalid("sizes 0", "at least one size is needed"));
            }
            return Ok(Sizes::Count(n));
        }
        let items = t
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                let s = s.trim();
                match s.strip_suffix('%') {
                    Some(p) => match p.trim().parse::<f64>() {
                        Ok(v) if v > 0.0 && v <= 1000.0 => Ok(CacheSize::FootprintPercent(v)),
                        _ => Err(JobError::invalid(
                            format!("size {s:?}"),
                            "percentages of the footprint go from 0 to 1000%",
                        )),
                    },
                    None => CacheSize::parse(s),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        if items.is_empty() {
            return Err(JobError::invalid(
                "sizes",
                "a count (64) or a list like 1GiB,2GiB,10%",
            ));
        }
        Ok(Sizes::List(items))
    }

    fn needs_footprint(&self) -> bool {
        match self {
            Sizes::Count(_) => true,
            Sizes::List(v) => v.iter().any(|s| s.needs_footprint()),
        }
    }

    fn lines(&self, footprint_lines: u64, line_bytes: u64) -> SizeSpec {
        match self {
            Sizes::Count(n) => SizeSpec::Count(*n),
            Sizes::List(v) => SizeSpec::Lines(
                v.iter()
                    .map(|s| match *s {
                        CacheSize::Bytes(b) => b.div_ceil(line_bytes).max(1),
                        CacheSize::FootprintPercent(p) => {
                            ((footprint_lines as f64 * p / 100.0).round() as u64).max(1)
                        }
                    })
                    .collect(),
            ),
        }
    }
}

/// What curve to compute.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MrcRequest {
    pub policy: String,
    /// `exact`, `shards` or `minisim`; `None`: exact for LRU, MiniSim otherwise.
    #[serde(default)]
    pub method: Option<String>,
    pub sizes: Sizes,
    pub line_bytes: u64,
    /// SHARDS: a fixed sampling rate instead of the fixed-size sample.
    #[serde(default)]
    pub rate: Option<f64>,
    /// SHARDS: the fixed-size sample, in lines.
    pub sample_lines: u64,
    /// MiniSim: the lowest sampling rate of any miniature.
    pub minisim_rate: f64,
    /// MiniSim: the smallest miniature, in lines.
    pub minisim_lines: u64,
    /// MiniSim: a bound on the work, in simulated passes over the trace (the miniatures' rates
    /// summed, `MiniSimConfig::max_passes`); `minisim_lines` is lowered until it fits.
    #[serde(default)]
    pub minisim_max_passes: Option<f64>,
    #[serde(default)]
    pub window_nanos: WindowNanos,
}

impl MrcRequest {
    /// LRU, 64 sizes, 4 KiB lines, the default samples.
    pub fn new(policy: &str) -> MrcRequest {
        MrcRequest {
            policy: policy.into(),
            method: None,
            sizes: Sizes::Count(64),
            line_bytes: 4096,
            rate: None,
            sample_lines: 65536,
            minisim_rate: MiniSimConfig::DEFAULT_BASE_RATE,
            minisim_lines: MiniSimConfig::DEFAULT_MIN_SAMPLED_LINES,
            minisim_max_passes: None,
            window_nanos: None,
        }
    }
}

enum Stage {
    Lru(LruMrc),
    Footprint(LineFootprint),
    Future(MiniSimConfig, MiniSimFuture),
    Mini(MiniSim),
    Empty,
}

/// The curve job.
pub struct Mrc {
    request: MrcRequest,
    policy: PolicyKind,
    passes: usize,
    stage: Stage,
    window: WindowFilter,
    header: TraceHeader,
    footprint_lines: u64,
}

impl Mrc {
    pub fn new(request: MrcRequest) -> Result<Mrc, JobError> {
        let policy = super::parse_policy(&request.policy)?;
        let method = match &request.method {
            Some(m) => Method::from_name(m).ok_or_else(|| JobError::UnknownName {
                what: "method",
                name: m.clone(),
                expected: "exact, shards, minisim".into(),
            })?,
            None if policy == PolicyKind::Lru => Method::Exact,
            None => Method::Minisim,
        };
        if method != Method::Minisim && policy != PolicyKind::Lru {
            return Err(JobError::invalid(
                format!("method {}", method.name()),
                format!(
                    "it computes LRU curves only; use --method minisim for {}",
                    policy.name()
                ),
            ));
        }
        // A setting of another method would change nothing: refused, not ignored.
        if request.rate.is_some() && method != Method::Shards {
            return Err(JobError::invalid(
                format!("method {}", method.name()),
                "a sampling rate is SHARDS' (--method shards); this method does not sample",
            ));
        }
        if request.minisim_max_passes.is_some() && method != Method::Minisim {
            return Err(JobError::invalid(
                format!("method {}", method.name()),
                "a bound on the passes is MiniSim's (--method minisim)",
            ));
        }
        if let Some(p) = request.minisim_max_passes {
            if !(p.is_finite() && p > 0.0) {
                return Err(JobError::invalid(
                    format!("minisim max passes {p}"),
                    "a bound on the work is a number of passes above 0",
                ));
            }
        }
        let line = request.line_bytes;
        if !line.is_power_of_two() || !(4096..=1 << 20).contains(&line) {
            return Err(crate::cache::ConfigError::LineSize(line).into());
        }
        let (stage, passes) = match method {
            Method::Exact => (Stage::Lru(LruMrc::exact(line)), 1),
            Method::Shards => {
                let mode = match request.rate {
                    Some(rate) if rate > 0.0 && rate <= 1.0 => ShardsMode::FixedRate { rate },
                    Some(rate) => {
                        return Err(JobError::invalid(
                            format!("rate {rate}"),
                            "a sampling rate is in (0, 1]",
                        ))
                    }
                    None => ShardsMode::FixedSize {
                        max_lines: request.sample_lines.max(1),
                    },
                };
                (Stage::Lru(LruMrc::shards(line, mode)), 1)
            }
            Method::Minisim => {
                let passes = 1
                    + usize::from(request.sizes.needs_footprint())
                    + usize::from(policy.needs_future());
                let stage = if request.sizes.needs_footprint() {
                    Stage::Footprint(LineFootprint::new(line))
                } else {
                    Stage::Empty
                };
                (stage, passes)
            }
        };
        let mut job = Mrc {
            window: WindowFilter::new(request.window_nanos),
            request,
            policy,
            passes,
            stage,
            header: TraceHeader::default(),
            footprint_lines: 0,
        };
        if matches!(job.stage, Stage::Empty) {
            job.next_minisim_stage()?;
        }
        Ok(job)
    }

    fn minisim_config(&self) -> MiniSimConfig {
        let line = self.request.line_bytes;
        let sizes = match self.request.sizes.lines(self.footprint_lines, line) {
            SizeSpec::Count(n) => linear_sizes(self.footprint_lines, n),
            SizeSpec::Lines(v) => v,
        };
        let mut config = MiniSimConfig::new(self.policy, line, sizes);
        config.base_rate = self.request.minisim_rate.clamp(1e-9, 1.0);
        config.min_sampled_lines = self.request.minisim_lines.max(1);
        config.max_passes = self.request.minisim_max_passes;
        config
    }

    fn next_minisim_stage(&mut self) -> Result<(), JobError> {
        let stage = std::mem::replace(&mut self.stage, Stage::Empty);
        self.stage = match stage {
            Stage::Footprint(f) => {
                self.footprint_lines = f.lines().0;
                if self.footprint_lines == 0 {
                    return Err(JobError::invalid(
                        "sizes",
                        "the trace has no reads or writes to size a cache for",
                    ));
                }
                self.minisim_start()?
            }
            Stage::Empty => self.minisim_start()?,
            Stage::Future(config, future) => Stage::Mini(MiniSim::with_future(config, future)?),
            s => s,
        };
        Ok(())
    }

    fn minisim_start(&self) -> Result<Stage, JobError> {
        let config = self.minisim_config();
        Ok(if self.policy.needs_future() {
            let future = MiniSimFuture::new(&config);
            Stage::Future(config, future)
        } else {
            Stage::Mini(MiniSim::new(config)?)
        })
    }
}

impl Job for Mrc {
    type Output = MrcReport;

    fn passes(&self) -> usize {
        self.passes
    }

    fn begin_pass(&mut self, _pass: usize) {
        self.window.reset();
    }

    fn observe(&mut self, e: &IoEvent) {
        if !self.window.admits(e) {
            return;
        }
        match &mut self.stage {
            Stage::Lru(m) => m.observe(e),
            Stage::Footprint(f) => f.observe(e),
            Stage::Future(_, f) => f.observe(e),
            Stage::Mini(m) => m.observe(e),
            Stage::Empty => {}
        }
    }

    fn observe_batch(&mut self, events: &[IoEvent]) {
        match &mut self.stage {
            // The footprint pass reads its table's slots ahead (no window: every event counts).
            Stage::Footprint(f) if self.window.is_whole() => f.observe_batch(events),
            _ => {
                for e in events {
                    self.observe(e);
                }
            }
        }
    }

    fn end_pass(&mut self, header: &TraceHeader, _: &Diagnostics) -> Result<(), JobError> {
        self.header = header.clone();
        if matches!(self.stage, Stage::Footprint(_) | Stage::Future(..)) {
            self.next_minisim_stage()?;
        }
        Ok(())
    }

    fn finish(self) -> Result<MrcReport, JobError> {
        match self.stage {
            Stage::Lru(m) => {
                let spec = self
                    .request
                    .sizes
                    .lines(m.footprint_lines(), self.request.line_bytes);
                Ok(m.finish(&spec, &self.header))
            }
            Stage::Mini(m) => Ok(m.finish(&self.header)),
            _ => Err(JobError::invalid("curve", "the trace was not read")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrc::synth;

    #[test]
    fn sizes_parse() {
        assert_eq!(Sizes::parse("64"), Ok(Sizes::Count(64)));
        assert_eq!(
            Sizes::parse("1GiB, 2GiB,10%"),
            Ok(Sizes::List(vec![
                CacheSize::Bytes(1 << 30),
                CacheSize::Bytes(2 << 30),
                CacheSize::FootprintPercent(10.0)
            ]))
        );
        assert!(Sizes::parse("0").is_err());
        assert!(Sizes::parse("lots").is_err());
        assert!(Sizes::parse("1001%").is_err());
        let s = Sizes::parse("8KiB,50%").map(|s| s.lines(1000, 4096));
        assert_eq!(s, Ok(SizeSpec::Lines(vec![2, 500])));
    }

    /// Another method's setting is refused, naming the method that takes it.
    #[test]
    fn settings_of_another_method_are_refused() {
        let with = |method: &str, rate: Option<f64>, passes: Option<f64>| {
            Mrc::new(MrcRequest {
                method: Some(method.into()),
                rate,
                minisim_max_passes: passes,
                ..MrcRequest::new("lru")
            })
            .map(|_| ())
            .map_err(|e| e.to_string())
        };
        assert!(with("exact", Some(0.01), None).is_err_and(|e| e.contains("SHARDS")));
        assert!(with("minisim", Some(0.01), None).is_err_and(|e| e.contains("SHARDS")));
        assert!(with("exact", None, Some(2.0)).is_err_and(|e| e.contains("MiniSim")));
        assert!(with("shards", Some(0.01), None).is_ok());
        assert!(with("minisim", None, Some(2.0)).is_ok());
        // Without a method, LRU's is exact: a rate is refused there too.
        let auto = MrcRequest {
            rate: Some(0.01),
            ..MrcRequest::new("lru")
        };
        assert!(Mrc::new(auto).is_err());
    }

    /// 10% means 10% of the same footprint (the distinct lines touched) for every policy and
    /// method: ARC's MiniSim curve and LRU's exact curve size 10% alike.
    #[test]
    fn a_percentage_is_of_the_same_footprint_for_every_policy() {
        let events: Vec<IoEvent> = synth::Synthetic::new(synth::SyntheticConfig {
            requests: 30_000,
            zipf_lines: 20_000,
            ..synth::SyntheticConfig::default()
        })
        .collect();
        let header = TraceHeader::new("synthetic");
        let mut footprint = LineFootprint::new(4096);
        events.iter().for_each(|e| footprint.observe(e));
        let (lines, exact) = footprint.lines();
        assert!(exact && lines > 1000, "{lines}");
        let size = |policy: &str| {
            let request = MrcRequest {
                sizes: Sizes::parse("10%").expect("sizes"),
                ..MrcRequest::new(policy)
            };
            let report =
                super::super::run_events(Mrc::new(request).expect("job"), &header, &events)
                    .expect("curve");
            report.points[0].size_lines
        };
        let want = ((lines as f64 * 0.1).round() as u64).max(1);
        assert_eq!(size("lru"), want);
        assert_eq!(size("arc"), want);
        assert_eq!(size("s3fifo"), want);
    }
}
