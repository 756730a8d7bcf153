//! The kernels' own caches as a job: `simulate --preset bcache-kernel` (the bcache model,
//! [`crate::cache::bcache`], counting what `stats_total/` counts) and `--preset dm-cache-smq`
//! (dm-cache with the smq policy, [`crate::cache::dmcache`], counting what `dmsetup status`
//! counts). These are not cells of the generic simulator: each is one model with its own
//! settings and its own counters, so it has its own request and result; the defaults of every
//! setting a host leaves out, and the parsing of its names, are here.
//!
//! The product names select these models too (`--preset dm-cache`, `--preset bcache`): a user
//! who asks what dm-cache would do gets the model of dm-cache, not the generic approximation
//! (`dm-cache-approx`, `bcache-approx` in [`crate::cache::Preset`]), which over-predicts the
//! kernel's hit ratios by 7–18 points on the lab's bios (docs/validation.md).
//!
//! dm-cache needs the origin's size (it sets smq's hotspot geometry); when the request does not
//! give it, a first pass finds the highest byte the trace touches. A cache size given as a share
//! of the footprint is resolved in the same first pass: dm-cache's footprint is counted in its
//! cache blocks, bcache's in 4 KiB blocks (what it caches is extents of sectors; 4 KiB is the
//! page a bio carries).
//!
//! Both hosts run this one job: the CLI through its read loop ([`Model::new`]), the web app's
//! worker slice by slice with the tab's bound on memory ([`Model::with_memory_limit`], asking
//! [`Model::check_memory`] between slices), so the same request gives the same counters. The
//! result carries its assumptions in words (which model, the origin and where it came from, the
//! defaults taken) for both to show.

use serde::{Deserialize, Serialize};

use crate::cache::bcache::{self, BcacheConfig, BcacheMode, BcacheModel, BcacheResult};
use crate::cache::dmcache::{self, DmCacheConfig, DmCacheMode, DmCacheModel, DmCacheResult};
use crate::job::{CacheSize, Job, JobError, LineFootprint, WindowFilter, WindowNanos};
use crate::{Diagnostics, IoEvent, TraceHeader};

/// Which kernel cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum KernelModel {
    #[serde(rename = "bcache-kernel")]
    Bcache,
    #[serde(rename = "dm-cache-smq")]
    DmCacheSmq,
}

impl KernelModel {
    pub const ALL: [KernelModel; 2] = [KernelModel::Bcache, KernelModel::DmCacheSmq];

    /// The `--preset` name (`bcache-kernel`, `dm-cache-smq`).
    pub fn name(self) -> &'static str {
        match self {
            KernelModel::Bcache => bcache::MODEL_NAME,
            KernelModel::DmCacheSmq => dmcache::MODEL_NAME,
        }
    }

    /// The product's own name (`dm-cache`, `bcache`).
    pub fn product_name(self) -> &'static str {
        match self {
            KernelModel::Bcache => bcache::PRODUCT_NAME,
            KernelModel::DmCacheSmq => dmcache::PRODUCT_NAME,
        }
    }

    /// What the model is, for a picker beside [`KernelModel::product_name`]: `Linux dm-cache,
    /// smq`.
    pub fn title(self) -> &'static str {
        match self {
            KernelModel::Bcache => "Linux bcache",
            KernelModel::DmCacheSmq => "Linux dm-cache, smq",
        }
    }

    /// The generic approximation of the same product ([`crate::cache::Preset`]), which takes
    /// the generic simulator's settings the model has not.
    pub fn approximation(self) -> &'static str {
        match self {
            KernelModel::Bcache => "bcache-approx",
            KernelModel::DmCacheSmq => "dm-cache-approx",
        }
    }

    /// The model a preset name selects, if it selects one: its own name or the product's
    /// (`dm-cache`, `bcache`); the generic presets select none.
    pub fn from_preset(name: &str) -> Option<KernelModel> {
        if bcache::is_model_name(name) {
            Some(KernelModel::Bcache)
        } else if dmcache::is_model_name(name) {
            Some(KernelModel::DmCacheSmq)
        } else {
            None
        }
    }
}

/// What to run. Every setting left out takes the kernel's default (bcache: write-through,
/// 4 MiB `sequential_cutoff`, 512 KiB buckets; dm-cache: lvmcache's 64 KiB blocks,
/// writeback, created at the first bio, 1 ms bios where the trace has no latency, migrations
/// done before the next bio). A setting of the other model is an error, not ignored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    pub model: KernelModel,
    /// The cache device's size (a size, not a share of the footprint).
    pub cache_size: CacheSize,
    /// Write mode: bcache `wt`, `wb`, `wa`, `none`; dm-cache `wb`, `wt`.
    #[serde(default)]
    pub mode: Option<String>,
    /// Only `[start, end)` nanoseconds after the first request.
    #[serde(default)]
    pub window_nanos: WindowNanos,
    /// bcache: `sequential_cutoff` (0 turns sequential bypass off).
    #[serde(default)]
    pub sequential_cutoff_bytes: Option<u64>,
    /// bcache: make-bcache's `--bucket`.
    #[serde(default)]
    pub bucket_bytes: Option<u64>,
    /// bcache, traces without completions: each task's queue depth (fio's `iodepth`).
    #[serde(default)]
    pub queue_depth: Option<u32>,
    /// bcache: the cache device's latency for one synchronous metadata write (the allocator's
    /// prio and journal writes); `None`: buckets are always ready.
    #[serde(default)]
    pub cache_write_latency_nanos: Option<u64>,
    /// bcache: `writeback_percent` (default 10; 0: write back at the maximum rate).
    #[serde(default)]
    pub writeback_percent: Option<u64>,
    /// bcache: how long after the last bio the counters are read; background writeback runs
    /// on until then (`None`: they are read at the last bio).
    #[serde(default)]
    pub idle_after_nanos: Option<u64>,
    /// bcache: how long before the first bio the backing device was attached (its writeback
    /// rate updates run every 5 s from then).
    #[serde(default)]
    pub attached_before_nanos: Option<u64>,
    /// bcache: `congested_read_threshold_us` (default 2,000; 0 turns reads' congestion
    /// accounting off).
    #[serde(default)]
    pub congested_read_threshold_us: Option<u64>,
    /// bcache: `congested_write_threshold_us` (default 20,000).
    #[serde(default)]
    pub congested_write_threshold_us: Option<u64>,
    /// bcache: the cache device's latency for a data read (`None`: below the read threshold,
    /// so reads never congest the set).
    #[serde(default)]
    pub cache_read_latency_nanos: Option<u64>,
    /// dm-cache: the cache block size.
    #[serde(default)]
    pub block_bytes: Option<u64>,
    /// dm-cache: the origin's size; `None`: the highest byte the trace touches, rounded up to
    /// a block (a first pass).
    #[serde(default)]
    pub origin_bytes: Option<u64>,
    /// dm-cache: how long before the first bio the cache was created (smq's first tick).
    #[serde(default)]
    pub created_before_nanos: Option<u64>,
    /// dm-cache: a bio's latency where the trace has none.
    #[serde(default)]
    pub bio_latency_nanos: Option<u64>,
    /// dm-cache: how long one promotion, demotion or writeback takes (`None`: promotions follow
    /// the kernel's sequence from the trace's bio latencies, the others complete at once).
    #[serde(default)]
    pub migration_nanos: Option<u64>,
}

