//! `blocksight._native`: the Python face of the engine's jobs (PyO3). The Python package
//! (`python/blocksight/`) calls [`run`] with a job name, its options as JSON and the trace (paths,
//! read by `blocksight-host` exactly as the CLI reads them, or a source of column batches), and
//! gets the job's result back as the JSON the CLI's `--json` prints.
//!
//! Like the CLI, this crate only translates: options into the job's serde request (through the
//! engine's own parsers: `CacheParams::choose`, `CacheSize::parse`, `Sizes::parse`,
//! `parse_duration`), bytes into events, the result into JSON. No defaults or job logic here.

use analyzer_core::decode::order::Reorder;
use analyzer_core::job::load::{Load, LoadRequest, DEFAULT_DEVICE_ROWS};
use analyzer_core::job::mrc::{Mrc, MrcRequest, Sizes};
use analyzer_core::job::predict::md::{MdMembers, MdRequest};
use analyzer_core::job::predict::{
    ArrayParams, CacheDevicesParams, ControllerSettings, Predict, PredictRequest, SampleParams,
};
use analyzer_core::job::simulate::model::{
    refuse_generic_settings, refuse_model_settings, KernelModel, Model, ModelRequest,
};
use analyzer_core::job::simulate::{Simulate, SimulateRequest};
use analyzer_core::job::{parse_duration, CacheParams, CacheSize, Job};
use analyzer_core::merge::{hash_slice, Mergeable, Split};
use analyzer_core::units::parse_size;
use analyzer_core::{Diagnostics, IoEvent, Op, TraceHeader};
use anyhow::{anyhow, bail, Context};
use blocksight_host::input::{self, InputArgs};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use serde_json::{Map, Value};

/// A job's options (the CLI's flags in snake_case) and which of them the job's request read:
/// an option no request reads is refused ([`Options::refuse_unread`]), as the CLI refuses a
/// flag it does not have, instead of a result computed without it. Clones share the record.
#[derive(Clone, Debug, Default)]
struct Options {
    map: Map<String, Value>,
    read: std::rc::Rc<std::cell::RefCell<std::collections::BTreeSet<String>>>,
}

impl Options {
    fn get(&self, key: &str) -> Option<&Value> {
        self.read.borrow_mut().insert(key.to_owned());
        self.map.get(key)
    }

    fn insert(&mut self, key: &str, value: Value) {
        self.map.insert(key.to_owned(), value);
    }

    fn remove(&mut self, key: &str) {
        self.map.remove(key);
    }

    /// Fails naming every option given (not null) that nothing read: ones `kind` does not take.
    fn refuse_unread(&self, kind: &str) -> anyhow::Result<()> {
        let read = self.read.borrow();
        let unread: Vec<&str> = self
            .map
            .iter()
            .filter(|(k, v)| !v.is_null() && !read.contains(*k))
            .map(|(k, _)| k.as_str())
            .collect();
        if unread.is_empty() {
            return Ok(());
        }
        bail!(
            "{kind} does not take {} here ({}: the options are `blocksight {kind}`'s flags in snake_case, and with request= the request alone; docs/python.md)",
            unread.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", "),
            if unread.len() == 1 { "it was not used" } else { "they were not used" },
        )
    }
}

fn text<'a>(o: &'a Options, key: &str) -> anyhow::Result<Option<&'a str>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => bail!("{key}: expected a string, got {other}"),
    }
}

fn uint(o: &Options, key: &str) -> anyhow::Result<Option<u64>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .with_context(|| format!("{key}: expected a non-negative integer, got {v}")),
    }
}

fn float(o: &Options, key: &str) -> anyhow::Result<Option<f64>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .map(Some)
            .with_context(|| format!("{key}: expected a number, got {v}")),
    }
}

fn flag(o: &Options, key: &str) -> anyhow::Result<bool> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => bail!("{key}: expected true or false, got {v}"),
    }
}

/// A size as the CLI takes it: `4KiB`, or a number of bytes.
fn size(o: &Options, key: &str) -> anyhow::Result<Option<u64>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => parse_size(s).map(Some).map_err(|e| anyhow!("{key}: {e}")),
        Some(v) => uint(o, key).with_context(|| format!("{key}: {v}")),
    }
}

