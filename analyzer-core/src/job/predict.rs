//! The array prediction: up to [`MAX_LAYOUTS`] RAID layouts, each replayed from the trace with
//! and without the SSD cache tier, at the chosen load and, with the curve, at every depth of
//! [`CURVE_DEPTHS`] (closed loop) or speed factor of [`CURVE_SPEEDS`] (open loop), all in one
//! pass over the trace. Or the same for a synthetic profile (no trace: zero passes).
//!
//! The cache tier decides hits, fills and back-end I/O from the requests as the trace has them
//! (their order, and their own timestamps and latencies, not the replay's), and every replay
//! keeps the trace's order, so one simulator serves all the replays with the cache
//! ([`SharedTier`]): it runs once per request
//! and the others reuse its answer, which keeps memory at one cache's state (and the answers
//! to one batch of [`BATCH_EVENTS`] requests) however many depths and layouts run.
//!
//! With the product name `dm-cache` (`--preset dm-cache`) a trace replay's tier is the kernel's
//! own model ([`DmCacheTier`]), which decides from the trace's own timing (its policy ticks
//! follow bio completions); a first pass measures the origin it caches (the highest byte the
//! trace touches, or the recorded device's size); `bcache` runs bcache's ([`BcacheTier`]).
//! Synthetic profiles have no such timing and keep the generic approximations, and say so.

pub mod md;

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::{CacheParams, Job, JobError, LineFootprint, WindowFilter, WindowNanos};
use crate::array::cache_tier::SAMPLE_HASH_SPACE;
use crate::array::controller_preset::ControllerPreset;
use crate::array::device::DeviceModel;
use crate::array::layout::Level;
use crate::array::md::Raid10Layout;
use crate::array::md_bitmap::MdBitmapSetting;
use crate::array::spec::preset_device;
use crate::array::{
    cache_warmup_requests, run_synthetic, sweep_depths, AccessSpec, ArrayConfig, CacheAccess,
    CacheDevices, CacheTier, ControllerModel, CurvePoint, DiskPreset, Member, Node, ProfileKind,
    RunResult, SimulatorTier, StandardLevel, Synthetic, TraceReplay,
};
use crate::array::{BcacheTier, DmCacheTier};
use crate::cache::bcache::{BcacheConfig, BcacheMode};
use crate::cache::dmcache::{DmCacheConfig, DmCacheMode};
use crate::cache::SimConfig;
use crate::hash::{block_key, IntSet};
use crate::job::simulate::model::KernelModel;
use crate::units::{bytes, count};
use crate::{Diagnostics, IoEvent, Op, TraceHeader};

/// Most layouts compared side by side.
pub const MAX_LAYOUTS: usize = 4;

/// Battery-backed write-back cache of the hardware controller when `controller_cache` is on
/// and no size is given.
pub const CONTROLLER_CACHE_BYTES: u64 = 1 << 30;

/// Outstanding I/Os of the closed-loop IOPS-vs-latency curve.
pub const CURVE_DEPTHS: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// Speed factors of the open-loop curve, relative to the chosen speed.
pub const CURVE_SPEEDS: [f64; 5] = [0.5, 1.0, 2.0, 4.0, 8.0];

/// Deepest queue a closed-loop replay takes.
pub const MAX_OUTSTANDING: u32 = 65_536;

/// About how many requests an estimate replays ([`PredictRequest::estimate`]): 32 slices of
/// [`ESTIMATE_SLICE_REQUESTS`]. On a 1.1 M-request trace, four layouts' IOPS with and without a
/// 1 GiB cache came within 2% of the whole replay with 32 slices of 1,024 or 2,048 requests or
/// 64 of 512, and up to 10% off with 16 of 2,048 (docs/web.md).
pub const ESTIMATE_REQUESTS: u64 = 32_768;
/// Consecutive events per slice of an estimate. The slices are replayed back to back, so the
/// closed loop and md's stripe cache carry on across them.
pub const ESTIMATE_SLICE_REQUESTS: u64 = 1_024;
/// The smallest trace (or window), in events, that gets an estimate first: below it the whole
/// replay is quick enough.
pub const ESTIMATE_MIN_EVENTS: u64 = 262_144;

/// Replay only evenly spaced slices of the trace: events `k·every .. k·every + slice` (counted
/// in the trace, or in the window). The cache tier, when there is one, still sees every event,
/// so a sampled request hits or misses as it does in the whole trace; the back-end I/O of the
/// events left out (their misses, fills, write-backs) is not replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleParams {
    pub slice_requests: u64,
    pub every_requests: u64,
}

/// Controller settings that override the layout's controller (the CLI's flags; the web app
/// leaves them out).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ControllerSettings {
    /// A named controller (`ControllerPreset`), applied before the other settings here.
    #[serde(default)]
    pub preset: Option<String>,
    /// A hardware controller with this much write-back cache (0 = write-through).
    #[serde(default)]
    pub cache_bytes: Option<u64>,
    #[serde(default)]
    pub read_ahead_bytes: Option<u64>,
    /// Ceiling: host IOPS per logical drive.
    #[serde(default)]
    pub max_iops: Option<f64>,
    /// Ceiling: host bytes per second per logical drive.
    #[serde(default)]
    pub max_bytes_per_sec: Option<f64>,
    /// Ceiling: parity chunks computed per second.
    #[serde(default)]
    pub parity_chunks_per_sec: Option<f64>,
    /// Linux md RAID 5/6 (software arrays only): `stripe_cache_size`.
    #[serde(default)]
    pub md_stripe_cache_size: Option<u32>,
    /// Linux md RAID 5/6: `group_thread_cnt` (worker threads besides `raid5d`).
    #[serde(default)]
    pub md_group_thread_cnt: Option<u32>,
    /// Linux md RAID 5/6: CPU time per pass of the stripe state machine (a head, or a batch
    /// of adjacent full-stripe heads) in the handling thread.
    #[serde(default)]
    pub md_stripe_cost_nanos: Option<f64>,
    /// Linux md RAID 5/6: CPU time per 4 KiB page of parity input (copy and XOR or P+Q).
    #[serde(default)]
    pub md_page_cost_nanos: Option<f64>,
    /// Linux md RAID 10: mdadm's `--layout` (`n2`, `f2`, `o2`, `n3`, …). Without it a
    /// software RAID 10 of an even number of disks, 4 or more, is RAID 0 over mirrored pairs
    /// (what md's `n2` places the same way) and any other count md's `n2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_raid10_layout: Option<String>,
    /// Linux md RAID 1/5/6/10: the write-intent bitmap, `auto` (mdadm's default: internal,
    /// 64 MiB chunks, on members over 100 GiB), `none`, `internal` or a bitmap chunk size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_bitmap: Option<String>,
    /// Linux md RAID 1/5/6/10: `safe_mode_delay` in nanoseconds (default 200 ms; 0 turns safe
    /// mode off: the array is marked dirty once and never clean while it runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_safe_mode_delay_nanos: Option<u64>,
    /// Linux md RAID 1/5/6/10: `sync_speed_min` and `sync_speed_max` in KiB/s, the speeds
    /// between which a rebuild yields to other I/O (defaults 1,000 and 200,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_sync_speed_min_kib: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_sync_speed_max_kib: Option<u32>,
}

/// One layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrayParams {
    /// A [`StandardLevel`] name (`raid5`, ...).
    pub level: String,
    pub disks: u32,
    /// A [`DiskPreset`] name (`sas-10k`, ...).
    pub disk: String,
    pub chunk_bytes: u64,
    /// A hardware controller with [`CONTROLLER_CACHE_BYTES`] of write-back cache (or
    /// `controller.cache_bytes`); otherwise Linux md (no controller cache).
    pub controller_cache: bool,
    /// RAID 1/5/6 groups for raid10/50/60 (default: pairs for RAID 10, two for 50/60).
    #[serde(default)]
    pub groups: Option<u32>,
    /// Failed disks by index (degraded mode); each lands in its own mirror or parity group.
    #[serde(default)]
    pub failed: Vec<u32>,
    /// Linux md rebuilds the failed disks onto replacements while the load runs
    /// (`array/engine/rebuild.rs`): the numbers are those during the rebuild, and the rebuild
    /// time is the speed it reached. Without it the array is degraded with no rebuild running.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rebuilding: bool,
    #[serde(default)]
    pub controller: ControllerSettings,
    /// A JSON array description (docs/model.md) replacing level, disks, disk, chunk, groups
    /// and failed.
    #[serde(default)]
    pub spec_json: Option<String>,
}

impl Default for ArrayParams {
    fn default() -> Self {
        ArrayParams {
            level: "raid5".into(),
            disks: 6,
            disk: DiskPreset::ALL[1].name().into(),
            chunk_bytes: 64 << 10,
            controller_cache: false,
            groups: None,
            failed: Vec::new(),
            rebuilding: false,
            controller: ControllerSettings::default(),
            spec_json: None,
        }
    }
}

