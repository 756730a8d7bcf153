//! The grid's cells on several threads (feature `threads`, native hosts only: wasm32 has no
//! threads, and the core stays free of them unless a host asks).
//!
//! The host still reads the trace once per pass and calls [`super::Simulate`]'s `observe` in
//! trace order on its own thread; during the last pass the job copies each admitted event into a
//! batch and hands every full batch (shared, not copied) to each worker thread, which feeds it to
//! its own cells. Each cell therefore sees exactly the event sequence it would see alone, so it
//! computes exactly the single-cell result. Memory is bounded: at most [`QUEUED_BATCHES`] batches
//! of [`BATCH_EVENTS`] events wait per worker; a slower worker makes the reading thread wait.

use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

use super::{Finished, Part, BATCH_EVENTS};
use crate::job::JobError;
use crate::IoEvent;

/// Batches waiting per worker before the reader waits.
pub const QUEUED_BATCHES: usize = 4;

type Outcome = Result<Finished, JobError>;

/// Worker threads running parts of the grid, fed the same batches.
pub(super) struct Pool {
    senders: Vec<mpsc::SyncSender<Arc<Vec<IoEvent>>>>,
    handles: Vec<JoinHandle<Outcome>>,
    /// A thread that could not be started (reported at the end of the pass).
    error: Option<JobError>,
    batch: Vec<IoEvent>,
}

impl Pool {
    pub(super) fn start(parts: Vec<Part>) -> Pool {
        let mut pool = Pool {
            senders: Vec::new(),
            handles: Vec::new(),
            error: None,
            batch: Vec::with_capacity(BATCH_EVENTS),
        };
        for part in parts {
            let (tx, rx) = mpsc::sync_channel::<Arc<Vec<IoEvent>>>(QUEUED_BATCHES);
            let spawned = std::thread::Builder::new()
                .name("blocksight-grid".into())
                .spawn(move || -> Outcome {
                    let mut running = part.start()?;
                    for batch in rx {
                        running.observe_batch(&batch);
                    }
                    Ok(running.finish())
                });
            match spawned {
                Ok(handle) => {
                    pool.senders.push(tx);
                    pool.handles.push(handle);
                }
                Err(e) => {
                    pool.error = Some(JobError::invalid(
                        "grid",
                        format!("no thread for the grid's cells: {e}"),
                    ));
                }
            }
        }
        pool
    }

    /// One admitted event of the last pass.
    #[inline]
    pub(super) fn push(&mut self, e: &IoEvent) {
        self.batch.push(*e);
        if self.batch.len() == BATCH_EVENTS {
            self.send();
        }
    }

    fn send(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = Arc::new(std::mem::replace(
            &mut self.batch,
            Vec::with_capacity(BATCH_EVENTS),
        ));
        // A worker that failed has hung up; its error comes from its handle.
        for s in &self.senders {
            let _ = s.send(Arc::clone(&batch));
        }
    }

    /// Flushes the last batch, waits for the workers and returns every part's cells.
    pub(super) fn finish(mut self) -> Result<Vec<Finished>, JobError> {
        self.send();
        self.senders.clear();
        let mut out = Vec::new();
        for h in self.handles {
            match h.join() {
                Ok(r) => out.push(r?),
                Err(_) => return Err(JobError::invalid("grid", "a simulation thread panicked")),
            }
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{SimRun, Simulate, SimulateRequest, SimulateResult};
    use crate::hash::mix64;
    use crate::job::{CacheParams, CacheSize, Job};
    use crate::{Diagnostics, IoEvent, Op, TraceHeader};

    /// Requests of 1–4 lines over a skewed footprint of about `lines` lines, one in four a
    /// write, one in fifty a discard, a millisecond apart (more than a batch of them).
    fn trace(seed: u64, n: u64, lines: u64) -> Vec<IoEvent> {
        (0..n)
            .map(|i| {
                let r = mix64(seed ^ mix64(i));
                // Squaring a uniform draw skews towards low lines: a curve with reuse.
                let u = (r >> 11) as f64 / (1u64 << 53) as f64;
                let line = (u * u * lines as f64) as u64;
                IoEvent {
                    time_nanos: i * 1_000_000,
                    device: (r % 3 == 0) as u32,
                    offset_bytes: line * 4096 + (r >> 60) * 512,
                    len_bytes: 4096 * (1 + (r >> 8) % 4) as u32,
                    op: match r % 50 {
                        0 => Op::Discard,
                        n if n % 4 == 1 => Op::Write,
                        _ => Op::Read,
                    },
                    latency_nanos: None,
                    pid: None,
                }
            })
            .collect()
    }

    fn run(mut job: Simulate, events: &[IoEvent]) -> SimulateResult {
        let header = TraceHeader::default();
        for pass in 0..job.passes() {
            job.begin_pass(pass);
            for e in events {
                job.observe(e);
            }
            job.end_pass(&header, &Diagnostics::default())
                .expect("pass");
        }
        job.finish().expect("result")
    }

    /// Every cell of a grid run on worker threads is exactly the cell simulated alone on the
    /// host's thread: policies (Belady's future included) × sizes (shares of the footprint and
    /// a fixed size), a time window and a warm-up, several thread counts and traces.
    #[test]
    fn every_threaded_cell_equals_its_single_run() {
        let policies = ["lru", "arc", "s3fifo", "sieve", "belady"];
        let sizes = [
            CacheSize::FootprintPercent(1.0),
            CacheSize::FootprintPercent(10.0),
            CacheSize::Bytes(24 << 20),
        ];
        for (seed, threads) in [(1u64, 2usize), (2, 3), (3, 7)] {
            let events = trace(seed, 70_000, 30_000);
            let cache = CacheParams::choose(None, Some("lru"), None, Some("wb"), None, sizes[0])
                .expect("cache");
            let request = SimulateRequest {
                policies: policies.iter().map(|p| p.to_string()).collect(),
                sizes: sizes.to_vec(),
                window_nanos: Some((2_000_000_000, 60_000_000_000)),
                warmup_nanos: 5_000_000_000,
                ..SimulateRequest::new(cache.clone())
            };
            let grid = run(
                Simulate::with_threads(request.clone(), threads).expect("grid"),
                &events,
            );
            assert_eq!(grid.runs.len(), policies.len() * sizes.len());
            let mut i = 0;
            for p in policies {
                for &s in &sizes {
                    let one = SimulateRequest {
                        policies: Vec::new(),
                        sizes: Vec::new(),
                        ..SimulateRequest::new(
                            CacheParams {
                                policy: p.to_string(),
                                ..cache.clone()
                            }
                            .with_size(s),
                        )
                    };
                    let one = SimulateRequest {
                        window_nanos: request.window_nanos,
                        warmup_nanos: request.warmup_nanos,
                        ..one
                    };
                    let alone = run(Simulate::new(one).expect("cell"), &events);
                    let cell: &SimRun = &grid.runs[i];
                    assert_eq!(cell, &alone.runs[0], "{p} at {s:?}, {threads} threads");
                    assert!(cell.result.whole.counts.read.requests > 0);
                    i += 1;
                }
            }
            // The same grid on the host's thread alone.
            let serial = run(Simulate::new(request).expect("grid"), &events);
            assert_eq!(serial.runs, grid.runs);
        }
    }
}