fn window(o: &Options) -> anyhow::Result<Option<(u64, u64)>> {
    let Some(text) = text(o, "window")? else {
        return Ok(None);
    };
    let (a, b) = text
        .split_once("..")
        .with_context(|| format!("window {text:?}: expected START..END, like 10s..70s"))?;
    let (start, end) = (parse_duration(a)?, parse_duration(b)?);
    if end <= start {
        bail!("window {text:?}: the end must be after the start");
    }
    Ok(Some((start, end)))
}

/// `request` given whole (the job's serde form, as a result echoes it), else built from the
/// CLI-like options.
fn given<T: serde::de::DeserializeOwned>(o: &Options) -> anyhow::Result<Option<T>> {
    match o.get("request") {
        None | Some(Value::Null) => Ok(None),
        Some(r) => Ok(Some(
            serde_json::from_value(r.clone()).context("request: not this job's request")?,
        )),
    }
}

fn cache_params(o: &Options, size_text: &str) -> anyhow::Result<CacheParams> {
    let sizes = CacheSize::parse_list(size_text).context("cache_size")?;
    Ok(CacheParams::choose(
        text(o, "preset")?,
        text(o, "policy")?,
        size(o, "line_size")?,
        text(o, "mode")?,
        text(o, "admission")?,
        sizes[0],
    )?)
}

