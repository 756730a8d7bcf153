//! LRU: evict the line whose last use is oldest.
//!
//! The classic recency policy (Mattson et al., "Evaluation techniques for storage hierarchies",
//! IBM Systems Journal 9(2), 1970, which also gives the stack property the exact MRC relies on).
//! Matches libCacheSim's `LRU.c`.
//!
//! Poor fit: scans and loops larger than the cache flush it completely (a backup or a full-table
//! scan evicts the whole working set), and it ignores frequency, so one-hit wonders displace
//! lines that are used over and over at longer intervals.

use super::{Policy, PolicyKind};
use crate::cache::list::{renumber_slot, PosSlot, PosTable, Table, NIL, NIL_SLOT};
use std::collections::VecDeque;

/// The one list's index in the table.
const L: usize = 0;

/// LRU kept as a log of accesses rather than a linked list: every access appends its key's
/// table slot to `log`, and the slot holds the log position of the key's latest access. The
/// least recently used key is then the first in the log whose entry is its latest (the entries
/// before it are older accesses of keys used again since, or of keys removed), so an eviction
/// pops the log's front until it finds one.
///
/// The same evictions as a doubly linked list (the property tests below run it beside
/// [`WeightedLru`] with equal weights, which is one), but the work differs where it matters: a
/// list's eviction follows the tail's `prev` link to a node last used long ago, a random
/// memory load that the next eviction must wait for, one after another; the log's front is
/// read in order, and the slots it names are known well before they are checked, so they are
/// read ahead ([`LOG_AHEAD`]) as the accesses' own are. A hit writes one slot instead of
/// relinking three nodes. On a 50 M-access stream at 10% of its footprint (969,270 lines)
/// this took LRU from 6.6 to 4.8 s of CPU and its memory from 169 to 129 MB
/// (docs/benchmarks.md); at 1% (a table in the CPU's L3) the two are equal.
///
/// The log holds the accesses since the oldest resident key's last use: `capacity / (1 − hit
/// ratio)` entries or so. When it passes [`LOG_FACTOR`] × the resident keys (hit ratios over
/// three in four) it is compacted to the latest entries, in order.
pub struct Lru {
    capacity: u64,
    table: PosTable,
    /// The table slot of each logged access's key (slots are renumbered with the log when
    /// the table is rebuilt; [`NO_SLOT`] for a key gone by then).
    log: VecDeque<u32>,
    /// The log position of `log[0]`; positions only grow.
    base: u64,
}

/// Log entries read ahead when the front is popped.
const LOG_AHEAD: usize = 16;

/// The log is compacted when it holds more than this many entries per resident key.
const LOG_FACTOR: usize = 4;

impl Lru {
    pub fn new(capacity: u64) -> Lru {
        Lru {
            capacity,
            table: PosTable::new(capacity),
            log: VecDeque::new(),
            base: 0,
        }
    }

    /// The position the next log entry will have.
    #[inline]
    fn next_pos(&self) -> u64 {
        self.base + self.log.len() as u64
    }

    /// Logs an access to the key in `slot`, compacting the log first when it is long.
    #[inline]
    fn log_access(&mut self, slot: usize) {
        if self.log.len() >= LOG_FACTOR * self.table.live.max(64) {
            self.compact();
        }
        let pos = self.next_pos();
        self.table.slots[slot].pos = pos;
        self.log.push_back(slot as u32);
    }

    /// Whether the log entry at position `pos` naming `slot` is its key's latest access.
    #[inline]
    fn is_latest(&self, slot: u32, pos: u64) -> bool {
        self.table
            .slots
            .get(slot as usize)
            .is_some_and(|s| s.pos == pos)
    }

    /// Rewrites the log with only each resident key's latest entry, in order.
    fn compact(&mut self) {
        let old = std::mem::take(&mut self.log);
        let old_base = self.base;
        self.base = old_base + old.len() as u64;
        let mut log = VecDeque::with_capacity(self.table.live + 1);
        for (j, &slot) in old.iter().enumerate() {
            if let Some(&ahead) = old.get(j + LOG_AHEAD) {
                crate::prefetch::ahead(&self.table.slots, ahead as usize);
            }
            if self.is_latest(slot, old_base + j as u64) {
                self.table.slots[slot as usize].pos = self.base + log.len() as u64;
                log.push_back(slot);
            }
        }
        self.log = log;
    }

