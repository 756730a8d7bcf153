//! Several queues kept as logs over one [`PosTable`]: the structure of the multi-queue policies
//! (ARC's T1, T2, B1 and B2; S3-FIFO's small, main and ghost FIFOs; 2Q's three lists; SLRU's
//! segments) without linked lists.
//!
//! Every queue is a log of table slots, oldest first, and a key's slot names its queue and its
//! position in that queue's log (and a few bits of per-key state, S3-FIFO's frequency). Moving
//! a key to the newest end of a queue, the same or another, appends a new entry and leaves the
//! old one stale (its slot no longer names it); taking a queue's oldest key pops the log's
//! front, skipping stale entries. An LRU list is a queue whose keys are moved to its end on a
//! hit, a FIFO one whose keys are not. This is LRU's log ([`super::policy::lru`]) for several
//! queues at once, and for the same reason: a list's eviction follows its tail's `prev` link
//! to a node last touched long ago, one random memory load after another, where a log's front
//! is read in order and the slots it names are read ahead ([`LOG_AHEAD`]).
//!
//! A log is compacted to its current entries, in order, when it holds more than
//! [`LOG_FACTOR`] entries per key in its queue (and at least 64 per queue): memory stays within
//! a constant of the keys held.

use super::list::{renumber_slot, PosSlot, PosTable, NIL_SLOT, NO_SLOT, PENDING};
use std::collections::VecDeque;

/// Log entries read ahead when a front is popped.
const LOG_AHEAD: usize = 16;

/// A log is compacted when it holds more than this many entries per key in its queue.
const LOG_FACTOR: usize = 4;

/// A slot's position field: bits 0–55 the log position, 56–58 the key's small state, 59–61 its
/// queue ([`DETACHED`] when in none). Every such value is below [`PENDING`].
const POS_MASK: u64 = (1 << 56) - 1;
const AUX_SHIFT: u32 = 56;
const AUX_MASK: u64 = 7;
const QUEUE_SHIFT: u32 = 59;
/// The queue number of a key in the table but in no queue (popped, about to move).
const DETACHED: usize = 7;

/// The largest per-key state a queue keeps.
pub(crate) const AUX_MAX: u8 = AUX_MASK as u8;

struct Log {
    /// Table slots, oldest first ([`NO_SLOT`] for a key gone when the table was rebuilt).
    entries: VecDeque<u32>,
    /// The position of `entries[0]`; positions only grow.
    base: u64,
    /// Keys in the queue (current entries).
    len: u64,
}

pub(crate) struct LogQueues {
    table: PosTable,
    logs: Vec<Log>,
}

impl LogQueues {
    /// `queues` queues (at most 7) over a table sized for about `expected` keys.
    pub(crate) fn new(queues: usize, expected: u64) -> LogQueues {
        debug_assert!(queues <= DETACHED);
        LogQueues {
            table: PosTable::new(expected),
            logs: (0..queues)
                .map(|_| Log {
                    entries: VecDeque::new(),
                    base: 0,
                    len: 0,
                })
                .collect(),
        }
    }

    /// The slot holding `key`, or [`NIL_SLOT`].
    #[inline]
    pub(crate) fn find(&self, key: u64) -> usize {
        self.table.find(key)
    }

    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    /// Keys in queue `q`.
    #[inline]
    pub(crate) fn len(&self, q: usize) -> u64 {
        self.logs[q].len
    }

    #[inline]
    pub(crate) fn key(&self, slot: usize) -> u64 {
        self.table.slots[slot].key
    }

    /// The queue of the key in `slot`.
    #[inline]
    pub(crate) fn queue(&self, slot: usize) -> usize {
        (self.table.slots[slot].pos >> QUEUE_SHIFT) as usize & 7
    }

    /// The key's small state (0 ..= [`AUX_MAX`]).
    #[inline]
    pub(crate) fn aux(&self, slot: usize) -> u8 {
        ((self.table.slots[slot].pos >> AUX_SHIFT) & AUX_MASK) as u8
    }

    #[inline]
    pub(crate) fn set_aux(&mut self, slot: usize, aux: u8) {
        let s = &mut self.table.slots[slot];
        s.pos = (s.pos & !(AUX_MASK << AUX_SHIFT)) | (u64::from(aux.min(AUX_MAX)) << AUX_SHIFT);
    }

    /// Inserts `key` (absent) at the newest end of queue `q` with state `aux`; returns its slot.
    #[inline]
    pub(crate) fn insert(&mut self, key: u64, q: usize, aux: u8) -> usize {
        let logs = &mut self.logs;
        let slot = self.table.insert(key, &mut |map| {
            for log in logs.iter_mut() {
                for s in log.entries.iter_mut() {
                    *s = renumber_slot(map, *s);
                }
            }
        });
        self.table.slots[slot].pos = (DETACHED as u64) << QUEUE_SHIFT;
        self.set_aux(slot, aux);
        self.push(slot, q);
        slot
    }

    /// Moves the key in `slot` to the newest end of queue `q` (its own or another).
    #[inline]
    pub(crate) fn move_to(&mut self, slot: usize, q: usize) {
        self.detach(slot);
        self.push(slot, q);
    }

