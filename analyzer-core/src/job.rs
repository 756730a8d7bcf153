//! The jobs: every answer Blocksight gives about a trace, defined once for both hosts.
//!
//! A job is a serde request, a type fed the trace's events pass by pass, and a serde result. The
//! CLI (`collector/src/cmd/*.rs`) turns its arguments into a request, feeds the events it reads
//! from files and prints the result (its `--json` is the result as it is); the web app's worker
//! turns its messages into the same requests, feeds the events it reads from `File.slice`
//! chunks and posts the same result. Neither host decides a default, parses a spec string or
//! combines engine parts: that happens here, so the two cannot disagree.
//!
//! - [`load`]: the first look (`stat`) and the workload analysis, optionally within a window;
//! - [`simulate`]: one cache or a grid of policies × sizes, plus MiniSim curves;
//! - [`mrc`]: a miss-ratio curve (exact, SHARDS or MiniSim);
//! - [`predict`]: RAID layouts × depths (or speed factors), with and without the SSD cache
//!   tier, the IOPS-vs-latency curve in the same pass;
//! - [`copy`]: the report's compact trace copy.
//!
//! The protocol ([`Job`]): a host asks [`Job::passes`], then for each pass calls
//! [`Job::begin_pass`], [`Job::observe`] for every event in trace order, and [`Job::end_pass`]
//! with the header and diagnostics as decoded; then [`Job::finish`]. A job that needs the
//! footprint (sizes given as percentages) or the future (Belady) asks for two passes.

pub mod copy;
pub mod load;
pub mod mrc;
pub mod predict;
pub mod simulate;

use serde::{Deserialize, Serialize};

use crate::cache::{Admission, CacheChoice, ConfigError, PolicyKind, Preset, SimConfig, WriteMode};
use crate::stat::Footprint;
use crate::{Diagnostics, IoEvent, Op, TraceHeader};
use simulate::model::KernelModel;

/// A job fed the events of a trace, pass by pass (see the module documentation).
pub trait Job {
    type Output;
    /// How many times the host reads the trace (1 or 2), fixed when the job is made.
    fn passes(&self) -> usize;
    /// Starts pass `pass` (0-based).
    fn begin_pass(&mut self, pass: usize);
    /// One event, in trace order.
    fn observe(&mut self, e: &IoEvent);
    /// Consecutive events, in trace order: [`Job::observe`] for each (hosts that read in
    /// batches call this, so that the per-event call is not through a trait object).
    fn observe_batch(&mut self, events: &[IoEvent]) {
        for e in events {
            self.observe(e);
        }
    }
    /// Ends the current pass; the header and diagnostics are the decoder's at the end of it.
    fn end_pass(&mut self, header: &TraceHeader, diagnostics: &Diagnostics)
        -> Result<(), JobError>;
    /// The result, after the last pass.
    fn finish(self) -> Result<Self::Output, JobError>;
}

/// Two jobs fed the same reads: each sees the passes it asks for (the longer one's extra passes
/// go to it alone), as `blocksight report` runs the load and the trace copy.
pub struct Pair<A, B> {
    pub a: A,
    pub b: B,
    pass: usize,
}

impl<A: Job, B: Job> Pair<A, B> {
    pub fn new(a: A, b: B) -> Pair<A, B> {
        Pair { a, b, pass: 0 }
    }
}

impl<A: Job, B: Job> Job for Pair<A, B> {
    type Output = (A::Output, B::Output);

    fn passes(&self) -> usize {
        self.a.passes().max(self.b.passes())
    }

    fn begin_pass(&mut self, pass: usize) {
        self.pass = pass;
        if pass < self.a.passes() {
            self.a.begin_pass(pass);
        }
        if pass < self.b.passes() {
            self.b.begin_pass(pass);
        }
    }

    fn observe(&mut self, e: &IoEvent) {
        if self.pass < self.a.passes() {
            self.a.observe(e);
        }
        if self.pass < self.b.passes() {
            self.b.observe(e);
        }
    }

    fn end_pass(
        &mut self,
        header: &TraceHeader,
        diagnostics: &Diagnostics,
    ) -> Result<(), JobError> {
        // Each job's pass count is read before its own end_pass (which may lower it).
        if self.pass < self.a.passes() {
            self.a.end_pass(header, diagnostics)?;
        }
        if self.pass < self.b.passes() {
            self.b.end_pass(header, diagnostics)?;
        }
        Ok(())
    }

