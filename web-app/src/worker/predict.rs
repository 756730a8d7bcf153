//! Array predictions for the Array view, computed in the worker: up to [`MAX_CONFIGS`] RAID
//! layouts, each replayed from the trace in closed loop with and without the SSD cache tier
//! chosen in the Cache view, all in one pass over the file (as `blocksight predict` does for one
//! layout). With the IOPS-vs-latency curve asked for, the same pass also replays every layout at
//! each depth of [`CURVE_DEPTHS`] (as `blocksight predict --curve` does, one run per depth), with
//! and without the cache. No browser API here: the worker feeds events, tests feed the sample
//! trace.
//!
//! The cache tier decides hits, fills and back-end I/O from the order of the requests alone (the
//! timestamps only feed its statistics), and a closed-loop replay keeps the trace's order, so
//! every replay of a request sees the same cache decisions. One simulator therefore serves all
//! the replays with the cache ([`SharedTier`]): it runs once per request and the others reuse
//! its answer, which keeps memory at one cache's state however many depths and layouts run.

use std::cell::RefCell;
use std::rc::Rc;

use analyzer_core::array::spec::device_with_overrides;
use analyzer_core::array::{
    ArrayConfig, CacheAccess, CacheDevices, CacheTier, ControllerModel, CurvePoint, DiskPreset,
    ReplayMode, RunResult, SimulatorTier, StandardLevel, TraceReplay,
};
use analyzer_core::cache::{Admission, CacheChoice, PolicyKind, Preset, SimConfig, WriteMode};
use analyzer_core::decode::DecodeOptions;
use analyzer_core::IoEvent;
use serde::{Deserialize, Serialize};

use super::session::Session;

/// Most layouts compared side by side.
pub const MAX_CONFIGS: usize = 4;

/// Battery-backed write-back cache of the hardware controller when "controller cache" is on.
pub const CONTROLLER_CACHE_BYTES: u64 = 1 << 30;

/// The SSD cache tier's devices: two SATA SSDs in RAID 1 (the CLI's default).
pub const CACHE_DISK_PRESET: &str = "sata-ssd";
pub const CACHE_DISKS: u32 = 2;

/// One layout from the editor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrayParams {
    /// A [`StandardLevel`] name (`raid5`, ...).
    pub level: String,
    pub disks: u32,
    /// A [`DiskPreset`] name (`sas-10k`, ...).
    pub disk: String,
    pub chunk_bytes: u64,
    /// A hardware controller with [`CONTROLLER_CACHE_BYTES`] of write-back cache; otherwise
    /// Linux md (no controller cache).
    pub controller_cache: bool,
}

impl Default for ArrayParams {
    fn default() -> Self {
        ArrayParams {
            level: "raid5".into(),
            disks: 6,
            disk: DiskPreset::ALL[1].name().into(),
            chunk_bytes: 64 << 10,
            controller_cache: false,
        }
    }
}

impl ArrayParams {
    /// The engine's configuration, with the SSD cache devices when `with_cache`.
    pub fn config(&self, with_cache: bool) -> Result<ArrayConfig, String> {
        let level = StandardLevel::from_name(&self.level)
            .ok_or_else(|| format!("unknown RAID level {:?}", self.level))?;
        let device = device_with_overrides(&self.disk, None).map_err(|e| e.to_string())?;
        let layout = level
            .build(self.disks, self.chunk_bytes, None)
            .map_err(|e| e.to_string())?;
        let controller = if self.controller_cache {
            ControllerModel::hardware(CONTROLLER_CACHE_BYTES)
        } else {
            ControllerModel::software()
        };
        let cfg = ArrayConfig::new(vec![device; self.disks as usize], layout, controller)
            .map_err(|e| e.to_string())?;
        if !with_cache {
            return Ok(cfg);
        }
        let device = device_with_overrides(CACHE_DISK_PRESET, None).map_err(|e| e.to_string())?;
        let layout = StandardLevel::Raid1
            .build(CACHE_DISKS, 64 << 10, None)
            .map_err(|e| e.to_string())?;
        cfg.with_cache(CacheDevices {
            devices: vec![device; CACHE_DISKS as usize],
            layout,
        })
        .map_err(|e| e.to_string())
    }

