//! Reading trace files: decompression, format detection, multi-file merging and a progress bar,
//! shared by every subcommand that takes `IN...`.
//!
//! The engine's decoders are push state machines; this module is the native `Read` loop that
//! feeds them in 1 MiB chunks, so memory stays bounded for any file size.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use analyzer_core::decode::{Action, DecodeOptions, MultiDecoder};
use analyzer_core::{Diagnostics, IoEvent, TraceFormat, TraceHeader};
use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};

/// Bytes read from a file per push into the decoder.
const CHUNK_BYTES: usize = 1 << 20;

/// Bytes of (decompressed) input used to guess the format.
const SNIFF_BYTES: usize = 64 * 1024;

/// The input flags shared by `stat`, `import`, `analyze`, `simulate`, `mrc`, `predict`, `report`.
#[derive(clap::Args, Debug, Clone)]
pub struct InputArgs {
    /// Trace files. Several files are merged by time into one trace (blktrace's per-CPU files
    /// NAME.blktrace.N can be given as NAME). .gz, .zst, .bz2 and .xz files are decompressed.
    #[arg(required = true, value_name = "IN")]
    pub inputs: Vec<PathBuf>,
    /// The input format; detected from the first bytes when omitted. `blocksight formats` lists
    /// the names.
    #[arg(long, short = 'f', value_name = "FORMAT")]
    pub format: Option<String>,
    /// blktrace only: which event counts as the request, D (issued to the device, default) or Q
    /// (queued by the block layer).
    #[arg(long, value_name = "D|Q", default_value = "D")]
    pub action: String,
    /// Generic CSV only: column mapping, e.g. `time=0,op=1,offset=2,len=3` (see docs/formats.md).
    #[arg(long, value_name = "MAP")]
    pub csv_columns: Option<String>,
    /// No progress bar on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// What reading produced besides the events.
#[derive(Debug)]
pub struct ReadSummary {
    pub format: TraceFormat,
    pub header: TraceHeader,
    pub diagnostics: Diagnostics,
}

enum Compression {
    None,
    Gzip,
    Zstd,
    Xz,
    Bzip2,
}

fn compression_of(head: &[u8]) -> Compression {
    if head.starts_with(&[0x1f, 0x8b]) {
        Compression::Gzip
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Compression::Zstd
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        Compression::Xz
    } else if analyzer_core::compress::Codec::detect(head)
        == Some(analyzer_core::compress::Codec::Bzip2)
    {
        Compression::Bzip2
    } else {
        Compression::None
    }
}

/// An open input: its decompressed byte stream and how far through the file we are.
struct Source {
    path: PathBuf,
    reader: Box<dyn Read>,
    /// Decompressed bytes read ahead for sniffing, pushed before anything else.
    head: Vec<u8>,
    done: bool,
}

/// Counts bytes read from the underlying file, for the progress bar.
struct Counted<R> {
    inner: R,
    bar: ProgressBar,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}

fn open(path: &Path, bar: &ProgressBar) -> anyhow::Result<Source> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut raw = BufReader::with_capacity(
        CHUNK_BYTES,
        Counted {
            inner: file,
            bar: bar.clone(),
        },
    );
    let magic = {
        use std::io::BufRead;
        raw.fill_buf()
            .with_context(|| format!("cannot read {}", path.display()))?
            .to_vec()
    };
    let mut reader: Box<dyn Read> = match compression_of(&magic) {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(raw)),
        Compression::Zstd => Box::new(
            ruzstd::decoding::StreamingDecoder::new(raw)
                .map_err(|e| anyhow::anyhow!("zstd: {e}"))
                .with_context(|| format!("{} is not a valid zstd file", path.display()))?,
        ),
        Compression::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(raw)),
        Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(raw)),
    };
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut reader)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(Source {
        path: path.to_path_buf(),
        reader,
        head,
        done: false,
    })
}

/// Expands `NAME` to blktrace's per-CPU files `NAME.blktrace.N` when `NAME` itself does not exist.
fn expand_inputs(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if p.exists() {
            out.push(p.clone());
            continue;
        }
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let prefix = format!(
            "{}.blktrace.",
            p.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        );
        let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let cpu = name.strip_prefix(&prefix)?.parse::<u32>().ok()?;
                Some((cpu, e.path()))
            })
            .collect();
        if found.is_empty() {
            bail!(
                "cannot open {}: no such file (nor per-CPU files {}N)",
                p.display(),
                prefix
            );
        }
        found.sort();
        out.extend(found.into_iter().map(|(_, p)| p));
    }
    Ok(out)
}

