//! Brute-force reference implementations of every policy (plain `Vec`s, linear scans, written
//! from the papers and libCacheSim's rules independently of the fast versions) and property
//! tests that the fast policies make the same hit/miss decision on every access.

use std::collections::{HashMap, VecDeque};

use proptest::prelude::*;

use super::{new_policy, PolicyKind};
use crate::cache::future::next_use_of_keys;

/// A reference cache: `get` returns whether the access hit and inserts on a miss.
trait Reference {
    fn get(&mut self, key: u64, now: usize, keys: &[u64]) -> bool;
    /// Drops `key` from wherever the policy holds it (ghost lists too) and returns whether it
    /// was resident; `None` where the reference does not model removals.
    fn remove(&mut self, _key: u64) -> Option<bool> {
        None
    }
}

fn pos<T: PartialEq>(v: &[T], x: &T) -> Option<usize> {
    v.iter().position(|y| y == x)
}

struct RefLru(usize, Vec<u64>);
impl Reference for RefLru {
    fn get(&mut self, k: u64, _: usize, _: &[u64]) -> bool {
        if let Some(i) = pos(&self.1, &k) {
            self.1.remove(i);
            self.1.insert(0, k);
            return true;
        }
        if self.1.len() >= self.0 {
            self.1.pop();
        }
        self.1.insert(0, k);
        false
    }
}

struct RefFifo(usize, VecDeque<u64>);
impl Reference for RefFifo {
    fn get(&mut self, k: u64, _: usize, _: &[u64]) -> bool {
        if self.1.contains(&k) {
            return true;
        }
        if self.1.len() >= self.0 {
            self.1.pop_front();
        }
        self.1.push_back(k);
        false
    }
}

/// Index 0 is the oldest entry (under the hand).
struct RefClock(usize, Vec<(u64, bool)>);
impl Reference for RefClock {
    fn get(&mut self, k: u64, _: usize, _: &[u64]) -> bool {
        if let Some(e) = self.1.iter_mut().find(|e| e.0 == k) {
            e.1 = true;
            return true;
        }
        while self.1.len() >= self.0 {
            if self.1[0].1 {
                let mut e = self.1.remove(0);
                e.1 = false;
                self.1.push(e);
            } else {
                self.1.remove(0);
            }
        }
        self.1.push((k, false));
        false
    }
}

/// Index 0 is the oldest entry; the hand moves towards newer entries.
struct RefSieve(usize, Vec<(u64, bool)>, Option<usize>);
impl Reference for RefSieve {
    fn get(&mut self, k: u64, _: usize, _: &[u64]) -> bool {
        if let Some(e) = self.1.iter_mut().find(|e| e.0 == k) {
            e.1 = true;
            return true;
        }
        if self.1.len() >= self.0 {
            let mut i = self.2.unwrap_or(0);
            while self.1[i].1 {
                self.1[i].1 = false;
                i = (i + 1) % self.1.len();
            }
            self.1.remove(i);
            self.2 = (i < self.1.len()).then_some(i);
        }
        self.1.push((k, false));
        false
    }
}

/// (key, frequency, stamp when it reached that frequency).
struct RefLfu(usize, Vec<(u64, u64, u64)>, u64);
impl Reference for RefLfu {
    fn get(&mut self, k: u64, _: usize, _: &[u64]) -> bool {
        self.2 += 1;
        let stamp = self.2;
        if let Some(e) = self.1.iter_mut().find(|e| e.0 == k) {
            e.1 += 1;
            e.2 = stamp;
            return true;
        }
        if self.1.len() >= self.0 {
            let victim = (0..self.1.len())
                .min_by_key(|&i| (self.1[i].1, self.1[i].2))
                .unwrap_or(0);
            self.1.remove(victim);
        }
        self.1.push((k, 1, stamp));
        false
    }
}