    fn finish(self) -> Result<Self::Output, JobError> {
        Ok((self.a.finish()?, self.b.finish()?))
    }
}

/// Runs a job over events already in memory (tests, and hosts that hold a small trace).
pub fn run_events<J: Job>(
    mut job: J,
    header: &TraceHeader,
    events: &[IoEvent],
) -> Result<J::Output, JobError> {
    let diagnostics = Diagnostics::default();
    for pass in 0..job.passes() {
        job.begin_pass(pass);
        for e in events {
            job.observe(e);
        }
        job.end_pass(header, &diagnostics)?;
    }
    job.finish()
}

/// [`run_events`] with the events handed over as hosts that read in batches do: batches of
/// varied sizes (none empty), with single events through [`Job::observe`] between them.
#[cfg(test)]
pub(crate) fn run_in_batches<J: Job>(
    mut job: J,
    header: &TraceHeader,
    events: &[IoEvent],
) -> Result<J::Output, JobError> {
    let sizes = [1, 1000, 7, 4096, 31, 33, 1];
    let diagnostics = Diagnostics::default();
    for pass in 0..job.passes() {
        job.begin_pass(pass);
        let mut rest = events;
        for &size in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (batch, after) = rest.split_at(size.min(rest.len()));
            if let [one] = batch {
                job.observe(one);
            } else {
                job.observe_batch(batch);
            }
            rest = after;
        }
        job.end_pass(header, &diagnostics)?;
    }
    job.finish()
}

/// Why a job cannot run or could not finish. Every message names the setting or the limit.
///
/// A variant that wraps a model's own error repeats that error's message in its own (hosts
/// show `to_string()`), so the wrapped error is a field, not a `source`: a `{:#}` chain would
/// print it twice.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// A name that is not in its registry (`--policy nope`).
    #[error("unknown {what} {name:?}; expected one of: {expected}")]
    UnknownName {
        what: &'static str,
        name: String,
        expected: String,
    },
    /// A setting outside its range or of the wrong shape.
    #[error("{what}: {why}")]
    Invalid { what: String, why: String },
    /// The cache configuration the settings make.
    #[error("cache: {0}")]
    Cache(ConfigError),
    /// The array configuration the settings make.
    #[error(transparent)]
    Array(#[from] crate::array::ArrayError),
    /// A size that does not parse (`what` names the setting).
    #[error("{what}: {error}")]
    Size {
        what: &'static str,
        error: crate::units::SizeError,
    },
    /// An admission spec that does not parse.
    #[error("admission: {0}")]
    Admission(crate::cache::admission::AdmissionError),
    /// A bcache set-up the model refuses.
    #[error("bcache: {0}")]
    Bcache(crate::cache::bcache::BcacheConfigError),
    /// A dm-cache table the model refuses.
    #[error("dm-cache: {0}")]
    DmCache(crate::cache::dmcache::DmCacheConfigError),
    /// An md array the model refuses.
    #[error("md: {0}")]
    Md(crate::array::md::MdConfigError),
    /// A size relative to the footprint, on a trace without reads or writes.
    #[error("the trace has no reads or writes, so it has no footprint to take {percent}% of")]
    NoFootprint { percent: f64 },
    /// A bound on memory was reached (the browser's limits); the message says what to do.
    #[error("{0}")]
    Memory(String),
    /// The trace has changed between passes (a second read saw more requests).
    #[error("{0}")]
    Trace(String),
}

impl From<ConfigError> for JobError {
    fn from(e: ConfigError) -> JobError {
        JobError::Cache(e)
    }
}

impl JobError {
    pub(crate) fn invalid(what: impl Into<String>, why: impl Into<String>) -> JobError {
        JobError::Invalid {
            what: what.into(),
            why: why.into(),
        }
    }
}

/// Only the requests in `[start, end)` nanoseconds after the trace's first request (the web
/// app's brushed time window, the CLI's `--window`); `None` is the whole trace.
pub type WindowNanos = Option<(u64, u64)>;

/// Cuts a trace to a [`WindowNanos`]: the origin is the first event of each pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowFilter {
    window: WindowNanos,
    origin: Option<u64>,
}

impl WindowFilter {
    pub fn new(window: WindowNanos) -> WindowFilter {
        WindowFilter {
            window,
            origin: None,
        }
    }

