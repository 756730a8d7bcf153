//! Array predictions for the Array view, computed in the worker: up to [`MAX_CONFIGS`] RAID
//! layouts, each replayed from the trace in closed loop with and without the SSD cache tier
//! chosen in the Cache view, all in one pass over the file (as `blocksight predict` does for one
//! layout). No browser API here: the worker feeds events, tests feed the sample trace.

use analyzer_core::array::spec::device_with_overrides;
use analyzer_core::array::{
    ArrayConfig, CacheDevices, CacheTier, ControllerModel, DiskPreset, ReplayMode, RunResult,
    SimulatorTier, StandardLevel, TraceReplay,
};
use analyzer_core::cache::{Admission, CacheChoice, PolicyKind, Preset, SimConfig, WriteMode};
use analyzer_core::IoEvent;
use serde::{Deserialize, Serialize};

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

/// What the Array view asks for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictRequest {
    pub configs: Vec<ArrayParams>,
    pub cache: Option<CacheParams>,
    /// Outstanding I/Os of the closed-loop replay.
    pub outstanding: u32,
}

/// The prediction for one layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigPrediction {
    pub params: ArrayParams,
    pub description: String,
    pub capacity_bytes: u64,
    pub without_cache: RunResult,
    pub with_cache: Option<RunResult>,
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
}

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
        })
    }

    fn mode(&self) -> ReplayMode {
        ReplayMode::Closed {
            outstanding: self.request.outstanding.max(1),
        }
    }

    /// One cache simulator per layout (each layout sees the cache from cold).
    pub fn tiers(&self) -> Result<Vec<Box<dyn CacheTier>>, String> {
        let Some((cfg, desc)) = &self.cache else {
            return Ok(Vec::new());
        };
        let mut out: Vec<Box<dyn CacheTier>> = Vec::new();
        for _ in &self.arrays {
            out.push(Box::new(
                SimulatorTier::new(cfg, desc.clone()).map_err(|e| format!("cache: {e}"))?,
            ));
        }
        Ok(out)
    }

    /// The replays, layout by layout: without the cache, then (when there is one) with it.
    pub fn replays<'a>(&self, tiers: &'a mut [Box<dyn CacheTier>]) -> Replays<'a> {
        let mut runs = Vec::new();
        let mut tiers = tiers.iter_mut();
        for (without, with) in &self.arrays {
            let plain = TraceReplay::new(without, self.mode(), None);
            let cached = tiers
                .next()
                .map(|t| TraceReplay::new(with, self.mode(), Some(&mut **t)));
            runs.push((plain, cached));
        }
        Replays { runs }
    }

    pub fn finish(self, replays: Replays<'_>) -> PredictResult {
        let mut configs = Vec::new();
        let mut replayed = 0;
        for ((params, (without_cfg, _)), (plain, cached)) in self
            .request
            .configs
            .iter()
            .zip(&self.arrays)
            .zip(replays.runs)
        {
            replayed = plain.counts().0;
            configs.push(ConfigPrediction {
                params: params.clone(),
                description: without_cfg.describe(),
                capacity_bytes: without_cfg.capacity_bytes(),
                without_cache: plain.finish(),
                with_cache: cached.map(TraceReplay::finish),
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
            "trace replayed in closed loop with {} outstanding I/Os; offsets beyond a layout's capacity wrap around it; discards and flushes are not replayed",
            self.request.outstanding.max(1)
        ));
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

/// The running replays of a [`Plan`]; feed every event of the trace to [`Replays::observe`].
pub struct Replays<'a> {
    runs: Vec<(TraceReplay<'a>, Option<TraceReplay<'a>>)>,
}

impl Replays<'_> {
    pub fn observe(&mut self, e: &IoEvent) {
        for (plain, cached) in &mut self.runs {
            plain.observe(e);
            if let Some(c) = cached {
                c.observe(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer_core::compress::Decompressing;
    use analyzer_core::decode::DecodeOptions;
    use analyzer_core::{Decoder, TraceFormat};
    use wasm_bindgen_test::wasm_bindgen_test;

    const SAMPLE_ZST: &[u8] = include_bytes!("../../../tests/data/sample/pgbench.tracefs.txt.zst");

    /// The first `n` events of the real sample trace.
    fn sample_events(n: usize) -> Vec<IoEvent> {
        let mut d = Decompressing::new(
            TraceFormat::TracefsText
                .decoder(&DecodeOptions::default())
                .expect("decoder"),
        );
        d.push(SAMPLE_ZST);
        d.finish();
        let mut out = Vec::new();
        while let Some(e) = d.next_event().expect("sample decodes") {
            out.push(e);
            if out.len() == n {
                break;
            }
        }
        out
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
            PredictRequest {
                configs: vec![
                    params("raid0", 2, "sata-7k2"),
                    params("raid0", 8, "sata-7k2"),
                ],
                cache: Some(CacheParams {
                    size_bytes: 256 << 20,
                    line_bytes: 64 << 10,
                    policy: "lru".into(),
                    mode: "wb".into(),
                    ..CacheParams::default()
                }),
                outstanding: 16,
            },
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
    fn bad_layouts_are_refused_in_words() {
        let err = Plan::new(PredictRequest {
            configs: vec![params("raid6", 2, "nvme")],
            cache: None,
            outstanding: 1,
        })
        .err()
        .unwrap_or_default();
        assert!(err.starts_with("layout 1:"), "{err}");
        let err = Plan::new(PredictRequest {
            configs: vec![ArrayParams::default()],
            cache: Some(CacheParams {
                size_bytes: 1 << 30,
                line_bytes: 64 << 10,
                policy: "opt".into(),
                mode: "wt".into(),
                ..CacheParams::default()
            }),
            outstanding: 1,
        })
        .err()
        .unwrap_or_default();
        assert!(err.contains("online"), "{err}");
    }
}