/// `blocksight simulate`'s request from its options (the CLI's flags, snake_case).
fn simulate_request(o: &Options) -> anyhow::Result<SimulateRequest> {
    if let Some(r) = given(o)? {
        return Ok(r);
    }
    // The kernel models' own settings are refused here, as the CLI refuses them.
    let model_only: Vec<&str> = [
        "seq_cutoff",
        "bucket_size",
        "qd",
        "cache_write_latency",
        "writeback_percent",
        "idle_after",
        "attached_before",
        "congested_read_threshold_us",
        "congested_write_threshold_us",
        "cache_read_latency",
        "origin_size",
        "created_before",
        "bio_latency",
        "migration_time",
    ]
    .into_iter()
    .filter(|k| o.get(k).is_some_and(|v| !v.is_null()))
    .collect();
    refuse_model_settings(&model_only)?;
    let size_text =
        text(o, "cache_size")?.context("simulate needs cache_size (like 10% or 2GiB)")?;
    let sizes = CacheSize::parse_list(size_text).context("cache_size")?;
    let policies: Vec<String> = text(o, "policy")?
        .map(|p| {
            p.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut one = o.clone();
    if let Some(first) = policies.first() {
        one.insert("policy", Value::String(first.clone()));
    }
    let cache = cache_params(&one, size_text)?;
    Ok(SimulateRequest {
        policies: if policies.len() > 1 {
            policies
        } else {
            Vec::new()
        },
        sizes: if sizes.len() > 1 { sizes } else { Vec::new() },
        warmup_nanos: text(o, "warmup")?
            .map(parse_duration)
            .transpose()?
            .unwrap_or(0),
        time_bins: uint(o, "time_bins")?.map_or(100, |n| n as usize),
        window_nanos: window(o)?,
        ..SimulateRequest::new(cache)
    })
}

/// The kernel model a `simulate` call names (`preset="bcache"`, `"bcache-kernel"`,
/// `"dm-cache"`, `"dm-cache-smq"`, or a whole
/// `ModelRequest` given as `request`), if it names one.
fn kernel_model(o: &Options) -> anyhow::Result<Option<KernelModel>> {
    if let Some(r) = o.get("request").filter(|r| r.get("model").is_some()) {
        let request: ModelRequest =
            serde_json::from_value(r.clone()).context("request: not a kernel model's request")?;
        return Ok(Some(request.model));
    }
    Ok(text(o, "preset")?.and_then(KernelModel::from_preset))
}

fn duration(o: &Options, key: &str) -> anyhow::Result<Option<u64>> {
    text(o, key)?
        .map(parse_duration)
        .transpose()
        .with_context(|| key.to_string())
}

/// `blocksight simulate --preset bcache-kernel|dm-cache-smq`'s request: the options as given;
/// the job decides every default and refuses the other model's settings.
fn model_request(o: &Options, model: KernelModel) -> anyhow::Result<ModelRequest> {
    if let Some(r) = given(o)? {
        return Ok(r);
    }
    let size_text =
        text(o, "cache_size")?.context("a kernel model needs cache_size (like 2GiB or 10%)")?;
    let generic: Vec<&str> = ["policy", "admission", "warmup", "time_bins"]
        .into_iter()
        .filter(|k| o.get(k).is_some_and(|v| !v.is_null()))
        .collect();
    refuse_generic_settings(model, &generic)?;
    Ok(ModelRequest {
        cache_size: CacheSize::parse(size_text).context("cache_size")?,
        mode: text(o, "mode")?.map(str::to_string),
        window_nanos: window(o)?,
        sequential_cutoff_bytes: size(o, "seq_cutoff")?,
        bucket_bytes: size(o, "bucket_size")?,
        queue_depth: uint(o, "qd")?
            .map(u32::try_from)
            .transpose()
            .context("qd")?,
        cache_write_latency_nanos: duration(o, "cache_write_latency")?,
        writeback_percent: uint(o, "writeback_percent")?,
        idle_after_nanos: duration(o, "idle_after")?,
        attached_before_nanos: duration(o, "attached_before")?,
        congested_read_threshold_us: uint(o, "congested_read_threshold_us")?,
        congested_write_threshold_us: uint(o, "congested_write_threshold_us")?,
        cache_read_latency_nanos: duration(o, "cache_read_latency")?,
        block_bytes: size(o, "line_size")?,
        origin_bytes: size(o, "origin_size")?,
        created_before_nanos: duration(o, "created_before")?,
        bio_latency_nanos: duration(o, "bio_latency")?,
        migration_nanos: duration(o, "migration_time")?,
        ..ModelRequest::new(model, CacheSize::Bytes(0))
    })
}

/// `blocksight predict --md-members`'s request (`layout`, `disks`, `chunk`, `qd`,
/// `stripe_cache_size`, `group_thread_cnt`, `raid10_layout`, `window`).
fn md_request(o: &Options) -> anyhow::Result<MdRequest> {
    if let Some(r) = given(o)? {
        return Ok(r);
    }
    let layout = text(o, "layout")?
        .context("md_members needs layout raid0, raid1, raid10, raid5 or raid6")?;
    let disks = uint(o, "disks")?.context("md_members needs disks")?;
    Ok(MdRequest {
        stripe_cache_size: small(o, "stripe_cache_size")?,
        group_thread_cnt: small(o, "group_thread_cnt")?,
        gather_bios: small(o, "qd")?,
        safe_mode_delay_nanos: safe_mode_delay(o)?,
        raid10_layout: text(o, "raid10_layout")?.map(str::to_owned),
        window_nanos: window(o)?,
        ..MdRequest::new(
            layout,
            u32::try_from(disks).context("disks: too many")?,
            size(o, "chunk")?.unwrap_or(64 << 10),
        )
    })
}

/// Disk indices, as a list (`[0, 4]`) or as the CLI writes them (`"0,4"`).
fn disk_list(o: &Options, key: &str) -> anyhow::Result<Vec<u32>> {
    let bad = |v: &Value| anyhow!("{key}: expected disk indices like [0, 4] or \"0,4\", got {v}");
    match o.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => s
            .split(',')
            .map(|d| d.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad(&Value::String(s.clone()))),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_u64()
                    .and_then(|d| u32::try_from(d).ok())
                    .ok_or_else(|| bad(v))
            })
            .collect(),
        Some(v) => Err(bad(v)),
    }
}

/// A count that fits 32 bits.
fn small(o: &Options, key: &str) -> anyhow::Result<Option<u32>> {
    uint(o, key)?
        .map(u32::try_from)
        .transpose()
        .with_context(|| format!("{key}: too large"))
}

