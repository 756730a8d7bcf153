//! `blocksight analyze`: workload summary, hot data, and the cache size to buy.

use std::io::Write;

use analyzer_core::analysis::devices::DeviceReport;
use analyzer_core::analysis::AnalysisReport;
use analyzer_core::job::load::{Load, LoadRequest, DEFAULT_DEVICE_ROWS};
use analyzer_core::Op;
use anyhow::Context;

use crate::cmd::mrc::{parse_line_size, print_recommendation};
use crate::input::{self, InputArgs};
use analyzer_core::units::{bytes, bytes_per_sec, count, duration, escape, per_sec, percent};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// Granularity of hot-data counts and cache lines, a power of two from 4 KiB to 1 MiB.
    #[arg(long, default_value = "4KiB", value_parser = parse_line_size)]
    pub line_size: u64,
    /// Compute the LRU curve behind the recommendation exactly (memory grows with the
    /// footprint) instead of from a 64K-line SHARDS sample.
    #[arg(long)]
    pub exact_mrc: bool,
    /// Distinct blocks counted exactly before hot data is spatially sampled.
    #[arg(long, default_value_t = 1 << 21)]
    pub exact_blocks: u64,
    /// Also a table per device (requests, read share, footprint, hot data, the recommended
    /// cache and its hit ratio), ranked by the back-end I/O that cache would save.
    #[arg(long)]
    pub per_device: bool,
    /// Rows of the per-device table; the other devices are added up in one row.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_DEVICE_ROWS, requires = "per_device",
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub top: u32,
    /// Threads (default: every core): with two or more, hot data and the summary are counted
    /// on a thread of its own; the results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Print the full report as JSON (fields documented in docs/analysis.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let request = LoadRequest {
        block_bytes: args.line_size,
        exact_block_limit: args.exact_blocks,
        exact_mrc: args.exact_mrc,
        device_rows: if args.per_device { args.top } else { 0 },
        ..LoadRequest::new()
    };
    let job = Load::with_threads(request, crate::cmd::threads(args.threads)?)?;
    let (result, read) = input::run_job(&args.input, job)?;
    input::warn_diagnostics(&read);
    let report = result
        .analysis
        .context("the load job ran without the analysis")?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        print_text(&mut out, &report)?;
    }
    Ok(())
}

fn pct(x: f64) -> String {
    percent(Some(x))
}

fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        pct(part as f64 / whole as f64)
    }
}

