//! The one pending-request matcher: holds issued requests until their completion gives the
//! latency, and releases them in issue order, with bounded memory.
//!
//! Three places pair an issue with its completion: the issue/complete text formats (blkparse,
//! tracefs, through `decode::text::Pending`), the blktrace decoder (`decode::blktrace`) and the
//! recorder (`blocksight record`'s tracker). They differ only in settings, never in code:
//!
//! - the **key** a completion is matched by (a type parameter: device and sector for the text
//!   formats; device, sector and direction for blktrace and the recorder; flushes per device);
//! - the **rule** ([`MatchRule`]): the oldest waiting request at the key (first in, first out,
//!   as blkparse pairs them), or the newest issued no later than the completion, superseding
//!   older ones whose own completion was evidently never seen (the recorder's rule since issue
//!   13: oldest-first let one missed completion shift every later latency at that sector);
//! - **orphans**: completions seen before their issue (the recorder reads CPUs in rounds), kept
//!   for a while to match an issue processed later ([`PendingConfig::max_orphans`]);
//! - the **bounds**: how many requests may be held ([`PendingConfig::max_pending`]; beyond it the
//!   oldest leaves without a latency, counted in [`PendingStats::evicted`]) and how long a
//!   request waits on the matcher's clock ([`PendingConfig::timeout_nanos`]: the block layer's
//!   30 s default request timeout, `blk_mq` `rq_timeout`, for decoders; 10 s for the recorder).
//!
//! A request leaves ([`PendingRequests::pop`]) once it and every request issued before it are
//! done: completed, withdrawn (a requeue drops it, a merge releases it without latency),
//! superseded, timed out, evicted, or the input ended. The clock is the latest time the caller
//! has shown the matcher ([`PendingRequests::advance_to`], and every issue and completion time).
//!
//! Memory: at most `max_pending + 1` held requests and `max_orphans` orphans, whatever the input.

use std::collections::VecDeque;
use std::hash::Hash;

use crate::hash::IntMap;

/// Which waiting request a completion goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchRule {
    /// The oldest waiting request at the key (first in, first out).
    Oldest,
    /// The newest waiting request at the key issued no later than the completion; older ones
    /// still waiting at the key are superseded (released at once, without a latency).
    NewestIssuedBefore,
}

/// The matcher's settings; see the module docs for where each value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingConfig {
    pub rule: MatchRule,
    /// At most this many requests are held (waiting, or done but behind an older one).
    pub max_pending: usize,
    /// A request waiting longer than this on the matcher's clock leaves without a latency.
    pub timeout_nanos: u64,
    /// Completions with no waiting request kept for an issue processed later (0: none).
    pub max_orphans: usize,
    /// How long (on the matcher's clock, after the completion) an orphan waits for its issue.
    pub orphan_nanos: u64,
}

/// Which of the requests waiting at a key [`PendingRequests::withdraw`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    Oldest,
    Newest,
}

/// What [`PendingRequests::withdraw`] does with the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Withdrawal {
    /// Never released (a requeued request: its re-issue is the one the device served).
    Drop,
    /// Released without a latency (a bio merged into another request).
    WithoutLatency,
}

/// Counters of what the matcher did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PendingStats {
    pub issued: u64,
    /// Completions matched to a waiting request when they arrived.
    pub matched: u64,
    /// Orphan completions matched when their issue arrived.
    pub matched_late: u64,
    /// Completions that matched no request (orphans not matched so far included).
    pub unmatched: u64,
    /// Requests released without a latency because a newer one at their key completed.
    pub superseded: u64,
    /// Requests released without a latency after the timeout or at the end of the input.
    pub without_completion: u64,
    /// Requests released early, without a latency, because more than `max_pending` were held.
    pub evicted: u64,
    /// Requests withdrawn with [`Withdrawal::Drop`].
    pub dropped: u64,
    /// Requests withdrawn with [`Withdrawal::WithoutLatency`].
    pub withdrawn: u64,
}

/// A request leaving the matcher, in issue order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Released<T> {
    pub item: T,
    /// Completion time minus issue time, when a completion was matched.
    pub latency_nanos: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting for a completion; linked in its key's list.
    Waiting,
    /// Done (completed or given up on): released when it reaches the front.
    Ready,
    /// Withdrawn: skipped when it reaches the front.
    Dropped,
}

