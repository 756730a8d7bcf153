//! `blocksight record`: capture the block requests of chosen devices on this machine into a
//! native trace. The kernel side lives in [`crate::record`]; this module is the CLI around it:
//! flags, checks that fail early with advice, and the messages at the end.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use analyzer_core::native::{Compression, EncodeOptions};
use analyzer_core::{DeviceInfo, Sampling, TraceHeader};
use anyhow::{bail, Context};

use crate::output::{bytes, count, duration, parse_duration, parse_size};
use crate::record::device::{self, DeviceMap};
use crate::record::sink::Sink;
use crate::record::tracker::{
    Tracker, TrackerConfig, TrackerStats, DEFAULT_COMPLETION_TIMEOUT_NANOS, DEFAULT_MAX_PENDING,
};
use crate::record::{self, blk, events, status, sys, tracefs, Limits, Pacing, Source, StopReason};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// block_rq_issue/block_rq_complete tracepoints in blocksight's own tracefs instance.
    Events,
    /// The kernel's blk tracer (blktrace's records), via tracefs; takes the global tracer.
    Blk,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Device to record: a disk, partition, dm or md device (`/dev/sda`, `sdb1`, `/dev/mapper/vg-lv`).
    /// Repeat for several.
    #[arg(short = 'd', long = "device", value_name = "DEV", required = true)]
    pub devices: Vec<String>,
    /// Stop after this long (`90s`, `10m`, `2h`); default: until Ctrl-C or SIGTERM.
    #[arg(short = 't', long = "duration", value_name = "DURATION", value_parser = parse_duration)]
    pub duration_nanos: Option<u64>,
    /// Output file; default `blocksight-<host>-<YYYYmmdd-HHMMSS>.bst` (UTC) in the current directory.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// How to capture: `events` (tracepoints, default) or `blk` (the blk tracer).
    #[arg(long, value_enum, default_value_t = Backend::Events)]
    pub backend: Backend,
    /// Stop when the file reaches this size (`500MiB`, `20GiB`); it may pass it by one chunk.
    #[arg(long = "max-size", value_name = "SIZE", value_parser = parse_size)]
    pub max_size_bytes: Option<u64>,
    /// Kernel trace buffer per CPU, in KiB. Raise it if events are dropped. Default: 64 MiB
    /// shared by the CPUs, between 1024 and 4096 KiB each.
    #[arg(long = "buffer-kb", value_name = "N", value_parser = clap::value_parser!(u64).range(64..=4_194_304))]
    pub buffer_kb: Option<u64>,
    /// Keep only requests whose 4 KiB block address hashes below this fraction (0 < R <= 1):
    /// spatial sampling for long captures of busy servers; analyses rescale by it.
    #[arg(long = "sample-rate", value_name = "R")]
    pub sample_rate: Option<f64>,
    /// Compress chunks with LZ4 (smaller files, a little more CPU).
    #[arg(long, value_name = "CODEC", default_value = "none", value_parser = ["none", "lz4"])]
    pub compress: String,
}

/// Spatial sampling at `rate` over 4 KiB blocks.
pub fn sampling_for(rate: f64) -> anyhow::Result<Option<Sampling>> {
    if !(rate > 0.0 && rate <= 1.0) {
        bail!("--sample-rate {rate}: give a fraction above 0 and at most 1, like 0.01");
    }
    if rate == 1.0 {
        return Ok(None);
    }
    const MODULUS: u64 = 1 << 24;
    let threshold = ((rate * MODULUS as f64).round() as u64).max(1);
    Ok(Some(Sampling {
        block_bytes: 4096,
        threshold,
        modulus: MODULUS,
    }))
}

/// Per-CPU buffer when `--buffer-kb` is not given: 64 MiB in total, at least 1 MiB and at most
/// 4 MiB per CPU. At 200k requests/s on one CPU, 4 MiB holds about 0.3 s of events while the
/// collector reads every 20 ms; many-CPU servers spread their I/O and get 1 MiB each.
pub fn default_buffer_kb(cpus: u64) -> u64 {
    (65_536 / cpus.max(1)).clamp(1024, 4096)
}