pub fn print_text(out: &mut impl Write, r: &AnalysisReport) -> std::io::Result<()> {
    let s = &r.summary;
    let devices: Vec<String> = r
        .trace
        .devices
        .iter()
        .map(|d| match d.size_bytes {
            Some(b) => format!("{} ({})", d.name, bytes(b)),
            None => d.name.clone(),
        })
        .collect();
    writeln!(
        out,
        "trace         {} format, devices: {}",
        escape(&r.trace.source_format),
        crate::cmd::stat::device_list(&devices)
    )?;
    if let Some(rate) = r.trace.sampling_rate {
        if rate.is_finite() && rate > 0.0 && rate <= 1.0 {
            writeln!(
                out,
                "              recorded with spatial sampling of {} of the blocks: counts are of the sample",
                percent(Some(rate))
            )?;
        } else {
            writeln!(
                out,
                "              the header claims a spatial sample, but its threshold is not below its modulus: counts are as recorded"
            )?;
        }
    }
    match analyzer_core::stat::rates_unmeasured_reason(s.duration_nanos, s.clock_resolution_nanos) {
        Some(why) => writeln!(
            out,
            "load          {} over {}: rates {why}",
            analyzer_core::units::plural(s.events, "request", "requests"),
            duration(s.duration_nanos)
        )?,
        None => writeln!(
            out,
            "load          {} over {}: {} IOPS, read {}, write {}",
            analyzer_core::units::plural(s.events, "request", "requests"),
            duration(s.duration_nanos),
            per_sec(s.mean_iops),
            bytes_per_sec(s.read_mib_per_sec * 1048576.0),
            bytes_per_sec(s.write_mib_per_sec * 1048576.0)
        )?,
    }
    for o in &s.ops {
        if o.requests == 0 && matches!(o.op, Op::Discard | Op::Flush) {
            continue;
        }
        let label = match o.op {
            Op::Read => "reads",
            Op::Write => "writes",
            Op::Discard => "discards",
            Op::Flush => "flushes",
        };
        write!(
            out,
            "  {label:<10} {:>14} {:>7}",
            count(o.requests),
            share(o.requests, s.events)
        )?;
        if o.op == Op::Flush || o.requests == 0 {
            writeln!(out)?;
        } else {
            writeln!(
                out,
                "  {:>10}  mean {}",
                bytes(o.bytes),
                bytes(o.bytes / o.requests)
            )?;
        }
    }
    writeln!(out, "request sizes")?;
    let total: u64 = s
        .size_histogram
        .iter()
        .map(|b| b.reads + b.writes + b.other)
        .sum();
    for b in s
        .size_histogram
        .iter()
        .filter(|b| b.reads + b.writes + b.other > 0)
    {
        let label = match b.max_bytes {
            Some(max) => format!("<= {}", bytes(max)),
            None => format!(">  {}", bytes(b.min_bytes - 1)),
        };
        let n = b.reads + b.writes + b.other;
        writeln!(
            out,
            "  {label:<12} {:>14} {:>7}  (r {}, w {})",
            count(n),
            share(n, total),
            count(b.reads),
            count(b.writes)
        )?;
    }
    let q = &r.sequentiality;
    writeln!(
        out,
        "access        sequential {}, near-sequential {}, strided {}, random {}",
        pct(q.sequential_fraction),
        pct(q.near_sequential_fraction),
        pct(q.strided_fraction),
        pct(q.random_fraction)
    )?;
    writeln!(
        out,
        "              reads {} and writes {} (near-)sequential; {} runs, mean {:.1} requests / {}",
        pct(q.read_sequential_fraction),
        pct(q.write_sequential_fraction),
        count(q.runs),
        q.mean_run_requests,
        bytes(q.mean_run_bytes.round() as u64)
    )?;
    writeln!(
        out,
        "              ({} streams per device; near = gap up to {}; strided = a repeated stride up to {})",
        q.streams_per_device,
        bytes(q.near_gap_bytes),
        bytes(q.max_stride_bytes)
    )?;
    if let Some(l) = &r.latency {
        for (name, x) in [
            ("latency all", &l.all),
            ("        read", &l.reads),
            ("       write", &l.writes),
        ] {
            if x.count == 0 {
                continue;
            }
            writeln!(
                out,
                "{name:<13} p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
                duration(x.p50_nanos),
                duration(x.p90_nanos),
                duration(x.p99_nanos),
                duration(x.p999_nanos),
                duration(x.max_nanos)
            )?;
        }
    }
    let tl = &r.timeline;
    if let Some(peak) = tl
        .bins
        .iter()
        .filter(|_| s.rates_measured)
        .max_by(|a, b| a.iops.total_cmp(&b.iops))
    {
        write!(
            out,
            "peak          {} IOPS in the {} bin at +{}",
            per_sec(peak.iops),
            duration(tl.bin_nanos),
            duration(peak.start_nanos)
        )?;
        if tl.has_queue_depth {
            let qd = tl
                .bins
                .iter()
                .filter_map(|b| b.max_queue_depth)
                .max()
                .unwrap_or(0);
            let mean: f64 = tl
                .bins
                .iter()
                .filter_map(|b| b.mean_queue_depth)
                .sum::<f64>()
                / tl.bins.len().max(1) as f64;
            write!(out, "; queue depth mean {mean:.1}, max {qd}")?;
        }
        writeln!(out)?;
    }

    let h = &r.hot;
    writeln!(out)?;
    writeln!(
        out,
        "hot data      {} blocks{}",
        bytes(h.block_bytes),
        if h.exact {
            String::new()
        } else {
            format!(
                ", spatially sampled at rate {:.4} (hottest blocks counted exactly)",
                h.sampling_rate
            )
        }
    )?;
    writeln!(
        out,
        "  footprint     {:>10}   ({} block accesses)",
        bytes(h.all.footprint_bytes),
        count(h.all.ios)
    )?;
    for (i, hs) in h.all.hot_sizes.iter().enumerate() {
        let rd = h
            .reads
            .hot_sizes
            .get(i)
            .map(|x| bytes(x.bytes))
            .unwrap_or_default();
        let wr = h
            .writes
            .hot_sizes
            .get(i)
            .map(|x| bytes(x.bytes))
            .unwrap_or_default();
        writeln!(
            out,
            "  {:>3.0}% of I/Os  {:>10}   ({} of footprint; reads {}, writes {})",
            hs.io_fraction * 100.0,
            bytes(hs.bytes),
            pct(hs.footprint_fraction),
            rd,
            wr
        )?;
    }
    let skew: Vec<String> = [0.01, 0.05, 0.1, 0.2]
        .iter()
        .filter_map(|&f| {
            h.all
                .skew
                .iter()
                .find(|p| (p.footprint_fraction - f).abs() < 1e-9)
        })
        .map(|p| {
            format!(
                "{:.0}% -> {}",
                p.footprint_fraction * 100.0,
                pct(p.io_fraction)
            )
        })
        .collect();
    writeln!(
        out,
        "  skew          hottest share of data -> share of I/Os: {}",
        skew.join(", ")
    )?;
    writeln!(
        out,
        "  read/write    {} of read-hot blocks are also written; {} of write-hot blocks are also read",
        pct(h.read_hot_also_written),
        pct(h.write_hot_also_read)
    )?;
    if !h.top_regions.is_empty() {
        writeln!(out, "  top regions (adjacent blocks of the 80% hot set)")?;
        writeln!(
            out,
            "    {:<10} {:>16} {:>10} {:>12} {:>7} {:>7}",
            "device", "offset", "size", "I/Os", "share", "reads"
        )?;
        for g in h.top_regions.iter().take(10) {
            writeln!(
                out,
                "    {:<10} {:>16} {:>10} {:>12} {:>7} {:>7}",
                if g.device_name.is_empty() {
                    g.device.to_string()
                } else {
                    escape(&g.device_name)
                },
                bytes(g.start_bytes),
                bytes(g.end_bytes - g.start_bytes),
                count(g.ios),
                pct(g.io_fraction),
                share(g.reads, g.ios)
            )?;
        }
    }
    writeln!(out)?;
    match &r.cache_sizing.recommendation {
        Some(rec) => print_recommendation(out, rec, &r.cache_sizing)?,
        None => writeln!(out, "cache sizing  no reads or writes to size a cache for")?,
    }
    print_trace_length(out, r)?;
    if let Some(d) = &r.per_device {
        writeln!(out)?;
        print_devices(out, d)?;
    }
    Ok(())
}

