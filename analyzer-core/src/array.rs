//! The array model: predicted IOPS, MB/s and latency of a RAID layout of hard disks or SSDs,
//! with or without an SSD cache tier in front, for a trace or a synthetic profile.
//!
//! - [`device`]: what one member disk does with one command (HDD mechanics, SSD lanes), and
//!   the [`DiskPreset`] registry.
//! - [`layout`]: RAID levels as a tree of nodes, mapping logical ranges to member commands.
//! - [`controller`]: controller latency, write-back cache, read-ahead, ceilings.
//! - [`controller_preset`]: named controllers (`--controller NAME`) with their sources.
//! - [`engine`]: the deterministic discrete-event simulation.
//! - [`profile`]: synthetic access specifications.
//! - [`cache_tier`]: the interface to a cache simulator in front of the array.
//! - [`product_tier`]: the kernels' own cache models (dm-cache) as that tier.
//! - [`spec`]: the JSON array description (nesting and per-parameter overrides).
//!
//! Invariants: sans-IO and deterministic. No clocks, threads or files; randomness comes from a
//! seeded in-crate PRNG, so the same inputs give the same numbers on every machine and in the
//! browser. Memory is bounded by the number of outstanding requests (capped at
//! [`engine::MAX_OUTSTANDING`]), never by trace length.

pub mod cache_tier;
pub mod controller;
pub mod controller_preset;
pub mod device;
pub mod engine;
pub mod histogram;
pub mod layout;
pub mod md;
pub mod md_bitmap;
pub mod md_super;
pub mod product_tier;
pub mod profile;
pub mod rng;
pub mod spec;

use serde::{Deserialize, Serialize};

pub use cache_tier::{CacheAccess, CacheTier, SimulatorTier};
pub use controller::ControllerModel;
pub use device::{DeviceModel, DiskPreset};
pub use engine::{Engine, HostIo, RunResult, Target, Tier};
pub use layout::{Level, Member, Node, ParityWrite};
pub use product_tier::{BcacheTier, DmCacheTier};
pub use profile::{AccessSpec, Generator, ProfileKind};

use crate::event::{IoEvent, Op};

/// The levels `--layout` accepts; nested ones are built as RAID 0 over groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StandardLevel {
    Jbod,
    Raid0,
    Raid1,
    Raid5,
    Raid6,
    Raid10,
    Raid50,
    Raid60,
}

