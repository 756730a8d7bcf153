//! LFU: evict the line with the fewest hits since it entered the cache; among equals, the one
//! that reached that count first (FIFO within a frequency).
//!
//! In-cache LFU with O(1) frequency buckets (Shah, Mitra and Matani, "An O(1) algorithm for
//! implementing the LFU cache eviction scheme", 2010). Frequencies start at 1 on insertion and
//! are forgotten on eviction; ties are broken exactly as libCacheSim's `LFU.c` breaks them (the
//! line that entered the lowest frequency bucket first goes first).
//!
//! Poor fit: lines that were hot long ago keep high counts and squat in the cache after the
//! workload moves on (no ageing), and new lines are evicted before they can build up a count.

use super::{Policy, PolicyKind};
use crate::cache::list::{Table, NIL};

/// A frequency bucket; bucket `b`'s lines are on the table's list `b`.
#[derive(Clone, Copy)]
struct Bucket {
    freq: u64,
    /// Neighbouring buckets in increasing frequency order.
    lower: u32,
    higher: u32,
}

pub struct Lfu {
    capacity: u64,
    /// A node's `aux` is its bucket.
    table: Table,
    buckets: Vec<Bucket>,
    free_buckets: Vec<u32>,
    /// The lowest-frequency bucket (NIL when empty).
    lowest: u32,
}

impl Lfu {
    pub fn new(capacity: u64) -> Lfu {
        Lfu {
            capacity,
            table: Table::new(0, capacity),
            buckets: Vec::new(),
            free_buckets: Vec::new(),
            lowest: NIL,
        }
    }

    fn new_bucket(&mut self, freq: u64, lower: u32, higher: u32) -> u32 {
        let b = Bucket {
            freq,
            lower,
            higher,
        };
        let i = if let Some(i) = self.free_buckets.pop() {
            self.buckets[i as usize] = b;
            i
        } else {
            self.buckets.push(b);
            self.table.add_list();
            (self.buckets.len() - 1) as u32
        };
        if lower == NIL {
            self.lowest = i;
        } else {
            self.buckets[lower as usize].higher = i;
        }
        if higher != NIL {
            self.buckets[higher as usize].lower = i;
        }
        i
    }

    fn drop_bucket_if_empty(&mut self, b: u32) {
        if !self.table.list(b as usize).is_empty() {
            return;
        }
        let bk = self.buckets[b as usize];
        if bk.lower == NIL {
            self.lowest = bk.higher;
        } else {
            self.buckets[bk.lower as usize].higher = bk.higher;
        }
        if bk.higher != NIL {
            self.buckets[bk.higher as usize].lower = bk.lower;
        }
        self.free_buckets.push(b);
    }

    /// Unlinks node `i` from its bucket's list (it stays in the table).
    fn detach(&mut self, i: u32) -> u32 {
        let b = self.table.slot(i).aux;
        self.table.unlink(b as usize, i);
        b
    }

    fn attach(&mut self, i: u32, b: u32) {
        self.table.push_tail(b as usize, i);
        self.table.slot_mut(i).aux = b;
    }
}

impl Policy for Lfu {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Lfu
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn len(&self) -> u64 {
        self.table.len() as u64
    }
    fn contains(&self, key: u64) -> bool {
        self.table.find(key) != NIL
    }

    fn access(&mut self, key: u64, _now: u64, _evicted: &mut Vec<u64>) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        let b = self.table.slot(i).aux;
        let freq = self.buckets[b as usize].freq + 1;
        let higher = self.buckets[b as usize].higher;
        let target = if higher != NIL && self.buckets[higher as usize].freq == freq {
            higher
        } else {
            self.new_bucket(freq, b, higher)
        };
        self.detach(i);
        self.attach(i, target);
        self.drop_bucket_if_empty(b);
        true
    }

    fn insert(&mut self, key: u64, _now: u64, evicted: &mut Vec<u64>) -> bool {
        while self.len() >= self.capacity && self.lowest != NIL {
            let b = self.lowest;
            // The head of a bucket's list is the line that entered that frequency first.
            let victim = self.table.list(b as usize).head;
            self.detach(victim);
            self.drop_bucket_if_empty(b);
            evicted.push(self.table.remove_at(victim));
        }
        let b = if self.lowest != NIL && self.buckets[self.lowest as usize].freq == 1 {
            self.lowest
        } else {
            let old_lowest = self.lowest;
            self.new_bucket(1, NIL, old_lowest)
        };
        let i = self.table.insert(key, 0, b);
        self.attach(i, b);
        true
    }

    fn remove(&mut self, key: u64) -> bool {
        let i = self.table.find(key);
        if i == NIL {
            return false;
        }
        let b = self.detach(i);
        self.drop_bucket_if_empty(b);
        self.table.remove_at(i);
        true
    }

    #[inline]
    fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes() + self.buckets.capacity() * std::mem::size_of::<Bucket>()
    }
}
