//! Reading trace files: decompression, format detection, multi-file merging and a progress bar,
//! shared by every CLI subcommand that takes `IN...` and by the Python bindings.
//!
//! The engine's decoders are push state machines; this module is the native `Read` loop that
//! feeds them in 1 MiB chunks, so memory stays bounded for any file size.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use analyzer_core::compress::Codec;
use analyzer_core::decode::merge::Merge;
use analyzer_core::decode::{Action, DecodeError, DecodeOptions, MultiDecoder};
use analyzer_core::job::Job;
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
    /// blktrace, blkparse and tracefs: which event counts as the request, D (issued to the
    /// device) or Q (queued by the block layer: bio-based devices such as dm and md have only Q).
    /// Default: D, or Q for a blkparse or tracefs trace without any D (with a note saying so).
    #[arg(long, value_name = "D|Q")]
    pub action: Option<String>,
    /// Generic CSV only: column mapping, e.g. `time=0,op=1,offset=2,len=3` (see docs/formats.md).
    #[arg(long, value_name = "MAP")]
    pub csv_columns: Option<String>,
    /// No progress bar on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// What was read: one of the engine's formats, or Parquet (read here, natively only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    Trace(TraceFormat),
    Parquet,
}

impl InputFormat {
    /// The `--format` name.
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Trace(f) => f.name(),
            InputFormat::Parquet => "parquet",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            InputFormat::Trace(f) => f.description(),
            InputFormat::Parquet => {
                "Apache Parquet: time_nanos, device, offset_bytes, len_bytes, op, latency_nanos, pid (docs/parquet.md)"
            }
        }
    }
}

/// What reading produced besides the events.
#[derive(Debug)]
pub struct ReadSummary {
    pub format: InputFormat,
    pub header: TraceHeader,
    pub diagnostics: Diagnostics,
}

/// The codecs the native reader removes: the engine's ([`Codec::detect`], also the browser's)
/// and xz, which only the native build reads (C liblzma).
enum Compression {
    Codec(Codec),
    Xz,
}

const XZ_MAGIC: [u8; 6] = [0xfd, b'7', b'z', b'X', b'Z', 0x00];

fn compression_of(head: &[u8]) -> Compression {
    if head.starts_with(&XZ_MAGIC) {
        Compression::Xz
    } else {
        Compression::Codec(Codec::detect(head).unwrap_or(Codec::None))
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
    let file = File::open(path).with_context(|| format!("cannot open {}", shown(path)))?;
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
            .with_context(|| format!("cannot read {}", shown(path)))?
            .to_vec()
    };
    let mut reader: Box<dyn Read> = match compression_of(&magic) {
        Compression::Codec(Codec::None) => Box::new(raw),
        Compression::Codec(Codec::Gzip) => Box::new(flate2::read::MultiGzDecoder::new(raw)),
        Compression::Codec(Codec::Zstd) => Box::new(
            ruzstd::decoding::StreamingDecoder::new(raw)
                .map_err(|e| anyhow::anyhow!("zstd: {e}"))
                .with_context(|| format!("{} is not a valid zstd file", shown(path)))?,
        ),
        Compression::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(raw)),
        Compression::Codec(Codec::Bzip2) => Box::new(bzip2::read::MultiBzDecoder::new(raw)),
    };
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut reader)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .with_context(|| format!("cannot read {}", shown(path)))?;
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
                shown(p),
                analyzer_core::units::escape(&prefix)
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
    read_event_batches(args, |events| events.iter().for_each(&mut each))
}

/// Events handed to [`read_event_batches`]' consumer at once (at most).
const BATCH_EVENTS: usize = 1024;