/// No slot: the end of a key's list.
const NONE: u64 = u64::MAX;

#[derive(Clone, Copy, Debug)]
struct Slot<K, T> {
    item: T,
    key: K,
    issue_nanos: u64,
    done_nanos: Option<u64>,
    state: State,
    /// Sequence numbers of the previous and next waiting slot with the same key.
    prev: u64,
    next: u64,
}

/// Issued requests waiting for their completion; see the module docs.
pub struct PendingRequests<K, T> {
    config: PendingConfig,
    /// Held requests in issue order; `queue[0]` has sequence number `base_seq`.
    queue: VecDeque<Slot<K, T>>,
    base_seq: u64,
    /// Oldest and newest waiting slot per key (a doubly linked list through the slots).
    lists: IntMap<K, (u64, u64)>,
    /// Orphan completion times per key, oldest first, and all orphans in arrival order.
    orphans: IntMap<K, VecDeque<u64>>,
    orphan_order: VecDeque<(K, u64)>,
    now_nanos: u64,
    stats: PendingStats,
}

impl<K: Copy + Eq + Hash, T: Copy> PendingRequests<K, T> {
    pub fn new(config: PendingConfig) -> PendingRequests<K, T> {
        PendingRequests {
            config,
            queue: VecDeque::new(),
            base_seq: 0,
            lists: IntMap::default(),
            orphans: IntMap::default(),
            orphan_order: VecDeque::new(),
            now_nanos: 0,
            stats: PendingStats::default(),
        }
    }

    pub fn config(&self) -> &PendingConfig {
        &self.config
    }

    pub fn stats(&self) -> PendingStats {
        self.stats
    }

    /// Requests held (waiting, or done behind an older one).
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Moves the matcher's clock forward to `now_nanos` (never back).
    pub fn advance_to(&mut self, now_nanos: u64) {
        self.now_nanos = self.now_nanos.max(now_nanos);
    }

    /// Holds `item`, issued at `issue_nanos` with `key`, until its completion.
    pub fn issue(&mut self, key: K, issue_nanos: u64, item: T) {
        self.stats.issued += 1;
        self.advance_to(issue_nanos);
        self.expire_orphans();
        let seq = self.base_seq + self.queue.len() as u64;
        let mut slot = Slot {
            item,
            key,
            issue_nanos,
            done_nanos: None,
            state: State::Waiting,
            prev: NONE,
            next: NONE,
        };
        if let Some(done) = self.take_orphan(&key, issue_nanos) {
            self.stats.matched_late += 1;
            self.stats.unmatched = self.stats.unmatched.saturating_sub(1);
            slot.done_nanos = Some(done);
            slot.state = State::Ready;
            self.queue.push_back(slot);
            return;
        }
        match self.lists.get_mut(&key) {
            Some((_, tail)) => {
                let old_tail = *tail;
                *tail = seq;
                slot.prev = old_tail;
                self.queue.push_back(slot);
                if let Some(s) = self.slot_mut(old_tail) {
                    s.next = seq;
                }
            }
            None => {
                self.lists.insert(key, (seq, seq));
                self.queue.push_back(slot);
            }
        }
    }

    /// A completion with `key` at `time_nanos`: gives the request the rule picks its latency.
    /// Returns whether a request matched (an orphan kept for later does not count).
    pub fn complete(&mut self, key: K, time_nanos: u64) -> bool {
        self.advance_to(time_nanos);
        self.expire_orphans();
        let picked = match self.config.rule {
            MatchRule::Oldest => self.lists.get(&key).map(|&(head, _)| head),
            MatchRule::NewestIssuedBefore => self.newest_issued_by(&key, time_nanos),
        };
        let Some(seq) = picked else {
            self.stats.unmatched += 1;
            if self.config.max_orphans > 0 {
                self.orphans.entry(key).or_default().push_back(time_nanos);
                self.orphan_order.push_back((key, time_nanos));
                self.expire_orphans();
            }
            return false;
        };
        if self.config.rule == MatchRule::NewestIssuedBefore {
            // Everything older at the key missed its completion.
            while let Some(&(head, _)) = self.lists.get(&key) {
                if head == seq {
                    break;
                }
                self.unlink(head);
                if let Some(s) = self.slot_mut(head) {
                    s.state = State::Ready;
                }
                self.stats.superseded += 1;
            }
        }
        self.unlink(seq);
        if let Some(s) = self.slot_mut(seq) {
            s.state = State::Ready;
            s.done_nanos = Some(time_nanos);
        }
        self.stats.matched += 1;
        true
    }

