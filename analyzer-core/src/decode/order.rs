//! One rule for records whose time goes backwards, applied by every decoder, so that `stat`,
//! `analyze`, `simulate`, `predict` and the web app all see the same stream.
//!
//! Real traces are only roughly sorted: a Tencent CBS file may start with a record one second
//! later than the next thousand, SYSTOR '17 and MSR files have records a few milliseconds out of
//! order. The rule:
//!
//! 1. Records are sorted by time within a window of [`REORDER_WINDOW`] records (stable: records
//!    with equal times keep file order). Each record earlier than one before it is counted in
//!    [`Diagnostics::out_of_order_records`], and the first one is named (its line) in
//!    [`Diagnostics::out_of_order_first`].
//! 2. A record more than the window out of order (earlier than a record already passed on) is
//!    moved forward to the latest time already passed on, and counted in
//!    [`Diagnostics::clamped_records`]: time never goes backwards in the event stream.
//! 3. Formats with absolute timestamps (wall-clock or since boot) count `time_nanos` from the
//!    earliest record of the first window, not from the first line; that record's time is the
//!    trace's start time.
//!
//! Memory: at most [`REORDER_WINDOW`] + 1 events are held (about 1 MiB).
//!
//! Cost: records that come in time order (nearly all of them, in every real trace) go through a
//! FIFO in O(1); only the late ones go through a heap. The next record out is the earlier of the
//! two fronts, so the order is the one a single heap over everything would give.

use std::cell::OnceCell;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use super::{DecodeError, Decoder, Diagnostics};
use crate::event::{IoEvent, TraceHeader};

/// A short duration for warnings: `750 ns`, `3 µs`, `12.5 ms`, `1 s`.
fn format_duration_nanos(nanos: u64) -> String {
    let (value, unit) = match nanos {
        0..=999 => return format!("{nanos} ns"),
        1_000..=999_999 => (nanos as f64 / 1e3, "µs"),
        1_000_000..=999_999_999 => (nanos as f64 / 1e6, "ms"),
        _ => (nanos as f64 / 1e9, "s"),
    };
    let text = format!("{value:.1}");
    format!("{} {unit}", text.strip_suffix(".0").unwrap_or(&text))
}

/// How many records the sorting window holds.
pub const REORDER_WINDOW: usize = 16_384;

/// Events in a segment pushed one by one before another segment is started.
const SEGMENT_EVENTS: usize = 1024;

/// Emptied segments kept for reuse.
const SPARE_SEGMENTS: usize = 4;

/// The window's in-order records, as a queue of segments: a decoder's batch that comes wholly
/// in time order becomes a segment as it is ([`Fifo::adopt`]), so a record is copied once on
/// its way through the window (out of it), not twice (into a ring and out again). A window of
/// 16 Ki events is about 800 KB, more than a core's L2 cache holds, so the copy into a ring was
/// a write to memory long evicted: a sixth of `.bst` decoding's time.
#[derive(Default)]
struct Fifo {
    /// Never an empty segment, nor a first segment taken to its end.
    segments: VecDeque<Vec<IoEvent>>,
    /// Records of the first segment already taken.
    head: usize,
    len: usize,
    spare: Vec<Vec<IoEvent>>,
}

impl Fifo {
    fn len(&self) -> usize {
        self.len
    }

    fn front(&self) -> Option<&IoEvent> {
        self.segments.front().map(|s| &s[self.head])
    }

    fn back(&self) -> Option<&IoEvent> {
        self.segments.back().and_then(|s| s.last())
    }

    /// The `i`-th record from the front.
    fn get(&self, mut i: usize) -> Option<&IoEvent> {
        i += self.head;
        for s in &self.segments {
            if i < s.len() {
                return Some(&s[i]);
            }
            i -= s.len();
        }
        None
    }