/// Like [`read_events`], but hands the events over in batches (in order, at most
/// [`BATCH_EVENTS`] at a time): decoders that decode in batches then pass each one on whole
/// (`Decoder::next_events`), with no call through the decoder objects per event.
pub fn read_event_batches(
    args: &InputArgs,
    each: impl FnMut(&[IoEvent]),
) -> anyhow::Result<ReadSummary> {
    let mut consumer = (each, Vec::with_capacity(BATCH_EVENTS));
    read_with(
        args,
        &mut consumer,
        |(each, _), _, e| each(std::slice::from_ref(e)),
        |(each, batch), decoder| {
            batch.clear();
            let read = decoder.next_events(batch, BATCH_EVENTS);
            if !batch.is_empty() {
                each(batch);
            }
            read.map(|n| n > 0)
        },
    )
}

/// Like [`read_events`], but also passes the header as known at each event, so a consumer can
/// name a device the moment it first appears (text formats discover devices as they go).
pub fn read_events_with_header(
    args: &InputArgs,
    mut each: impl FnMut(&TraceHeader, &IoEvent),
) -> anyhow::Result<ReadSummary> {
    read_with(
        args,
        &mut each,
        |each, h, e| each(h, e),
        |each, decoder| match decoder.next_event()? {
            Some(e) => {
                each(decoder.header(), &e);
                Ok(true)
            }
            None => Ok(false),
        },
    )
}

/// The read loop behind [`read_events_with_header`] and [`read_event_batches`]: Parquet inputs
/// go to `each` event by event; any other input's decoder is emptied by `pull` (whether it gave
/// anything), then fed more bytes. Both get `consumer`.
fn read_with<C>(
    args: &InputArgs,
    consumer: &mut C,
    mut each: impl FnMut(&mut C, &TraceHeader, &IoEvent),
    mut pull: impl FnMut(&mut C, &mut dyn MultiDecoder) -> Result<bool, DecodeError>,
) -> anyhow::Result<ReadSummary> {
    let paths = expand_inputs(&args.inputs)?;
    if let Some(read) = read_parquet(args, &paths, &mut |h, e| each(consumer, h, e))? {
        return Ok(read);
    }
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

    let options = DecodeOptions {
        action: args
            .action
            .as_deref()
            .map(|a| {
                Action::from_name(a).with_context(|| format!("--action takes D or Q, not {a:?}"))
            })
            .transpose()?,
        csv_columns: args.csv_columns.clone(),
    };
    let (format, mut decoder) = decoder_for(args, &sources, &options)?;
    for (i, s) in sources.iter_mut().enumerate() {
        let head = std::mem::take(&mut s.head);
        decoder.push(i, &head);
    }
    drive(decoder.as_mut(), &mut sources, |d| pull(consumer, d))?;
    bar.finish_and_clear();
    let header = decoder.header().clone();
    let diagnostics = decoder.diagnostics().clone();
    Ok(ReadSummary {
        format: InputFormat::Trace(format),
        header,
        diagnostics,
    })
}

/// Reads the inputs as Parquet when they are (`--format parquet`, directories, files starting
/// with `PAR1`); `None` when none is. Parquet cannot be merged with other formats in one run.
fn read_parquet(
    args: &InputArgs,
    paths: &[PathBuf],
    each: &mut impl FnMut(&TraceHeader, &IoEvent),
) -> anyhow::Result<Option<ReadSummary>> {
    let forced = args.format.as_deref() == Some("parquet");
    let parquet: Vec<bool> = paths.iter().map(|p| forced || is_parquet(p)).collect();
    if !parquet.iter().any(|&p| p) {
        return Ok(None);
    }
    if let Some(i) = parquet.iter().position(|&p| !p) {
        bail!(
            "{} is not Parquet but other inputs are; convert it first (`blocksight export --to \
             parquet`), Parquet and other formats are not merged in one run",
            shown(&paths[i])
        );
    }
    read_parquet_files(paths, each).map(Some)
}

#[cfg(feature = "parquet")]
fn read_parquet_files(
    paths: &[PathBuf],
    each: &mut impl FnMut(&TraceHeader, &IoEvent),
) -> anyhow::Result<ReadSummary> {
    let read = crate::parquet::read(paths, |h, e| each(h, e))?;
    Ok(ReadSummary {
        format: InputFormat::Parquet,
        header: read.header,
        diagnostics: read.diagnostics,
    })
}