/// Refuses limits that would record nothing: `-t 0s` stops before the first read, and
/// `--max-size` below one chunk's worth stops as soon as the file header is written.
fn check_limits(args: &Args) -> anyhow::Result<()> {
    if args.duration_nanos == Some(0) {
        bail!("-t/--duration 0s would stop before recording anything: give a positive duration like 30s, or leave it out to record until Ctrl-C");
    }
    if let Some(m) = args.max_size_bytes.filter(|&m| m < MIN_MAX_SIZE_BYTES) {
        bail!(
            "--max-size {m} bytes is smaller than the file's own header ({MIN_MAX_SIZE_BYTES} \
             bytes at least), so nothing would be recorded: give a size like 500MiB"
        );
    }
    Ok(())
}

/// The smallest `--max-size` accepted: room for the file header, the header chunk and a chunk
/// of a few events.
const MIN_MAX_SIZE_BYTES: u64 = 4096;

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    check_limits(args)?;
    let sampling = match args.sample_rate {
        Some(r) => sampling_for(r)?,
        None => None,
    };
    if sys::effective_uid() != 0 {
        bail!("blocksight record needs root to read the kernel's trace buffers: run it as root or with sudo");
    }
    let mut traced: Vec<device::TracedDevice> = Vec::new();
    for spec in &args.devices {
        let d = device::resolve(spec, std::path::Path::new("/sys"))?;
        if d.size_sectors == 0 {
            bail!(
                "{spec} ({}) has size 0: nothing can be read from or written to it (an unbound \
                 loop device? attach a file with `losetup`), so there is nothing to record",
                d.name
            );
        }
        // `-d sda -d /dev/sda` names one device twice: record it once.
        if traced
            .iter()
            .any(|t| (t.major, t.minor) == (d.major, d.minor))
        {
            eprintln!(
                "blocksight: {spec} ({}) is named more than once; recording it once",
                d.name
            );
            continue;
        }
        traced.push(d);
    }
    let map = DeviceMap::new(traced.clone());

    let host = hostname();
    let start_unix_nanos = sys::realtime_nanos();
    let output = match &args.output {
        Some(p) => p.clone(),
        None => PathBuf::from(status::default_file_name(
            &host,
            start_unix_nanos.div_euclid(1_000_000_000),
        )),
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&output)
        .with_context(|| {
            format!(
                "cannot write the output file {}: choose a writable path with -o",
                output.display()
            )
        })?;

    let root = tracefs::find_or_mount()?;
    for name in tracefs::remove_stale_instances(&root) {
        eprintln!(
            "blocksight: removed tracefs instance {name} left by a collector that was killed"
        );
    }
    if let Some(msg) = blk::remove_stale(&root) {
        eprintln!("blocksight: {msg}");
    }

    let mut header = TraceHeader::new(match args.backend {
        Backend::Events => "tracefs",
        Backend::Blk => "blktrace",
    });
    header.devices = traced
        .iter()
        .map(|d| DeviceInfo {
            name: d.name.clone(),
            major: Some(d.major),
            minor: Some(d.minor),
            size_bytes: Some(d.size_sectors * 512),
        })
        .collect();
    header.host = Some(host);
    // The tool line also says which events each device was recorded with.
    let levels: Vec<String> = traced
        .iter()
        .map(|d| format!("{}={}", d.name, d.level.name()))
        .collect();
    header.tool_version = Some(format!(
        "blocksight {} record --backend {} --level {}",
        env!("CARGO_PKG_VERSION"),
        match args.backend {
            Backend::Events => "events",
            Backend::Blk => "blk",
        },
        levels.join(",")
    ));
    header.sampling = sampling;

    // Handlers first: a Ctrl-C while tracing is being armed must still reach the clean-up.
    sys::install_stop_handlers().context("installing signal handlers")?;
    let origin_nanos = sys::monotonic_nanos();
    header.start_unix_nanos = Some(sys::realtime_nanos());
    let compression = if args.compress == "lz4" {
        Compression::Lz4
    } else {
        Compression::None
    };
    let options = EncodeOptions {
        chunk_events: analyzer_core::native::DEFAULT_CHUNK_EVENTS,
        compression,
    };
    let mut sink = Sink::new(file, &header, options)
        .with_context(|| format!("writing the output file {}", output.display()))?;
    let tracker_config = TrackerConfig {
        origin_nanos,
        completion_timeout_nanos: DEFAULT_COMPLETION_TIMEOUT_NANOS,
        max_pending: DEFAULT_MAX_PENDING,
        sampling,
    };
    let names: Vec<&str> = traced.iter().map(|d| d.name.as_str()).collect();
    let cpus = tracefs::cpu_dirs(&root)
        .map(|c| c.len())
        .unwrap_or(1)
        .max(1) as u64;
    let buffer_kb = args.buffer_kb.unwrap_or_else(|| default_buffer_kb(cpus));
    let ctx = RunContext {
        args,
        buffer_kb,
        output: &output,
        names: names.join(", "),
    };
    // A backend that cannot start leaves no output file behind: nothing was recorded.
    let discard = |e: anyhow::Error| {
        let _ = std::fs::remove_file(&output);
        e
    };
    match args.backend {
        Backend::Events => {
            let mut source =
                events::EventsBackend::start(&root, map, buffer_kb).map_err(discard)?;
            ctx.go(&mut source, &mut sink, tracker_config, header)
        }
        Backend::Blk => {
            let mut source = blk::BlkBackend::start(&root, map, buffer_kb).map_err(discard)?;
            ctx.go(&mut source, &mut sink, tracker_config, header)
        }
    }
}