/// Four segments, index 0 of each is its MRU end.
struct RefSlru(usize, usize, [Vec<u64>; 4]);
impl RefSlru {
    fn evict(&mut self) {
        if let Some(s) = (0..4).find(|&s| !self.2[s].is_empty()) {
            self.2[s].pop();
        }
    }
    fn cool(&mut self, id: usize) {
        if id == 0 {
            self.evict();
            return;
        }
        if let Some(k) = self.2[id].pop() {
            self.2[id - 1].insert(0, k);
        }
        while self.2[id - 1].len() > self.1 {
            self.cool(id - 1);
        }
    }
}
impl Reference for RefSlru {
    fn get(&mut self, k: u64, _: usize, _: &[u64]) -> bool {
        if let Some(s) = (0..4).find(|&s| self.2[s].contains(&k)) {
            let i = pos(&self.2[s], &k).unwrap_or(0);
            self.2[s].remove(i);
            let to = (s + 1).min(3);
            self.2[to].insert(0, k);
            while self.2[to].len() > self.1 {
                self.cool(to);
            }
            return true;
        }
        while self.2.iter().map(Vec::len).sum::<usize>() + 1 > self.0 {
            self.evict();
        }
        let seg = (0..4).find(|&s| self.2[s].len() < self.1).unwrap_or(0);
        self.2[seg].insert(0, k);
        false
    }
    fn remove(&mut self, k: u64) -> Option<bool> {
        let resident = self.2.iter().any(|seg| seg.contains(&k));
        for seg in &mut self.2 {
            seg.retain(|&x| x != k);
        }
        Some(resident)
    }
}

/// 2Q: `ain` and `aout` are FIFOs (front oldest), `am` an LRU (index 0 MRU).
struct RefTwoQ {
    cap: usize,
    ain_max: usize,
    aout_max: usize,
    am_max: usize,
    ain: VecDeque<u64>,
    am: Vec<u64>,
    aout: VecDeque<u64>,
}
impl Reference for RefTwoQ {
    fn get(&mut self, k: u64, _: usize, _: &[u64]) -> bool {
        if self.ain.contains(&k) {
            return true;
        }
        if let Some(i) = pos(&self.am, &k) {
            self.am.remove(i);
            self.am.insert(0, k);
            return true;
        }
        let ghost = if let Some(i) = self.aout.iter().position(|&x| x == k) {
            self.aout.remove(i);
            true
        } else {
            false
        };
        while self.ain.len() + self.am.len() + 1 > self.cap {
            if self.ain.len() > self.ain_max || self.am.is_empty() {
                if let Some(v) = self.ain.pop_front() {
                    if self.aout_max > 0 {
                        while self.aout.len() >= self.aout_max {
                            self.aout.pop_front();
                        }
                        self.aout.push_back(v);
                    }
                }
            } else {
                self.am.pop();
            }
        }
        if ghost {
            while self.am.len() + 1 > self.am_max && !self.am.is_empty() {
                self.am.pop();
            }
            self.am.insert(0, k);
        } else {
            self.ain.push_back(k);
        }
        false
    }
    fn remove(&mut self, k: u64) -> Option<bool> {
        let resident = self.ain.contains(&k) || self.am.contains(&k);
        self.ain.retain(|&x| x != k);
        self.am.retain(|&x| x != k);
        self.aout.retain(|&x| x != k);
        Some(resident)
    }
}

/// S3-FIFO with FIFOs whose front is the oldest entry.
struct RefS3 {
    cap: usize,
    small_max: usize,
    main_max: usize,
    ghost_max: usize,
    evicted_once: bool,
    small: VecDeque<(u64, u32)>,
    main: VecDeque<(u64, u32)>,
    ghost: VecDeque<u64>,
}
impl Reference for RefS3 {
    fn get(&mut self, k: u64, _: usize, _: &[u64]) -> bool {
        if let Some(e) = self
            .small
            .iter_mut()
            .chain(self.main.iter_mut())
            .find(|e| e.0 == k)
        {
            e.1 += 1;
            return true;
        }
        let ghost = if let Some(i) = self.ghost.iter().position(|&x| x == k) {
            self.ghost.remove(i);
            true
        } else {
            false
        };
        while self.small.len() + self.main.len() + 1 > self.cap {
            self.evicted_once = true;
            if self.main.len() > self.main_max || self.small.is_empty() {
                while let Some((key, f)) = self.main.pop_front() {
                    if f >= 1 {
                        self.main.push_back((key, f.min(3) - 1));
                    } else {
                        break;
                    }
                }
            } else {
                while let Some((key, f)) = self.small.pop_front() {
                    if f >= 2 {
                        self.main.push_back((key, 0));
                    } else {
                        if self.ghost_max > 0 {
                            while self.ghost.len() >= self.ghost_max {
                                self.ghost.pop_front();
                            }
                            self.ghost.push_back(key);
                        }
                        break;
                    }
                }
            }
        }
        if ghost || (!self.evicted_once && self.small.len() >= self.small_max) {
            self.main.push_back((k, 0));
        } else {
            self.small.push_back((k, 0));
        }
        false
    }
    fn remove(&mut self, k: u64) -> Option<bool> {
        let resident = self.small.iter().chain(&self.main).any(|e| e.0 == k);
        self.small.retain(|e| e.0 != k);
        self.main.retain(|e| e.0 != k);
        self.ghost.retain(|&x| x != k);
        Some(resident)
    }
}

