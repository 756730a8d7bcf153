//! One trace load, without any browser API: bytes in (in whatever chunks the reader has), engine
//! results out. The worker drives it from `File.slice` chunks; tests drive it from byte slices.
//!
//! Stages: the first [`SNIFF_BYTES`] of the file are held back to guess the compression (gzip,
//! zstd) and the format, then everything streams through the decompressing decoder into the
//! load job (`analyzer_core::job::load`: `stat` and the workload analysis, within the window),
//! or, for an events-only session, only to the caller's sink (another job). Memory is bounded by
//! the sniff buffer, the decoder's own bounded buffers and the jobs' bounded state.

use analyzer_core::analysis::timeline::TimelineReport;
use analyzer_core::analysis::{AnalysisPart, AnalysisReport};
use analyzer_core::compress::{Codec, Decompressing, Decompressor};
use analyzer_core::decode::DecodeOptions;
use analyzer_core::job::load::{Load, LoadHotResult, LoadRequest};
use analyzer_core::job::Job;
use analyzer_core::stat::StatSummary;
use analyzer_core::{Decoder, Diagnostics, IoEvent, TraceFormat, TraceHeader};

use crate::error::{LoadError, LoadErrorKind};

/// Events the decoder hands over at once (as the CLI's read loop does).
const DECODE_BATCH_EVENTS: usize = 1024;

/// Decompressed bytes the format sniffers look at (the CLI's amount).
pub const SNIFF_BYTES: usize = 64 * 1024;

/// Most compressed bytes held back while waiting for [`SNIFF_BYTES`] of decompressed data (a
/// zstd decoder can need a megabyte or more before its first output).
pub const MAX_HEAD_BYTES: usize = 16 << 20;

/// Everything a finished load produced.
#[derive(Debug)]
pub struct Finished {
    pub format: TraceFormat,
    pub codec: Codec,
    pub header: TraceHeader,
    pub diagnostics: Diagnostics,
    /// The load job's results (of no events for an events-only session).
    pub stat: StatSummary,
    pub analysis: AnalysisReport,
}

impl Finished {
    /// What the UI shows for this load of `file_name` (`file_bytes` long).
    pub fn into_results(self, file_name: String, file_bytes: u64) -> super::protocol::Results {
        super::protocol::Results {
            file_name,
            file_bytes,
            format: self.format.name().into(),
            format_description: self.format.description().into(),
            compression: self.codec.name().into(),
            host: self.header.host.clone(),
            stat: self.stat,
            analysis: self.analysis,
            embedded_sample_rate: None,
        }
    }
}

/// A trace being loaded.
pub struct Session {
    options: DecodeOptions,
    forced_format: Option<TraceFormat>,
    /// Input held back until the format is known.
    head: Vec<u8>,
    /// Decompresses the held-back input for sniffing (a second decompressor in the decoder
    /// then reads everything from the start).
    sniffer: Decompressor,
    /// The decompressed start of the input.
    plain_head: Vec<u8>,
    decoder: Option<(TraceFormat, Decompressing<Box<dyn Decoder>>)>,
    codec: Codec,
    /// The load job (`None` when only the events are wanted, for another job).
    load: Option<Load>,
    /// `stat` and hot data's share for a `part: Rest` load, counted elsewhere
    /// ([`Session::join_hot`]).
    hot: Option<LoadHotResult>,
    /// Events decoded.
    events: u64,
    /// The decoder's latest batch of events (kept to reuse its memory).
    batch: Vec<IoEvent>,
    /// Bytes pushed so far (as read from the file, before decompression).
    input_bytes: u64,
}

impl Session {
    /// `forced_format` skips sniffing, as `--format` does on the command line.
    pub fn new(forced_format: Option<TraceFormat>, options: DecodeOptions) -> Session {
        Session {
            options,
            forced_format,
            head: Vec::new(),
            sniffer: Decompressor::new(),
            plain_head: Vec::new(),
            decoder: None,
            codec: Codec::None,
            load: Load::new(LoadRequest::app()).ok(),
            hot: None,
            events: 0,
            batch: Vec::with_capacity(DECODE_BATCH_EVENTS),
            input_bytes: 0,
        }
    }

    /// Only decodes: events go to the sink of [`Session::push_with`], no analyses run.
    pub fn events_only(mut self) -> Session {
        self.load = None;
        self
    }

    /// Restricts the analyses to `[start, end)` nanoseconds after the first event (the brush on
    /// the timeline), as the load job cuts it, and computes only `part` of them: with
    /// [`AnalysisPart::Rest`], `stat` and hot data counted elsewhere must be given to
    /// [`Session::join_hot`] before [`Session::finish`].
    pub fn with_request(mut self, window_nanos: Option<(u64, u64)>, part: AnalysisPart) -> Session {
        if self.load.is_some() {
            self.load = Load::new(LoadRequest {
                part,
                ..Session::load_request(window_nanos)
            })
            .ok();
        }
        self
    }