impl StandardLevel {
    pub const ALL: [StandardLevel; 8] = [
        StandardLevel::Jbod,
        StandardLevel::Raid0,
        StandardLevel::Raid1,
        StandardLevel::Raid5,
        StandardLevel::Raid6,
        StandardLevel::Raid10,
        StandardLevel::Raid50,
        StandardLevel::Raid60,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StandardLevel::Jbod => "jbod",
            StandardLevel::Raid0 => "raid0",
            StandardLevel::Raid1 => "raid1",
            StandardLevel::Raid5 => "raid5",
            StandardLevel::Raid6 => "raid6",
            StandardLevel::Raid10 => "raid10",
            StandardLevel::Raid50 => "raid50",
            StandardLevel::Raid60 => "raid60",
        }
    }

    /// Whether the level computes parity (RAID 5/6 and their stripes, 50/60): where md's stripe
    /// cache and its threads work.
    pub fn parity(self) -> bool {
        matches!(
            self,
            StandardLevel::Raid5
                | StandardLevel::Raid6
                | StandardLevel::Raid50
                | StandardLevel::Raid60
        )
    }

    /// Whether the level keeps redundancy (all but JBOD and RAID 0): where md has a
    /// write-intent bitmap and safe mode.
    pub fn redundant(self) -> bool {
        !matches!(self, StandardLevel::Jbod | StandardLevel::Raid0)
    }

    pub fn from_name(name: &str) -> Option<StandardLevel> {
        let n = name
            .trim()
            .to_ascii_lowercase()
            .replace(['-', '_', ' '], "");
        let n = match n.as_str() {
            "concat" | "linear" | "span" => "jbod",
            "0" => "raid0",
            "1" | "mirror" => "raid1",
            "5" => "raid5",
            "6" => "raid6",
            "10" | "raid1+0" => "raid10",
            "50" | "raid5+0" => "raid50",
            "60" | "raid6+0" => "raid60",
            other => other,
        };
        StandardLevel::ALL.into_iter().find(|l| l.name() == n)
    }

    /// Builds the layout tree over disks `0..disks`. `groups` is the number of RAID 1/5/6
    /// groups for RAID 10/50/60 (default: pairs for RAID 10, two groups for 50/60).
    pub fn build(
        self,
        disks: u32,
        chunk_bytes: u64,
        groups: Option<u32>,
    ) -> Result<Node, ArrayError> {
        let flat = |level| Node::over_disks(level, chunk_bytes, 0, disks);
        let nested = |level, default_groups: u32| -> Result<Node, ArrayError> {
            let groups = groups.unwrap_or(default_groups).max(1);
            if disks % groups != 0 {
                return Err(ArrayError::Config(format!(
                    "{} disks do not split into {groups} equal groups",
                    disks
                )));
            }
            let per = disks / groups;
            Ok(Node::new(
                Level::Raid0,
                chunk_bytes,
                (0..groups)
                    .map(|g| {
                        Member::Node(Box::new(Node::over_disks(level, chunk_bytes, g * per, per)))
                    })
                    .collect(),
            ))
        };
        Ok(match self {
            StandardLevel::Jbod => flat(Level::Concat),
            StandardLevel::Raid0 => flat(Level::Raid0),
            StandardLevel::Raid1 => flat(Level::Raid1),
            StandardLevel::Raid5 => flat(Level::Raid5),
            StandardLevel::Raid6 => flat(Level::Raid6),
            StandardLevel::Raid10 => nested(Level::Raid1, disks / 2)?,
            StandardLevel::Raid50 => nested(Level::Raid5, 2)?,
            StandardLevel::Raid60 => nested(Level::Raid6, 2)?,
        })
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ArrayError {
    #[error("array configuration: {0}")]
    Config(String),
    /// A member (`role` "disk") or cache device (`role` "cache device") the model cannot run
    /// with; the device's message is part of this one, so it is no `source`.
    #[error("array configuration: {role} {index}: {error}")]
    Device {
        role: &'static str,
        index: usize,
        error: device::DeviceError,
    },
    #[error(transparent)]
    Layout(#[from] layout::LayoutError),
    #[error("array description, {0}")]
    Spec(String),
}

/// The SSD cache tier's devices and their layout (for example two SSDs in RAID 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheDevices {
    pub devices: Vec<DeviceModel>,
    pub layout: Node,
}

/// Everything the engine needs to know about the hardware.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrayConfig {
    pub devices: Vec<DeviceModel>,
    pub layout: Node,
    pub controller: ControllerModel,
    pub cache: Option<CacheDevices>,
    /// Linux md rebuilds the failed members beside the load ([`Engine::start_rebuilding`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rebuilding: bool,
}

impl ArrayConfig {
    /// `disks` identical devices in a standard level.
    pub fn standard(
        level: StandardLevel,
        disks: u32,
        device: DeviceModel,
        chunk_bytes: u64,
        controller: ControllerModel,
    ) -> Result<ArrayConfig, ArrayError> {
        let layout = level.build(disks, chunk_bytes, None)?;
        ArrayConfig::new(vec![device; disks as usize], layout, controller)
    }

    pub fn new(
        devices: Vec<DeviceModel>,
        layout: Node,
        controller: ControllerModel,
    ) -> Result<ArrayConfig, ArrayError> {
        layout.validate(devices.len())?;
        for (i, d) in devices.iter().enumerate() {
            d.validate().map_err(|error| ArrayError::Device {
                role: "disk",
                index: i,
                error,
            })?;
        }
        let cfg = ArrayConfig {
            devices,
            layout,
            controller,
            cache: None,
            rebuilding: false,
        };
        if cfg.capacity_bytes() == 0 {
            return Err(ArrayError::Config(
                "the layout has no usable capacity".into(),
            ));
        }
        Ok(cfg)
    }

    pub fn with_cache(mut self, cache: CacheDevices) -> Result<ArrayConfig, ArrayError> {
        cache.layout.validate(cache.devices.len())?;
        for (i, d) in cache.devices.iter().enumerate() {
            d.validate().map_err(|error| ArrayError::Device {
                role: "cache device",
                index: i,
                error,
            })?;
        }
        self.cache = Some(cache);
        Ok(self)
    }