#[cfg(not(feature = "parquet"))]
fn read_parquet_files(
    paths: &[PathBuf],
    _each: &mut impl FnMut(&TraceHeader, &IoEvent),
) -> anyhow::Result<ReadSummary> {
    bail!("{}", PARQUET_LEFT_OUT.replace("{}", &shown(&paths[0])))
}

/// What a blocksight built without the `parquet` feature says when it meets Parquet.
#[cfg(not(feature = "parquet"))]
pub const PARQUET_LEFT_OUT: &str = "{} is Apache Parquet, and this blocksight was built without \
     Parquet support (`scripts/run-sample.sh` builds it so, to compile faster); build it with \
     `cargo build --release -p collector` or `cargo install --path collector` (the `parquet` \
     feature is on by default)";

/// The file magic at both ends of every Parquet file.
pub const PARQUET_MAGIC: &[u8; 4] = b"PAR1";

/// Whether a path is Parquet input: a directory (of parts) or a file starting with `PAR1`.
pub fn is_parquet(path: &Path) -> bool {
    if path.is_dir() {
        return true;
    }
    let mut magic = [0u8; 4];
    match std::fs::File::open(path) {
        Ok(mut f) => {
            use std::io::Read;
            f.read_exact(&mut magic).is_ok() && &magic == PARQUET_MAGIC
        }
        Err(_) => false,
    }
}

/// A path as printed: every control character escaped (a file name can hold any byte but `/`).
pub fn shown(path: &Path) -> String {
    analyzer_core::units::escape_lossy(path.as_os_str())
}

/// The format of one input: `--format`, the generic CSV for a column mapping, else sniffed.
fn format_of(args: &InputArgs, source: &Source) -> anyhow::Result<TraceFormat> {
    match &args.format {
        Some(name) => TraceFormat::from_name(name).with_context(|| {
            format!(
                "unknown format {:?}; `blocksight formats` lists the formats",
                analyzer_core::units::escape(name)
            )
        }),
        // A column mapping only makes sense for the generic CSV format.
        None if args.csv_columns.is_some() => Ok(TraceFormat::GenericCsv),
        None => analyzer_core::format::sniff(&source.head).with_context(|| {
            let closest = match analyzer_core::format::closest(&source.head) {
                Some(miss) => format!("; {miss}"),
                None => "; no known text format reads any of its first lines".into(),
            };
            format!(
                "cannot tell the format of {} from its first bytes{closest}; name it with \
                 --format (`blocksight formats` lists them)",
                shown(&source.path)
            )
        }),
    }
}

/// One decoder over every input: the format's own multi-input decoder when they share a format
/// (blktrace matches completions across per-CPU files), else one decoder per file merged by
/// time. Each input's format is detected on its own; idle CPUs' empty blktrace files take the
/// format of the others.
fn decoder_for(
    args: &InputArgs,
    sources: &[Source],
    options: &DecodeOptions,
) -> anyhow::Result<(TraceFormat, Box<dyn MultiDecoder>)> {
    let with_data: Vec<&Source> = sources.iter().filter(|s| !s.head.is_empty()).collect();
    let first = with_data.first().copied().unwrap_or(&sources[0]);
    let mut formats = Vec::with_capacity(sources.len());
    for s in sources {
        let f = if s.head.is_empty() && !std::ptr::eq(s, first) {
            None
        } else {
            Some(format_of(args, s)?)
        };
        formats.push(f);
    }
    let main = formats
        .iter()
        .flatten()
        .next()
        .copied()
        .map_or_else(|| format_of(args, first), Ok)?;
    if formats.iter().flatten().all(|&f| f == main) {
        let decoder = main
            .multi_decoder(sources.len(), options)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("cannot decode {}", shown(&first.path)))?;
        return Ok((main, decoder));
    }
    let mut decoders = Vec::with_capacity(sources.len());
    for (s, f) in sources.iter().zip(&formats) {
        let f = f.unwrap_or(main);
        decoders.push(
            f.decoder(options)
                .map_err(|e| anyhow::anyhow!("{e}"))
                .with_context(|| format!("cannot decode {} as {}", shown(&s.path), f.name()))?,
        );
    }
    Ok((main, Box::new(Merge::new(decoders))))
}