    /// The load's request for `window_nanos` (a second worker's `LoadHot` takes it as it is).
    pub fn load_request(window_nanos: Option<(u64, u64)>) -> LoadRequest {
        LoadRequest {
            window_nanos,
            ..LoadRequest::app()
        }
    }

    /// `stat` and hot data's share of a `part: Rest` load (the `LoadHot` of
    /// [`Session::load_request`]).
    pub fn join_hot(&mut self, hot: LoadHotResult) {
        self.hot = Some(hot);
    }

    /// The format, once detected.
    pub fn format(&self) -> Option<TraceFormat> {
        self.decoder.as_ref().map(|(f, _)| *f)
    }

    /// Events analysed so far (in the window), or decoded for an events-only session.
    pub fn events(&self) -> u64 {
        self.load.as_ref().map_or(self.events, Load::events)
    }

    pub fn input_bytes(&self) -> u64 {
        self.input_bytes
    }

    /// The load over time of the events analysed so far (`None` for an events-only session or
    /// before the first event).
    pub fn timeline_so_far(&mut self) -> Option<TimelineReport> {
        self.load.as_mut()?.timeline_so_far()
    }

    /// Pushes the next chunk of the file.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
        self.push_with(bytes, &mut |_: &[IoEvent]| {})
    }

    /// Pushes the next chunk of the file; every analysed event is also given to `sink`, in
    /// the decoder's batches.
    pub fn push_with(
        &mut self,
        bytes: &[u8],
        sink: &mut dyn FnMut(&[IoEvent]),
    ) -> Result<(), LoadError> {
        self.input_bytes += bytes.len() as u64;
        if self.decoder.is_none() {
            self.head.extend_from_slice(bytes);
            self.sniffer.push(bytes);
            self.fill_plain_head();
            if self.plain_head.len() < SNIFF_BYTES && self.head.len() < MAX_HEAD_BYTES {
                return Ok(());
            }
            return self.start_decoder(sink);
        }
        self.feed(bytes, sink)
    }

    /// Decompresses held-back input until [`SNIFF_BYTES`] are known. A decompression error
    /// stops sniffing here; the decoder reports it with its offset.
    fn fill_plain_head(&mut self) {
        while self.plain_head.len() < SNIFF_BYTES {
            match self.sniffer.read(&mut self.plain_head) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }

    fn start_decoder(&mut self, sink: &mut dyn FnMut(&[IoEvent])) -> Result<(), LoadError> {
        self.codec = self.sniffer.codec().unwrap_or(Codec::None);
        let sniffed = analyzer_core::format::sniff(
            &self.plain_head[..self.plain_head.len().min(SNIFF_BYTES)],
        );
        // Sniffing is done: free its buffers.
        self.sniffer = Decompressor::new();
        self.plain_head = Vec::new();
        let format = match self.forced_format.or(sniffed) {
            Some(f) => f,
            None => {
                let what = match self.codec {
                    Codec::None => describe_head(&self.head),
                    c => format!(
                        "It is {}-compressed, but what is inside is not a trace format it knows.",
                        c.name()
                    ),
                };
                return Err(LoadError::new(LoadErrorKind::UnknownFormat, what));
            }
        };
        let decoder = format
            .decoder(&self.options)
            .map_err(|e| LoadError::from_decode(&e))?;
        self.decoder = Some((format, Decompressing::new(decoder)));
        let head = std::mem::take(&mut self.head);
        self.feed(&head, sink)
    }

    fn feed(&mut self, bytes: &[u8], sink: &mut dyn FnMut(&[IoEvent])) -> Result<(), LoadError> {
        let Some((_, decoder)) = self.decoder.as_mut() else {
            return Ok(());
        };
        if !bytes.is_empty() {
            decoder.push(bytes);
        }
        self.events += drain(decoder, self.load.as_mut(), &mut self.batch, sink)?;
        Ok(())
    }

    /// Ends the input and returns the results.
    pub fn finish(self) -> Result<Finished, LoadError> {
        self.finish_with(&mut |_: &[IoEvent]| {})
    }

    /// Ends the input, giving the last events to `sink`, and returns the results.
    pub fn finish_with(mut self, sink: &mut dyn FnMut(&[IoEvent])) -> Result<Finished, LoadError> {
        if self.decoder.is_none() {
            if self.head.is_empty() {
                return Err(LoadError::new(LoadErrorKind::Empty, "The file is empty."));
            }
            self.sniffer.finish();
            self.fill_plain_head();
            self.start_decoder(sink)?;
        }
        let Some((format, decoder)) = self.decoder.as_mut() else {
            return Err(LoadError::new(
                LoadErrorKind::UnknownFormat,
                describe_head(&self.head),
            ));
        };
        let format = *format;
        decoder.finish();
        self.events += drain(decoder, self.load.as_mut(), &mut self.batch, sink)?;
        let header = decoder.header().clone();
        let diagnostics = decoder.diagnostics().clone();
        if self.events() == 0 {
            let why = match diagnostics.reasons.first() {
                Some(r) => format!(
                    "It was read as {}; {} records were skipped, the first because: {r}",
                    format.description(),
                    diagnostics.skipped_records
                ),
                None => format!("It was read as {}.", format.description()),
            };
            return Err(LoadError::new(LoadErrorKind::Empty, why));
        }
        // An events-only session's summaries are of no events (the caller's job has them).
        let mut load = match self.load.take() {
            Some(l) => Ok(l),
            None => Load::new(LoadRequest::app()),
        }
        .map_err(|e| LoadError::new(LoadErrorKind::Read, e.to_string()))?;
        if let Some(hot) = self.hot.take() {
            load.join_hot(hot);
        }
        let done = load
            .end_pass(&header, &diagnostics)
            .and_then(|()| load.finish())
            .map_err(|e| LoadError::new(LoadErrorKind::Read, e.to_string()))?;
        let analysis = done.analysis.ok_or_else(|| {
            LoadError::new(LoadErrorKind::Read, "the load ran without the analysis")
        })?;
        Ok(Finished {
            format,
            codec: self.codec,
            header,
            diagnostics,
            stat: done.stat,
            analysis,
        })
    }
}