    pub fn capacity_bytes(&self) -> u64 {
        let caps: Vec<u64> = self
            .devices
            .iter()
            .map(DeviceModel::capacity_bytes)
            .collect();
        self.layout
            .capacity_bytes(&|d| caps.get(d as usize).copied().unwrap_or(0))
    }

    pub fn engine(&self) -> Engine {
        let mut e = Engine::new(
            &self.devices,
            self.layout.clone(),
            self.controller.clone(),
            self.cache
                .as_ref()
                .map(|c| (c.devices.as_slice(), c.layout.clone())),
        );
        if self.rebuilding {
            e.start_rebuilding();
        }
        e
    }

    /// Rebuild-time estimate for each degraded parity or mirror node: the replacement is
    /// written at the slower of its sequential media rate and the controller's rebuild limit,
    /// stretched by the share of disk time the foreground load takes (`foreground_utilisation`).
    pub fn rebuild_estimate_secs(&self, foreground_utilisation: f64) -> Option<f64> {
        fn degraded(n: &Node) -> Option<&Node> {
            if !n.failed.is_empty() {
                return Some(n);
            }
            n.members.iter().find_map(|m| match m {
                Member::Node(c) => degraded(c),
                Member::Disk(_) => None,
            })
        }
        let node = degraded(&self.layout)?;
        let mut disks = Vec::new();
        node.disks(&mut disks);
        let dev = self.devices.get(*disks.first()? as usize)?;
        let (bytes, rate) = match dev {
            DeviceModel::Hdd(h) => (h.capacity_bytes as f64, mean_media_rate(h)),
            DeviceModel::Ssd(s) => (s.capacity_bytes as f64, s.write_bandwidth_bytes_per_sec),
        };
        let rate = rate.min(self.controller.rebuild_bytes_per_sec);
        let idle = (1.0 - foreground_utilisation).clamp(0.05, 1.0);
        Some(bytes / rate / idle)
    }
}

/// Capacity-weighted mean media rate of a zoned disk (rate ∝ radius; equal bytes per area).
pub fn mean_media_rate(h: &device::HddModel) -> f64 {
    let ri = (h.inner_rate_bytes_per_sec / h.outer_rate_bytes_per_sec.max(1.0)).clamp(0.05, 1.0);
    let steps = 1000;
    (0..steps)
        .map(|i| {
            let x = (i as f64 + 0.5) / steps as f64;
            h.outer_rate_bytes_per_sec * (1.0 - x * (1.0 - ri * ri)).sqrt()
        })
        .sum::<f64>()
        / steps as f64
}

/// A synthetic workload: an access specification over a span with N outstanding I/Os.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Synthetic {
    pub spec: AccessSpec,
    pub span_bytes: u64,
    pub outstanding: u32,
    /// Requests simulated; the first tenth (at most 50,000) fill the queues and the
    /// controller cache and are not measured.
    pub requests: u64,
    pub seed: u64,
    /// Requests fed to the cache tier alone before the timed run, so a long benchmark's warm
    /// cache is reproduced without simulating hours of disk time (see
    /// [`cache_warmup_requests`]).
    pub cache_warmup_requests: u64,
}

/// Requests of `len_bytes` drawn uniformly over `span_bytes` that bring an LRU-like cache of
/// `cache_bytes` in lines of `line_bytes` to its steady state: enough to fill it (expected
/// distinct lines S·(1 − e^(−n/S)) = C), with 50 % margin; for a cache larger than the span,
/// enough to touch every line (coupon collector, S·(ln S + 1)). Capped at 50 million.
pub fn cache_warmup_requests(
    span_bytes: u64,
    cache_bytes: u64,
    line_bytes: u64,
    len_bytes: u32,
) -> u64 {
    let line = line_bytes.max(512) as f64;
    let s = (span_bytes as f64 / line).max(1.0);
    let c = cache_bytes as f64 / line;
    let lines = if c >= s {
        s * (s.ln() + 1.0)
    } else {
        -s * (1.0 - c / s).ln() * 1.5
    };
    let per_request = (f64::from(len_bytes) / line).max(1.0);
    ((lines / per_request).ceil() as u64).min(50_000_000)
}