/// The generic simulator's settings, which a kernel model does not take: it has its own
/// policy and admission, counts from the cache's creation as the kernel does, and simulates one
/// cache. `given` names the ones a host received (its own spelling, e.g. `--policy`); any is an
/// error that says where they do apply.
pub fn refuse_generic_settings(model: KernelModel, given: &[&str]) -> Result<(), JobError> {
    if given.is_empty() {
        return Ok(());
    }
    let approx = model.approximation();
    Err(JobError::invalid(
        format!("preset {}", model.name()),
        format!(
            "is the kernel's own model (one cache, its own policy and admission, counted from \
             creation as the kernel counts) and has no {}; the generic approximation \
             --preset {approx} takes them",
            given.join(", ")
        ),
    ))
}

/// The kernel models' own settings, which the generic simulator does not take: `given` names
/// the ones a host received (its own spelling, e.g. `--seq-cutoff`); any is an error that says
/// which presets take them, instead of being ignored.
pub fn refuse_model_settings(given: &[&str]) -> Result<(), JobError> {
    if given.is_empty() {
        return Ok(());
    }
    Err(JobError::invalid(
        given.join(", "),
        "apply to the kernels' own models only (--preset bcache or --preset dm-cache); the \
         generic simulator and its presets have no such setting",
    ))
}

/// What the congestion bypass assumed, for the assumptions list.
fn congestion_assumption(c: &BcacheConfig, s: &crate::cache::bcache::BcacheStats) -> String {
    if c.congested_read_threshold_us == 0 && c.congested_write_threshold_us == 0 {
        return "Congestion bypass off (both congested thresholds 0).".to_owned();
    }
    let latency = |configured: Option<u64>| match configured {
        Some(l) => crate::units::duration(l),
        None => "less than the threshold (none given)".to_owned(),
    };
    format!(
        "Congestion bypass with congested_read_threshold_us {} and congested_write_threshold_us {}: cache-device reads take {}, writes {}; {} cache-device bios were slower than their threshold and {} bios bypassed as congested.",
        c.congested_read_threshold_us,
        c.congested_write_threshold_us,
        latency(c.cache_read_nanos),
        latency(c.metadata_write_nanos),
        crate::units::count(s.congested_ios),
        crate::units::count(s.bypassed_congested),
    )
}

/// The footprint unit of a model's cache size given as a percentage.
fn footprint_unit_bytes(request: &ModelRequest) -> u64 {
    match request.model {
        KernelModel::Bcache => 4096,
        KernelModel::DmCacheSmq => request.block_bytes(),
    }
}

impl ModelRequest {
    /// The model with every setting at its default.
    pub fn new(model: KernelModel, cache_size: CacheSize) -> ModelRequest {
        ModelRequest {
            model,
            cache_size,
            mode: None,
            window_nanos: None,
            sequential_cutoff_bytes: None,
            bucket_bytes: None,
            queue_depth: None,
            cache_write_latency_nanos: None,
            writeback_percent: None,
            idle_after_nanos: None,
            attached_before_nanos: None,
            congested_read_threshold_us: None,
            congested_write_threshold_us: None,
            cache_read_latency_nanos: None,
            block_bytes: None,
            origin_bytes: None,
            created_before_nanos: None,
            bio_latency_nanos: None,
            migration_nanos: None,
        }
    }

    /// The cache's bytes: the size given, or its share of `footprint_units` units of
    /// [`footprint_unit_bytes`] (whole units, at least one).
    fn cache_bytes(&self, footprint_units: Option<u64>) -> Result<u64, JobError> {
        let unit = footprint_unit_bytes(self);
        match self.cache_size {
            CacheSize::Bytes(b) => Ok(b),
            CacheSize::FootprintPercent(_) => {
                Ok(self.cache_size.lines(unit, footprint_units)? * unit)
            }
        }
    }

    /// The names a first pass cannot change, checked before it runs.
    fn check_names(&self) -> Result<(), JobError> {
        match self.model {
            KernelModel::Bcache => self.bcache_mode().map(drop),
            KernelModel::DmCacheSmq => self.dm_cache_mode().map(drop),
        }
    }

    fn bcache_mode(&self) -> Result<Option<BcacheMode>, JobError> {
        self.mode
            .as_ref()
            .map(|m| {
                BcacheMode::from_name(m).ok_or_else(|| JobError::UnknownName {
                    what: "bcache mode",
                    name: m.clone(),
                    expected: "wt, wb, wa, none".into(),
                })
            })
            .transpose()
    }

    fn dm_cache_mode(&self) -> Result<Option<DmCacheMode>, JobError> {
        self.mode
            .as_ref()
            .map(|m| {
                DmCacheMode::from_name(m).ok_or_else(|| JobError::UnknownName {
                    what: "dm-cache mode",
                    name: m.clone(),
                    expected: "wb, wt".into(),
                })
            })
            .transpose()
    }

    /// The settings given that the model does not have.
    fn foreign_settings(&self) -> Vec<&'static str> {
        let bcache = [
            (
                "sequential_cutoff_bytes",
                self.sequential_cutoff_bytes.is_some(),
            ),
            ("bucket_bytes", self.bucket_bytes.is_some()),
            ("queue_depth", self.queue_depth.is_some()),
            (
                "cache_write_latency_nanos",
                self.cache_write_latency_nanos.is_some(),
            ),
            ("writeback_percent", self.writeback_percent.is_some()),
            ("idle_after_nanos", self.idle_after_nanos.is_some()),
            (
                "attached_before_nanos",
                self.attached_before_nanos.is_some(),
            ),
            (
                "congested_read_threshold_us",
                self.congested_read_threshold_us.is_some(),
            ),
            (
                "congested_write_threshold_us",
                self.congested_write_threshold_us.is_some(),
            ),
            (
                "cache_read_latency_nanos",
                self.cache_read_latency_nanos.is_some(),
            ),
        ];
        let dmcache = [
            ("block_bytes", self.block_bytes.is_some()),
            ("origin_bytes", self.origin_bytes.is_some()),
            ("created_before_nanos", self.created_before_nanos.is_some()),
            ("bio_latency_nanos", self.bio_latency_nanos.is_some()),
            ("migration_nanos", self.migration_nanos.is_some()),
        ];
        let other: &[(&'static str, bool)] = match self.model {
            KernelModel::Bcache => &dmcache,
            KernelModel::DmCacheSmq => &bcache,
        };
        other
            .iter()
            .filter(|(_, set)| *set)
            .map(|(n, _)| *n)
            .collect()
    }

