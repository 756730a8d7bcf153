//! One module per subcommand; each has an `Args` (clap) and a `run`.

use std::io::Write;

pub mod analyze;
pub mod export;
pub mod import;
pub mod mrc;
pub mod predict;
pub mod record;
pub mod report;
pub mod serve;
pub mod simulate;
pub mod stat;

/// `blocksight formats`.
/// The `--threads` flag: at least 1; every core when not given.
pub fn threads(flag: Option<usize>) -> anyhow::Result<usize> {
    match flag {
        Some(0) => anyhow::bail!("--threads: at least 1"),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, usize::from)),
    }
}

pub fn formats() -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    for f in analyzer_core::TraceFormat::ALL {
        writeln!(out, "{:<16} {}", f.name(), f.description())?;
    }
    Ok(())
}