fn to_event(g: &profile::Generated, time_nanos: u64) -> IoEvent {
    IoEvent {
        time_nanos,
        device: 0,
        offset_bytes: g.offset_bytes,
        len_bytes: g.len_bytes,
        op: if g.write { Op::Write } else { Op::Read },
        latency_nanos: None,
        pid: None,
    }
}

/// Routes one front-end request: through the cache tier when there is one, else to the array.
/// `closed` is the closed loop's depth, or `None` for open loop at `at_nanos`. The tier sees
/// the request as the trace has it (its own time and latency: a model whose answers depend on
/// the trace's timing, such as dm-cache's, answers as `simulate` does), the engine at `at_nanos`.
fn route<'a, 'c>(
    engine: &mut Engine,
    cache: Option<&'a mut (dyn CacheTier + 'c)>,
    backend: &mut Vec<IoEvent>,
    e: &IoEvent,
    at_nanos: u64,
    closed: Option<usize>,
    capacity: u64,
) {
    let write = e.op == Op::Write;
    let fit = |off: u64, len: u32| -> HostIo {
        let len = u64::from(len).min(capacity) as u32;
        let off = if off + u64::from(len) > capacity {
            (off % (capacity - u64::from(len) + 1)) / 512 * 512
        } else {
            off
        };
        HostIo {
            offset_bytes: off,
            len_bytes: len,
            write,
            target: Target::Array,
            host_bytes: len,
        }
    };
    let submit = |engine: &mut Engine, io: HostIo| match closed {
        Some(depth) => engine.submit_closed(depth, io),
        None => engine.submit_at(at_nanos, io),
    };
    let Some(cache) = cache else {
        submit(engine, fit(e.offset_bytes, e.len_bytes));
        return;
    };
    backend.clear();
    let access = cache.access(e, backend);
    let on_cache = HostIo {
        target: Target::Cache,
        ..fit(e.offset_bytes, e.len_bytes)
    };
    // The request waits for the cache devices on a hit, and for the array on a miss (or a
    // write-through write); everything else the cache does happens in the background.
    let mut waited_on_array = None;
    if !access.hit {
        waited_on_array = backend.iter().position(|b| {
            (b.op == Op::Write) == write
                && b.offset_bytes <= e.offset_bytes
                && b.end_bytes() >= e.end_bytes()
        });
        if waited_on_array.is_none() {
            waited_on_array = backend.iter().position(|b| (b.op == Op::Write) == write);
        }
    }
    match waited_on_array {
        Some(i) => {
            let b = backend[i];
            let host_bytes = fit(e.offset_bytes, e.len_bytes).len_bytes;
            submit(
                engine,
                HostIo {
                    write: b.op == Op::Write,
                    host_bytes,
                    ..fit(b.offset_bytes, b.len_bytes)
                },
            );
        }
        None => submit(engine, on_cache),
    }
    if access.writes_cache && !(access.hit && write) {
        // The fill writes what was read from the array (whole lines), else the request.
        let fill = match waited_on_array.map(|i| backend[i]) {
            Some(b) if b.op == Op::Read => HostIo {
                target: Target::Cache,
                ..fit(b.offset_bytes, b.len_bytes)
            },
            _ => on_cache,
        };
        engine.submit_background(HostIo {
            write: true,
            ..fill
        });
    }
    for (i, b) in backend.iter().enumerate() {
        if Some(i) == waited_on_array || !matches!(b.op, Op::Read | Op::Write) || b.len_bytes == 0 {
            continue;
        }
        engine.submit_background(HostIo {
            write: b.op == Op::Write,
            ..fit(b.offset_bytes, b.len_bytes)
        });
    }
}

