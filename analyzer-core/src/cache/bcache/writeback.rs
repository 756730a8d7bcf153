//! bcache's background writeback in write-back mode (`writeback.c` in Linux 6.1, described in
//! `Documentation/admin-guide/bcache.rst`, "writeback_percent" and "writeback_rate"): a kernel
//! thread per backing device copies dirty extents from the cache to the backing device at a
//! rate a controller sets, and marks them clean, so that their buckets can be reclaimed again.
//! Without it dirty data only grows until the cache stops taking writes (70% in use) and then
//! everything (95%).
//!
//! - **The rate** (sectors per second) is recomputed every 5 s (`writeback_rate_update_seconds`)
//!   while there is dirty data. The target is `writeback_percent` (10%) of the cache. The
//!   proportional term is the dirty sectors beyond the target over 40
//!   (`writeback_rate_p_term_inverse`: retire the excess in 40 s); the integral term adds the
//!   excess times 5 s each update (only while the thread keeps up with its schedule when the
//!   excess is positive, and only down to 0 when it is negative) over 10,000
//!   (`writeback_rate_i_term_inverse`). When more than 50% of the buckets are unavailable (dirty
//!   or metadata, as of the last garbage collection) and dirty data is spread thin (the
//!   unavailable buckets hold over 3× the dirty sectors), the proportional term is at least the
//!   dirty sectors per unavailable bucket times 1, 10 or 1,000 per point above 50, 57 or 64
//!   (`writeback_rate_fp_term_low/mid/high`: the fragmentation terms of Linux 5.14). The sum
//!   is clamped to 8 (`writeback_rate_minimum`) … 10⁹. It starts at 1,024.
//! - **Idle**: each update while there is dirty data counts one idle round; any bio to the
//!   device resets the count. At 6 rounds (about 30 s without a bio) the rate goes to the
//!   maximum until the next bio, which drops it to 1 sector/s until the next update.
//! - **The thread** wakes when the first dirty data appears, takes up to 500 dirty keys in
//!   backing-device order from where its last scan stopped (wrapping once to where it began:
//!   then it has "searched the full index"), and writes them back in passes of at most 5
//!   contiguous keys and 5,000 sectors, sleeping after each pass as long as the pass's sectors
//!   take at the rate (its schedule never runs more than 2 s behind nor 2.5 s ahead). After a
//!   full search it sleeps `writeback_delay` (30 s); a full search that found nothing leaves it
//!   asleep until new dirty data arrives. A key overwritten since it was taken is skipped.
//!
//! The updates run every 5 s from when the backing device was attached to the cache
//! (`BcacheConfig::attached_before_nanos` before the first bio; when not given, the first
//! update is 5 s after the first bio).
//!
//! Not modelled: the devices' speed (a pass completes at once, so at the maximum rate the
//! dirty data goes as fast as the keys can be listed; the kernel is bounded by the backing
//! device, 64 writebacks in flight) and `partial_stripes_expensive` (backing devices with a
//! stripe size).

use std::collections::VecDeque;

use super::{BcacheModel, BucketState, Extent};

/// `WRITEBACK_RATE_UPDATE_SECS_DEFAULT`.
pub const RATE_UPDATE_NANOS: u64 = 5_000_000_000;
/// `writeback_rate_p_term_inverse`'s default.
pub const P_TERM_INVERSE: i64 = 40;
/// `writeback_rate_i_term_inverse`'s default.
pub const I_TERM_INVERSE: i64 = 10_000;
/// `writeback_rate_minimum`'s default, sectors per second.
pub const RATE_MINIMUM: i64 = 8;
/// The rate's upper clamp (`NSEC_PER_SEC`), sectors per second.
pub const RATE_MAXIMUM: i64 = 1_000_000_000;
/// The rate a device starts with.
pub const RATE_INITIAL: i64 = 1024;
/// `quit_max_writeback_rate()`: the rate when a bio ends an idle period at the maximum.
pub const RATE_AFTER_IDLE: i64 = 1;
/// `BCH_WRITEBACK_FRAGMENT_THRESHOLD_LOW/MID/HIGH`, percent of buckets in use.
pub const FRAGMENT_THRESHOLDS: [u64; 3] = [50, 57, 64];
/// `writeback_rate_fp_term_low/mid/high`'s defaults.
pub const FRAGMENT_TERMS: [i64; 3] = [1, 10, 1000];
/// `KEYBUF_NR`: keys one scan takes.
pub const KEYBUF_KEYS: usize = 500;
/// `MAX_WRITEBACKS_IN_PASS` and `MAX_WRITESIZE_IN_PASS` (sectors).
pub const MAX_KEYS_IN_PASS: usize = 5;
pub const MAX_SECTORS_IN_PASS: u64 = 5000;
/// `writeback_delay`'s default: the sleep after a full search of the index.
pub const DELAY_AFTER_FULL_SEARCH_NANOS: u64 = 30_000_000_000;
/// Rate updates without a bio before the rate goes to the maximum (`idle_counter_exceeded`
/// with one backing device: `dev_nr * dev_nr * 6`).
pub const IDLE_ROUNDS_FOR_MAXIMUM: u32 = 6;

