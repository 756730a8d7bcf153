//! `blocksight stat`: the first look at a trace.

use std::io::Write;

use analyzer_core::stat::{Stat, StatSummary};

use crate::input::{self, InputArgs};
use crate::output::{bytes, count, duration};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print the summary as JSON (fields documented in docs/json.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let mut stat = Stat::new();
    let read = input::read_events(&args.input, |e| stat.observe(e))?;
    input::warn_diagnostics(&read);
    let summary = stat.finish(&read.header, &read.diagnostics);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &summary)?;
        writeln!(out)?;
    } else {
        print_text(&mut out, &summary)?;
    }
    Ok(())
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

pub fn print_text(out: &mut impl Write, s: &StatSummary) -> std::io::Result<()> {
    writeln!(out, "format        {}", s.source_format)?;
    writeln!(
        out,
        "devices       {}",
        if s.devices.is_empty() {
            "-".into()
        } else {
            s.devices.join(", ")
        }
    )?;
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
            "mean rate     {:.0} IOPS, read {:.1} MiB/s, write {:.1} MiB/s",
            s.iops, s.read_mib_per_sec, s.write_mib_per_sec
        )?,
    }
    writeln!(
        out,
        "mean size     {}",
        bytes(s.mean_request_bytes.round() as u64)
    )?;
    writeln!(
        out,
        "sequential    {:.1}% of reads and writes",
        s.sequential_fraction * 100.0
    )?;
    if s.events_with_latency > 0 {
        writeln!(
            out,
            "latency       recorded for {}",
            pct(s.events_with_latency, s.events)
        )?;
    }
    if let Some(rate) = s.sampling_rate {
        writeln!(
            out,
            "sampling      spatially sampled at rate {rate}; counts are of the sample"
        )?;
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