    /// Forgets the origin (a new pass starts).
    pub fn reset(&mut self) {
        self.origin = None;
    }

    /// Whether there is no window (every event is admitted).
    pub fn is_whole(&self) -> bool {
        self.window.is_none()
    }

    /// Whether `e` is inside the window (always, without one).
    pub fn admits(&mut self, e: &IoEvent) -> bool {
        let Some((start, end)) = self.window else {
            return true;
        };
        let origin = *self.origin.get_or_insert(e.time_nanos);
        let t = e.time_nanos.saturating_sub(origin);
        (start..end).contains(&t)
    }

    /// The window in words, for the stated assumptions.
    pub fn describe(&self) -> Option<String> {
        self.window.map(|(a, b)| {
            format!(
                "only the requests from {} to {} after the trace's first request (the time window)",
                crate::units::duration(a),
                crate::units::duration(b)
            )
        })
    }
}

/// A cache size as users give it: bytes, or a share of the trace's footprint.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheSize {
    Bytes(u64),
    /// Percent (above 0, at most 100) of the distinct lines the trace touches.
    FootprintPercent(f64),
}

impl CacheSize {
    /// `200GiB`, `512M`, `4096`, or `10%`. The one parser of cache sizes.
    pub fn parse(text: &str) -> Result<CacheSize, JobError> {
        let t = text.trim();
        if let Some(p) = t.strip_suffix('%') {
            let pct: f64 = p.trim().parse().map_err(|_| {
                JobError::invalid(format!("cache size {text:?}"), "not a percentage like 10%")
            })?;
            if !(pct > 0.0 && pct <= 100.0) {
                return Err(JobError::invalid(
                    format!("cache size {text:?}"),
                    "the percentage must be above 0 and at most 100",
                ));
            }
            return Ok(CacheSize::FootprintPercent(pct));
        }
        crate::units::parse_size(t)
            .map(CacheSize::Bytes)
            .map_err(|error| JobError::Size {
                what: "cache size",
                error,
            })
    }

    /// A comma-separated list (`1%,5%,10GiB`), each item as [`CacheSize::parse`].
    pub fn parse_list(text: &str) -> Result<Vec<CacheSize>, JobError> {
        let v = text
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(CacheSize::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if v.is_empty() {
            return Err(JobError::invalid("cache size", "no size given"));
        }
        Ok(v)
    }

    pub fn needs_footprint(self) -> bool {
        matches!(self, CacheSize::FootprintPercent(_))
    }

    /// Lines of `line_bytes` (at least one); `footprint_lines` in lines of the same size.
    pub fn lines(self, line_bytes: u64, footprint_lines: Option<u64>) -> Result<u64, JobError> {
        match self {
            CacheSize::Bytes(b) => {
                if b < line_bytes {
                    return Err(JobError::invalid(
                        format!("cache size {}", crate::units::bytes(b)),
                        format!("smaller than one {} line", crate::units::bytes(line_bytes)),
                    ));
                }
                Ok(b / line_bytes.max(1))
            }
            CacheSize::FootprintPercent(percent) => match footprint_lines {
                Some(f) if f > 0 => Ok(((f as f64 * percent / 100.0).ceil() as u64).max(1)),
                _ => Err(JobError::NoFootprint { percent }),
            },
        }
    }

    /// `10%` or `1.5 GiB`.
    pub fn label(self) -> String {
        match self {
            CacheSize::Bytes(b) => crate::units::bytes(b),
            CacheSize::FootprintPercent(p) => format!("{p}%"),
        }
    }
}

/// The distinct lines of `line_bytes` that reads and writes touch (devices kept apart): exact
/// up to [`Footprint`]'s limit, then estimated by spatial sampling. The one footprint behind
/// every size given as a percentage, whatever the policy or method.
#[derive(Debug)]
pub struct LineFootprint {
    line_bytes: u64,
    set: Footprint,
    line_accesses: u64,
}

/// Lines counted exactly before [`LineFootprint`] samples (as `stat`'s footprint).
pub const FOOTPRINT_EXACT_LINES: usize = 4 << 20;

/// Events whose footprint slots [`LineFootprint::observe_batch`] reads ahead at once (the load
/// job's batch).
const FOOTPRINT_BATCH_EVENTS: usize = 32;

impl LineFootprint {
    pub fn new(line_bytes: u64) -> LineFootprint {
        LineFootprint {
            line_bytes: line_bytes.max(1),
            set: Footprint::new(FOOTPRINT_EXACT_LINES),
            line_accesses: 0,
        }
    }

