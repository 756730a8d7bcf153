//! `blocksight stat`: the first look at a trace.

use std::io::Write;

use analyzer_core::job::load::{Load, LoadRequest};
use analyzer_core::stat::StatSummary;
use analyzer_core::units::{bytes, bytes_per_sec, count, duration, escape, per_sec, percent};

use crate::input::{self, InputArgs};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// Threads (default: every core): with two or more, the summary is counted on a thread of
    /// its own while this one decodes; the results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Print the summary as JSON (fields documented in docs/json.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let request = LoadRequest {
        analysis: false,
        ..LoadRequest::new()
    };
    let job = Load::with_threads(request, crate::cmd::threads(args.threads)?)?;
    let (result, read) = input::run_job(&args.input, job)?;
    input::warn_diagnostics(&read);
    let summary = result.stat;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &summary)?;
        writeln!(out)?;
    } else {
        print_text(&mut out, &summary)?;
    }
    Ok(())
}

use analyzer_core::units::pct;

/// Most device names listed in text; the rest are counted.
pub const LISTED_DEVICES: usize = 8;

/// `sda, sdb and 3 more`: names escaped, the list bounded.
pub fn device_list(names: &[String]) -> String {
    if names.is_empty() {
        return "-".into();
    }
    let shown: Vec<String> = names
        .iter()
        .take(LISTED_DEVICES)
        .map(|n| escape(n))
        .collect();
    let more = names.len().saturating_sub(LISTED_DEVICES);
    if more == 0 {
        shown.join(", ")
    } else {
        format!("{} and {more} more", shown.join(", "))
    }
}

pub fn print_text(out: &mut impl Write, s: &StatSummary) -> std::io::Result<()> {
    writeln!(out, "format        {}", escape(&s.source_format))?;
    writeln!(out, "devices       {}", device_list(&s.devices))?;
    writeln!(out, "events        {}", count(s.events))?;
    writeln!(out, "duration      {}", duration(s.duration_nanos))?;
    writeln!(
        out,
        "reads         {:>14}  {:>6}  {:>10}",
        count(s.reads),
        pct(s.reads, s.events),
        bytes(s.read_bytes)
    )?;
    writeln!(
        out,
        "writes        {:>14}  {:>6}  {:>10}",
        count(s.writes),
        pct(s.writes, s.events),
        bytes(s.write_bytes)
    )?;
    if s.discards > 0 {
        writeln!(
            out,
            "discards      {:>14}  {:>6}  {:>10}",
            count(s.discards),
            pct(s.discards, s.events),
            bytes(s.discard_bytes)
        )?;
    }
    if s.flushes > 0 {
        writeln!(
            out,
            "flushes       {:>14}  {:>6}",
            count(s.flushes),
            pct(s.flushes, s.events)
        )?;
    }
    writeln!(
        out,
        "footprint     {} ({} distinct 4 KiB blocks{})",
        bytes(s.footprint_bytes),
        count(s.footprint_blocks),
        if s.footprint_exact {
            ""
        } else {
            ", estimated by sampling"
        }
    )?;
    match analyzer_core::stat::rates_unmeasured_reason(s.duration_nanos, s.clock_resolution_nanos) {
        Some(why) => writeln!(out, "mean rate     {why}")?,
        None => writeln!(
            out,
            "mean rate     {} IOPS, read {}, write {}",
            per_sec(s.iops),
            bytes_per_sec(s.read_mib_per_sec * 1048576.0),
            bytes_per_sec(s.write_mib_per_sec * 1048576.0)
        )?,
    }
    writeln!(
        out,
        "mean size     {}",
        bytes(s.mean_request_bytes.round() as u64)
    )?;
    writeln!(
        out,
        "sequential    {} of reads and writes",
        percent(Some(s.sequential_fraction))
    )?;
    if s.events_with_latency > 0 {
        writeln!(
            out,
            "latency       recorded for {}",
            pct(s.events_with_latency, s.events)
        )?;
    }
    if let Some(rate) = s.sampling_rate {
        if rate.is_finite() && rate > 0.0 && rate <= 1.0 {
            writeln!(
                out,
                "sampling      spatially sampled, {} of the blocks; counts are of the sample",
                percent(Some(rate))
            )?;
        } else {
            writeln!(
                out,
                "sampling      the header claims a spatial sample, but its threshold is not below its modulus; counts are as recorded"
            )?;
        }
    }
    writeln!(out, "request sizes")?;
    let total = s.reads + s.writes + s.discards;
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
            "  {label:<12} {:>14} {:>6}  (r {}, w {})",
            count(n),
            pct(n, total),
            count(b.reads),
            count(b.writes)
        )?;
    }
    Ok(())
}
