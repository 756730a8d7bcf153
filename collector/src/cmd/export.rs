//! `blocksight export`: writes a trace out as CSV, a fio iolog (to replay the workload with fio
//! on other hardware), libCacheSim CSV or Parquet (one file, or a directory partitioned by
//! device; `blocksight_host::parquet`). Streams: events go through a small buffer to a
//! `BufWriter` (or a Parquet row group), so any trace length exports in bounded memory.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use analyzer_core::export::ExportFormat;
use anyhow::Context;

use crate::input::{self, InputArgs};
use analyzer_core::units::parse_size;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format: csv, fio (iolog v3 for `fio --read_iolog`), libcachesim or parquet.
    #[arg(long, value_name = "FORMAT")]
    pub to: String,
    /// parquet only: `device` writes a directory OUT/device=NAME/part-N.parquet (Hive style).
    #[arg(long, value_name = "COLUMN")]
    pub partition_by: Option<String>,
    /// Output file (`-` for standard output; a directory with --partition-by).
    #[arg(long, short = 'o', value_name = "OUT")]
    pub output: PathBuf,
    /// libcachesim only: the cache block size; each request becomes one row per block.
    #[arg(long, value_name = "SIZE", default_value = "4KiB")]
    pub block_size: String,
}

/// Bytes gathered before they are handed to the writer.
const FLUSH_BYTES: usize = 256 * 1024;

pub fn run(args: &Args) -> anyhow::Result<()> {
    if args.to == "parquet" {
        return parquet(args);
    }
    anyhow::ensure!(
        args.partition_by.is_none(),
        "--partition-by is for --to parquet only"
    );
    let format = ExportFormat::from_name(&args.to).with_context(|| {
        let names: Vec<&str> = ExportFormat::ALL.iter().map(|f| f.name()).collect();
        format!("--to {:?} is not one of {}", args.to, names.join(", "))
    })?;
    let block_bytes = parse_size(&args.block_size)
        .with_context(|| format!("--block-size {:?}", args.block_size))?;
    anyhow::ensure!(block_bytes > 0, "--block-size must be more than 0 bytes");
    let to_stdout = args.output.as_os_str() == "-";
    let sink: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stdout().lock())
    } else {
        Box::new(
            File::create(&args.output)
                .with_context(|| format!("cannot create {}", crate::input::shown(&args.output)))?,
        )
    };
    let mut writer = BufWriter::with_capacity(1 << 20, sink);
    let mut exporter = format.exporter(block_bytes);
    let mut buf = Vec::with_capacity(FLUSH_BYTES + 4096);
    let mut write_error: Option<std::io::Error> = None;
    let mut events: u64 = 0;
    exporter.begin(&mut buf);
    let read = input::read_events_with_header(&args.input, |header, e| {
        if write_error.is_some() {
            return;
        }
        events += 1;
        exporter.event(header, e, &mut buf);
        if buf.len() >= FLUSH_BYTES {
            if let Err(err) = writer.write_all(&buf) {
                write_error = Some(err);
            }
            buf.clear();
        }
    })?;
    let name = || {
        if to_stdout {
            "standard output".to_string()
        } else {
            crate::input::shown(&args.output).to_string()
        }
    };
    if let Some(err) = write_error {
        return Err(err).with_context(|| format!("cannot write {}", name()));
    }
    exporter.end(&read.header, &mut buf);
    writer
        .write_all(&buf)
        .and_then(|()| writer.flush())
        .with_context(|| format!("cannot write {}", name()))?;
    input::warn_diagnostics(&read);
    if !to_stdout && !args.input.quiet {
        eprintln!(
            "blocksight: exported {events} events from {} input as {} to {}",
            read.format.name(),
            format.name(),
            name()
        );
    }
    Ok(())
}

/// `--to parquet` in a blocksight built without the `parquet` feature.
#[cfg(not(feature = "parquet"))]
fn parquet(_args: &Args) -> anyhow::Result<()> {
    anyhow::bail!(
        "--to parquet: this blocksight was built without Parquet support (`scripts/run-sample.sh` \
         builds it so, to compile faster); build it with `cargo build --release -p collector` or \
         `cargo install --path collector` (the `parquet` feature is on by default)"
    )
}

/// `--to parquet`: one file, or with `--partition-by device` a Hive-style directory.
#[cfg(feature = "parquet")]
fn parquet(args: &Args) -> anyhow::Result<()> {
    use blocksight_host::parquet::{DatasetWriter, FileWriter};
    anyhow::ensure!(
        args.output.as_os_str() != "-",
        "--to parquet writes a file or a directory, not standard output"
    );
    let mut error: Option<anyhow::Error> = None;
    let (read, what) = match args.partition_by.as_deref() {
        None => {
            let mut w = FileWriter::create(&args.output)?;
            let read = input::read_events_with_header(&args.input, |header, e| {
                if error.is_none() {
                    error = w.push(header, e).err();
                }
            })?;
            if let Some(e) = error {
                return Err(e);
            }
            let events = w.finish(&read.header)?;
            (read, format!("{events} events"))
        }
        Some("device") => {
            let mut w = DatasetWriter::create(&args.output)?;
            let read = input::read_events_with_header(&args.input, |header, e| {
                if error.is_none() {
                    error = w.push(header, e).err();
                }
            })?;
            if let Some(e) = error {
                return Err(e);
            }
            let (events, files) = w.finish(&read.header)?;
            (read, format!("{events} events in {files} files"))
        }
        Some(other) => anyhow::bail!(
            "--partition-by {:?}: only `device` is supported",
            analyzer_core::units::escape(other)
        ),
    };
    input::warn_diagnostics(&read);
    if !args.input.quiet {
        eprintln!(
            "blocksight: exported {what} from {} input as parquet to {}",
            read.format.name(),
            input::shown(&args.output)
        );
    }
    Ok(())
}
