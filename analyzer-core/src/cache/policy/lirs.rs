//! LIRS: ranks lines by inter-reference recency (the number of distinct lines seen between a
//! line's last two uses). Lines with small recency are LIR and stay; the rest are HIR and live
//! in a small queue Q (1% of the cache). A stack S keeps recency history, including keys of
//! non-resident HIR lines, so a line that comes back soon enough is promoted to LIR.
//!
//! Jiang and Zhang, "LIRS: An Efficient Low Inter-reference Recency Set Replacement Policy to
//! Improve Buffer Cache Performance", SIGMETRICS 2002, implemented as the paper's Section 3.3
//! describes (stack pruning, the three access cases). Sizes as in libCacheSim's `LIRS.c`:
//! `L_hirs = max(1, 1% of capacity)`, and S is limited to `2 x capacity` entries by forgetting the
//! non-resident HIR entries that became non-resident first.
//!
//! Deviation from libCacheSim: libCacheSim's `LIRS.c` also demotes the bottom LIR line when a
//! resident HIR line that is not in S is hit, and can keep a line marked resident after evicting
//! it from Q (hits on it are then counted without the line being cached). This file follows the
//! paper, so its hit counts differ slightly from libCacheSim's; the difference is measured and
//! reported in docs/cache.md.
//!
//! Poor fit: a tiny HIR queue means newly hot data needs two accesses within a short window to be
//! kept; workloads that shift their hot set often can trail ARC. The S stack can hold up to
//! `2 x capacity` keys.

use super::{Policy, PolicyKind};
use crate::cache::list::{Arena, List, NIL};
use crate::hash::IntMap;

const LIR: u8 = 0;
const HIR_RESIDENT: u8 = 1;
const HIR_NONRESIDENT: u8 = 2;

#[derive(Clone, Copy)]
struct Loc {
    s: u32,
    q: u32,
    nh: u32,
}

pub struct Lirs {
    capacity: u64,
    lir_max: u64,
    lir_len: u64,
    hir_len: u64,
    map: IntMap<u64, Loc>,
    s_nodes: Arena,
    s: List,
    q_nodes: Arena,
    q: List,
    nh_nodes: Arena,
    nh: List,
}

impl Lirs {
    pub fn new(capacity: u64) -> Lirs {
        let n = capacity.min(super::PREALLOC_LINES) as usize;
        let hir_max = ((capacity as f64 * 0.01) as u64).max(1);
        Lirs {
            capacity,
            lir_max: capacity.saturating_sub(hir_max).max(1),
            lir_len: 0,
            hir_len: 0,
            map: IntMap::with_capacity_and_hasher(n * 2, Default::default()),
            s_nodes: Arena::with_capacity(n * 2),
            s: List::default(),
            q_nodes: Arena::with_capacity(n / 50 + 1),
            q: List::default(),
            nh_nodes: Arena::with_capacity(n),
            nh: List::default(),
        }
    }

    fn loc(&self, key: u64) -> Loc {
        self.map.get(&key).copied().unwrap_or(Loc {
            s: NIL,
            q: NIL,
            nh: NIL,
        })
    }

    fn set_loc(&mut self, key: u64, loc: Loc) {
        if loc.s == NIL && loc.q == NIL && loc.nh == NIL {
            self.map.remove(&key);
        } else {
            self.map.insert(key, loc);
        }
    }

    /// Removes HIR entries from the bottom of S until an LIR line is at the bottom.
    fn prune(&mut self) {
        loop {
            let t = self.s.tail;
            if t == NIL || self.s_nodes.get(t).tag == LIR {
                return;
            }
            let key = self.s_nodes.get(t).key;
            self.s_nodes.unlink(&mut self.s, t);
            self.s_nodes.release(t);
            let mut loc = self.loc(key);
            loc.s = NIL;
            if loc.nh != NIL {
                self.nh_nodes.unlink(&mut self.nh, loc.nh);
                self.nh_nodes.release(loc.nh);
                loc.nh = NIL;
            }
            self.set_loc(key, loc);
        }
    }

    /// Turns the bottom LIR line of S into a resident HIR line at the MRU end of Q.
    fn demote_bottom_lir(&mut self) {
        let t = self.s.tail;
        if t == NIL {
            return;
        }
        let key = self.s_nodes.get(t).key;
        self.s_nodes.unlink(&mut self.s, t);
        self.s_nodes.release(t);
        let mut loc = self.loc(key);
        loc.s = NIL;
        let qi = self.q_nodes.alloc(key, HIR_RESIDENT, 0);
        self.q_nodes.push_head(&mut self.q, qi);
        loc.q = qi;
        self.set_loc(key, loc);
        self.lir_len = self.lir_len.saturating_sub(1);
        self.hir_len += 1;
        self.prune();
    }

    /// Evicts the resident HIR line at the LRU end of Q; it stays in S as non-resident.
    fn evict_hir(&mut self, evicted: &mut Vec<u64>) {
        let Some(t) = self.q_nodes.pop_tail(&mut self.q) else {
            // No HIR line left (only after invalidations): evict the bottom LIR line instead.
            if self.s.tail != NIL {
                self.demote_bottom_lir();
                self.evict_hir(evicted);
            }
            return;
        };
        let key = self.q_nodes.get(t).key;
        self.q_nodes.release(t);
        self.hir_len = self.hir_len.saturating_sub(1);
        let mut loc = self.loc(key);
        loc.q = NIL;
        if loc.s != NIL {
            self.s_nodes.get_mut(loc.s).tag = HIR_NONRESIDENT;
            let ni = self.nh_nodes.alloc(key, 0, 0);
            self.nh_nodes.push_head(&mut self.nh, ni);
            loc.nh = ni;
        }
        self.set_loc(key, loc);
        evicted.push(key);
    }