    /// An empty segment, reused when one is spare.
    fn fresh(&mut self) -> Vec<IoEvent> {
        self.spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(SEGMENT_EVENTS))
    }

    fn push_back(&mut self, event: IoEvent) {
        match self.segments.back_mut() {
            Some(s) if s.len() < SEGMENT_EVENTS => s.push(event),
            _ => {
                let mut s = self.fresh();
                s.push(event);
                self.segments.push_back(s);
            }
        }
        self.len += 1;
    }

    fn extend_from_slice(&mut self, events: &[IoEvent]) {
        let mut rest = events;
        while !rest.is_empty() {
            let room = match self.segments.back() {
                Some(s) if s.len() < SEGMENT_EVENTS => SEGMENT_EVENTS - s.len(),
                _ => {
                    let s = self.fresh();
                    self.segments.push_back(s);
                    SEGMENT_EVENTS
                }
            };
            let (now, later) = rest.split_at(room.min(rest.len()));
            if let Some(s) = self.segments.back_mut() {
                s.extend_from_slice(now);
            }
            self.len += now.len();
            rest = later;
        }
    }

    /// Takes `batch`'s records, leaving it an empty vector to fill again (one kept spare).
    fn adopt(&mut self, batch: &mut Vec<IoEvent>) {
        if batch.is_empty() {
            return;
        }
        let fresh = self.fresh();
        self.len += batch.len();
        self.segments.push_back(std::mem::replace(batch, fresh));
    }

    /// Drops the first segment once it has been taken to its end.
    fn retire_front(&mut self) {
        if self.segments.front().is_some_and(|s| self.head == s.len()) {
            if let Some(mut s) = self.segments.pop_front() {
                if self.spare.len() < SPARE_SEGMENTS {
                    s.clear();
                    self.spare.push(s);
                }
            }
            self.head = 0;
        }
    }

    fn pop_front(&mut self) -> Option<IoEvent> {
        let e = *self.front()?;
        self.head += 1;
        self.len -= 1;
        self.retire_front();
        Some(e)
    }

    /// Moves the first `k` records (at most all of them) to the end of `out`.
    fn take_into(&mut self, mut k: usize, out: &mut Vec<IoEvent>) {
        while k > 0 {
            let Some(s) = self.segments.front() else {
                return;
            };
            let n = k.min(s.len() - self.head);
            out.extend_from_slice(&s[self.head..self.head + n]);
            self.head += n;
            self.len -= n;
            k -= n;
            self.retire_front();
        }
    }
}

struct Held {
    event: IoEvent,
    seq: u64,
}

impl PartialEq for Held {
    fn eq(&self, other: &Held) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Held) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Held {
    fn cmp(&self, other: &Held) -> Ordering {
        (self.event.time_nanos, self.seq).cmp(&(other.event.time_nanos, other.seq))
    }
}

/// The sorting window (see the module documentation). Public so that hosts reading an event
/// source without a decoder (the native Parquet reader) apply the same rule.
#[derive(Default)]
pub struct Reorder {
    /// Records at or after every record before them, in arrival order (so also in time order).
    /// They carry no sequence number: a late record is earlier than the FIFO's newest when it
    /// comes, and every record entering the FIFO after it is at least that newest, so a FIFO
    /// record as early as a late one always came before it and goes first on a tie.
    fifo: Fifo,
    /// The late records: earlier than the FIFO's newest when they came, numbered in arrival
    /// order so that equal times keep file order among them.
    heap: BinaryHeap<Reverse<Held>>,
    seq: u64,
    /// The latest time pushed so far.
    newest_pushed: Option<u64>,
    /// The latest time passed on so far.
    newest_released: Option<u64>,
    /// `Some(unix_offset)` when times are absolute and must be counted from the earliest
    /// record: Unix nanoseconds = absolute nanoseconds + offset (`None` inside: not wall-clock).
    rebase: Option<Option<i128>>,
    origin: Option<u64>,
}

impl Reorder {
    /// Times are absolute (nanoseconds in the format's own epoch): count them from the earliest
    /// record; `unix_offset` converts that epoch to Unix time when known.
    pub fn rebase_absolute(&mut self, unix_offset: Option<i128>) {
        self.rebase.get_or_insert(unix_offset);
    }