struct RunContext<'a> {
    args: &'a Args,
    buffer_kb: u64,
    output: &'a std::path::Path,
    names: String,
}

impl RunContext<'_> {
    fn go<S: Source>(
        &self,
        source: &mut S,
        sink: &mut Sink<std::fs::File>,
        tracker_config: TrackerConfig,
        header: TraceHeader,
    ) -> anyhow::Result<()> {
        let args = self.args;
        // Tests and scripts wait for this line before starting the workload.
        eprintln!(
            "blocksight: recording {} ({} backend) to {}; stop with Ctrl-C",
            self.names,
            match args.backend {
                Backend::Events => "events",
                Backend::Blk => "blk",
            },
            self.output.display()
        );
        let tty = std::io::stderr().is_terminal();
        let limits = Limits {
            duration: args.duration_nanos.map(Duration::from_nanos),
            max_size_bytes: args.max_size_bytes,
        };
        let mut tracker = Tracker::new(tracker_config);
        let summary = record::record(
            source,
            sink,
            &mut tracker,
            header,
            limits,
            Pacing::default(),
            &mut || sys::stop_signal().map(|s| sys::signal_name(s).to_string()),
            &mut |p| {
                if tty {
                    status::draw(p);
                }
            },
        )?;
        if tty {
            status::clear();
        }
        let s = &summary.stats;
        let why = match &summary.reason {
            StopReason::Duration => "the duration was reached".to_string(),
            StopReason::MaxSize => "the file reached --max-size".to_string(),
            StopReason::Signal(sig) => format!("{sig} was received"),
            StopReason::DeviceGone(msg) => msg.clone(),
            StopReason::WriteFailed(msg) => format!("writing the file failed: {msg}"),
            StopReason::ReadFailed(msg) => format!("reading the kernel's trace data failed: {msg}"),
        };
        let with_latency = if summary.write_error.is_none() {
            format!(" ({} with latency)", count(s.written_with_latency))
        } else {
            String::new()
        };
        eprintln!(
            "blocksight: stopped after {} because {why}: {} requests{with_latency} in {}",
            duration(summary.elapsed.as_nanos() as u64),
            count(summary.events_written),
            bytes(summary.file_bytes),
        );
        let cpu_nanos = sys::process_cpu_nanos();
        eprintln!(
            "blocksight: read {} of kernel trace data; dropped {} events; collector CPU time {} \
             ({} per million requests)",
            bytes(summary.kernel_bytes),
            count(summary.header.dropped_events),
            duration(cpu_nanos),
            if summary.events_written > 0 {
                duration((cpu_nanos as f64 * 1e6 / summary.events_written as f64) as u64)
            } else {
                "-".into()
            }
        );
        if summary.skipped > 0 {
            eprintln!("blocksight: {} kernel records were not block requests of the traced devices and were skipped", count(summary.skipped));
        }
        if s.never_completed + s.evicted > 0 {
            eprintln!(
                "blocksight: {} requests had no completion (still in flight at the end, or none within {} s) and have no latency",
                count(s.never_completed + s.evicted),
                DEFAULT_COMPLETION_TIMEOUT_NANOS / 1_000_000_000
            );
        }
        if s.superseded > 0 {
            eprintln!(
                "blocksight: {} requests have no latency because their completion was never seen \
                 (a later request to the same sector completed first)",
                count(s.superseded)
            );
        }
        if let Some(note) = late_records_note(s) {
            eprintln!("blocksight: {note}");
        }
        if summary.header.dropped_events > 0 {
            eprintln!(
                "blocksight: warning: the kernel dropped {} events because its trace buffer was full; \
                 the file records the count. Rerun with a larger --buffer-kb (now {} KiB per CPU), e.g. --buffer-kb {}",
                count(summary.header.dropped_events),
                self.buffer_kb,
                self.buffer_kb.saturating_mul(4)
            );
        }
        if let StopReason::DeviceGone(msg) = &summary.reason {
            eprintln!("blocksight: warning: {msg}; the recording stopped and the file is complete up to then");
        }
        if let StopReason::WriteFailed(msg) = &summary.reason {
            let full = msg.contains("No space")
                || summary
                    .write_error
                    .as_deref()
                    .is_some_and(|m| m.contains("No space"));
            let advice = if full {
                "the output filesystem is full: free space, write elsewhere with -o, or cap the file with --max-size"
            } else {
                "check the output filesystem"
            };
            bail!(
                "{advice}. Recording stopped; {} keeps the {} requests ({}) written before the \
                 error in whole chunks (readable, without the end marker)",
                self.output.display(),
                count(summary.events_written),
                bytes(summary.file_bytes)
            );
        }
        if let StopReason::ReadFailed(msg) = &summary.reason {
            bail!(
                "reading the kernel's trace data failed ({msg}); {} keeps the {} requests recorded \
                 before it. Try again, or try the other --backend",
                self.output.display(),
                count(summary.events_written)
            );
        }
        if args.output.is_none() {
            println!("{}", self.output.display());
        }
        Ok(())
    }
}

