//! `blocksight simulate`: what an SSD cache of a given size, policy, admission rule and write
//! mode would do with a trace — hit ratios and the I/O left for the disks behind it.

use std::io::Write;

use analyzer_core::cache::sim::Summary;
use analyzer_core::cache::{Preset, WriteMode};
use analyzer_core::job::simulate::model::{
    refuse_generic_settings, refuse_model_settings, KernelModel, Model, ModelRequest,
};
use analyzer_core::job::simulate::{SimRun, Simulate, SimulateRequest, SimulateResult};
use analyzer_core::job::{parse_duration, CacheParams, CacheSize};
use analyzer_core::units::{bytes, count, duration, parse_size, percent, plural};
use anyhow::Context;

use crate::input::{self, InputArgs};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// Eviction policy: lru, fifo, clock, lfu, slru, 2q, arc, lirs, sieve, s3fifo, belady
    /// (default lru, or the preset's). A comma-separated list simulates each (a grid with
    /// several sizes), all from one read of the trace.
    #[arg(long, value_name = "P")]
    pub policy: Option<String>,
    /// Cache size: a size (200GiB, 512M) or a percentage of the trace's footprint in lines (10%);
    /// a comma-separated list simulates each (`1%,5%,10%,20%`).
    #[arg(long = "cache-size", value_name = "SIZE|PCT%")]
    pub cache_size: String,
    /// Cache line size, a power of two from 4KiB to 1MiB (default 4KiB, or the preset's).
    #[arg(long = "line-size", value_name = "S")]
    pub line_size: Option<String>,
    /// Write mode: ro (read-only, writes invalidate), wt (write-through), wa (write-around),
    /// wb (write-back). Default wt, or the preset's.
    #[arg(long, value_name = "ro|wt|wa|wb")]
    pub mode: Option<String>,
    /// Admission: always, nhit:N (insert on the N-th access), smq (hot regions, dm-cache-like),
    /// seqcut:SIZE (bypass sequential streams of SIZE or more). Default always, or the preset's.
    #[arg(long, value_name = "RULE")]
    pub admission: Option<String>,
    /// A product: dm-cache and bcache run the models of the kernels' own caches (Linux 6.1
    /// dm-cache with smq, bcache; also named dm-cache-smq and bcache-kernel; docs/cache.md);
    /// dm-cache-approx, bcache-approx, opencas, opencas-nhit, cachecade1, cachecade2 are generic
    /// presets (docs/cache.md lists their sources and assumptions; other flags override their
    /// settings).
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// dm-cache-smq: size of the origin device (default: the highest byte the trace touches).
    #[arg(long = "origin-size", value_name = "SIZE")]
    pub origin_size: Option<String>,
    /// dm-cache-smq: how long before the first event the cache was created (default 0s):
    /// smq's first tick.
    #[arg(long = "created-before", value_name = "DURATION")]
    pub created_before: Option<String>,
    /// dm-cache-smq: bio latency where the trace has none (default 1ms).
    #[arg(long = "bio-latency", value_name = "DURATION")]
    pub bio_latency: Option<String>,
    /// dm-cache-smq: how long one promotion, demotion or writeback takes (default: promotions
    /// wait for the bio that asked for them, then one more origin trip as long as that bio;
    /// demotions and writebacks at once).
    #[arg(long = "migration-time", value_name = "DURATION")]
    pub migration_time: Option<String>,
    /// bcache: `sequential_cutoff` (default 4MiB; 0 turns sequential bypass off).
    #[arg(long = "seq-cutoff", value_name = "SIZE")]
    pub seq_cutoff: Option<String>,
    /// bcache: the cache device's bucket size (make-bcache --bucket; default 512KiB).
    #[arg(long = "bucket-size", value_name = "SIZE")]
    pub bucket_size: Option<String>,
    /// bcache, traces without completions: each task's queue depth (fio iodepth); a read
    /// miss is inserted after the task's next N bios, so writes in between collide with it.
    #[arg(long = "qd", value_name = "N")]
    pub qd: Option<u32>,
    /// bcache: the cache device's latency for one write (default: none, buckets always
    /// ready). The allocator makes each batch of buckets usable after two synchronous
    /// metadata writes (gens, then journal); read-miss insertions and write-through writes
    /// that find no bucket ready meanwhile are not cached. Data writes slower than
    /// --congested-write-threshold-us congest the cache.
    #[arg(long = "cache-write-latency", value_name = "DURATION")]
    pub cache_write_latency: Option<String>,
    /// bcache, write-back: `writeback_percent` (default 10), the share of the cache background
    /// writeback aims to keep dirty; 0 writes back at the maximum rate.
    #[arg(long = "writeback-percent", value_name = "PCT")]
    pub writeback_percent: Option<u64>,
    /// bcache: read the counters this long after the last bio (default: at it); background
    /// writeback runs on meanwhile (after about 30 s without a bio at the maximum rate).
    #[arg(long = "idle-after", value_name = "DURATION")]
    pub idle_after: Option<String>,
    /// bcache: how long before the first bio the backing device was attached to the cache
    /// (its writeback rate is updated every 5 s from then; default: first 5 s after the first
    /// bio).
    #[arg(long = "attached-before", value_name = "DURATION")]
    pub attached_before: Option<String>,
    /// bcache: `congested_read_threshold_us` (default 2000; 0 turns reads' congestion
    /// accounting off). A cache-device bio slower than its threshold makes bcache bypass the
    /// cache for a while (docs/cache.md).
    #[arg(long = "congested-read-threshold-us", value_name = "US")]
    pub congested_read_threshold_us: Option<u64>,
    /// bcache: `congested_write_threshold_us` (default 20000; 0 turns writes' off).
    #[arg(long = "congested-write-threshold-us", value_name = "US")]
    pub congested_write_threshold_us: Option<u64>,
    /// bcache: the cache device's latency for a data read (default: below the read threshold,
    /// so reads never congest it; --cache-write-latency is the writes'). Above
    /// --congested-read-threshold-us, hits make bcache bypass the cache.
    #[arg(long = "cache-read-latency", value_name = "DURATION")]
    pub cache_read_latency: Option<String>,
    /// Exclude this leading time window from the after-warm-up figures (90s, 10m, 1h).
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,
    /// Number of time bins for the hits-and-fills-over-time series in --json.
    #[arg(long = "time-bins", value_name = "N", default_value_t = 100)]
    pub time_bins: usize,
    /// Only the requests from START to END after the trace's first request (`10s..70s`).
    #[arg(long, value_name = "START..END")]
    pub window: Option<String>,
    /// Threads for a grid's cells (default: every core); the results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Print the result as JSON (the job's result, as the web app gets it; docs/cache.md).
    #[arg(long)]
    pub json: bool,
}

