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
use crate::cache::list::{Table, NIL};

/// The one list's index in the table.
const L: usize = 0;

pub struct Lru {
    capacity: u64,
    table: Table,
}

impl Lru {
    pub fn new(capacity: u64) -> Lru {
        Lru {
            capacity,
            table: Table::new(1, 0, capacity),
        }
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
        self.table.list(L).len
    }
    fn contains(&self, key: u64) -> bool {
        self.table.find(key) != NIL
    }

    #[inline]
    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        self.table.move_to_head(L, i);
        true
    }

    #[inline]
    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        if self.table.list(L).len >= self.capacity {
            if let Some(t) = self.table.pop_tail(L) {
                evicted.push(self.table.remove_at(t));
            }
        }
        let i = self.table.insert(key, 0, 0);
        self.table.push_head(L, i);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        self.table.remove_key(L, key)
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
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
            table: Table::new(1, 0, 1024),
        }
    }

    /// Sizes the table for about `lines` lines up front (it still grows past them): a sampled
    /// tier knows how many it will hold once full, and growing to it would rehash every line
    /// several times over.
    pub fn with_expected_lines(self, lines: u64) -> WeightedLru {
        WeightedLru {
            table: Table::new(1, 0, lines),
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