impl ArrayParams {
    /// The engine's configuration, without the cache devices.
    pub fn config(&self) -> Result<ArrayConfig, JobError> {
        let mut cfg = match &self.spec_json {
            #[cfg(feature = "array-files")]
            Some(text) => crate::array::spec::ArraySpec::parse(text).and_then(|s| s.to_config())?,
            #[cfg(not(feature = "array-files"))]
            Some(_) => {
                return Err(JobError::invalid(
                    "an array description file",
                    "this build has no reader for them (the browser's); `blocksight predict --array FILE` reads them",
                ))
            }
            None => {
                let level =
                    StandardLevel::from_name(&self.level).ok_or_else(|| JobError::UnknownName {
                        what: "RAID level",
                        name: self.level.clone(),
                        expected: StandardLevel::ALL
                            .iter()
                            .map(|l| l.name())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })?;
                // Linux md builds RAID 10 itself (any disk count; its `n2` places every byte as
                // RAID 0 over pairs does, but reads its copies by md's RAID 10 rules); a
                // controller's RAID 10 is RAID 0 over mirrored pairs.
                let md_raid10 = match &self.controller.md_raid10_layout {
                    Some(name) => Some(md::raid10_layout(name, level.name())?),
                    None if level == StandardLevel::Raid10
                        && self.groups.is_none()
                        && self.software() =>
                    {
                        Some(Raid10Layout::default())
                    }
                    None => None,
                };
                check_disks(level, self.disks, self.groups, md_raid10)?;
                let device = preset_device(&self.disk)?;
                let mut layout = match md_raid10 {
                    Some(r) => Node::md_raid10(r, self.chunk_bytes, 0, self.disks),
                    None => level.build(self.disks, self.chunk_bytes, self.groups)?,
                };
                fail_disks(&mut layout, &self.failed)?;
                let controller = if self.controller_cache {
                    ControllerModel::hardware(CONTROLLER_CACHE_BYTES)
                } else {
                    ControllerModel::software()
                };
                ArrayConfig::new(vec![device; self.disks as usize], layout, controller)?
            }
        };
        let c = &self.controller;
        if let Some(name) = &c.preset {
            let preset = ControllerPreset::by_name(name).ok_or_else(|| JobError::UnknownName {
                what: "controller",
                name: name.clone(),
                expected: ControllerPreset::ALL
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
            let keep = cfg.controller.rebuild_bytes_per_sec;
            cfg.controller = ControllerModel {
                rebuild_bytes_per_sec: keep,
                ..preset.model()
            };
            if let Some(bytes) = c.cache_bytes {
                if preset.software {
                    return Err(JobError::invalid(
                        format!("--controller {}", preset.name),
                        "Linux md has no controller cache; leave out --controller-cache",
                    ));
                }
                cfg.controller.write_back_bytes = bytes;
            }
        } else if let Some(bytes) = c.cache_bytes {
            let keep = cfg.controller.rebuild_bytes_per_sec;
            cfg.controller = ControllerModel {
                rebuild_bytes_per_sec: keep,
                ..ControllerModel::hardware(bytes)
            };
        }
        if let Some(r) = c.read_ahead_bytes {
            cfg.controller.read_ahead_bytes = r;
        }
        if c.max_iops.is_some() {
            cfg.controller.max_iops = c.max_iops;
        }
        if c.max_bytes_per_sec.is_some() {
            cfg.controller.max_bytes_per_sec = c.max_bytes_per_sec;
        }
        if c.parity_chunks_per_sec.is_some() {
            cfg.controller.parity_chunks_per_sec = c.parity_chunks_per_sec;
        }
        let md_given = c.md_stripe_cache_size.is_some()
            || c.md_group_thread_cnt.is_some()
            || c.md_stripe_cost_nanos.is_some()
            || c.md_page_cost_nanos.is_some()
            || c.md_bitmap.is_some()
            || c.md_safe_mode_delay_nanos.is_some()
            || c.md_sync_speed_min_kib.is_some()
            || c.md_sync_speed_max_kib.is_some();
        match &mut cfg.controller.md {
            Some(md) => {
                if let Some(n) = c.md_stripe_cache_size {
                    if n < 17 {
                        return Err(JobError::invalid(
                            format!("stripe_cache_size {n}"),
                            "md's minimum is 17",
                        ));
                    }
                    md.stripe_cache_size = n;
                }
                if let Some(n) = c.md_group_thread_cnt {
                    if n > 4096 {
                        return Err(JobError::invalid(
                            format!("group_thread_cnt {n}"),
                            "at most 4,096 threads",
                        ));
                    }
                    md.group_thread_cnt = n;
                }
                if let Some(ns) = c.md_stripe_cost_nanos {
                    if !(ns.is_finite() && ns >= 0.0) {
                        return Err(JobError::invalid(
                            format!("stripe cost {ns} ns"),
                            "expected a duration of 0 or more",
                        ));
                    }
                    md.stripe_cost_nanos = ns;
                }
                if let Some(ns) = c.md_page_cost_nanos {
                    if !(ns.is_finite() && ns >= 0.0) {
                        return Err(JobError::invalid(
                            format!("page cost {ns} ns"),
                            "expected a duration of 0 or more",
                        ));
                    }
                    md.page_cost_nanos = Some(ns);
                }
                if let Some(b) = &c.md_bitmap {
                    md.bitmap = MdBitmapSetting::parse(b)
                        .map_err(|why| JobError::invalid(format!("md bitmap {b:?}"), why))?;
                }
                if let Some(ns) = c.md_safe_mode_delay_nanos {
                    md.safe_mode_delay_nanos = Some(ns);
                }
                if let Some(k) = c.md_sync_speed_min_kib {
                    md.sync_speed_min_kib = k;
                }
                if let Some(k) = c.md_sync_speed_max_kib {
                    if k == 0 {
                        return Err(JobError::invalid(
                            "sync_speed_max 0",
                            "expected a speed in KiB/s of 1 or more",
                        ));
                    }
                    md.sync_speed_max_kib = k;
                }
            }
            None if md_given => {
                return Err(JobError::invalid(
                    "md settings",
                    "stripe_cache_size, group_thread_cnt, the stripe and page costs, the write-intent bitmap, safe_mode_delay and the sync speeds apply to Linux md, not to a hardware controller",
                ))
            }
            None if cfg.layout.level == Level::Raid10 => {
                return Err(JobError::invalid(
                    format!("raid10 with {} disks", self.disks),
                    "md's RAID 10 layouts (any disk count, --raid10-layout) are Linux md's; a hardware controller's RAID 10 is RAID 0 over mirrored pairs, an even number of disks, at least 4",
                ))
            }
            None => {}
        }
        if !self.rebuilding
            && (c.md_sync_speed_min_kib.is_some() || c.md_sync_speed_max_kib.is_some())
        {
            return Err(JobError::invalid(
                "md's sync speeds",
                "they pace a rebuild, and nothing rebuilds: give rebuilding (--rebuilding) too",
            ));
        }
        if self.rebuilding {
            if cfg.controller.md.is_none() {
                return Err(JobError::invalid(
                    "rebuilding behind a hardware controller",
                    "how a controller's firmware paces a rebuild is not published; the rebuild beside the load is Linux md's (without it the array is degraded and the rebuild time an estimate)",
                ));
            }
            if !has_failed(&cfg.layout) {
                return Err(JobError::invalid(
                    "rebuilding",
                    "nothing to rebuild: give the failed disks (--failed)",
                ));
            }
            cfg.rebuilding = true;
        }
        Ok(cfg)
    }

    /// Whether the array ends up behind Linux md rather than a hardware controller, as the
    /// controller settings resolve in [`ArrayParams::config`] (an unknown preset is refused
    /// there): the md settings of [`ControllerSettings`] apply only then.
    pub fn software(&self) -> bool {
        match &self.controller.preset {
            Some(name) => ControllerPreset::by_name(name).is_some_and(|p| p.software),
            None => !self.controller_cache && self.controller.cache_bytes.is_none(),
        }
    }

    /// The group counts this layout may be split into (`groups`), fewest first: RAID 50 and 60
    /// (groups of at least 3 or 4 disks), and a hardware controller's RAID 10 (RAID 0 over
    /// mirrors of 2 disks or more; Linux md's RAID 10 has layouts instead). Empty for the other
    /// levels and where no count of 2 or more divides the disks.
    pub fn group_choices(&self) -> Vec<u32> {
        let per_group = match StandardLevel::from_name(&self.level) {
            Some(StandardLevel::Raid10) if !self.software() => 2,
            Some(StandardLevel::Raid50) => 3,
            Some(StandardLevel::Raid60) => 4,
            _ => return Vec::new(),
        };
        (2..=self.disks / per_group)
            .filter(|&g| self.disks % g == 0)
            .filter(|&g| {
                ArrayParams {
                    groups: Some(g),
                    failed: Vec::new(),
                    rebuilding: false,
                    ..self.clone()
                }
                .config()
                .is_ok()
            })
            .collect()
    }

    /// Disks that may fail one after another, each leaving the array readable with the ones
    /// before it: the lowest index that the engine still takes at each step (for RAID 10 of
    /// pairs disks 0, 2, 4, …; RAID 6 disks 0 and 1; RAID 50 one disk of each group). Its
    /// first `k` are the editors' choice for `k` failed disks. Empty when the layout has no
    /// redundancy or is itself not valid.
    pub fn failure_order(&self) -> Vec<u32> {
        let mut trial = ArrayParams {
            failed: Vec::new(),
            rebuilding: false,
            ..self.clone()
        };
        if trial.config().is_err() {
            return Vec::new();
        }
        for d in 0..self.disks {
            trial.failed.push(d);
            if trial.config().is_err() {
                trial.failed.pop();
            }
        }
        trial.failed
    }

    /// [`ArrayParams::prune_md_settings`], and the groups and failed disks made valid for the
    /// level, disks and controller: groups the layout cannot take are dropped (its default
    /// applies), and failed disks it does not survive become as many of [`failure_order`]'s
    /// first as it does; `rebuilding` goes with the last failed disk. For editors, after any
    /// change.
    ///
    /// [`failure_order`]: ArrayParams::failure_order
    pub fn prune_settings(&mut self) {
        self.prune_md_settings();
        if self.spec_json.is_some() {
            return;
        }
        if self
            .groups
            .is_some_and(|g| !self.group_choices().contains(&g))
        {
            self.groups = None;
        }
        if !self.failed.is_empty() && self.config().is_err() {
            let k = self.failed.len();
            let mut order = self.failure_order();
            order.truncate(k);
            self.failed = order;
        }
        if self.failed.is_empty() {
            self.rebuilding = false;
        }
    }

    /// Drops the md settings this layout's controller and level do not take: every one behind a
    /// hardware controller (which [`ArrayParams::config`] refuses), the RAID 10 layout but on
    /// RAID 10, the stripe cache, its threads and CPU costs but on RAID 5/6/50/60, the bitmap and
    /// safe mode on levels without redundancy (JBOD, RAID 0). For editors (the Array view and
    /// its links), where a change of controller or level would otherwise leave a setting that
    /// means nothing there, or one the engine refuses.
    pub fn prune_md_settings(&mut self) {
        let software = self.software();
        let level = StandardLevel::from_name(&self.level);
        if !software || !level.is_some_and(StandardLevel::redundant) {
            self.rebuilding = false;
        }
        let c = &mut self.controller;
        let parity = level.is_some_and(StandardLevel::parity);
        let redundant = level.is_some_and(StandardLevel::redundant);
        if !software || level != Some(StandardLevel::Raid10) {
            c.md_raid10_layout = None;
        }
        if !software || !parity {
            c.md_stripe_cache_size = None;
            c.md_group_thread_cnt = None;
            c.md_stripe_cost_nanos = None;
            c.md_page_cost_nanos = None;
        }
        if !software || !redundant {
            c.md_bitmap = None;
            c.md_safe_mode_delay_nanos = None;
            c.md_sync_speed_min_kib = None;
            c.md_sync_speed_max_kib = None;
        }
    }

    /// Short label: `6 × sas-10k raid5, 64.0 KiB chunk`, then the controller, the md settings
    /// given (`, stripe_cache_size 4096, bitmap none`), the groups and the failed disks.
    pub fn label(&self) -> String {
        let c = &self.controller;
        let mut md = String::new();
        if let Some(g) = self.groups {
            md.push_str(&format!(", {g} groups"));
        }
        if let Some(l) = &c.md_raid10_layout {
            md.push_str(&format!(", layout {l}"));
        }
        if let Some(n) = c.md_stripe_cache_size {
            md.push_str(&format!(", stripe_cache_size {n}"));
        }
        if let Some(n) = c.md_group_thread_cnt {
            md.push_str(&format!(", group_thread_cnt {n}"));
        }
        if let Some(b) = &c.md_bitmap {
            md.push_str(&format!(", bitmap {b}"));
        }
        if !self.failed.is_empty() {
            let list: Vec<String> = self.failed.iter().map(u32::to_string).collect();
            md.push_str(&format!(
                ", failed disk{} {}{}",
                if list.len() == 1 { "" } else { "s" },
                list.join(", "),
                if self.rebuilding { " rebuilding" } else { "" }
            ));
        }
        format!(
            "{} × {} {}, {} chunk{}{md}",
            self.disks,
            self.disk,
            self.level,
            bytes(self.chunk_bytes),
            match &c.preset {
                Some(p) => format!(", controller {p}"),
                None if self.controller_cache => ", controller cache".into(),
                None => String::new(),
            }
        )
    }
}

/// What the output says about each layout's controller ceilings: a named preset's (and which
/// no source gives), or, for a hardware controller given only by its cache, which were assumed.
fn controller_assumptions(configs: &[ArrayParams]) -> Vec<String> {
    let mut out = Vec::new();
    for params in configs {
        let c = &params.controller;
        let line = match c.preset.as_deref().and_then(ControllerPreset::by_name) {
                Some(p) => Some(format!("{} (docs/model.md, \"Controller presets\")", p.describe_ceilings())),
                None if params.controller_cache || c.cache_bytes.is_some() => Some(format!(
                    "controller ceilings assumed: {}, {}, {} (no --controller preset named; `blocksight predict --controller list` shows the presets and their published ceilings)",
                    c.max_iops.map_or("no IOPS ceiling".to_string(), |v| format!("{v:.0} IOPS per logical drive (given)")),
                    c.max_bytes_per_sec.map_or("no MB/s ceiling".to_string(), |v| format!("{:.0} MB/s per logical drive (given)", v / 1e6)),
                    c.parity_chunks_per_sec.map_or("no parity-rate ceiling".to_string(), |v| format!("{v:.0} parity chunks/s (given)")),
                )),
                None => None,
            };
        if let Some(line) = line {
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

/// The smallest disk counts each level needs, named with the level (before the layout code's
/// own, less specific, errors).
fn check_disks(
    level: StandardLevel,
    disks: u32,
    groups: Option<u32>,
    md_raid10: Option<Raid10Layout>,
) -> Result<(), JobError> {
    let bad = |why: String| JobError::invalid(format!("{} with {disks} disks", level.name()), why);
    if let Some(r) = md_raid10 {
        if groups.is_some() {
            return Err(bad(
                "md's RAID 10 has no groups; leave out --groups (or --raid10-layout)".into(),
            ));
        }
        let min = r.copies().max(2);
        if disks < min || disks > 4096 {
            return Err(bad(format!(
                "Linux md's RAID 10 {} needs {min} to 4,096 disks (one a copy, at least)",
                r.name()
            )));
        }
        return Ok(());
    }
    let (min, rule) = match level {
        StandardLevel::Jbod | StandardLevel::Raid0 => (1, "at least 1 disk"),
        StandardLevel::Raid1 => (2, "at least 2 disks"),
        StandardLevel::Raid5 => (3, "at least 3 disks"),
        StandardLevel::Raid6 => (4, "at least 4 disks"),
        StandardLevel::Raid10 => (
            4,
            "an even number of disks, at least 4 (RAID 0 over mirrored pairs)",
        ),
        StandardLevel::Raid50 => (6, "at least 6 disks (groups of 3 or more)"),
        StandardLevel::Raid60 => (8, "at least 8 disks (groups of 4 or more)"),
    };
    if disks < min {
        return Err(bad(format!("{} needs {rule}", level.name())));
    }
    if disks > 4096 {
        return Err(bad("at most 4,096 disks".into()));
    }
    if let Some(g) = groups {
        if g == 0 || disks % g != 0 {
            return Err(bad(format!(
                "{disks} disks do not split into {g} equal groups"
            )));
        }
    }
    if level == StandardLevel::Raid10 && groups.is_none() && disks % 2 != 0 {
        return Err(bad(format!("{} needs {rule}", level.name())));
    }
    Ok(())
}

/// Marks disks failed in the node that holds them directly (the mirror or parity group of a
/// nested level).
fn fail_disks(layout: &mut Node, disks: &[u32]) -> Result<(), JobError> {
    fn mark(node: &mut Node, disk: u32) -> bool {
        if let Some(i) = node
            .members
            .iter()
            .position(|m| matches!(m, Member::Disk(d) if *d == disk))
        {
            if !node.failed.contains(&i) {
                node.failed.push(i);
            }
            return true;
        }
        node.members.iter_mut().any(|m| match m {
            Member::Node(child) => mark(child, disk),
            Member::Disk(_) => false,
        })
    }
    for &d in disks {
        if !mark(layout, d) {
            return Err(JobError::invalid(
                format!("failed disk {d}"),
                "no such disk",
            ));
        }
    }
    Ok(())
}

/// The SSD cache tier's devices: `count` of a preset, RAID 1 when two, RAID 0 otherwise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheDevicesParams {
    pub disk: String,
    pub count: u32,
}

impl Default for CacheDevicesParams {
    /// Two SATA SSDs in RAID 1.
    fn default() -> Self {
        CacheDevicesParams {
            disk: "sata-ssd".into(),
            count: 2,
        }
    }
}

impl CacheDevicesParams {
    fn devices(&self) -> Result<CacheDevices, JobError> {
        let device: DeviceModel = preset_device(&self.disk)?;
        let n = self.count.clamp(1, 64);
        let level = if n == 2 {
            StandardLevel::Raid1
        } else {
            StandardLevel::Raid0
        };
        Ok(CacheDevices {
            devices: vec![device; n as usize],
            layout: level.build(n, 65536, None)?,
        })
    }

    /// `2 × sata-ssd in RAID 1`.
    pub fn describe(&self) -> String {
        let n = self.count.clamp(1, 64);
        format!(
            "{n} × {} in {}",
            self.disk,
            if n == 2 { "RAID 1" } else { "RAID 0" }
        )
    }
}

/// A synthetic workload instead of a trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileParams {
    /// A [`ProfileKind`] name (`4k-random-read`, `oltp-8k`, ...).
    pub name: String,
    /// Working set (default: the whole array).
    #[serde(default)]
    pub span_bytes: Option<u64>,
    #[serde(default)]
    pub io_size_bytes: Option<u64>,
    /// Read percentage, 0–100.
    #[serde(default)]
    pub read_percent: Option<f64>,
    pub requests: u64,
    pub seed: u64,
}

/// What to predict. Build it with [`PredictRequest::new`] and the `with_` methods, so a new
/// field gets its default everywhere.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictRequest {
    pub configs: Vec<ArrayParams>,
    pub cache: Option<CacheParams>,
    /// Outstanding I/Os of the closed-loop replay.
    pub outstanding: u32,
    /// Also replay every layout at each depth (or speed factor) of the curve.
    #[serde(default)]
    pub curve: bool,
    /// Only the requests in `[start, end)` nanoseconds after the trace's first request.
    #[serde(default)]
    pub window_nanos: WindowNanos,
    /// Open loop: replay at the trace's timestamps divided by this speed factor (instead of
    /// closed loop at `outstanding`).
    #[serde(default)]
    pub speed: Option<f64>,
    #[serde(default)]
    pub cache_devices: CacheDevicesParams,
    /// A synthetic profile instead of the trace.
    #[serde(default)]
    pub profile: Option<ProfileParams>,
    /// An estimate: replay only slices of the trace ([`PredictRequest::estimate`]).
    #[serde(default)]
    pub sample: Option<SampleParams>,
}

impl std::str::FromStr for SampleParams {
    type Err = JobError;

    /// `1024/34944`: slices of 1,024 events every 34,944 (`predict --sample`).
    fn from_str(text: &str) -> Result<SampleParams, JobError> {
        let bad = || {
            JobError::invalid(
                format!("sample {text:?}"),
                "expected SLICE/EVERY, two counts of events, e.g. 1024/34944",
            )
        };
        let (slice, every) = text.split_once('/').ok_or_else(bad)?;
        Ok(SampleParams {
            slice_requests: slice.trim().parse().map_err(|_| bad())?,
            every_requests: every.trim().parse().map_err(|_| bad())?,
        })
    }
}

impl PredictRequest {
    /// The layouts at `outstanding` I/Os (closed loop), with the cache tier when given; no
    /// curve, whole trace.
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
            speed: None,
            cache_devices: CacheDevicesParams::default(),
            profile: None,
            sample: None,
        }
    }