    /// Takes one event; `where_` names it for the out-of-order warning (`line 12`).
    pub fn push(
        &mut self,
        event: IoEvent,
        where_: impl FnOnce() -> String,
        diagnostics: &mut Diagnostics,
    ) {
        match self.newest_pushed {
            Some(newest) if event.time_nanos < newest => {
                diagnostics.out_of_order_records += 1;
                if diagnostics.out_of_order_first.is_none() {
                    diagnostics.out_of_order_first = Some(format!(
                        "{}: {} earlier than a record before it",
                        where_(),
                        format_duration_nanos(newest - event.time_nanos)
                    ));
                }
            }
            _ => self.newest_pushed = Some(event.time_nanos),
        }
        match self.fifo.back() {
            Some(last) if event.time_nanos < last.time_nanos => {
                self.heap.push(Reverse(Held {
                    event,
                    seq: self.seq,
                }));
                self.seq += 1;
            }
            _ => self.fifo.push_back(event),
        }
    }

    /// Pushes the leading records of `events` that come in time order (none earlier than any
    /// record pushed before it) all at once, and returns how many: exactly what [`Reorder::push`]
    /// does with each of them (they go to the FIFO and count nothing), without its per-record
    /// branches. At most [`REORDER_WINDOW`] records, so that releasing them in bulk afterwards
    /// gives the same order as pushing and releasing one by one.
    pub(crate) fn push_in_order_run(&mut self, events: &[IoEvent]) -> usize {
        let run = self.in_order_run(events);
        if run > 0 {
            self.fifo.extend_from_slice(&events[..run]);
            self.newest_pushed = Some(events[run - 1].time_nanos);
        }
        run
    }

    /// [`Reorder::push_in_order_run`] over the whole of `batch`, taking the vector itself when
    /// all of it is in time order (then `batch` is left empty and `true` returned: none of it
    /// is left to push). Otherwise pushes nothing and returns `false`.
    pub(crate) fn push_in_order_batch(&mut self, batch: &mut Vec<IoEvent>) -> bool {
        let n = batch.len();
        if n == 0 || self.in_order_run(batch) < n {
            return false;
        }
        self.newest_pushed = Some(batch[n - 1].time_nanos);
        self.fifo.adopt(batch);
        true
    }

    /// How many leading records of `events` come in time order (at most [`REORDER_WINDOW`]).
    fn in_order_run(&self, events: &[IoEvent]) -> usize {
        let mut newest = self.newest_pushed.unwrap_or(0);
        events
            .iter()
            .take(REORDER_WINDOW)
            .take_while(|e| {
                let in_order = e.time_nanos >= newest;
                newest = e.time_nanos;
                in_order
            })
            .count()
    }

    /// Releases up to `max` records at once into `out` while no late record is held (the FIFO
    /// is then the whole window, in order) and times are not rebased: the records
    /// [`Reorder::pop_relative`] would give one by one (none of which it would clamp), copied
    /// out in bulk. Returns how many (0 when the heap holds records: release them one by one).
    pub(crate) fn release_in_order(
        &mut self,
        finished: bool,
        out: &mut Vec<IoEvent>,
        max: usize,
    ) -> usize {
        if !self.heap.is_empty() || self.rebase.is_some() {
            return 0;
        }
        let due = if finished {
            self.fifo.len()
        } else {
            self.fifo.len().saturating_sub(REORDER_WINDOW)
        };
        let k = due.min(max);
        let Some(last) = k.checked_sub(1).and_then(|i| self.fifo.get(i)) else {
            return 0;
        };
        // With no late record held, everything passed on so far came before the FIFO's front
        // and is no later than it (a late record leaves only when earlier than the front), so
        // none of these needs clamping: they are copied out as they are.
        debug_assert!(self
            .fifo
            .front()
            .zip(self.newest_released)
            .is_none_or(|(f, n)| f.time_nanos >= n));
        self.newest_released = Some(last.time_nanos);
        self.fifo.take_into(k, out);
        k
    }

    /// Passes `event` on: time never goes backwards (rule 2), so an event earlier than one
    /// already passed on moves forward to it and is counted.
    #[inline]
    fn release(&mut self, mut event: IoEvent, diagnostics: &mut Diagnostics) -> IoEvent {
        match self.newest_released {
            Some(newest) if event.time_nanos < newest => {
                diagnostics.clamped_records += 1;
                event.time_nanos = newest;
            }
            _ => self.newest_released = Some(event.time_nanos),
        }
        event
    }

    /// Records held.
    fn len(&self) -> usize {
        self.fifo.len() + self.heap.len()
    }

