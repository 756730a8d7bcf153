//! The report's compact trace copy (a native `.bst`, LZ4): the whole trace when it has at most
//! `embed_events` requests, else a block-address sample keeping about that many
//! ([`SampledCopy`], which falls back to the first events when the sample keeps none). When the
//! host knows the trace's size (the web app, from its load), one pass; otherwise the first pass
//! copies and counts, and a second pass samples only when the trace turned out too long.

use serde::{Deserialize, Serialize};

use super::{Job, JobError};
use crate::report::{CopyKind, EmbeddedCopy, SampledCopy, TraceCopy};
use crate::{Diagnostics, IoEvent, TraceHeader};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CopyRequest {
    /// Most events in the copy; 0: no copy.
    pub embed_events: u64,
    /// Events in the trace, when known (fixes the sample rate up front).
    #[serde(default)]
    pub total_events: Option<u64>,
}

enum Stage {
    Whole(Box<TraceCopy>),
    Sampled(Box<SampledCopy>),
}

/// The copy job; its result is `None` without a copy (`embed_events` 0).
pub struct Copy {
    request: CopyRequest,
    stage: Option<Stage>,
    /// Events seen in the first pass.
    seen: u64,
    passes: usize,
    pass: usize,
    header: TraceHeader,
}

impl Copy {
    pub fn new(request: CopyRequest) -> Copy {
        let embed = request.embed_events;
        let stage = match request.total_events {
            _ if embed == 0 => None,
            Some(total) if total > embed => {
                Some(Stage::Sampled(Box::new(SampledCopy::new(embed, total))))
            }
            _ => Some(Stage::Whole(Box::new(TraceCopy::new(embed, None)))),
        };
        Copy {
            passes: if request.total_events.is_some() || embed == 0 {
                1
            } else {
                2
            },
            request,
            stage,
            seen: 0,
            pass: 0,
            header: TraceHeader::default(),
        }
    }
}

impl Job for Copy {
    type Output = Option<EmbeddedCopy>;

    /// Two passes when the total was unknown, down to one once the first pass fits.
    fn passes(&self) -> usize {
        self.passes
    }

    fn begin_pass(&mut self, pass: usize) {
        self.pass = pass;
        if pass == 1 {
            self.stage = Some(Stage::Sampled(Box::new(SampledCopy::new(
                self.request.embed_events,
                self.seen,
            ))));
        }
    }

    fn observe(&mut self, e: &IoEvent) {
        if self.pass == 0 {
            self.seen += 1;
        }
        match self.stage.as_mut() {
            Some(Stage::Whole(c)) => c.push(e),
            Some(Stage::Sampled(c)) => c.push(e),
            None => {}
        }
    }

    fn end_pass(&mut self, header: &TraceHeader, _: &Diagnostics) -> Result<(), JobError> {
        self.header = header.clone();
        if self.pass == 0 && self.passes == 2 {
            if let Some(Stage::Whole(c)) = &self.stage {
                if c.complete() {
                    self.passes = 1;
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Option<EmbeddedCopy>, JobError> {
        match self.stage {
            None => Ok(None),
            Some(Stage::Sampled(c)) => Ok(Some((*c).finish(&self.header))),
            Some(Stage::Whole(c)) => {
                if !c.complete() {
                    let total = self.request.total_events.unwrap_or(self.seen);
                    return Err(JobError::Trace(format!(
                        "the trace now has more than the {total} requests it had when it was analysed; load it again"
                    )));
                }
                let events = c.events();
                Ok(Some(EmbeddedCopy {
                    bytes: (*c).finish(&self.header),
                    events,
                    kind: CopyKind::Whole,
                }))
            }
        }
    }
}
