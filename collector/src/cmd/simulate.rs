//! `blocksight simulate`: what an SSD cache of a given size, policy, admission rule and write
//! mode would do with a trace — hit ratios and the I/O left for the disks behind it.

use std::io::Write;

use analyzer_core::cache::admission::Admission;
use analyzer_core::cache::sim::Summary;
use analyzer_core::cache::{
    CacheChoice, NextUseBuilder, PolicyKind, Preset, SimConfig, SimResult, Simulator, WriteMode,
};
use analyzer_core::hash::{block_key, IntSet};
use analyzer_core::Op;
use anyhow::{bail, Context};

use crate::input::{self, InputArgs};
use crate::output::{bytes, count, duration, parse_duration, parse_size};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// Eviction policy: lru, fifo, clock, lfu, slru, 2q, arc, lirs, sieve, s3fifo, belady
    /// (default lru, or the preset's).
    #[arg(long, value_name = "P")]
    pub policy: Option<String>,
    /// Cache size: a size (200GiB, 512M) or a percentage of the trace's footprint in lines (10%).
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
    /// A product model: dm-cache, bcache, opencas, opencas-nhit, cachecade1, cachecade2
    /// (docs/cache.md lists their sources and assumptions). Other flags override its settings.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Exclude this leading time window from the after-warm-up figures (90s, 10m, 1h).
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,
    /// Number of time bins for the hits-and-fills-over-time series in --json.
    #[arg(long = "time-bins", value_name = "N", default_value_t = 100)]
    pub time_bins: usize,
    /// Print the result as JSON (fields documented in docs/cache.md).
    #[arg(long)]
    pub json: bool,
}

enum CacheSize {
    Bytes(u64),
    FootprintPercent(f64),
}

fn parse_cache_size(text: &str) -> anyhow::Result<CacheSize> {
    let t = text.trim();
    if let Some(p) = t.strip_suffix('%') {
        let pct: f64 = p
            .trim()
            .parse()
            .with_context(|| format!("--cache-size {text:?}: not a percentage like 10%"))?;
        if !(pct > 0.0 && pct <= 100.0) {
            bail!("--cache-size {text:?}: the percentage must be above 0 and at most 100");
        }
        return Ok(CacheSize::FootprintPercent(pct));
    }
    Ok(CacheSize::Bytes(
        parse_size(t)
            .map_err(anyhow::Error::msg)
            .context("--cache-size")?,
    ))
}

fn parse_admission(text: &str) -> anyhow::Result<Admission> {
    Admission::parse(text).map_err(|e| anyhow::anyhow!("--admission {e}"))
}

/// Builds the configuration from the preset (if any) and the explicit flags, through
/// [`CacheChoice`], the engine's one rule for "preset first, flags override" (the web app's
/// Cache view uses it too). The capacity is set later, from `--cache-size`.
fn base_config(args: &Args) -> anyhow::Result<(SimConfig, Option<Preset>)> {
    let preset = match &args.preset {
        Some(name) => Some(Preset::from_name(name).with_context(|| {
            let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name).collect();
            format!(
                "unknown preset {name:?}; expected one of: {}",
                names.join(", ")
            )
        })?),
        None => None,
    };
    let mut choice = CacheChoice {
        preset,
        ..CacheChoice::default()
    };
    if let Some(p) = &args.policy {
        choice.policy = Some(PolicyKind::from_name(p).with_context(|| {
            let names: Vec<&str> = PolicyKind::ALL.iter().map(|k| k.name()).collect();
            format!(
                "unknown policy {p:?}; expected one of: {}",
                names.join(", ")
            )
        })?);
    }
    if let Some(s) = &args.line_size {
        choice.line_bytes = Some(
            parse_size(s)
                .map_err(anyhow::Error::msg)
                .context("--line-size")?,
        );
    }
    if let Some(m) = &args.mode {
        choice.mode = Some(
            WriteMode::from_name(m)
                .with_context(|| format!("--mode {m:?}: expected ro, wt, wa or wb"))?,
        );
    }
    if let Some(a) = &args.admission {
        choice.admission = Some(parse_admission(a)?);
    }
    let mut config = choice.config(1);
    if let Some(w) = &args.warmup {
        config.warmup_nanos = parse_duration(w)
            .map_err(anyhow::Error::msg)
            .context("--warmup")?;
    }
    config.time_bins = args.time_bins;
    Ok((config, preset))
}

