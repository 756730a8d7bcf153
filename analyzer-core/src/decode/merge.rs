//! Merges several single-input decoders into one time-ordered stream with one device table.

use super::{DecodeError, Decoder, Diagnostics, MultiDecoder};
use crate::event::{IoEvent, TraceHeader};

/// A k-way merge by `time_nanos` over independent decoders. Each input's events must be in time
/// order (as every supported format writes them); ties go to the lower input index. Devices are
/// unified by name and `major:minor`.
pub struct Merge {
    inputs: Vec<Input>,
    header: TraceHeader,
    diagnostics: Diagnostics,
    failed: bool,
}

struct Input {
    decoder: Box<dyn Decoder>,
    head: Option<IoEvent>,
    finished: bool,
    /// Decoder reported Ok(None) after finish: nothing more will come.
    exhausted: bool,
    /// Device index in this input's header -> index in the merged header.
    device_map: Vec<u32>,
}

impl Merge {
    pub fn new(decoders: Vec<Box<dyn Decoder>>) -> Merge {
        let source_format = decoders
            .first()
            .map(|d| d.header().source_format.clone())
            .unwrap_or_default();
        Merge {
            inputs: decoders
                .into_iter()
                .map(|decoder| Input {
                    decoder,
                    head: None,
                    finished: false,
                    exhausted: false,
                    device_map: Vec::new(),
                })
                .collect(),
            header: TraceHeader::new(source_format),
            diagnostics: Diagnostics::default(),
            failed: false,
        }
    }

    fn fill_heads(&mut self) -> Result<(), DecodeError> {
        for input in &mut self.inputs {
            if input.head.is_some() || input.exhausted {
                continue;
            }
            match input.decoder.next_event()? {
                Some(mut e) => {
                    e.device = map_device(&mut self.header, input, e.device);
                    input.head = Some(e);
                }
                None if input.finished => {
                    input.exhausted = true;
                    merge_header(&mut self.header, input.decoder.header());
                    self.diagnostics.merge(input.decoder.diagnostics());
                }
                None => {}
            }
        }
        Ok(())
    }
}

fn map_device(header: &mut TraceHeader, input: &mut Input, device: u32) -> u32 {
    let idx = device as usize;
    while input.device_map.len() <= idx {
        let i = input.device_map.len();
        let info = input
            .decoder
            .header()
            .devices
            .get(i)
            .cloned()
            .unwrap_or_default();
        let merged = match info.dev_t() {
            Some((maj, min)) => {
                let m = header.device_index_by_dev_t(maj, min);
                let d = &mut header.devices[m as usize];
                if d.name == format!("{maj},{min}") {
                    d.name = info.name.clone();
                }
                if d.size_bytes.is_none() {
                    d.size_bytes = info.size_bytes;
                }
                m
            }
            None => {
                let m = header.device_index(&info.name);
                if header.devices[m as usize].size_bytes.is_none() {
                    header.devices[m as usize].size_bytes = info.size_bytes;
                }
                m
            }
        };
        input.device_map.push(merged);
    }
    input.device_map[idx]
}

/// Takes the trace-wide facts of one input's header into the merged header.
fn merge_header(into: &mut TraceHeader, from: &TraceHeader) {
    into.dropped_events += from.dropped_events;
    if into.start_unix_nanos.is_none() {
        into.start_unix_nanos = from.start_unix_nanos;
    }
    if into.host.is_none() {
        into.host.clone_from(&from.host);
    }
    if into.tool_version.is_none() {
        into.tool_version.clone_from(&from.tool_version);
    }
    if into.sampling.is_none() {
        into.sampling = from.sampling;
    }
    if into.source_format.is_empty() {
        into.source_format.clone_from(&from.source_format);
    }
}

impl MultiDecoder for Merge {
    fn push(&mut self, input: usize, bytes: &[u8]) {
        if let Some(i) = self.inputs.get_mut(input) {
            i.decoder.push(bytes);
        }
    }

    fn finish_input(&mut self, input: usize) {
        if let Some(i) = self.inputs.get_mut(input) {
            i.finished = true;
            i.decoder.finish();
        }
    }

    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        if self.failed {
            return Ok(None);
        }
        if let Err(e) = self.fill_heads() {
            self.failed = true;
            return Err(e);
        }
        // An input that is neither exhausted nor holding an event could still produce an earlier
        // event: wait for it.
        if self.inputs.iter().any(|i| i.head.is_none() && !i.exhausted) {
            return Ok(None);
        }
        let best = self
            .inputs
            .iter()
            .enumerate()
            .filter_map(|(n, i)| i.head.map(|e| (e.time_nanos, n)))
            .min();
        Ok(best.and_then(|(_, n)| self.inputs[n].head.take()))
    }

    fn wants(&self) -> Option<usize> {
        if self.failed {
            return None;
        }
        self.inputs
            .iter()
            .position(|i| i.head.is_none() && !i.finished)
    }

    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }
}

/// Adapts one single-input decoder to [`MultiDecoder`] without a merge's overhead.
pub struct Single<D: Decoder> {
    decoder: D,
    finished: bool,
    starved: bool,
}

impl<D: Decoder> Single<D> {
    pub fn new(decoder: D) -> Single<D> {
        Single {
            decoder,
            finished: false,
            starved: true,
        }
    }
}

impl<D: Decoder> MultiDecoder for Single<D> {
    fn push(&mut self, _input: usize, bytes: &[u8]) {
        self.decoder.push(bytes);
        self.starved = false;
    }
    fn finish_input(&mut self, _input: usize) {
        self.finished = true;
        self.decoder.finish();
    }
    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        let e = self.decoder.next_event();
        if matches!(e, Ok(None)) {
            self.starved = true;
        }
        e
    }
    fn next_events(&mut self, out: &mut Vec<IoEvent>, max: usize) -> Result<usize, DecodeError> {
        let n = self.decoder.next_events(out, max);
        if matches!(n, Ok(0)) && max > 0 {
            self.starved = true;
        }
        n
    }
    fn wants(&self) -> Option<usize> {
        (self.starved && !self.finished).then_some(0)
    }
    fn header(&self) -> &TraceHeader {
        self.decoder.header()
    }
    fn diagnostics(&self) -> &Diagnostics {
        self.decoder.diagnostics()
    }
}