/// ARC with lists whose index 0 is the MRU end.
struct RefArc {
    c: usize,
    p: f64,
    t1: Vec<u64>,
    t2: Vec<u64>,
    b1: Vec<u64>,
    b2: Vec<u64>,
}
impl RefArc {
    fn replace(&mut self, in_b2: bool) {
        let t1 = self.t1.len() as f64;
        if t1 > 0.0 && (t1 > self.p || (t1 == self.p && in_b2)) || self.t2.is_empty() {
            if let Some(x) = self.t1.pop() {
                self.b1.insert(0, x);
            }
        } else if let Some(x) = self.t2.pop() {
            self.b2.insert(0, x);
        }
    }
}
impl Reference for RefArc {
    fn get(&mut self, k: u64, _: usize, _: &[u64]) -> bool {
        if let Some(i) = pos(&self.t1, &k) {
            self.t1.remove(i);
            self.t2.insert(0, k);
            return true;
        }
        if let Some(i) = pos(&self.t2, &k) {
            self.t2.remove(i);
            self.t2.insert(0, k);
            return true;
        }
        let (b1, b2) = (self.b1.len(), self.b2.len());
        if self.b1.contains(&k) {
            self.p = (self.p + (b2 as f64 / b1 as f64).max(1.0)).min(self.c as f64);
            self.replace(false);
            self.b1.retain(|&x| x != k);
            self.t2.insert(0, k);
            return false;
        }
        if self.b2.contains(&k) {
            self.p = (self.p - (b1 as f64 / b2 as f64).max(1.0)).max(0.0);
            self.replace(true);
            self.b2.retain(|&x| x != k);
            self.t2.insert(0, k);
            return false;
        }
        if self.t1.len() + self.t2.len() + 1 > self.c {
            if self.t1.len() + b1 + 1 > self.c {
                if self.t1.len() < self.c {
                    self.b1.pop();
                    self.replace(false);
                } else {
                    self.t1.pop();
                }
            } else {
                if self.t1.len() + self.t2.len() + b1 + b2 >= 2 * self.c {
                    self.b2.pop();
                }
                self.replace(false);
            }
        } else {
            // Room left by removals: the directory is still kept within 2c.
            if self.t1.len() + self.b1.len() + 1 > self.c {
                self.b1.pop();
            }
            if self.t1.len() + self.t2.len() + self.b1.len() + self.b2.len() >= 2 * self.c {
                self.b2.pop();
            }
        }
        self.t1.insert(0, k);
        false
    }
    fn remove(&mut self, k: u64) -> Option<bool> {
        let resident = self.t1.contains(&k) || self.t2.contains(&k);
        for l in [&mut self.t1, &mut self.t2, &mut self.b1, &mut self.b2] {
            l.retain(|&x| x != k);
        }
        Some(resident)
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum St {
    Lir,
    HirRes,
    HirNonRes,
}

/// LIRS from the paper: `s` is the stack (index 0 top), `q` the resident HIR list (index 0 the
/// MRU end), `nonres` the order in which entries became non-resident (oldest first).
struct RefLirs {
    cap: usize,
    lir_max: usize,
    s: Vec<u64>,
    q: Vec<u64>,
    st: HashMap<u64, St>,
    nonres: Vec<u64>,
}
impl RefLirs {
    fn lirs(&self) -> usize {
        self.st.values().filter(|&&s| s == St::Lir).count()
    }
    fn prune(&mut self) {
        while let Some(&b) = self.s.last() {
            if self.st.get(&b) == Some(&St::Lir) {
                break;
            }
            self.s.pop();
            if self.st.get(&b) == Some(&St::HirNonRes) {
                self.st.remove(&b);
                self.nonres.retain(|&x| x != b);
            }
        }
    }
    fn demote_bottom(&mut self) {
        if let Some(b) = self.s.pop() {
            self.st.insert(b, St::HirRes);
            self.q.insert(0, b);
            self.prune();
        }
    }
    fn limit(&mut self) {
        while self.s.len() > 2 * self.cap && !self.nonres.is_empty() {
            let x = self.nonres.remove(0);
            self.s.retain(|&y| y != x);
            self.st.remove(&x);
        }
    }
}
impl Reference for RefLirs {
    fn get(&mut self, k: u64, _: usize, _: &[u64]) -> bool {
        let in_s = self.s.contains(&k);
        match self.st.get(&k).copied() {
            Some(St::Lir) => {
                self.s.retain(|&y| y != k);
                self.s.insert(0, k);
                self.prune();
                true
            }
            Some(St::HirRes) => {
                if in_s {
                    self.s.retain(|&y| y != k);
                    self.s.insert(0, k);
                    self.st.insert(k, St::Lir);
                    self.q.retain(|&y| y != k);
                    if self.lirs() > self.lir_max {
                        self.demote_bottom();
                    }
                } else {
                    self.s.insert(0, k);
                    self.q.retain(|&y| y != k);
                    self.q.insert(0, k);
                    self.limit();
                }
                true
            }
            other => {
                let resident = self.st.values().filter(|&&s| s != St::HirNonRes).count();
                if resident + 1 > self.cap {
                    if self.q.is_empty() {
                        // Only LIR lines resident (a one-line cache): the bottom one goes.
                        self.demote_bottom();
                    }
                    if let Some(v) = self.q.pop() {
                        if self.s.contains(&v) {
                            self.st.insert(v, St::HirNonRes);
                            self.nonres.push(v);
                        } else {
                            self.st.remove(&v);
                        }
                    }
                }
                if other == Some(St::HirNonRes) {
                    self.s.retain(|&y| y != k);
                    self.s.insert(0, k);
                    self.st.insert(k, St::Lir);
                    self.nonres.retain(|&y| y != k);
                    if self.lirs() > self.lir_max {
                        self.demote_bottom();
                    }
                } else if self.lirs() < self.lir_max {
                    self.s.insert(0, k);
                    self.st.insert(k, St::Lir);
                } else {
                    self.s.insert(0, k);
                    self.q.insert(0, k);
                    self.st.insert(k, St::HirRes);
                }
                self.limit();
                false
            }
        }
    }
}

/// MIN by scanning the future for every resident line.
struct RefBelady(usize, Vec<u64>);
impl Reference for RefBelady {
    fn get(&mut self, k: u64, now: usize, keys: &[u64]) -> bool {
        if self.1.contains(&k) {
            return true;
        }
        if self.1.len() >= self.0 {
            let next = |x: u64| {
                keys[now + 1..]
                    .iter()
                    .position(|&y| y == x)
                    .unwrap_or(usize::MAX)
            };
            let victim = (0..self.1.len())
                .max_by_key(|&i| next(self.1[i]))
                .unwrap_or(0);
            self.1.remove(victim);
        }
        self.1.push(k);
        false
    }
}

fn reference(kind: PolicyKind, cap: usize) -> Box<dyn Reference> {
    match kind {
        PolicyKind::Lru => Box::new(RefLru(cap, Vec::new())),
        PolicyKind::Fifo => Box::new(RefFifo(cap, VecDeque::new())),
        PolicyKind::Clock => Box::new(RefClock(cap, Vec::new())),
        PolicyKind::Sieve => Box::new(RefSieve(cap, Vec::new(), None)),
        PolicyKind::Lfu => Box::new(RefLfu(cap, Vec::new(), 0)),
        PolicyKind::Slru => Box::new(RefSlru(cap, (cap / 4).max(1), Default::default())),
        PolicyKind::TwoQ => {
            let ain_max = ((cap as f64 * 0.25) as usize).max(1);
            Box::new(RefTwoQ {
                cap,
                ain_max,
                aout_max: (cap as f64 * 0.5) as usize,
                am_max: cap.saturating_sub(ain_max).max(1),
                ain: VecDeque::new(),
                am: Vec::new(),
                aout: VecDeque::new(),
            })
        }
        PolicyKind::S3Fifo => {
            let small_max = ((cap as f64 * 0.1) as usize).max(1);
            Box::new(RefS3 {
                cap,
                small_max,
                main_max: cap.saturating_sub(small_max),
                ghost_max: (cap as f64 * 0.9) as usize,
                evicted_once: false,
                small: VecDeque::new(),
                main: VecDeque::new(),
                ghost: VecDeque::new(),
            })
        }
        PolicyKind::Arc => Box::new(RefArc {
            c: cap,
            p: 0.0,
            t1: Vec::new(),
            t2: Vec::new(),
            b1: Vec::new(),
            b2: Vec::new(),
        }),
        PolicyKind::Lirs => {
            let hir = ((cap as f64 * 0.01) as usize).max(1);
            Box::new(RefLirs {
                cap,
                lir_max: cap.saturating_sub(hir).max(1),
                s: Vec::new(),
                q: Vec::new(),
                st: HashMap::new(),
                nonres: Vec::new(),
            })
        }
        PolicyKind::Belady => Box::new(RefBelady(cap, Vec::new())),
    }
}

/// Hit/miss of every access, from the fast policy and from the reference.
fn both(kind: PolicyKind, cap: usize, keys: &[u64]) -> (Vec<bool>, Vec<bool>) {
    let next = kind.needs_future().then(|| next_use_of_keys(keys));
    let mut fast = new_policy(kind, cap as u64, next).expect("valid capacity");
    let mut slow = reference(kind, cap);
    let mut evicted = Vec::new();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for (now, &k) in keys.iter().enumerate() {
        let hit = fast.access(k, now as u64, &mut evicted);
        if !hit {
            fast.insert(k, now as u64, &mut evicted);
        }
        assert!(
            fast.len() <= cap as u64,
            "{kind:?} holds {} > {cap} lines",
            fast.len()
        );
        a.push(hit);
        b.push(slow.get(k, now, keys));
    }
    (a, b)
}

fn check(kind: PolicyKind, cap: usize, keys: &[u64]) -> Result<(), TestCaseError> {
    let (fast, slow) = both(kind, cap, keys);
    let first = fast.iter().zip(&slow).position(|(x, y)| x != y);
    prop_assert!(
        first.is_none(),
        "{kind:?} cap {cap}: first difference at access {first:?} of {keys:?}"
    );
    Ok(())
}

fn trace() -> impl Strategy<Value = (usize, Vec<u64>)> {
    // Small key spaces give many hits, ghost hits and evictions.
    (1usize..40, 2u64..60)
        .prop_flat_map(|(cap, keys)| (Just(cap), prop::collection::vec(0..keys, 0..400)))
}

/// A property test that `check` passes for policy `kind` on `cases` runs of `strategy`
/// (`trace()` and [`check`], 200 runs, by default).
macro_rules! prop_policy {
    ($name:ident, $kind:expr) => {
        prop_policy!($name, $kind, 200, trace(), check);
    };
    ($name:ident, $kind:expr, $cases:expr, $strategy:expr, $check:ident) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases($cases))]
            #[test]
            fn $name((cap, ops) in $strategy) {
                $check($kind, cap, &ops)?;
            }
        }
    };
}