    /// Removes the key in `slot` from the table; the keys the table moves keep their latest log
    /// entries, which now name their new slots (its own entries go stale: none is its latest).
    #[inline]
    fn remove_at(&mut self, slot: usize) {
        let (log, base) = (&mut self.log, self.base);
        self.table.remove_at(slot, |pos, to| {
            // A resident key's latest entry is in the log (at or after its front).
            if let Some(entry) = pos
                .checked_sub(base)
                .and_then(|at| log.get_mut(at as usize))
            {
                *entry = to as u32;
            }
        });
    }

    /// Removes the least recently used key and returns it (the table must not be empty).
    fn evict(&mut self) -> Option<u64> {
        while let Some(slot) = self.log.pop_front() {
            let pos = self.base;
            self.base += 1;
            if let Some(&ahead) = self.log.get(LOG_AHEAD) {
                crate::prefetch::ahead(&self.table.slots, ahead as usize);
            }
            if self.is_latest(slot, pos) {
                let key = self.table.slots[slot as usize].key;
                self.remove_at(slot as usize);
                return Some(key);
            }
        }
        debug_assert_eq!(self.table.live, 0, "resident keys but no latest log entry");
        None
    }
}

impl Policy for Lru {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Lru
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn len(&self) -> u64 {
        self.table.live as u64
    }
    fn contains(&self, key: u64) -> bool {
        self.table.find(key) != NIL_SLOT
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        if i == NIL_SLOT {
            return false;
        }
        self.log_access(i);
        true
    }

    #[inline]
    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        if self.table.live as u64 >= self.capacity {
            if let Some(k) = self.evict() {
                evicted.push(k);
            }
        }
        let log = &mut self.log;
        let i = self.table.insert(key, &mut |renumber| {
            for slot in log.iter_mut() {
                *slot = renumber_slot(renumber, *slot);
            }
        });
        self.log_access(i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        // Its log entries stay, and are skipped when they reach the front: none is its latest
        // any more (a later insert of the key logs a newer one).
        let i = self.table.find(key);
        if i == NIL_SLOT {
            return false;
        }
        self.remove_at(i);
        true
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.table.slots.capacity() * std::mem::size_of::<PosSlot>()
            + self.log.capacity() * std::mem::size_of::<u32>()
    }
}

/// LRU whose lines weigh differently: it holds lines while their weights sum to at most its
/// budget, evicting from the least recently used end. The Array view's estimate
/// (`job::predict`) uses it to simulate a spatial sample of the trace's lines in which the lines
/// it must decide (those of the replayed slices) are all kept and weigh 1, and every other kept
/// line stands for `1 / rate` lines and weighs that much (weights are integers scaled by the
/// sample's threshold). A line's position in the list is then an estimate of its LRU stack
/// distance (Waldspurger et al., "Efficient MRC Construction with SHARDS", FAST '15, for the
/// sampled lines' share), so it is present exactly when that estimate is below the cache's
/// size. With every weight equal it is [`Lru`].
pub struct WeightedLru {
    capacity: u64,
    budget: u64,
    used: u64,
    light: std::rc::Rc<crate::hash::IntSet<u64>>,
    light_weight: u64,
    heavy_weight: u64,
    table: Table,
}

/// `aux` of a light line's slot.
const LIGHT: u32 = 1;

impl WeightedLru {
    /// `capacity` lines; the keys in `light` weigh `light_weight`, every other key
    /// `heavy_weight`; the budget is `capacity × light_weight`.
    pub fn new(
        capacity: u64,
        light: std::rc::Rc<crate::hash::IntSet<u64>>,
        light_weight: u64,
        heavy_weight: u64,
    ) -> WeightedLru {
        WeightedLru {
            capacity,
            budget: capacity.saturating_mul(light_weight.max(1)),
            used: 0,
            light,
            light_weight: light_weight.max(1),
            heavy_weight: heavy_weight.max(1),
            // A sample holds far fewer lines than the capacity: the table grows as needed.
            table: Table::new(1, 1024),
        }
    }

    /// Sizes the table for about `lines` lines up front (it still grows past them): a sampled
    /// tier knows how many it will hold once full, and growing to it would rehash every line
    /// several times over.
    pub fn with_expected_lines(self, lines: u64) -> WeightedLru {
        WeightedLru {
            table: Table::new(1, lines),
            ..self
        }
    }

    fn weight(&self, aux: u32) -> u64 {
        if aux == LIGHT {
            self.light_weight
        } else {
            self.heavy_weight
        }
    }
}