    /// bcache's configuration for a cache of `cache_bytes`, checked.
    pub fn bcache_config(&self, cache_bytes: u64) -> Result<BcacheConfig, JobError> {
        let mut c = BcacheConfig::new(cache_bytes);
        if let Some(m) = self.bcache_mode()? {
            c.mode = m;
        }
        if let Some(b) = self.sequential_cutoff_bytes {
            c.sequential_cutoff_bytes = b;
        }
        if let Some(b) = self.bucket_bytes {
            c.bucket_bytes = b;
        }
        c.queue_depth = self.queue_depth;
        c.metadata_write_nanos = self.cache_write_latency_nanos;
        if let Some(p) = self.writeback_percent {
            c.writeback_percent = p;
        }
        c.attached_before_nanos = self.attached_before_nanos;
        if let Some(t) = self.congested_read_threshold_us {
            c.congested_read_threshold_us = t;
        }
        if let Some(t) = self.congested_write_threshold_us {
            c.congested_write_threshold_us = t;
        }
        c.cache_read_nanos = self.cache_read_latency_nanos;
        c.validate().map_err(JobError::Bcache)?;
        Ok(c)
    }

    /// dm-cache's configuration for a cache of `cache_bytes` and an origin of `origin_bytes`,
    /// checked.
    pub fn dm_cache_config(
        &self,
        cache_bytes: u64,
        origin_bytes: u64,
    ) -> Result<DmCacheConfig, JobError> {
        let mut c = DmCacheConfig::new(self.block_bytes(), cache_bytes, origin_bytes);
        if let Some(m) = self.dm_cache_mode()? {
            c.mode = m;
        }
        if let Some(t) = self.created_before_nanos {
            c.created_before_nanos = t;
        }
        if let Some(t) = self.bio_latency_nanos {
            c.bio_latency_nanos = t;
        }
        if let Some(t) = self.migration_nanos {
            c.migration_nanos = Some(t);
        }
        c.validate().map_err(JobError::DmCache)?;
        Ok(c)
    }

    fn block_bytes(&self) -> u64 {
        self.block_bytes.unwrap_or(dmcache::DEFAULT_BLOCK_BYTES)
    }
}

/// A model's counters, tagged with its name: `{"model": "bcache-kernel", "result": {…}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", content = "result")]
pub enum ModelOutput {
    #[serde(rename = "bcache-kernel")]
    Bcache(BcacheResult),
    #[serde(rename = "dm-cache-smq")]
    DmCacheSmq(DmCacheResult),
}

impl ModelOutput {
    /// The counters as the kernel prints them (`stats_total/`, `dmsetup status`), for people.
    pub fn text(&self) -> String {
        match self {
            ModelOutput::Bcache(r) => bcache::stats_text(r),
            ModelOutput::DmCacheSmq(r) => dmcache::status_text(r),
        }
    }
}

/// What `blocksight simulate --preset bcache-kernel|dm-cache-smq --json` prints: the request,
/// the model's name and its counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelResult {
    pub request: ModelRequest,
    /// The footprint a cache size given as a percentage was taken of, in bytes (whole units of
    /// the model's block), and whether it was counted exactly (large traces are sampled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint: Option<ModelFootprint>,
    #[serde(flatten)]
    pub output: ModelOutput,
    /// What the run assumed, in words: which model, the origin and where its size came from,
    /// the defaults taken (every host shows these beside the counters).
    #[serde(default)]
    pub assumptions: Vec<String>,
}

impl ModelResult {
    /// The counters as the kernel prints them, after the footprint a percentage was taken of.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if let Some(f) = self.footprint {
            out.push_str(&format!(
                "footprint       {} ({} of {}){}; cache {} of it\n",
                crate::units::bytes(f.bytes),
                f.bytes / f.unit_bytes.max(1),
                crate::units::bytes(f.unit_bytes),
                if f.exact {
                    ""
                } else {
                    ", estimated by sampling"
                },
                self.request.cache_size.label(),
            ));
        }
        out.push_str(&self.output.text());
        if !self.assumptions.is_empty() {
            out.push_str("\nassumptions\n");
            for a in &self.assumptions {
                out.push_str(&format!("  - {a}\n"));
            }
        }
        out
    }
}

/// A kernel model's answer as a page shows it: the hit-ratio cards, the counters under the
/// kernel's own names with their meaning, and the assumptions. Built in the job layer
/// ([`ModelResult::view`]) so that a host that only displays it (the web app's page, while its
/// worker runs the job) need not decode the whole result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelView {
    pub request: ModelRequest,
    pub cards: Vec<ModelCard>,
    pub counters: Vec<ModelCounter>,
    pub assumptions: Vec<String>,
}

/// A card: a hit ratio (`ratio`; `None` when undefined) or a value in words (`value`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelCard {
    pub id: String,
    pub label: String,
    pub ratio: Option<f64>,
    pub value: Option<String>,
    pub detail: String,
}

/// A counter as the kernel names it, its value and what it counts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelCounter {
    pub name: String,
    pub value: u64,
    pub meaning: String,
}