    /// The same request as a quick estimate for a trace (or window) of `events` events: it
    /// replays 32 evenly spaced slices of [`ESTIMATE_SLICE_REQUESTS`] events, about
    /// [`ESTIMATE_REQUESTS`] in all, instead of every event. `None` where an estimate would not
    /// save much (at most [`ESTIMATE_MIN_EVENTS`]), for a synthetic profile, and for an
    /// open-loop replay (its idle gaps between slices would not be the trace's).
    pub fn estimate(&self, events: u64) -> Option<PredictRequest> {
        if events <= ESTIMATE_MIN_EVENTS || self.profile.is_some() || self.speed.is_some() {
            return None;
        }
        let slices = ESTIMATE_REQUESTS / ESTIMATE_SLICE_REQUESTS;
        Some(PredictRequest {
            sample: Some(SampleParams {
                slice_requests: ESTIMATE_SLICE_REQUESTS,
                every_requests: (events / slices).max(ESTIMATE_SLICE_REQUESTS),
            }),
            ..self.clone()
        })
    }

    pub fn with_curve(self, curve: bool) -> PredictRequest {
        PredictRequest { curve, ..self }
    }

    pub fn with_window(self, window_nanos: WindowNanos) -> PredictRequest {
        PredictRequest {
            window_nanos,
            ..self
        }
    }

    /// The loads replayed: the chosen one, and the curve's when asked, ascending.
    pub fn loads(&self) -> Vec<Load> {
        match self.speed {
            Some(speed) => {
                let mut v = vec![speed];
                if self.curve {
                    v.extend(CURVE_SPEEDS.iter().map(|f| f * speed));
                }
                v.sort_by(f64::total_cmp);
                v.dedup();
                v.into_iter().map(Load::Speed).collect()
            }
            None => {
                let qd = self.outstanding.max(1);
                let mut d = vec![qd];
                if self.curve {
                    d.extend(CURVE_DEPTHS);
                }
                d.sort_unstable();
                d.dedup();
                d.into_iter().map(Load::Outstanding).collect()
            }
        }
    }

    /// Whether the job reads the trace once before replaying it: to measure the footprint (a
    /// cache sized as a share of it), dm-cache's origin, or the lines of an estimate's slices
    /// (an LRU tier that can be sampled).
    pub fn measures_first(&self) -> bool {
        let Some(c) = self.cache.as_ref().filter(|_| self.profile.is_none()) else {
            return false;
        };
        c.needs_footprint()
            || c.product_model() == Some(KernelModel::DmCacheSmq)
            || (self.sample.is_some()
                && c.product_model().is_none()
                && c.choice()
                    .is_ok_and(|choice| SimulatorTier::samples(&choice.config(1))))
    }

    /// For a request whose job reads the trace twice with a cache tier: the same request
    /// without the tier and without the curve, which that job answers at the end of its first
    /// pass ([`Predict::take_without_cache`]), so a host shows it before the tier's numbers
    /// without a pass of its own. `None` for a job of one pass.
    pub fn without_cache_first(&self) -> Option<PredictRequest> {
        self.measures_first().then(|| PredictRequest {
            cache: None,
            curve: false,
            ..self.clone()
        })
    }

    fn chosen(&self) -> Load {
        match self.speed {
            Some(s) => Load::Speed(s),
            None => Load::Outstanding(self.outstanding.max(1)),
        }
    }
}

/// One replayed load (the array model's [`Load`]).
pub use crate::array::Load;

/// The prediction for one layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigPrediction {
    pub params: ArrayParams,
    pub description: String,
    pub capacity_bytes: u64,
    pub without_cache: RunResult,
    pub with_cache: Option<RunResult>,
    /// IOPS with the cache divided by IOPS without.
    #[serde(default)]
    pub speedup: Option<f64>,
    /// Time to rebuild one member at this load (levels with redundancy).
    #[serde(default)]
    pub rebuild_secs: Option<f64>,
    /// IOPS and latency at each replayed load without the cache (empty without `curve`).
    #[serde(default)]
    pub curve: Vec<CurvePoint>,
    /// The same with the cache tier (empty without `curve` or without a cache).
    #[serde(default)]
    pub curve_with_cache: Vec<CurvePoint>,
}

/// The answer for every layout of a [`PredictRequest`]: what `blocksight predict --json`
/// prints and the worker posts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictResult {
    pub request: PredictRequest,
    pub configs: Vec<ConfigPrediction>,
    /// The workload in words.
    #[serde(default)]
    pub workload: String,
    /// The cache tier in words, when there is one.
    pub cache_description: Option<String>,
    /// Requests replayed (reads and writes; discards and flushes are not).
    pub replayed_requests: u64,
    /// Reads and writes in the trace (or window): more than `replayed_requests` in an estimate.
    #[serde(default)]
    pub trace_requests: u64,
    pub assumptions: Vec<String>,
}

/// A checked request: engine configurations built, cache configuration validated.
struct Plan {
    request: PredictRequest,
    /// Each layout without and with the cache devices.
    arrays: Vec<(ArrayConfig, ArrayConfig)>,
}