    /// Takes the oldest or newest request waiting at `key` out of waiting: dropped or released
    /// without a latency. Returns whether there was one.
    pub fn withdraw(&mut self, key: K, pick: Pick, how: Withdrawal) -> bool {
        let Some(&(head, tail)) = self.lists.get(&key) else {
            return false;
        };
        let seq = match pick {
            Pick::Oldest => head,
            Pick::Newest => tail,
        };
        self.unlink(seq);
        if let Some(s) = self.slot_mut(seq) {
            s.state = match how {
                Withdrawal::Drop => State::Dropped,
                Withdrawal::WithoutLatency => State::Ready,
            };
        }
        match how {
            Withdrawal::Drop => self.stats.dropped += 1,
            Withdrawal::WithoutLatency => self.stats.withdrawn += 1,
        }
        true
    }

    /// The next request that may leave, in issue order. With `at_end`, no more records will
    /// come, so everything held leaves.
    pub fn pop(&mut self, at_end: bool) -> Option<Released<T>> {
        loop {
            let front = self.queue.front()?;
            if front.state == State::Waiting {
                let timed_out =
                    front.issue_nanos.saturating_add(self.config.timeout_nanos) < self.now_nanos;
                let over_cap = self.queue.len() > self.config.max_pending;
                if !(at_end || timed_out || over_cap) {
                    return None;
                }
                if over_cap && !timed_out && !at_end {
                    self.stats.evicted += 1;
                } else {
                    self.stats.without_completion += 1;
                }
                self.unlink(self.base_seq);
            }
            let slot = self.queue.pop_front()?;
            self.base_seq += 1;
            if slot.state != State::Dropped {
                return Some(Released {
                    item: slot.item,
                    latency_nanos: slot
                        .done_nanos
                        .map(|done| done.saturating_sub(slot.issue_nanos)),
                });
            }
        }
    }

    /// The newest waiting slot at `key` issued no later than `time_nanos`.
    fn newest_issued_by(&self, key: &K, time_nanos: u64) -> Option<u64> {
        let &(_, tail) = self.lists.get(key)?;
        let mut cur = tail;
        while let Some(s) = self.slot(cur) {
            if s.issue_nanos <= time_nanos {
                return Some(cur);
            }
            cur = s.prev;
        }
        None
    }

    fn slot(&self, seq: u64) -> Option<&Slot<K, T>> {
        let i = seq.checked_sub(self.base_seq)?;
        self.queue.get(usize::try_from(i).ok()?)
    }

    fn slot_mut(&mut self, seq: u64) -> Option<&mut Slot<K, T>> {
        let i = seq.checked_sub(self.base_seq)?;
        self.queue.get_mut(usize::try_from(i).ok()?)
    }

    /// Takes a waiting slot out of its key's list (its state is the caller's to set).
    fn unlink(&mut self, seq: u64) {
        let Some(s) = self.slot_mut(seq) else { return };
        let (key, prev, next) = (s.key, s.prev, s.next);
        s.prev = NONE;
        s.next = NONE;
        if let Some(p) = self.slot_mut(prev) {
            p.next = next;
        }
        if let Some(n) = self.slot_mut(next) {
            n.prev = prev;
        }
        match (prev == NONE, next == NONE) {
            (true, true) => {
                self.lists.remove(&key);
            }
            (true, false) => {
                if let Some(l) = self.lists.get_mut(&key) {
                    l.0 = next;
                }
            }
            (false, true) => {
                if let Some(l) = self.lists.get_mut(&key) {
                    l.1 = prev;
                }
            }
            (false, false) => {}
        }
    }