    /// Takes the earliest held record by time, then arrival (a FIFO record first on a tie: see
    /// [`Reorder::fifo`]).
    fn take_earliest(&mut self) -> Option<IoEvent> {
        let from_heap = match (self.fifo.front(), self.heap.peek()) {
            (None, None) => return None,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some(f), Some(Reverse(h))) => h.event.time_nanos < f.time_nanos,
        };
        if from_heap {
            self.heap.pop().map(|Reverse(h)| h.event)
        } else {
            self.fifo.pop_front()
        }
    }

    /// The next event in time order: only once the window is full, or (`finished`) at the end.
    /// Rebasing absolute times sets `header.start_unix_nanos`.
    pub fn pop(
        &mut self,
        finished: bool,
        header: &mut TraceHeader,
        diagnostics: &mut Diagnostics,
    ) -> Option<IoEvent> {
        self.pop_with(finished, Some(header), diagnostics)
    }

    /// [`Reorder::pop`] for times that are not rebased (no header to update).
    pub(crate) fn pop_relative(
        &mut self,
        finished: bool,
        diagnostics: &mut Diagnostics,
    ) -> Option<IoEvent> {
        debug_assert!(self.rebase.is_none(), "rebased times need the header");
        self.pop_with(finished, None, diagnostics)
    }

    fn pop_with(
        &mut self,
        finished: bool,
        header: Option<&mut TraceHeader>,
        diagnostics: &mut Diagnostics,
    ) -> Option<IoEvent> {
        if !finished && self.len() <= REORDER_WINDOW {
            return None;
        }
        let mut event = self.take_earliest()?;
        if let Some(unix_offset) = self.rebase {
            let origin = *self.origin.get_or_insert_with(|| {
                if let Some(header) = header {
                    header.start_unix_nanos = unix_offset
                        .and_then(|off| i64::try_from(i128::from(event.time_nanos) + off).ok());
                }
                event.time_nanos
            });
            event.time_nanos = event.time_nanos.saturating_sub(origin);
        }
        Some(self.release(event, diagnostics))
    }
}

/// Applies the ordering rule to any decoder (the binary formats, whose records carry their own
/// relative times).
///
/// Per push (which may bring only a few bytes) it does no work beyond the inner decoder's: the
/// header is the inner decoder's own (this wrapper never rebases times, the only change the
/// sorting window makes to a header), and the diagnostics are merged only when asked for,
/// once per change. Copying or comparing the header and diagnostics on every push was most of
/// the fuzz targets' time, and would be worse for a fleet header naming tens of thousands of
/// devices.
pub(crate) struct InOrder<D: Decoder> {
    inner: D,
    reorder: Reorder,
    /// What the sorting window itself counted (out-of-order and clamped records).
    own: Diagnostics,
    /// The inner decoder's diagnostics with `own` added, built by [`Decoder::diagnostics`] and
    /// cleared by every call that can change either.
    merged: OnceCell<Diagnostics>,
    records: u64,
    finished: bool,
    inner_done: bool,
    /// Records read from `inner` in one call of [`Decoder::next_events`], the next one to
    /// take, and the error that call ended with (returned once they have been taken).
    batch: Vec<IoEvent>,
    batch_next: usize,
    batch_error: Option<DecodeError>,
    /// `next_event`'s one-event buffer.
    one: Vec<IoEvent>,
}

/// Events [`InOrder`] asks its decoder for at once.
const READ_BATCH_EVENTS: usize = 1024;

impl<D: Decoder> InOrder<D> {
    pub fn new(inner: D) -> InOrder<D> {
        InOrder {
            inner,
            reorder: Reorder::default(),
            own: Diagnostics::default(),
            merged: OnceCell::new(),
            batch: Vec::new(),
            batch_next: 0,
            batch_error: None,
            one: Vec::with_capacity(1),
            records: 0,
            finished: false,
            inner_done: false,
        }
    }
}

impl<D: Decoder> Decoder for InOrder<D> {
    fn push(&mut self, bytes: &[u8]) {
        self.merged.take();
        self.inner.push(bytes);
    }

    fn next_event(&mut self) -> Result<Option<IoEvent>, DecodeError> {
        let mut one = std::mem::take(&mut self.one);
        one.clear();
        let read = self.next_events(&mut one, 1);
        let e = one.pop();
        self.one = one;
        read.map(|_| e)
    }

