//! `blocksight record`'s engine: capture every block request of chosen devices from the
//! kernel and write it as a native trace, safely enough to leave running for hours.
//!
//! The kernel is reached only through [`Source`] (one implementation per backend: [`events`]
//! reads tracepoints from our own tracefs instance, [`blk`] the kernel's blk tracer), so the
//! recording loop in [`record`] is tested with fake sources. Around the loop:
//! [`tracker`] pairs issues with completions and restores issue order, [`sink`] writes chunks
//! at least once a second, [`sys`] holds the only `unsafe` code (signals, clocks).

pub mod blk;
pub mod device;
pub mod event_format;
pub mod events;
pub mod ringbuf;
pub mod sink;
pub mod status;
pub mod sys;
pub mod tracefs;
pub mod tracker;

use std::time::{Duration, Instant};

use analyzer_core::TraceHeader;

use sink::{OutputFile, Sink};
use tracker::{Record, Tracker};

/// What the recording loop needs from the kernel. Implementations arm tracing when created and
/// disarm it in `teardown` and on drop.
pub trait Source {
    /// The trace clock now, in nanoseconds (events carry the same clock).
    fn now_nanos(&self) -> u64;
    /// Moves what the kernel has buffered into `out`; returns the bytes read. Never blocks.
    fn read(&mut self, out: &mut Vec<Record>) -> anyhow::Result<u64>;
    /// Events the kernel reports it lost so far.
    fn lost_events(&mut self) -> u64;
    /// Stops new events; `read` then drains what is left.
    fn stop(&mut self) -> anyhow::Result<()>;
    /// Releases the kernel resources (instance, tracer settings). Idempotent; drop does it too.
    fn teardown(&mut self) -> anyhow::Result<()>;
    /// A message when a traced device has gone away.
    fn device_gone(&self) -> Option<String>;
    /// Records or bytes the backend could not decode (corrupt pages, unknown ops).
    fn skipped(&self) -> u64;
}

/// When to stop besides signals.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    pub duration: Option<Duration>,
    pub max_size_bytes: Option<u64>,
}

/// Why the recording ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    Duration,
    MaxSize,
    Signal(String),
    DeviceGone(String),
    /// The output could not be written (disk full, I/O error).
    WriteFailed(String),
    /// The kernel's trace data could not be read.
    ReadFailed(String),
}

/// Numbers for the status line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    pub elapsed: Duration,
    pub events: u64,
    pub events_per_sec: f64,
    pub bytes_per_sec: f64,
    pub dropped: u64,
    pub file_bytes: u64,
}

/// The outcome of a recording.
#[derive(Clone, Debug)]
pub struct Summary {
    pub reason: StopReason,
    pub elapsed: Duration,
    pub header: TraceHeader,
    pub stats: tracker::TrackerStats,
    pub file_bytes: u64,
    /// Events in complete chunks in the file.
    pub events_written: u64,
    /// Bytes of raw trace data read from the kernel.
    pub kernel_bytes: u64,
    /// Set when the final chunk and end marker could not be written.
    pub write_error: Option<String>,
    /// See [`Source::skipped`].
    pub skipped: u64,
}

/// How the loop paces itself.
#[derive(Clone, Copy, Debug)]
pub struct Pacing {
    /// One read round starts this often. Reading in batches keeps reads to whole pages (a
    /// non-blocking read of a busy CPU's buffer otherwise returns a page with a few events),
    /// while 20 ms of events at 200k requests/s (about 0.5 MiB) is far below the default
    /// 4 MiB-per-CPU buffer.
    pub poll_interval: Duration,
    /// Events are written as a chunk at least this often.
    pub flush_every: Duration,
    /// Records younger than this are held one more round: an event's time is taken just before
    /// the kernel commits it, so a CPU read a moment ago may still produce an older record.
    pub horizon_margin_nanos: u64,
}

impl Default for Pacing {
    fn default() -> Self {
        Pacing {
            poll_interval: Duration::from_millis(20),
            flush_every: Duration::from_secs(1),
            horizon_margin_nanos: 2_000_000,
        }
    }
}