/// Runs a job over the inputs: one read per pass the job asks for (the progress bar on the
/// first only), then its result. The last pass's summary comes back with it.
pub fn run_job<J: Job>(args: &InputArgs, mut job: J) -> anyhow::Result<(J::Output, ReadSummary)> {
    let mut pass = 0;
    let mut summary = None;
    let mut quiet = args.clone();
    while pass < job.passes() {
        job.begin_pass(pass);
        let read = read_event_batches(if pass == 0 { args } else { &quiet }, |events| {
            job.observe_batch(events)
        })?;
        job.end_pass(&read.header, &read.diagnostics)?;
        summary = Some(read);
        quiet.quiet = true;
        pass += 1;
    }
    let summary = match summary {
        Some(s) => s,
        None => bail!("the job reads no trace"),
    };
    Ok((job.finish()?, summary))
}

fn drive(
    decoder: &mut dyn MultiDecoder,
    sources: &mut [Source],
    mut pull: impl FnMut(&mut dyn MultiDecoder) -> Result<bool, DecodeError>,
) -> anyhow::Result<()> {
    let mut buf = vec![0u8; CHUNK_BYTES];
    // The input pushed last: a decode error is about it.
    let mut last = 0;
    loop {
        loop {
            match pull(decoder) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    let what = if sources.len() == 1 {
                        shown(&sources[0].path)
                    } else {
                        format!(
                            "{} (or an input merged with it)",
                            shown(&sources[last].path)
                        )
                    };
                    return Err(anyhow::anyhow!("{e}"))
                        .with_context(|| format!("cannot decode {what}"));
                }
            }
        }
        let Some(i) = decoder.wants() else {
            return Ok(());
        };
        last = i;
        let source = &mut sources[i];
        if source.done {
            // The decoder asks for an input we already finished; it can make no progress.
            return Ok(());
        }
        let n = read_some(&mut source.reader, &mut buf)
            .with_context(|| format!("cannot read {}", shown(&source.path)))?;
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

/// Prints the decoder's warnings (skipped records, a truncated tail, dropped events) to stderr,
/// with every reason escaped (reasons quote the trace).
pub fn warn_diagnostics(summary: &ReadSummary) {
    use analyzer_core::units::{escape, plural};
    let d = &summary.diagnostics;
    if d.skipped_records > 0 {
        eprintln!(
            "blocksight: warning: skipped {} in the {} input; first reasons:",
            plural(d.skipped_records, "bad record", "bad records"),
            summary.format.name()
        );
        for r in &d.reasons {
            eprintln!("  {}", escape(&r.to_string()));
        }
    }
    if d.truncated_tail_bytes > 0 {
        eprintln!(
            "blocksight: warning: the input ends with {} of an incomplete record (cut off mid-write?)",
            plural(d.truncated_tail_bytes, "byte", "bytes")
        );
    }
    if d.end_marker_missing {
        eprintln!(
            "blocksight: warning: the input has no end marker: its writer was stopped before it \
             finished (a killed recording?), so events after the last complete chunk are missing"
        );
    }
    if let Some(warning) = d.order_warning() {
        eprintln!("blocksight: warning: {warning}");
    }
    for note in &d.notes {
        eprintln!("blocksight: note: {}", escape(note));
    }
    if summary.header.dropped_events > 0 {
        eprintln!(
            "blocksight: warning: the recorder dropped {}; results undercount the load",
            plural(summary.header.dropped_events, "event", "events")
        );
    }
}