    fn next_events(&mut self, out: &mut Vec<IoEvent>, max: usize) -> Result<usize, DecodeError> {
        self.merged.take();
        let mut n = 0;
        loop {
            // Event by event exactly as `next_event` goes: release one when the window allows,
            // else take the next record read; runs of records in time order (nearly all of a
            // real trace) go in and out in bulk, in the same order.
            while n < max {
                n += self.reorder.release_in_order(self.inner_done, out, max - n);
                if n == max {
                    break;
                }
                // A batch wholly in time order enters the window as it is, uncopied.
                let whole = self.batch.len() as u64;
                if self.batch_next == 0 && self.reorder.push_in_order_batch(&mut self.batch) {
                    self.records += whole;
                    continue;
                }
                let run = self
                    .reorder
                    .push_in_order_run(&self.batch[self.batch_next..]);
                if run > 0 {
                    self.batch_next += run;
                    self.records += run as u64;
                    continue;
                }
                if let Some(e) = self.reorder.pop_relative(self.inner_done, &mut self.own) {
                    out.push(e);
                    n += 1;
                    continue;
                }
                let Some(&e) = self.batch.get(self.batch_next) else {
                    break;
                };
                self.batch_next += 1;
                self.records += 1;
                let at = self.records;
                self.reorder
                    .push(e, || format!("record {at}"), &mut self.own);
            }
            if n == max || self.inner_done {
                return Ok(n);
            }
            if let Some(e) = self.batch_error.take() {
                return Err(e);
            }
            self.batch.clear();
            self.batch_next = 0;
            match self.inner.next_events(&mut self.batch, READ_BATCH_EVENTS) {
                Ok(0) if self.finished => self.inner_done = true,
                Ok(0) => return Ok(n),
                Ok(_) => {}
                // The records read before the error go through the window first.
                Err(e) => self.batch_error = Some(e),
            }
        }
    }

    fn finish(&mut self) {
        self.merged.take();
        self.finished = true;
        self.inner.finish();
    }

    fn header(&self) -> &TraceHeader {
        self.inner.header()
    }

