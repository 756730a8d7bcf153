//! The SSD-cache simulation: one cache, or a grid of policies × sizes, over one read of the
//! trace (every simulator is fed the same decoded events), plus, on request, MiniSim hit-ratio
//! curves of several policies from the same pass. Sizes may be shares of the footprint; the
//! footprint (and Belady's future) come from a first pass.
//!
//! Native hosts run the grid's cells on several threads with [`Simulate::with_threads`]
//! (feature `threads`; the module `threads`): the host reads and calls `observe` as for any
//! job, and the last pass's events go in batches to worker threads that each run some of the
//! cells. Every cell sees the same events in the same order as it would alone, so its result
//! is exactly the single-cell run's.
//!
//! The kernels' own caches (`bcache-kernel`, `dm-cache-smq`) are separate models with their
//! own counters: [`model`].

pub mod model;
#[cfg(feature = "threads")]
pub mod threads;

use serde::{Deserialize, Serialize};

use super::{CacheParams, CacheSize, Job, JobError, LineFootprint, WindowFilter, WindowNanos};
use crate::cache::{
    NextUse, NextUseBuilder, PolicyKind, Preset, SampledSimulator, SimConfig, SimResult, Simulator,
    WriteMode,
};
use crate::mrc::minisim::{MiniSim, MiniSimConfig};
use crate::mrc::{linear_sizes, MrcReport};
use crate::{Diagnostics, IoEvent, TraceHeader};

/// Policies whose MiniSim curves are drawn (with the chosen one, when it is another online
/// policy).
pub const CURVE_POLICIES: [&str; 4] = ["fifo", "arc", "s3fifo", "lirs"];

/// Cache sizes per curve, evenly spaced up to the footprint.
pub const CURVE_SIZES: u32 = 16;

/// The curves' work bound of an interactive first answer, in simulated passes over the trace
/// per policy ([`SimulateRequest::curve_passes`]).
pub const INTERACTIVE_CURVE_PASSES: f64 = MiniSimConfig::INTERACTIVE_PASSES;

/// Most cells of a grid.
pub const MAX_CELLS: usize = 256;

/// Events per batch of a grid: 16 Ki events of 40 bytes (640 KB). A grid's cells run over a
/// batch one after the other (each cell's tables stay in the CPU cache for the whole batch,
/// where event by event every cell evicted the others'), and worker threads get the same
/// batches; large enough that handing one over costs nothing beside simulating it.
pub const BATCH_EVENTS: usize = 1 << 14;

/// What to simulate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimulateRequest {
    /// The cache (its size is the grid's only size when `sizes` is empty).
    pub cache: CacheParams,
    /// The trace's footprint in lines of `cache.line_bytes`, when the host knows it already
    /// (the web app, from its analysis): no first pass for percentages or curves.
    #[serde(default)]
    pub footprint_lines: Option<u64>,
    /// Also compute the policies' curves (they do not depend on the size).
    #[serde(default)]
    pub with_curves: bool,
    /// A bound on each curve's work, in simulated passes over the trace
    /// (`MiniSimConfig::max_passes`): the quick, more sampled curves of an interactive first
    /// answer ([`INTERACTIVE_CURVE_PASSES`]). `None`: MiniSim's default miniatures.
    #[serde(default)]
    pub curve_passes: Option<f64>,
    /// Only `[start, end)` nanoseconds after the first request.
    #[serde(default)]
    pub window_nanos: WindowNanos,
    /// The grid's policies (names); empty: the cache's own.
    #[serde(default)]
    pub policies: Vec<String>,
    /// The grid's sizes; empty: the cache's own.
    #[serde(default)]
    pub sizes: Vec<CacheSize>,
    /// Leading time excluded from the after-warm-up figures.
    #[serde(default)]
    pub warmup_nanos: u64,
    /// Time bins of the hits-and-fills series.
    #[serde(default = "default_time_bins")]
    pub time_bins: usize,
}

fn default_time_bins() -> usize {
    100
}

impl SimulateRequest {
    /// One cache, the whole trace, no curves.
    pub fn new(cache: CacheParams) -> SimulateRequest {
        SimulateRequest {
            cache,
            footprint_lines: None,
            with_curves: false,
            curve_passes: None,
            window_nanos: None,
            policies: Vec::new(),
            sizes: Vec::new(),
            warmup_nanos: 0,
            time_bins: default_time_bins(),
        }
    }