/// What the writeback thread is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Thread {
    /// No dirty data: asleep until some arrives.
    Waiting,
    /// In `writeback_delay` until then.
    Sleeping(u64),
    /// Its next pass starts then.
    Ready(u64),
}

/// The writeback state of one backing device.
#[derive(Clone, Debug)]
pub(super) struct Writeback {
    percent: u64,
    /// How long before the first bio the device was attached (the updates' phase).
    attached_before: Option<u64>,
    /// Sectors per second; `None`: the maximum (an idle device).
    rate: Option<i64>,
    integral: i64,
    next_update: Option<u64>,
    idle_rounds: u32,
    /// `writeback_rate.next`: when the thread's schedule allows its next pass.
    next: u64,
    thread: Thread,
    has_dirty: bool,
    /// Where the last scan stopped (a backing sector).
    cursor: u64,
    keybuf: VecDeque<(u64, Extent)>,
    searched_full: bool,
}

impl Writeback {
    pub(super) fn new(percent: u64, attached_before: Option<u64>) -> Writeback {
        Writeback {
            percent,
            attached_before,
            rate: (percent > 0).then_some(RATE_INITIAL),
            integral: 0,
            next_update: None,
            idle_rounds: 0,
            next: 0,
            thread: Thread::Waiting,
            has_dirty: false,
            cursor: 0,
            keybuf: VecDeque::new(),
            searched_full: false,
        }
    }

    /// The rate now, sectors per second (`None`: the maximum).
    pub(super) fn rate(&self) -> Option<i64> {
        self.rate
    }

    /// `bch_ratelimit_reset` then `bch_next_delay(…, sectors)`: when the pass after one of
    /// `sectors` may start, with the schedule kept within 2 s behind and 2.5 s ahead of `now`.
    fn schedule(&mut self, now: u64, sectors: u64) -> u64 {
        if let Some(rate) = self.rate.filter(|&r| r > 0) {
            let add = (u128::from(sectors) * 1_000_000_000 / rate as u128).min(u64::MAX as u128);
            self.next = self.next.saturating_add(add as u64);
        }
        self.next = self.next.min(now.saturating_add(2_500_000_000));
        self.next = self.next.max(now.saturating_sub(2_000_000_000));
        self.next.max(now)
    }
}

impl BcacheModel {
    /// Runs the writeback thread and its rate updates up to `now` (a bio's time, or the end).
    pub(super) fn writeback_until(&mut self, now: u64) {
        let Some(wb) = self.writeback.as_ref() else {
            return;
        };
        if wb.next_update.is_none() {
            // The first bio: the update work runs every 5 s from the device's attachment.
            let since = wb.attached_before.map_or(0, |d| d % RATE_UPDATE_NANOS);
            self.writeback.as_mut().expect("writeback").next_update =
                Some(now.saturating_add(RATE_UPDATE_NANOS - since));
            return;
        }
        loop {
            let wb = self.writeback.as_ref().expect("writeback");
            let update = wb.next_update.unwrap_or(u64::MAX);
            let thread = match wb.thread {
                Thread::Waiting => u64::MAX,
                Thread::Sleeping(t) | Thread::Ready(t) => t,
            };
            let t = update.min(thread);
            if t > now || t == u64::MAX {
                return;
            }
            if update <= thread {
                self.update_rate(t);
                let wb = self.writeback.as_mut().expect("writeback");
                wb.next_update = Some(t.saturating_add(RATE_UPDATE_NANOS));
            } else {
                self.thread_step(t);
            }
        }
    }

