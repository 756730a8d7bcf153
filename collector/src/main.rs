//! `blocksight`: the command-line face of Blocksight. Records block I/O on live Linux servers,
//! imports and exports trace formats, and runs the analysis engine natively.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;
// The read loop lives in the host crate, shared with the Python bindings.
use blocksight_host::input;
mod output;
mod record;
mod web;

/// Block-I/O trace analysis: hot data, SSD-cache simulation and RAID predictions.
#[derive(Parser, Debug)]
#[command(name = "blocksight", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Summarise traces: counts, bytes, footprint, duration, request sizes, sequential fraction.
    Stat(cmd::stat::Args),
    /// Workload summary, hot data (how much, where, how skewed) and the cache size to buy.
    Analyze(cmd::analyze::Args),
    /// Miss-ratio curve of a cache policy over many sizes in one pass (exact, SHARDS, MiniSim).
    Mrc(cmd::mrc::Args),
    /// Convert traces of any supported format into one native .bst file.
    Import(cmd::import::Args),
    /// Write a trace as CSV, a fio iolog (replay with `fio --read_iolog`) or libCacheSim CSV.
    Export(cmd::export::Args),
    /// Record the block requests of devices on this machine into a native trace (root).
    Record(cmd::record::Args),
    /// Predict IOPS, MB/s and latency of a RAID layout, with and without an SSD cache tier.
    Predict(Box<cmd::predict::Args>),
    /// Simulate an SSD cache (policy, size, admission, write mode): hit ratios and disk load.
    Simulate(Box<cmd::simulate::Args>),
    /// Write one self-contained HTML report (the web app, the results and a trace copy) that
    /// opens offline from file://.
    Report(cmd::report::Args),
    /// Serve the web app on 127.0.0.1, with a trace preloaded.
    Serve(cmd::serve::Args),
    /// List the trace formats blocksight reads, with their `--format` names.
    Formats,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Stat(args) => cmd::stat::run(&args),
        Command::Analyze(args) => cmd::analyze::run(&args),
        Command::Mrc(args) => cmd::mrc::run(&args),
        Command::Import(args) => cmd::import::run(&args),
        Command::Export(args) => cmd::export::run(&args),
        Command::Record(args) => cmd::record::run(&args),
        Command::Predict(args) => cmd::predict::run(&args),
        Command::Simulate(args) => cmd::simulate::run(&args),
        Command::Report(args) => cmd::report::run(&args),
        Command::Serve(args) => cmd::serve::run(&args),
        Command::Formats => cmd::formats(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // A closed pipe (`blocksight stat x | head`) is not a failure.
            if err.chain().any(|e| {
                let kind = e
                    .downcast_ref::<std::io::Error>()
                    .map(std::io::Error::kind)
                    .or_else(|| {
                        e.downcast_ref::<serde_json::Error>()
                            .and_then(serde_json::Error::io_error_kind)
                    });
                kind == Some(std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("blocksight: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