prop_policy!(lru_matches_reference, PolicyKind::Lru);
prop_policy!(fifo_matches_reference, PolicyKind::Fifo);
prop_policy!(clock_matches_reference, PolicyKind::Clock);
prop_policy!(sieve_matches_reference, PolicyKind::Sieve);
prop_policy!(lfu_matches_reference, PolicyKind::Lfu);
prop_policy!(slru_matches_reference, PolicyKind::Slru);
prop_policy!(twoq_matches_reference, PolicyKind::TwoQ);
prop_policy!(s3fifo_matches_reference, PolicyKind::S3Fifo);
prop_policy!(arc_matches_reference, PolicyKind::Arc);
prop_policy!(lirs_matches_reference, PolicyKind::Lirs);
prop_policy!(belady_matches_reference, PolicyKind::Belady);

/// Long runs with removals mixed in, for the policies whose references model removals: every
/// access's hit and every removal's answer equal. Long enough (and with few enough keys) that
/// the fast policies' logs are compacted and their tables rebuilt under them.
fn check_with_removals(
    kind: PolicyKind,
    cap: usize,
    ops: &[(u64, bool)],
) -> Result<(), TestCaseError> {
    let mut fast = new_policy(kind, cap as u64, None).expect("valid capacity");
    let mut slow = reference(kind, cap);
    let mut evicted = Vec::new();
    for (now, &(k, remove)) in ops.iter().enumerate() {
        if remove {
            let want = slow.remove(k).expect("the reference models removals");
            prop_assert_eq!(
                fast.remove(k),
                want,
                "{:?} cap {}: removal {} of {}",
                kind,
                cap,
                now,
                k
            );
            continue;
        }
        let hit = fast.access(k, now as u64, &mut evicted);
        if !hit {
            fast.insert(k, now as u64, &mut evicted);
        }
        prop_assert_eq!(
            hit,
            slow.get(k, now, &[]),
            "{:?} cap {}: access {} of {}",
            kind,
            cap,
            now,
            k
        );
        prop_assert!(fast.len() <= cap as u64);
    }
    Ok(())
}