    /// Keeps S within 2 x capacity entries by forgetting the oldest non-resident entries.
    fn limit_stack(&mut self) {
        while self.s.len > 2 * self.capacity {
            let Some(t) = self.nh_nodes.pop_tail(&mut self.nh) else {
                return;
            };
            let key = self.nh_nodes.get(t).key;
            self.nh_nodes.release(t);
            let mut loc = self.loc(key);
            loc.nh = NIL;
            if loc.s != NIL {
                self.s_nodes.unlink(&mut self.s, loc.s);
                self.s_nodes.release(loc.s);
                loc.s = NIL;
            }
            self.set_loc(key, loc);
        }
    }
}

impl Policy for Lirs {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Lirs
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn len(&self) -> u64 {
        self.lir_len + self.hir_len
    }
    fn contains(&self, key: u64) -> bool {
        let loc = self.loc(key);
        loc.q != NIL || (loc.s != NIL && self.s_nodes.get(loc.s).tag == LIR)
    }

    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let Some(&loc) = self.map.get(&key) else {
            return false;
        };
        if loc.s != NIL && self.s_nodes.get(loc.s).tag == LIR {
            self.s_nodes.move_to_head(&mut self.s, loc.s);
            self.prune();
            return true;
        }
        if loc.q == NIL {
            return false;
        }
        // A resident HIR line.
        let mut loc = loc;
        if loc.s != NIL {
            // Its recency beats the bottom LIR line's: it becomes LIR.
            self.s_nodes.move_to_head(&mut self.s, loc.s);
            self.s_nodes.get_mut(loc.s).tag = LIR;
            self.q_nodes.unlink(&mut self.q, loc.q);
            self.q_nodes.release(loc.q);
            loc.q = NIL;
            self.set_loc(key, loc);
            self.hir_len = self.hir_len.saturating_sub(1);
            self.lir_len += 1;
            if self.lir_len > self.lir_max {
                self.demote_bottom_lir();
            }
        } else {
            let si = self.s_nodes.alloc(key, HIR_RESIDENT, 0);
            self.s_nodes.push_head(&mut self.s, si);
            loc.s = si;
            self.q_nodes.move_to_head(&mut self.q, loc.q);
            self.set_loc(key, loc);
            self.limit_stack();
        }
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        if self.contains(key) {
            return true;
        }
        if self.len() + 1 > self.capacity {
            self.evict_hir(evicted);
        }
        let mut loc = self.loc(key);
        if loc.s != NIL {
            // A non-resident HIR line still in S: its reuse came soon enough to make it LIR.
            self.s_nodes.move_to_head(&mut self.s, loc.s);
            self.s_nodes.get_mut(loc.s).tag = LIR;
            if loc.nh != NIL {
                self.nh_nodes.unlink(&mut self.nh, loc.nh);
                self.nh_nodes.release(loc.nh);
                loc.nh = NIL;
            }
            self.set_loc(key, loc);
            self.lir_len += 1;
            if self.lir_len > self.lir_max {
                self.demote_bottom_lir();
            }
        } else if self.lir_len < self.lir_max {
            let si = self.s_nodes.alloc(key, LIR, 0);
            self.s_nodes.push_head(&mut self.s, si);
            loc.s = si;
            self.set_loc(key, loc);
            self.lir_len += 1;
        } else {
            let si = self.s_nodes.alloc(key, HIR_RESIDENT, 0);
            self.s_nodes.push_head(&mut self.s, si);
            let qi = self.q_nodes.alloc(key, HIR_RESIDENT, 0);
            self.q_nodes.push_head(&mut self.q, qi);
            loc.s = si;
            loc.q = qi;
            self.set_loc(key, loc);
            self.hir_len += 1;
        }
        self.limit_stack();
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let Some(mut loc) = self.map.get(&key).copied() else {
            return false;
        };
        let resident = self.contains(key);
        if loc.s != NIL {
            if self.s_nodes.get(loc.s).tag == LIR {
                self.lir_len = self.lir_len.saturating_sub(1);
            }
            self.s_nodes.unlink(&mut self.s, loc.s);
            self.s_nodes.release(loc.s);
            loc.s = NIL;
        }
        if loc.q != NIL {
            self.q_nodes.unlink(&mut self.q, loc.q);
            self.q_nodes.release(loc.q);
            self.hir_len = self.hir_len.saturating_sub(1);
            loc.q = NIL;
        }
        if loc.nh != NIL {
            self.nh_nodes.unlink(&mut self.nh, loc.nh);
            self.nh_nodes.release(loc.nh);
            loc.nh = NIL;
        }
        self.set_loc(key, loc);
        self.prune();
        resident
    }

    fn heap_bytes(&self) -> usize {
        self.s_nodes.heap_bytes()
            + self.q_nodes.heap_bytes()
            + self.nh_nodes.heap_bytes()
            + self.map.capacity() * 24
    }
}