/// md's `safe_mode_delay`: `md_safe_mode_delay` as the CLI's `--md-safe-mode-delay` takes it
/// (`200ms`, `0`), or `safe_mode_delay_nanos`.
fn safe_mode_delay(o: &Options) -> anyhow::Result<Option<u64>> {
    match (
        duration(o, "md_safe_mode_delay")?,
        uint(o, "safe_mode_delay_nanos")?,
    ) {
        (Some(_), Some(_)) => bail!("give md_safe_mode_delay or safe_mode_delay_nanos, not both"),
        (a, b) => Ok(a.or(b)),
    }
}

fn mrc_request(o: &Options) -> anyhow::Result<MrcRequest> {
    if let Some(r) = given(o)? {
        return Ok(r);
    }
    let d = MrcRequest::new(text(o, "policy")?.unwrap_or("lru"));
    Ok(MrcRequest {
        method: text(o, "method")?.map(str::to_string),
        sizes: match text(o, "sizes")? {
            Some(s) => Sizes::parse(s).context("sizes")?,
            None => d.sizes.clone(),
        },
        line_bytes: size(o, "line_size")?.unwrap_or(d.line_bytes),
        rate: float(o, "rate")?,
        sample_lines: uint(o, "sample_lines")?.unwrap_or(d.sample_lines),
        minisim_rate: float(o, "minisim_rate")?.unwrap_or(d.minisim_rate),
        minisim_lines: uint(o, "minisim_lines")?.unwrap_or(d.minisim_lines),
        minisim_max_passes: float(o, "minisim_max_passes")?,
        window_nanos: window(o)?,
        ..d
    })
}

fn predict_request(o: &Options) -> anyhow::Result<PredictRequest> {
    if let Some(r) = given(o)? {
        return Ok(r);
    }
    // `array`: an array description file (docs/model.md), as `--array FILE`, instead of the
    // level, disks, disk, chunk, groups and failed disks.
    let shape = match text(o, "array")? {
        Some(path) => ArrayParams {
            spec_json: Some(
                std::fs::read_to_string(path)
                    .with_context(|| format!("array: cannot read {path}"))?,
            ),
            ..ArrayParams::default()
        },
        None => ArrayParams {
            level: text(o, "layout")?
                .context("predict needs layout (raid0, raid1, raid5, raid6, raid10 ...)")?
                .into(),
            disks: small(o, "disks")?.context("predict needs disks")?,
            disk: text(o, "disk")?
                .context("predict needs disk (sata-7k2, sas-10k, sas-15k, sata-ssd, nvme)")?
                .into(),
            chunk_bytes: size(o, "chunk")?.unwrap_or(64 << 10),
            groups: small(o, "groups")?,
            failed: disk_list(o, "failed")?,
            ..ArrayParams::default()
        },
    };
    let layout = ArrayParams {
        controller: ControllerSettings {
            preset: text(o, "controller")?.map(str::to_owned),
            cache_bytes: size(o, "controller_cache")?,
            read_ahead_bytes: size(o, "read_ahead")?,
            max_iops: float(o, "max_iops")?,
            max_bytes_per_sec: float(o, "max_mbps")?.map(|m| m * 1e6),
            parity_chunks_per_sec: float(o, "parity_rate")?,
            md_stripe_cache_size: small(o, "stripe_cache_size")?,
            md_group_thread_cnt: small(o, "group_thread_cnt")?,
            md_stripe_cost_nanos: duration(o, "md_stripe_cost")?.map(|n| n as f64),
            md_page_cost_nanos: duration(o, "md_page_cost")?.map(|n| n as f64),
            md_raid10_layout: text(o, "raid10_layout")?.map(str::to_owned),
            md_bitmap: text(o, "md_bitmap")?.map(str::to_owned),
            md_safe_mode_delay_nanos: safe_mode_delay(o)?,
            md_sync_speed_min_kib: small(o, "md_sync_speed_min")?,
            md_sync_speed_max_kib: small(o, "md_sync_speed_max")?,
        },
        rebuilding: flag(o, "rebuilding")?,
        ..shape
    };
    let cache = match text(o, "cache_size")? {
        Some(s) => {
            // `line_size` is `cache_line`'s other name, as `--line-size` is `--cache-line`'s.
            let given = |k: &str| o.get(k).filter(|v| !v.is_null()).cloned();
            let line = match (given("cache_line"), given("line_size")) {
                (Some(_), Some(_)) => bail!("give cache_line or line_size (one name), not both"),
                (a, b) => a.or(b),
            };
            let mut c = o.clone();
            match line {
                Some(line) => c.insert("line_size", line),
                None => c.remove("line_size"),
            }
            Some(cache_params(&c, s)?)
        }
        None => None,
    };
    let qd = uint(o, "qd")?.unwrap_or(1);
    if qd == 0 {
        bail!("qd 0: a closed-loop replay keeps at least 1 I/O outstanding");
    }
    let speed = float(o, "speed")?;
    // The cache's devices are read only with a cache, so that without one they are refused.
    let defaults = CacheDevicesParams::default();
    let cache_devices = if cache.is_some() {
        CacheDevicesParams {
            disk: text(o, "cache_disk")?.map_or(defaults.disk, str::to_owned),
            count: small(o, "cache_disks")?.unwrap_or(defaults.count),
        }
    } else {
        defaults
    };
    Ok(PredictRequest {
        speed: flag(o, "replay")?.then(|| speed.unwrap_or(1.0)),
        cache_devices,
        sample: text(o, "sample")?
            .map(str::parse::<SampleParams>)
            .transpose()
            .context("sample")?,
        ..PredictRequest::new(vec![layout], cache, qd as u32)
            .with_curve(flag(o, "curve")?)
            .with_window(window(o)?)
    })
}