    /// Short label: `RAID 5, 6 × sas-10k, 64 KiB chunk`.
    pub fn label(&self) -> String {
        format!(
            "{} × {} {}, {} KiB chunk{}",
            self.disks,
            self.disk,
            self.level,
            self.chunk_bytes >> 10,
            if self.controller_cache {
                ", controller cache"
            } else {
                ""
            }
        )
    }
}

/// The SSD cache tier in front of every layout, and the Cache view's chosen cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheParams {
    pub size_bytes: u64,
    pub line_bytes: u64,
    /// A [`PolicyKind`] name (online policies only).
    pub policy: String,
    /// A [`WriteMode`] name: `ro`, `wt`, `wa`, `wb`.
    pub mode: String,
    /// A product [`Preset`] name (`bcache`, ...); `None` for a custom cache. The preset brings
    /// its admission rule and sequential cutoff; policy, line size and mode above are explicit
    /// settings that override the preset's (the UI fills them with the preset's own values).
    #[serde(default)]
    pub preset: Option<String>,
    /// An explicit admission rule ([`Admission::parse`]: `always`, `nhit:N`, `smq`,
    /// `seqcut:BYTES`) replacing the preset's; `None` keeps the preset's (or `always`).
    #[serde(default)]
    pub admission: Option<String>,
}

impl Default for CacheParams {
    fn default() -> Self {
        CacheParams {
            size_bytes: 0,
            line_bytes: 4096,
            policy: "lru".into(),
            mode: "wt".into(),
            preset: None,
            admission: None,
        }
    }
}

impl CacheParams {
    /// The settings as the engine's [`CacheChoice`] (the rule `blocksight simulate --preset`
    /// follows: preset first, explicit settings override).
    pub fn choice(&self) -> Result<CacheChoice, String> {
        let preset = match self.preset.as_deref() {
            None | Some("") => None,
            Some(name) => Some(
                Preset::from_name(name).ok_or_else(|| format!("unknown cache preset {name:?}"))?,
            ),
        };
        let policy = PolicyKind::from_name(&self.policy)
            .filter(|p| !p.needs_future())
            .ok_or_else(|| format!("cache policy {:?} cannot run online", self.policy))?;
        let mode = WriteMode::from_name(&self.mode)
            .ok_or_else(|| format!("unknown cache write mode {:?}", self.mode))?;
        let admission = match self.admission.as_deref() {
            None | Some("") => None,
            Some(a) => Some(Admission::parse(a).map_err(|e| format!("cache admission {e}"))?),
        };
        Ok(CacheChoice {
            preset,
            policy: Some(policy),
            line_bytes: Some(self.line_bytes.max(512)),
            mode: Some(mode),
            admission,
        })
    }

    /// The simulator's configuration (checked): the one place the web app builds it, for the
    /// Cache view's simulation and the Array view's cache tier.
    pub fn sim_config(&self) -> Result<SimConfig, String> {
        let choice = self.choice()?;
        let line = choice.effective_line_bytes();
        let cfg = choice.config((self.size_bytes / line).max(1));
        cfg.validate().map_err(|e| format!("cache: {e}"))?;
        Ok(cfg)
    }
}

/// Outstanding I/Os of the IOPS-vs-latency curve: the depths of `blocksight predict --curve`.
pub const CURVE_DEPTHS: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// What the Array view asks for. Build it with [`PredictRequest::new`] and the `with_` methods,
/// so a new field gets its default everywhere.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictRequest {
    pub configs: Vec<ArrayParams>,
    pub cache: Option<CacheParams>,
    /// Outstanding I/Os of the closed-loop replay.
    pub outstanding: u32,
    /// Also replay every layout at each of [`CURVE_DEPTHS`] (the IOPS-vs-latency curve).
    #[serde(default)]
    pub curve: bool,
    /// Only the requests in `[start, end)` nanoseconds after the trace's first request (the
    /// brushed time window); the whole trace when `None`.
    #[serde(default)]
    pub window_nanos: Option<(u64, u64)>,
}