    fn grid(&self) -> Vec<CacheParams> {
        let policies = if self.policies.is_empty() {
            vec![self.cache.policy.clone()]
        } else {
            self.policies.clone()
        };
        let sizes = if self.sizes.is_empty() {
            vec![self.cache.size()]
        } else {
            self.sizes.clone()
        };
        let mut v = Vec::new();
        for p in &policies {
            for &s in &sizes {
                v.push(
                    CacheParams {
                        policy: p.clone(),
                        ..self.cache.clone()
                    }
                    .with_size(s),
                );
            }
        }
        v
    }
}

/// One cell of the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimRun {
    pub policy: String,
    pub size: CacheSize,
    pub preset: Option<String>,
    pub result: SimResult,
    /// The spatial sampling rate when the cache was too large to simulate exactly (the counts
    /// are then estimates scaled to the whole trace); `None` when exact.
    #[serde(default)]
    pub sampled_rate: Option<f64>,
    pub assumptions: Vec<String>,
}

/// What `blocksight simulate --json` prints and the worker posts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimulateResult {
    pub request: SimulateRequest,
    /// The footprint in lines of the cache's line size, when it was needed or given.
    pub footprint_lines: Option<u64>,
    /// The grid, policies × sizes in request order (one cell for one cache).
    pub runs: Vec<SimRun>,
    /// One MiniSim curve per policy, when asked for.
    pub curves: Vec<MrcReport>,
}

/// A cell's simulator.
enum Sim {
    Exact(Simulator),
    Sampled(SampledSimulator),
}

/// A cell being simulated.
pub struct Cell {
    index: usize,
    params: CacheParams,
    sim: Sim,
}

impl Cell {
    pub fn observe(&mut self, e: &IoEvent) {
        match &mut self.sim {
            // Buffered: the simulator runs groups of requests with their table slots prefetched
            // (results are complete at finish).
            Sim::Exact(s) => s.observe_buffered(e),
            Sim::Sampled(s) => s.observe(e),
        }
    }

    fn finish(self) -> (usize, SimRun) {
        let (result, rate) = match self.sim {
            Sim::Exact(s) => (s.finish(), 1.0),
            Sim::Sampled(s) => {
                let rate = s.rate();
                (s.finish(), rate)
            }
        };
        let preset = self.params.preset().ok().flatten();
        (
            self.index,
            SimRun {
                policy: self.params.policy.clone(),
                size: self.params.size(),
                preset: preset.map(|p| p.name.to_string()),
                assumptions: assumptions(&result, preset),
                sampled_rate: (rate < 1.0).then_some(rate),
                result,
            },
        )
    }
}

/// A cell to build: its configuration, checked.
#[derive(Clone, Debug)]
struct CellSpec {
    index: usize,
    params: CacheParams,
    config: SimConfig,
    /// Sample above this many lines.
    limit: u64,
}

impl CellSpec {
    fn build(self, future: Option<&NextUse>) -> Result<Cell, JobError> {
        let sim = match (self.config.policy.needs_future(), future) {
            (true, Some(f)) => Sim::Exact(Simulator::with_future(&self.config, f.clone())?),
            (true, None) => Sim::Exact(Simulator::new(&self.config)?),
            (false, _) => Sim::Sampled(SampledSimulator::new(&self.config, self.limit)?),
        };
        Ok(Cell {
            index: self.index,
            params: self.params,
            sim,
        })
    }
}

/// Some cells of the grid, to run on any thread: build them there with [`Part::start`].
#[cfg(feature = "threads")]
struct Part {
    specs: Vec<CellSpec>,
    future: Option<NextUse>,
}

#[cfg(feature = "threads")]
impl Part {
    /// Builds the part's simulators (on the thread that runs them).
    fn start(self) -> Result<Running, JobError> {
        let future = self.future;
        let cells = self
            .specs
            .into_iter()
            .map(|s| s.build(future.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Running { cells })
    }
}

/// A started [`Part`].
#[cfg(feature = "threads")]
struct Running {
    cells: Vec<Cell>,
}

#[cfg(feature = "threads")]
impl Running {
    /// Feeds a batch (already cut to the window) to every cell.
    fn observe_batch(&mut self, events: &[IoEvent]) {
        for c in &mut self.cells {
            for e in events {
                c.observe(e);
            }
        }
    }