fn load_request(kind: &str, o: &Options) -> anyhow::Result<LoadRequest> {
    if let Some(r) = given(o)? {
        return Ok(r);
    }
    let d = LoadRequest::new();
    Ok(LoadRequest {
        analysis: kind == "analyze",
        block_bytes: size(o, "line_size")?.unwrap_or(d.block_bytes),
        exact_block_limit: uint(o, "exact_blocks")?.unwrap_or(d.exact_block_limit),
        exact_mrc: flag(o, "exact_mrc")?,
        window_nanos: window(o)?,
        device_rows: if flag(o, "per_device")? {
            u32::try_from(uint(o, "top")?.unwrap_or(u64::from(DEFAULT_DEVICE_ROWS)))
                .context("top: at most 4294967295 rows")?
        } else {
            0
        },
        ..d
    })
}

/// Where the events come from.
enum Source<'py> {
    Files(InputArgs),
    /// A Python callable returning a fresh iterable of column batches (one call per pass).
    Batches(Bound<'py, PyAny>),
}

/// A job's hash slice: only requests whose extent hashes into `slice` of `slices`.
#[derive(Clone, Copy)]
struct Slice {
    slice: u32,
    slices: u32,
}

/// Feeds one job over the source, every pass, and returns its result.
/// [`feed`] once the job's request is built, after refusing the options it did not read.
fn checked<J: Job>(
    o: &Options,
    kind: &str,
    source: &Source<'_>,
    slice: Option<Slice>,
    job: J,
) -> anyhow::Result<J::Output> {
    o.refuse_unread(kind)?;
    feed(source, slice, job)
}