impl ModelResult {
    /// The page's view of this result (see [`ModelView`]).
    pub fn view(&self) -> ModelView {
        use crate::units::{bytes, count};
        let ratio = |id: &str, label: &str, r: Option<f64>, detail: String| ModelCard {
            id: id.to_owned(),
            label: label.to_owned(),
            ratio: r,
            value: None,
            detail,
        };
        let counter = |name: &str, value: u64, meaning: String| ModelCounter {
            name: name.to_owned(),
            value,
            meaning,
        };
        let (cards, counters) = match &self.output {
            ModelOutput::DmCacheSmq(d) => {
                let s = &d.status;
                (
                    vec![
                        ratio("model-read-hit-ratio", "Read hit ratio", s.read_hit_ratio(),
                            format!("{} hits, {} misses (bio pieces)", count(s.read_hits), count(s.read_misses))),
                        ratio("model-write-hit-ratio", "Write hit ratio", s.write_hit_ratio(),
                            format!("{} hits, {} misses", count(s.write_hits), count(s.write_misses))),
                        ModelCard {
                            id: "model-origin-io".to_owned(),
                            label: "Origin I/O".to_owned(),
                            ratio: None,
                            value: Some(format!("{} reads", count(d.origin.read_ops))),
                            detail: format!("{} writes; {} and {}", count(d.origin.write_ops),
                                bytes(d.origin.read_bytes), bytes(d.origin.write_bytes)),
                        },
                    ],
                    vec![
                        counter("read_hits", s.read_hits, "read bio pieces served by the cache".into()),
                        counter("read_misses", s.read_misses, "read bio pieces sent to the origin".into()),
                        counter("write_hits", s.write_hits, "write bio pieces to cached blocks".into()),
                        counter("write_misses", s.write_misses, "write bio pieces sent to the origin".into()),
                        counter("demotions", s.demotions, "blocks moved out of the cache".into()),
                        counter("promotions", s.promotions, format!("blocks copied into the cache ({} whole-block writes promoted with their bio)", count(s.overwrite_promotions))),
                        counter("dirty", s.dirty, "dirty blocks at the end of the trace".into()),
                        counter("writebacks", s.writebacks, "dirty blocks written back to the origin".into()),
                        counter("resident_blocks", s.resident_blocks, format!("of {} cache blocks in use at the end", count(d.cache_blocks))),
                        counter("cache_device_reads", d.cache_device.read_ops, bytes(d.cache_device.read_bytes)),
                        counter("cache_device_writes", d.cache_device.write_ops, bytes(d.cache_device.write_bytes)),
                    ],
                )
            }
            ModelOutput::Bcache(b) => {
                let s = &b.stats;
                (
                    vec![
                        ratio("model-cache-hit-ratio", "cache_hit_ratio", s.cache_hit_ratio(),
                            format!("{} hits, {} misses (reads, bypassed ones excluded)", count(s.cache_hits), count(s.cache_misses))),
                        ratio("model-read-hit-ratio", "Reads served by the cache", s.read_hit_ratio(),
                            "bypassed reads included".into()),
                        ratio("model-bypass-ratio", "Reads bypassed", s.read_bypass_ratio(),
                            format!("{} bypassed in all (reads and writes)", bytes(s.bypassed_bytes))),
                    ],
                    vec![
                        counter("cache_hits", s.cache_hits, "reads wholly cached".into()),
                        counter("cache_misses", s.cache_misses, "reads not wholly cached".into()),
                        counter("cache_bypass_hits", s.cache_bypass_hits, "bypassed reads served from the cache".into()),
                        counter("cache_bypass_misses", s.cache_bypass_misses, "bypassed reads from the backing device".into()),
                        counter("cache_miss_collisions", s.cache_miss_collisions, "read-miss insertions dropped by a racing write".into()),
                        counter("bypassed", s.bypassed_bytes, format!("bytes bypassed, reads and writes ({})", bytes(s.bypassed_bytes))),
                        counter("writes", s.writes, format!("{} inserted dirty, {} clean, {} bypassed", count(s.writes_dirty), count(s.writes_clean), count(s.writes_bypassed))),
                        counter("dirty_data", s.dirty_bytes, format!("dirty bytes at the end ({})", bytes(s.dirty_bytes))),
                        counter("writeback", s.writeback_bytes, format!("bytes background writeback wrote to the backing device ({}, {} keys)", bytes(s.writeback_bytes), count(s.writeback_keys))),
                        counter("cached_data", s.cached_bytes, format!("live cached bytes at the end ({}), in {} buckets", bytes(s.cached_bytes), count(b.nbuckets))),
                    ],
                )
            }
        };
        ModelView {
            request: self.request.clone(),
            cards,
            counters,
            assumptions: self.assumptions.clone(),
        }
    }
}

/// See [`ModelResult::footprint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelFootprint {
    pub bytes: u64,
    pub unit_bytes: u64,
    pub exact: bool,
}

enum Running {
    /// The first pass: the highest byte touched (dm-cache's origin) and, for a size given as a
    /// percentage, the footprint.
    First {
        end_bytes: u64,
        footprint: Option<Box<LineFootprint>>,
    },
    Bcache(Box<BcacheModel>),
    DmCache(Box<DmCacheModel>),
}

/// The job: one or two passes (see the module documentation).
pub struct Model {
    request: ModelRequest,
    window: WindowFilter,
    running: Running,
    passes: usize,
    footprint: Option<ModelFootprint>,
    /// Where dm-cache's origin size came from, once known.
    origin: Option<Origin>,
    /// Most units the model may hold ([`Model::with_memory_limit`]).
    limit_units: Option<u64>,
}

impl Model {
    pub fn new(request: ModelRequest) -> Result<Model, JobError> {
        Model::with_memory_limit(request, None)
    }

    /// The job with a host's bound on the model's memory (the browser's tab): at most
    /// `limit_units` dm-cache cache blocks, or bcache buckets and extents in its index. A
    /// cache over the bound stops with [`JobError::Memory`] before it is built (dm-cache, and
    /// bcache's buckets), or, for bcache's index, which grows with what it caches, when
    /// [`Model::check_memory`] finds it over (a host asks between chunks). `None`: no bound,
    /// [`Model::new`]. Within the bound the result is [`Model::new`]'s.
    pub fn with_memory_limit(
        request: ModelRequest,
        limit_units: Option<u64>,
    ) -> Result<Model, JobError> {
        let foreign = request.foreign_settings();
        if !foreign.is_empty() {
            return Err(JobError::invalid(
                format!("preset {}", request.model.name()),
                format!("has no setting {}", foreign.join(", ")),
            ));
        }
        let percent = request.cache_size.needs_footprint();
        let needs_origin =
            request.model == KernelModel::DmCacheSmq && request.origin_bytes.is_none();
        let (running, passes, origin) = if percent || needs_origin {
            // Check everything the first pass does not decide before it runs.
            request.check_names()?;
            let footprint =
                percent.then(|| Box::new(LineFootprint::new(footprint_unit_bytes(&request))));
            (
                Running::First {
                    end_bytes: 0,
                    footprint,
                },
                2,
                None,
            )
        } else {
            let cache_bytes = request.cache_bytes(None)?;
            let origin = request.origin_bytes.map(|b| Origin {
                bytes: b,
                source: OriginSource::Given,
            });
            (
                model(
                    &request,
                    cache_bytes,
                    request.origin_bytes.unwrap_or(0),
                    limit_units,
                )?,
                1,
                origin,
            )
        };
        Ok(Model {
            window: WindowFilter::new(request.window_nanos),
            request,
            running,
            passes,
            footprint: None,
            origin,
            limit_units,
        })
    }

    /// [`JobError::Memory`] when bcache's index holds more extents than the host's bound
    /// ([`Model::with_memory_limit`]); a host asks between chunks of the file.
    pub fn check_memory(&self) -> Result<(), JobError> {
        let (Some(limit), Running::Bcache(m)) = (self.limit_units, &self.running) else {
            return Ok(());
        };
        let extents = m.extents();
        if extents <= limit {
            return Ok(());
        }
        Err(JobError::Memory(format!(
            "The bcache model's index came to hold more than {} extents: more than this run may simulate. Choose a smaller cache, or run `blocksight simulate --preset bcache` on the command line, which has no such limit.",
            crate::units::count(limit)
        )))
    }
}

/// dm-cache's origin size and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    pub bytes: u64,
    pub source: OriginSource,
}

/// Where dm-cache's origin size came from ([`dm_cache_origin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginSource {
    /// The request gave it (`--origin-size`).
    Given,
    /// The size of the trace's only device, as recorded (`blocksight record` records it).
    Recorded,
    /// The highest byte the trace touches, rounded up to a cache block.
    Touched,
}