/// Runs a synthetic workload in closed loop and reports the measured window.
pub fn run_synthetic<'c>(
    config: &ArrayConfig,
    w: &Synthetic,
    mut cache: Option<&mut (dyn CacheTier + 'c)>,
) -> RunResult {
    let mut engine = config.engine();
    let capacity = config.capacity_bytes();
    let span = w.span_bytes.clamp(u64::from(w.spec.len_bytes), capacity);
    let mut gen = Generator::new(w.spec, span, w.seed);
    if let Some(c) = cache.as_mut() {
        let mut warm_gen = Generator::new(w.spec, span, w.seed ^ 0x5eed);
        let mut sink = Vec::new();
        for _ in 0..w.cache_warmup_requests {
            let g = warm_gen.next_request();
            sink.clear();
            c.access(&to_event(&g, 0), &mut sink);
        }
    }
    let warm = (w.requests / 10).min(50_000);
    let depth = w.outstanding.max(1) as usize;
    let mut backend = Vec::new();
    for i in 0..w.requests {
        if i == warm {
            engine.start_measuring();
        }
        let g = gen.next_request();
        let e = to_event(&g, engine.now_nanos());
        route(
            &mut engine,
            cache.as_deref_mut(),
            &mut backend,
            &e,
            e.time_nanos,
            Some(depth),
            capacity,
        );
        if g.write_back {
            let wb = profile::Generated { write: true, ..g };
            let e = to_event(&wb, engine.now_nanos());
            // bonnie-style write-back goes through the page cache: not waited for.
            engine.submit_background(HostIo {
                offset_bytes: e.offset_bytes,
                len_bytes: e.len_bytes,
                write: true,
                target: Target::Array,
                host_bytes: e.len_bytes,
            });
        }
    }
    engine.stop_measuring();
    engine.finish()
}

/// The load one replay (or one curve point) ran at: a closed loop's outstanding I/Os, or an
/// open loop's speed factor (trace time ÷ factor). In JSON `{"outstanding": 12}` or
/// `{"speed_factor": 2.0}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Load {
    /// Host I/Os kept outstanding (closed loop).
    Outstanding(u32),
    /// Trace time divided by this factor (open loop, unitless).
    #[serde(rename = "speed_factor")]
    Speed(f64),
}

impl Load {
    /// The replay mode that runs at this load.
    pub fn mode(self) -> ReplayMode {
        match self {
            Load::Outstanding(outstanding) => ReplayMode::Closed { outstanding },
            Load::Speed(speed) => ReplayMode::Open { speed },
        }
    }
}

/// A depth as `12`, a speed factor as `×2`.
impl std::fmt::Display for Load {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Load::Outstanding(q) => write!(f, "{q}"),
            Load::Speed(s) => write!(f, "×{s}"),
        }
    }
}

/// One point of an IOPS-versus-latency curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub load: Load,
    pub iops: f64,
    pub mean_latency_nanos: f64,
    pub p99_latency_nanos: u64,
}

/// Closed-loop sweep over queue depths (each point a fresh, independent run).
pub fn sweep_depths(
    config: &ArrayConfig,
    w: &Synthetic,
    depths: &[u32],
    mut make_cache: impl FnMut() -> Option<Box<dyn CacheTier>>,
) -> Vec<CurvePoint> {
    depths
        .iter()
        .map(|&qd| {
            let mut cache = make_cache();
            let r = run_synthetic(
                config,
                &Synthetic {
                    outstanding: qd,
                    ..*w
                },
                cache.as_mut().map(|c| &mut **c as &mut dyn CacheTier),
            );
            CurvePoint {
                load: Load::Outstanding(qd),
                iops: r.iops,
                mean_latency_nanos: r.latency.mean_nanos,
                p99_latency_nanos: r.latency.p99_nanos,
            }
        })
        .collect()
}

/// How a trace is replayed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum ReplayMode {
    /// Keep N requests outstanding, ignoring the trace's timestamps.
    Closed { outstanding: u32 },
    /// Issue each request at its timestamp divided by `speed` (2.0 = twice the load).
    Open { speed: f64 },
}

/// Streams a trace through the model. Offsets beyond the array's capacity wrap around it.
pub struct TraceReplay<'c> {
    engine: Engine,
    mode: ReplayMode,
    capacity: u64,
    cache: Option<TierSlot<'c>>,
    backend: Vec<IoEvent>,
    first_time: Option<u64>,
    seen: u64,
    skipped: u64,
}