impl Plan {
    fn new(request: PredictRequest) -> Result<Plan, JobError> {
        if request.configs.is_empty() || request.configs.len() > MAX_LAYOUTS {
            return Err(JobError::invalid(
                "layouts",
                format!("give 1 to {MAX_LAYOUTS} layouts"),
            ));
        }
        if request.speed.is_none() && !(1..=MAX_OUTSTANDING).contains(&request.outstanding) {
            return Err(JobError::invalid(
                format!("{} outstanding I/Os", request.outstanding),
                format!(
                    "the queue depth goes from 1 to {}",
                    count(MAX_OUTSTANDING.into())
                ),
            ));
        }
        if let Some(s) = request.sample {
            if s.slice_requests == 0 || s.every_requests < s.slice_requests {
                return Err(JobError::invalid(
                    format!("sample of {} every {}", s.slice_requests, s.every_requests),
                    "a slice has at least one request and slices do not overlap",
                ));
            }
            if request.speed.is_some() {
                return Err(JobError::invalid(
                    "sample",
                    "an open-loop replay keeps the trace's timing; it cannot skip requests",
                ));
            }
        }
        if let Some(s) = request.speed {
            if !(s.is_finite() && s > 0.0 && s <= 1e6) {
                return Err(JobError::invalid(
                    format!("speed {s}"),
                    "the speed factor is above 0 and at most 1,000,000",
                ));
            }
        }
        let mut arrays = Vec::new();
        for (i, p) in request.configs.iter().enumerate() {
            let layout =
                |e: JobError| JobError::invalid(format!("layout {}", i + 1), e.to_string());
            let without = p.config().map_err(layout)?;
            let with = without
                .clone()
                .with_cache(request.cache_devices.devices().map_err(layout)?)
                .map_err(|e| layout(e.into()))?;
            arrays.push((without, with));
        }
        if let Some(c) = &request.cache {
            if c.choice()?.policy.is_some_and(|p| p.needs_future()) {
                return Err(JobError::invalid(
                    format!("cache policy {}", c.policy),
                    "it needs the whole future of the trace; the prediction streams it, pick an online policy",
                ));
            }
            if !c.needs_footprint() {
                c.sim_config(None)?;
            }
        }
        Ok(Plan { request, arrays })
    }
}

/// The prediction job: see the module documentation.
pub struct Predict {
    plan: Plan,
    /// Pass 0 measures the footprint when the cache's size is a share of it.
    footprint: Option<LineFootprint>,
    /// Pass 0 also measures the highest byte the trace touches when the tier is dm-cache's
    /// model (its origin; [`dm_cache_origin`]).
    origin_end: Option<u64>,
    /// Pass 0 is over (or there is none).
    measured: bool,
    /// Pass 0 also gathers the lines of an estimate's slices when its LRU tier can be sampled
    /// ([`SliceLines`]).
    slices: Option<SliceLines>,
    /// The sampled tier's rate, when the tier is sampled.
    tier_sample_rate: Option<f64>,
    /// Most lines the cache tier may hold ([`Predict::with_tier_limit`]).
    tier_limit_lines: Option<u64>,
    footprint_lines: Option<u64>,
    cache: Option<(SimConfig, String)>,
    memo: Option<Rc<RefCell<Memo>>>,
    layouts: Vec<LayoutReplays>,
    /// Events not yet fed to the replays (see [`BATCH_EVENTS`]).
    pending: Vec<IoEvent>,
    /// Events of the replay pass so far (the index that picks an estimate's slices).
    events: u64,
    /// Reads and writes of the replay pass so far.
    requests: u64,
    /// Back-end I/O of the events an estimate leaves out, dropped.
    scratch: Vec<IoEvent>,
    window: WindowFilter,
    result: Option<PredictResult>,
    /// In a job of two passes with a cache tier: the same request without the tier (and
    /// without the curve), run in the first pass, whose answer is ready when it ends
    /// ([`Predict::take_without_cache`]); the second pass then skips the replays it made.
    early: Option<Box<Predict>>,
    /// Its answer, until the host takes it.
    early_answer: Option<PredictResult>,
    /// Its run at the chosen load for each layout, and the requests it replayed: this job's
    /// numbers without the tier.
    early_runs: Option<(Vec<RunResult>, u64)>,
}

/// The replays take the trace in batches of this many events, one replay after the other,
/// instead of every replay each event in turn: each replay's engine (event queue, disk queues,
/// histograms) then stays in the processor's caches for a whole batch. They are independent,
/// so the order between them changes no number; the replays with the cache read the shared
/// simulator's answers to the batch ([`Memo`]).
const BATCH_EVENTS: usize = 4096;

