//! The kernels' own caches as a job: `simulate --preset bcache-kernel` (the bcache model,
//! [`crate::cache::bcache`], counting what `stats_total/` counts) and `--preset dm-cache-smq`
//! (dm-cache with the smq policy, [`crate::cache::dmcache`], counting what `dmsetup status`
//! counts). These are not cells of the generic simulator: each is one model with its own
//! settings and its own counters, so it has its own request and result; the defaults of every
//! setting a host leaves out, and the parsing of its names, are here.
//!
//! dm-cache needs the origin's size (it sets smq's hotspot geometry); when the request does not
//! give it, a first pass finds the highest byte the trace touches.

use serde::{Deserialize, Serialize};

use crate::cache::bcache::{self, BcacheConfig, BcacheMode, BcacheModel, BcacheResult};
use crate::cache::dmcache::{self, DmCacheConfig, DmCacheMode, DmCacheModel, DmCacheResult};
use crate::job::{CacheSize, Job, JobError, WindowFilter, WindowNanos};
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

    /// The model a preset name selects, if it selects one (the generic presets do not).
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
            block_bytes: None,
            origin_bytes: None,
            created_before_nanos: None,
            bio_latency_nanos: None,
            migration_nanos: None,
        }
    }

    fn cache_bytes(&self) -> Result<u64, JobError> {
        match self.cache_size {
            CacheSize::Bytes(b) => Ok(b),
            CacheSize::FootprintPercent(_) => Err(JobError::invalid(
                format!("preset {}", self.model.name()),
                "takes the cache size as a size, not a percentage",
            )),
        }
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

    /// bcache's configuration, checked.
    pub fn bcache_config(&self) -> Result<BcacheConfig, JobError> {
        let mut c = BcacheConfig::new(self.cache_bytes()?);
        if let Some(m) = &self.mode {
            c.mode = BcacheMode::from_name(m).ok_or_else(|| JobError::UnknownName {
                what: "bcache mode",
                name: m.clone(),
                expected: "wt, wb, wa, none".into(),
            })?;
        }
        if let Some(b) = self.sequential_cutoff_bytes {
            c.sequential_cutoff_bytes = b;
        }
        if let Some(b) = self.bucket_bytes {
            c.bucket_bytes = b;
        }
        c.queue_depth = self.queue_depth;
        c.metadata_write_nanos = self.cache_write_latency_nanos;
        c.validate().map_err(JobError::Bcache)?;
        Ok(c)
    }

    /// dm-cache's configuration for an origin of `origin_bytes`, checked.
    pub fn dm_cache_config(&self, origin_bytes: u64) -> Result<DmCacheConfig, JobError> {
        let mut c = DmCacheConfig::new(self.block_bytes(), self.cache_bytes()?, origin_bytes);
        if let Some(m) = &self.mode {
            c.mode = DmCacheMode::from_name(m).ok_or_else(|| JobError::UnknownName {
                what: "dm-cache mode",
                name: m.clone(),
                expected: "wb, wt".into(),
            })?;
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
    #[serde(flatten)]
    pub output: ModelOutput,
}

enum Running {
    /// dm-cache's first pass: the highest byte touched.
    Origin(u64),
    Bcache(Box<BcacheModel>),
    DmCache(Box<DmCacheModel>),
}

/// The job: one or two passes (see the module documentation).
pub struct Model {
    request: ModelRequest,
    window: WindowFilter,
    running: Running,
    passes: usize,
}

impl Model {
    pub fn new(request: ModelRequest) -> Result<Model, JobError> {
        let foreign = request.foreign_settings();
        if !foreign.is_empty() {
            return Err(JobError::invalid(
                format!("preset {}", request.model.name()),
                format!("has no setting {}", foreign.join(", ")),
            ));
        }
        let (running, passes) = match request.model {
            KernelModel::Bcache => {
                let m = BcacheModel::new(&request.bcache_config()?).map_err(JobError::Bcache)?;
                (Running::Bcache(Box::new(m)), 1)
            }
            KernelModel::DmCacheSmq => match request.origin_bytes {
                Some(origin) => (dm_cache(&request, origin)?, 1),
                None => {
                    // Check everything the first pass does not decide before it runs.
                    request.cache_bytes()?;
                    (Running::Origin(0), 2)
                }
            },
        };
        Ok(Model {
            window: WindowFilter::new(request.window_nanos),
            request,
            running,
            passes,
        })
    }
}

fn dm_cache(request: &ModelRequest, origin_bytes: u64) -> Result<Running, JobError> {
    let m =
        DmCacheModel::new(&request.dm_cache_config(origin_bytes)?).map_err(JobError::DmCache)?;
    Ok(Running::DmCache(Box::new(m)))
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
            Running::Origin(end) => *end = (*end).max(e.end_bytes()),
            Running::Bcache(m) => m.observe(e),
            Running::DmCache(m) => m.observe(e),
        }
    }

    fn end_pass(
        &mut self,
        _header: &TraceHeader,
        _diagnostics: &Diagnostics,
    ) -> Result<(), JobError> {
        if let Running::Origin(end) = self.running {
            let block = self.request.block_bytes().max(1);
            self.running = dm_cache(&self.request, end.div_ceil(block) * block)?;
        }
        Ok(())
    }

    fn finish(self) -> Result<ModelResult, JobError> {
        let output = match self.running {
            Running::Origin(_) => {
                return Err(JobError::invalid(
                    "dm-cache",
                    "finished before the pass that measures the origin",
                ))
            }
            Running::Bcache(m) => ModelOutput::Bcache(m.finish()),
            Running::DmCache(m) => ModelOutput::DmCacheSmq(m.finish()),
        };
        Ok(ModelResult {
            request: self.request,
            output,
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

    #[test]
    fn settings_are_checked_before_any_pass() {
        let mut r = ModelRequest::new(KernelModel::Bcache, CacheSize::FootprintPercent(10.0));
        assert!(Model::new(r.clone())
            .err()
            .is_some_and(|e| e.to_string().contains("not a percentage")));
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
        assert_eq!(KernelModel::from_preset("bcache"), None);
    }
}