    pub fn observe(&mut self, e: &IoEvent) {
        if matches!(e.op, Op::Read | Op::Write) && e.len_bytes > 0 {
            let lines = e.block_range(self.line_bytes);
            self.line_accesses += lines.end - lines.start;
            self.set.insert_blocks(e.device, lines);
        }
    }

    /// [`LineFootprint::observe`] for each of `events` in turn (the same count), 32 at a time
    /// after reading their first slots ahead, as `stat`'s footprint does: the table's cache
    /// misses then overlap.
    pub fn observe_batch(&mut self, events: &[IoEvent]) {
        for chunk in events.chunks(FOOTPRINT_BATCH_EVENTS) {
            for e in chunk {
                if matches!(e.op, Op::Read | Op::Write) {
                    self.set
                        .prefetch_blocks(e.device, e.block_range(self.line_bytes));
                }
            }
            for e in chunk {
                self.observe(e);
            }
        }
    }

    /// The lines of every read and write, counted once per access.
    pub fn line_accesses(&self) -> u64 {
        self.line_accesses
    }

    /// The line count, and whether it is exact.
    pub fn lines(&self) -> (u64, bool) {
        self.set.estimate()
    }
}

/// The SSD cache a job simulates, as both hosts describe it: a product preset (or none), then
/// explicit settings, then the size. Policy, line size and mode are always explicit here:
/// [`CacheParams::choose`] fills the ones a user left out from the preset (or the defaults of
/// [`CacheChoice`]), so there is one rule for every default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheParams {
    /// The cache's size in bytes (ignored when `footprint_percent` is set).
    pub size_bytes: u64,
    pub line_bytes: u64,
    /// A [`PolicyKind`] name.
    pub policy: String,
    /// A [`WriteMode`] name: `ro`, `wt`, `wa`, `wb`.
    pub mode: String,
    /// A product [`Preset`] name (`bcache`, ...); `None` for a custom cache. The preset brings
    /// its admission rule and sequential cutoff.
    #[serde(default)]
    pub preset: Option<String>,
    /// An explicit admission rule ([`Admission::parse`]: `always`, `nhit:N`, `smq`,
    /// `seqcut:BYTES`) replacing the preset's; `None` keeps the preset's (or `always`).
    #[serde(default)]
    pub admission: Option<String>,
    /// The size as a percentage of the trace's footprint (in lines of `line_bytes`) instead of
    /// `size_bytes`: the job measures the footprint in a first pass.
    #[serde(default)]
    pub footprint_percent: Option<f64>,
}

impl Default for CacheParams {
    /// No preset: [`CacheChoice`]'s defaults (lru, 4 KiB lines, write-through), size 0.
    fn default() -> Self {
        let c = CacheChoice::default().config(1);
        CacheParams {
            size_bytes: 0,
            line_bytes: c.line_bytes,
            policy: c.policy.name().into(),
            mode: c.mode.name().into(),
            preset: None,
            admission: None,
            footprint_percent: None,
        }
    }
}

impl CacheParams {
    /// The parameters from a user's partial choice: a preset, then explicit names; everything
    /// left out comes from the preset, else [`CacheChoice`]'s defaults. Names are checked.
    pub fn choose(
        preset: Option<&str>,
        policy: Option<&str>,
        line_bytes: Option<u64>,
        mode: Option<&str>,
        admission: Option<&str>,
        size: CacheSize,
    ) -> Result<CacheParams, JobError> {
        // A product name whose kernel model exists (`dm-cache`) is kept as given, so that a job
        // that can run the model sees it ([`CacheParams::product_model`]); its settings come
        // from the approximation the name also selects.
        let product = preset.filter(|p| KernelModel::from_preset(p).is_some());
        let preset = preset.map(parse_preset).transpose()?;
        let choice = CacheChoice {
            preset,
            policy: policy.map(parse_policy).transpose()?,
            line_bytes,
            mode: mode.map(parse_mode).transpose()?,
            admission: admission.map(parse_admission).transpose()?,
        };
        let c = choice.config(1);
        Ok(CacheParams {
            line_bytes: c.line_bytes,
            policy: c.policy.name().into(),
            mode: c.mode.name().into(),
            preset: product
                .map(|p| p.trim().to_ascii_lowercase())
                .or(preset.map(|p| p.name.to_string())),
            admission: admission.map(str::to_string),
            ..CacheParams::default()
        }
        .with_size(size))
    }

