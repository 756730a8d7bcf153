//! `blocksight mrc`: the miss-ratio curve of a cache policy over many sizes, in one pass.

use std::io::Write;

use analyzer_core::job::mrc::{Mrc, MrcRequest, Sizes};
use analyzer_core::mrc::minisim::MiniSimConfig;
use analyzer_core::mrc::recommend::{CapacityBasis, Recommendation, SizePoint};
use analyzer_core::mrc::{Method, MrcReport};
use analyzer_core::units::{bytes, count, decrease, parse_size, percent, plural};
use anyhow::Context;

use crate::input::{self, InputArgs};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// Cache policy (`lru`, `fifo`, `clock`, `lfu`, `slru`, `2q`, `arc`, `lirs`, `sieve`,
    /// `s3fifo`, `belady`).
    #[arg(long, short = 'p', default_value = "lru")]
    pub policy: String,
    /// exact (LRU only; memory grows with the footprint), shards (LRU only; bounded memory) or
    /// minisim (any policy). Default: exact for LRU, minisim otherwise.
    #[arg(long, short = 'm')]
    pub method: Option<String>,
    /// Cache sizes: a count of evenly spaced sizes up to the footprint (`64`), or a list of sizes
    /// and percentages of the footprint (`1GiB,2GiB,10%`).
    #[arg(long, default_value = "64")]
    pub sizes: String,
    /// Cache line size, a power of two from 4 KiB to 1 MiB.
    #[arg(long, default_value = "4KiB", value_parser = parse_line_size)]
    pub line_size: u64,
    /// SHARDS: a fixed sampling rate instead of the fixed-size sample.
    #[arg(long, conflicts_with = "sample_lines")]
    pub rate: Option<f64>,
    /// SHARDS: the fixed-size sample, in lines.
    #[arg(long, default_value_t = 65536)]
    pub sample_lines: u64,
    /// MiniSim: the lowest sampling rate of any miniature.
    #[arg(long, default_value_t = MiniSimConfig::DEFAULT_BASE_RATE)]
    pub minisim_rate: f64,
    /// MiniSim: the smallest miniature, in lines (small sizes get higher rates).
    #[arg(long, default_value_t = MiniSimConfig::DEFAULT_MIN_SAMPLED_LINES)]
    pub minisim_lines: u64,
    /// MiniSim: bound the work to this many simulated passes over the trace (the miniatures'
    /// sampling rates summed; smaller miniatures, a quicker and rougher curve: the web app's
    /// first curves use 0.25).
    #[arg(long, value_name = "PASSES")]
    pub minisim_max_passes: Option<f64>,
    /// Only the requests from START to END after the trace's first request (`10s..70s`).
    #[arg(long, value_name = "START..END")]
    pub window: Option<String>,
    /// Print the curve as JSON (fields documented in docs/analysis.md).
    #[arg(long)]
    pub json: bool,
}

pub fn parse_line_size(text: &str) -> Result<u64, String> {
    let v = parse_size(text).map_err(|e| e.to_string())?;
    if !v.is_power_of_two() || !(4096..=1 << 20).contains(&v) {
        return Err(format!(
            "{text:?}: the line size must be a power of two from 4KiB to 1MiB"
        ));
    }
    Ok(v)
}

/// The request the flags describe.
pub fn request(args: &Args) -> anyhow::Result<MrcRequest> {
    Ok(MrcRequest {
        policy: args.policy.clone(),
        method: args.method.clone(),
        sizes: Sizes::parse(&args.sizes).context("--sizes")?,
        line_bytes: args.line_size,
        rate: args.rate,
        sample_lines: args.sample_lines,
        minisim_rate: args.minisim_rate,
        minisim_lines: args.minisim_lines,
        minisim_max_passes: args.minisim_max_passes,
        window_nanos: args
            .window
            .as_deref()
            .map(super::predict::parse_window)
            .transpose()?,
    })
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let job = Mrc::new(request(args)?)?;
    let (report, read) = input::run_job(&args.input, job)?;
    input::warn_diagnostics(&read);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        print_curve(&mut out, &report)?;
        if let Some(r) = &report.recommendation {
            writeln!(out)?;
            print_recommendation(&mut out, r, &report)?;
        }
    }
    Ok(())
}

fn pct(x: f64) -> String {
    percent(Some(x))
}