/// One layout's replays, by load.
struct LayoutReplays {
    plain: Vec<(Load, TraceReplay<'static>)>,
    cached: Vec<(Load, TraceReplay<'static>)>,
}

impl Predict {
    pub fn new(request: PredictRequest) -> Result<Predict, JobError> {
        let footprint = request
            .cache
            .as_ref()
            .filter(|c| c.needs_footprint() && request.profile.is_none())
            .map(|c| LineFootprint::new(c.line_bytes));
        let origin_end = request
            .cache
            .as_ref()
            .filter(|c| {
                c.product_model() == Some(KernelModel::DmCacheSmq) && request.profile.is_none()
            })
            .map(|_| 0);
        let slices = match (&request.cache, request.sample) {
            (Some(c), Some(sample)) if request.profile.is_none() && c.product_model().is_none() => {
                let choice = c.choice()?;
                SimulatorTier::samples(&choice.config(1))
                    .then(|| SliceLines::new(sample, choice.effective_line_bytes()))
            }
            _ => None,
        };
        let window = WindowFilter::new(request.window_nanos);
        let measured = footprint.is_none() && origin_end.is_none() && slices.is_none();
        debug_assert_eq!(measured, !request.measures_first());
        let early = match request.without_cache_first() {
            Some(bare) if !measured => Some(Box::new(Predict::new(bare)?)),
            _ => None,
        };
        let plan = Plan::new(request)?;
        let mut job = Predict {
            plan,
            footprint,
            origin_end,
            slices,
            tier_sample_rate: None,
            measured,
            tier_limit_lines: None,
            footprint_lines: None,
            cache: None,
            memo: None,
            layouts: Vec::new(),
            pending: Vec::new(),
            events: 0,
            requests: 0,
            scratch: Vec::new(),
            window,
            result: None,
            early,
            early_answer: None,
            early_runs: None,
        };
        if job.plan.request.profile.is_some() {
            job.result = Some(job.synthetic()?);
        } else if job.measured {
            job.start_replays(None)?;
        }
        Ok(job)
    }

    fn cache_config(&self) -> Result<Option<(SimConfig, String)>, JobError> {
        let Some(c) = &self.plan.request.cache else {
            return Ok(None);
        };
        let cfg = c.sim_config(self.footprint_lines)?;
        let name = match c.preset()? {
            Some(p) => format!("{} ({}): ", p.name, p.title),
            None => String::new(),
        };
        let desc = format!("{name}{}", CacheParams::describe(&cfg));
        Ok(Some((cfg, desc)))
    }

    /// Builds the replays; `origin_bytes` is what pass 0 measured for dm-cache's model.
    fn start_replays(&mut self, origin_bytes: Option<u64>) -> Result<(), JobError> {
        self.cache = self.cache_config()?;
        let loads = self.plan.request.loads();
        if let (Some(origin), Some(params)) = (origin_bytes, &self.plan.request.cache) {
            // dm-cache's own model: its cache blocks are the line size, the size as given.
            let mode = match params.mode.as_str() {
                "wb" => DmCacheMode::WriteBack,
                "wt" => DmCacheMode::WriteThrough,
                other => {
                    return Err(JobError::invalid(
                        format!("dm-cache mode {other}"),
                        "dm-cache caches in writeback (wb) or writethrough (wt)",
                    ))
                }
            };
            let block = params.line_bytes;
            let cache_bytes = params.size().lines(block, self.footprint_lines)? * block;
            let config = DmCacheConfig {
                mode,
                ..DmCacheConfig::new(block, cache_bytes, origin.max(block))
            };
            let desc = format!(
                "dm-cache, the kernel's model (Linux 6.1 with smq, docs/cache.md): {} blocks of {}, {}, origin {}",
                count(cache_bytes / block.max(1)),
                bytes(block),
                params.mode,
                bytes(config.origin_bytes)
            );
            let tier = DmCacheTier::new(&config, desc.clone()).map_err(JobError::DmCache)?;
            if let Some((_, d)) = &mut self.cache {
                *d = desc;
            }
            self.memo = Some(Memo::shared(ReplayTier::DmCache(Box::new(tier))));
        } else if let Some(params) = self
            .plan
            .request
            .cache
            .as_ref()
            .filter(|c| c.product_model() == Some(KernelModel::Bcache))
        {
            // bcache's own model with bcache's defaults; make-bcache's default 512 KiB buckets,
            // halved until the cache has the 513 buckets bcache needs (a user making a small
            // cache passes a smaller --bucket; predict has no such flag).
            let mode = BcacheMode::from_name(&params.mode)
                .filter(|m| *m != BcacheMode::None)
                .ok_or_else(|| {
                    JobError::invalid(
                        format!("bcache mode {}", params.mode),
                        "bcache caches in writethrough (wt), writeback (wb) or writearound (wa)",
                    )
                })?;
            let line = params.line_bytes;
            let cache_bytes = params.size().lines(line, self.footprint_lines)? * line;
            let mut config = BcacheConfig {
                mode,
                ..BcacheConfig::new(cache_bytes)
            };
            while config.nbuckets() <= 512 && config.bucket_bytes > 4096 {
                config.bucket_bytes /= 2;
            }
            let desc = format!(
                "bcache, the kernel's model (Linux 6.1, docs/cache.md): {}, {} buckets of {}, {}, sequential cutoff {}; dirty data written back to the array at bcache's writeback rate; the cache devices taken to answer within bcache's congestion thresholds (2 ms reads, 20 ms writes), so its congestion bypass never starts",
                bytes(cache_bytes),
                count(config.nbuckets()),
                bytes(config.bucket_bytes),
                params.mode,
                bytes(config.sequential_cutoff_bytes)
            );
            let tier = BcacheTier::new(&config, desc.clone()).map_err(JobError::Bcache)?;
            if let Some((_, d)) = &mut self.cache {
                *d = desc;
            }
            self.memo = Some(Memo::shared(ReplayTier::Bcache(Box::new(tier))));
        } else if let Some((cfg, desc)) = &self.cache {
            // (`slices` stays: it still says this job has two passes.)
            let threshold = self.slices.as_mut().and_then(|s| {
                s.sample_threshold(cfg.capacity_lines)
                    .map(|t| (std::mem::take(&mut s.keys), t))
            });
            let sim = match threshold {
                Some((light, t)) => {
                    self.tier_sample_rate = Some(t as f64 / SAMPLE_HASH_SPACE as f64);
                    SimulatorTier::sampled(cfg, desc.clone(), light, t)?
                }
                None => SimulatorTier::new(cfg, desc.clone())?,
            };
            self.memo = Some(Memo::shared(ReplayTier::Sim(Box::new(sim))));
        }
        // The first pass's replays without the tier made the chosen load's numbers already.
        let skip = self
            .early_runs
            .is_some()
            .then(|| self.plan.request.chosen());
        self.layouts = self
            .plan
            .arrays
            .iter()
            .map(|(without, with)| {
                let mut plain = Vec::new();
                let mut cached = Vec::new();
                for &load in &loads {
                    if Some(load) != skip {
                        plain.push((load, TraceReplay::owning(without, load.mode(), None)));
                    }
                    if let Some(m) = &self.memo {
                        let tier: Box<dyn CacheTier> = Box::new(SharedTier {
                            memo: m.clone(),
                            accesses: 0,
                        });
                        cached.push((load, TraceReplay::owning(with, load.mode(), Some(tier))));
                    }
                }
                LayoutReplays { plain, cached }
            })
            .collect();
        Ok(())
    }

    /// Once the first of two passes is over: the answer of the request without the cache
    /// tier and without the curve ([`PredictRequest::without_cache_first`]), the same as that
    /// request's own job gives; once only. `None` before, after it was taken, and for a job
    /// of one pass.
    pub fn take_without_cache(&mut self) -> Option<PredictResult> {
        self.early_answer.take()
    }

    /// Stops with [`JobError::Memory`] once the cache tier holds more than `lines` lines (a
    /// host's bound on memory: the browser's tab); no limit by default.
    pub fn with_tier_limit(self, lines: u64) -> Predict {
        Predict {
            tier_limit_lines: Some(lines),
            ..self
        }
    }

    /// An error in plain words when the cache tier holds more lines than the host's limit
    /// ([`Predict::with_tier_limit`]); a host asks between chunks of the file.
    pub fn check_memory(&self) -> Result<(), JobError> {
        let (Some(limit), Some(m)) = (self.tier_limit_lines, self.memo.as_ref()) else {
            return Ok(());
        };
        let lines = m.borrow().tier.occupancy_lines();
        if lines <= limit {
            return Ok(());
        }
        let line_bytes = self.plan.request.cache.as_ref().map_or(0, |c| c.line_bytes);
        Err(JobError::Memory(format!(
            "The SSD cache tier came to hold more than {limit} lines of {} ({} of this trace's data): more than this run may simulate for the array replay. Choose a larger cache line or a smaller cache, or run `blocksight predict` on the command line, which has no such limit.",
            bytes(line_bytes),
            bytes(limit.saturating_mul(line_bytes))
        )))
    }

    fn assumptions(&self, replayed: u64) -> (String, Vec<String>) {
        let r = &self.plan.request;
        let mut assumptions: Vec<String> = Vec::new();
        for (without, with) in &self.plan.arrays {
            // With the cache tier, the configuration that has its devices describes them too.
            let c = if self.cache.is_some() { with } else { without };
            for a in c.assumptions() {
                if !assumptions.contains(&a) {
                    assumptions.push(a);
                }
            }
        }
        let workload = match r.chosen() {
            Load::Speed(speed) => format!(
                "trace replay at its timestamps, speed ×{speed}, {}",
                crate::units::plural(replayed, "request", "requests")
            ),
            Load::Outstanding(qd) => format!(
                "trace replay in closed loop, {}, {}",
                crate::units::plural(qd.into(), "outstanding I/O", "outstanding I/Os"),
                crate::units::plural(replayed, "request", "requests")
            ),
        };
        assumptions.push("trace offsets beyond a layout's capacity wrap around it; discards and flushes are not replayed".into());
        if let Some(s) = r.sample {
            assumptions.push(format!(
                "an estimate: {} of the trace's {} requests replayed, in slices of {} consecutive events every {}; the cache tier saw every request, the back-end I/O of the others is left out",
                count(replayed),
                count(self.requests),
                count(s.slice_requests),
                count(s.every_requests)
            ));
            if let Some(rate) = self.tier_sample_rate {
                assumptions.push(format!(
                    "the cache tier's hits and misses for the replayed requests are estimated from a spatial sample: their own lines and {:.2}% of the other lines (by hash), each of these standing for {:.0} lines, in one LRU list (LRU stack distances estimated as SHARDS does)",
                    rate * 100.0,
                    1.0 / rate
                ));
            }
        }
        if let Some(w) = self.window.describe() {
            assumptions.push(w);
        }
        if r.curve {
            assumptions.push(match r.speed {
                Some(s) => format!(
                    "curve: the same replay at speed ×{}, each a separate run from an idle array (and a cold cache)",
                    CURVE_SPEEDS.map(|f| (f * s).to_string()).join(", ×")
                ),
                None => format!(
                    "curve: the same replay at {} outstanding I/Os, each depth a separate run from an idle array (and a cold cache)",
                    CURVE_DEPTHS.map(|d| d.to_string()).join(", ")
                ),
            });
        }
        if let Some((_, desc)) = &self.cache {
            assumptions.push(format!(
                "cache tier: {desc} on {}, starting cold",
                r.cache_devices.describe()
            ));
        }
        if r.configs
            .iter()
            .any(|c| c.controller_cache && c.controller.cache_bytes.is_none())
        {
            assumptions.push(format!(
                "controller cache: a hardware controller with {} battery-backed write-back cache",
                bytes(CONTROLLER_CACHE_BYTES)
            ));
        }
        for line in controller_assumptions(&r.configs) {
            if !assumptions.contains(&line) {
                assumptions.push(line);
            }
        }
        (workload, assumptions)
    }

    /// Feeds the pending events to every replay, one replay at a time; the first replay with
    /// the cache runs the simulator over the batch and the others read its answers.
    fn feed_pending(&mut self) {
        for l in &mut self.layouts {
            for (_, r) in l.plain.iter_mut().chain(l.cached.iter_mut()) {
                for e in &self.pending {
                    r.observe(e);
                }
            }
        }
        if let Some(m) = &self.memo {
            m.borrow_mut().next_batch();
        }
        self.pending.clear();
    }

    fn finish_replays(self) -> PredictResult {
        let chosen = self.plan.request.chosen();
        let curve = self.plan.request.curve;
        let replayed = match &self.early_runs {
            Some((_, replayed)) => *replayed,
            None => self
                .layouts
                .first()
                .and_then(|l| l.plain.first())
                .map_or(0, |(_, r)| r.counts().0),
        };
        let (workload, assumptions) = self.assumptions(replayed);
        let requests = self.requests;
        let mut configs = Vec::new();
        let loads = self.plan.request.loads();
        let Predict {
            plan,
            layouts,
            cache,
            early_runs,
            ..
        } = self;
        let mut early = early_runs.map(|(runs, _)| runs.into_iter());
        for ((params, (without_cfg, _)), runs) in
            plan.request.configs.iter().zip(&plan.arrays).zip(layouts)
        {
            let (mut without, mut plain_curve) = finish_runs(runs.plain, chosen);
            if let Some(run) = early.as_mut().and_then(|e| e.next()) {
                // The chosen load's run came from the first pass.
                let at = loads.iter().position(|&l| l == chosen).unwrap_or(0);
                plain_curve.insert(at.min(plain_curve.len()), curve_point(chosen, &run));
                without = Some(run);
            }
            let (with, cached_curve) = finish_runs(runs.cached, chosen);
            let Some(without_cache) = without else {
                continue;
            };
            configs.push(layout_prediction(
                params,
                without_cfg,
                without_cache,
                with,
                if curve { plain_curve } else { Vec::new() },
                if curve { cached_curve } else { Vec::new() },
            ));
        }
        PredictResult {
            cache_description: cache.map(|(_, d)| d),
            request: plan.request,
            configs,
            workload,
            replayed_requests: replayed,
            trace_requests: requests,
            assumptions,
        }
    }

    /// The synthetic profile's prediction (no trace).
    fn synthetic(&mut self) -> Result<PredictResult, JobError> {
        let r = self.plan.request.clone();
        let Some(p) = &r.profile else {
            return Err(JobError::invalid("profile", "none given"));
        };
        let kind = ProfileKind::from_name(&p.name).ok_or_else(|| JobError::UnknownName {
            what: "profile",
            name: p.name.clone(),
            expected: ProfileKind::ALL
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
        let mut spec: AccessSpec = kind.spec();
        if let Some(s) = p.io_size_bytes {
            if s == 0 || s > (1 << 30) || s % 512 != 0 {
                return Err(JobError::invalid(
                    format!("I/O size {s}"),
                    "a multiple of 512 bytes up to 1 GiB",
                ));
            }
            spec.len_bytes = s as u32;
            spec.align_bytes = s;
        }
        if let Some(pct) = p.read_percent {
            if !(0.0..=100.0).contains(&pct) {
                return Err(JobError::invalid(
                    format!("read percentage {pct}"),
                    "between 0 and 100",
                ));
            }
            spec.read_fraction = pct / 100.0;
        }
        if r.speed.is_some() {
            return Err(JobError::invalid(
                "speed",
                "an open-loop replay needs a trace's timestamps; a profile runs in closed loop",
            ));
        }
        self.cache = self.cache_config()?;
        let qd = r.outstanding.max(1);
        let mut assumptions = Vec::new();
        let mut configs = Vec::new();
        let mut warm_all = 0;
        let mut span_all = 0;
        for (params, (without_cfg, with_cfg)) in r.configs.iter().zip(&self.plan.arrays) {
            let capacity = without_cfg.capacity_bytes();
            let span = p.span_bytes.unwrap_or(capacity).min(capacity);
            span_all = span;
            let warm = match &self.cache {
                Some((c, _)) => cache_warmup_requests(
                    span,
                    c.capacity_lines * c.line_bytes,
                    c.line_bytes,
                    spec.len_bytes,
                )
                .saturating_mul(SimulatorTier::warmup_factor(c))
                .min(50_000_000),
                None => 0,
            };
            warm_all = warm;
            let w = Synthetic {
                spec,
                span_bytes: span,
                outstanding: qd,
                requests: p.requests.max(100),
                seed: p.seed,
                cache_warmup_requests: warm,
            };
            let without = run_synthetic(without_cfg, &w, None);
            let with = match &self.cache {
                Some((c, desc)) => {
                    let mut tier = SimulatorTier::new(c, desc.clone())?;
                    Some(run_synthetic(with_cfg, &w, Some(&mut tier)))
                }
                None => None,
            };
            let short = Synthetic {
                requests: w.requests.min(50_000),
                ..w
            };
            let curve = if r.curve {
                sweep_depths(without_cfg, &short, &CURVE_DEPTHS, || None)
            } else {
                Vec::new()
            };
            let curve_with_cache = match (&self.cache, r.curve) {
                (Some((c, desc)), true) => sweep_depths(with_cfg, &short, &CURVE_DEPTHS, || {
                    SimulatorTier::new(c, desc.clone())
                        .ok()
                        .map(|t| Box::new(t) as Box<dyn CacheTier>)
                }),
                _ => Vec::new(),
            };
            let described = if self.cache.is_some() {
                with_cfg
            } else {
                without_cfg
            };
            for a in described.assumptions() {
                if !assumptions.contains(&a) {
                    assumptions.push(a);
                }
            }
            for a in controller_assumptions(std::slice::from_ref(params)) {
                if !assumptions.contains(&a) {
                    assumptions.push(a);
                }
            }
            configs.push(layout_prediction(
                params,
                without_cfg,
                without,
                with,
                curve,
                curve_with_cache,
            ));
        }
        if let Some((_, desc)) = &self.cache {
            assumptions.push(format!(
                "cache tier: {desc} on {}, warmed with {} requests of the same profile before measuring",
                r.cache_devices.describe(),
                count(warm_all)
            ));
            if let Some(m) = r.cache.as_ref().and_then(CacheParams::product_model) {
                assumptions.push(format!(
                    "{} names the kernel's own model, which runs on a trace's timing (simulate --preset {0}, or predict with a trace); a synthetic profile runs the generic approximation above",
                    m.product_name()
                ));
            }
        }
        let workload = format!(
            "{} ({}, {}% read, {}) over {}, {}, {} requests, seed {}",
            kind.name(),
            bytes(spec.len_bytes.into()),
            (spec.read_fraction * 100.0).round(),
            if spec.sequential {
                "sequential"
            } else {
                "random"
            },
            bytes(span_all),
            crate::units::plural(qd.into(), "outstanding I/O", "outstanding I/Os"),
            count(p.requests.max(100)),
            p.seed
        );
        Ok(PredictResult {
            cache_description: self.cache.as_ref().map(|(_, d)| d.clone()),
            request: r,
            configs,
            workload,
            replayed_requests: 0,
            trace_requests: 0,
            assumptions,
        })
    }
}

/// Whether some node of the layout has failed members.
fn has_failed(node: &Node) -> bool {
    !node.failed.is_empty()
        || node.members.iter().any(|m| match m {
            Member::Node(n) => has_failed(n),
            Member::Disk(_) => false,
        })
}

fn layout_prediction(
    params: &ArrayParams,
    cfg: &ArrayConfig,
    without_cache: RunResult,
    with_cache: Option<RunResult>,
    curve: Vec<CurvePoint>,
    curve_with_cache: Vec<CurvePoint>,
) -> ConfigPrediction {
    let busiest = without_cache
        .disks
        .iter()
        .filter(|d| d.tier == crate::array::Tier::Array)
        .map(|d| d.utilisation)
        .fold(0.0, f64::max);
    ConfigPrediction {
        params: params.clone(),
        description: cfg.describe(),
        capacity_bytes: cfg.capacity_bytes(),
        speedup: with_cache
            .as_ref()
            .map(|w| w.iops / without_cache.iops.max(1e-9)),
        rebuild_secs: match &without_cache.rebuild {
            Some(r) => r.secs(),
            None => cfg.rebuild_estimate_secs(busiest),
        },
        without_cache,
        with_cache,
        curve,
        curve_with_cache,
    }
}

impl Job for Predict {
    type Output = PredictResult;

    fn passes(&self) -> usize {
        if self.plan.request.profile.is_some() {
            0
        } else if self.footprint.is_some() || self.origin_end.is_some() || self.slices.is_some() {
            2
        } else {
            1
        }
    }

    fn begin_pass(&mut self, _pass: usize) {
        self.window.reset();
        if let Some(early) = self.early.as_mut() {
            // Its one pass, beside this job's first.
            early.begin_pass(0);
        }
    }

    fn observe(&mut self, e: &IoEvent) {
        if let Some(early) = self.early.as_mut() {
            early.observe(e);
        }
        if !self.window.admits(e) {
            return;
        }
        if !self.measured {
            if let Some(f) = self.footprint.as_mut() {
                f.observe(e);
            }
            if let Some(end) = self.origin_end.as_mut() {
                *end = (*end).max(e.end_bytes());
            }
            if let Some(s) = self.slices.as_mut() {
                s.observe(e);
            }
            return;
        }
        let i = self.events;
        self.events += 1;
        let request = matches!(e.op, Op::Read | Op::Write) && e.len_bytes > 0;
        self.requests += u64::from(request);
        let sampled = self
            .plan
            .request
            .sample
            .is_none_or(|s| i % s.every_requests < s.slice_requests);
        if sampled {
            self.pending.push(*e);
            if self.pending.len() >= BATCH_EVENTS {
                self.feed_pending();
            }
        } else if let (true, Some(m)) = (request, self.memo.clone()) {
            // Left out of the replays, but the cache sees it, after the sampled events
            // before it.
            if !self.pending.is_empty() {
                self.feed_pending();
            }
            m.borrow_mut().tier.tier().observe(e, &mut self.scratch);
        }
    }

    fn end_pass(
        &mut self,
        header: &TraceHeader,
        _diagnostics: &Diagnostics,
    ) -> Result<(), JobError> {
        if self.measured {
            return Ok(());
        }
        self.measured = true;
        if let Some(early) = self.early.take() {
            // A job of one pass (nothing to measure): its `end_pass` has nothing to do.
            let answer = early.finish()?;
            let runs = answer
                .configs
                .iter()
                .map(|c| c.without_cache.clone())
                .collect();
            self.early_runs = Some((runs, answer.replayed_requests));
            self.early_answer = Some(answer);
        }
        if let Some(f) = &self.footprint {
            self.footprint_lines = Some(f.lines().0);
        }
        let block = self.plan.request.cache.as_ref().map_or(1, |c| c.line_bytes);
        let origin = self
            .origin_end
            .map(|end| crate::job::simulate::model::dm_cache_origin(header, end, block));
        self.start_replays(origin)
    }

    fn finish(mut self) -> Result<PredictResult, JobError> {
        if let Some(r) = self.result.take() {
            return Ok(r);
        }
        self.feed_pending();
        self.check_memory()?;
        Ok(self.finish_replays())
    }
}

/// A run's point on the curve.
fn curve_point(load: Load, r: &RunResult) -> CurvePoint {
    CurvePoint {
        load,
        iops: r.iops,
        mean_latency_nanos: r.latency.mean_nanos,
        p99_latency_nanos: r.latency.p99_nanos,
    }
}

/// Finishes one layout's replays: the run at the chosen load and every load's point.
fn finish_runs(
    runs: Vec<(Load, TraceReplay<'_>)>,
    chosen: Load,
) -> (Option<RunResult>, Vec<CurvePoint>) {
    let mut picked = None;
    let mut points = Vec::new();
    for (load, replay) in runs {
        let r = replay.finish();
        points.push(curve_point(load, &r));
        if load == chosen {
            picked = Some(r);
        }
    }
    (picked, points)
}

/// The cache behind the replays: the generic simulator, or dm-cache's own model.
enum ReplayTier {
    Sim(Box<SimulatorTier>),
    DmCache(Box<DmCacheTier>),
    Bcache(Box<BcacheTier>),
}

impl ReplayTier {
    fn tier(&mut self) -> &mut dyn CacheTier {
        match self {
            ReplayTier::Sim(t) => t.as_mut(),
            ReplayTier::DmCache(t) => t.as_mut(),
            ReplayTier::Bcache(t) => t.as_mut(),
        }
    }

    fn writes_back(&self) -> bool {
        match self {
            ReplayTier::Sim(t) => t.writes_back(),
            ReplayTier::DmCache(t) => t.writes_back(),
            ReplayTier::Bcache(t) => t.writes_back(),
        }
    }

    fn describe(&self) -> String {
        match self {
            ReplayTier::Sim(t) => t.describe(),
            ReplayTier::DmCache(t) => t.describe(),
            ReplayTier::Bcache(t) => t.describe(),
        }
    }

    /// Lines (cache blocks) held now: its memory grows with them.
    fn occupancy_lines(&self) -> u64 {
        match self {
            ReplayTier::Sim(t) => t.occupancy_lines(),
            ReplayTier::DmCache(t) => t.occupancy_blocks(),
            ReplayTier::Bcache(t) => t.occupancy_extents(),
        }
    }
}

/// Sampled line accesses an estimate's LRU tier aims at (besides those of the slices' own
/// lines): the sampling error of a hit decision shrinks with the sample, its time grows with
/// it (it is a small share of a pass over the trace, whose every line is still hashed).
const TIER_SAMPLE_LINE_ACCESSES: u64 = 1 << 18;
/// Fewest lines of the sampled cache (capacity × rate): a hit is decided by comparing an
/// estimated stack distance with the capacity, and the estimate moves in steps of `1 / rate`
/// lines.
const TIER_SAMPLE_MIN_CACHE_LINES: u64 = 1 << 14;
/// A sample is only taken at this rate or below: above it the exact tier costs little more.
const TIER_SAMPLE_MAX_RATE: f64 = 0.25;
/// Most slice lines gathered; beyond it the tier is exact (the set's memory is bounded).
const TIER_SAMPLE_MAX_SLICE_LINES: usize = 1 << 21;

/// Pass 0 of an estimate with an LRU tier: the lines of the requests in the slices (kept whole
/// in the sampled tier) and how many line accesses the rest of the trace makes (which sets the
/// rate).
struct SliceLines {
    sample: SampleParams,
    line_bytes: u64,
    keys: IntSet<u64>,
    /// Events seen in the pass (the index that picks the slices, as the replay pass counts).
    events: u64,
    other_line_accesses: u64,
    overflow: bool,
}

impl SliceLines {
    fn new(sample: SampleParams, line_bytes: u64) -> SliceLines {
        SliceLines {
            sample,
            line_bytes: line_bytes.max(1),
            keys: IntSet::default(),
            events: 0,
            other_line_accesses: 0,
            overflow: false,
        }
    }

    fn observe(&mut self, e: &IoEvent) {
        let i = self.events;
        self.events += 1;
        if !matches!(e.op, Op::Read | Op::Write) || e.len_bytes == 0 {
            return;
        }
        let first = e.offset_bytes / self.line_bytes;
        let last = (e.end_bytes() - 1) / self.line_bytes;
        if i % self.sample.every_requests >= self.sample.slice_requests {
            self.other_line_accesses += last - first + 1;
        } else if !self.overflow {
            if last - first >= TIER_SAMPLE_MAX_SLICE_LINES as u64
                || self.keys.len() + (last - first + 1) as usize > TIER_SAMPLE_MAX_SLICE_LINES
            {
                self.overflow = true;
                self.keys = IntSet::default();
                return;
            }
            self.keys
                .extend((first..=last).map(|line| block_key(e.device, line)));
        }
    }

    /// The sample's threshold (of [`SAMPLE_HASH_SPACE`]) for a cache of `capacity_lines`, or
    /// `None` when the exact tier is as good a choice.
    fn sample_threshold(&self, capacity_lines: u64) -> Option<u64> {
        if self.overflow || self.other_line_accesses == 0 {
            return None;
        }
        let rate = (TIER_SAMPLE_LINE_ACCESSES as f64 / self.other_line_accesses as f64)
            .max(TIER_SAMPLE_MIN_CACHE_LINES as f64 / capacity_lines.max(1) as f64);
        (rate <= TIER_SAMPLE_MAX_RATE)
            .then(|| ((rate * SAMPLE_HASH_SPACE as f64).ceil() as u64).clamp(1, SAMPLE_HASH_SPACE))
    }
}

/// The one cache simulator behind every [`SharedTier`], and its answers to the current batch
/// of requests.
struct Memo {
    tier: ReplayTier,
    /// Requests the simulator saw before the current batch.
    base: u64,
    /// The batch's answers: the access and its range in `backend`.
    answers: Vec<(CacheAccess, std::ops::Range<usize>)>,
    backend: Vec<IoEvent>,
}

impl Memo {
    /// A new memo of `tier`, for every replay with the cache to share.
    fn shared(tier: ReplayTier) -> Rc<RefCell<Memo>> {
        Rc::new(RefCell::new(Memo {
            tier,
            base: 0,
            answers: Vec::new(),
            backend: Vec::new(),
        }))
    }

    /// Every replay has passed the batch: forget its answers.
    fn next_batch(&mut self) {
        self.base += self.answers.len() as u64;
        self.answers.clear();
        self.backend.clear();
    }
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
        let mut m = self.memo.borrow_mut();
        let i = (self.accesses - m.base) as usize;
        self.accesses += 1;
        if i == m.answers.len() {
            let Memo {
                tier,
                answers,
                backend: out,
                ..
            } = &mut *m;
            let start = out.len();
            let access = tier.tier().access(request, out);
            answers.push((access, start..out.len()));
        }
        let Some((access, range)) = m.answers.get(i).cloned() else {
            // Unreachable while every replay passes the same requests; a miss to the disks
            // keeps the replay going.
            backend.push(*request);
            return CacheAccess {
                hit: false,
                writes_cache: false,
            };
        };
        backend.extend_from_slice(m.backend.get(range).unwrap_or_default());
        access
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
    use crate::job::{run_events, CacheSize};
    use crate::mrc::synth;

    /// Every controller on every level, from a layout carrying every md setting: pruning keeps
    /// exactly the settings that apply there, and the engine takes the layout.
    #[test]
    fn pruned_md_settings_are_those_the_controller_and_level_take() {
        let full = ControllerSettings {
            md_raid10_layout: Some("f2".into()),
            md_stripe_cache_size: Some(4096),
            md_group_thread_cnt: Some(2),
            md_stripe_cost_nanos: Some(2_000.0),
            md_page_cost_nanos: Some(300.0),
            md_bitmap: Some("none".into()),
            md_safe_mode_delay_nanos: Some(0),
            ..ControllerSettings::default()
        };
        let controllers = [None, Some("cache")]
            .into_iter()
            .chain(ControllerPreset::ALL.iter().map(|p| Some(p.name)));
        for controller in controllers {
            for level in StandardLevel::ALL {
                let mut a = ArrayParams {
                    level: level.name().into(),
                    disks: 8,
                    controller_cache: controller
                        .is_some_and(|c| ControllerPreset::by_name(c).is_none_or(|p| !p.software)),
                    controller: ControllerSettings {
                        preset: controller.filter(|&c| c != "cache").map(str::to_owned),
                        ..full.clone()
                    },
                    ..ArrayParams::default()
                };
                a.prune_md_settings();
                let c = &a.controller;
                let md = a.software();
                assert_eq!(md, controller.is_none() || controller == Some("intel-vroc"));
                // Written out here, not with the level's own predicates, as the reference.
                let parity = matches!(
                    level,
                    StandardLevel::Raid5
                        | StandardLevel::Raid6
                        | StandardLevel::Raid50
                        | StandardLevel::Raid60
                );
                let redundant = !matches!(level, StandardLevel::Jbod | StandardLevel::Raid0);
                let what = format!("{controller:?} {}", level.name());
                assert_eq!(
                    c.md_raid10_layout.is_some(),
                    md && level == StandardLevel::Raid10,
                    "{what}"
                );
                for kept in [
                    c.md_stripe_cache_size.is_some(),
                    c.md_group_thread_cnt.is_some(),
                    c.md_stripe_cost_nanos.is_some(),
                    c.md_page_cost_nanos.is_some(),
                ] {
                    assert_eq!(kept, md && parity, "{what}");
                }
                assert_eq!(c.md_bitmap.is_some(), md && redundant, "{what}");
                assert_eq!(
                    c.md_safe_mode_delay_nanos.is_some(),
                    md && redundant,
                    "{what}"
                );
                if let Err(e) = a.config() {
                    panic!("{what}: {e}");
                }
            }
        }
    }

    /// The groups and failed disks an editor offers: every group count it lists builds, the
    /// failure order is survived at every prefix and by nothing longer (checked against every
    /// set of disks one larger), and pruning keeps what the layout takes and shrinks the rest.
    #[test]
    fn group_choices_and_failure_order_are_what_the_engine_takes() {
        let with = |level: &str, disks: u32, controller: Option<&str>| ArrayParams {
            level: level.into(),
            disks,
            controller_cache: controller.is_some(),
            controller: ControllerSettings {
                preset: controller.map(str::to_owned),
                ..ControllerSettings::default()
            },
            ..ArrayParams::default()
        };
        let cases = [
            (with("raid0", 4, None), vec![], vec![]),
            (with("raid1", 3, None), vec![], vec![0, 1]),
            (with("raid5", 6, None), vec![], vec![0]),
            (with("raid6", 6, None), vec![], vec![0, 1]),
            // md's RAID 10 (n2): copies on neighbouring disks; no groups.
            (with("raid10", 8, None), vec![], vec![0, 2, 4, 6]),
            // A controller's RAID 10: RAID 0 over mirrors, of 2 disks (4 groups) or 4 (2).
            (
                with("raid10", 8, Some("perc-h730")),
                vec![2, 4],
                vec![0, 2, 4, 6],
            ),
            (with("raid50", 12, None), vec![2, 3, 4], vec![0, 6]),
            (
                with("raid60", 16, Some("perc-h730")),
                vec![2, 4],
                vec![0, 1, 8, 9],
            ),
            // Too few disks for the level: nothing to offer.
            (with("raid5", 2, None), vec![], vec![]),
        ];
        for (a, groups, order) in cases {
            let what = a.label();
            assert_eq!(a.group_choices(), groups, "{what}");
            assert_eq!(a.failure_order(), order, "{what}");
            for &g in &groups {
                let mut b = ArrayParams {
                    groups: Some(g),
                    ..a.clone()
                };
                let order = b.failure_order();
                assert!(!order.is_empty(), "{what}, {g} groups");
                for k in 0..=order.len() {
                    b.failed = order[..k].to_vec();
                    assert!(
                        b.config().is_ok(),
                        "{what}, {g} groups, failed {:?}",
                        b.failed
                    );
                }
                // One more failure, anywhere, is one too many.
                for d in (0..a.disks).filter(|d| !order.contains(d)) {
                    b.failed = order.iter().copied().chain([d]).collect();
                    assert!(
                        b.config().is_err(),
                        "{what}, {g} groups, failed {:?}",
                        b.failed
                    );
                }
            }
        }

        // Pruning: groups the level does not take go, failed disks shrink to what it survives.
        let mut a = ArrayParams {
            groups: Some(3),
            failed: vec![0, 1],
            ..with("raid60", 12, None)
        };
        a.prune_settings();
        assert_eq!((a.groups, a.failed.clone()), (Some(3), vec![0, 1]));
        a.level = "raid5".into();
        a.prune_settings();
        assert_eq!((a.groups, a.failed.clone()), (None, vec![0]));
        a.level = "raid0".into();
        a.prune_settings();
        assert_eq!((a.groups, a.failed.clone()), (None, vec![]));
        // A valid set a link gave is kept as given.
        let mut b = ArrayParams {
            failed: vec![5],
            ..with("raid5", 6, None)
        };
        b.prune_settings();
        assert_eq!(b.failed, vec![5]);
        assert_eq!(
            b.label(),
            "6 × sas-10k raid5, 64.0 KiB chunk, failed disk 5"
        );
        // Rebuilding stays with md and failed disks, and goes with either.
        let mut r = ArrayParams {
            rebuilding: true,
            ..b.clone()
        };
        r.prune_settings();
        assert!(r.rebuilding && r.config().is_ok_and(|c| c.rebuilding));
        assert_eq!(
            r.label(),
            "6 × sas-10k raid5, 64.0 KiB chunk, failed disk 5 rebuilding"
        );
        r.controller.preset = Some("perc-h730".into());
        assert!(r.config().is_err(), "a controller's rebuild is refused");
        r.prune_settings();
        assert!(!r.rebuilding && r.failed == vec![5]);
        let mut r = ArrayParams {
            rebuilding: true,
            ..b.clone()
        };
        r.level = "raid0".into();
        r.prune_settings();
        assert!(!r.rebuilding && r.failed.is_empty());
        let c = ArrayParams {
            groups: Some(3),
            failed: vec![0, 4],
            ..with("raid50", 12, Some("perc-h730"))
        };
        assert_eq!(
            c.label(),
            "12 × sas-10k raid50, 64.0 KiB chunk, controller perc-h730, 3 groups, failed disks 0, 4"
        );
    }

    fn events(n: u64) -> Vec<IoEvent> {
        synth::Synthetic::new(synth::SyntheticConfig {
            requests: n,
            zipf_lines: 5_000,
            ..synth::SyntheticConfig::default()
        })
        .collect()
    }

    fn params(level: &str, disks: u32, disk: &str) -> ArrayParams {
        ArrayParams {
            level: level.into(),
            disks,
            disk: disk.into(),
            ..ArrayParams::default()
        }
    }

    fn lru(size_bytes: u64, mode: &str) -> CacheParams {
        CacheParams {
            size_bytes,
            line_bytes: 64 << 10,
            mode: mode.into(),
            ..CacheParams::default()
        }
    }

    fn predict(request: PredictRequest, events: &[IoEvent]) -> PredictResult {
        run_events(
            Predict::new(request).expect("valid"),
            &TraceHeader::default(),
            events,
        )
        .expect("runs")
    }

    /// The reference: one independent `TraceReplay` with a fresh simulator (what a separate
    /// `blocksight predict --qd Q` run replays).
    fn direct(
        p: &ArrayParams,
        cache: Option<&CacheParams>,
        load: Load,
        ev: &[IoEvent],
    ) -> RunResult {
        let mut cfg = p.config().expect("layout");
        if cache.is_some() {
            cfg = cfg
                .with_cache(CacheDevicesParams::default().devices().expect("devices"))
                .expect("cache");
        }
        let tier = cache.map(|c| {
            Box::new(SimulatorTier::new(&c.sim_config(None).expect("cfg"), "ref").expect("tier"))
                as Box<dyn CacheTier>
        });
        let mut r = TraceReplay::owning(&cfg, load.mode(), tier);
        ev.iter().for_each(|e| r.observe(e));
        r.finish()
    }

    /// A simulator several replays (and the test) share, for the sampled reference.
    struct SharedSim(Rc<RefCell<SimulatorTier>>);

    impl CacheTier for SharedSim {
        fn access(&mut self, request: &IoEvent, backend: &mut Vec<IoEvent>) -> CacheAccess {
            self.0.borrow_mut().access(request, backend)
        }
        fn writes_back(&self) -> bool {
            self.0.borrow().writes_back()
        }
        fn describe(&self) -> String {
            self.0.borrow().describe()
        }
    }

    /// The estimate's reference, one replay at a time with nothing batched or shared: the
    /// slices' events through the replay with the exact tier, every other request to the
    /// simulator alone.
    fn sliced_reference(
        p: &ArrayParams,
        cache: &CacheParams,
        load: Load,
        ev: &[IoEvent],
        in_slice: &dyn Fn(usize) -> bool,
    ) -> RunResult {
        let sim = Rc::new(RefCell::new(
            SimulatorTier::new(&cache.sim_config(None).expect("cfg"), "ref").expect("tier"),
        ));
        let cfg = p
            .config()
            .expect("layout")
            .with_cache(CacheDevicesParams::default().devices().expect("devices"))
            .expect("cache");
        let mut replay =
            TraceReplay::owning(&cfg, load.mode(), Some(Box::new(SharedSim(sim.clone()))));
        let mut dropped = Vec::new();
        for (i, e) in ev.iter().enumerate() {
            if in_slice(i) {
                replay.observe(e);
            } else if e.op != Op::Discard {
                sim.borrow_mut().access(e, &mut dropped);
            }
        }
        replay.finish()
    }

    #[test]
    fn an_estimate_replays_the_slices_and_its_cache_sees_every_request() {
        // 20,000 events (a few discards among them are not requests), slices of 300 every 1,000.
        let mut ev = events(20_000);
        for e in ev.iter_mut().step_by(97) {
            e.op = Op::Discard;
        }
        let sample = SampleParams {
            slice_requests: 300,
            every_requests: 1_000,
        };
        let layouts = vec![params("raid5", 6, "sas-10k"), params("raid10", 4, "nvme")];
        let cache = lru(64 << 20, "wb");
        let request = PredictRequest {
            sample: Some(sample),
            ..PredictRequest::new(layouts.clone(), Some(cache.clone()), 8)
        };
        let r = predict(request, &ev);
        let in_slice = |i: usize| (i as u64) % 1_000 < 300;
        let requests = |pick: &dyn Fn(usize) -> bool| {
            ev.iter()
                .enumerate()
                .filter(|(i, e)| pick(*i) && e.op != Op::Discard)
                .count() as u64
        };
        assert_eq!(r.replayed_requests, requests(&in_slice));
        assert_eq!(r.trace_requests, requests(&|_| true));
        assert!(r.assumptions.iter().any(|a| a.contains("an estimate")));
        for (c, p) in r.configs.iter().zip(&layouts) {
            let load = Load::Outstanding(8);
            let slices: Vec<IoEvent> = ev
                .iter()
                .enumerate()
                .filter(|(i, _)| in_slice(*i))
                .map(|(_, e)| *e)
                .collect();
            assert_eq!(c.without_cache, direct(p, None, load, &slices));
            assert_eq!(
                c.with_cache.as_ref(),
                Some(&sliced_reference(p, &cache, load, &ev, &in_slice))
            );
            // A cache that saw only the slices would answer differently (colder).
            assert_ne!(
                c.with_cache.as_ref(),
                Some(&direct(p, Some(&cache), load, &slices))
            );
        }
        // Checked: slices that overlap, an empty slice, an open-loop replay.
        for bad in [(10, 5), (0, 5)] {
            let request = PredictRequest {
                sample: Some(SampleParams {
                    slice_requests: bad.0,
                    every_requests: bad.1,
                }),
                ..PredictRequest::new(layouts.clone(), None, 8)
            };
            assert!(Predict::new(request).is_err());
        }
        let open = PredictRequest {
            sample: Some(sample),
            speed: Some(1.0),
            ..PredictRequest::new(layouts.clone(), None, 8)
        };
        assert!(Predict::new(open).is_err());
    }

    /// With an LRU tier without dirty data on a trace of millions of line accesses, the
    /// estimate's tier is a spatial sample holding the slices' own lines: its numbers come
    /// close to those of the exact tier beside the same slices, and it says so. Write-back
    /// keeps the exact tier.
    #[test]
    fn an_estimates_lru_tier_is_sampled_on_a_large_trace() {
        // 60,000 requests of 256 KiB: 3.84 M line accesses of 4 KiB, 2.69 M outside the slices.
        let mut ev = events(60_000);
        for e in &mut ev {
            e.len_bytes = 256 << 10;
            e.offset_bytes &= !((256 << 10) - 1);
        }
        let sample = SampleParams {
            slice_requests: 300,
            every_requests: 1_000,
        };
        let layouts = vec![params("raid5", 6, "sas-10k")];
        let cache = CacheParams {
            line_bytes: 4096,
            ..lru(256 << 20, "wt")
        };
        let request = PredictRequest {
            sample: Some(sample),
            ..PredictRequest::new(layouts.clone(), Some(cache.clone()), 8)
        };
        let r = predict(request, &ev);
        assert!(
            r.assumptions.iter().any(|a| a.contains("spatial sample")),
            "{:?}",
            r.assumptions
        );
        let in_slice = |i: usize| (i as u64) % 1_000 < 300;
        let exact = sliced_reference(&layouts[0], &cache, Load::Outstanding(8), &ev, &in_slice);
        let with = r.configs[0].with_cache.as_ref().expect("with the cache");
        let off = |a: f64, b: f64| (a / b - 1.0).abs();
        assert!(
            off(with.iops, exact.iops) < 0.03
                && off(with.backend_requests as f64, exact.backend_requests as f64) < 0.03,
            "sampled tier {} IOPS {} back-end, exact {} / {}",
            with.iops,
            with.backend_requests,
            exact.iops,
            exact.backend_requests
        );
        let wb = PredictRequest {
            sample: Some(sample),
            ..PredictRequest::new(
                layouts,
                Some(CacheParams {
                    line_bytes: 4096,
                    ..lru(256 << 20, "wb")
                }),
                8,
            )
        };
        let r = predict(wb, &ev);
        assert!(!r.assumptions.iter().any(|a| a.contains("spatial sample")));
    }

    #[test]
    fn estimates_only_for_large_closed_loop_replays() {
        let r = PredictRequest::new(vec![params("raid5", 6, "sas-10k")], None, 16);
        assert_eq!(r.estimate(ESTIMATE_MIN_EVENTS), None);
        let e = r.estimate(10_000_000).expect("an estimate");
        let s = e.sample.expect("sampled");
        assert_eq!(s.slice_requests, ESTIMATE_SLICE_REQUESTS);
        assert_eq!(s.every_requests, 10_000_000 / 32);
        assert_eq!(PredictRequest { sample: None, ..e }, r);
        let open = PredictRequest {
            speed: Some(2.0),
            ..r
        };
        assert_eq!(open.estimate(10_000_000), None);
    }

    #[test]
    fn curve_points_equal_independent_replays_at_each_load() {
        let ev = events(1_500);
        let layouts = vec![params("raid5", 6, "sas-10k"), params("raid10", 4, "nvme")];
        let cache = lru(64 << 20, "wb");
        // 12 is not a curve depth: it is replayed too, and is the chosen result.
        let r = predict(
            PredictRequest::new(layouts.clone(), Some(cache.clone()), 12).with_curve(true),
            &ev,
        );
        for (c, p) in r.configs.iter().zip(&layouts) {
            assert_eq!(c.curve.len(), 10);
            assert_eq!(c.curve_with_cache.len(), 10);
            for (i, pt) in c.curve.iter().enumerate() {
                let load = pt.load;
                if ![1, 12, 256].iter().any(|&q| load == Load::Outstanding(q)) {
                    continue;
                }
                let plain = direct(p, None, load, &ev);
                let cached = direct(p, Some(&cache), load, &ev);
                assert_eq!(
                    (pt.iops, pt.p99_latency_nanos),
                    (plain.iops, plain.latency.p99_nanos)
                );
                let q = &c.curve_with_cache[i];
                assert_eq!(
                    (q.iops, q.p99_latency_nanos),
                    (cached.iops, cached.latency.p99_nanos)
                );
            }
            assert_eq!(c.without_cache, direct(p, None, Load::Outstanding(12), &ev));
            assert_eq!(
                c.with_cache.as_ref(),
                Some(&direct(p, Some(&cache), Load::Outstanding(12), &ev))
            );
            // More outstanding I/Os raise throughput and latency.
            assert!(c.curve[9].iops > c.curve[0].iops, "{:?}", c.curve);
            assert!(c.curve[9].mean_latency_nanos > c.curve[0].mean_latency_nanos);
        }
    }

    #[test]
    fn an_open_loop_curve_is_faster_replays_of_the_same_trace() {
        let ev = events(2_000);
        let p = params("raid10", 4, "nvme");
        let r = predict(
            PredictRequest {
                speed: Some(2.0),
                ..PredictRequest::new(vec![p.clone()], None, 1).with_curve(true)
            },
            &ev,
        );
        let loads: Vec<Load> = r.configs[0].curve.iter().map(|c| c.load).collect();
        let speeds = [1.0, 2.0, 4.0, 8.0, 16.0];
        assert_eq!(loads, speeds.map(Load::Speed).to_vec());
        assert_eq!(
            r.configs[0].without_cache,
            direct(&p, None, Load::Speed(2.0), &ev)
        );
        // Far from saturation, each doubling of the speed about doubles the completed IOPS
        for w in r.configs[0].curve.windows(2) {
            // (the last requests' latency tail lengthens every run by the same time)
            let ratio = w[1].iops / w[0].iops;
            assert!(ratio > 1.8 && ratio <= 2.0 + 1e-9, "{ratio}: {w:?}");
        }
    }

    #[test]
    fn a_window_replays_only_its_requests() {
        let ev = events(6_000);
        let origin = ev[0].time_nanos;
        let span = ev[ev.len() - 1].time_nanos - origin;
        let window = (span / 3, span / 3 * 2);
        let p = params("raid5", 6, "sas-10k");
        let cache = lru(256 << 20, "wt");
        let r = predict(
            PredictRequest::new(vec![p.clone()], Some(cache.clone()), 16).with_window(Some(window)),
            &ev,
        );
        let inside: Vec<IoEvent> = ev
            .iter()
            .filter(|e| (window.0..window.1).contains(&(e.time_nanos - origin)))
            .copied()
            .collect();
        assert!(inside.len() > 100 && inside.len() < ev.len() / 2);
        assert_eq!(
            r.configs[0].without_cache,
            direct(&p, None, Load::Outstanding(16), &inside)
        );
        assert_eq!(
            r.configs[0].with_cache.as_ref(),
            Some(&direct(&p, Some(&cache), Load::Outstanding(16), &inside))
        );
        assert_eq!(r.replayed_requests, inside.len() as u64);
        assert!(r.assumptions.iter().any(|a| a.contains("time window")));
    }

    /// Runs `request`'s job over `ev` as a host does, taking the answer without the cache
    /// after each pass; with `early` false, the job as it was before it had one (the second
    /// pass replays without the tier too).
    fn run_staged(
        request: &PredictRequest,
        ev: &[IoEvent],
        early: bool,
    ) -> (Vec<(usize, PredictResult)>, PredictResult) {
        let mut job = Predict::new(request.clone()).expect("valid");
        if !early {
            job.early = None;
        }
        let mut taken = Vec::new();
        for pass in 0..job.passes() {
            job.begin_pass(pass);
            ev.iter().for_each(|e| job.observe(e));
            job.end_pass(&TraceHeader::default(), &Diagnostics::default())
                .expect("pass");
            if let Some(r) = job.take_without_cache() {
                taken.push((pass, r));
            }
        }
        assert_eq!(job.take_without_cache(), None, "taken once");
        (taken, job.finish().expect("result"))
    }

    #[test]
    fn a_two_pass_job_answers_without_the_cache_after_its_first_pass() {
        // 12,000 requests of 64 KiB: an estimate with an LRU tier (the lines of its slices
        // gathered first), a cache sized as a share of the footprint, and dm-cache's model (its
        // origin measured first); with and without the curve, over two layouts.
        let mut ev = events(12_000);
        for e in &mut ev {
            e.len_bytes = 64 << 10;
            e.offset_bytes &= !((64 << 10) - 1);
        }
        let sample = Some(SampleParams {
            slice_requests: 300,
            every_requests: 1_000,
        });
        let layouts = vec![params("raid5", 6, "sas-10k"), params("raid10", 4, "nvme")];
        let small_lines = CacheParams {
            line_bytes: 4096,
            ..lru(64 << 20, "wt")
        };
        let share = lru(0, "wt").with_size(CacheSize::FootprintPercent(20.0));
        let dm_cache = CacheParams {
            preset: Some("dm-cache".into()),
            mode: "wb".into(),
            ..lru(32 << 20, "wb")
        };
        let mut checked = 0;
        for cache in [small_lines, share, dm_cache] {
            for curve in [false, true] {
                for sample in [sample, None] {
                    let request = PredictRequest {
                        sample,
                        curve,
                        ..PredictRequest::new(layouts.clone(), Some(cache.clone()), 8)
                    };
                    let Some(bare) = request.without_cache_first() else {
                        // One pass: nothing to answer early (a sampled-tier estimate only).
                        assert!(sample.is_none() && cache.footprint_percent.is_none());
                        assert_eq!(Predict::new(request).expect("valid").passes(), 1);
                        continue;
                    };
                    assert_eq!(Predict::new(request.clone()).expect("valid").passes(), 2);
                    assert_eq!(
                        bare,
                        PredictRequest {
                            cache: None,
                            curve: false,
                            ..request.clone()
                        }
                    );
                    let (taken, result) = run_staged(&request, &ev, true);
                    // After the first pass, exactly what the request without the tier answers.
                    assert_eq!(taken.len(), 1);
                    assert_eq!(taken[0].0, 0);
                    assert_eq!(taken[0].1, predict(bare, &ev));
                    // And the final answer is the one the job gave when it replayed without
                    // the tier in its second pass.
                    let (none, before) = run_staged(&request, &ev, false);
                    assert!(none.is_empty());
                    assert_eq!(result, before, "cache {cache:?}, curve {curve}");
                    assert_eq!(result.configs.len(), 2);
                    if curve {
                        assert_eq!(result.configs[0].curve.len(), request.loads().len());
                    }
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 10);
    }

    #[test]
    fn a_share_of_the_footprint_sizes_the_tier_from_a_first_pass() {
        let ev = events(3_000);
        let mut f = LineFootprint::new(65536);
        ev.iter().for_each(|e| f.observe(e));
        let lines = f.lines().0;
        let job = Predict::new(PredictRequest::new(
            vec![ArrayParams::default()],
            Some(lru(0, "wt").with_size(CacheSize::FootprintPercent(50.0))),
            4,
        ))
        .expect("valid");
        assert_eq!(job.passes(), 2);
        let r = run_events(job, &TraceHeader::default(), &ev).expect("runs");
        let want = (lines as f64 * 0.5).ceil() as u64;
        assert!(
            r.cache_description
                .as_deref()
                .is_some_and(|d| d.contains(&format!("over {} lines", count(want)))),
            "{:?} vs {want}",
            r.cache_description
        );
    }

    #[test]
    fn impossible_requests_are_refused_in_words() {
        let err = |r: PredictRequest| {
            Predict::new(r)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let e = err(PredictRequest::new(
            vec![params("raid10", 0, "nvme")],
            None,
            1,
        ));
        assert!(
            e.contains("raid10") && e.contains("needs 2 to 4,096"),
            "{e}"
        );
        // md takes RAID 10 over any disk count; a controller's RAID 10 is pairs.
        let five = |controller_cache| ArrayParams {
            controller_cache,
            ..params("raid10", 5, "nvme")
        };
        assert_eq!(err(PredictRequest::new(vec![five(false)], None, 1)), "");
        let e = err(PredictRequest::new(vec![five(true)], None, 1));
        assert!(
            e.contains("mirrored pairs") && e.contains("even number"),
            "{e}"
        );
        let e = err(PredictRequest::new(
            vec![params("raid6", 2, "nvme")],
            None,
            1,
        ));
        assert!(e.starts_with("layout 1:") && e.contains("raid6"), "{e}");
        let e = err(PredictRequest::new(vec![ArrayParams::default()], None, 0));
        assert!(e.contains("0 outstanding"), "{e}");
        let belady = CacheParams {
            policy: "belady".into(),
            ..lru(1 << 30, "wt")
        };
        let e = err(PredictRequest::new(
            vec![ArrayParams::default()],
            Some(belady),
            1,
        ));
        assert!(e.contains("online"), "{e}");
        assert!(err(PredictRequest::new(Vec::new(), None, 1)).contains("1 to 4"));
    }
}
