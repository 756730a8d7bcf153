//! The host decode benchmark's loop (`benches/decode.rs`), exported to JavaScript so that
//! `bench.mjs` can time it in wasm32 under Node: the same synthetic trace, the same encoder
//! options, the same 1 MiB pushes.

use analyzer_core::native::{encode_all, Compression, EncodeOptions, NativeDecoder};
use analyzer_core::Decoder;
use wasm_bindgen::prelude::wasm_bindgen;

#[path = "../../common/synth.rs"]
mod synth;

thread_local! {
    static TRACE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The kept trace's event count, once [`predict`] has counted it.
    static EVENTS: std::cell::RefCell<Option<u64>> = const { std::cell::RefCell::new(None) };
}

/// Builds the synthetic trace of `events` events, encodes it (LZ4 chunks when `lz4`) and keeps
/// it for [`decode`]. Returns the file size in bytes.
#[wasm_bindgen]
pub fn prepare(events: usize, lz4: bool) -> usize {
    let options = EncodeOptions {
        compression: if lz4 {
            Compression::Lz4
        } else {
            Compression::None
        },
        ..EncodeOptions::default()
    };
    let bytes = encode_all(&synth::header(), &synth::events(events), options);
    let len = bytes.len();
    TRACE.with(|t| *t.borrow_mut() = bytes);
    len
}

/// Feeds `bytes` to `decoder` 1 MiB at a time, as the worker's reader does, and gives every
/// decoded event to `f`.
fn feed(bytes: &[u8], decoder: &mut NativeDecoder, mut f: impl FnMut(&analyzer_core::IoEvent)) {
    for chunk in bytes.chunks(1 << 20) {
        decoder.push(chunk);
        while let Ok(Some(e)) = decoder.next_event() {
            f(&e);
        }
    }
    decoder.finish();
    while let Ok(Some(e)) = decoder.next_event() {
        f(&e);
    }
}

/// [`feed`] in the decoder's batches of up to 1,024 events, as the worker's session hands them
/// to its jobs (`Job::observe_batch`).
fn feed_batches(
    bytes: &[u8],
    decoder: &mut NativeDecoder,
    mut f: impl FnMut(&[analyzer_core::IoEvent]),
) {
    let mut batch = Vec::with_capacity(1024);
    let mut drain = |decoder: &mut NativeDecoder| loop {
        batch.clear();
        match decoder.next_events(&mut batch, 1024) {
            Ok(0) | Err(_) => {
                f(&batch);
                break;
            }
            Ok(_) => f(&batch),
        }
    };
    for chunk in bytes.chunks(1 << 20) {
        decoder.push(chunk);
        drain(decoder);
    }
    decoder.finish();
    drain(decoder);
}

/// Runs `job` over `bytes` (a `.bst`), every pass decoded from 1 MiB pushes, as the worker's
/// `run_to_answer` does.
fn run_passes<J: analyzer_core::job::Job>(
    mut job: J,
    bytes: &[u8],
) -> Result<J::Output, analyzer_core::job::JobError> {
    for pass in 0..job.passes() {
        job.begin_pass(pass);
        let mut decoder = NativeDecoder::new();
        feed_batches(bytes, &mut decoder, |events| job.observe_batch(events));
        job.end_pass(decoder.header(), decoder.diagnostics())?;
    }
    job.finish()
}

/// Decodes the prepared trace once, pushing 1 MiB at a time, and returns the events decoded.
#[wasm_bindgen]
pub fn decode() -> f64 {
    TRACE.with(|t| {
        let bytes = t.borrow();
        let mut n = 0u64;
        feed(&bytes, &mut NativeDecoder::new(), |_| n += 1);
        n as f64
    })
}

/// Decodes the kept trace and runs what the web app's worker runs while loading: the load job
/// (`job::load`: `stat` and the workload analysis with their defaults, the decoder's batches
/// handed over as the worker's session does); returns the events analysed.
#[wasm_bindgen]
pub fn analyze() -> f64 {
    use analyzer_core::job::load::{Load, LoadRequest};
    use analyzer_core::job::Job;
    TRACE.with(|t| {
        let bytes = t.borrow();
        let Ok(mut job) = Load::new(LoadRequest::new()) else {
            return f64::NAN;
        };
        job.begin_pass(0);
        let mut decoder = NativeDecoder::new();
        let mut n = 0u64;
        feed_batches(&bytes, &mut decoder, |events| {
            job.observe_batch(events);
            n += events.len() as u64;
        });
        if job
            .end_pass(decoder.header(), decoder.diagnostics())
            .is_err()
        {
            return f64::NAN;
        }
        std::hint::black_box(job.finish().ok());
        n as f64
    })
}

