//! The events chunk payload: events split into delta- and varint-coded columns.
//!
//! Each event has one tag byte:
//!
//! | bits | meaning                                                                   |
//! |------|---------------------------------------------------------------------------|
//! | 0-1  | op (0 read, 1 write, 2 discard, 3 flush)                                  |
//! | 2    | latency present: one value in `latencies`                                 |
//! | 3    | pid present                                                               |
//! | 4    | sector-aligned: the offset delta and length are in 512-byte units         |
//! | 5    | new device: one value in `devices` (else the previous event's device)     |
//! | 6    | new pid: one value in `pids` (only with bit 3; else the previous pid),    |
//! |      | coded through a table of the 16 most recent pids (see [`RecentPids`])     |
//! | 7    | new length: one value in `lens` (else the previous event's length)        |
//!
//! Every event has one value in `times` (zigzag of the time delta divided by
//! `time_unit_nanos`) and one in `offsets` (zigzag of the offset minus the previous event's end;
//! flushes code their offset from 0 and leave the previous end alone).
//! Delta state starts from zero in every chunk, so chunks decode independently. A sequential
//! 4 KiB read with the same device and pid as its predecessor costs a tag byte, a time delta and
//! a one-byte offset delta.

use serde::{Deserialize, Serialize, Serializer};

use super::OPS;
use crate::event::{IoEvent, Op};
use crate::varint::{unzigzag, write_u64, zigzag};

const TAG_LATENCY: u8 = 1 << 2;
const TAG_PID: u8 = 1 << 3;
const TAG_ALIGNED: u8 = 1 << 4;
const TAG_NEW_DEVICE: u8 = 1 << 5;
const TAG_NEW_PID: u8 = 1 << 6;
const TAG_NEW_LEN: u8 = 1 << 7;

const SECTOR_BYTES: u64 = 512;

/// The op code of [`crate::Op::Flush`] in the tag.
const FLUSH_CODE: u8 = 3;

/// Pids seen recently in this chunk, most recent first. A pid in the table is coded as its index
/// (one byte), any other as `RECENT_PIDS + pid`; either way it then moves to the front. A few
/// busy processes issue most I/O, so most pid changes cost one byte instead of three.
///
/// The pids stay in their slots; the list is the order of the slots, sixteen 4-bit slot numbers
/// in one word (the most recent pid's slot in the low nibble), so that moving a pid to the front
/// is a few operations on a register instead of moving pids in memory (which the compiler made
/// into vector stores that the next change read back at other offsets, waiting each time for
/// them to reach the cache).
#[derive(Clone, Copy, Debug)]
struct RecentPids {
    slots: [u32; RECENT_PIDS],
    /// Nibble `j`: the slot of the `j`-th most recent pid.
    order: u64,
    len: usize,
}

const RECENT_PIDS: usize = 16;

impl Default for RecentPids {
    fn default() -> Self {
        RecentPids {
            slots: [0; RECENT_PIDS],
            // Slot `j` at place `j`: any order of the sixteen slots would do.
            order: 0xfedc_ba98_7654_3210,
            len: 0,
        }
    }
}

impl RecentPids {
    /// The slot of the pid at index `i` (below [`RECENT_PIDS`]).
    #[inline]
    fn slot(&self, i: usize) -> usize {
        ((self.order >> (4 * (i % RECENT_PIDS))) & 0xf) as usize
    }

    fn code(&mut self, pid: u32) -> u64 {
        match (0..self.len).position(|i| self.slots[self.slot(i)] == pid) {
            Some(i) => {
                self.move_to_front(i);
                i as u64
            }
            None => {
                self.insert(pid);
                RECENT_PIDS as u64 + u64::from(pid)
            }
        }
    }

    #[inline]
    fn decode(&mut self, v: u64) -> Result<u32, String> {
        if v < RECENT_PIDS as u64 {
            let i = v as usize;
            if i >= self.len {
                return Err(format!(
                    "recent-pid index {i} but only {} pids seen",
                    self.len
                ));
            }
            let pid = self.slots[self.slot(i)];
            self.move_to_front(i);
            Ok(pid)
        } else {
            let pid = u32::try_from(v - RECENT_PIDS as u64)
                .map_err(|_| format!("pid {} does not fit 32 bits", v - RECENT_PIDS as u64))?;
            self.insert(pid);
            Ok(pid)
        }
    }