/// The per-device table (analysis::devices), already ranked and cut by the engine.
pub fn print_devices(out: &mut impl Write, d: &DeviceReport) -> std::io::Result<()> {
    writeln!(
        out,
        "per device    {}, ranked by the back-end I/O a cache of the recommended size would save \
         (one LRU cache per device, {} lines)",
        analyzer_core::units::plural(d.devices, "device", "devices"),
        bytes(d.line_bytes)
    )?;
    let [c0, c1, c2, c3, c4, c5, c6, c7] = DeviceReport::COLUMNS;
    writeln!(
        out,
        "  {c0:<16} {c1:>12} {c2:>6} {c3:>11} {c4:>11} {c5:>11} {c6:>6} {c7:>13}"
    )?;
    for [name, requests, reads, footprint, hot, cache, hits, saved] in d.cells() {
        writeln!(
            out,
            "  {:<16} {requests:>12} {reads:>6} {footprint:>11} {hot:>11} {cache:>11} {hits:>6} \
             {saved:>13}",
            escape(&name)
        )?;
    }
    if d.rows.iter().any(|r| !r.footprint_exact || !r.hot_exact) {
        writeln!(
            out,
            "  ~ estimated from a spatial sample (footprint: the device's curve sample; hot data: \
             the analysis's block sample)"
        )?;
    }
    Ok(())
}

/// Whether the trace is long enough (analysis::length): the verdict and how much longer.
fn print_trace_length(out: &mut impl Write, r: &AnalysisReport) -> std::io::Result<()> {
    if let Some(l) = &r.trace_length {
        writeln!(out, "trace length  {}", l.advice)?;
    }
    Ok(())
}