    /// A bio reached the device at `now` (`cached_dev_submit_bio`): the idle count restarts,
    /// and a maximum rate drops to [`RATE_AFTER_IDLE`].
    pub(super) fn writeback_front_end_io(&mut self) {
        if let Some(wb) = self.writeback.as_mut() {
            wb.idle_rounds = 0;
            if wb.rate.is_none() && wb.percent > 0 {
                wb.rate = Some(RATE_AFTER_IDLE);
            }
        }
    }

    /// `bch_writeback_add`: dirty data was inserted at `now`; a waiting thread starts.
    pub(super) fn writeback_dirty_added(&mut self, now: u64) {
        if let Some(wb) = self.writeback.as_mut() {
            wb.has_dirty = true;
            if wb.thread == Thread::Waiting {
                wb.next = now;
                wb.thread = Thread::Ready(now);
            }
        }
    }

    /// `update_writeback_rate`, at `now`.
    fn update_rate(&mut self, now: u64) {
        let cache_sectors = (self.cfg.nbuckets() * self.bucket_sectors) as i64;
        let dirty = self.dirty_sectors as i64;
        let unavailable = self.gc_unavailable_buckets as i64;
        let in_use = self.in_use_percent;
        let bucket_sectors = self.bucket_sectors as i64;
        let wb = self.writeback.as_mut().expect("writeback");
        if !wb.has_dirty || wb.percent == 0 {
            return;
        }
        wb.idle_rounds += 1;
        if wb.idle_rounds >= IDLE_ROUNDS_FOR_MAXIMUM {
            wb.rate = None;
            return;
        }
        let target = cache_sectors * wb.percent as i64 / 100;
        let error = dirty - target;
        let mut proportional = error / P_TERM_INVERSE;
        if in_use > FRAGMENT_THRESHOLDS[0] && dirty > 0 && unavailable > 0 {
            let fragment = unavailable * bucket_sectors / dirty;
            let (threshold, term) = if in_use <= FRAGMENT_THRESHOLDS[1] {
                (FRAGMENT_THRESHOLDS[0], FRAGMENT_TERMS[0])
            } else if in_use <= FRAGMENT_THRESHOLDS[2] {
                (FRAGMENT_THRESHOLDS[1], FRAGMENT_TERMS[1])
            } else {
                (FRAGMENT_THRESHOLDS[2], FRAGMENT_TERMS[2])
            };
            let fps = (dirty / unavailable) * term * (in_use - threshold) as i64;
            if fragment > 3 && fps > proportional {
                proportional = fps;
            }
        }
        let keeping_up = now < wb.next.saturating_add(1_000_000);
        if (error < 0 && wb.integral > 0) || (error > 0 && keeping_up) {
            wb.integral = wb
                .integral
                .saturating_add(error.saturating_mul((RATE_UPDATE_NANOS / 1_000_000_000) as i64));
        }
        let integral = wb.integral / I_TERM_INVERSE;
        wb.rate = Some(
            proportional
                .saturating_add(integral)
                .clamp(RATE_MINIMUM, RATE_MAXIMUM),
        );
    }

    /// One step of the writeback thread at `now`: wake from its delay, or make one pass.
    fn thread_step(&mut self, now: u64) {
        let wb = self.writeback.as_mut().expect("writeback");
        match wb.thread {
            Thread::Waiting => {}
            Thread::Sleeping(_) => {
                wb.next = now;
                wb.thread = if wb.has_dirty {
                    Thread::Ready(now)
                } else {
                    Thread::Waiting
                };
            }
            Thread::Ready(_) => {
                if wb.keybuf.is_empty() {
                    if !wb.has_dirty {
                        wb.thread = Thread::Waiting;
                        return;
                    }
                    let full = self.refill_keybuf();
                    let wb = self.writeback.as_mut().expect("writeback");
                    wb.searched_full = full;
                    if full && wb.keybuf.is_empty() {
                        wb.has_dirty = false;
                        wb.thread =
                            Thread::Sleeping(now.saturating_add(DELAY_AFTER_FULL_SEARCH_NANOS));
                        return;
                    }
                }
                let sectors = self.writeback_pass();
                let wb = self.writeback.as_mut().expect("writeback");
                let at = wb.schedule(now, sectors);
                wb.thread = if wb.keybuf.is_empty() && wb.searched_full {
                    Thread::Sleeping(at.saturating_add(DELAY_AFTER_FULL_SEARCH_NANOS))
                } else {
                    Thread::Ready(at)
                };
            }
        }
    }