    fn finish(self) -> Finished {
        Finished(self.cells.into_iter().map(Cell::finish).collect())
    }
}

/// A finished [`Running`], handed back to [`Simulate::join`].
#[cfg(feature = "threads")]
struct Finished(Vec<(usize, SimRun)>);

/// The simulation job: see the module documentation.
pub struct Simulate {
    request: SimulateRequest,
    grid: Vec<CacheParams>,
    window: WindowFilter,
    /// Pass 0 when a size or the curves need the footprint, or a policy the future.
    footprint: Option<LineFootprint>,
    future: Option<NextUseBuilder>,
    footprint_lines: Option<u64>,
    prepared: bool,
    passes: usize,
    cells: Vec<Cell>,
    /// Cells for [`Simulate::split`] (built on the worker threads).
    #[cfg(feature = "threads")]
    split_specs: Vec<CellSpec>,
    #[cfg(feature = "threads")]
    split_future: Option<NextUse>,
    /// Cells split off and not joined back yet.
    outside: usize,
    curves: Vec<MiniSim>,
    done: Vec<(usize, SimRun)>,
    header: TraceHeader,
    max_exact_lines: Option<u64>,
    /// The last pass's events not yet run through a grid's cells (one cell runs event by
    /// event).
    batch: Vec<IoEvent>,
    /// Threads for the grid's cells (1: the host's own).
    #[cfg(feature = "threads")]
    threads: usize,
    #[cfg(feature = "threads")]
    pool: Option<threads::Pool>,
}

impl Simulate {
    pub fn new(request: SimulateRequest) -> Result<Simulate, JobError> {
        Simulate::with_exact_limit(request, None)
    }

    /// A simulation whose caches above `max_exact_lines` lines (over a footprint larger than
    /// that) run on a spatial sample and say so: a host's bound on memory (the browser's tab).
    pub fn with_exact_limit(
        request: SimulateRequest,
        max_exact_lines: Option<u64>,
    ) -> Result<Simulate, JobError> {
        Simulate::build(request, max_exact_lines, 1)
    }

    /// A simulation whose grid's cells run on up to `threads` worker threads during the last
    /// pass (a grid of one cell, or `threads` 1, stays on the host's thread): native hosts. The
    /// results do not depend on it.
    #[cfg(feature = "threads")]
    pub fn with_threads(request: SimulateRequest, threads: usize) -> Result<Simulate, JobError> {
        Simulate::build(request, None, threads)
    }

    fn build(
        request: SimulateRequest,
        max_exact_lines: Option<u64>,
        threads: usize,
    ) -> Result<Simulate, JobError> {
        #[cfg(not(feature = "threads"))]
        let _ = threads;
        let grid = request.grid();
        if grid.len() > MAX_CELLS {
            return Err(JobError::invalid(
                "grid",
                format!("{} policies × sizes; at most {MAX_CELLS}", grid.len()),
            ));
        }
        if request.time_bins == 0 {
            return Err(crate::cache::ConfigError::TimeBins.into());
        }
        if let Some(p) = request.curve_passes {
            if !(p.is_finite() && p > 0.0) {
                return Err(JobError::invalid(
                    format!("curve passes {p}"),
                    "a bound on the curves' work is a number of passes above 0",
                ));
            }
        }
        // Check every name and fixed size now, before any pass.
        for c in &grid {
            c.choice()?;
            if !c.needs_footprint() {
                c.sim_config(None)?;
            }
        }
        let line = request.cache.line_bytes;
        let needs_footprint = request.footprint_lines.is_none()
            && (grid.iter().any(CacheParams::needs_footprint) || request.with_curves);
        let needs_future = grid.iter().any(|c| {
            c.choice()
                .is_ok_and(|ch| ch.config(1).policy.needs_future())
        });
        let footprint = needs_footprint.then(|| LineFootprint::new(line));
        let future = needs_future.then(|| NextUseBuilder::new(line));
        let passes = if footprint.is_some() || future.is_some() {
            2
        } else {
            1
        };
        let mut job = Simulate {
            window: WindowFilter::new(request.window_nanos),
            footprint_lines: request.footprint_lines,
            request,
            grid,
            footprint,
            future,
            prepared: false,
            passes,
            cells: Vec::new(),
            #[cfg(feature = "threads")]
            split_specs: Vec::new(),
            #[cfg(feature = "threads")]
            split_future: None,
            outside: 0,
            curves: Vec::new(),
            done: Vec::new(),
            header: TraceHeader::default(),
            max_exact_lines,
            batch: Vec::new(),
            #[cfg(feature = "threads")]
            threads: threads.max(1),
            #[cfg(feature = "threads")]
            pool: None,
        };
        if passes == 1 {
            job.prepare()?;
        }
        Ok(job)
    }