    /// The same cache at another size.
    pub fn with_size(self, size: CacheSize) -> CacheParams {
        match size {
            CacheSize::Bytes(b) => CacheParams {
                size_bytes: b,
                footprint_percent: None,
                ..self
            },
            CacheSize::FootprintPercent(p) => CacheParams {
                footprint_percent: Some(p),
                ..self
            },
        }
    }

    /// The size as given.
    pub fn size(&self) -> CacheSize {
        match self.footprint_percent {
            Some(p) => CacheSize::FootprintPercent(p),
            None => CacheSize::Bytes(self.size_bytes),
        }
    }

    /// The settings as the engine's [`CacheChoice`] (preset first, explicit settings override).
    pub fn choice(&self) -> Result<CacheChoice, JobError> {
        let preset = match self.preset.as_deref() {
            None | Some("") => None,
            Some(name) => Some(parse_preset(name)?),
        };
        let admission = match self.admission.as_deref() {
            None | Some("") => None,
            Some(a) => Some(parse_admission(a)?),
        };
        Ok(CacheChoice {
            preset,
            policy: Some(parse_policy(&self.policy)?),
            line_bytes: Some(self.line_bytes),
            mode: Some(parse_mode(&self.mode)?),
            admission,
        })
    }

    /// The kernel's own model the preset names (`dm-cache`, `bcache`), which a job runs where
    /// it can (the array replay's tier runs dm-cache's), else the approximation of that name.
    pub fn product_model(&self) -> Option<KernelModel> {
        self.preset.as_deref().and_then(KernelModel::from_preset)
    }

    /// The preset, when one is named.
    pub fn preset(&self) -> Result<Option<Preset>, JobError> {
        Ok(self.choice()?.preset)
    }

    /// Whether the size needs the footprint (a first pass).
    pub fn needs_footprint(&self) -> bool {
        self.footprint_percent.is_some()
    }

    /// The simulator's configuration, checked, for a footprint (in lines of this cache's line
    /// size) when the size is a percentage of it.
    pub fn sim_config(&self, footprint_lines: Option<u64>) -> Result<SimConfig, JobError> {
        let choice = self.choice()?;
        let line = choice.effective_line_bytes();
        if !line.is_power_of_two() || !(4096..=1 << 20).contains(&line) {
            return Err(ConfigError::LineSize(line).into());
        }
        let lines = self.size().lines(line, footprint_lines)?;
        let cfg = choice.config(lines);
        cfg.validate()?;
        Ok(cfg)
    }

    /// `lru over 4,096 lines of 64 KiB, write-through, admission always`.
    pub fn describe(cfg: &SimConfig) -> String {
        let mut admission = cfg.admission.label();
        if let Some(s) = cfg.sequential_cutoff_bytes {
            admission.push_str(&format!(" + sequential cutoff {}", crate::units::bytes(s)));
        }
        format!(
            "{} over {} lines of {}, {}, admission {}",
            cfg.policy.name(),
            crate::units::count(cfg.capacity_lines),
            crate::units::bytes(cfg.line_bytes),
            cfg.mode.name(),
            admission
        )
    }
}