    /// Moves the pid at index `i` to the front, the ones before it back by one place.
    #[inline]
    fn move_to_front(&mut self, i: usize) {
        let i = i % RECENT_PIDS;
        let slot = self.slot(i) as u64;
        let before = (1u64 << (4 * i)) - 1;
        // Nibbles past `i` stay (two shifts: `i` = 15 would shift by 64).
        let after = (u64::MAX << (4 * i)) << 4;
        self.order = (self.order & after) | ((self.order & before) << 4) | slot;
    }

    /// Puts a pid not in the list at the front, in the slot of the least recent one (which
    /// drops out when the list is full).
    #[inline]
    fn insert(&mut self, pid: u32) {
        let slot = self.order >> (4 * (RECENT_PIDS - 1));
        self.slots[slot as usize % RECENT_PIDS] = pid;
        self.order = (self.order << 4) | slot;
        self.len = (self.len + 1).min(RECENT_PIDS);
    }
}

/// Serializes a byte slice as bincode bytes (length then raw bytes) in one call instead of one
/// call per element.
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

/// The payload as written (field order is the wire order).
#[derive(Serialize)]
struct ColumnsOut<'a> {
    event_count: u32,
    time_unit_nanos: u64,
    latency_unit_nanos: u64,
    tags: Bytes<'a>,
    times: Bytes<'a>,
    offsets: Bytes<'a>,
    lens: Bytes<'a>,
    devices: Bytes<'a>,
    latencies: Bytes<'a>,
    pids: Bytes<'a>,
}

/// The payload as read, borrowing the column bytes from the chunk.
#[derive(Deserialize)]
struct ColumnsIn<'a> {
    event_count: u32,
    time_unit_nanos: u64,
    latency_unit_nanos: u64,
    tags: &'a [u8],
    times: &'a [u8],
    offsets: &'a [u8],
    lens: &'a [u8],
    devices: &'a [u8],
    latencies: &'a [u8],
    pids: &'a [u8],
}