/// A replay's cache tier: borrowed from the caller, or owned (a job that holds its replays).
enum TierSlot<'c> {
    Borrowed(&'c mut (dyn CacheTier + 'c)),
    Owned(Box<dyn CacheTier + 'c>),
}

impl<'c> TierSlot<'c> {
    fn get(&mut self) -> &mut (dyn CacheTier + 'c) {
        match self {
            TierSlot::Borrowed(t) => &mut **t,
            TierSlot::Owned(t) => &mut **t,
        }
    }
}

impl<'c> TraceReplay<'c> {
    pub fn new(
        config: &ArrayConfig,
        mode: ReplayMode,
        cache: Option<&'c mut (dyn CacheTier + 'c)>,
    ) -> TraceReplay<'c> {
        TraceReplay::with_slot(config, mode, cache.map(TierSlot::Borrowed))
    }

    /// A replay that owns its cache tier.
    pub fn owning(
        config: &ArrayConfig,
        mode: ReplayMode,
        cache: Option<Box<dyn CacheTier + 'c>>,
    ) -> TraceReplay<'c> {
        TraceReplay::with_slot(config, mode, cache.map(TierSlot::Owned))
    }

    fn with_slot(
        config: &ArrayConfig,
        mode: ReplayMode,
        cache: Option<TierSlot<'c>>,
    ) -> TraceReplay<'c> {
        TraceReplay {
            engine: config.engine(),
            mode,
            capacity: config.capacity_bytes(),
            cache,
            backend: Vec::new(),
            first_time: None,
            seen: 0,
            skipped: 0,
        }
    }

    pub fn observe(&mut self, e: &IoEvent) {
        if !matches!(e.op, Op::Read | Op::Write) || e.len_bytes == 0 {
            self.skipped += 1;
            return;
        }
        self.seen += 1;
        let first = *self.first_time.get_or_insert(e.time_nanos);
        let (closed, time) = match self.mode {
            ReplayMode::Closed { outstanding } => {
                (Some(outstanding.max(1) as usize), self.engine.now_nanos())
            }
            ReplayMode::Open { speed } => {
                let rel = e.time_nanos.saturating_sub(first) as f64 / speed.max(1e-6);
                (None, rel as u64)
            }
        };
        route(
            &mut self.engine,
            self.cache.as_mut().map(TierSlot::get),
            &mut self.backend,
            e,
            time,
            closed,
            self.capacity,
        );
    }

    /// Requests replayed and requests skipped (discards, flushes, empty).
    pub fn counts(&self) -> (u64, u64) {
        (self.seen, self.skipped)
    }

    pub fn finish(mut self) -> RunResult {
        if matches!(self.mode, ReplayMode::Closed { .. }) {
            self.engine.stop_measuring();
        }
        self.engine.count_clean_after_run();
        self.engine.finish()
    }
}

/// The combined answer: the array alone, the array behind the cache tier, and the speed-up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// One line describing the array, for the human output.
    pub array: String,
    pub capacity_bytes: u64,
    pub workload: String,
    pub without_cache: RunResult,
    pub with_cache: Option<RunResult>,
    /// IOPS with the cache divided by IOPS without.
    pub speedup: Option<f64>,
    /// IOPS versus latency over a sweep of outstanding I/Os or speed factors (array alone).
    pub curve: Vec<CurvePoint>,
    /// Seconds to rebuild a failed member, when the layout is degraded.
    pub rebuild_secs: Option<f64>,
    /// Every modelling assumption that shapes the numbers, in words.
    pub assumptions: Vec<String>,
}