    fn prepare(&mut self) -> Result<(), JobError> {
        let footprint = self.footprint_lines;
        let limit = self.max_exact_lines.unwrap_or(u64::MAX);
        // Resident lines never exceed the footprint: a trace whose footprint fits is simulated
        // exactly whatever the cache size; otherwise a cache over the limit is sampled.
        let limit = match footprint {
            Some(f) if (1..=limit).contains(&f) => u64::MAX,
            _ => limit,
        };
        let future = self.future.take().map(NextUseBuilder::finish);
        let mut specs = Vec::new();
        for (index, params) in self.grid.iter().enumerate() {
            let mut config = params.sim_config(footprint)?;
            config.warmup_nanos = self.request.warmup_nanos;
            config.time_bins = self.request.time_bins;
            specs.push(CellSpec {
                index,
                params: params.clone(),
                config,
                limit,
            });
        }
        // Cells for worker threads are built there, at the last pass's start.
        #[cfg(feature = "threads")]
        let (specs, future) = if self.threads > 1 && specs.len() > 1 {
            self.split_specs = specs;
            self.split_future = future;
            (Vec::new(), None)
        } else {
            (specs, future)
        };
        self.cells = specs
            .into_iter()
            .map(|s| s.build(future.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        if self.request.with_curves {
            let f = footprint.unwrap_or(0);
            if f > 0 {
                let base = self.grid[0].sim_config(footprint)?;
                let sizes = linear_sizes(f, CURVE_SIZES);
                let mut policies: Vec<PolicyKind> = CURVE_POLICIES
                    .iter()
                    .filter_map(|p| PolicyKind::from_name(p))
                    .collect();
                for c in &self.grid {
                    let p = c.choice()?.config(1).policy;
                    if p != PolicyKind::Lru && !p.needs_future() && !policies.contains(&p) {
                        policies.push(p);
                    }
                }
                for policy in policies {
                    let mut c = MiniSimConfig::new(policy, base.line_bytes, sizes.clone());
                    c.sim.mode = base.mode;
                    c.max_passes = self.request.curve_passes;
                    self.curves.push(MiniSim::new(c).map_err(|e| {
                        JobError::invalid(format!("curve {}", policy.name()), e.to_string())
                    })?);
                }
            }
        }
        self.prepared = true;
        Ok(())
    }

    /// Cells in the grid.
    pub fn cells(&self) -> usize {
        self.grid.len()
    }

    /// Takes the grid's cells out of this job in at most `parts` [`Part`]s to run elsewhere;
    /// this job then feeds only the curves until [`Simulate::join`].
    #[cfg(feature = "threads")]
    fn split(&mut self, parts: usize) -> Vec<Part> {
        let parts = parts.clamp(1, self.split_specs.len().max(1));
        let specs = std::mem::take(&mut self.split_specs);
        self.outside = specs.len();
        let future = self.split_future.take();
        let mut out: Vec<Part> = (0..parts)
            .map(|_| Part {
                specs: Vec::new(),
                future: future.clone(),
            })
            .collect();
        for (i, s) in specs.into_iter().enumerate() {
            out[i % parts].specs.push(s);
        }
        out.retain(|p| !p.specs.is_empty());
        out
    }

    /// Gives back what the parts of [`Simulate::split`] computed.
    #[cfg(feature = "threads")]
    fn join(&mut self, finished: Vec<Finished>) {
        for f in finished {
            self.outside = self.outside.saturating_sub(f.0.len());
            self.done.extend(f.0);
        }
    }

    /// Runs the batched events through every cell, cell after cell.
    fn run_batch(&mut self) {
        for c in &mut self.cells {
            for e in &self.batch {
                c.observe(e);
            }
        }
        self.batch.clear();
    }

    fn first_pass(&mut self, e: &IoEvent) {
        if let Some(f) = self.footprint.as_mut() {
            f.observe(e);
        }
        if let Some(f) = self.future.as_mut() {
            f.observe(e);
        }
    }
}

impl Job for Simulate {
    type Output = SimulateResult;

    fn passes(&self) -> usize {
        self.passes
    }

    fn begin_pass(&mut self, pass: usize) {
        self.window.reset();
        #[cfg(feature = "threads")]
        if self.prepared
            && pass + 1 >= self.passes
            && self.threads > 1
            && self.split_specs.len() > 1
            && self.pool.is_none()
        {
            let parts = self.split(self.threads);
            self.pool = Some(threads::Pool::start(parts));
        }
        #[cfg(not(feature = "threads"))]
        let _ = pass;
    }

    fn observe(&mut self, e: &IoEvent) {
        if !self.window.admits(e) {
            return;
        }
        if !self.prepared {
            self.first_pass(e);
            return;
        }
        #[cfg(feature = "threads")]
        if let Some(pool) = &mut self.pool {
            pool.push(e);
        }
        if self.cells.len() > 1 {
            self.batch.push(*e);
            if self.batch.len() >= BATCH_EVENTS {
                self.run_batch();
            }
        } else {
            for c in &mut self.cells {
                c.observe(e);
            }
        }
        for c in &mut self.curves {
            c.observe(e);
        }
    }

    fn end_pass(
        &mut self,
        header: &TraceHeader,
        _diagnostics: &Diagnostics,
    ) -> Result<(), JobError> {
        self.header = header.clone();
        self.run_batch();
        #[cfg(feature = "threads")]
        if let Some(pool) = self.pool.take() {
            let finished = pool.finish()?;
            self.join(finished);
        }
        if !self.prepared {
            if let Some(f) = &self.footprint {
                self.footprint_lines = Some(f.lines().0);
            }
            self.prepare()?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<SimulateResult, JobError> {
        #[cfg(feature = "threads")]
        let unrun = self.split_specs.len();
        #[cfg(not(feature = "threads"))]
        let unrun = 0;
        if self.outside > 0 || unrun > 0 {
            return Err(JobError::invalid(
                "grid",
                "cells were split off and not joined back",
            ));
        }
        let mut runs: Vec<(usize, SimRun)> = std::mem::take(&mut self.done);
        runs.extend(self.cells.into_iter().map(Cell::finish));
        runs.sort_by_key(|(i, _)| *i);
        Ok(SimulateResult {
            footprint_lines: self.footprint_lines,
            runs: runs.into_iter().map(|(_, r)| r).collect(),
            curves: self
                .curves
                .into_iter()
                .map(|c| c.finish(&self.header))
                .collect(),
            request: self.request,
        })
    }
}

/// What a reader needs to interpret a run.
pub fn assumptions(r: &SimResult, preset: Option<Preset>) -> Vec<String> {
    let c = &r.config;
    let mut a = vec![
        format!(
            "a request touching any byte of a {} line touches the whole line; a request hits only if all its lines hit",
            crate::units::bytes(c.line_bytes)
        ),
        match c.mode {
            WriteMode::ReadOnly => "read-only: writes go to the disks and invalidate cached lines".to_string(),
            WriteMode::WriteThrough => "write-through: every write goes to the disks; write misses allocate lines".to_string(),
            WriteMode::WriteAround => "write-around: every write goes to the disks; only lines already cached are updated".to_string(),
            WriteMode::WriteBack => "write-back: writes are absorbed; dirty evictions and the final flush of dirty lines are the disks' writes".to_string(),
        },
        "missed lines that are cached are read whole from the disks; discards invalidate; host flushes cost nothing (non-volatile cache)".to_string(),
    ];
    if c.policy == PolicyKind::Belady {
        a.push("Belady knows the future: an upper bound no real cache reaches".to_string());
    }
    if let Some(p) = preset {
        a.push(format!("preset {}: {}", p.name, p.assumptions));
    }
    a
}

/// The footprint of a curve's analysis (in its own lines) in lines of `line_bytes`: the bytes
/// touched at the analysis's line size, rounded up.
pub fn footprint_lines_at(report: &MrcReport, line_bytes: u64) -> u64 {
    report
        .footprint_lines
        .saturating_mul(report.line_bytes)
        .div_ceil(line_bytes.max(1))
}
