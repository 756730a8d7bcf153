//! [`super::Load::with_threads`]'s thread (feature `threads`, native hosts only): hot data's
//! share of the load and `stat` ([`super::LoadHot`]) fed the admitted events in batches through
//! a bounded channel, the one other place besides `job/simulate/threads.rs` where the core
//! starts a thread.

use std::sync::mpsc;
use std::thread::JoinHandle;

use super::{LoadHot, LoadHotResult};
use crate::job::JobError;
use crate::{Diagnostics, IoEvent, TraceHeader};

/// Events sent to the thread at once, and batches queued before the reader waits: memory
/// stays bounded (a few MB) whichever side is slower.
const BATCH_EVENTS: usize = 16 * 1024;
const QUEUED_BATCHES: usize = 4;

enum Message {
    Events(Vec<IoEvent>),
    End(Box<(TraceHeader, Diagnostics)>),
}

pub(super) struct HotThread {
    tx: mpsc::SyncSender<Message>,
    handle: JoinHandle<Option<LoadHotResult>>,
    batch: Vec<IoEvent>,
}

impl HotThread {
    /// `None` when no thread could be started (the load then counts hot data itself).
    pub(super) fn start(mut hot: LoadHot) -> Option<HotThread> {
        let (tx, rx) = mpsc::sync_channel::<Message>(QUEUED_BATCHES);
        let handle = std::thread::Builder::new()
            .name("blocksight-hot".into())
            .spawn(move || {
                for message in rx {
                    match message {
                        Message::Events(events) => {
                            for chunk in events.chunks(super::LOAD_BATCH_EVENTS) {
                                hot.take(chunk);
                            }
                        }
                        Message::End(end) => {
                            return Some(hot.end(&end.0, &end.1));
                        }
                    }
                }
                None
            })
            .ok()?;
        Some(HotThread {
            tx,
            handle,
            batch: Vec::with_capacity(BATCH_EVENTS),
        })
    }

    /// Admitted events, in order.
    pub(super) fn push(&mut self, events: &[IoEvent]) {
        self.batch.extend_from_slice(events);
        if self.batch.len() >= BATCH_EVENTS {
            let full = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH_EVENTS));
            // A thread that hung up has panicked; `finish` reports it.
            let _ = self.tx.send(Message::Events(full));
        }
    }

    /// Sends the rest and the end of the pass, and waits for hot data's share and `stat`.
    pub(super) fn finish(
        self,
        header: &TraceHeader,
        diagnostics: &Diagnostics,
    ) -> Result<LoadHotResult, JobError> {
        let HotThread { tx, handle, batch } = self;
        let _ = tx.send(Message::Events(batch));
        let _ = tx.send(Message::End(Box::new((
            header.clone(),
            diagnostics.clone(),
        ))));
        drop(tx);
        match handle.join() {
            Ok(Some(hot)) => Ok(hot),
            _ => Err(JobError::invalid("load", "its hot-data thread failed")),
        }
    }
}
