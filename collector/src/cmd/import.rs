//! `blocksight import`: converts traces of any supported format into one native `.bst` file
//! (docs/format.md). Streams: the encoder buffers one chunk of events and the encoded bytes go
//! to the file as they are produced, so any trace length imports in bounded memory.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use analyzer_core::native::{Compression, EncodeOptions, NativeEncoder};
use analyzer_core::TraceHeader;
use anyhow::Context;

use crate::input::{self, InputArgs};
use analyzer_core::units::{bytes, count};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// The native trace file to write (conventionally NAME.bst).
    #[arg(long, short = 'o', value_name = "OUT")]
    pub output: PathBuf,
    /// Per-chunk compression: lz4 (smaller files, still fast to read) or none.
    #[arg(long, value_name = "lz4|none", default_value = "lz4")]
    pub compress: String,
    /// Events per chunk (1 to 1048576). Smaller chunks lose less when a file is damaged.
    #[arg(long, value_name = "N", default_value_t = analyzer_core::native::DEFAULT_CHUNK_EVENTS)]
    pub chunk_events: usize,
}

/// Encoded bytes gathered before they are written.
const WRITE_BYTES: usize = 1 << 20;

/// The output file is written under this name next to OUT and renamed when complete, so a failed
/// import never leaves a plausible-looking partial trace behind.
fn temp_path(output: &Path) -> PathBuf {
    let mut name = output
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".partial");
    output.with_file_name(name)
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let compression = Compression::from_name(&args.compress)
        .with_context(|| format!("--compress takes lz4 or none, not {:?}", args.compress))?;
    anyhow::ensure!(
        (1..=analyzer_core::native::MAX_CHUNK_EVENTS).contains(&args.chunk_events),
        "--chunk-events takes 1 to {}, not {}",
        analyzer_core::native::MAX_CHUNK_EVENTS,
        args.chunk_events
    );
    let options = EncodeOptions {
        compression,
        chunk_events: args.chunk_events,
    };
    let partial = temp_path(&args.output);
    let file = File::create(&partial)
        .with_context(|| format!("cannot create {}", crate::input::shown(&partial)))?;
    let mut writer = BufWriter::with_capacity(WRITE_BYTES, file);
    let result = import(args, options, &mut writer);
    let result = result.and_then(|summary| {
        writer
            .flush()
            .and_then(|()| writer.get_ref().sync_all())
            .with_context(|| format!("cannot write {}", crate::input::shown(&partial)))?;
        std::fs::rename(&partial, &args.output).with_context(|| {
            format!(
                "cannot rename {} to {}",
                crate::input::shown(&partial),
                crate::input::shown(&args.output)
            )
        })?;
        Ok(summary)
    });
    let (events, written_bytes) = match result {
        Ok(summary) => summary,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    let per_event = if events == 0 {
        0.0
    } else {
        written_bytes as f64 / events as f64
    };
    println!(
        "imported {} events into {}: {} ({written_bytes} bytes), {per_event:.2} bytes/event",
        count(events),
        crate::input::shown(&args.output),
        bytes(written_bytes),
    );
    Ok(())
}

/// Decodes the inputs and writes the native file to `writer`; returns the event count and the
/// bytes written.
fn import(
    args: &Args,
    options: EncodeOptions,
    writer: &mut impl Write,
) -> anyhow::Result<(u64, u64)> {
    let mut buf: Vec<u8> = Vec::with_capacity(WRITE_BYTES + (1 << 16));
    let mut encoder: Option<NativeEncoder> = None;
    let mut devices_written = 0;
    let mut written_bytes = 0u64;
    let mut write_error: Option<std::io::Error> = None;
    let mut events = 0u64;
    let read = input::read_events_with_header(&args.input, |header, e| {
        if write_error.is_some() {
            return;
        }
        events += 1;
        match &mut encoder {
            None => {
                // The header goes first, as complete as it is at the first event.
                encoder = Some(NativeEncoder::new(&stamped(header), options, &mut buf));
                devices_written = header.devices.len();
            }
            Some(enc) if header.devices.len() > devices_written => {
                // Text formats find devices as they go; the encoder names them before the chunk
                // that first uses them, so that even a cut file names its devices, and writes
                // only the new ones (linear in the events, however many devices there are).
                enc.add_devices(&header.devices);
                devices_written = header.devices.len();
            }
            Some(_) => {}
        }
        if let Some(enc) = &mut encoder {
            enc.push(e, &mut buf);
        }
        if buf.len() >= WRITE_BYTES {
            written_bytes += buf.len() as u64;
            if let Err(err) = writer.write_all(&buf) {
                write_error = Some(err);
            }
            buf.clear();
        }
    })?;
    if let Some(err) = write_error {
        return Err(err)
            .with_context(|| format!("cannot write {}", crate::input::shown(&args.output)));
    }
    // The final header supersedes the first: the decoders know the dropped-event count and the
    // complete device list only at the end.
    let mut encoder = match encoder {
        Some(enc) => enc,
        None => NativeEncoder::new(&stamped(&read.header), options, &mut buf),
    };
    encoder.update_header(&stamped(&read.header), &mut buf);
    encoder.finish(&mut buf);
    written_bytes += buf.len() as u64;
    writer
        .write_all(&buf)
        .with_context(|| format!("cannot write {}", crate::input::shown(&args.output)))?;
    input::warn_diagnostics(&read);
    Ok((events, written_bytes))
}

/// The header as stored: the input's own, with the tool that wrote it when the input did not say.
fn stamped(header: &TraceHeader) -> TraceHeader {
    let mut h = header.clone();
    if h.tool_version.is_none() {
        h.tool_version = Some(format!("blocksight {} import", env!("CARGO_PKG_VERSION")));
    }
    h
}
