//! bcache's congestion bypass, as Linux 6.1 behaves (`drivers/md/bcache/io.c`,
//! `request.c`; `Documentation/admin-guide/bcache.rst`, "congested_read_threshold_us" and
//! "congested_write_threshold_us": "Traffic's still going to the spindle/still getting cache
//! misses", the cache device being slow).
//!
//! - **Accounting** (`bch_bbio_count_io_errors`, at every completion of a data bio on the cache
//!   device: a read served from the cache, a write inserting data). Its time is taken in
//!   `local_clock_us()` units, nanoseconds >> 10 (1.024 µs). A bio slower than its direction's
//!   threshold makes the set congested: it remembers when (`congested_last_us`) and subtracts
//!   the latency in units of 1,024 of those (about a millisecond) from `congested`, never below
//!   `-CONGESTED_MAX` (1,024); every bio within its threshold adds one back while `congested`
//!   is negative. A threshold of 0 turns its direction off.
//! - **The limit** (`bch_get_congested`, at every bio's bypass decision): with `i` the
//!   milliseconds (1,024 units) since the last slow bio plus `congested`, the set is congested
//!   while `i < 0`; then `i + CONGESTED_MAX` (1 … 1,023) is turned into a stream length in
//!   sectors by `fract_exp_two(i, 6)` (`2^(i/64)` with the last 6 bits as a binary fraction:
//!   32 KiB of stream at -1,023, 31.75 MiB at -1) less the number of bits set in a random 32-bit
//!   word, at least 1. A bio whose task's sequential stream (the same detector as
//!   `sequential_cutoff`'s) is at least that long bypasses the cache (`bcache_bypass_congested`).
//!   So right after a slow bio nearly every bio bypasses, and the limit grows back towards
//!   "never" as fast bios complete and time passes.
//!
//! The random word is drawn from a fixed-seed generator, so a run is repeatable; its bit count
//! (16 on average) matters only where the limit is a few dozen sectors. Btree node bios, which
//! the kernel counts too, are not modelled (a few per second), nor `local_clock_us()`'s 32-bit
//! wrap (a slow bio 73 minutes old looks recent again to the kernel).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// `congested_read_threshold_us`'s default (`bch_cache_set_alloc`: 2,000).
pub const DEFAULT_READ_THRESHOLD_US: u64 = 2_000;
/// `congested_write_threshold_us`'s default (20,000).
pub const DEFAULT_WRITE_THRESHOLD_US: u64 = 20_000;
/// `CONGESTED_MAX` (bcache.h).
pub const CONGESTED_MAX: i64 = 1024;

/// `fract_exp_two(x, fract_bits)` (util.h): `2^(x >> fract_bits)` plus the low bits as a binary
/// fraction of it.
pub fn fract_exp_two(x: u64, fract_bits: u32) -> u64 {
    let fract = x & ((1 << fract_bits) - 1);
    let whole = 1u64 << (x >> fract_bits).min(62);
    whole + ((whole * fract) >> fract_bits)
}

/// A cache-device bio in flight: (completion, submission, write).
type InFlight = Reverse<(u64, u64, bool)>;

/// The congestion state of one cache set.
#[derive(Clone, Debug)]
pub struct Congestion {
    read_threshold_us: u64,
    write_threshold_us: u64,
    /// `c->congested`: 0 or negative.
    congested: i64,
    /// `c->congested_last_us`, in nanoseconds; `None` before the first slow bio.
    last_slow: Option<u64>,
    inflight: BinaryHeap<InFlight>,
    rng: u64,
    /// Cache-device bios slower than their threshold.
    pub slow_ios: u64,
}

impl Congestion {
    pub fn new(read_threshold_us: u64, write_threshold_us: u64) -> Congestion {
        Congestion {
            read_threshold_us,
            write_threshold_us,
            congested: 0,
            last_slow: None,
            inflight: BinaryHeap::new(),
            rng: 0x9E37_79B9_7F4A_7C15,
            slow_ios: 0,
        }
    }

    /// The state for a cache device with these latencies (`None`: below the threshold). When
    /// no bio can be slower than its threshold the counter stays 0 for ever and no bio needs
    /// accounting, so the state is built switched off (as with both thresholds at 0).
    pub fn for_latencies(
        read_threshold_us: u64,
        write_threshold_us: u64,
        read_nanos: Option<u64>,
        write_nanos: Option<u64>,
    ) -> Congestion {
        // A bio's time in local_clock_us() units can exceed `latency >> 10` by one (rounding).
        let can_be_slow = |threshold: u64, latency: Option<u64>| {
            threshold > 0 && latency.is_some_and(|l| (l >> 10) + 1 > threshold)
        };
        if can_be_slow(read_threshold_us, read_nanos)
            || can_be_slow(write_threshold_us, write_nanos)
        {
            Congestion::new(read_threshold_us, write_threshold_us)
        } else {
            Congestion::new(0, 0)
        }
    }

    /// Whether either threshold is set (both 0: `bch_get_congested` returns 0 at once).
    pub fn enabled(&self) -> bool {
        self.read_threshold_us != 0 || self.write_threshold_us != 0
    }

    /// A data bio submitted to the cache device at `now` that takes `latency_nanos`.
    pub fn submit(&mut self, now: u64, latency_nanos: u64, write: bool) {
        if self.enabled() {
            self.inflight
                .push(Reverse((now.saturating_add(latency_nanos), now, write)));
        }
    }