impl ArrayConfig {
    /// The assumptions a reader needs to judge the numbers (device classes, controller, cache).
    pub fn assumptions(&self) -> Vec<String> {
        let mut a = Vec::new();
        let mut seen = Vec::new();
        for (tier, devices) in std::iter::once(("array", &self.devices))
            .chain(self.cache.as_ref().map(|c| ("cache", &c.devices)))
        {
            for d in devices.iter() {
                if seen.contains(&(tier, d)) {
                    continue;
                }
                seen.push((tier, d));
                a.push(match d {
                    DeviceModel::Hdd(h) => format!(
                        "{tier} disks: {:.0} rpm, {:.0} GB, seek {:.1}/{:.1}/{:.1} ms (track/avg/full), media {:.0}→{:.0} MB/s, {} µs command overhead, queue depth {} with {} reordering, write cache off",
                        h.rpm, h.capacity_bytes as f64 / 1e9, h.track_to_track_seek_nanos as f64 / 1e6, h.average_seek_nanos as f64 / 1e6,
                        h.full_stroke_seek_nanos as f64 / 1e6, h.outer_rate_bytes_per_sec / 1e6, h.inner_rate_bytes_per_sec / 1e6,
                        h.command_overhead_nanos / 1000, h.queue_depth, match h.scheduling { device::DiskScheduling::Satf => "SATF", device::DiskScheduling::Fifo => "no" }
                    ),
                    DeviceModel::Ssd(s) => format!(
                        "{tier} SSDs: {:.0} GB, {:.0}k/{:.0}k IOPS read/write (write at {}, {:.0}% of span written → {:.0}k), {:.0}/{:.0} µs latency, {:.0}/{:.0} MB/s",
                        s.capacity_bytes as f64 / 1e9, s.read_iops / 1e3, s.write_iops_steady / 1e3,
                        match s.write_state { device::SsdWriteState::Fresh => "fresh", device::SsdWriteState::SteadyState => "steady state" },
                        s.written_span_fraction * 100.0, device::ssd_write_iops(s) / 1e3,
                        s.read_latency_nanos as f64 / 1e3, s.write_latency_nanos as f64 / 1e3,
                        s.read_bandwidth_bytes_per_sec / 1e6, s.write_bandwidth_bytes_per_sec / 1e6
                    ),
                });
            }
        }
        let c = &self.controller;
        a.push(format!(
            "controller: {} µs per request, write-back cache {} MiB{}, read-ahead {}",
            c.overhead_nanos / 1000,
            c.write_back_bytes >> 20,
            if c.write_back_bytes > 0 {
                format!(
                    " (destage from {:.0}% dirty, elevator order)",
                    c.destage_high_fraction * 100.0
                )
            } else {
                " (write-through)".into()
            },
            if c.read_ahead_bytes > 0 {
                format!("{} KiB", c.read_ahead_bytes >> 10)
            } else {
                "off".into()
            }
        ));
        let ceilings: Vec<String> = [
            c.max_iops.map(|v| format!("{v:.0} IOPS")),
            c.max_bytes_per_sec.map(|v| format!("{:.0} MB/s", v / 1e6)),
            c.parity_chunks_per_sec
                .map(|v| format!("{v:.0} parity chunks/s")),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !ceilings.is_empty() {
            a.push(format!("controller ceilings: {}", ceilings.join(", ")));
        }
        let md_parity = matches!(self.layout.level, Level::Raid5 | Level::Raid6)
            && self.layout.failed.is_empty()
            && self
                .layout
                .members
                .iter()
                .all(|m| matches!(m, Member::Disk(_)));
        match (&c.md, md_parity) {
            (Some(md), true) => a.push(format!(
                "Linux md RAID 5/6: stripe cache of {} stripe heads (4 KiB per member); writes in flight gather in their stripe heads until a thread takes them, which picks rmw or rcw by fewer pre-reads with cached pages skipped, one bio per page; adjacent full-stripe heads of a chunk are handled as one batch; every pass costs {:.1} µs plus {:.2} µs per page of parity input in raid5d{} (docs/model.md)",
                md.stripe_cache_size,
                md.stripe_cost_nanos / 1e3,
                md.page_cost_nanos(self.layout.level == Level::Raid6) / 1e3,
                if md.group_thread_cnt == 0 {
                    ", md's single stripe-handling thread (group_thread_cnt 0)".to_string()
                } else {
                    format!(" or one of its {} group_thread_cnt workers", md.group_thread_cnt)
                }
            )),
            _ => a.push("parity layout left-symmetric; small writes pick read-modify-write or reconstruct-write by fewer reads (Linux md rule)".into()),
        }
        if let Some(md) = &c.md {
            let cap = |d: u32| {
                self.devices
                    .get(d as usize)
                    .map_or(0, |m| m.capacity_bytes())
            };
            let extent = md_bitmap::BitmapExtent::of(&self.layout, md.bitmap, &cap);
            match extent {
                Some(e) => a.push(format!(
                    "Linux md write-intent bitmap, internal: {} bits of {} MiB of {}{}; a write whose chunk's bit is clear sets it, and writes wait for the next unplug, which writes the dirty bitmap pages to every member (near its start) and waits for them{}; the daemon clears a chunk 10–15 s after its last write (passes every 5 s) (docs/model.md, \"The write-intent bitmap\")",
                    e.covered_bytes.div_ceil(e.chunk_bytes),
                    e.chunk_bytes >> 20,
                    if e.stripes.is_some() { "each member" } else { "the array" },
                    if md.bitmap == md_bitmap::MdBitmapSetting::Auto {
                        " (mdadm's default on members over 100 GiB; --md-bitmap none for an array without)"
                    } else {
                        ""
                    },
                    if e.stripes.is_some() { ", raid5d handling no stripe meanwhile" } else { "" },
                )),
                None if !matches!(self.layout.level, Level::Raid0 | Level::Concat)
                    || self.layout.members.iter().any(|m| matches!(m, Member::Node(_))) =>
                {
                    a.push(
                        if md.bitmap == md_bitmap::MdBitmapSetting::None {
                            "Linux md: no write-intent bitmap (--md-bitmap none)"
                        } else {
                            "Linux md: no write-intent bitmap (mdadm adds one by default only on members over 100 GiB; --md-bitmap internal models one)"
                        }
                        .into(),
                    )
                }
                None => {}
            }
            match md.safe_mode_delay_nanos {
                Some(delay) if md_super::has_safe_mode(&self.layout) => a.push(format!(
                    "Linux md safe mode{}: the array is marked dirty before a write that finds it clean, which waits while md writes its superblock{} to every member, and clean once no write has been in flight for {} (md.rst \"safe_mode_delay\"; docs/model.md)",
                    if delay == 0 { " off" } else { "" },
                    if extent.is_some() {
                        " (after the bitmap's superblock page)"
                    } else {
                        ""
                    },
                    if delay == 0 {
                        "ever (only when stopped)".to_string()
                    } else {
                        format!("{}–{} ms", delay / 1_000_000, 2 * delay / 1_000_000)
                    },
                )),
                _ => {}
            }
        }
        fn mirrored(n: &Node) -> bool {
            matches!(n.level, Level::Raid1 | Level::Raid10)
                || n.members
                    .iter()
                    .any(|m| matches!(m, Member::Node(child) if mirrored(child)))
        }
        if c.md.is_some() && mirrored(&self.layout) {
            a.push("mirror reads as Linux md's read_balance: a read continuing the last one on a disk stays there (RAID 1); then an idle copy, the first in member order (so one disk serves a queue depth of 1), or on SSDs the least busy; every copy busy on hard disks, the nearest head; md RAID 10's far and offset copies at their lowest address on hard disks (docs/model.md)".into());
        } else {
            a.push("mirror reads go to the least busy copy, then the nearest head".into());
        }
        a
    }

    /// One line for the human output: `RAID 5 of 8 disks, chunk 64 KiB`.
    pub fn describe(&self) -> String {
        fn node(n: &Node) -> String {
            let inner: Vec<String> = n
                .members
                .iter()
                .map(|m| match m {
                    Member::Disk(_) => "disk".to_string(),
                    Member::Node(c) => node(c),
                })
                .collect();
            let all_disks = n.members.iter().all(|m| matches!(m, Member::Disk(_)));
            let body = if all_disks {
                format!("{} disks", n.members.len())
            } else {
                inner.join(" + ")
            };
            let chunk = match n.level {
                Level::Raid0 | Level::Raid5 | Level::Raid6 => {
                    format!(", chunk {} KiB", n.chunk_bytes >> 10)
                }
                Level::Raid10 => format!(
                    ", md layout {}, chunk {} KiB",
                    n.raid10.unwrap_or_default().name(),
                    n.chunk_bytes >> 10
                ),
                _ => String::new(),
            };
            let failed = if n.failed.is_empty() {
                String::new()
            } else {
                format!(", DEGRADED (failed {:?})", n.failed)
            };
            format!("{}({body}{chunk}{failed})", n.level.name())
        }
        node(&self.layout)
    }
}