/// The request the flags describe.
pub fn request(args: &Args) -> anyhow::Result<SimulateRequest> {
    let model_only = super::flags_given(&[
        ("--seq-cutoff", args.seq_cutoff.is_some()),
        ("--bucket-size", args.bucket_size.is_some()),
        ("--qd", args.qd.is_some()),
        ("--cache-write-latency", args.cache_write_latency.is_some()),
        ("--writeback-percent", args.writeback_percent.is_some()),
        ("--idle-after", args.idle_after.is_some()),
        ("--attached-before", args.attached_before.is_some()),
        (
            "--congested-read-threshold-us",
            args.congested_read_threshold_us.is_some(),
        ),
        (
            "--congested-write-threshold-us",
            args.congested_write_threshold_us.is_some(),
        ),
        ("--cache-read-latency", args.cache_read_latency.is_some()),
        ("--origin-size", args.origin_size.is_some()),
        ("--created-before", args.created_before.is_some()),
        ("--bio-latency", args.bio_latency.is_some()),
        ("--migration-time", args.migration_time.is_some()),
    ]);
    refuse_model_settings(&model_only)?;
    let sizes = CacheSize::parse_list(&args.cache_size).context("--cache-size")?;
    let policies: Vec<String> = match &args.policy {
        Some(p) => p
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    };
    let line = match &args.line_size {
        Some(s) => Some(parse_size(s).context("--line-size")?),
        None => None,
    };
    let cache = CacheParams::choose(
        args.preset.as_deref(),
        policies.first().map(String::as_str),
        line,
        args.mode.as_deref(),
        args.admission.as_deref(),
        sizes[0],
    )?;
    let warmup_nanos = match &args.warmup {
        Some(w) => parse_duration(w).context("--warmup")?,
        None => 0,
    };
    Ok(SimulateRequest {
        policies: if policies.len() > 1 {
            policies
        } else {
            Vec::new()
        },
        sizes: if sizes.len() > 1 { sizes } else { Vec::new() },
        warmup_nanos,
        time_bins: args.time_bins,
        window_nanos: args
            .window
            .as_deref()
            .map(super::predict::parse_window)
            .transpose()?,
        ..SimulateRequest::new(cache)
    })
}

/// Runs the job: the trace is decoded once per pass and every cell of the grid sees the same
/// events; with several cells, the cells run on `--threads` threads (the job's).
pub fn simulate(args: &Args) -> anyhow::Result<(SimulateResult, input::ReadSummary)> {
    let job = Simulate::with_threads(request(args)?, crate::cmd::threads(args.threads)?)?;
    input::run_job(&args.input, job)
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    if let Some(model) = args.preset.as_deref().and_then(KernelModel::from_preset) {
        return run_model(args, model);
    }
    let (result, read) = simulate(args)?;
    input::warn_diagnostics(&read);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &result)?;
        writeln!(out)?;
    } else {
        for (i, run) in result.runs.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            print_text(&mut out, run, result.footprint_lines)?;
        }
    }
    Ok(())
}