    fn diagnostics(&self) -> &Diagnostics {
        self.merged.get_or_init(|| {
            let mut d = self.inner.diagnostics().clone();
            d.out_of_order_records += self.own.out_of_order_records;
            d.clamped_records += self.own.clamped_records;
            if d.out_of_order_first.is_none() {
                d.out_of_order_first = self.own.out_of_order_first.clone();
            }
            d
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Op;

    fn ev(time_nanos: u64, offset_bytes: u64) -> IoEvent {
        IoEvent {
            time_nanos,
            device: 0,
            offset_bytes,
            len_bytes: 4096,
            op: Op::Read,
            latency_nanos: None,
            pid: None,
        }
    }

    fn run(times: &[u64], rebase: bool) -> (Vec<IoEvent>, Diagnostics, TraceHeader) {
        let mut r = Reorder::default();
        if rebase {
            r.rebase_absolute(Some(1_000));
        }
        let mut d = Diagnostics::default();
        let mut h = TraceHeader::default();
        let mut out = Vec::new();
        for (i, &t) in times.iter().enumerate() {
            r.push(ev(t, i as u64), || format!("line {}", i + 1), &mut d);
            while let Some(e) = r.pop(false, &mut h, &mut d) {
                out.push(e);
            }
        }
        while let Some(e) = r.pop(true, &mut h, &mut d) {
            out.push(e);
        }
        (out, d, h)
    }

    #[test]
    fn sorts_within_the_window_stably_and_names_the_first_late_record() {
        let (out, d, h) = run(&[5_000, 2_000, 2_000, 9_000, 1_000], true);
        let got: Vec<(u64, u64)> = out.iter().map(|e| (e.time_nanos, e.offset_bytes)).collect();
        // Origin is the earliest record (1000), not the first line (5000).
        assert_eq!(
            got,
            [(0, 4), (1_000, 1), (1_000, 2), (4_000, 0), (8_000, 3)]
        );
        assert_eq!(d.out_of_order_records, 3);
        assert_eq!(d.clamped_records, 0);
        assert_eq!(
            d.out_of_order_first.as_deref(),
            Some("line 2: 3 µs earlier than a record before it")
        );
        assert_eq!(h.start_unix_nanos, Some(2_000));
    }

    #[test]
    fn records_beyond_the_window_move_forward_and_time_never_goes_back() {
        let mut times: Vec<u64> = (0..REORDER_WINDOW as u64 + 10).map(|i| 1_000 + i).collect();
        times.push(0);
        let (out, d, _) = run(&times, false);
        assert_eq!(out.len(), times.len());
        assert!(out.windows(2).all(|w| w[0].time_nanos <= w[1].time_nanos));
        assert_eq!(d.clamped_records, 1);
        assert_eq!(d.out_of_order_records, 1);
        // The late record (offset = its index) got the latest time already passed on.
        let late = out
            .iter()
            .find(|e| e.offset_bytes == times.len() as u64 - 1)
            .expect("kept");
        assert!(late.time_nanos >= 1_000);
    }

    #[test]
    fn binary_decoders_get_the_same_rule_through_the_wrapper() {
        // A native file whose events go back in time: the wrapper sorts them and counts them.
        let times = [3_000u64, 1_000, 2_000, 5_000];
        let events: Vec<IoEvent> = times
            .iter()
            .enumerate()
            .map(|(i, &t)| ev(t, i as u64 * 4096))
            .collect();
        let file = crate::native::encode_all(
            &TraceHeader::new("t"),
            &events,
            crate::native::EncodeOptions::default(),
        );
        let d = crate::decode::decode_chunked(
            InOrder::new(crate::native::NativeDecoder::new()),
            &file,
            7,
        )
        .expect("decodes");
        let got: Vec<u64> = d.events.iter().map(|e| e.time_nanos).collect();
        assert_eq!(got, [1_000, 2_000, 3_000, 5_000]);
        assert_eq!(d.diagnostics.out_of_order_records, 2);
        assert_eq!(
            d.diagnostics.out_of_order_first.as_deref(),
            Some("record 2: 2 µs earlier than a record before it")
        );
    }

    /// `n` record times of one of four kinds: sorted, nearly sorted, sorted with far-late
    /// records, random.
    fn stream_times(n: usize, kind: u8, seed: u64) -> Vec<u64> {
        let mut x = seed | 1;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n as u64)
            .map(|i| match kind {
                0 => i * 10,
                1 => (i * 10).saturating_sub(rnd() % 50),
                2 if rnd() % 1000 == 0 => rnd() % (i * 10 + 1),
                2 => i * 10 + rnd() % 3,
                _ => rnd() % 1_000_000,
            })
            .collect()
    }

    /// The rule as first written: one heap over every held record.
    fn reference(times: &[u64]) -> (Vec<(u64, u64)>, u64, u64) {
        let mut heap = BinaryHeap::new();
        let mut out = Vec::new();
        let (mut late, mut clamped) = (0, 0);
        let mut newest_pushed: Option<u64> = None;
        let mut newest_released: Option<u64> = None;
        let mut release = |heap: &mut BinaryHeap<Reverse<(u64, u64)>>, out: &mut Vec<_>| {
            let Reverse((mut t, seq)) = heap.pop().expect("held");
            match newest_released {
                Some(n) if t < n => {
                    clamped += 1;
                    t = n;
                }
                _ => newest_released = Some(t),
            }
            out.push((t, seq));
        };
        for (seq, &t) in times.iter().enumerate() {
            match newest_pushed {
                Some(n) if t < n => late += 1,
                _ => newest_pushed = Some(t),
            }
            heap.push(Reverse((t, seq as u64)));
            while heap.len() > REORDER_WINDOW {
                release(&mut heap, &mut out);
            }
        }
        while !heap.is_empty() {
            release(&mut heap, &mut out);
        }
        (out, late, clamped)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// The FIFO-plus-heap window gives exactly the single heap's order, counts and clamps,
        /// on streams that are sorted, nearly sorted, sorted with far-late records, and random.
        #[test]
        fn fifo_and_heap_equal_one_heap(
            n in 0usize..(3 * REORDER_WINDOW),
            kind in 0u8..4,
            seed in proptest::prelude::any::<u64>(),
        ) {
            let times = stream_times(n, kind, seed);
            let (out, d, _) = run(&times, false);
            let got: Vec<(u64, u64)> =
                out.iter().map(|e| (e.time_nanos, e.offset_bytes)).collect();
            let (want, late, clamped) = reference(&times);
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(d.out_of_order_records, late);
            proptest::prop_assert_eq!(d.clamped_records, clamped);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// The wrapper's bulk path (runs in time order pushed and released at once) gives the
        /// single heap's order, counts and clamps too, whatever the batch sizes asked for and
        /// the file's chunking.
        #[test]
        fn the_wrapper_in_bulk_equals_one_heap(
            n in 0usize..(3 * REORDER_WINDOW),
            kind in 0u8..4,
            seed in proptest::prelude::any::<u64>(),
            max in proptest::sample::select(vec![1usize, 7, 1024, 50_000]),
            chunk_events in proptest::sample::select(vec![3usize, 1000, 65_536]),
        ) {
            let times = stream_times(n, kind, seed);
            let events: Vec<IoEvent> =
                times.iter().enumerate().map(|(i, &t)| ev(t, i as u64)).collect();
            let options = crate::native::EncodeOptions {
                chunk_events,
                ..crate::native::EncodeOptions::default()
            };
            let file = crate::native::encode_all(&TraceHeader::new("t"), &events, options);
            let mut d = InOrder::new(crate::native::NativeDecoder::new());
            let mut got = Vec::new();
            for piece in file.chunks(100_003) {
                d.push(piece);
                while d.next_events(&mut got, max).expect("decodes") > 0 {}
            }
            d.finish();
            while d.next_events(&mut got, max).expect("decodes") > 0 {}
            let got: Vec<(u64, u64)> = got.iter().map(|e| (e.time_nanos, e.offset_bytes)).collect();
            let (want, late, clamped) = reference(&times);
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(d.diagnostics().out_of_order_records, late);
            proptest::prop_assert_eq!(d.diagnostics().clamped_records, clamped);
        }
    }

    #[test]
    fn the_wrappers_diagnostics_follow_input_read_after_they_were_asked_for() {
        // The merged diagnostics are cached between calls: reading them mid-stream must not
        // freeze them. Three late records and, after them, a damaged chunk (bad payload CRC).
        let times = [3_000u64, 1_000, 2_000, 5_000, 4_000];
        let events: Vec<IoEvent> = times
            .iter()
            .enumerate()
            .map(|(i, &t)| ev(t, i as u64 * 4096))
            .collect();
        let options = crate::native::EncodeOptions {
            chunk_events: 2,
            ..crate::native::EncodeOptions::default()
        };
        let mut file = crate::native::encode_all(&TraceHeader::new("t"), &events, options);
        let last_payload_byte = file.len() - crate::native::FRAME_BYTES - 9;
        file[last_payload_byte] ^= 0xff;
        let whole = crate::decode::decode_chunked(
            InOrder::new(crate::native::NativeDecoder::new()),
            &file,
            file.len(),
        )
        .expect("decodes");
        let mut d = InOrder::new(crate::native::NativeDecoder::new());
        let mut seen = Vec::new();
        for piece in file.chunks(5) {
            d.push(piece);
            while let Some(e) = d.next_event().expect("decodes") {
                seen.push(e);
            }
            seen.push(ev(u64::MAX, d.diagnostics().out_of_order_records));
        }
        d.finish();
        while d.next_event().expect("decodes").is_some() {}
        assert_eq!(*d.diagnostics(), whole.diagnostics);
        assert_eq!(whole.diagnostics.out_of_order_records, 2);
        assert_eq!(
            whole.diagnostics.skipped_records, 1,
            "{:?}",
            whole.diagnostics
        );
        // Mid-stream the count grew from 0 as records arrived.
        let counts: Vec<u64> = seen
            .iter()
            .filter(|e| e.time_nanos == u64::MAX)
            .map(|e| e.offset_bytes)
            .collect();
        assert_eq!(counts.first(), Some(&0));
        assert!(counts.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(counts.last(), Some(&2));
    }

    #[test]
    fn sorted_input_passes_unchanged() {
        let times: Vec<u64> = (0..100).map(|i| i * 7).collect();
        let (out, d, _) = run(&times, false);
        assert_eq!(out.iter().map(|e| e.time_nanos).collect::<Vec<_>>(), times);
        assert_eq!(d, Diagnostics::default());
    }
}