fn names<T>(all: impl IntoIterator<Item = T>, name: impl Fn(&T) -> &'static str) -> String {
    all.into_iter()
        .map(|t| name(&t))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A policy name, checked.
pub fn parse_policy(name: &str) -> Result<PolicyKind, JobError> {
    PolicyKind::from_name(name).ok_or_else(|| JobError::UnknownName {
        what: "policy",
        name: name.into(),
        expected: names(PolicyKind::ALL, |p| p.name()),
    })
}

/// A write-mode name, checked.
pub fn parse_mode(name: &str) -> Result<WriteMode, JobError> {
    WriteMode::from_name(name).ok_or_else(|| JobError::UnknownName {
        what: "write mode",
        name: name.into(),
        expected: names(WriteMode::ALL, |m| m.name()),
    })
}

/// A preset name, checked.
pub fn parse_preset(name: &str) -> Result<Preset, JobError> {
    Preset::from_name(name).ok_or_else(|| JobError::UnknownName {
        what: "preset",
        name: name.into(),
        expected: names(Preset::ALL, |p| p.name),
    })
}

/// An admission spec, checked.
pub fn parse_admission(text: &str) -> Result<Admission, JobError> {
    Admission::parse(text).map_err(JobError::Admission)
}

/// A duration as users type it (`500ms`, `90s`, `10m`, `1h30m`, `2d`, or bare seconds), in
/// nanoseconds. Refuses what does not fit in 64-bit nanoseconds (about 584 years).
pub fn parse_duration(text: &str) -> Result<u64, JobError> {
    let bad = |why: String| JobError::invalid(format!("duration {text:?}"), why);
    let t = text.trim();
    if t.is_empty() {
        return Err(bad("empty".into()));
    }
    let mut total = 0f64;
    if let Ok(secs) = t.parse::<f64>() {
        total = secs;
    } else {
        let mut rest = t;
        while !rest.is_empty() {
            let split = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let (num, after) = rest.split_at(split);
            let unit_len = after
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(after.len());
            let (unit, next) = after.split_at(unit_len);
            let v: f64 = num
                .parse()
                .map_err(|_| bad("not a duration like 90s, 10m or 1h30m".into()))?;
            let mult = match unit {
                "ns" => 1e-9,
                "us" | "µs" => 1e-6,
                "ms" => 1e-3,
                "s" | "" => 1.0,
                "m" | "min" => 60.0,
                "h" => 3600.0,
                "d" => 86400.0,
                _ => return Err(bad(format!("unknown unit {unit:?} (use ms, s, m, h, d)"))),
            };
            total += v * mult;
            rest = next;
        }
    }
    let nanos = total * 1e9;
    if !nanos.is_finite() || nanos < 0.0 || nanos >= u64::MAX as f64 {
        return Err(bad("out of range (at most about 584 years)".into()));
    }
    Ok(nanos as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_parse_once_for_every_job() {
        assert_eq!(
            CacheSize::parse("10%"),
            Ok(CacheSize::FootprintPercent(10.0))
        );
        assert_eq!(CacheSize::parse("4KiB"), Ok(CacheSize::Bytes(4096)));
        assert!(CacheSize::parse("0%").is_err());
        assert!(CacheSize::parse("101%").is_err());
        assert!(CacheSize::parse("x%").is_err());
        assert_eq!(
            CacheSize::parse_list("1%, 5%,1GiB"),
            Ok(vec![
                CacheSize::FootprintPercent(1.0),
                CacheSize::FootprintPercent(5.0),
                CacheSize::Bytes(1 << 30)
            ])
        );
        assert_eq!(
            CacheSize::FootprintPercent(10.0).lines(4096, Some(95)),
            Ok(10)
        );
        assert_eq!(
            CacheSize::FootprintPercent(10.0).lines(4096, Some(0)),
            Err(JobError::NoFootprint { percent: 10.0 })
        );
        assert!(CacheSize::Bytes(100).lines(4096, None).is_err());
    }

    /// Mixed reads, writes, discards, flushes and zero-length requests over a skewed range.
    fn mixed_events(n: u64) -> Vec<IoEvent> {
        (0..n)
            .map(|i| {
                let r = crate::hash::mix64(i);
                IoEvent {
                    time_nanos: i * 1000,
                    device: (r % 2) as u32,
                    offset_bytes: ((r >> 8) % (1 + (r >> 40) % 50_000)) * 4096 + (r >> 60),
                    len_bytes: [0, 512, 4096, 65536, 8192][(r >> 20) as usize % 5],
                    op: [Op::Read, Op::Write, Op::Read, Op::Discard, Op::Flush]
                        [(r >> 30) as usize % 5],
                    latency_nanos: None,
                    pid: None,
                }
            })
            .collect()
    }

    /// The footprint pass read in batches (reading its slots ahead) counts what it counts
    /// event by event, and so do the jobs whose first pass it is.
    #[test]
    fn footprint_batches_count_what_single_events_count() {
        let events = mixed_events(40_000);
        let mut one = LineFootprint::new(4096);
        events.iter().for_each(|e| one.observe(e));
        let mut batched = LineFootprint::new(4096);
        for chunk in events.chunks(777) {
            batched.observe_batch(chunk);
        }
        assert_eq!(batched.lines(), one.lines());
        assert_eq!(batched.line_accesses(), one.line_accesses());
        assert!(one.lines().0 > 10_000);

        let mut header = TraceHeader::new("test");
        header.device_index("a");
        header.device_index("b");
        for window_nanos in [None, Some((2_000_000, 30_000_000))] {
            let mut request = simulate::SimulateRequest::new(CacheParams {
                footprint_percent: Some(10.0),
                ..CacheParams::default()
            });
            request.window_nanos = window_nanos;
            let job = || simulate::Simulate::new(request.clone()).expect("simulate");
            assert_eq!(
                run_in_batches(job(), &header, &events),
                run_events(job(), &header, &events),
                "simulate {window_nanos:?}"
            );
            let mut mrc = mrc::MrcRequest::new("arc");
            mrc.sizes = mrc::Sizes::parse("10%,50%").expect("sizes");
            mrc.window_nanos = window_nanos;
            let job = || mrc::Mrc::new(mrc.clone()).expect("mrc");
            assert_eq!(
                run_in_batches(job(), &header, &events),
                run_events(job(), &header, &events),
                "mrc {window_nanos:?}"
            );
        }
    }

    #[test]
    fn wrapped_errors_keep_their_variant_and_print_once() {
        use crate::cache::admission::AdmissionError;
        use crate::units::SizeError;
        assert!(matches!(
            CacheSize::parse("12 parsecs"),
            Err(JobError::Size {
                what: "cache size",
                error: SizeError::UnknownUnit { .. }
            })
        ));
        assert!(matches!(
            parse_admission("nhit:0"),
            Err(JobError::Admission(AdmissionError::NHitZero { .. }))
        ));
        // The wrapped message is part of the variant's own, so it is not also a `source`
        // (an error chain printed with `{:#}` would show it twice).
        let e = JobError::from(ConfigError::LineSize(3000));
        assert_eq!(
            e.to_string(),
            "cache: line size 3000 bytes is not a power of two between 4 KiB and 1 MiB"
        );
        assert!(std::error::Error::source(&e).is_none());
        let e = parse_admission("seqcut:x").expect_err("not a size");
        assert!(std::error::Error::source(&e).is_none());
        assert_eq!(
            e.to_string(),
            "admission: \"seqcut:x\": \"x\" is not a size like 64KiB or 200GiB"
        );
    }

    #[test]
    fn defaults_come_from_the_preset_then_cache_choice() {
        let plain = CacheParams::choose(None, None, None, None, None, CacheSize::Bytes(1 << 30))
            .expect("valid");
        assert_eq!(
            (plain.line_bytes, plain.policy.as_str(), plain.mode.as_str()),
            (4096, "lru", "wt")
        );
        assert_eq!(
            plain,
            CacheParams::default().with_size(CacheSize::Bytes(1 << 30))
        );
        let cc = CacheParams::choose(
            Some("cachecade1"),
            None,
            None,
            None,
            None,
            CacheSize::Bytes(1 << 30),
        )
        .expect("valid");
        assert_eq!((cc.line_bytes, cc.mode.as_str()), (65536, "ro"));
        let cfg = cc.sim_config(None).expect("config");
        assert_eq!(
            cfg,
            Preset::from_name("cachecade1")
                .expect("preset")
                .config((1 << 30) / 65536)
        );
        let err = CacheParams::choose(None, Some("nope"), None, None, None, CacheSize::Bytes(1))
            .expect_err("unknown");
        assert!(err.to_string().contains("unknown policy \"nope\""), "{err}");
    }

    #[test]
    fn durations_refuse_what_does_not_fit() {
        assert_eq!(parse_duration("90s"), Ok(90_000_000_000));
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(parse_duration("2"), Ok(2_000_000_000));
        assert!(parse_duration("5 fortnights").is_err());
        assert!(parse_duration("99999999999h").is_err());
        assert!(parse_duration("-1").is_err());
    }

    #[test]
    fn windows_cut_from_the_first_request_of_each_pass() {
        let ev = |t| IoEvent {
            time_nanos: t,
            device: 0,
            offset_bytes: 0,
            len_bytes: 4096,
            op: Op::Read,
            latency_nanos: None,
            pid: None,
        };
        let mut w = WindowFilter::new(Some((10, 20)));
        let kept: Vec<u64> = [100, 105, 110, 119, 120]
            .into_iter()
            .filter(|&t| w.admits(&ev(t)))
            .collect();
        assert_eq!(kept, vec![110, 119]);
        w.reset();
        assert!(!w.admits(&ev(500)));
        assert!(w.admits(&ev(515)));
    }
}