    /// `refill_dirty`: up to [`KEYBUF_KEYS`] dirty extents from the cursor on, wrapping once
    /// to where the scan began. True when the scan wrapped and reached its start (the whole
    /// index searched).
    fn refill_keybuf(&mut self) -> bool {
        let start = self.writeback.as_ref().expect("writeback").cursor;
        let mut keys = Vec::new();
        let mut last = None;
        let buckets = &self.buckets;
        let dirty_live = |x: &Extent| {
            x.dirty && {
                let b = &buckets[x.bucket as usize];
                b.gen == x.gen && b.state == BucketState::Data
            }
        };
        for (&s, x) in self.index.range(start..) {
            if keys.len() == KEYBUF_KEYS {
                break;
            }
            if dirty_live(x) {
                keys.push((s, *x));
                last = Some(x.end);
            }
        }
        let mut full = false;
        if keys.len() < KEYBUF_KEYS {
            for (&s, x) in self.index.range(..start) {
                if keys.len() == KEYBUF_KEYS {
                    break;
                }
                if dirty_live(x) {
                    keys.push((s, *x));
                    last = Some(x.end);
                }
            }
            full = keys.len() < KEYBUF_KEYS;
        }
        let wb = self.writeback.as_mut().expect("writeback");
        if let Some(end) = last {
            wb.cursor = end;
        }
        wb.keybuf.extend(keys);
        full
    }

    /// One pass of `read_dirty`: up to [`MAX_KEYS_IN_PASS`] contiguous keys (at most
    /// [`MAX_SECTORS_IN_PASS`] sectors once one is taken) written back and marked clean.
    /// Keys overwritten since the scan are skipped. Returns the sectors written.
    fn writeback_pass(&mut self) -> u64 {
        let mut sectors = 0;
        let mut keys = 0;
        let mut last_end: Option<u64> = None;
        loop {
            let wb = self.writeback.as_mut().expect("writeback");
            let Some(&(s, x)) = wb.keybuf.front() else {
                break;
            };
            if keys >= MAX_KEYS_IN_PASS
                || sectors >= MAX_SECTORS_IN_PASS
                || last_end.is_some_and(|e| e != s)
            {
                break;
            }
            wb.keybuf.pop_front();
            let current = self.index.get(&s).copied();
            let unchanged = current.is_some_and(|c| {
                c.end == x.end && c.bucket == x.bucket && c.gen == x.gen && c.dirty
            }) && self.buckets[x.bucket as usize].gen == x.gen;
            if !unchanged {
                continue;
            }
            let n = x.end - s;
            if let Some(c) = self.index.get_mut(&s) {
                c.dirty = false;
            }
            let b = &mut self.buckets[x.bucket as usize];
            b.dirty = b.dirty.saturating_sub(n);
            self.dirty_sectors = self.dirty_sectors.saturating_sub(n);
            self.stats.writeback_bytes += n * 512;
            self.stats.writeback_keys += 1;
            if let Some(log) = &mut self.writeback_log {
                log.push((s, x.end));
            }
            sectors += n;
            keys += 1;
            last_end = Some(x.end);
        }
        sectors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_spaces_passes_by_the_rate_and_bounds_the_backlog() {
        let mut wb = Writeback::new(10, None);
        wb.rate = Some(1000);
        wb.next = 0;
        // 500 sectors at 1,000 sectors/s: the next pass half a second later.
        assert_eq!(wb.schedule(0, 500), 500_000_000);
        // Never more than 2.5 s ahead of now.
        assert_eq!(wb.schedule(0, 10_000), 2_500_000_000);
        // A schedule far behind now is pulled up to 2 s behind; the pass starts now.
        wb.next = 0;
        assert_eq!(wb.schedule(10_000_000_000, 0), 10_000_000_000);
        assert_eq!(wb.next, 8_000_000_000);
        // The maximum rate adds nothing.
        wb.rate = None;
        wb.next = 5;
        assert_eq!(wb.schedule(5, 1_000_000), 5);
    }
}