    /// Takes queue `q`'s oldest key out of it and returns its slot: the key stays in the
    /// table, in no queue, until the caller moves or removes it.
    #[inline]
    pub(crate) fn pop_oldest(&mut self, q: usize) -> Option<usize> {
        let log = &mut self.logs[q];
        while let Some(slot) = log.entries.pop_front() {
            let pos = log.base;
            log.base += 1;
            if let Some(&ahead) = log.entries.get(LOG_AHEAD) {
                crate::prefetch::ahead(&self.table.slots, ahead as usize);
            }
            if is_entry(&self.table.slots, slot, q, pos) {
                let slot = slot as usize;
                self.detach(slot);
                return Some(slot);
            }
        }
        // Every key in a queue has its current entry in the log: a broken log would otherwise
        // make the policies' eviction loops spin.
        debug_assert_eq!(
            self.logs[q].len, 0,
            "queue {q} has keys but no current entry"
        );
        None
    }

    /// Removes queue `q`'s oldest key from the table and returns it.
    #[inline]
    pub(crate) fn forget_oldest(&mut self, q: usize) -> Option<u64> {
        let slot = self.pop_oldest(q)?;
        let key = self.key(slot);
        self.remove_at(slot);
        Some(key)
    }

    /// Makes the key in `slot` a ghost: moves it to the newest end of queue `q`, first
    /// forgetting `q`'s oldest keys so that it holds at most `max`; removes it when `max` is 0.
    pub(crate) fn remember(&mut self, slot: usize, q: usize, max: u64) {
        if max == 0 {
            self.remove_at(slot);
            return;
        }
        self.detach(slot);
        if self.len(q) >= max {
            // Forgetting keys may move this one's slot (it is in no log to repoint).
            let key = self.key(slot);
            while self.len(q) >= max {
                self.forget_oldest(q);
            }
            self.move_to(self.find(key), q);
        } else {
            self.move_to(slot, q);
        }
    }

    /// Removes the key in `slot` from its queue and the table (its log entry goes stale). The
    /// table may move other keys' slots ([`PosTable::remove_at`]): those in a queue have their
    /// log entries repointed here; a caller holding the slot of a detached key must find it
    /// again.
    #[inline]
    pub(crate) fn remove_at(&mut self, slot: usize) {
        self.detach(slot);
        let logs = &mut self.logs;
        self.table.remove_at(slot, |pos, to| {
            let q = (pos >> QUEUE_SHIFT) as usize & 7;
            if let Some(log) = logs.get_mut(q) {
                if let Some(entry) = (pos & POS_MASK)
                    .checked_sub(log.base)
                    .and_then(|at| log.entries.get_mut(at as usize))
                {
                    *entry = to as u32;
                }
            }
        });
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.table.slots.capacity() * std::mem::size_of::<PosSlot>()
            + self
                .logs
                .iter()
                .map(|l| l.entries.capacity() * std::mem::size_of::<u32>())
                .sum::<usize>()
    }

    /// Takes the key in `slot` out of its queue, if it is in one; it stays in the table (with
    /// its state) until moved to a queue or removed.
    #[inline]
    pub(crate) fn detach(&mut self, slot: usize) {
        let q = self.queue(slot);
        if q != DETACHED {
            self.logs[q].len -= 1;
            let s = &mut self.table.slots[slot];
            s.pos = (s.pos & (AUX_MASK << AUX_SHIFT)) | ((DETACHED as u64) << QUEUE_SHIFT);
        }
    }

    /// Appends the detached key in `slot` to queue `q`.
    #[inline]
    fn push(&mut self, slot: usize, q: usize) {
        debug_assert_eq!(self.queue(slot), DETACHED);
        let live = self.logs[q].len as usize;
        if self.logs[q].entries.len() >= LOG_FACTOR * live.max(64) {
            self.compact(q);
        }
        let log = &mut self.logs[q];
        let pos = log.base + log.entries.len() as u64;
        log.entries.push_back(slot as u32);
        log.len += 1;
        let s = &mut self.table.slots[slot];
        s.pos = (s.pos & (AUX_MASK << AUX_SHIFT)) | ((q as u64) << QUEUE_SHIFT) | pos;
    }

    /// Rewrites queue `q`'s log with only its current entries, in order.
    fn compact(&mut self, q: usize) {
        let log = &mut self.logs[q];
        let old = std::mem::take(&mut log.entries);
        let old_base = log.base;
        log.base = old_base + old.len() as u64;
        let mut kept = VecDeque::with_capacity(log.len as usize + 1);
        for (j, &slot) in old.iter().enumerate() {
            if let Some(&ahead) = old.get(j + LOG_AHEAD) {
                crate::prefetch::ahead(&self.table.slots, ahead as usize);
            }
            if is_entry(&self.table.slots, slot, q, old_base + j as u64) {
                let s = &mut self.table.slots[slot as usize];
                s.pos = (s.pos & !POS_MASK) | (log.base + kept.len() as u64);
                kept.push_back(slot);
            }
        }
        log.entries = kept;
    }
}

/// Whether the log entry at position `pos` of queue `q`, naming `slot`, is its key's current one.
#[inline]
fn is_entry(slots: &[PosSlot], slot: u32, q: usize, pos: u64) -> bool {
    slot != NO_SLOT
        && slots.get(slot as usize).is_some_and(|s| {
            s.pos < PENDING && (s.pos >> QUEUE_SHIFT) as usize & 7 == q && s.pos & POS_MASK == pos
        })
}

/// [`NIL_SLOT`], for callers' comparisons.
pub(crate) const NIL: usize = NIL_SLOT;