pub fn print_curve(out: &mut impl Write, r: &MrcReport) -> std::io::Result<()> {
    let how = match (&r.method, &r.sampling) {
        (Method::Exact, _) => "exact stack distances".to_string(),
        (Method::Shards, Some(s)) if s.scheme == "fixed_size" => format!(
            "SHARDS, fixed-size sample of {} lines (final rate {:.4}), bias-corrected",
            count(s.max_lines.unwrap_or(0)),
            s.rate
        ),
        (Method::Shards, Some(s)) => format!("SHARDS, fixed rate {}, bias-corrected", s.rate),
        (Method::Minisim, Some(s)) => format!(
            "MiniSim, scaled-down simulation (rates {:.4} and up)",
            s.rate
        ),
        _ => r.method.name().to_string(),
    };
    writeln!(out, "policy        {}", r.policy)?;
    writeln!(out, "method        {how}")?;
    writeln!(out, "line size     {}", bytes(r.line_bytes))?;
    writeln!(
        out,
        "requests      {} reads and writes, {} line accesses",
        count(r.requests),
        count(r.line_accesses)
    )?;
    writeln!(
        out,
        "footprint     {} ({}{})",
        bytes(r.footprint_lines.saturating_mul(r.line_bytes)),
        plural(r.footprint_lines, "line", "lines"),
        if r.footprint_exact {
            ""
        } else {
            ", estimated from the sample"
        }
    )?;
    writeln!(out)?;
    let with_requests = !r.request_points.is_empty();
    if with_requests {
        writeln!(
            out,
            "{:>12} {:>14} {:>11} {:>10} {:>13}",
            "cache size", "lines", "miss ratio", "hit ratio", "request miss"
        )?;
    } else {
        writeln!(
            out,
            "{:>12} {:>14} {:>11} {:>10}",
            "cache size", "lines", "miss ratio", "hit ratio"
        )?;
    }
    for (i, p) in r.points.iter().enumerate() {
        write!(
            out,
            "{:>12} {:>14} {:>11.4} {:>10.4}",
            bytes(p.size_bytes),
            count(p.size_lines),
            p.miss_ratio,
            p.hit_ratio
        )?;
        if let Some(q) = r.request_points.get(i) {
            write!(out, " {:>13.4}", q.miss_ratio)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn size_line(out: &mut impl Write, label: &str, p: &SizePoint) -> std::io::Result<()> {
    writeln!(
        out,
        "  {label:<26} {:>10}  hit ratio {:>6}, back-end I/O {}",
        bytes(p.size_bytes),
        pct(p.hit_ratio),
        decrease(p.backend_io_reduction)
    )
}

/// The sizing advice with its assumptions, shared with `blocksight analyze`.
pub fn print_recommendation(
    out: &mut impl Write,
    r: &Recommendation,
    report: &MrcReport,
) -> std::io::Result<()> {
    writeln!(
        out,
        "cache sizing ({} policy, {} lines)",
        report.policy,
        bytes(r.line_bytes)
    )?;
    writeln!(
        out,
        "  {:<26} {:>10}  (a cache as large as the footprint, {})",
        "achievable hit ratio",
        pct(r.achievable_hit_ratio),
        bytes(r.footprint_bytes)
    )?;
    match &r.knee {
        Some(k) => size_line(out, "knee of the curve", k)?,
        None => writeln!(
            out,
            "  {:<26} {:>10}  (the curve is nearly straight)",
            "knee of the curve", "none"
        )?,
    }
    if let Some(p) = &r.for_90pct_of_achievable {
        size_line(out, "90% of achievable", p)?;
    }
    if let Some(p) = &r.for_95pct_of_achievable {
        size_line(out, "95% of achievable", p)?;
    }
    let basis = match r.capacity_basis {
        CapacityBasis::DeviceCapacity => format!("device capacity {}", bytes(r.capacity_bytes)),
        CapacityBasis::Footprint => format!(
            "device sizes unknown: footprint {} stands in",
            bytes(r.capacity_bytes)
        ),
    };
    writeln!(out, "  rule of thumb, 5-10% of array capacity ({basis}):")?;
    size_line(out, "  5% of capacity", &r.rule_of_thumb_5pct)?;
    size_line(out, "  10% of capacity", &r.rule_of_thumb_10pct)?;
    if let Some(p) = &r.recommended {
        size_line(out, "recommended", p)?;
    }
    writeln!(
        out,
        "  assumptions: {} replacement; reads and writes allocate lines (write-back, write-allocate);\n  \
         back-end I/O reduction = share of line accesses served by the cache, before destaging dirty\n  \
         lines; knee = farthest point above the chord (Kneedle); recommended = larger of knee and 90%.",
        report.policy.to_uppercase()
    )?;
    if !report.footprint_exact {
        writeln!(out, "  the curve is estimated from a spatial sample ({}); see docs/analysis.md for its error.", report.method.name())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // --sizes is parsed by analyzer_core::job::mrc::Sizes, tested there.
    #[test]
    fn line_sizes_parse() {
        assert!(parse_line_size("64KiB").is_ok());
        assert!(parse_line_size("3000").is_err());
    }
}