impl PredictRequest {
    /// The layouts at `outstanding` I/Os, with the cache tier when given; no curve, whole trace.
    pub fn new(
        configs: Vec<ArrayParams>,
        cache: Option<CacheParams>,
        outstanding: u32,
    ) -> PredictRequest {
        PredictRequest {
            configs,
            cache,
            outstanding,
            curve: false,
            window_nanos: None,
        }
    }

    /// Adds (or not) the IOPS-vs-latency curve.
    pub fn with_curve(self, curve: bool) -> PredictRequest {
        PredictRequest { curve, ..self }
    }

    /// Scopes the prediction to a time window (nanoseconds after the first request).
    pub fn with_window(self, window_nanos: Option<(u64, u64)>) -> PredictRequest {
        PredictRequest {
            window_nanos,
            ..self
        }
    }

    /// The window from the URL's seconds, rounded as the Hot data view's re-analysis does.
    pub fn window_from_secs(window_secs: Option<(f64, f64)>) -> Option<(u64, u64)> {
        window_secs.map(|(a, b)| ((a * 1e9) as u64, (b * 1e9) as u64))
    }

    /// The request to send now for this one, given the request of the answer shown. The curve
    /// replays every layout ten times over, so it comes in a second pass: first the numbers at
    /// the chosen depth alone (a few times faster), then, once they are shown, the curve.
    /// An answer with the curve also serves a request without it (the view hides the curve).
    pub fn staged(self, shown: Option<&PredictRequest>) -> PredictRequest {
        let first = self.clone().with_curve(false);
        let full = self.clone().with_curve(true);
        match shown {
            Some(s) if *s == full => full,
            Some(s) if *s == first => self,
            _ => first,
        }
    }

    /// The depths replayed: the chosen one, and the curve's when asked, ascending.
    pub fn depths(&self) -> Vec<u32> {
        let qd = self.outstanding.max(1);
        let mut d = vec![qd];
        if self.curve {
            d.extend(CURVE_DEPTHS);
        }
        d.sort_unstable();
        d.dedup();
        d
    }
}

/// The prediction for one layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigPrediction {
    pub params: ArrayParams,
    pub description: String,
    pub capacity_bytes: u64,
    pub without_cache: RunResult,
    pub with_cache: Option<RunResult>,
    /// IOPS and latency at each replayed depth without the cache (empty without `curve`).
    #[serde(default)]
    pub curve: Vec<CurvePoint>,
    /// The same with the cache tier (empty without `curve` or without a cache).
    #[serde(default)]
    pub curve_with_cache: Vec<CurvePoint>,
}

/// The answer for every layout of a [`PredictRequest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictResult {
    pub request: PredictRequest,
    pub configs: Vec<ConfigPrediction>,
    /// The cache tier in words, when there is one.
    pub cache_description: Option<String>,
    /// Requests replayed (reads and writes; discards and flushes are not).
    pub replayed_requests: u64,
    pub assumptions: Vec<String>,
}

/// A checked request: engine configurations built, cache configuration validated.
pub struct Plan {
    request: PredictRequest,
    arrays: Vec<(ArrayConfig, ArrayConfig)>,
    cache: Option<(SimConfig, String)>,
    /// The shared cache simulator, once [`Plan::tiers`] made it (for [`Plan::check_memory`]).
    memo: RefCell<Option<Rc<RefCell<Memo>>>>,
    /// [`MAX_TIER_LINES`], lowered by tests.
    tier_limit_lines: u64,
}

/// Most lines the cache tier may hold in a browser tab (about 45 bytes each for LRU, more with
/// ghost lists). The replay needs every request's real hit or miss, so it cannot sample as the
/// Cache view does; past this the prediction stops and says what to do instead.
pub const MAX_TIER_LINES: u64 = 8 << 20;