fn feed<J: Job>(
    source: &Source<'_>,
    slice: Option<Slice>,
    mut job: J,
) -> anyhow::Result<J::Output> {
    let keep = |e: &IoEvent| {
        slice.is_none_or(|s| {
            hash_slice(e, analyzer_core::merge::SLICE_EXTENT_BYTES, s.slices) == s.slice
        })
    };
    match source {
        Source::Files(args) => {
            // The GIL stays held (jobs are not `Send`): Dask runs one worker process per core
            // (`blocksight.dask` starts them with one thread each).
            {
                for pass in 0..job.passes() {
                    job.begin_pass(pass);
                    let read = input::read_events(args, |e| {
                        if keep(e) {
                            job.observe(e);
                        }
                    })?;
                    if pass == 0 {
                        input::warn_diagnostics(&read);
                    }
                    job.end_pass(&read.header, &read.diagnostics)?;
                }
            }
        }
        Source::Batches(factory) => {
            for pass in 0..job.passes() {
                job.begin_pass(pass);
                let mut header = TraceHeader::new("python");
                let mut diagnostics = Diagnostics::default();
                let mut reorder = Reorder::default();
                let mut events = Vec::new();
                let iterable = factory.call0().map_err(|e| anyhow!("{e}"))?;
                let mut row = 0u64;
                for item in iterable.try_iter().map_err(|e| anyhow!("{e}"))? {
                    let item = item.map_err(|e| anyhow!("{e}"))?;
                    let batch = item
                        .cast::<PyDict>()
                        .map_err(|_| anyhow!("a batch is a dict of columns"))?;
                    events.clear();
                    batch_events(batch, &mut header, &mut events)?;
                    for e in &events {
                        let at = row;
                        reorder.push(*e, || format!("row {at}"), &mut diagnostics);
                        row += 1;
                        while let Some(e) = reorder.pop(false, &mut header, &mut diagnostics) {
                            if keep(&e) {
                                job.observe(&e);
                            }
                        }
                    }
                }
                while let Some(e) = reorder.pop(true, &mut header, &mut diagnostics) {
                    if keep(&e) {
                        job.observe(&e);
                    }
                }
                job.end_pass(&header, &diagnostics)?;
            }
        }
    }
    Ok(job.finish()?)
}

fn column(batch: &Bound<'_, PyDict>, key: &str) -> anyhow::Result<Option<Vec<u8>>> {
    match batch.get_item(key).map_err(|e| anyhow!("{e}"))? {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => {
            let bytes = v
                .cast::<PyBytes>()
                .map_err(|_| anyhow!("column {key}: expected bytes"))?;
            Ok(Some(bytes.as_bytes().to_vec()))
        }
    }
}

fn names(batch: &Bound<'_, PyDict>, key: &str) -> anyhow::Result<Vec<String>> {
    match batch.get_item(key).map_err(|e| anyhow!("{e}"))? {
        None => Ok(Vec::new()),
        Some(v) => {
            let list = v
                .cast::<PyList>()
                .map_err(|_| anyhow!("{key}: expected a list"))?;
            list.iter()
                .map(|n| {
                    n.extract::<String>()
                        .map_err(|_| anyhow!("{key}: expected strings"))
                })
                .collect()
        }
    }
}

fn le_u64(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i * 8..i * 8 + 8]);
    u64::from_le_bytes(a)
}

fn le_u32(b: &[u8], i: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[i * 4..i * 4 + 4]);
    u32::from_le_bytes(a)
}

