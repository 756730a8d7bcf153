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

/// The `--threads` flag: at least 1; every core when not given.
pub fn threads(flag: Option<usize>) -> anyhow::Result<usize> {
    match flag {
        Some(0) => anyhow::bail!("--threads: at least 1"),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, usize::from)),
    }
}

/// `blocksight formats`.
pub fn formats() -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    for f in analyzer_core::TraceFormat::ALL {
        writeln!(out, "{:<16} {}", f.name(), f.description())?;
    }
    Ok(())
}

/// The flags among `flags` that were given (`(name, given)` pairs), in order: for refusing
/// settings that would change nothing, or that belong to another model.
pub fn flags_given<'a>(flags: &[(&'a str, bool)]) -> Vec<&'a str> {
    flags
        .iter()
        .filter_map(|&(flag, on)| on.then_some(flag))
        .collect()
}