impl Plan {
    pub fn new(request: PredictRequest) -> Result<Plan, String> {
        if request.configs.is_empty() || request.configs.len() > MAX_CONFIGS {
            return Err(format!("give 1 to {MAX_CONFIGS} layouts"));
        }
        let mut arrays = Vec::new();
        for (i, p) in request.configs.iter().enumerate() {
            let without = p
                .config(false)
                .map_err(|e| format!("layout {}: {e}", i + 1))?;
            let with = p
                .config(true)
                .map_err(|e| format!("layout {}: {e}", i + 1))?;
            arrays.push((without, with));
        }
        let cache = match &request.cache {
            Some(c) => {
                let cfg = c.sim_config()?;
                let desc = format!(
                    "{} over {} lines of {} KiB, {}",
                    cfg.policy.name(),
                    cfg.capacity_lines,
                    cfg.line_bytes >> 10,
                    cfg.mode.name()
                );
                Some((cfg, desc))
            }
            None => None,
        };
        Ok(Plan {
            request,
            arrays,
            cache,
            memo: RefCell::new(None),
            tier_limit_lines: MAX_TIER_LINES,
        })
    }

    /// Decodes the trace for this request: events only, within its time window.
    pub fn session(&self) -> Session {
        Session::new(None, DecodeOptions::default())
            .events_only()
            .with_window(self.request.window_nanos)
    }

    /// An error in plain words when the cache tier holds more lines than a tab may
    /// ([`MAX_TIER_LINES`]); the worker asks between slices of the file.
    pub fn check_memory(&self) -> Result<(), String> {
        let memo = self.memo.borrow();
        let Some(m) = memo.as_ref() else {
            return Ok(());
        };
        let lines = m.borrow().tier.occupancy_lines();
        if lines <= self.tier_limit_lines {
            return Ok(());
        }
        let line_bytes = self.cache.as_ref().map_or(0, |(c, _)| c.line_bytes);
        Err(format!(
            "The SSD cache tier came to hold more than {} lines of {} KiB ({} GiB of this trace's data): more than a browser tab can simulate for the array replay. Choose a larger cache line or a smaller cache in the Cache view, or run `blocksight predict` on the command line, which has no such limit.",
            self.tier_limit_lines,
            line_bytes >> 10,
            (self.tier_limit_lines * line_bytes) >> 30
        ))
    }

    /// The cache tier's views, one per replay with the cache (layouts × depths), all served by
    /// one simulator; empty without a cache.
    pub fn tiers(&self) -> Result<Vec<Box<dyn CacheTier>>, String> {
        let Some((cfg, desc)) = &self.cache else {
            return Ok(Vec::new());
        };
        let sim = SimulatorTier::new(cfg, desc.clone()).map_err(|e| format!("cache: {e}"))?;
        let shared = Rc::new(RefCell::new(Memo {
            tier: sim,
            computed: 0,
            access: CacheAccess {
                hit: false,
                writes_cache: false,
            },
            backend: Vec::new(),
        }));
        *self.memo.borrow_mut() = Some(shared.clone());
        let replays = self.arrays.len() * self.request.depths().len();
        Ok((0..replays)
            .map(|_| {
                Box::new(SharedTier {
                    memo: shared.clone(),
                    accesses: 0,
                }) as Box<dyn CacheTier>
            })
            .collect())
    }