    /// Forgets orphans older than `orphan_nanos` on the clock, or beyond `max_orphans`.
    fn expire_orphans(&mut self) {
        while let Some(&(key, t)) = self.orphan_order.front() {
            if self.orphan_order.len() <= self.config.max_orphans
                && t.saturating_add(self.config.orphan_nanos) >= self.now_nanos
            {
                break;
            }
            self.orphan_order.pop_front();
            if let Some(q) = self.orphans.get_mut(&key) {
                if let Some(i) = q.iter().position(|&x| x == t) {
                    q.remove(i);
                }
                if q.is_empty() {
                    self.orphans.remove(&key);
                }
            }
        }
    }

    /// The oldest orphan completion at `key` no earlier than `issue_nanos`, taken out.
    fn take_orphan(&mut self, key: &K, issue_nanos: u64) -> Option<u64> {
        let q = self.orphans.get_mut(key)?;
        let i = q.iter().position(|&t| t >= issue_nanos)?;
        let t = q.remove(i)?;
        if q.is_empty() {
            self.orphans.remove(key);
        }
        if let Some(j) = self
            .orphan_order
            .iter()
            .position(|&(k, x)| k == *key && x == t)
        {
            self.orphan_order.remove(j);
        }
        Some(t)
    }
}

/// The brute-force reference matcher, for the property tests here and in the decoders.
#[cfg(test)]
pub(crate) mod reference {
    use super::*;

    /// The brute-force reference: every request ever issued in one vector, every rule a linear
    /// scan, written from the module docs rather than from the implementation.
    pub(crate) struct Reference {
        pub(crate) config: PendingConfig,
        /// (key, issue time, item, state, completion time).
        all: Vec<(u8, u64, u32, State, Option<u64>)>,
        /// Index of the first request not yet released.
        front: usize,
        orphans: Vec<(u8, u64)>,
        pub(crate) now: u64,
        pub(crate) stats: PendingStats,
    }

    impl Reference {
        pub(crate) fn new(config: PendingConfig) -> Reference {
            Reference {
                config,
                all: Vec::new(),
                front: 0,
                orphans: Vec::new(),
                now: 0,
                stats: PendingStats::default(),
            }
        }

        fn expire(&mut self) {
            let (max, age, now) = (self.config.max_orphans, self.config.orphan_nanos, self.now);
            while let Some(&(_, t)) = self.orphans.first() {
                if self.orphans.len() <= max && t.saturating_add(age) >= now {
                    break;
                }
                self.orphans.remove(0);
            }
        }

        fn waiting(&self, key: u8) -> Vec<usize> {
            (self.front..self.all.len())
                .filter(|&i| self.all[i].0 == key && self.all[i].3 == State::Waiting)
                .collect()
        }

        pub(crate) fn issue(&mut self, key: u8, t: u64, item: u32) {
            self.stats.issued += 1;
            self.now = self.now.max(t);
            self.expire();
            let orphan = self.orphans.iter().position(|&(k, c)| k == key && c >= t);
            match orphan {
                Some(i) => {
                    let (_, c) = self.orphans.remove(i);
                    self.stats.matched_late += 1;
                    self.stats.unmatched -= 1;
                    self.all.push((key, t, item, State::Ready, Some(c)));
                }
                None => self.all.push((key, t, item, State::Waiting, None)),
            }
        }

        pub(crate) fn complete(&mut self, key: u8, t: u64) -> bool {
            self.now = self.now.max(t);
            self.expire();
            let waiting = self.waiting(key);
            let pick = match self.config.rule {
                MatchRule::Oldest => waiting.first().copied(),
                MatchRule::NewestIssuedBefore => {
                    waiting.iter().rev().copied().find(|&i| self.all[i].1 <= t)
                }
            };
            let Some(p) = pick else {
                self.stats.unmatched += 1;
                if self.config.max_orphans > 0 {
                    self.orphans.push((key, t));
                    self.expire();
                }
                return false;
            };
            if self.config.rule == MatchRule::NewestIssuedBefore {
                for &i in waiting.iter().filter(|&&i| i < p) {
                    self.all[i].3 = State::Ready;
                    self.stats.superseded += 1;
                }
            }
            self.all[p].3 = State::Ready;
            self.all[p].4 = Some(t);
            self.stats.matched += 1;
            true
        }