    /// Accounts every cache-device bio completed by `now`, in completion order.
    pub fn complete_until(&mut self, now: u64) {
        while let Some(&Reverse((done, submitted, write))) = self.inflight.peek() {
            if done > now {
                break;
            }
            self.inflight.pop();
            self.account(done, submitted, write);
        }
    }

    /// `bch_bbio_count_io_errors`' congestion part.
    fn account(&mut self, done: u64, submitted: u64, write: bool) {
        let threshold = if write {
            self.write_threshold_us
        } else {
            self.read_threshold_us
        };
        if threshold == 0 {
            return;
        }
        let us = (done >> 10) - (submitted >> 10);
        if us > threshold {
            self.slow_ios += 1;
            self.last_slow = Some(done);
            let ms = ((us / 1024) as i64).min(CONGESTED_MAX + self.congested);
            self.congested -= ms;
        } else if self.congested < 0 {
            self.congested += 1;
        }
    }

    /// `bch_get_congested` at `now`: 0 (not congested) or the stream length in sectors from
    /// which a bio bypasses the cache.
    pub fn limit(&mut self, now: u64) -> u64 {
        if !self.enabled() {
            return 0;
        }
        self.complete_until(now);
        let Some(last) = self.last_slow else {
            return 0;
        };
        let elapsed = ((now >> 10).saturating_sub(last >> 10) / 1024).min(i64::MAX as u64);
        let mut i = elapsed as i64 + self.congested;
        if i >= 0 {
            return 0;
        }
        i += CONGESTED_MAX;
        if i > 0 {
            i = fract_exp_two(i as u64, 6) as i64;
        }
        i -= i64::from(self.random_u32().count_ones());
        if i > 0 {
            i as u64
        } else {
            1
        }
    }

    /// xorshift64*: a repeatable stand-in for `get_random_u32()`.
    fn random_u32(&mut self) -> u32 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1 << 20; // 1,024 local_clock_us units

    #[test]
    fn fract_exp_two_matches_its_definition() {
        assert_eq!(fract_exp_two(0, 6), 1);
        assert_eq!(fract_exp_two(64, 6), 2);
        assert_eq!(fract_exp_two(96, 6), 3);
        assert_eq!(fract_exp_two(1023, 6), 32768 + ((32768 * 63) >> 6));
    }

    #[test]
    fn off_without_thresholds_or_slow_bios() {
        let mut c = Congestion::new(0, 0);
        c.submit(0, 100 * MS, false);
        assert_eq!(c.limit(200 * MS), 0);
        let mut c = Congestion::new(2000, 20000);
        for i in 0..100 {
            c.submit(i * MS, MS, false);
        }
        assert_eq!(c.limit(200 * MS), 0);
        assert_eq!(c.slow_ios, 0);
    }

    #[test]
    fn no_accounting_when_no_bio_can_be_slow() {
        assert!(!Congestion::for_latencies(2000, 20000, None, None).enabled());
        assert!(!Congestion::for_latencies(2000, 20000, Some(100_000), Some(1_000_000)).enabled());
        assert!(!Congestion::for_latencies(0, 20000, Some(10_000_000), None).enabled());
        assert!(Congestion::for_latencies(2000, 20000, Some(10_000_000), None).enabled());
        assert!(Congestion::for_latencies(2000, 20000, None, Some(30_000_000)).enabled());
    }

    #[test]
    fn a_slow_read_congests_and_fast_bios_and_time_undo_it() {
        let mut c = Congestion::new(2000, 20000);
        // A 10 ms read (about 9.5 of the kernel's milliseconds) completes at 10 ms.
        c.submit(0, 10_000_000, false);
        assert_eq!(c.limit(5_000_000), 0, "not completed yet");
        let l = c.limit(10_000_000);
        assert!(l > 0, "congested right after the slow read");
        assert_eq!(c.congested, -9);
        // i = -9 + 1024 = 1015: 2^15 · (1 + 55/64) less up to 32 random bits.
        assert!(l > 60_000 && l <= fract_exp_two(1015, 6));
        // Nine fast bios later the set is not congested any more.
        for k in 0..9 {
            c.submit(10_000_000 + k, 100_000, false);
        }
        assert_eq!(c.limit(11_000_000), 0);
        // A slow write below its own threshold changes nothing.
        c.submit(11_000_000, 15_000_000, true);
        assert_eq!(c.limit(30_000_000), 0);
        assert_eq!(c.slow_ios, 1);
    }

    #[test]
    fn a_very_slow_bio_bypasses_nearly_everything_until_time_passes() {
        let mut c = Congestion::new(2000, 20000);
        c.submit(0, 2_000_000_000, false); // 2 s: capped at CONGESTED_MAX
        let t = 2_000_000_000;
        assert_eq!(c.limit(t), 1, "congested -1024: every bio bypasses");
        assert_eq!(c.congested, -CONGESTED_MAX);
        // About a second later (1,024 of the kernel's ms): no longer congested.
        assert_eq!(c.limit(t + 1025 * MS), 0);
        // Half-way, the limit is a stream of 2^8 sectors, give or take the random bits.
        let l = c.limit(t + 512 * MS);
        assert!((200..=260).contains(&l), "{l}");
    }
}