/// The JSON document: the result plus what a reader needs to interpret it.
#[derive(serde::Serialize)]
struct Report<'a> {
    preset: Option<&'static str>,
    footprint_lines: Option<u64>,
    result: &'a SimResult,
    assumptions: Vec<String>,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let (mut config, preset) = base_config(args)?;
    let size = parse_cache_size(&args.cache_size)?;
    let line_bytes = config.line_bytes;
    if !line_bytes.is_power_of_two() || !(4096..=1 << 20).contains(&line_bytes) {
        bail!(
            "--line-size {}: must be a power of two from 4KiB to 1MiB",
            bytes(line_bytes)
        );
    }

    // First pass when the size is relative to the footprint or the policy needs the future.
    let needs_footprint = matches!(size, CacheSize::FootprintPercent(_));
    let mut future = config
        .policy
        .needs_future()
        .then(|| NextUseBuilder::new(line_bytes));
    let mut footprint_lines = None;
    if needs_footprint || future.is_some() {
        let mut lines: IntSet<u64> = IntSet::default();
        input::read_events(&args.input, |e| {
            if needs_footprint && matches!(e.op, Op::Read | Op::Write) && e.len_bytes > 0 {
                for l in e.block_range(line_bytes) {
                    lines.insert(block_key(e.device, l));
                }
            }
            if let Some(f) = future.as_mut() {
                f.observe(e);
            }
        })?;
        if needs_footprint {
            footprint_lines = Some(lines.len() as u64);
        }
    }
    config.capacity_lines = match size {
        CacheSize::Bytes(b) => {
            if b < line_bytes {
                bail!(
                    "--cache-size {} is smaller than one {} line",
                    bytes(b),
                    bytes(line_bytes)
                );
            }
            b / line_bytes
        }
        CacheSize::FootprintPercent(pct) => {
            let f = footprint_lines.unwrap_or(0);
            if f == 0 {
                bail!("the trace has no reads or writes, so it has no footprint to take {pct}% of");
            }
            ((f as f64 * pct / 100.0).ceil() as u64).max(1)
        }
    };

    let mut sim = match future {
        Some(f) => Simulator::with_future(&config, f.finish()),
        None => Simulator::new(&config),
    }
    .map_err(anyhow::Error::new)?;
    let read = input::read_events(&args.input, |e| sim.observe_buffered(e))?;
    input::warn_diagnostics(&read);
    let result = sim.finish();

    let assumptions = assumptions(&result, preset);
    let mut out = std::io::stdout().lock();
    if args.json {
        let report = Report {
            preset: preset.map(|p| p.name),
            footprint_lines,
            result: &result,
            assumptions,
        };
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        print_text(&mut out, &result, preset, footprint_lines, &assumptions)?;
    }
    Ok(())
}

fn assumptions(r: &SimResult, preset: Option<Preset>) -> Vec<String> {
    let c = &r.config;
    let mut a = vec![
        format!(
            "a request touching any byte of a {} line touches the whole line; a request hits only if all its lines hit",
            bytes(c.line_bytes)
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

/// A row of the text table: label and how to render it from a summary.
type Row = (&'static str, fn(&Summary) -> String);

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

fn print_text(
    out: &mut impl Write,
    r: &SimResult,
    preset: Option<Preset>,
    footprint_lines: Option<u64>,
    assumptions: &[String],
) -> std::io::Result<()> {
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
        "cache           {} = {} lines of {}, {}, {}, admission {}",
        bytes(r.capacity_bytes),
        count(c.capacity_lines),
        bytes(c.line_bytes),
        c.policy.name(),
        c.mode.description(),
        admission
    )?;
    if let Some(f) = footprint_lines {
        writeln!(
            out,
            "footprint       {} lines ({}); the cache holds {}",
            count(f),
            bytes(f * c.line_bytes),
            pct(Some(c.capacity_lines as f64 / f.max(1) as f64))
        )?;
    }
    writeln!(
        out,
        "trace           {} requests over {}; cache full after {}",
        count(r.whole.counts.read.requests + r.whole.counts.write.requests),
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
                "{} lines / {}",
                count(r.final_flush_lines),
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