/// Reusable column buffers for the encoder.
#[derive(Debug, Default)]
pub(super) struct ColumnEncoder {
    tags: Vec<u8>,
    times: Vec<u8>,
    offsets: Vec<u8>,
    lens: Vec<u8>,
    devices: Vec<u8>,
    latencies: Vec<u8>,
    pids: Vec<u8>,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The signed difference `a - b` of two u64s, wrapping: the decoder adds it back with wrapping
/// arithmetic, so even deltas that overflow i64 round-trip.
fn wrapping_delta(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

impl ColumnEncoder {
    /// Encodes `events` as one payload, appended to `payload`.
    pub(super) fn encode(&mut self, events: &[IoEvent], payload: &mut Vec<u8>) {
        for c in [
            &mut self.tags,
            &mut self.times,
            &mut self.offsets,
            &mut self.lens,
            &mut self.devices,
            &mut self.latencies,
            &mut self.pids,
        ] {
            c.clear();
        }
        // Coarse clocks (µs in tracefs text, 100 ns in MSR traces) leave every delta a multiple
        // of some unit; dividing it out saves a byte or more per event.
        let mut time_unit = 0u64;
        let mut latency_unit = 0u64;
        let mut prev_time = 0u64;
        for e in events {
            time_unit = gcd(
                time_unit,
                wrapping_delta(e.time_nanos, prev_time).unsigned_abs(),
            );
            prev_time = e.time_nanos;
            if let Some(l) = e.latency_nanos {
                latency_unit = gcd(latency_unit, l);
            }
        }
        let time_unit = time_unit.max(1);
        let latency_unit = latency_unit.max(1);

        let mut recent_pids = RecentPids::default();
        let (mut prev_time, mut prev_end, mut prev_device, mut prev_len, mut prev_pid) =
            (0u64, 0u64, 0u32, 0u32, 0u32);
        for e in events {
            let mut tag = e.op.index() as u8;

            // The unit divides the delta's magnitude exactly, so this is exact; the magnitude of
            // i64::MIN divided by a unit is at most 2^63 and wraps back to the same value.
            let dt = wrapping_delta(e.time_nanos, prev_time);
            let q = (dt.unsigned_abs() / time_unit) as i64;
            write_u64(
                &mut self.times,
                zigzag(if dt < 0 { q.wrapping_neg() } else { q }),
            );
            prev_time = e.time_nanos;

            // A flush's offset is coded from 0 and leaves the delta state alone: flushes carry no
            // data range, and coding them from the last request's end would cost a long delta
            // twice (to the flush and back).
            let is_flush = e.op == Op::Flush;
            let base = if is_flush { 0 } else { prev_end };
            let d_offset = wrapping_delta(e.offset_bytes, base);
            let aligned = u64::from(e.len_bytes) % SECTOR_BYTES == 0
                && d_offset.rem_euclid(SECTOR_BYTES as i64) == 0;
            if aligned {
                tag |= TAG_ALIGNED;
                write_u64(
                    &mut self.offsets,
                    zigzag(d_offset.div_euclid(SECTOR_BYTES as i64)),
                );
            } else {
                write_u64(&mut self.offsets, zigzag(d_offset));
            }
            if !is_flush {
                prev_end = e.offset_bytes.wrapping_add(u64::from(e.len_bytes));
            }

            if e.len_bytes != prev_len {
                tag |= TAG_NEW_LEN;
                let len = u64::from(e.len_bytes);
                write_u64(
                    &mut self.lens,
                    if aligned { len / SECTOR_BYTES } else { len },
                );
                prev_len = e.len_bytes;
            }
            if e.device != prev_device {
                tag |= TAG_NEW_DEVICE;
                write_u64(&mut self.devices, u64::from(e.device));
                prev_device = e.device;
            }
            if let Some(l) = e.latency_nanos {
                tag |= TAG_LATENCY;
                write_u64(&mut self.latencies, l / latency_unit);
            }
            if let Some(pid) = e.pid {
                tag |= TAG_PID;
                if pid != prev_pid {
                    tag |= TAG_NEW_PID;
                    write_u64(&mut self.pids, recent_pids.code(pid));
                    prev_pid = pid;
                }
            }
            self.tags.push(tag);
        }
        self.write(events.len() as u32, time_unit, latency_unit, payload);
    }

    /// Appends the payload of the columns as they are to `payload`.
    fn write(&self, event_count: u32, time_unit: u64, latency_unit: u64, payload: &mut Vec<u8>) {
        let out = ColumnsOut {
            event_count,
            time_unit_nanos: time_unit,
            latency_unit_nanos: latency_unit,
            tags: Bytes(&self.tags),
            times: Bytes(&self.times),
            offsets: Bytes(&self.offsets),
            lens: Bytes(&self.lens),
            devices: Bytes(&self.devices),
            latencies: Bytes(&self.latencies),
            pids: Bytes(&self.pids),
        };
        // Writing into a Vec cannot fail.
        let _ = bincode::serde::encode_into_std_write(&out, payload, super::bincode_config());
    }
}

/// The zero bytes the decoder keeps after an events payload (see [`ChunkReader::read_batch`]).
pub(super) const PAYLOAD_PADDING: usize = 8;

/// A column being read: a position in the payload and where the column ends. The bytes are the
/// payload's, passed to each read, so that in the decoding loop a column costs one register (its
/// position) rather than three (a slice and a position): with six columns, the loop's state no
/// longer spills to the stack.
struct Column {
    pos: usize,
    end: usize,
    /// Where a value could not be read (the payload ended or it overflowed 64 bits).
    error_at: Option<usize>,
}

impl Column {
    fn new(range: &std::ops::Range<usize>) -> Column {
        Column {
            pos: range.start,
            end: range.end,
            error_at: None,
        }
    }

    /// Reads one LEB128 value of `payload`, which holds [`PAYLOAD_PADDING`] bytes after the
    /// column's end: values of up to 8 bytes decode from one 64-bit load without a loop (find the
    /// terminating byte, then squeeze out the continuation bits) and without a check of the
    /// column's end, which [`Column::check`] makes once after the batch (a column read past its
    /// end has `pos > end` then, and what was read past it is thrown away with the batch).
    /// Longer values go through the general reader.
    #[inline(always)]
    fn next(&mut self, payload: &[u8]) -> u64 {
        if let Some(word) = payload.get(self.pos..self.pos + 8) {
            let word = u64::from_le_bytes([
                word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
            ]);
            let stops = !word & 0x8080_8080_8080_8080;
            if stops != 0 {
                // The first byte without a continuation bit ends the value: keep the bits up to
                // its top bit (`stops ^ (stops - 1)`: all ones through the lowest set bit), then
                // close the 7-bit groups up in three doubling steps (pairs into 14 bits, fours
                // into 28, the two halves into 56). The first step's masks also drop the
                // continuation bits.
                self.pos += (stops.trailing_zeros() / 8 + 1) as usize;
                let mut x = word & (stops ^ (stops - 1));
                x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
                x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
                x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
                return x;
            }
        }
        self.next_slow(payload)
    }

    /// A value that is not in the fast path: 9 or 10 bytes long, or one that runs into the
    /// padding (the column was read past its end). One that cannot be read records where and
    /// yields zeros from then on; [`Column::check`] reports it after the batch, which keeps the
    /// per-value error branch out of the hot loop.
    #[cold]
    fn next_slow(&mut self, payload: &[u8]) -> u64 {
        let at = self.pos;
        let column = payload.get(..self.end).unwrap_or(payload);
        match crate::varint::read_u64(column, &mut self.pos) {
            Some(v) => v,
            None => {
                self.error_at.get_or_insert(at);
                self.pos = self.end;
                0
            }
        }
    }

    /// The error of a column read past its end or that overflowed, if any; `start` is the
    /// column's first byte in the payload, `name` its name.
    fn check(&self, start: usize, name: &str) -> Result<(), String> {
        match self.error_at {
            Some(at) => Err(format!(
                "the {name} column ends or overflows at its byte {}",
                at - start
            )),
            None if self.pos > self.end => Err(format!(
                "the {name} column ends in the middle of a value or before its events do (its \
                 {} bytes)",
                self.end - start
            )),
            None => Ok(()),
        }
    }

    fn check_consumed(&self, name: &str) -> Result<(), String> {
        if self.pos == self.end {
            Ok(())
        } else {
            Err(format!(
                "the {name} column has {} byte(s) more than its events use",
                self.end - self.pos
            ))
        }
    }
}

/// Names of the columns in [`ChunkReader::cols`] order, for error messages.
const COLUMN_NAMES: [&str; 7] = [
    "tag", "time", "offset", "length", "device", "latency", "pid",
];
const TAGS: usize = 0;
const TIMES: usize = 1;
const OFFSETS: usize = 2;
const LENS: usize = 3;
const DEVICES: usize = 4;
const LATENCIES: usize = 5;
const PIDS: usize = 6;
/// The value columns, in the order [`ChunkReader::read_batch`] keeps its cursors.
const VALUE_COLUMNS: [usize; 6] = [TIMES, OFFSETS, LENS, DEVICES, LATENCIES, PIDS];

/// Reads the events of one chunk in batches, so that decoded events stay in a small,
/// cache-resident buffer instead of a whole chunk's worth of `IoEvent`s. Holds byte ranges into
/// the payload (owned by the caller) and the delta state between batches.
#[derive(Debug, Default)]
pub(super) struct ChunkReader {
    /// Unread byte range of each column within the payload.
    cols: [std::ops::Range<usize>; 7],
    time_unit_nanos: u64,
    latency_unit_nanos: u64,
    time: u64,
    end: u64,
    device: u32,
    len: u32,
    pid: u32,
    recent_pids: RecentPids,
    /// The largest device index of the events decoded so far.
    max_device: u32,
}

impl ChunkReader {
    /// Parses an events payload's layout. Nothing is decoded yet.
    pub(super) fn start(&mut self, payload: &[u8]) -> Result<(), String> {
        *self = ChunkReader::default();
        let config = super::bincode_config().with_limit::<{ super::MAX_PAYLOAD_BYTES }>();
        let (c, used): (ColumnsIn<'_>, usize) =
            bincode::serde::borrow_decode_from_slice(payload, config)
                .map_err(|e| format!("the events payload does not decode: {e}"))?;
        if used != payload.len() {
            return Err(format!(
                "{} byte(s) after the event columns",
                payload.len() - used
            ));
        }
        let n = c.event_count as usize;
        if n > super::MAX_CHUNK_EVENTS {
            return Err(format!(
                "{n} events exceed the limit of {} per chunk",
                super::MAX_CHUNK_EVENTS
            ));
        }
        if c.tags.len() != n {
            return Err(format!("{n} events but {} tag bytes", c.tags.len()));
        }
        if c.time_unit_nanos == 0 || c.latency_unit_nanos == 0 {
            return Err("a time or latency unit of 0".into());
        }
        // The columns borrow from `payload`; keep them as ranges so that the payload can be
        // owned by the caller between batches.
        let base = payload.as_ptr() as usize;
        let range = |col: &[u8]| {
            let start = col.as_ptr() as usize - base;
            start..start + col.len()
        };
        self.cols = [
            range(c.tags),
            range(c.times),
            range(c.offsets),
            range(c.lens),
            range(c.devices),
            range(c.latencies),
            range(c.pids),
        ];
        self.time_unit_nanos = c.time_unit_nanos;
        self.latency_unit_nanos = c.latency_unit_nanos;
        Ok(())
    }

    /// The largest device index of the events decoded so far (0 before any).
    pub(super) fn max_device(&self) -> u32 {
        self.max_device
    }

    /// Events not yet decoded.
    pub(super) fn remaining(&self) -> usize {
        self.cols[TAGS].len()
    }

    /// Decodes up to `max` more events of the chunk started with `payload`, appended to `out`.
    /// After the last event, checks that every column was used up exactly. `payload` is the one
    /// given to [`ChunkReader::start`] followed by [`PAYLOAD_PADDING`] bytes (any values): the
    /// columns' fast path reads 8 bytes at a time and checks the columns' ends after the batch.
    pub(super) fn read_batch(
        &mut self,
        payload: &[u8],
        out: &mut Vec<IoEvent>,
        max: usize,
    ) -> Result<(), String> {
        let n = self.remaining().min(max);
        let tags = self.cols[TAGS].start..self.cols[TAGS].start + n;
        let mut columns = VALUE_COLUMNS.map(|i| Column::new(&self.cols[i]));
        let from = out.len();
        let decoded = self.decode_events(payload, tags, &mut columns, out);
        // A column read past its end gives values that are not the file's: that is the error to
        // name, whatever the loop made of them.
        let checked = VALUE_COLUMNS
            .iter()
            .zip(&columns)
            .try_for_each(|(&i, c)| c.check(self.cols[i].start, COLUMN_NAMES[i]));
        if let Err(why) = checked.and(decoded) {
            out.truncate(from);
            return Err(why);
        }
        self.cols[TAGS].start += n;
        for (i, c) in VALUE_COLUMNS.into_iter().zip(&columns) {
            self.cols[i].start = c.pos;
        }
        if self.remaining() == 0 {
            for (i, c) in VALUE_COLUMNS.into_iter().zip(&columns) {
                c.check_consumed(COLUMN_NAMES[i])?;
            }
        }
        Ok(())
    }

    /// The decoding loop of [`ChunkReader::read_batch`]: the events whose tags are at `tags` in
    /// `payload`, appended to `out`, and the delta state carried on. A column read past its end
    /// yields values that are not the file's (the caller checks the columns afterwards and
    /// throws the batch away); that is safe, since every step wraps or is checked.
    #[inline(always)]
    fn decode_events(
        &mut self,
        payload: &[u8],
        tags: std::ops::Range<usize>,
        columns: &mut [Column; 6],
        out: &mut Vec<IoEvent>,
    ) -> Result<(), String> {
        let Some(tags) = payload.get(tags) else {
            return Err("the tag column is shorter than its events".into());
        };
        let [times, offsets, lens, devices, latencies, pids] = columns;
        let (time_unit, latency_unit) = (self.time_unit_nanos, self.latency_unit_nanos);
        let (mut time, mut end, mut device, mut len, mut pid) =
            (self.time, self.end, self.device, self.len, self.pid);

        out.reserve(tags.len());
        for &tag in tags {
            let dt = unzigzag(times.next(payload));
            time = time.wrapping_add((dt as u64).wrapping_mul(time_unit));

            let d_offset = unzigzag(offsets.next(payload)) as u64;
            let aligned = tag & TAG_ALIGNED != 0;
            let is_flush = tag & 3 == FLUSH_CODE;
            let base = if is_flush { 0 } else { end };
            let offset = base.wrapping_add(if aligned {
                d_offset.wrapping_mul(SECTOR_BYTES)
            } else {
                d_offset
            });
            if tag & TAG_NEW_LEN != 0 {
                let v = lens.next(payload);
                let bytes = if aligned {
                    v.checked_mul(SECTOR_BYTES)
                } else {
                    Some(v)
                };
                len = bytes
                    .and_then(|b| u32::try_from(b).ok())
                    .ok_or_else(|| format!("length {v} does not fit 32 bits"))?;
            }
            if !is_flush {
                end = offset.wrapping_add(u64::from(len));
            }
            if tag & TAG_NEW_DEVICE != 0 {
                let v = devices.next(payload);
                device = u32::try_from(v)
                    .ok()
                    .filter(|&d| (d as usize) < super::MAX_DEVICES)
                    .ok_or_else(|| {
                        format!(
                            "device index {v} is over the limit of {}",
                            super::MAX_DEVICES
                        )
                    })?;
                self.max_device = self.max_device.max(device);
            }
            let latency_nanos = if tag & TAG_LATENCY != 0 {
                let v = latencies.next(payload);
                Some(
                    v.checked_mul(latency_unit)
                        .ok_or_else(|| format!("latency {v} x {latency_unit} overflows"))?,
                )
            } else {
                None
            };
            let pid_out = if tag & TAG_PID != 0 {
                if tag & TAG_NEW_PID != 0 {
                    pid = self.recent_pids.decode(pids.next(payload))?;
                }
                Some(pid)
            } else {
                None
            };
            out.push(IoEvent {
                time_nanos: time,
                device,
                offset_bytes: offset,
                len_bytes: len,
                op: OPS[usize::from(tag & 3)],
                latency_nanos,
                pid: pid_out,
            });
        }
        (self.time, self.end, self.device, self.len, self.pid) = (time, end, device, len, pid);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The table codes and decodes pids exactly as a move-to-front list of the 16 most
        /// recent pids (a plain `Vec`, the rule written the obvious way). The encoder and the
        /// decoder share the table's code, so a round trip alone cannot see a wrong shift.
        #[test]
        fn recent_pids_are_a_move_to_front_list(pids in proptest::collection::vec(0u32..40, 0..300)) {
            let (mut coder, mut decoder) = (RecentPids::default(), RecentPids::default());
            let mut list: Vec<u32> = Vec::new();
            for pid in pids {
                let code = coder.code(pid);
                let want = match list.iter().position(|&p| p == pid) {
                    Some(i) => {
                        list.remove(i);
                        i as u64
                    }
                    None => RECENT_PIDS as u64 + u64::from(pid),
                };
                list.insert(0, pid);
                list.truncate(RECENT_PIDS);
                prop_assert_eq!(code, want);
                prop_assert_eq!(decoder.decode(code), Ok(pid));
            }
        }
    }

    proptest! {
        /// The one-load reader of a column gives every value the general LEB128 reader gives,
        /// and ends where it does, for values of every length (1 to 10 bytes) and whatever
        /// bytes follow the column (the next column's, or the padding).
        #[test]
        fn a_column_reads_values_as_the_general_reader_does(
            values in proptest::collection::vec((0u32..=64, any::<u64>()), 1..60),
            after in proptest::collection::vec(any::<u8>(), PAYLOAD_PADDING..=PAYLOAD_PADDING),
        ) {
            let values: Vec<u64> = values
                .into_iter()
                .map(|(bits, v)| if bits == 64 { v } else { v & ((1u64 << bits) - 1) })
                .collect();
            let mut payload = Vec::new();
            for &v in &values {
                write_u64(&mut payload, v);
            }
            let end = payload.len();
            payload.extend_from_slice(&after);
            let mut column = Column::new(&(0..end));
            let mut pos = 0;
            for &v in &values {
                let want = crate::varint::read_u64(&payload[..end], &mut pos);
                prop_assert_eq!(Some(column.next(&payload)), want);
                prop_assert_eq!(column.pos, pos);
                prop_assert_eq!(want, Some(v));
            }
            prop_assert!(column.check(0, "test").is_ok());
            prop_assert!(column.check_consumed("test").is_ok());
        }
    }

    fn events(n: u64) -> Vec<IoEvent> {
        (0..n)
            .map(|i| IoEvent {
                time_nanos: i * 1_000_003,
                device: (i % 3) as u32,
                offset_bytes: (i * 7_919 % 1_000) << 30,
                len_bytes: 4096 << (i % 3),
                op: OPS[(i % 3) as usize],
                latency_nanos: Some(i * 31_337),
                pid: Some(100 + (i % 20) as u32),
            })
            .collect()
    }

    /// The payload of `events` after `damage` changed the encoder's columns.
    fn payload(events: &[IoEvent], damage: impl FnOnce(&mut ColumnEncoder)) -> Vec<u8> {
        let mut enc = ColumnEncoder::default();
        let mut whole = Vec::new();
        enc.encode(events, &mut whole);
        let (c, _): (ColumnsIn<'_>, usize) =
            bincode::serde::borrow_decode_from_slice(&whole, super::super::bincode_config())
                .expect("decodes");
        damage(&mut enc);
        let mut payload = Vec::new();
        enc.write(
            events.len() as u32,
            c.time_unit_nanos,
            c.latency_unit_nanos,
            &mut payload,
        );
        payload
    }

    /// Reads a payload in batches of `batch` as the decoder does (with its zero padding).
    fn read(payload: &[u8], batch: usize) -> Result<Vec<IoEvent>, String> {
        let mut reader = ChunkReader::default();
        reader.start(payload)?;
        let mut padded = payload.to_vec();
        padded.resize(payload.len() + PAYLOAD_PADDING, 0);
        let mut out = Vec::new();
        while reader.remaining() > 0 {
            reader.read_batch(&padded, &mut out, batch)?;
        }
        Ok(out)
    }

    #[test]
    fn columns_round_trip_in_any_batch_size() {
        let events = events(300);
        for batch in [1, 7, 300, 1024] {
            let got = read(&payload(&events, |_| ()), batch);
            assert!(got.as_ref() == Ok(&events), "batch {batch}");
        }
    }

    #[test]
    fn a_column_too_short_or_too_long_is_named() {
        let events = events(300);
        for batch in [1, 7, 1024] {
            // The offsets column loses its last byte: the last value reads into the next column
            // (or the padding) and the batch is refused.
            let short = read(
                &payload(&events, |e| e.offsets.truncate(e.offsets.len() - 1)),
                batch,
            );
            assert!(
                short.as_ref().is_err_and(|e| e.contains("offset column")),
                "{short:?}"
            );
            // The time column's last value never ends.
            let open = read(
                &payload(&events, |e| *e.times.last_mut().expect("bytes") |= 0x80),
                batch,
            );
            assert!(
                open.as_ref().is_err_and(|e| e.contains("time column")),
                "{open:?}"
            );
            // The latency column has a byte more than its events use.
            let long = read(&payload(&events, |e| e.latencies.push(5)), batch);
            assert!(
                long.as_ref()
                    .is_err_and(|e| e.contains("latency column has 1 byte(s) more")),
                "{long:?}"
            );
            // A pid column cut in the middle: some values are missing entirely.
            let cut = read(&payload(&events, |e| e.pids.truncate(3)), batch);
            assert!(
                cut.as_ref().is_err_and(|e| e.contains("pid column")),
                "{cut:?}"
            );
        }
    }

    #[test]
    fn a_recent_pid_index_past_the_pids_seen_is_an_error() {
        let mut table = RecentPids::default();
        assert_eq!(table.decode(RECENT_PIDS as u64 + 7), Ok(7));
        assert!(table.decode(1).is_err());
        assert_eq!(table.decode(0), Ok(7));
    }
}