impl Policy for WeightedLru {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Lru
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn len(&self) -> u64 {
        self.table.list(L).len
    }
    fn contains(&self, key: u64) -> bool {
        self.table.find(key) != NIL
    }

    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        self.table.move_to_head(L, i);
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        let aux = u32::from(self.light.contains(&key));
        let w = self.weight(aux);
        while self.used + w > self.budget {
            let Some(t) = self.table.pop_tail(L) else {
                break;
            };
            self.used -= self.weight(self.table.slot(t).aux);
            evicted.push(self.table.remove_at(t));
        }
        let i = self.table.insert(key, 0, aux);
        self.table.push_head(L, i);
        self.used += w;
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        self.used -= self.weight(self.table.slot(i).aux);
        self.table.unlink(L, i);
        self.table.remove_at(i);
        true
    }

    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes() + self.light.capacity() * 9
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(p: &mut dyn Policy, keys: &[u64]) -> Vec<(bool, Vec<u64>)> {
        let mut out = Vec::new();
        for (now, &k) in keys.iter().enumerate() {
            let mut evicted = Vec::new();
            let hit = p.access(k, now as u64, &mut evicted);
            if !hit {
                p.insert(k, now as u64, &mut evicted);
            }
            if k % 7 == 0 {
                p.remove(k + 1);
            }
            out.push((hit, evicted));
        }
        out
    }

    proptest! {
        /// With every weight equal it is LRU, evictions and removals included.
        #[test]
        fn equal_weights_are_lru(
            keys in proptest::collection::vec(0u64..64, 0..400),
            capacity in 1u64..40,
            light in proptest::collection::vec(0u64..64, 0..20),
            w in 1u64..1000,
        ) {
            let light = std::rc::Rc::new(light.into_iter().collect());
            let mut weighted = WeightedLru::new(capacity, light, w, w);
            let mut lru = Lru::new(capacity);
            prop_assert_eq!(run(&mut weighted, &keys), run(&mut lru, &keys));
        }
    }

    proptest! {
        /// Long runs over few keys (hit ratios up to 1, so the log is compacted many times)
        /// and over many (keys shifted back by every removal, their log entries repointed):
        /// the same hits, evictions and removals as the linked list.
        #[test]
        fn the_log_evicts_as_the_list_does(
            keys in proptest::collection::vec((0u64..1u64 << 40, 0u64..300), 0..3000),
            wide in proptest::bool::ANY,
            capacity in 1u64..120,
        ) {
            let keys: Vec<u64> = keys
                .into_iter()
                .map(|(k, small)| if wide { k % 5000 } else { small })
                .collect();
            let mut list = WeightedLru::new(capacity, std::rc::Rc::default(), 1, 1);
            let mut log = Lru::new(capacity);
            prop_assert_eq!(run(&mut list, &keys), run(&mut log, &keys));
            prop_assert_eq!(list.len(), log.len());
        }
    }

    /// A hit ratio near 1 for a long time: the log stays within its bound and the evictions
    /// stay the list's.
    #[test]
    fn the_log_stays_bounded_under_hits() {
        let mut list = WeightedLru::new(500, std::rc::Rc::default(), 1, 1);
        let mut log = Lru::new(500);
        let keys: Vec<u64> = (0..200_000u64)
            .map(|i| crate::hash::mix64(i) % if i % 1000 == 0 { 1_000_000 } else { 480 })
            .collect();
        assert_eq!(run(&mut list, &keys), run(&mut log, &keys));
        assert!(
            log.log.len() <= LOG_FACTOR * 500,
            "log of {} entries",
            log.log.len()
        );
    }

    /// A heavy line takes the room of `heavy / light` light ones.
    #[test]
    fn a_heavy_line_takes_the_room_of_several_light_ones() {
        let light = std::rc::Rc::new([1u64, 2, 3, 4].into_iter().collect());
        let mut p = WeightedLru::new(4, light, 1, 3);
        let mut ev = Vec::new();
        for k in [1, 2, 3, 4] {
            p.insert(k, 0, &mut ev);
        }
        assert!(ev.is_empty());
        p.insert(100, 0, &mut ev);
        assert_eq!(
            ev,
            vec![1, 2, 3],
            "three light lines make room for one heavy"
        );
        assert_eq!(p.len(), 2);
        ev.clear();
        p.insert(1, 0, &mut ev);
        assert_eq!(
            ev,
            vec![4],
            "4 (light) and 100 (heavy) fill the budget: 1 evicts 4"
        );
        assert!(p.contains(100) && p.contains(1));
    }
}