/// dm-cache's origin when the request does not give it: the device's size when the trace
/// records it (`blocksight record` does) for its only device, else the highest byte the trace
/// touches, rounded up to a cache block. The size matters beyond the blocks touched: smq's
/// hotspot blocks are the largest power-of-two multiple of the cache block (up to 16) of which
/// its hotspot table covers the origin, so 1 GiB and the 1,023 MiB a random job happens to
/// reach give hotspot blocks of 1 MiB and 512 KiB on a 2,048-block cache.
pub fn dm_cache_origin(header: &TraceHeader, end_bytes: u64, block_bytes: u64) -> u64 {
    dm_cache_origin_from(header, end_bytes, block_bytes).bytes
}

/// [`dm_cache_origin`] with the rule that gave it.
pub fn dm_cache_origin_from(header: &TraceHeader, end_bytes: u64, block_bytes: u64) -> Origin {
    let block = block_bytes.max(1);
    let touched = Origin {
        bytes: end_bytes.div_ceil(block) * block,
        source: OriginSource::Touched,
    };
    match header.devices.as_slice() {
        [only] => match only.size_bytes {
            Some(s) if s >= touched.bytes => Origin {
                bytes: s,
                source: OriginSource::Recorded,
            },
            _ => touched,
        },
        _ => touched,
    }
}

/// The model itself; `origin_bytes` is dm-cache's (bcache has none). Over `limit_units` (a
/// host's bound on memory) it is not built.
fn model(
    request: &ModelRequest,
    cache_bytes: u64,
    origin_bytes: u64,
    limit_units: Option<u64>,
) -> Result<Running, JobError> {
    let over = |units: u64, what: &str, flag: &str| -> Result<(), JobError> {
        match limit_units {
            Some(limit) if units > limit => Err(JobError::Memory(format!(
                "This {} cache would hold {} {what}: more than this run may simulate ({}). Choose a {flag} or a smaller cache, or run `blocksight simulate --preset {}` on the command line, which has no such limit.",
                request.model.product_name(),
                crate::units::count(units),
                crate::units::count(limit),
                request.model.product_name(),
            ))),
            _ => Ok(()),
        }
    };
    Ok(match request.model {
        KernelModel::Bcache => {
            let config = request.bcache_config(cache_bytes)?;
            over(config.nbuckets(), "buckets", "larger bucket size")?;
            Running::Bcache(Box::new(
                BcacheModel::new(&config).map_err(JobError::Bcache)?,
            ))
        }
        KernelModel::DmCacheSmq => {
            let config = request.dm_cache_config(cache_bytes, origin_bytes)?;
            over(config.cache_blocks(), "cache blocks", "larger block size")?;
            Running::DmCache(Box::new(
                DmCacheModel::new(&config).map_err(JobError::DmCache)?,
            ))
        }
    })
}

impl Model {
    /// What the run assumed, in words, from the configuration the model ran with.
    fn assumptions(&self, output: &ModelOutput) -> Vec<String> {
        let mut out = Vec::new();
        match output {
            ModelOutput::DmCacheSmq(r) => {
                let c = &r.config;
                out.push(format!(
                    "The model of Linux dm-cache with the smq policy as Linux 6.1 behaves (dm-cache-smq, docs/cache.md): {} cache blocks of {}, {}; counted per bio piece as `dmsetup status` counts, from the cache's creation (cold).",
                    crate::units::count(r.cache_blocks),
                    crate::units::bytes(c.block_bytes),
                    match c.mode {
                        crate::cache::dmcache::DmCacheMode::WriteBack => "writeback",
                        crate::cache::dmcache::DmCacheMode::WriteThrough => "writethrough",
                    }
                ));
                let origin = crate::units::bytes(c.origin_bytes);
                out.push(match self.origin.map(|o| o.source) {
                    Some(OriginSource::Given) => format!("Origin {origin}, as given."),
                    Some(OriginSource::Recorded) => format!(
                        "Origin {origin}: the size of the trace's device, as recorded."
                    ),
                    Some(OriginSource::Touched) | None => format!(
                        "Origin {origin}: the highest byte the trace touches, rounded up to a cache block (the trace records no device size). It sets smq's hotspot geometry; give the origin's size when you know it."
                    ),
                });
                out.push(format!(
                    "smq's hotspot queue: {} blocks of {}.",
                    crate::units::count(r.hotspot_blocks),
                    crate::units::bytes(r.hotspot_block_bytes)
                ));
                out.push(format!(
                    "The cache was created {} (its first policy tick); a bio without a completion in the trace takes {}; {}.",
                    match c.created_before_nanos {
                        0 => "at the first bio".to_owned(),
                        t => format!("{} before the first bio", crate::units::duration(t)),
                    },
                    crate::units::duration(c.bio_latency_nanos),
                    match c.migration_nanos {
                        Some(t) => format!(
                            "every promotion, demotion and writeback takes {}",
                            crate::units::duration(t)
                        ),
                        None => "a promotion takes the kernel's sequence from the trace's own bio latencies, demotions and writebacks complete at once".to_owned(),
                    }
                ));
            }
            ModelOutput::Bcache(r) => {
                let c = &r.config;
                out.push(format!(
                    "The model of a Linux bcache device as Linux 6.1 behaves (bcache-kernel, docs/cache.md): a cache of {} in {} buckets of {}, {}, sequential_cutoff {}; `stats_total` counts reads per bio, from the cache's creation (cold).",
                    crate::units::bytes(c.cache_bytes),
                    crate::units::count(r.nbuckets),
                    crate::units::bytes(c.bucket_bytes),
                    match c.mode {
                        BcacheMode::WriteThrough => "writethrough",
                        BcacheMode::WriteBack => "writeback",
                        BcacheMode::WriteAround => "writearound",
                        BcacheMode::None => "cache_mode none",
                    },
                    if c.sequential_cutoff_bytes == 0 {
                        "off".to_owned()
                    } else {
                        crate::units::bytes(c.sequential_cutoff_bytes)
                    }
                ));
                out.push("Sequential streams are told apart per task by the trace's pid; a trace without pids is one task.".to_owned());
                out.push(match c.queue_depth {
                    Some(qd) => format!("A read miss is inserted when its backing read completes: after the task's next {qd} bios where the trace has no completions."),
                    None => "A read miss is inserted when its backing read completes (the bio's latency in the trace; at once where it has none).".to_owned(),
                });
                if c.mode == BcacheMode::WriteBack {
                    out.push(format!(
                        "Background writeback towards writeback_percent {}% of the cache (its rate updated every 5 s {}); the counters are read {}.",
                        c.writeback_percent,
                        match c.attached_before_nanos {
                            Some(t) => format!(
                                "from the device's attachment {} before the first bio",
                                crate::units::duration(t)
                            ),
                            None => "from 5 s after the first bio".to_owned(),
                        },
                        match self.request.idle_after_nanos {
                            Some(t) => format!(
                                "{} after the last bio, writeback running meanwhile",
                                crate::units::duration(t)
                            ),
                            None => "at the last bio".to_owned(),
                        }
                    ));
                }
                out.push(congestion_assumption(c, &r.stats));
                out.push("Not modelled: the backing device's speed (a writeback pass takes no time), moving GC, replacement policies other than lru.".to_owned());
            }
        }
        if let Some(f) = self.footprint {
            out.push(format!(
                "Cache size {} of the footprint, {} in blocks of {}{}.",
                self.request.cache_size.label(),
                crate::units::bytes(f.bytes),
                crate::units::bytes(f.unit_bytes),
                if f.exact {
                    ""
                } else {
                    ", estimated by sampling"
                }
            ));
        }
        if let Some(w) = self.window.describe() {
            out.push(w);
        }
        out
    }
}