    /// The replays, layout by layout and depth by depth: without the cache, then (when there is
    /// one) with it.
    pub fn replays<'a>(&self, tiers: &'a mut [Box<dyn CacheTier>]) -> Replays<'a> {
        let depths = self.request.depths();
        let mut layouts = Vec::new();
        let mut tiers = tiers.iter_mut();
        for (without, with) in &self.arrays {
            let mut plain = Vec::new();
            let mut cached = Vec::new();
            for &qd in &depths {
                let mode = ReplayMode::Closed { outstanding: qd };
                plain.push((qd, TraceReplay::new(without, mode, None)));
                if let Some(t) = tiers.next() {
                    cached.push((qd, TraceReplay::new(with, mode, Some(&mut **t))));
                }
            }
            layouts.push(LayoutReplays { plain, cached });
        }
        Replays { layouts }
    }

    pub fn finish(self, replays: Replays<'_>) -> PredictResult {
        let qd = self.request.outstanding.max(1);
        let curve = self.request.curve;
        let mut configs = Vec::new();
        let mut replayed = 0;
        for ((params, (without_cfg, _)), runs) in self
            .request
            .configs
            .iter()
            .zip(&self.arrays)
            .zip(replays.layouts)
        {
            if let Some((_, r)) = runs.plain.first() {
                replayed = r.counts().0;
            }
            let (without, plain_curve) = finish_runs(runs.plain, qd);
            let (with, cached_curve) = finish_runs(runs.cached, qd);
            let Some(without_cache) = without else {
                continue;
            };
            configs.push(ConfigPrediction {
                params: params.clone(),
                description: without_cfg.describe(),
                capacity_bytes: without_cfg.capacity_bytes(),
                without_cache,
                with_cache: with,
                curve: if curve { plain_curve } else { Vec::new() },
                curve_with_cache: if curve { cached_curve } else { Vec::new() },
            });
        }
        // Every layout's model assumptions (disk presets, controller), each line once.
        let mut assumptions: Vec<String> = Vec::new();
        for (c, _) in &self.arrays {
            for a in c.assumptions() {
                if !assumptions.contains(&a) {
                    assumptions.push(a);
                }
            }
        }
        assumptions.push(format!(
            "trace replayed in closed loop with {qd} outstanding I/Os; offsets beyond a layout's capacity wrap around it; discards and flushes are not replayed"
        ));
        if let Some((a, b)) = self.request.window_nanos {
            assumptions.push(format!(
                "only the requests from {} to {} after the trace's first request (the brushed time window)",
                crate::units::duration(a),
                crate::units::duration(b)
            ));
        }
        if curve {
            assumptions.push(format!(
                "curve: the same replay at {} outstanding I/Os, each depth a separate run from an idle array (and a cold cache)",
                CURVE_DEPTHS.map(|d| d.to_string()).join(", ")
            ));
        }
        if let Some((_, desc)) = &self.cache {
            assumptions.push(format!(
                "cache tier: {desc} on {CACHE_DISKS} × {CACHE_DISK_PRESET} in RAID 1, starting cold"
            ));
        }
        assumptions.push(format!(
            "controller cache on: a hardware controller with {} MiB battery-backed write-back cache; off: Linux md",
            CONTROLLER_CACHE_BYTES >> 20
        ));
        PredictResult {
            cache_description: self.cache.map(|(_, d)| d),
            request: self.request,
            configs,
            replayed_requests: replayed,
            assumptions,
        }
    }
}

/// Finishes one layout's replays: the run at the chosen depth `qd` and every depth's point.
fn finish_runs(runs: Vec<(u32, TraceReplay<'_>)>, qd: u32) -> (Option<RunResult>, Vec<CurvePoint>) {
    let mut chosen = None;
    let mut points = Vec::new();
    for (depth, replay) in runs {
        let r = replay.finish();
        points.push(CurvePoint {
            load: f64::from(depth),
            iops: r.iops,
            mean_latency_nanos: r.latency.mean_nanos,
            p99_latency_nanos: r.latency.p99_nanos,
        });
        if depth == qd {
            chosen = Some(r);
        }
    }
    (chosen, points)
}

/// One layout's replays, by depth.
struct LayoutReplays<'a> {
    plain: Vec<(u32, TraceReplay<'a>)>,
    cached: Vec<(u32, TraceReplay<'a>)>,
}

/// The running replays of a [`Plan`]; feed every event of the trace to [`Replays::observe`].
pub struct Replays<'a> {
    layouts: Vec<LayoutReplays<'a>>,
}

impl Replays<'_> {
    /// Feeds one request to every replay (each sees request k before any sees request k + 1,
    /// which [`SharedTier`] relies on).
    pub fn observe(&mut self, e: &IoEvent) {
        for l in &mut self.layouts {
            for (_, r) in l.plain.iter_mut().chain(l.cached.iter_mut()) {
                r.observe(e);
            }
        }
    }
}

/// The one cache simulator behind every [`SharedTier`], and its answer to the latest request.
struct Memo {
    tier: SimulatorTier,
    /// How many requests the simulator has seen.
    computed: u64,
    access: CacheAccess,
    backend: Vec<IoEvent>,
}

/// One replay's view of the shared cache simulator: its k-th request is the simulator's k-th
/// (every replay is fed the same requests in the same order and skips the same ones), so the
/// first replay to reach a request runs the simulator and the others copy its answer.
struct SharedTier {
    memo: Rc<RefCell<Memo>>,
    /// Requests this replay has passed to the cache.
    accesses: u64,
}