fn long_trace() -> impl Strategy<Value = (usize, Vec<(u64, bool)>)> {
    (1usize..120, 2u64..400, 0u32..20).prop_flat_map(|(cap, keys, removal_pct)| {
        let op = (0..keys, 0u32..100).prop_map(move |(k, r)| (k, r < removal_pct));
        (Just(cap), prop::collection::vec(op, 0..4000))
    })
}

prop_policy!(
    arc_matches_reference_with_removals,
    PolicyKind::Arc,
    64,
    long_trace(),
    check_with_removals
);
prop_policy!(
    s3fifo_matches_reference_with_removals,
    PolicyKind::S3Fifo,
    64,
    long_trace(),
    check_with_removals
);
prop_policy!(
    twoq_matches_reference_with_removals,
    PolicyKind::TwoQ,
    64,
    long_trace(),
    check_with_removals
);
prop_policy!(
    slru_matches_reference_with_removals,
    PolicyKind::Slru,
    64,
    long_trace(),
    check_with_removals
);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]
    /// MIN is optimal: no online policy beats it on the same sequence.
    #[test]
    fn belady_is_an_upper_bound((cap, keys) in trace()) {
        let best = super::count_hits(PolicyKind::Belady, cap as u64, &keys).expect("valid");
        for kind in PolicyKind::ALL {
            let hits = super::count_hits(kind, cap as u64, &keys).expect("valid");
            prop_assert!(hits <= best, "{kind:?} {hits} > Belady {best}");
        }
    }

    /// Removing lines (invalidation) keeps every policy consistent: removed lines miss next time
    /// and occupancy never exceeds the capacity.
    #[test]
    fn removals_keep_policies_consistent((cap, keys) in trace(), every in 2usize..7) {
        for kind in PolicyKind::ALL.into_iter().filter(|k| !k.needs_future()) {
            let mut p = new_policy(kind, cap as u64, None).expect("valid");
            let mut ev = Vec::new();
            for (now, &k) in keys.iter().enumerate() {
                if now % every == 0 {
                    let was = p.contains(k);
                    prop_assert_eq!(p.remove(k), was, "{:?}", kind);
                    prop_assert!(!p.contains(k));
                    continue;
                }
                let resident = p.contains(k);
                let hit = p.access(k, now as u64, &mut ev);
                prop_assert_eq!(hit, resident, "{:?}: access disagrees with contains", kind);
                if !hit {
                    p.insert(k, now as u64, &mut ev);
                    prop_assert!(p.contains(k), "{:?}: inserted line not resident", kind);
                }
                prop_assert!(p.len() <= cap as u64);
            }
        }
    }
}