        pub(crate) fn withdraw(&mut self, key: u8, pick: Pick, how: Withdrawal) -> bool {
            let waiting = self.waiting(key);
            let chosen = match pick {
                Pick::Oldest => waiting.first(),
                Pick::Newest => waiting.last(),
            };
            let Some(&i) = chosen else { return false };
            self.all[i].3 = match how {
                Withdrawal::Drop => State::Dropped,
                Withdrawal::WithoutLatency => State::Ready,
            };
            match how {
                Withdrawal::Drop => self.stats.dropped += 1,
                Withdrawal::WithoutLatency => self.stats.withdrawn += 1,
            }
            true
        }

        pub(crate) fn pop(&mut self, at_end: bool) -> Option<(u32, Option<u64>)> {
            while self.front < self.all.len() {
                let held = self.all.len() - self.front;
                let (_, t, item, state, done) = self.all[self.front];
                if state == State::Waiting {
                    let timed_out = t.saturating_add(self.config.timeout_nanos) < self.now;
                    let over = held > self.config.max_pending;
                    if !(at_end || timed_out || over) {
                        return None;
                    }
                    if over && !timed_out && !at_end {
                        self.stats.evicted += 1;
                    } else {
                        self.stats.without_completion += 1;
                    }
                }
                self.front += 1;
                if state != State::Dropped {
                    return Some((item, done.map(|d| d.saturating_sub(t))));
                }
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::reference::Reference;
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum OpKind {
        Issue(u8, u64),
        Complete(u8, u64),
        Withdraw(u8, bool, bool),
        Advance(u64),
        Pop,
    }

    fn ops() -> impl Strategy<Value = Vec<OpKind>> {
        // Few keys and small time steps, so keys collide and timeouts and caps trigger.
        let op = prop_oneof![
            4 => (0u8..4, 0u64..30).prop_map(|(k, dt)| OpKind::Issue(k, dt)),
            4 => (0u8..4, 0u64..30).prop_map(|(k, dt)| OpKind::Complete(k, dt)),
            1 => (0u8..4, any::<bool>(), any::<bool>()).prop_map(|(k, a, b)| OpKind::Withdraw(k, a, b)),
            1 => (0u64..60).prop_map(OpKind::Advance),
            2 => Just(OpKind::Pop),
        ];
        prop::collection::vec(op, 0..200)
    }

    fn config() -> impl Strategy<Value = PendingConfig> {
        (any::<bool>(), 1usize..12, 1u64..120, 0usize..5, 0u64..80).prop_map(
            |(newest, max_pending, timeout_nanos, max_orphans, orphan_nanos)| PendingConfig {
                rule: if newest {
                    MatchRule::NewestIssuedBefore
                } else {
                    MatchRule::Oldest
                },
                max_pending,
                timeout_nanos,
                max_orphans,
                orphan_nanos,
            },
        )
    }

    proptest! {
        #[test]
        fn equals_the_brute_force_reference(config in config(), ops in ops()) {
            let mut fast = PendingRequests::<u8, u32>::new(config);
            let mut slow = Reference::new(config);
            let mut clock = 0u64;
            let mut item = 0u32;
            let mut out_fast = Vec::new();
            let mut out_slow = Vec::new();
            for op in ops {
                match op {
                    OpKind::Issue(k, dt) => {
                        // Issue times mostly rise but may step back (a late CPU's record).
                        let t = (clock + dt).saturating_sub(10);
                        clock = clock.max(t);
                        item += 1;
                        fast.issue(k, t, item);
                        slow.issue(k, t, item);
                    }
                    OpKind::Complete(k, dt) => {
                        let t = (clock + dt).saturating_sub(10);
                        clock = clock.max(t);
                        prop_assert_eq!(fast.complete(k, t), slow.complete(k, t));
                    }
                    OpKind::Withdraw(k, newest, drop) => {
                        let pick = if newest { Pick::Newest } else { Pick::Oldest };
                        let how = if drop { Withdrawal::Drop } else { Withdrawal::WithoutLatency };
                        prop_assert_eq!(fast.withdraw(k, pick, how), slow.withdraw(k, pick, how));
                    }
                    OpKind::Advance(dt) => {
                        clock += dt;
                        fast.advance_to(clock);
                        slow.now = slow.now.max(clock);
                    }
                    OpKind::Pop => {
                        while let Some(r) = fast.pop(false) {
                            out_fast.push((r.item, r.latency_nanos));
                        }
                        while let Some(r) = slow.pop(false) {
                            out_slow.push(r);
                        }
                        prop_assert!(fast.len() <= config.max_pending, "the cap holds");
                    }
                }
                prop_assert!(fast.orphan_order.len() <= config.max_orphans);
                prop_assert_eq!(fast.stats(), slow.stats);
            }
            while let Some(r) = fast.pop(true) {
                out_fast.push((r.item, r.latency_nanos));
            }
            while let Some(r) = slow.pop(true) {
                out_slow.push(r);
            }
            prop_assert_eq!(&out_fast, &out_slow);
            prop_assert_eq!(fast.stats(), slow.stats);
            prop_assert!(fast.is_empty());
            prop_assert!(fast.lists.is_empty(), "no key stays listed once everything left");
        }
    }

    fn cfg(rule: MatchRule) -> PendingConfig {
        PendingConfig {
            rule,
            max_pending: 100,
            timeout_nanos: 1_000,
            max_orphans: 0,
            orphan_nanos: 0,
        }
    }

    fn drain(p: &mut PendingRequests<u8, u32>, at_end: bool) -> Vec<(u32, Option<u64>)> {
        std::iter::from_fn(|| p.pop(at_end))
            .map(|r| (r.item, r.latency_nanos))
            .collect()
    }

    #[test]
    fn oldest_first_pairs_in_order_and_releases_in_issue_order() {
        let mut p = PendingRequests::new(cfg(MatchRule::Oldest));
        p.issue(0, 10, 1);
        p.issue(0, 20, 2);
        p.issue(1, 30, 3);
        assert!(p.complete(1, 35));
        assert!(drain(&mut p, false).is_empty(), "request 1 still waits");
        assert!(p.complete(0, 40));
        assert_eq!(drain(&mut p, false), vec![(1, Some(30))]);
        assert!(p.complete(0, 50));
        assert_eq!(drain(&mut p, false), vec![(2, Some(30)), (3, Some(5))]);
        assert!(!p.complete(0, 60));
        assert_eq!(p.stats().unmatched, 1);
    }

    #[test]
    fn newest_issued_before_supersedes_a_missed_completion() {
        // Issue 13: the first request's completion is never seen; it must not take the next
        // request's completion.
        let mut p = PendingRequests::new(cfg(MatchRule::NewestIssuedBefore));
        p.issue(0, 10, 1);
        p.issue(0, 500, 2);
        p.issue(0, 900, 3);
        assert!(p.complete(0, 510));
        assert_eq!(drain(&mut p, false), vec![(1, None), (2, Some(10))]);
        assert_eq!(p.stats().superseded, 1);
    }

    #[test]
    fn the_cap_evicts_the_oldest_and_counts_it() {
        let mut p = PendingRequests::new(PendingConfig {
            max_pending: 2,
            ..cfg(MatchRule::Oldest)
        });
        for i in 0..5 {
            p.issue(i, u64::from(i), u32::from(i));
        }
        assert_eq!(drain(&mut p, false), vec![(0, None), (1, None), (2, None)]);
        assert_eq!(p.len(), 2);
        assert_eq!(p.stats().evicted, 3);
        assert_eq!(drain(&mut p, true).len(), 2);
        assert_eq!(p.stats().without_completion, 2);
    }

    #[test]
    fn orphans_wait_for_a_late_issue_and_are_bounded() {
        let mut p = PendingRequests::new(PendingConfig {
            max_orphans: 2,
            orphan_nanos: 100,
            ..cfg(MatchRule::NewestIssuedBefore)
        });
        assert!(!p.complete(7, 50));
        p.issue(7, 40, 1);
        assert_eq!(drain(&mut p, false), vec![(1, Some(10))]);
        assert_eq!((p.stats().matched_late, p.stats().unmatched), (1, 0));
        // An issue after the completion never takes it.
        assert!(!p.complete(7, 60));
        p.issue(7, 70, 2);
        assert_eq!(drain(&mut p, true), vec![(2, None)]);
        for k in 0..10 {
            p.complete(k, 100);
        }
        assert_eq!(p.orphan_order.len(), 2);
    }
}