fn progress_bar(total_bytes: u64, quiet: bool) -> ProgressBar {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() || total_bytes < (16 << 20) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total_bytes);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} reading [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar
}

/// Decodes every input and calls `each` for every event, merged by time across inputs. Returns
/// the detected format, the merged header and the diagnostics.
pub fn read_events(
    args: &InputArgs,
    mut each: impl FnMut(&IoEvent),
) -> anyhow::Result<ReadSummary> {
    read_events_with_header(args, |_, e| each(e))
}

/// Like [`read_events`], but also passes the header as known at each event, so a consumer can
/// name a device the moment it first appears (text formats discover devices as they go).
pub fn read_events_with_header(
    args: &InputArgs,
    mut each: impl FnMut(&TraceHeader, &IoEvent),
) -> anyhow::Result<ReadSummary> {
    let paths = expand_inputs(&args.inputs)?;
    let total: u64 = paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let bar = progress_bar(total, args.quiet);
    let mut sources = paths
        .iter()
        .map(|p| open(p, &bar))
        .collect::<anyhow::Result<Vec<_>>>()?;

    let format = match &args.format {
        Some(name) => TraceFormat::from_name(name).with_context(|| {
            format!("unknown format {name:?}; `blocksight formats` lists the formats")
        })?,
        // A column mapping only makes sense for the generic CSV format.
        None if args.csv_columns.is_some() => TraceFormat::GenericCsv,
        None => {
            // blktrace's per-CPU files are often empty for idle CPUs: sniff the first with data.
            let first = sources
                .iter()
                .find(|s| !s.head.is_empty())
                .unwrap_or(&sources[0]);
            analyzer_core::format::sniff(&first.head).with_context(|| {
                let closest = match analyzer_core::format::closest(&first.head) {
                    Some(miss) => format!("; {miss}"),
                    None => "; no known text format reads any of its first lines".into(),
                };
                format!(
                    "cannot tell the format of {} from its first bytes{closest}; name it with \
                     --format (`blocksight formats` lists them)",
                    first.path.display()
                )
            })?
        }
    };
    let options = DecodeOptions {
        action: Action::from_name(&args.action)
            .with_context(|| format!("--action takes D or Q, not {:?}", args.action))?,
        csv_columns: args.csv_columns.clone(),
    };
    let mut decoder = format.multi_decoder(sources.len(), &options)?;
    for (i, s) in sources.iter_mut().enumerate() {
        let head = std::mem::take(&mut s.head);
        decoder.push(i, &head);
    }
    drive(decoder.as_mut(), &mut sources, &mut each)?;
    bar.finish_and_clear();
    let header = decoder.header().clone();
    let diagnostics = decoder.diagnostics().clone();
    Ok(ReadSummary {
        format,
        header,
        diagnostics,
    })
}

fn drive(
    decoder: &mut dyn MultiDecoder,
    sources: &mut [Source],
    each: &mut impl FnMut(&TraceHeader, &IoEvent),
) -> anyhow::Result<()> {
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        while let Some(e) = decoder.next_event()? {
            each(decoder.header(), &e);
        }
        let Some(i) = decoder.wants() else {
            return Ok(());
        };
        let source = &mut sources[i];
        if source.done {
            // The decoder asks for an input we already finished; it can make no progress.
            return Ok(());
        }
        let n = read_some(&mut source.reader, &mut buf)
            .with_context(|| format!("cannot read {}", source.path.display()))?;
        if n == 0 {
            source.done = true;
            decoder.finish_input(i);
        } else {
            decoder.push(i, &buf[..n]);
        }
    }
}

fn read_some(reader: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// Prints the decoder's warnings (skipped records, a truncated tail, dropped events) to stderr.
pub fn warn_diagnostics(summary: &ReadSummary) {
    let d = &summary.diagnostics;
    if d.skipped_records > 0 {
        eprintln!(
            "blocksight: warning: skipped {} bad record(s) in the {} input; first reasons:",
            d.skipped_records,
            summary.format.name()
        );
        for r in &d.reasons {
            eprintln!("  {r}");
        }
    }
    if d.truncated_tail_bytes > 0 {
        eprintln!(
            "blocksight: warning: the input ends with {} byte(s) of an incomplete record (cut off mid-write?)",
            d.truncated_tail_bytes
        );
    }
    if let Some(warning) = d.order_warning() {
        eprintln!("blocksight: warning: {warning}");
    }
    if summary.header.dropped_events > 0 {
        eprintln!(
            "blocksight: warning: the recorder dropped {} event(s); results undercount the load",
            summary.header.dropped_events
        );
    }
}