/// What the summary says when records reached the tracker late (a CPU's trace records read a
/// round after later ones): completions matched when their request came, requests whose time
/// was raised to keep the file sorted. Latencies of same-sector requests around them may be
/// swapped, which the recording cannot tell.
fn late_records_note(s: &TrackerStats) -> Option<String> {
    (s.matched_late + s.reordered > 0).then(|| {
        format!(
            "{} completions were read before their request and {} requests after later ones were \
             written (a CPU's trace records came late, as on a loaded machine); a request to the \
             same sector in flight at the same time may have taken such a request's completion",
            count(s.matched_late),
            count(s.reordered)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_records_are_reported_only_when_there_are_some() {
        let mut s = TrackerStats {
            issued: 1000,
            written: 1000,
            superseded: 3,
            ..TrackerStats::default()
        };
        assert_eq!(late_records_note(&s), None);
        s.matched_late = 12;
        let note = late_records_note(&s).expect("a note");
        assert!(
            note.starts_with("12 completions were read before their request and 0 requests"),
            "{note}"
        );
        s.matched_late = 0;
        s.reordered = 1_234;
        let note = late_records_note(&s).expect("a note");
        assert!(
            note.contains("0 completions") && note.contains("1,234 requests after"),
            "{note}"
        );
    }

    #[test]
    fn default_buffers_scale_with_cpus() {
        assert_eq!(default_buffer_kb(2), 4096);
        assert_eq!(default_buffer_kb(32), 2048);
        assert_eq!(default_buffer_kb(256), 1024);
    }

    #[test]
    fn sample_rates() {
        assert!(sampling_for(0.0).is_err());
        assert!(sampling_for(1.5).is_err());
        assert!(sampling_for(f64::NAN).is_err());
        assert_eq!(sampling_for(1.0).expect("ok"), None);
        let s = sampling_for(0.01).expect("ok").expect("sampled");
        assert!((s.rate() - 0.01).abs() < 1e-6);
    }
}