/// A row of the text table: label and how to render it from a summary.
type Row = (&'static str, fn(&Summary) -> String);

fn pct(x: Option<f64>) -> String {
    percent(x)
}

fn print_text(
    out: &mut impl Write,
    run: &SimRun,
    footprint_lines: Option<u64>,
) -> std::io::Result<()> {
    let r = &run.result;
    let preset = run.preset.as_deref().and_then(Preset::from_name);
    let assumptions = &run.assumptions;
    let c = &r.config;
    let mut admission = c.admission.label();
    if let Some(s) = c.sequential_cutoff_bytes {
        admission.push_str(&format!(" + sequential cutoff {}", bytes(s)));
    }
    if let Some(p) = preset {
        writeln!(out, "preset          {} ({})", p.name, p.title)?;
    }
    writeln!(
        out,
        "cache           {} = {} of {}, {}, {}, admission {}",
        bytes(r.capacity_bytes),
        plural(c.capacity_lines, "line", "lines"),
        bytes(c.line_bytes),
        c.policy.name(),
        c.mode.description(),
        admission
    )?;
    if let Some(f) = footprint_lines {
        writeln!(
            out,
            "footprint       {} ({}); the cache holds {}",
            plural(f, "line", "lines"),
            bytes(f * c.line_bytes),
            pct(Some(c.capacity_lines as f64 / f.max(1) as f64))
        )?;
    }
    writeln!(
        out,
        "trace           {} over {}; cache full after {}",
        plural(
            r.whole.counts.read.requests + r.whole.counts.write.requests,
            "request",
            "requests"
        ),
        duration(r.duration_nanos),
        r.time_to_warm_nanos
            .map_or("never (the trace fits)".into(), duration)
    )?;
    let show_after = c.warmup_nanos > 0;
    if show_after {
        writeln!(out)?;
        writeln!(
            out,
            "{:<28}{:>16}{:>24}",
            "",
            "whole trace",
            format!("after {} warm-up", duration(c.warmup_nanos))
        )?;
    } else {
        writeln!(out)?;
        writeln!(out, "{:<28}{:>16}", "", "whole trace")?;
    }
    let rows: Vec<Row> = vec![
        ("read hit ratio (lines)", |s: &Summary| {
            pct(s.ratios.read_line_hit_ratio)
        }),
        ("write hit ratio (lines)", |s: &Summary| {
            pct(s.ratios.write_line_hit_ratio)
        }),
        ("requests fully hit", |s: &Summary| {
            pct(s.ratios.request_hit_ratio)
        }),
        ("host reads", |s: &Summary| {
            format!(
                "{} / {}",
                count(s.counts.read.requests),
                bytes(s.counts.read.bytes)
            )
        }),
        ("host writes", |s: &Summary| {
            format!(
                "{} / {}",
                count(s.counts.write.requests),
                bytes(s.counts.write.bytes)
            )
        }),
        ("disk reads", |s: &Summary| {
            format!(
                "{} / {}",
                count(s.counts.backend.read_ops),
                bytes(s.counts.backend.read_bytes)
            )
        }),
        ("disk writes", |s: &Summary| {
            format!(
                "{} / {}",
                count(s.counts.backend.write_ops),
                bytes(s.counts.backend.write_bytes)
            )
        }),
        ("disk read IOPS saved", |s: &Summary| {
            pct(s.ratios.backend_read_ops_reduction)
        }),
        ("disk write IOPS saved", |s: &Summary| {
            pct(s.ratios.backend_write_ops_reduction)
        }),
        ("disk I/Os saved (all)", |s: &Summary| {
            pct(s.ratios.backend_ops_reduction)
        }),
        ("disk bytes saved (all)", |s: &Summary| {
            pct(s.ratios.backend_bytes_reduction)
        }),
        ("lines filled / evicted", |s: &Summary| {
            format!("{} / {}", count(s.counts.fills), count(s.counts.evictions))
        }),
    ];
    for (label, f) in rows {
        if show_after {
            writeln!(
                out,
                "  {label:<26}{:>16}{:>24}",
                f(&r.whole),
                f(&r.after_warmup)
            )?;
        } else {
            writeln!(out, "  {label:<26}{:>16}", f(&r.whole))?;
        }
    }
    let w = &r.whole.counts;
    if w.bypassed_lines > 0 {
        writeln!(
            out,
            "  {:<26}{:>16}",
            "missed lines not admitted",
            count(w.bypassed_lines)
        )?;
    }
    if c.mode == WriteMode::WriteBack {
        writeln!(
            out,
            "  {:<26}{:>16}",
            "dirty evictions",
            count(w.dirty_evictions)
        )?;
        writeln!(
            out,
            "  {:<26}{:>16}",
            "final flush",
            format!(
                "{} / {}",
                plural(r.final_flush_lines, "line", "lines"),
                bytes(r.final_flush_bytes)
            )
        )?;
    }
    if w.fill_reads > 0 {
        writeln!(
            out,
            "  {:<26}{:>16}",
            "partial-line fill reads",
            count(w.fill_reads)
        )?;
    }
    if w.invalidations > 0 {
        writeln!(
            out,
            "  {:<26}{:>16}",
            "lines invalidated",
            count(w.invalidations)
        )?;
    }
    if let Some(rate) = run.sampled_rate {
        writeln!(
            out,
            "note: simulated on a {} spatial sample of the lines, counts scaled to the whole trace",
            percent(Some(rate))
        )?;
    }
    if r.warmup_longer_than_trace {
        writeln!(
            out,
            "note: the trace ends inside the warm-up window; after-warm-up figures are empty"
        )?;
    }
    writeln!(out)?;
    writeln!(out, "assumptions")?;
    for a in assumptions {
        writeln!(out, "  - {a}")?;
    }
    Ok(())
}

/// An optional size flag, parsed.
fn size_arg(value: &Option<String>, flag: &str) -> anyhow::Result<Option<u64>> {
    value
        .as_deref()
        .map(|s| parse_size(s).context(flag.to_string()))
        .transpose()
}

/// An optional duration flag, parsed.
fn duration_arg(value: &Option<String>, flag: &str) -> anyhow::Result<Option<u64>> {
    value
        .as_deref()
        .map(|d| parse_duration(d).context(flag.to_string()))
        .transpose()
}

/// The request for a kernel model (`--preset dm-cache|bcache`, or `dm-cache-smq|bcache-kernel`):
/// the flags as given; the job decides every default and refuses the generic simulator's
/// settings and the other model's.
pub fn model_request(args: &Args, model: KernelModel) -> anyhow::Result<ModelRequest> {
    let generic: Vec<&str> = [
        ("--policy", args.policy.is_some()),
        ("--admission", args.admission.is_some()),
        ("--warmup", args.warmup.is_some()),
        ("--threads", args.threads.is_some()),
        ("several --cache-size values", args.cache_size.contains(',')),
    ]
    .into_iter()
    .filter_map(|(flag, given)| given.then_some(flag))
    .collect();
    refuse_generic_settings(model, &generic)?;
    let line = size_arg(&args.line_size, "--line-size")?;
    Ok(ModelRequest {
        cache_size: CacheSize::parse(&args.cache_size).context("--cache-size")?,
        mode: args.mode.clone(),
        window_nanos: args
            .window
            .as_deref()
            .map(super::predict::parse_window)
            .transpose()?,
        sequential_cutoff_bytes: size_arg(&args.seq_cutoff, "--seq-cutoff")?,
        bucket_bytes: size_arg(&args.bucket_size, "--bucket-size")?,
        queue_depth: args.qd,
        cache_write_latency_nanos: duration_arg(
            &args.cache_write_latency,
            "--cache-write-latency",
        )?,
        writeback_percent: args.writeback_percent,
        idle_after_nanos: duration_arg(&args.idle_after, "--idle-after")?,
        attached_before_nanos: duration_arg(&args.attached_before, "--attached-before")?,
        congested_read_threshold_us: args.congested_read_threshold_us,
        congested_write_threshold_us: args.congested_write_threshold_us,
        cache_read_latency_nanos: duration_arg(&args.cache_read_latency, "--cache-read-latency")?,
        block_bytes: line,
        origin_bytes: size_arg(&args.origin_size, "--origin-size")?,
        created_before_nanos: duration_arg(&args.created_before, "--created-before")?,
        bio_latency_nanos: duration_arg(&args.bio_latency, "--bio-latency")?,
        migration_nanos: duration_arg(&args.migration_time, "--migration-time")?,
        ..ModelRequest::new(model, CacheSize::Bytes(0))
    })
}

/// `--preset dm-cache|bcache` (or `dm-cache-smq|bcache-kernel`): runs the model's job (`job::simulate::model`) and
/// prints its result: the JSON as it is, or the counters as the kernel names them.
fn run_model(args: &Args, model: KernelModel) -> anyhow::Result<()> {
    let job = Model::new(model_request(args, model)?)
        .with_context(|| format!("--preset {}", model.name()))?;
    let (result, read) = input::run_job(&args.input, job)?;
    input::warn_diagnostics(&read);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &result)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", result.text())?;
    }
    Ok(())
}