impl Job for Model {
    type Output = ModelResult;

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
        match &mut self.running {
            Running::First {
                end_bytes,
                footprint,
            } => {
                *end_bytes = (*end_bytes).max(e.end_bytes());
                if let Some(f) = footprint {
                    f.observe(e);
                }
            }
            Running::Bcache(m) => m.observe(e),
            Running::DmCache(m) => m.observe(e),
        }
    }

    fn end_pass(
        &mut self,
        header: &TraceHeader,
        _diagnostics: &Diagnostics,
    ) -> Result<(), JobError> {
        if let Running::First {
            end_bytes,
            footprint,
        } = &self.running
        {
            let units = footprint.as_ref().map(|f| {
                let (lines, exact) = f.lines();
                let unit_bytes = footprint_unit_bytes(&self.request);
                self.footprint = Some(ModelFootprint {
                    bytes: lines * unit_bytes,
                    unit_bytes,
                    exact,
                });
                lines
            });
            let cache_bytes = self.request.cache_bytes(units)?;
            let origin = match self.request.origin_bytes {
                Some(bytes) => Origin {
                    bytes,
                    source: OriginSource::Given,
                },
                None => dm_cache_origin_from(header, *end_bytes, self.request.block_bytes()),
            };
            self.running = model(&self.request, cache_bytes, origin.bytes, self.limit_units)?;
            if self.request.model == KernelModel::DmCacheSmq {
                self.origin = Some(origin);
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<ModelResult, JobError> {
        let running = std::mem::replace(
            &mut self.running,
            Running::First {
                end_bytes: 0,
                footprint: None,
            },
        );
        let output = match running {
            Running::First { .. } => {
                return Err(JobError::invalid(
                    self.request.model.name(),
                    "finished before the pass that measures the trace",
                ))
            }
            Running::Bcache(mut m) => {
                if let Some(idle) = self.request.idle_after_nanos {
                    m.idle_for(idle);
                }
                ModelOutput::Bcache(m.finish())
            }
            Running::DmCache(m) => ModelOutput::DmCacheSmq(m.finish()),
        };
        let assumptions = self.assumptions(&output);
        Ok(ModelResult {
            request: self.request,
            footprint: self.footprint,
            output,
            assumptions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::run_events;
    use crate::Op;

    const MIB: u64 = 1 << 20;

    fn ev(t_ms: u64, op: Op, offset_bytes: u64, len_bytes: u32) -> IoEvent {
        IoEvent {
            time_nanos: t_ms * 1_000_000,
            device: 0,
            offset_bytes,
            len_bytes,
            op,
            latency_nanos: Some(500_000),
            pid: Some(1),
        }
    }

    /// Random-ish 64 KiB reads over 64 MiB, read twice.
    fn trace() -> Vec<IoEvent> {
        let mut v = Vec::new();
        for round in 0..2u64 {
            for i in 0..1024u64 {
                let block = (i * 397) % 1024;
                v.push(ev(round * 2000 + i, Op::Read, block * 65536, 65536));
            }
        }
        v
    }

    #[test]
    fn the_job_is_the_model_fed_directly() {
        let events = trace();
        let request = ModelRequest::new(KernelModel::Bcache, CacheSize::Bytes(512 * MIB));
        let job = run_events(
            Model::new(request.clone()).expect("job"),
            &TraceHeader::default(),
            &events,
        )
        .expect("runs");
        let mut direct = BcacheModel::new(&BcacheConfig::new(512 * MIB)).expect("model");
        for e in &events {
            direct.observe(e);
        }
        assert_eq!(job.output, ModelOutput::Bcache(direct.finish()));
        assert_eq!(job.request, request);
    }

    #[test]
    fn dm_cache_measures_the_origin_in_a_first_pass() {
        let events = trace();
        let mut request = ModelRequest::new(KernelModel::DmCacheSmq, CacheSize::Bytes(8 * MIB));
        let job = Model::new(request.clone()).expect("job");
        assert_eq!(job.passes(), 2);
        let measured = run_events(job, &TraceHeader::default(), &events).expect("runs");
        // The trace touches exactly 64 MiB, a whole number of 64 KiB blocks.
        request.origin_bytes = Some(64 * MIB);
        let job = Model::new(request).expect("job");
        assert_eq!(job.passes(), 1);
        let given = run_events(job, &TraceHeader::default(), &events).expect("runs");
        assert_eq!(measured.output, given.output);
        let ModelOutput::DmCacheSmq(r) = &measured.output else {
            panic!("dm-cache's result");
        };
        assert_eq!(r.config.origin_bytes, 64 * MIB);
    }

    #[test]
    fn the_result_reads_as_the_cli_has_always_printed_it() {
        let r = run_events(
            Model::new(ModelRequest::new(
                KernelModel::Bcache,
                CacheSize::Bytes(512 * MIB),
            ))
            .expect("job"),
            &TraceHeader::default(),
            &trace(),
        )
        .expect("runs");
        let v = serde_json::to_value(&r).expect("serialises");
        assert_eq!(v["model"], "bcache-kernel");
        assert_eq!(v["request"]["model"], "bcache-kernel");
        assert_eq!(
            v["result"]["stats"]["cache_misses"].as_u64(),
            match &r.output {
                ModelOutput::Bcache(b) => Some(b.stats.cache_misses),
                ModelOutput::DmCacheSmq(_) => None,
            }
        );
        let back: ModelResult = serde_json::from_value(v).expect("reads back");
        assert_eq!(back, r);
    }

    /// A share of the footprint runs the model on the size it resolves to, found in a first
    /// pass (dm-cache's footprint in its blocks, bcache's in 4 KiB blocks).
    #[test]
    fn a_percentage_is_the_same_model_on_its_share_of_the_footprint() {
        let events = trace();
        for (model, percent, bytes, unit) in [
            (KernelModel::DmCacheSmq, 25.0, 16 * MIB, 65536),
            (KernelModel::Bcache, 100.0, 64 * MIB, 4096),
        ] {
            let mut by_share = ModelRequest::new(model, CacheSize::FootprintPercent(percent));
            if model == KernelModel::Bcache {
                by_share.bucket_bytes = Some(65536);
            }
            let job = Model::new(by_share.clone()).expect("job");
            assert_eq!(job.passes(), 2);
            let shared = run_events(job, &TraceHeader::default(), &events).expect("runs");
            assert_eq!(
                shared.footprint,
                Some(ModelFootprint {
                    bytes: 64 * MIB,
                    unit_bytes: unit,
                    exact: true
                })
            );
            let sized = ModelRequest {
                cache_size: CacheSize::Bytes(bytes),
                ..by_share
            };
            let direct = run_events(
                Model::new(sized).expect("job"),
                &TraceHeader::default(),
                &events,
            )
            .expect("runs");
            assert_eq!(shared.output, direct.output, "{model:?}");
            assert_eq!(direct.footprint, None);
        }
    }

    /// The origin is the recorded device's size when the trace has it, not the highest byte
    /// a random job happened to touch.
    #[test]
    fn the_origin_is_the_recorded_device_size_when_known() {
        let mut header = TraceHeader::default();
        assert_eq!(dm_cache_origin(&header, 1000, 65536), 65536);
        header.devices.push(crate::DeviceInfo::named("vda"));
        assert_eq!(dm_cache_origin(&header, 1000, 65536), 65536);
        header.devices[0].size_bytes = Some(1 << 30);
        assert_eq!(dm_cache_origin(&header, 1000, 65536), 1 << 30);
        // A size below what the trace touches is not believed.
        header.devices[0].size_bytes = Some(4096);
        assert_eq!(dm_cache_origin(&header, 100_000, 65536), 131_072);
        header.devices.push(crate::DeviceInfo::named("vdb"));
        assert_eq!(dm_cache_origin(&header, 1000, 65536), 65536);
        let events = trace();
        let mut sized = TraceHeader::default();
        sized.devices.push(crate::DeviceInfo {
            size_bytes: Some(256 * MIB),
            ..crate::DeviceInfo::named("vda")
        });
        let r = run_events(
            Model::new(ModelRequest::new(
                KernelModel::DmCacheSmq,
                CacheSize::Bytes(8 * MIB),
            ))
            .expect("job"),
            &sized,
            &events,
        )
        .expect("runs");
        let ModelOutput::DmCacheSmq(r) = r.output else {
            panic!("dm-cache's result");
        };
        assert_eq!(r.config.origin_bytes, 256 * MIB);
    }

    #[test]
    fn product_names_select_the_models_and_generic_settings_are_refused() {
        assert_eq!(
            KernelModel::from_preset("dm-cache"),
            Some(KernelModel::DmCacheSmq)
        );
        assert_eq!(
            KernelModel::from_preset("Bcache"),
            Some(KernelModel::Bcache)
        );
        assert_eq!(KernelModel::from_preset("dm-cache-approx"), None);
        assert_eq!(KernelModel::from_preset("opencas"), None);
        assert!(refuse_generic_settings(KernelModel::Bcache, &[]).is_ok());
        let e = refuse_generic_settings(KernelModel::DmCacheSmq, &["--policy", "--warmup"])
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("--policy, --warmup") && e.contains("dm-cache-approx"),
            "{e}"
        );
    }

    #[test]
    fn settings_are_checked_before_any_pass() {
        let mut r = ModelRequest::new(KernelModel::Bcache, CacheSize::FootprintPercent(10.0));
        r.mode = Some("wy".into());
        assert!(matches!(
            Model::new(r.clone()),
            Err(JobError::UnknownName {
                what: "bcache mode",
                ..
            })
        ));
        r.cache_size = CacheSize::Bytes(512 * MIB);
        r.mode = Some("wx".into());
        assert!(matches!(
            Model::new(r.clone()),
            Err(JobError::UnknownName {
                what: "bcache mode",
                ..
            })
        ));
        r.mode = None;
        r.origin_bytes = Some(MIB);
        assert!(Model::new(r.clone())
            .err()
            .is_some_and(|e| e.to_string().contains("origin_bytes")));
        let mut d = ModelRequest::new(KernelModel::DmCacheSmq, CacheSize::Bytes(8 * MIB));
        d.queue_depth = Some(4);
        assert!(Model::new(d)
            .err()
            .is_some_and(|e| e.to_string().contains("queue_depth")));
        assert_eq!(
            KernelModel::from_preset("DM_CACHE_SMQ"),
            Some(KernelModel::DmCacheSmq)
        );
    }

    /// The bundled sample (real pgbench, tracefs text, zstd), decoded from chunks of `chunk`
    /// bytes as a browser's slices arrive: `on(Some(event))` for each event, `on(None)` after
    /// each chunk's events; the header at the end.
    fn decode_sample(
        chunk: usize,
        on: &mut dyn FnMut(Option<&IoEvent>) -> Result<(), JobError>,
    ) -> Result<TraceHeader, JobError> {
        use crate::compress::Decompressing;
        use crate::decode::DecodeOptions;
        use crate::{Decoder, TraceFormat};
        const SAMPLE: &[u8] =
            include_bytes!("../../../../tests/data/sample/pgbench.tracefs.txt.zst");
        let mut d = Decompressing::new(
            TraceFormat::TracefsText
                .decoder(&DecodeOptions::default())
                .expect("decoder"),
        );
        for bytes in SAMPLE.chunks(chunk) {
            d.push(bytes);
            while let Some(e) = d.next_event().expect("the sample decodes") {
                on(Some(&e))?;
            }
            on(None)?;
        }
        d.finish();
        while let Some(e) = d.next_event().expect("the sample decodes") {
            on(Some(&e))?;
        }
        Ok(d.header().clone())
    }

    /// `job` fed the sample slice by slice, `check_memory` asked between slices, as the web
    /// app's worker runs it.
    fn run_in_chunks(mut job: Model, chunk: usize) -> Result<ModelResult, JobError> {
        for pass in 0..job.passes() {
            job.begin_pass(pass);
            let header = decode_sample(chunk, &mut |e| match e {
                Some(e) => {
                    job.observe(e);
                    Ok(())
                }
                None => job.check_memory(),
            })?;
            job.end_pass(&header, &Diagnostics::default())?;
        }
        job.finish()
    }

    /// The sample's events and header, decoded at once (what the CLI's read loop hands the
    /// job, in batches).
    fn sample() -> (Vec<IoEvent>, TraceHeader) {
        let mut events = Vec::new();
        let header = decode_sample(usize::MAX, &mut |e| {
            events.extend(e.copied());
            Ok(())
        })
        .expect("decodes");
        (events, header)
    }

    /// The web app's entry (the job with the tab's memory bound, fed slice by slice) gives the
    /// CLI's result (`Model::new` over the same events) on the real sample, for both models,
    /// sizes given and as a share of the footprint, and dm-cache's origin measured.
    #[test]
    fn issue_10_the_bounded_job_fed_in_chunks_is_the_cli_job_on_the_sample() {
        let (events, header) = sample();
        let mut wt = ModelRequest::new(KernelModel::DmCacheSmq, CacheSize::Bytes(64 * MIB));
        wt.mode = Some("wt".into());
        let mut wa = ModelRequest::new(KernelModel::Bcache, CacheSize::FootprintPercent(20.0));
        wa.mode = Some("wa".into());
        wa.sequential_cutoff_bytes = Some(MIB);
        wa.bucket_bytes = Some(65536);
        for request in [
            ModelRequest::new(KernelModel::DmCacheSmq, CacheSize::FootprintPercent(10.0)),
            wt,
            ModelRequest::new(KernelModel::Bcache, CacheSize::Bytes(1024 * MIB)),
            wa,
        ] {
            let cli = run_events(Model::new(request.clone()).expect("job"), &header, &events)
                .expect("runs");
            for chunk in [4096, 65_536 + 7] {
                let web = run_in_chunks(
                    Model::with_memory_limit(request.clone(), Some(4 << 20)).expect("job"),
                    chunk,
                )
                .expect("runs");
                assert_eq!(web, cli, "{request:?} in chunks of {chunk}");
            }
            assert!(!cli.assumptions.is_empty());
            match &cli.output {
                ModelOutput::DmCacheSmq(r) => {
                    assert!(r.status.read_hits > 0 && r.status.promotions > 0, "{r:?}")
                }
                ModelOutput::Bcache(r) => assert!(r.stats.cache_hits > 0, "{r:?}"),
            }
        }
    }

    /// Over the host's bound the model is not built: before any pass for a size given, after
    /// the first for a share of the footprint; within it the bound changes nothing.
    #[test]
    fn a_cache_over_the_hosts_memory_bound_stops_in_plain_words() {
        let events = trace();
        let request = ModelRequest::new(KernelModel::DmCacheSmq, CacheSize::Bytes(8 * MIB));
        let mut given = request.clone();
        given.origin_bytes = Some(64 * MIB);
        let e = Model::with_memory_limit(given.clone(), Some(100))
            .err()
            .expect("128 blocks over 100");
        assert!(matches!(e, JobError::Memory(_)), "{e}");
        assert!(e.to_string().contains("128 cache blocks"), "{e}");
        let job = Model::with_memory_limit(request.clone(), Some(100)).expect("first pass");
        let e = run_events(job, &TraceHeader::default(), &events).expect_err("over");
        assert!(matches!(e, JobError::Memory(_)), "{e}");
        let bounded = run_events(
            Model::with_memory_limit(request.clone(), Some(128)).expect("job"),
            &TraceHeader::default(),
            &events,
        )
        .expect("runs");
        let free = run_events(
            Model::new(request).expect("job"),
            &TraceHeader::default(),
            &events,
        )
        .expect("runs");
        assert_eq!(bounded, free);
        let bcache = ModelRequest::new(KernelModel::Bcache, CacheSize::Bytes(512 * MIB));
        let e = Model::with_memory_limit(bcache, Some(1000))
            .err()
            .expect("1,024 buckets over 1,000");
        assert!(e.to_string().contains("buckets"), "{e}");
    }

    /// The result says which model ran and where dm-cache's origin came from.
    /// The page's view carries the kernel's counters as the result has them, under the
    /// kernel's names, and the result's assumptions.
    #[test]
    fn the_view_shows_the_results_counters() {
        let events = trace();
        let bc = run_events(
            Model::new(ModelRequest {
                mode: Some("wb".into()),
                bucket_bytes: Some(16 << 10),
                ..ModelRequest::new(KernelModel::Bcache, CacheSize::Bytes(64 * MIB))
            })
            .expect("job"),
            &TraceHeader::default(),
            &events,
        )
        .expect("run");
        let view = bc.view();
        let ModelOutput::Bcache(b) = &bc.output else {
            panic!("bcache")
        };
        let value = |name: &str| {
            view.counters
                .iter()
                .find(|c| c.name == name)
                .map(|c| c.value)
                .unwrap_or_else(|| panic!("{name}"))
        };
        assert_eq!(value("cache_hits"), b.stats.cache_hits);
        assert_eq!(value("dirty_data"), b.stats.dirty_bytes);
        assert_eq!(value("writeback"), b.stats.writeback_bytes);
        assert_eq!(view.cards[0].ratio, b.stats.cache_hit_ratio());
        assert_eq!(
            (&view.request, &view.assumptions),
            (&bc.request, &bc.assumptions)
        );
        let dm = run_events(
            Model::new(ModelRequest::new(
                KernelModel::DmCacheSmq,
                CacheSize::Bytes(64 * MIB),
            ))
            .expect("job"),
            &TraceHeader::default(),
            &events,
        )
        .expect("run");
        let view = dm.view();
        let ModelOutput::DmCacheSmq(d) = &dm.output else {
            panic!("dm-cache")
        };
        let promotions = view.counters.iter().find(|c| c.name == "promotions");
        assert_eq!(promotions.map(|c| c.value), Some(d.status.promotions));
        assert_eq!(view.cards[0].ratio, d.status.read_hit_ratio());
    }

    #[test]
    fn the_assumptions_name_the_model_and_the_origins_source() {
        let events = trace();
        let request = ModelRequest::new(KernelModel::DmCacheSmq, CacheSize::Bytes(8 * MIB));
        let origin_line = |header: &TraceHeader, request: &ModelRequest| {
            let r = run_events(Model::new(request.clone()).expect("job"), header, &events)
                .expect("runs");
            assert!(r.assumptions[0].contains("smq"), "{:?}", r.assumptions);
            r.assumptions[1].clone()
        };
        let touched = origin_line(&TraceHeader::default(), &request);
        assert!(
            touched.starts_with("Origin 64.0 MiB: the highest byte"),
            "{touched}"
        );
        let mut sized = TraceHeader::default();
        sized.devices.push(crate::DeviceInfo {
            size_bytes: Some(256 * MIB),
            ..crate::DeviceInfo::named("vda")
        });
        let recorded = origin_line(&sized, &request);
        assert!(
            recorded.contains("256 MiB: the size of the trace's device"),
            "{recorded}"
        );
        let mut given = request;
        given.origin_bytes = Some(MIB << 10);
        assert_eq!(origin_line(&sized, &given), "Origin 1.0 GiB, as given.");
        let b = run_events(
            Model::new(ModelRequest::new(
                KernelModel::Bcache,
                CacheSize::Bytes(512 * MIB),
            ))
            .expect("job"),
            &TraceHeader::default(),
            &events,
        )
        .expect("runs");
        assert!(
            b.assumptions[0].contains("bcache-kernel"),
            "{:?}",
            b.assumptions
        );
    }
}