/// Runs the recording loop until a limit, a stop request (`stop_requested` returns a reason),
/// a vanished device or a write error, then drains the kernel buffers, writes everything held
/// and the final header, and tears the source down.
#[allow(clippy::too_many_arguments)]
pub fn record<S: Source, F: OutputFile>(
    source: &mut S,
    sink: &mut Sink<F>,
    tracker: &mut Tracker,
    mut header: TraceHeader,
    limits: Limits,
    pacing: Pacing,
    stop_requested: &mut dyn FnMut() -> Option<String>,
    progress: &mut dyn FnMut(&Progress),
) -> anyhow::Result<Summary> {
    let started = Instant::now();
    let mut records = Vec::new();
    let mut events = Vec::new();
    let mut last_flush = Instant::now();
    let mut last_status = (Instant::now(), 0u64, 0u64);
    let mut kernel_bytes = 0u64;
    let reason = loop {
        if let Some(signal) = stop_requested() {
            break StopReason::Signal(signal);
        }
        if limits.duration.is_some_and(|d| started.elapsed() >= d) {
            break StopReason::Duration;
        }
        if limits
            .max_size_bytes
            .is_some_and(|m| sink.written_bytes() >= m)
        {
            break StopReason::MaxSize;
        }
        if let Some(e) = sink.error() {
            break StopReason::WriteFailed(e.to_string());
        }
        let round_started = Instant::now();
        let horizon = source
            .now_nanos()
            .saturating_sub(pacing.horizon_margin_nanos);
        let read = match source.read(&mut records) {
            Ok(n) => n,
            // Still write what was read and tear down below, then report.
            Err(e) => break StopReason::ReadFailed(format!("{e:#}")),
        };
        kernel_bytes += read;
        tracker.add(&mut records);
        tracker.advance(horizon, &mut |e| events.push(e));
        for e in events.drain(..) {
            sink.push(&e);
        }
        if last_flush.elapsed() >= pacing.flush_every {
            sink.flush();
            last_flush = Instant::now();
            if let Some(gone) = source.device_gone() {
                break StopReason::DeviceGone(gone);
            }
            let (at, events_then, bytes_then) = last_status;
            let secs = at.elapsed().as_secs_f64().max(1e-9);
            progress(&Progress {
                elapsed: started.elapsed(),
                events: sink.events(),
                events_per_sec: (sink.events() - events_then) as f64 / secs,
                bytes_per_sec: (kernel_bytes - bytes_then) as f64 / secs,
                dropped: source.lost_events(),
                file_bytes: sink.written_bytes(),
            });
            last_status = (Instant::now(), sink.events(), kernel_bytes);
        }
        std::thread::sleep(pacing.poll_interval.saturating_sub(round_started.elapsed()));
    };
    // Stop new events, then drain what the kernel still holds.
    let stopped = source.stop();
    while stopped.is_ok() {
        match source.read(&mut records) {
            Ok(0) | Err(_) => break,
            Ok(read) => kernel_bytes += read,
        }
    }
    tracker.add(&mut records);
    tracker.finish(&mut |e| events.push(e));
    for e in events.drain(..) {
        sink.push(&e);
    }
    header.dropped_events = source.lost_events();
    let write_error = sink.finish(&header).err().map(|e| e.to_string());
    source.teardown()?;
    let reason = match (&reason, &write_error) {
        (StopReason::WriteFailed(_), _) | (_, None) => reason,
        (_, Some(e)) => StopReason::WriteFailed(e.clone()),
    };
    Ok(Summary {
        reason,
        elapsed: started.elapsed(),
        header,
        stats: tracker.stats(),
        file_bytes: sink.written_bytes(),
        events_written: sink.events_in_file(),
        kernel_bytes,
        write_error,
        skipped: source.skipped(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer_core::native::{EncodeOptions, NativeDecoder};
    use analyzer_core::{Decoder, Op};
    use sink::tests::FullDisk;
    use tracker::{Kind, TrackerConfig};

    /// A kernel that produces scripted rounds of records on a fake clock.
    struct FakeSource {
        clock: u64,
        rounds: Vec<Vec<Record>>,
        lost: u64,
        stopped: bool,
        torn_down: bool,
        gone_after_round: Option<usize>,
        fail_at_round: Option<usize>,
        round: usize,
    }

    impl Source for FakeSource {
        fn now_nanos(&self) -> u64 {
            self.clock
        }
        fn read(&mut self, out: &mut Vec<Record>) -> anyhow::Result<u64> {
            self.clock += 1_000_000_000;
            if self.fail_at_round == Some(self.round) {
                anyhow::bail!("read error in round {}", self.round);
            }
            // Once stopped, the kernel makes no new events (the drain finds nothing more).
            if self.round < self.rounds.len() && !self.stopped {
                let r = std::mem::take(&mut self.rounds[self.round]);
                self.round += 1;
                let n = r.len() as u64;
                out.extend(r);
                return Ok(n * 64);
            }
            Ok(0)
        }
        fn lost_events(&mut self) -> u64 {
            self.lost
        }
        fn stop(&mut self) -> anyhow::Result<()> {
            self.stopped = true;
            Ok(())
        }
        fn teardown(&mut self) -> anyhow::Result<()> {
            self.torn_down = true;
            Ok(())
        }
        fn skipped(&self) -> u64 {
            0
        }
        fn device_gone(&self) -> Option<String> {
            match self.gone_after_round {
                Some(n) if self.round > n => Some("device loop9 has gone away".into()),
                _ => None,
            }
        }
    }

    fn rounds(n_rounds: u64, per_round: u64) -> Vec<Vec<Record>> {
        (0..n_rounds)
            .map(|round| {
                let mut v = Vec::new();
                for i in 0..per_round {
                    let t = 1_000 + round * 1_000_000_000 + i * 1_000;
                    let offset_bytes = (round * per_round + i) * 4096;
                    let r = Record {
                        time_nanos: t,
                        kind: Kind::Issue,
                        device: 0,
                        offset_bytes,
                        len_bytes: 4096,
                        op: Op::Write,
                        pid: None,
                        bio: false,
                    };
                    v.push(r);
                    v.push(Record {
                        time_nanos: t + 500,
                        kind: Kind::Complete,
                        ..r
                    });
                }
                v
            })
            .collect()
    }

    fn fake(rounds: Vec<Vec<Record>>) -> FakeSource {
        FakeSource {
            clock: 0,
            rounds,
            lost: 3,
            stopped: false,
            torn_down: false,
            gone_after_round: None,
            fail_at_round: None,
            round: 0,
        }
    }

    fn config() -> TrackerConfig {
        TrackerConfig {
            origin_nanos: 0,
            completion_timeout_nanos: 10_000_000_000,
            max_pending: 1 << 20,
            sampling: None,
        }
    }

    fn fast() -> Pacing {
        Pacing {
            poll_interval: Duration::ZERO,
            flush_every: Duration::ZERO,
            horizon_margin_nanos: 0,
        }
    }

    fn decode(bytes: &[u8]) -> (Vec<analyzer_core::IoEvent>, TraceHeader) {
        let mut d = NativeDecoder::new();
        d.push(bytes);
        d.finish();
        let mut out = Vec::new();
        while let Some(e) = d.next_event().expect("decodes") {
            out.push(e);
        }
        (out, d.header().clone())
    }

    #[test]
    fn records_until_stopped_and_writes_everything_with_the_dropped_count() {
        let mut source = fake(rounds(5, 100));
        let header = TraceHeader::new("blocksight-record");
        let mut sink = Sink::new(
            FullDisk {
                data: Vec::new(),
                capacity: usize::MAX,
            },
            &header,
            EncodeOptions::default(),
        )
        .expect("sink");
        let mut tracker = Tracker::new(config());
        let mut calls = 0;
        let mut stop = || {
            calls += 1;
            (calls > 8).then(|| "SIGINT".to_string())
        };
        let mut progress_calls = 0;
        let summary = record(
            &mut source,
            &mut sink,
            &mut tracker,
            header,
            Limits::default(),
            fast(),
            &mut stop,
            &mut |_| progress_calls += 1,
        )
        .expect("records");
        assert_eq!(summary.reason, StopReason::Signal("SIGINT".into()));
        assert!(source.stopped && source.torn_down);
        assert_eq!(summary.events_written, 500);
        assert!(progress_calls > 0);
        let (events, header) = decode(&sink_data(sink));
        assert_eq!(events.len(), 500);
        assert!(events
            .windows(2)
            .all(|w| w[0].time_nanos <= w[1].time_nanos));
        assert!(events.iter().all(|e| e.latency_nanos == Some(500)));
        assert_eq!(header.dropped_events, 3);
    }

    fn sink_data(sink: Sink<FullDisk>) -> Vec<u8> {
        sink.into_file().data
    }

    #[test]
    fn a_full_disk_stops_the_recording_and_keeps_whole_chunks() {
        let mut source = fake(rounds(50, 1_000));
        let header = TraceHeader::new("blocksight-record");
        let options = EncodeOptions {
            chunk_events: 1_000,
            ..EncodeOptions::default()
        };
        let mut sink = Sink::new(
            FullDisk {
                data: Vec::new(),
                capacity: 20_000,
            },
            &header,
            options,
        )
        .expect("sink");
        let mut tracker = Tracker::new(config());
        let summary = record(
            &mut source,
            &mut sink,
            &mut tracker,
            header,
            Limits::default(),
            fast(),
            &mut || None,
            &mut |_| {},
        )
        .expect("records");
        assert!(
            matches!(summary.reason, StopReason::WriteFailed(ref m) if m.contains("No space")),
            "{:?}",
            summary.reason
        );
        assert!(source.torn_down);
        let (events, _) = decode(&sink_data(sink));
        assert!(
            !events.is_empty() && events.len() % 1_000 == 0,
            "{}",
            events.len()
        );
    }

    #[test]
    fn max_size_and_vanished_devices_stop_the_recording() {
        let header = TraceHeader::new("blocksight-record");
        let options = EncodeOptions {
            chunk_events: 100,
            ..EncodeOptions::default()
        };
        let mut source = fake(rounds(50, 1_000));
        let mut sink = Sink::new(
            FullDisk {
                data: Vec::new(),
                capacity: usize::MAX,
            },
            &header,
            options,
        )
        .expect("sink");
        let limits = Limits {
            max_size_bytes: Some(2_000),
            ..Limits::default()
        };
        let summary = record(
            &mut source,
            &mut sink,
            &mut Tracker::new(config()),
            header.clone(),
            limits,
            fast(),
            &mut || None,
            &mut |_| {},
        )
        .expect("records");
        assert_eq!(summary.reason, StopReason::MaxSize, "{summary:?}");
        assert!(source.round < 50, "{}", source.round);

        let mut source = fake(rounds(50, 10));
        source.gone_after_round = Some(3);
        let mut sink = Sink::new(
            FullDisk {
                data: Vec::new(),
                capacity: usize::MAX,
            },
            &header,
            options,
        )
        .expect("sink");
        let summary = record(
            &mut source,
            &mut sink,
            &mut Tracker::new(config()),
            header,
            Limits::default(),
            fast(),
            &mut || None,
            &mut |_| {},
        )
        .expect("records");
        assert!(matches!(summary.reason, StopReason::DeviceGone(_)));
        let (events, _) = decode(&sink_data(sink));
        assert_eq!(events.len(), 40);
    }

    #[test]
    fn a_read_error_still_writes_what_was_read_and_tears_down() {
        let header = TraceHeader::new("blocksight-record");
        let mut source = fake(rounds(10, 10));
        source.fail_at_round = Some(4);
        let mut sink = Sink::new(
            FullDisk {
                data: Vec::new(),
                capacity: usize::MAX,
            },
            &header,
            EncodeOptions::default(),
        )
        .expect("sink");
        let summary = record(
            &mut source,
            &mut sink,
            &mut Tracker::new(config()),
            header,
            Limits::default(),
            fast(),
            &mut || None,
            &mut |_| {},
        )
        .expect("records");
        assert!(matches!(summary.reason, StopReason::ReadFailed(ref m) if m.contains("round 4")));
        assert!(source.torn_down);
        let (events, _) = decode(&sink_data(sink));
        assert_eq!(events.len(), 40);
    }
}