impl CacheTier for SharedTier {
    fn access(&mut self, request: &IoEvent, backend: &mut Vec<IoEvent>) -> CacheAccess {
        self.accesses += 1;
        let mut m = self.memo.borrow_mut();
        if m.computed < self.accesses {
            let Memo {
                tier,
                access,
                backend: out,
                computed,
            } = &mut *m;
            out.clear();
            *access = tier.access(request, out);
            *computed += 1;
        }
        // Every replay is at most one request behind the first (see `Replays::observe`).
        debug_assert_eq!(m.computed, self.accesses);
        backend.extend_from_slice(&m.backend);
        m.access
    }

    fn writes_back(&self) -> bool {
        self.memo.borrow().tier.writes_back()
    }

    fn describe(&self) -> String {
        self.memo.borrow().tier.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// The first `n` events of the real sample trace.
    fn sample_events(n: usize) -> Vec<IoEvent> {
        crate::test_support::sample_events(n).0
    }

    fn predict(request: PredictRequest, events: &[IoEvent]) -> PredictResult {
        let plan = Plan::new(request).expect("valid plan");
        let mut tiers = plan.tiers().expect("tiers");
        let mut replays = plan.replays(&mut tiers);
        for e in events {
            replays.observe(e);
        }
        plan.finish(replays)
    }

    fn params(level: &str, disks: u32, disk: &str) -> ArrayParams {
        ArrayParams {
            level: level.into(),
            disks,
            disk: disk.into(),
            ..ArrayParams::default()
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn more_disks_more_iops_and_the_cache_tier_is_reported() {
        let events = sample_events(6_000);
        let r = predict(
            PredictRequest::new(
                vec![
                    params("raid0", 2, "sata-7k2"),
                    params("raid0", 8, "sata-7k2"),
                ],
                Some(CacheParams {
                    size_bytes: 256 << 20,
                    line_bytes: 64 << 10,
                    policy: "lru".into(),
                    mode: "wb".into(),
                    ..CacheParams::default()
                }),
                16,
            ),
            &events,
        );
        assert_eq!(r.configs.len(), 2);
        assert!(r.replayed_requests > 5_000, "{}", r.replayed_requests);
        let (small, big) = (&r.configs[0], &r.configs[1]);
        assert!(
            big.without_cache.iops > small.without_cache.iops * 1.5,
            "{} vs {}",
            big.without_cache.iops,
            small.without_cache.iops
        );
        assert_eq!(
            big.without_cache
                .disks
                .iter()
                .filter(|d| d.tier == "array")
                .count(),
            8
        );
        let with = small.with_cache.as_ref().expect("with cache");
        assert!(with.disks.iter().any(|d| d.tier == "cache" && d.iops > 0.0));
        assert!(r.cache_description.is_some());
        // Deterministic: the same request gives the same numbers.
        let again = predict(r.request.clone(), &events);
        assert_eq!(again, r);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_cache_tier_too_large_for_the_tab_stops_in_words() {
        let events = sample_events(5_000);
        let request = PredictRequest::new(
            vec![ArrayParams::default()],
            Some(CacheParams {
                line_bytes: 4096,
                ..lru_cache(1 << 30, "wt")
            }),
            4,
        );
        let run = |limit: u64| {
            let mut plan = Plan::new(request.clone()).expect("valid");
            plan.tier_limit_lines = limit;
            let mut tiers = plan.tiers().expect("tiers");
            let mut replays = plan.replays(&mut tiers);
            events.iter().for_each(|e| replays.observe(e));
            drop(replays);
            plan.check_memory()
        };
        assert_eq!(run(MAX_TIER_LINES), Ok(()));
        let err = run(1_000).expect_err("over the limit");
        assert!(
            err.contains("blocksight predict") && err.contains("1000 lines"),
            "{err}"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn bad_layouts_are_refused_in_words() {
        let err = Plan::new(PredictRequest::new(
            vec![params("raid6", 2, "nvme")],
            None,
            1,
        ))
        .err()
        .unwrap_or_default();
        assert!(err.starts_with("layout 1:"), "{err}");
        let err = Plan::new(PredictRequest::new(
            vec![ArrayParams::default()],
            Some(CacheParams {
                size_bytes: 1 << 30,
                line_bytes: 64 << 10,
                policy: "opt".into(),
                mode: "wt".into(),
                ..CacheParams::default()
            }),
            1,
        ))
        .err()
        .unwrap_or_default();
        assert!(err.contains("online"), "{err}");
    }

    fn lru_cache(size_bytes: u64, mode: &str) -> CacheParams {
        CacheParams {
            size_bytes,
            line_bytes: 64 << 10,
            policy: "lru".into(),
            mode: mode.into(),
            ..CacheParams::default()
        }
    }

    /// The reference: one independent `TraceReplay` at `qd`, with a fresh cache simulator when
    /// `cache` is given (what `blocksight predict --qd Q [--cache-size ...]` runs).
    fn direct(
        params: &ArrayParams,
        cache: Option<&CacheParams>,
        qd: u32,
        events: &[IoEvent],
    ) -> RunResult {
        let cfg = params.config(cache.is_some()).expect("layout");
        let mut tier = cache.map(|c| {
            SimulatorTier::new(&c.sim_config().expect("cache config"), "reference").expect("tier")
        });
        let mut r = TraceReplay::new(
            &cfg,
            ReplayMode::Closed { outstanding: qd },
            tier.as_mut().map(|t| t as &mut dyn CacheTier),
        );
        for e in events {
            r.observe(e);
        }
        r.finish()
    }

    fn assert_point(p: &CurvePoint, r: &RunResult, what: &str) {
        assert_eq!(
            (p.iops, p.mean_latency_nanos, p.p99_latency_nanos),
            (r.iops, r.latency.mean_nanos, r.latency.p99_nanos),
            "{what} at {}",
            p.load
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn curve_points_equal_independent_replays_at_each_depth() {
        let events = sample_events(1_500);
        let layouts = vec![params("raid5", 6, "sas-10k"), params("raid10", 4, "nvme")];
        let cache = lru_cache(64 << 20, "wb");
        // 12 is not a sweep depth: it is replayed too, and is the chosen result.
        let r = predict(
            PredictRequest::new(layouts.clone(), Some(cache.clone()), 12).with_curve(true),
            &events,
        );
        let mut depths = CURVE_DEPTHS.to_vec();
        depths.push(12);
        depths.sort_unstable();
        for (c, p) in r.configs.iter().zip(&layouts) {
            let loads: Vec<u32> = c.curve.iter().map(|p| p.load as u32).collect();
            assert_eq!(loads, depths);
            assert_eq!(c.curve_with_cache.len(), depths.len());
            // Spot-check depths against independent replays (each from an idle array and a cold
            // cache), without and with the shared cache simulator.
            for (i, &qd) in depths.iter().enumerate() {
                if ![1, 12, 256].contains(&qd) {
                    continue;
                }
                assert_point(&c.curve[i], &direct(p, None, qd, &events), "no cache");
                assert_point(
                    &c.curve_with_cache[i],
                    &direct(p, Some(&cache), qd, &events),
                    "with cache",
                );
            }
            let at12 = depths.iter().position(|&d| d == 12).unwrap_or_default();
            assert_point(&c.curve[at12], &c.without_cache, "chosen");
            let with = c.with_cache.as_ref().expect("with cache");
            assert_point(&c.curve_with_cache[at12], with, "chosen with cache");
            assert_eq!(*with, direct(p, Some(&cache), 12, &events));
            assert_eq!(c.without_cache, direct(p, None, 12, &events));
            // More outstanding I/Os never lower the throughput by much and raise the latency.
            assert!(c.curve[8].iops > c.curve[0].iops, "{:?}", c.curve);
            assert!(c.curve[8].mean_latency_nanos > c.curve[0].mean_latency_nanos);
        }
        // Without the curve only the chosen depth runs, with the same numbers.
        let plain = predict(PredictRequest::new(layouts, Some(cache), 12), &events);
        assert!(plain.configs[0].curve.is_empty());
        assert_eq!(plain.configs[1].without_cache, r.configs[1].without_cache);
        assert_eq!(plain.configs[1].with_cache, r.configs[1].with_cache);
    }

    /// The first `n` sample events and the same events as a native .bst file (cheap to decode:
    /// the browser runs every unit test in one page, within the runner's time limit).
    fn sample_prefix_native(n: usize) -> (Vec<IoEvent>, Vec<u8>) {
        let (events, header) = crate::test_support::sample_events(n);
        let native = crate::test_support::native(&header, &events);
        (events, native)
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_time_window_replays_only_its_requests() {
        let (all, native) = sample_prefix_native(8_000);
        let origin = all[0].time_nanos;
        let span = all[all.len() - 1].time_nanos - origin;
        let (start, end) = (span / 3, span / 3 * 2);
        let request = PredictRequest::new(
            vec![params("raid5", 6, "sas-10k")],
            Some(lru_cache(256 << 20, "wt")),
            16,
        )
        .with_window(Some((start, end)));
        // Through the worker's path: the plan's session decodes the file in chunks.
        let plan = Plan::new(request.clone()).expect("plan");
        let mut tiers = plan.tiers().expect("tiers");
        let mut replays = plan.replays(&mut tiers);
        let mut session = plan.session();
        for chunk in native.chunks(1 << 16) {
            session
                .push_with(chunk, &mut |e| replays.observe(e))
                .map_err(|e| e.plain_words())
                .expect("decodes");
        }
        session
            .finish_with(&mut |e| replays.observe(e))
            .map_err(|e| e.plain_words())
            .expect("finishes");
        let windowed = plan.finish(replays);
        // The reference: the window's events picked by hand, replayed directly.
        let inside: Vec<IoEvent> = all
            .iter()
            .filter(|e| (start..end).contains(&(e.time_nanos - origin)))
            .copied()
            .collect();
        assert!(
            inside.len() > 100 && inside.len() < all.len() / 2,
            "{}",
            inside.len()
        );
        let c = &windowed.configs[0];
        let p = &request.configs[0];
        assert_eq!(c.without_cache, direct(p, None, 16, &inside));
        assert_eq!(
            c.with_cache.as_ref(),
            Some(&direct(p, request.cache.as_ref(), 16, &inside))
        );
        let reads_writes = inside
            .iter()
            .filter(|e| {
                matches!(e.op, analyzer_core::Op::Read | analyzer_core::Op::Write)
                    && e.len_bytes > 0
            })
            .count() as u64;
        assert_eq!(windowed.replayed_requests, reads_writes);
        assert!(windowed
            .assumptions
            .iter()
            .any(|a| a.contains("time window")));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_curve_comes_in_a_second_pass() {
        let want = PredictRequest::new(vec![ArrayParams::default()], None, 16).with_curve(true);
        let first = want.clone().with_curve(false);
        // Nothing shown, or an answer for other layouts: the chosen depth alone first.
        assert_eq!(want.clone().staged(None), first);
        let other = PredictRequest::new(vec![params("raid0", 2, "nvme")], None, 16);
        assert_eq!(want.clone().staged(Some(&other)), first);
        // Its numbers shown: now the curve; the curve shown: the same request (not resent).
        assert_eq!(want.clone().staged(Some(&first)), want);
        assert_eq!(want.clone().staged(Some(&want)), want);
        // Without the curve: one pass, and an answer with the curve already serves it.
        assert_eq!(first.clone().staged(None), first);
        assert_eq!(first.clone().staged(Some(&first)), first);
        assert_eq!(first.clone().staged(Some(&want)), want);
        // The window is part of the request: a new window starts over.
        let windowed = want.clone().with_window(Some((0, 1_000_000_000)));
        assert_eq!(
            windowed.clone().staged(Some(&want)),
            windowed.with_curve(false)
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn old_requests_without_the_new_fields_still_parse() {
        let old = r#"{"configs":[],"cache":null,"outstanding":4}"#;
        let r: PredictRequest = serde_json::from_str(old).expect("parses");
        assert_eq!(r, PredictRequest::new(Vec::new(), None, 4));
        assert_eq!(r.depths(), vec![4]);
        assert_eq!(r.with_curve(true).depths(), CURVE_DEPTHS.to_vec());
    }
}