/// Keeps `bytes` (a `.bst` file read by the caller) for [`decode`] and [`simulate`]. Returns
/// its size in bytes.
#[wasm_bindgen]
pub fn load(bytes: Vec<u8>) -> usize {
    let len = bytes.len();
    TRACE.with(|t| *t.borrow_mut() = bytes);
    EVENTS.with(|c| *c.borrow_mut() = None);
    len
}

/// The web app's Cache view job on the kept trace, as its worker runs it: the simulation job
/// (`job::simulate`, the app's defaults: LRU, 4 KiB lines, write-through) of `size_bytes`
/// exactly, or, when `first`, the first stage the worker runs (`SimulateRequest::stages`: the
/// estimate from a sample, with the policies' curves), the footprint and line accesses given
/// as the app knows them from its load; each pass decoded from 1 MiB pushes. Returns the
/// cache's hit ratio.
#[wasm_bindgen]
pub fn simulate(size_bytes: f64, first: bool, footprint_lines: f64, line_accesses: f64) -> f64 {
    use analyzer_core::job::simulate::{Simulate, SimulateRequest};
    use analyzer_core::job::CacheParams;
    let view = SimulateRequest {
        footprint_lines: Some(footprint_lines as u64),
        line_accesses: Some(line_accesses as u64),
        with_curves: true,
        ..SimulateRequest::new(CacheParams {
            size_bytes: size_bytes as u64,
            ..CacheParams::default()
        })
    };
    let request = if first {
        view.stages().swap_remove(0)
    } else {
        SimulateRequest {
            with_curves: false,
            ..view
        }
    };
    let Ok(job) = Simulate::new(request) else {
        return f64::NAN;
    };
    TRACE.with(|t| {
        let bytes = t.borrow();
        match run_passes(job, &bytes) {
            Ok(r) => r.runs[0]
                .result
                .whole
                .ratios
                .line_hit_ratio
                .unwrap_or(f64::NAN),
            Err(_) => f64::NAN,
        }
    })
}

/// The web app's Array view job on the kept trace, as its worker runs it (`job::predict`): the
/// first `layouts` of the four layouts `tests/e2e/array-bench.mjs` asks for, closed loop at 16
/// outstanding I/Os, with an LRU write-through cache tier of `cache_bytes` (none when 0); when
/// `estimate`, the estimate the view shows first (`PredictRequest::estimate`). Each pass decoded
/// from 1 MiB pushes. Returns the first layout's IOPS with the cache (without one, without it).
#[wasm_bindgen]
pub fn predict(layouts: usize, cache_bytes: f64, estimate: bool) -> f64 {
    use analyzer_core::job::predict::{ArrayParams, Predict, PredictRequest};
    use analyzer_core::job::CacheParams;
    let layout = |level: &str, disks, disk: &str, chunk_bytes| ArrayParams {
        level: level.into(),
        disks,
        disk: disk.into(),
        chunk_bytes,
        ..ArrayParams::default()
    };
    let all = [
        layout("raid5", 6, "sas-10k", 64 << 10),
        layout("raid10", 8, "nvme", 128 << 10),
        layout("raid6", 12, "sata-7k2", 256 << 10),
        layout("raid0", 4, "sata-ssd", 64 << 10),
    ];
    let cache = (cache_bytes > 0.0).then(|| CacheParams {
        size_bytes: cache_bytes as u64,
        ..CacheParams::default()
    });
    let mut request = PredictRequest::new(all[..layouts.min(4)].to_vec(), cache, 16);
    TRACE.with(|t| {
        let bytes = t.borrow();
        if estimate {
            // The events the view knows from its load (counted once per trace).
            let n = EVENTS.with(|c| {
                *c.borrow_mut().get_or_insert_with(|| {
                    let mut decoder = NativeDecoder::new();
                    let mut n = 0u64;
                    feed_batches(&bytes, &mut decoder, |events| n += events.len() as u64);
                    n
                })
            });
            match request.estimate(n) {
                Some(r) => request = r,
                None => return f64::NAN,
            }
        }
        let Ok(job) = Predict::new(request) else {
            return f64::NAN;
        };
        match run_passes(job, &bytes) {
            Ok(r) => r.configs.first().map_or(f64::NAN, |c| {
                c.with_cache.as_ref().unwrap_or(&c.without_cache).iops
            }),
            Err(_) => f64::NAN,
        }
    })
}
