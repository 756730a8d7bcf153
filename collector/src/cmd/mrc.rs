//! `blocksight mrc`: the miss-ratio curve of a cache policy over many sizes, in one pass.

use std::io::Write;

use analyzer_core::cache::PolicyKind;
use analyzer_core::mrc::minisim::{MiniSim, MiniSimConfig, MiniSimFuture};
use analyzer_core::mrc::recommend::{CapacityBasis, Recommendation, SizePoint};
use analyzer_core::mrc::shards::ShardsMode;
use analyzer_core::mrc::{LruMrc, Method, MrcReport, SizeSpec};
use anyhow::{bail, Context};

use crate::input::{self, InputArgs};
use crate::output::{bytes, count, parse_size};

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
    /// Print the curve as JSON (fields documented in docs/analysis.md).
    #[arg(long)]
    pub json: bool,
}

pub fn parse_line_size(text: &str) -> Result<u64, String> {
    let v = parse_size(text)?;
    if !v.is_power_of_two() || !(4096..=1 << 20).contains(&v) {
        return Err(format!(
            "{text:?}: the line size must be a power of two from 4KiB to 1MiB"
        ));
    }
    Ok(v)
}

/// A parsed `--sizes`.
#[derive(Debug, Clone, PartialEq)]
enum Sizes {
    Count(u32),
    /// Sizes in bytes or fractions of the footprint.
    List(Vec<SizeItem>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum SizeItem {
    Bytes(u64),
    Footprint(f64),
}

fn parse_sizes(text: &str) -> anyhow::Result<Sizes> {
    let t = text.trim();
    if let Ok(n) = t.parse::<u32>() {
        if n == 0 {
            bail!("--sizes 0: at least one size is needed");
        }
        return Ok(Sizes::Count(n));
    }
    let items = t
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            let s = s.trim();
            if let Some(p) = s.strip_suffix('%') {
                let v: f64 = p
                    .trim()
                    .parse()
                    .map_err(|_| anyhow::anyhow!("{s:?} is not a percentage"))?;
                if !(v > 0.0 && v <= 1000.0) {
                    bail!("{s:?}: percentages of the footprint go from 0 to 1000%");
                }
                Ok(SizeItem::Footprint(v / 100.0))
            } else {
                Ok(SizeItem::Bytes(
                    parse_size(s).map_err(|e| anyhow::anyhow!(e))?,
                ))
            }
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .context("--sizes takes a count (64) or a list like 1GiB,2GiB,10%")?;
    if items.is_empty() {
        bail!("--sizes is empty");
    }
    Ok(Sizes::List(items))
}

impl Sizes {
    fn needs_footprint(&self) -> bool {
        match self {
            Sizes::Count(_) => true,
            Sizes::List(v) => v.iter().any(|i| matches!(i, SizeItem::Footprint(_))),
        }
    }

    fn lines(&self, footprint_lines: u64, line_bytes: u64) -> SizeSpec {
        match self {
            Sizes::Count(n) => SizeSpec::Count(*n),
            Sizes::List(v) => SizeSpec::Lines(
                v.iter()
                    .map(|i| match *i {
                        SizeItem::Bytes(b) => b.div_ceil(line_bytes).max(1),
                        SizeItem::Footprint(f) => {
                            ((footprint_lines as f64 * f).round() as u64).max(1)
                        }
                    })
                    .collect(),
            ),
        }
    }
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let policy = PolicyKind::from_name(&args.policy).with_context(|| {
        let names: Vec<_> = PolicyKind::ALL.iter().map(|p| p.name()).collect();
        format!(
            "unknown policy {:?}; expected one of {}",
            args.policy,
            names.join(", ")
        )
    })?;
    let method = match &args.method {
        Some(m) => Method::from_name(m)
            .with_context(|| format!("unknown method {m:?}; expected exact, shards or minisim"))?,
        None if policy == PolicyKind::Lru => Method::Exact,
        None => Method::Minisim,
    };
    if method != Method::Minisim && policy != PolicyKind::Lru {
        bail!(
            "--method {} computes LRU curves only; use --method minisim for {}",
            method.name(),
            policy.name()
        );
    }
    let sizes = parse_sizes(&args.sizes)?;
    let line = args.line_size;
    let report = match method {
        Method::Exact | Method::Shards => {
            let mut m = if method == Method::Exact {
                LruMrc::exact(line)
            } else {
                let mode = match args.rate {
                    Some(rate) if rate > 0.0 && rate <= 1.0 => ShardsMode::FixedRate { rate },
                    Some(rate) => bail!("--rate {rate}: a sampling rate is in (0, 1]"),
                    None => ShardsMode::FixedSize {
                        max_lines: args.sample_lines.max(1),
                    },
                };
                LruMrc::shards(line, mode)
            };
            let read = input::read_events(&args.input, |e| m.observe(e))?;
            input::warn_diagnostics(&read);
            let spec = sizes.lines(m.footprint_lines(), line);
            m.finish(&spec, &read.header)
        }
        Method::Minisim => run_minisim(args, policy, &sizes)?,
    };
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

/// MiniSim needs its sizes before the pass: a count or a percentage takes a first pass to
/// measure the footprint (SHARDS fixed-size, bounded memory); Belady takes one for the future.
fn run_minisim(args: &Args, policy: PolicyKind, sizes: &Sizes) -> anyhow::Result<MrcReport> {
    let line = args.line_size;
    let footprint = if sizes.needs_footprint() {
        let mut probe = LruMrc::shards(line, ShardsMode::FixedSize { max_lines: 65536 });
        input::read_events(&args.input, |e| probe.observe(e))?;
        let footprint = probe.footprint_lines();
        if footprint == 0 {
            bail!("the trace has no reads or writes to size a cache for");
        }
        footprint
    } else {
        0
    };
    let sizes_lines = match sizes.lines(footprint, line) {
        SizeSpec::Count(n) => analyzer_core::mrc::linear_sizes(footprint, n),
        SizeSpec::Lines(v) => v,
    };
    let mut config = MiniSimConfig::new(policy, line, sizes_lines);
    config.base_rate = args.minisim_rate.clamp(1e-9, 1.0);
    config.min_sampled_lines = args.minisim_lines.max(1);
    let mut mini = if policy.needs_future() {
        let mut future = MiniSimFuture::new(&config);
        input::read_events(&args.input, |e| future.observe(e))?;
        MiniSim::with_future(config, future)?
    } else {
        MiniSim::new(config)?
    };
    let read = input::read_events(&args.input, |e| mini.observe(e))?;
    input::warn_diagnostics(&read);
    Ok(mini.finish(&read.header))
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
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
        "footprint     {} ({} lines{})",
        bytes(r.footprint_lines.saturating_mul(r.line_bytes)),
        count(r.footprint_lines),
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
        "  {label:<26} {:>10}  hit ratio {:>6}, back-end I/O -{}",
        bytes(p.size_bytes),
        pct(p.hit_ratio),
        pct(p.backend_io_reduction)
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

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_sizes("64").ok(), Some(Sizes::Count(64)));
        assert_eq!(
            parse_sizes("1GiB, 2GiB,10%").ok(),
            Some(Sizes::List(vec![
                SizeItem::Bytes(1 << 30),
                SizeItem::Bytes(2 << 30),
                SizeItem::Footprint(0.1)
            ]))
        );
        assert!(parse_sizes("0").is_err());
        assert!(parse_sizes("lots").is_err());
        assert!(parse_line_size("64KiB").is_ok());
        assert!(parse_line_size("3000").is_err());
        let s = parse_sizes("8KiB,50%").ok().map(|s| s.lines(1000, 4096));
        assert_eq!(s, Some(SizeSpec::Lines(vec![2, 500])));
    }
}
