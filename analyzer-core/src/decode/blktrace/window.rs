//! The merge window of the blktrace decoder: a k-way merge of the inputs' records by timestamp
//! (per-CPU files), then a reorder window of [`REORDER_RECORDS`] records that restores time
//! order within one input (`blktrace -o -` streams), feeding the request layer.

use std::collections::VecDeque;

use super::records::{Record, RecordReader};
use super::requests::Matcher;
use super::{BlktraceStats, REORDER_RECORDS};
use crate::decode::{DecodeError, DecodeOptions, Diagnostics, MultiDecoder};
use crate::event::{IoEvent, TraceHeader};

struct Input {
    reader: RecordReader,
    head: Option<Record>,
    exhausted: bool,
    /// The CPU of this input's first record.
    cpu: Option<u32>,
}

/// Decodes N blktrace inputs (per-CPU files) as one trace: a k-way merge of their records by
/// timestamp, then request/completion matching on the merged stream. See the module docs.
pub struct BlktraceMulti {
    inputs: Vec<Input>,
    matcher: Matcher,
    /// Merged records not yet matched, in time order (see [`REORDER_RECORDS`]).
    window: VecDeque<Record>,
    /// Latest time of a record given to the matcher.
    released_time: u64,
    /// Records taken from the merge so far.
    merged_records: u64,
    /// Some input holds records of more than one CPU (a `blktrace -o -` stream).
    mixed_cpus: bool,
    failed: bool,
    done: bool,
}

impl BlktraceMulti {
    pub fn new(inputs: usize, options: &DecodeOptions) -> BlktraceMulti {
        BlktraceMulti {
            inputs: (0..inputs.max(1))
                .map(|_| Input {
                    reader: RecordReader::default(),
                    head: None,
                    exhausted: false,
                    cpu: None,
                })
                .collect(),
            matcher: Matcher::new(options),
            window: VecDeque::new(),
            released_time: 0,
            merged_records: 0,
            mixed_cpus: false,
            failed: false,
            done: false,
        }
    }

    /// Matching counters (complete once the stream has ended).
    pub fn stats(&self) -> BlktraceStats {
        self.matcher.stats
    }

    /// Takes the next record of the merge (from input `n`) towards the matcher.
    fn merged(&mut self, n: usize, r: Record) {
        self.merged_records += 1;
        let cpu = &mut self.inputs[n].cpu;
        match *cpu {
            None => *cpu = Some(r.cpu),
            Some(c) if c != r.cpu => self.mixed_cpus = true,
            Some(_) => {}
        }
        // Per-CPU files are each in time order, so their merge is too: once the first records
        // showed one CPU per input, the window is not needed and records skip it (it is cold in
        // cache when full). Any input mixing CPUs turns it back on.
        let needed = self.mixed_cpus || self.merged_records <= REORDER_RECORDS as u64;
        if !needed && self.window.is_empty() {
            self.observe(r);
            return;
        }
        self.reorder(r);
        let keep = if needed { REORDER_RECORDS } else { 0 };
        // One record out per record in; two while a window no longer needed drains.
        for _ in 0..2 {
            if self.window.len() <= keep {
                break;
            }
            if let Some(w) = self.window.pop_front() {
                self.observe(w);
            }
        }
    }

    /// Puts `r` into the reorder window, in time order (stable for equal times).
    fn reorder(&mut self, r: Record) {
        if self.window.back().is_none_or(|b| b.time <= r.time) {
            self.window.push_back(r);
        } else {
            let at = self.window.partition_point(|x| x.time <= r.time);
            self.window.insert(at, r);
        }
    }

    fn observe(&mut self, r: Record) {
        if r.time < self.released_time {
            self.matcher.stats.out_of_order += 1;
        }
        self.released_time = self.released_time.max(r.time);
        self.matcher.observe(&r);
    }

    pub(super) fn next(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        if self.failed {
            return Ok(None);
        }
        loop {
            if let Some(e) = self.matcher.pop_ready(self.done) {
                return Ok(Some(e));
            }
            if self.done {
                return Ok(None);
            }
            let mut waiting = false;
            for input in &mut self.inputs {
                if input.head.is_some() || input.exhausted {
                    continue;
                }
                match input.reader.next_record(&mut self.matcher.diagnostics) {
                    Ok(Some(r)) => input.head = Some(r),
                    Ok(None) if input.reader.finished => input.exhausted = true,
                    Ok(None) => waiting = true,
                    Err(e) => {
                        self.failed = true;
                        return Err(e);
                    }
                }
            }
            if waiting {
                return Ok(None);
            }
            let best = self
                .inputs
                .iter()
                .enumerate()
                .filter_map(|(n, i)| i.head.map(|r| (r.time, n)))
                .min();
            match best {
                Some((_, n)) => {
                    if let Some(r) = self.inputs[n].head.take() {
                        self.merged(n, r);
                    }
                }
                None => match self.window.pop_front() {
                    Some(r) => self.observe(r),
                    None => {
                        self.done = true;
                        self.matcher.finish_notes();
                        if let Some(e) = self.matcher.wrong_action() {
                            self.failed = true;
                            return Err(e);
                        }
                    }
                },
            }
        }
    }
}

impl MultiDecoder for BlktraceMulti {
    fn push(&mut self, input: usize, bytes: &[u8]) {
        if let Some(i) = self.inputs.get_mut(input) {
            i.reader.push(bytes);
        }
    }

    fn finish_input(&mut self, input: usize) {
        if let Some(i) = self.inputs.get_mut(input) {
            i.reader.finished = true;
        }
    }

    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        self.next()
    }

    fn wants(&self) -> Option<usize> {
        if self.failed || self.done {
            return None;
        }
        self.inputs
            .iter()
            .position(|i| i.head.is_none() && !i.exhausted && !i.reader.finished)
    }

    fn header(&self) -> &TraceHeader {
        &self.matcher.header
    }

    fn diagnostics(&self) -> &Diagnostics {
        &self.matcher.diagnostics
    }
}
