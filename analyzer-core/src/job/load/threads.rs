//! [`super::Load::with_threads`]'s thread (feature `threads`, native hosts only): hot data's
//! share of the load and `stat`, or `stat` alone ([`super::LoadHot`]), fed the admitted events
//! in batches through a bounded channel, the one other place besides `job/simulate/threads.rs`
//! where the core starts a thread. Emptied batches come back on a second channel, so the two
//! threads pass the same few buffers round instead of allocating (and page-faulting) one per
//! batch.

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
    /// Batches the thread has emptied.
    spent: mpsc::Receiver<Vec<IoEvent>>,
    handle: JoinHandle<Option<LoadHotResult>>,
    batch: Vec<IoEvent>,
}

impl HotThread {
    /// `None` when no thread could be started (the load then counts hot data itself).
    pub(super) fn start(mut hot: LoadHot) -> Option<HotThread> {
        let (tx, rx) = mpsc::sync_channel::<Message>(QUEUED_BATCHES);
        let (spent_tx, spent) = mpsc::sync_channel::<Vec<IoEvent>>(QUEUED_BATCHES + 2);
        let handle = std::thread::Builder::new()
            .name("blocksight-hot".into())
            .spawn(move || {
                for message in rx {
                    match message {
                        Message::Events(mut events) => {
                            hot.take(&events);
                            events.clear();
                            // Full only if the reader stopped taking them back: drop it then.
                            let _ = spent_tx.try_send(events);
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
            spent,
            handle,
            batch: Vec::with_capacity(BATCH_EVENTS),
        })
    }

    /// Admitted events, in order.
    pub(super) fn push(&mut self, events: &[IoEvent]) {
        self.batch.extend_from_slice(events);
        if self.batch.len() >= BATCH_EVENTS {
            let next = self
                .spent
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(BATCH_EVENTS));
            let full = std::mem::replace(&mut self.batch, next);
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
        let HotThread {
            tx, handle, batch, ..
        } = self;
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