/// One batch as the Python side packs it (`blocksight._columns`): little-endian u64 times,
/// offsets, latencies; u32 lengths, pids, device codes; u8 op codes, each code indexing the
/// batch's `op_names` / `device_names` (parsed here with the engine's `Op::from_name`).
fn batch_events(
    batch: &Bound<'_, PyDict>,
    header: &mut TraceHeader,
    out: &mut Vec<IoEvent>,
) -> anyhow::Result<()> {
    let need = |k: &str| -> anyhow::Result<Vec<u8>> {
        column(batch, k)?.with_context(|| format!("a batch needs the column {k}"))
    };
    let time = need("time_nanos")?;
    let n = time.len() / 8;
    let offset = need("offset_bytes")?;
    let len = need("len_bytes")?;
    let op = need("op")?;
    let op_names = names(batch, "op_names")?;
    let ops: Vec<Op> = op_names
        .iter()
        .map(|name| {
            Op::from_name(name).with_context(|| {
                format!("op {name:?} is not read, write, discard or flush (or R, W, D, F)")
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let device = column(batch, "device")?;
    let device_names = names(batch, "device_names")?;
    let devices: Vec<u32> = device_names
        .iter()
        .map(|d| header.device_index(d))
        .collect();
    let latency = column(batch, "latency_nanos")?;
    let latency_valid = column(batch, "latency_valid")?;
    let pid = column(batch, "pid")?;
    let pid_valid = column(batch, "pid_valid")?;
    let sizes_ok = offset.len() == n * 8
        && len.len() == n * 4
        && op.len() == n
        && device.as_ref().is_none_or(|d| d.len() == n * 4)
        && latency.as_ref().is_none_or(|d| d.len() == n * 8)
        && pid.as_ref().is_none_or(|d| d.len() == n * 4);
    if !sizes_ok {
        bail!("the columns of a batch differ in length");
    }
    for i in 0..n {
        let code = op[i] as usize;
        let op = *ops
            .get(code)
            .with_context(|| format!("op code {code} has no name"))?;
        let device = match &device {
            Some(d) => {
                let c = le_u32(d, i) as usize;
                *devices
                    .get(c)
                    .with_context(|| format!("device code {c} has no name"))?
            }
            None => 0,
        };
        let valid = |v: &Option<Vec<u8>>| v.as_ref().is_none_or(|v| v[i] != 0);
        out.push(IoEvent {
            time_nanos: le_u64(&time, i),
            device,
            offset_bytes: le_u64(&offset, i),
            len_bytes: le_u32(&len, i),
            op,
            latency_nanos: latency
                .as_ref()
                .filter(|_| valid(&latency_valid))
                .map(|l| le_u64(l, i)),
            pid: pid
                .as_ref()
                .filter(|_| valid(&pid_valid))
                .map(|p| le_u32(p, i)),
        });
    }
    if header.devices.is_empty() {
        header.device_index("0");
    }
    Ok(())
}

fn to_json<T: serde::Serialize>(v: &T) -> anyhow::Result<String> {
    Ok(serde_json::to_string(v)?)
}

fn run_kind(
    kind: &str,
    o: &Options,
    source: &Source<'_>,
    slice: Option<Slice>,
) -> anyhow::Result<String> {
    match kind {
        "stat" | "analyze" => {
            let result = checked(o, kind, source, slice, Load::new(load_request(kind, o)?)?)?;
            if kind == "stat" {
                to_json(&result.stat)
            } else {
                to_json(
                    &result
                        .analysis
                        .context("the load job ran without the analysis")?,
                )
            }
        }
        "simulate" => match kernel_model(o)? {
            Some(model) => {
                let job = Model::new(model_request(o, model)?)?;
                to_json(&checked(o, kind, source, slice, job)?)
            }
            None => {
                let job = Simulate::new(simulate_request(o)?)?;
                to_json(&checked(o, kind, source, slice, job)?)
            }
        },
        "mrc" => to_json(&checked(
            o,
            kind,
            source,
            slice,
            Mrc::new(mrc_request(o)?)?,
        )?),
        "predict" if flag(o, "md_members")? => {
            let job = MdMembers::new(md_request(o)?)?;
            to_json(&checked(o, kind, source, slice, job)?)
        }
        "predict" => {
            let job = Predict::new(predict_request(o)?)?;
            to_json(&checked(o, kind, source, slice, job)?)
        }
        other => bail!("unknown job {other:?}; expected stat, analyze, simulate, mrc or predict"),
    }
}

/// Runs job `kind` (`stat`, `analyze`, `simulate`, `mrc`, `predict`) with `options` (a JSON
/// object of the CLI's flags in snake_case, or `{"request": ...}`) over `paths` (read as the CLI
/// reads them) or `batches` (a callable returning an iterable of packed column dicts, called
/// once per pass). `slice`/`slices` restrict the job to one hash slice of the requests
/// (`blocksight.dask`'s partitioning of one large volume). Returns the result as JSON.
#[pyfunction]
#[pyo3(signature = (kind, options, paths=None, batches=None, format=None, slice=None, slices=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    kind: &str,
    options: &str,
    paths: Option<Vec<std::path::PathBuf>>,
    batches: Option<Bound<'_, PyAny>>,
    format: Option<String>,
    slice: Option<u32>,
    slices: Option<u32>,
) -> PyResult<String> {
    let inner = || -> anyhow::Result<String> {
        let o = Options {
            map: serde_json::from_str(options).context("options")?,
            ..Options::default()
        };
        let source = match (paths, batches) {
            (Some(inputs), None) => Source::Files(InputArgs {
                inputs,
                format,
                action: text(&o, "action")?.map(str::to_string),
                csv_columns: text(&o, "csv_columns")?.map(str::to_string),
                quiet: true,
            }),
            (None, Some(b)) => Source::Batches(b),
            _ => bail!("give paths or batches, not both"),
        };
        let slice = match (slice, slices) {
            (Some(s), Some(k)) if s < k => Some(Slice {
                slice: s,
                slices: k,
            }),
            (None, None) => None,
            _ => bail!("slice must be below slices, and both given"),
        };
        run_kind(kind, &o, &source, slice)
    };
    inner().map_err(|e| PyValueError::new_err(format!("{e:#}")))
}

/// Merges partial results (JSON) of one job with `analyzer_core::merge`: `split` is `device`,
/// `time` or `hash` (with `slices`). `kind` names the result type: `stat`, `simulate` (the
/// results' runs merged cell by cell), `mrc` or `heatmaps` (an `analyze` result's heat maps,
/// or the `analyze` results themselves).
#[pyfunction]
#[pyo3(signature = (kind, parts, split, slices=None))]
fn merge(kind: &str, parts: Vec<String>, split: &str, slices: Option<u32>) -> PyResult<String> {
    let inner = || -> anyhow::Result<String> {
        let split = match split {
            "device" => Split::Device,
            "time" => Split::Time,
            "hash" => Split::Hash {
                slices: slices.context("split hash needs slices")?,
            },
            other => bail!("split {other:?}: expected device, time or hash"),
        };
        fn parse<T: serde::de::DeserializeOwned>(parts: &[String]) -> anyhow::Result<Vec<T>> {
            parts
                .iter()
                .map(|p| serde_json::from_str(p).context("a part is not this job's result"))
                .collect()
        }
        match kind {
            "stat" => to_json(&analyzer_core::merge::merge(
                &parse::<analyzer_core::stat::StatSummary>(&parts)?,
                split,
            )?),
            "mrc" => to_json(&analyzer_core::merge::merge(
                &parse::<analyzer_core::mrc::MrcReport>(&parts)?,
                split,
            )?),
            "simulate" => {
                let results = parse::<analyzer_core::job::simulate::SimulateResult>(&parts)?;
                let mut merged = results.first().cloned().context("no parts")?;
                for (i, run) in merged.runs.iter_mut().enumerate() {
                    let cells: Vec<_> = results
                        .iter()
                        .map(|r| {
                            r.runs
                                .get(i)
                                .map(|c| c.result.clone())
                                .context("the parts differ in cells")
                        })
                        .collect::<anyhow::Result<_>>()?;
                    run.result = analyzer_core::cache::sim::SimResult::merge_parts(&cells, split)?;
                }
                merged.footprint_lines = results.iter().map(|r| r.footprint_lines).sum();
                // Curves are per part's sample; merged curves come from `mrc` results.
                merged.curves.clear();
                to_json(&merged)
            }
            "heatmaps" => {
                // An `analyze` result's `heatmaps`, or the whole `analyze` result.
                let maps = parts
                    .iter()
                    .map(|p| {
                        let mut v: Value =
                            serde_json::from_str(p).context("a part is not JSON")?;
                        if let Some(h) = v.get_mut("heatmaps") {
                            v = h.take();
                        }
                        serde_json::from_value(v).context("a part is not an analyze result")
                    })
                    .collect::<anyhow::Result<Vec<analyzer_core::analysis::heatmap::HeatMapReport>>>()?;
                to_json(&analyzer_core::merge::merge(&maps, split)?)
            }
            other => {
                bail!("results of {other:?} do not merge; stat, simulate, mrc and heatmaps do")
            }
        }
    };
    inner().map_err(|e| PyValueError::new_err(format!("{e:#}")))
}

/// A size as the CLI reads it (`4k`, `64KiB`, `200GiB`, or bytes), in bytes.
#[pyfunction(name = "parse_size")]
fn parse_size_py(text: &str) -> PyResult<u64> {
    analyzer_core::units::parse_size(text).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The device name of a dataset's `device=NAME` directory (percent-decoded), or `None`.
#[pyfunction]
fn partition_name(segment: &str) -> Option<String> {
    blocksight_host::parquet::partition_name(segment)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(partition_name, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size_py, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
