//! The report's compact trace copy (a native `.bst`, LZ4): the whole trace when it has at most
//! `embed_events` requests, else a spatial sample by block address keeping about that many
//! (`report::sample_threshold`). When the host knows the trace's size (the web app, from its
//! load), one pass; otherwise the first pass copies and counts, and a second pass samples only
//! when the trace turned out too long.

use serde::{Deserialize, Serialize};

use super::{Job, JobError};
use crate::report::{sample_threshold, TraceCopy};
use crate::{Diagnostics, IoEvent, TraceHeader};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CopyRequest {
    /// Most events in the copy; 0: no copy.
    pub embed_events: u64,
    /// Events in the trace, when known (fixes the sample rate up front).
    #[serde(default)]
    pub total_events: Option<u64>,
}

/// The copy and how it was made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CopyResult {
    /// The `.bst` bytes (empty without a copy).
    pub trace: Vec<u8>,
    /// The share of requests kept, when the copy is a spatial sample.
    pub sample_rate: Option<f64>,
    pub events: u64,
}

/// Sampling keeps about `embed_events` (more when the I/O piles onto a few sampled blocks); the
/// limit bounds the copy's memory whatever the trace.
pub const SAMPLED_LIMIT_FACTOR: u64 = 4;

/// The copy job.
pub struct Copy {
    request: CopyRequest,
    copy: Option<TraceCopy>,
    /// Events seen in the first pass (when the total was unknown).
    seen: u64,
    passes: usize,
    pass: usize,
    threshold: Option<u64>,
    header: TraceHeader,
}

impl Copy {
    pub fn new(request: CopyRequest) -> Copy {
        let (copy, threshold) = match request.total_events {
            Some(total) => {
                let threshold = sample_threshold(request.embed_events, total);
                let limit = match threshold {
                    None => request.embed_events,
                    Some(_) => request.embed_events.saturating_mul(SAMPLED_LIMIT_FACTOR),
                };
                (TraceCopy::new(limit, threshold), threshold)
            }
            None => (TraceCopy::new(request.embed_events, None), None),
        };
        Copy {
            passes: if request.total_events.is_some() || request.embed_events == 0 {
                1
            } else {
                2
            },
            request,
            copy: Some(copy),
            seen: 0,
            pass: 0,
            threshold,
            header: TraceHeader::default(),
        }
    }
}

impl Job for Copy {
    type Output = CopyResult;

    /// Two passes when the total was unknown, down to one once the first pass fits.
    fn passes(&self) -> usize {
        self.passes
    }

    fn begin_pass(&mut self, pass: usize) {
        self.pass = pass;
        if pass == 1 {
            self.threshold = sample_threshold(self.request.embed_events, self.seen);
            self.copy = Some(TraceCopy::new(
                self.request
                    .embed_events
                    .saturating_mul(SAMPLED_LIMIT_FACTOR),
                self.threshold,
            ));
        }
    }

    fn observe(&mut self, e: &IoEvent) {
        if self.pass == 0 {
            self.seen += 1;
        }
        if let Some(c) = self.copy.as_mut() {
            c.push(e);
        }
    }

    fn end_pass(&mut self, header: &TraceHeader, _: &Diagnostics) -> Result<(), JobError> {
        self.header = header.clone();
        if self.pass == 0 && self.passes == 2 && self.copy.as_ref().is_some_and(TraceCopy::complete)
        {
            self.passes = 1;
        }
        Ok(())
    }

    fn finish(self) -> Result<CopyResult, JobError> {
        let Some(copy) = self.copy else {
            return Err(JobError::invalid("copy", "the trace was not read"));
        };
        if self.request.embed_events == 0 {
            return Ok(CopyResult {
                trace: Vec::new(),
                sample_rate: None,
                events: 0,
            });
        }
        if !copy.complete() {
            let total = self.request.total_events.unwrap_or(self.seen);
            return Err(JobError::Trace(match self.threshold {
                None => format!(
                    "the trace now has more than the {total} requests it had when it was analysed; load it again"
                ),
                Some(_) => format!(
                    "the I/O is so concentrated on a few blocks that a block sample still holds more than {} requests; `blocksight report --embed-events N` writes a smaller copy",
                    self.request.embed_events.saturating_mul(SAMPLED_LIMIT_FACTOR)
                ),
            }));
        }
        let sample_rate = copy.sample_rate();
        let events = copy.events();
        Ok(CopyResult {
            trace: copy.finish(&self.header),
            sample_rate,
            events,
        })
    }
}