/// Hands every event `decoder` has ready to the load job and to `sink`, a batch at a time (no
/// call through the decoder objects per event; `batch` is the reused buffer), and returns how
/// many; on a decoding error, the events decoded before it are handed over first.
fn drain(
    decoder: &mut Decompressing<Box<dyn Decoder>>,
    mut load: Option<&mut Load>,
    batch: &mut Vec<IoEvent>,
    sink: &mut dyn FnMut(&[IoEvent]),
) -> Result<u64, LoadError> {
    let mut events = 0;
    loop {
        batch.clear();
        let read = decoder.next_events(batch, DECODE_BATCH_EVENTS);
        if let Some(l) = load.as_deref_mut() {
            l.observe_batch(batch);
        }
        sink(batch);
        events += batch.len() as u64;
        match read {
            Ok(0) => return Ok(events),
            Ok(_) => {}
            Err(e) => return Err(LoadError::from_decode(&e)),
        }
    }
}

/// Describes the first bytes of an unrecognised input, printable characters only, so the user can
/// see what they dropped (an HTML page, a PDF, a zip).
fn describe_head(head: &[u8]) -> String {
    let shown: String = head
        .iter()
        .take(24)
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        })
        .collect();
    format!("Its first bytes are \"{shown}\".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn unknown_input_is_a_plain_error() {
        let mut s = Session::new(None, DecodeOptions::default());
        s.push(b"%PDF-1.7 not a trace")
            .map_err(|e| e.plain_words())
            .ok();
        let err = s
            .finish()
            .err()
            .map(|e| e.plain_words())
            .unwrap_or_default();
        assert!(err.contains("does not recognise"), "{err}");
        assert!(err.contains("%PDF-1.7"), "{err}");
    }

    /// The bundled real sample (PostgreSQL pgbench, tests/data/sample), as the worker reads it:
    /// in 4 MiB slices, here also in odd-sized ones.
    use crate::test_support::SAMPLE_ZST;
    const SAMPLE_STAT: &str = include_str!("../../../tests/data/sample/pgbench.stat.json");

    fn load(bytes: &[u8], chunk: usize) -> Finished {
        let mut s = Session::new(None, DecodeOptions::default());
        for c in bytes.chunks(chunk) {
            s.push(c)
                .map_err(|e| e.plain_words())
                .expect("sample loads");
        }
        assert_eq!(s.input_bytes(), bytes.len() as u64);
        s.finish()
            .map_err(|e| e.plain_words())
            .expect("sample finishes")
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn real_sample_matches_blocksight_stat() {
        let expected: StatSummary = serde_json::from_str(SAMPLE_STAT).expect("stat json");
        // The zstd-compressed tracefs text, pushed in 1 MiB + 7 byte slices.
        let text = load(SAMPLE_ZST, (1 << 20) + 7);
        assert_eq!(text.format, TraceFormat::TracefsText);
        assert_eq!(text.codec, Codec::Zstd);
        assert_eq!(text.stat.events, expected.events);
        assert_eq!(text.stat.read_bytes, expected.read_bytes);
        assert_eq!(text.stat.write_bytes, expected.write_bytes);
        assert_eq!(text.stat.footprint_blocks, expected.footprint_blocks);
        assert_eq!(text.stat.size_histogram, expected.size_histogram);
        assert_eq!(text.analysis.summary.events, expected.events);
    }

    /// The same trace re-encoded as a native .bst (what `blocksight report` embeds) reads back
    /// to the same numbers.
    fn sample_native() -> Vec<u8> {
        // Made once: the browser runs every test in one page, within the runner's time limit.
        static NATIVE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        NATIVE.get_or_init(make_sample_native).clone()
    }

    fn make_sample_native() -> Vec<u8> {
        let (events, header) = crate::test_support::sample_events(usize::MAX);
        crate::test_support::native(&header, &events)
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn native_copy_matches_the_text_trace() {
        let expected: StatSummary = serde_json::from_str(SAMPLE_STAT).expect("stat json");
        let native = load(&sample_native(), 4 << 20);
        assert_eq!(native.format, TraceFormat::Native);
        assert_eq!(native.stat.events, expected.events);
        assert_eq!(native.stat.footprint_blocks, expected.footprint_blocks);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_time_window_keeps_only_its_requests() {
        let whole: StatSummary = serde_json::from_str(SAMPLE_STAT).expect("stat json");
        let mut s = Session::new(None, DecodeOptions::default())
            .with_request(Some((10_000_000_000, 20_000_000_000)), AnalysisPart::Whole);
        s.push(SAMPLE_ZST)
            .map_err(|e| e.plain_words())
            .expect("loads");
        let part = s.finish().map_err(|e| e.plain_words()).expect("finishes");
        assert!(part.stat.events > 0 && part.stat.events < whole.events);
        assert!(part.stat.duration_nanos <= 10_000_000_000);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_live_timeline_grows_to_the_final_one() {
        let native = sample_native();
        let mut s = Session::new(None, DecodeOptions::default());
        assert!(s.timeline_so_far().is_none(), "nothing read yet");
        let mut seen = Vec::new();
        for chunk in native.chunks(native.len() / 5 + 1) {
            s.push(chunk).map_err(|e| e.plain_words()).expect("loads");
            if let Some(t) = s.timeline_so_far() {
                let requests: u64 = t.bins.iter().map(|b| b.reads + b.writes + b.other).sum();
                assert_eq!(
                    requests,
                    s.events(),
                    "every request read so far is in a bin"
                );
                seen.push(requests);
            }
        }
        assert!(
            seen.len() >= 2 && seen.windows(2).all(|w| w[0] <= w[1]),
            "{seen:?}"
        );
        let mut events_only = Session::new(None, DecodeOptions::default()).events_only();
        events_only
            .push(&native)
            .map_err(|e| e.plain_words())
            .expect("loads");
        assert!(events_only.timeline_so_far().is_none());
        // The decoder holds up to one time-order window of records until the input ends
        // (decode::order), so the finished timeline has those last records too: the live one is
        // the same bins with counts no larger, and the finished one counts every request.
        let before_finish = s.timeline_so_far().expect("timeline");
        let done = s.finish().map_err(|e| e.plain_words()).expect("finishes");
        let done_t = &done.analysis.timeline;
        assert_eq!(done_t.origin_nanos, before_finish.origin_nanos);
        assert_eq!(done_t.bin_nanos, before_finish.bin_nanos);
        assert!(done_t.bins.len() >= before_finish.bins.len());
        for (live, last) in before_finish.bins.iter().zip(&done_t.bins) {
            assert_eq!(live.start_nanos, last.start_nanos);
            assert!(live.reads <= last.reads && live.writes <= last.writes);
        }
        let total: u64 = done_t
            .bins
            .iter()
            .map(|b| b.reads + b.writes + b.other)
            .sum();
        assert_eq!(total, done.stat.events);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_cut_native_file_reports_the_byte_offset() {
        // Corrupt a byte in the middle of the sample: its chunk fails its CRC.
        let mut bytes = sample_native();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0xff;
        let mut s = Session::new(None, DecodeOptions::default());
        let pushed = s.push(&bytes);
        let result = pushed.and_then(|()| s.finish().map(|_| ()));
        match result {
            Err(e) => {
                assert!(
                    e.byte_offset.is_some() || e.line.is_some() || !e.detail.is_empty(),
                    "{e:?}"
                );
                assert!(
                    e.plain_words().contains("byte") || e.plain_words().contains("Details"),
                    "{}",
                    e.plain_words()
                );
            }
            Ok(()) => {
                // Some decoders skip a damaged chunk and count it instead of failing.
            }
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn empty_input_is_a_plain_error() {
        let s = Session::new(None, DecodeOptions::default());
        let err = s.finish().err().map(|e| e.kind);
        assert_eq!(err, Some(LoadErrorKind::Empty));
    }
}
