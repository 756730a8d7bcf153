//! Future knowledge for Belady's MIN: for every line access, when the same line is accessed
//! next.
//!
//! Belady is offline, so the simulator takes the future from a first pass over the same events.
//! [`NextUseBuilder`] sees the events in order and records, for the i-th line access, the index
//! of the next access to that line ([`NEVER`] if none). The simulator numbers line accesses the
//! same way — every line of every read and write request, in request order, after the optional
//! spatial filter — so the builder must see the same events with the same filter and line size.
//! Memory: 8 bytes per line access plus one map entry per distinct line, which is why the CLI
//! builds it only for `--policy belady` (it reads the input twice).

use crate::event::{IoEvent, Op};
use crate::hash::{block_key, IntMap};

/// "Never accessed again".
pub const NEVER: u64 = u64::MAX;

/// The line range a request touches for the cache, or `None` when it touches no line (flushes,
/// discards and zero-length requests are not line accesses).
#[inline]
pub(crate) fn accessed_lines(e: &IoEvent, line_bytes: u64) -> Option<std::ops::Range<u64>> {
    match e.op {
        Op::Read | Op::Write if e.len_bytes > 0 => {
            if line_bytes.is_power_of_two() {
                // Shifts instead of two 64-bit divisions: this runs once per request.
                let shift = line_bytes.trailing_zeros();
                Some(e.offset_bytes >> shift..((e.end_bytes() - 1) >> shift) + 1)
            } else {
                Some(e.block_range(line_bytes))
            }
        }
        _ => None,
    }
}

/// The next-access table [`crate::cache::Simulator::with_future`] takes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NextUse {
    pub(crate) next: Vec<u64>,
}

impl NextUse {
    /// Line accesses covered.
    pub fn len(&self) -> usize {
        self.next.len()
    }
    pub fn is_empty(&self) -> bool {
        self.next.is_empty()
    }
    /// Builds the table from a replayable sequence of events (a slice, a re-opened file).
    pub fn from_events<'a>(
        events: impl IntoIterator<Item = &'a IoEvent>,
        line_bytes: u64,
    ) -> NextUse {
        let mut b = NextUseBuilder::new(line_bytes);
        for e in events {
            b.observe(e);
        }
        b.finish()
    }
}

/// Streams events and builds a [`NextUse`].
#[derive(Clone, Debug)]
pub struct NextUseBuilder {
    line_bytes: u64,
    last: IntMap<u64, u64>,
    next: Vec<u64>,
}

impl NextUseBuilder {
    pub fn new(line_bytes: u64) -> NextUseBuilder {
        NextUseBuilder {
            line_bytes: line_bytes.max(1),
            last: IntMap::default(),
            next: Vec::new(),
        }
    }

    pub fn observe(&mut self, e: &IoEvent) {
        self.observe_filtered(e, |_| true);
    }

    /// Like [`NextUseBuilder::observe`], skipping lines for which `keep_line(line)` is false;
    /// must match the filter given to [`crate::cache::Simulator::observe_filtered`].
    pub fn observe_filtered(&mut self, e: &IoEvent, keep_line: impl Fn(u64) -> bool) {
        let Some(lines) = accessed_lines(e, self.line_bytes) else {
            return;
        };
        for line in lines {
            if keep_line(line) {
                self.push(block_key(e.device, line));
            }
        }
    }

    fn push(&mut self, key: u64) {
        let i = self.next.len() as u64;
        if let Some(prev) = self.last.insert(key, i) {
            self.next[prev as usize] = i;
        }
        self.next.push(NEVER);
    }

    pub fn finish(self) -> NextUse {
        NextUse { next: self.next }
    }
}

/// The next-use table of a plain key sequence (one key per access).
pub fn next_use_of_keys(keys: &[u64]) -> Vec<u64> {
    let mut b = NextUseBuilder::new(1);
    for &k in keys {
        b.push(k);
    }
    b.finish().next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessed_lines_agrees_with_block_range() {
        for (offset_bytes, len_bytes) in [(0, 1), (4095, 2), (8192, 4096), (1 << 40, 12345), (7, 0)]
        {
            for op in [Op::Read, Op::Write, Op::Discard] {
                let e = IoEvent {
                    time_nanos: 0,
                    device: 0,
                    offset_bytes,
                    len_bytes,
                    op,
                    latency_nanos: None,
                    pid: None,
                };
                let expected = (len_bytes > 0 && op != Op::Discard).then(|| e.block_range(4096));
                assert_eq!(accessed_lines(&e, 4096), expected);
            }
        }
    }

    #[test]
    fn next_use_points_at_the_following_access() {
        assert_eq!(
            next_use_of_keys(&[1, 2, 1, 3, 2, 1]),
            vec![2, 4, 5, NEVER, NEVER, NEVER]
        );
    }
}
