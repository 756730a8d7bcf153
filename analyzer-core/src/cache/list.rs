//! The one key → node table every list-based policy keeps: an open-addressing hash table whose
//! slots *are* the list nodes, so an access costs one hash probe and the links it follows are in
//! the slot it found.
//!
//! A [`Table`] holds the nodes of all of a policy's lists (LFU's frequency buckets, say),
//! linked by `u32` slot indices. A node moves between lists without allocating, and evicting a
//! list's tail needs no probe at all (its slot index is the list's tail). (LRU, SIEVE, ARC,
//! S3-FIFO, 2Q and SLRU keep their queues as logs or arrays over [`PosTable`] instead,
//! `cache/logs.rs`, so that their evictions read memory in order; FIFO, CLOCK, LFU and the
//! weighted LRU of the Array view's estimate use the lists; [`PosTable`] deletes by shifting keys
//! back rather than by tombstones, see there.) Direction: `head` is the newest
//! end (most recently inserted or used), `tail` the oldest; `prev` points towards the head,
//! `next` towards the tail (libCacheSim's convention, which keeps the policies easy to compare
//! with its source).
//!
//! Probing is linear from a Fibonacci hash of the key with its two low bits cleared, plus those
//! bits (one multiply): each aligned group of four consecutive block keys has four neighbouring
//! home slots, so a multi-line request or a sequential run touches a few cache lines instead of
//! one per line, while the product's high bits still spread the groups (on a 1.1 M-request
//! trace of 9-line requests LRU at 1 % and 10 % of the footprint took about 40 % less CPU; on
//! 4 KiB random requests the same). Deleted slots become tombstones, or
//! empty when the next slot is empty, so slots never move under the policies' feet between
//! rehashes. The table keeps at most 3/8 of its slots live, and rehashes (same size, or double
//! when it holds more) when live plus tombstones pass 5/8, which keeps a miss's probe (it runs
//! to an empty slot) short: at 1% of the footprint four accesses in five are misses. The price
//! is memory: 24-byte slots at 3/16 to 3/8 occupancy are 64–128 bytes per entry. A rehash
//! renumbers the slots and fixes every link and list end, so policies never hold slot indices
//! elsewhere. It starts at no more than
//! [`super::policy::PREALLOC_LINES`] entries and grows with the entries it holds; once it has
//! grown to the policy's working size no access allocates.

/// The "no node" index.
pub const NIL: u32 = u32::MAX;

/// Tags at or above this are the table's own slot states, not a policy's.
const EMPTY: u8 = u8::MAX;
const TOMB: u8 = u8::MAX - 1;

/// Fibonacci hashing's multiplier, 2^64 / φ.
const FIB: u64 = 0x9E37_79B9_7F4A_7C15;

/// One slot: the key plus its links and two small per-policy fields.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    pub key: u64,
    pub prev: u32,
    pub next: u32,
    /// A per-policy counter: a reference bit, a frequency, a bucket index.
    pub aux: u32,
    /// Which list the node is on (policy-defined, below 254).
    pub tag: u8,
}

const EMPTY_SLOT: Slot = Slot {
    key: 0,
    prev: NIL,
    next: NIL,
    aux: 0,
    tag: EMPTY,
};

/// Head, tail and length of one list whose nodes live in a [`Table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct List {
    pub head: u32,
    pub tail: u32,
    pub len: u64,
}

impl Default for List {
    fn default() -> List {
        List {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl List {
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The shared key → node table with the lists threaded through it.
#[derive(Clone, Debug)]
pub struct Table {
    slots: Vec<Slot>,
    /// `64 - log2(slots.len())`: the hash's top bits index the slots.
    shift: u32,
    live: usize,
    tombs: usize,
    lists: Vec<List>,
}

impl Table {
    /// A table for `lists` lists, with room for `expected` entries before it first grows.
    pub fn new(lists: usize, expected: u64) -> Table {
        let expected = expected.min(super::policy::PREALLOC_LINES) as usize;
        let n = (expected * 2).next_power_of_two().max(16);
        Table {
            slots: vec![EMPTY_SLOT; n],
            shift: 64 - n.trailing_zeros(),
            live: 0,
            tombs: 0,
            lists: vec![List::default(); lists],
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        let group = ((key >> 2).wrapping_mul(FIB) >> self.shift) as usize;
        (group + (key & 3) as usize) & self.mask()
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot holding `key`, or [`NIL`].
    #[inline]
    pub fn find(&self, key: u64) -> u32 {
        let mask = self.mask();
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.key == key && s.tag < TOMB {
                return i as u32;
            }
            if s.tag == EMPTY {
                return NIL;
            }
            i = (i + 1) & mask;
        }
    }

    /// Reads `key`'s home slot ahead ([`crate::prefetch::ahead`]), so that a probe soon after
    /// finds it in the CPU cache. Called for several upcoming keys back to back (the trace is
    /// known ahead), their misses overlap instead of coming one after another.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        crate::prefetch::ahead(&self.slots, self.home(key));
    }

    /// Inserts `key` (which must be absent) as an unlinked node and returns its slot.
    #[inline]
    pub fn insert(&mut self, key: u64, tag: u8, aux: u32) -> u32 {
        debug_assert!(tag < TOMB);
        if (self.live + self.tombs + 1) * 8 > self.slots.len() * 5 {
            let n = if (self.live + 1) * 8 > self.slots.len() * 3 {
                self.slots.len() * 2
            } else {
                self.slots.len()
            };
            self.rehash(n);
        }
        let mask = self.mask();
        let mut i = self.home(key);
        let mut tomb = NIL as usize;
        loop {
            let s = &self.slots[i];
            if s.tag == EMPTY {
                break;
            }
            if s.tag == TOMB && tomb == NIL as usize {
                tomb = i;
            }
            debug_assert!(s.tag == TOMB || s.key != key, "key inserted twice");
            i = (i + 1) & mask;
        }
        if tomb != NIL as usize {
            i = tomb;
            self.tombs -= 1;
        }
        self.slots[i] = Slot {
            key,
            prev: NIL,
            next: NIL,
            aux,
            tag,
        };
        self.live += 1;
        i as u32
    }

    /// Takes `key` off list `l` and out of the table; false when the table does not hold it.
    pub fn remove_key(&mut self, l: usize, key: u64) -> bool {
        let i = self.find(key);
        if i == NIL {
            return false;
        }
        self.unlink(l, i);
        self.remove_at(i);
        true
    }

    /// Frees slot `i`, which must be unlinked from every list, and returns its key.
    #[inline]
    pub fn remove_at(&mut self, i: u32) -> u64 {
        let i = i as usize;
        let key = self.slots[i].key;
        let mask = self.mask();
        self.live -= 1;
        if self.slots[(i + 1) & mask].tag == EMPTY {
            // Nothing probes past an empty slot: this one and the tombstones before it empty.
            self.slots[i].tag = EMPTY;
            let mut j = (i + mask) & mask;
            while self.slots[j].tag == TOMB {
                self.slots[j].tag = EMPTY;
                self.tombs -= 1;
                j = (j + mask) & mask;
            }
        } else {
            self.slots[i].tag = TOMB;
            self.tombs += 1;
        }
        key
    }

    /// Entries held (on lists or not yet linked).
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    #[inline]
    pub fn slot(&self, i: u32) -> &Slot {
        &self.slots[i as usize]
    }

    #[inline]
    pub fn slot_mut(&mut self, i: u32) -> &mut Slot {
        &mut self.slots[i as usize]
    }

    #[inline]
    pub fn list(&self, l: usize) -> &List {
        &self.lists[l]
    }

    /// Adds an empty list and returns its index (LFU's buckets).
    pub fn add_list(&mut self) -> usize {
        self.lists.push(List::default());
        self.lists.len() - 1
    }

    /// Links node `i` at the head (newest end) of list `l`.
    #[inline]
    pub fn push_head(&mut self, l: usize, i: u32) {
        let old = self.lists[l].head;
        {
            let n = &mut self.slots[i as usize];
            n.prev = NIL;
            n.next = old;
        }
        if old == NIL {
            self.lists[l].tail = i;
        } else {
            self.slots[old as usize].prev = i;
        }
        self.lists[l].head = i;
        self.lists[l].len += 1;
    }

    /// Links node `i` at the tail (oldest end) of list `l`.
    #[inline]
    pub fn push_tail(&mut self, l: usize, i: u32) {
        let old = self.lists[l].tail;
        {
            let n = &mut self.slots[i as usize];
            n.next = NIL;
            n.prev = old;
        }
        if old == NIL {
            self.lists[l].head = i;
        } else {
            self.slots[old as usize].next = i;
        }
        self.lists[l].tail = i;
        self.lists[l].len += 1;
    }

    /// Unlinks node `i` from list `l` (the node must be on it).
    #[inline]
    pub fn unlink(&mut self, l: usize, i: u32) {
        let Slot { prev, next, .. } = self.slots[i as usize];
        if prev == NIL {
            self.lists[l].head = next;
        } else {
            self.slots[prev as usize].next = next;
        }
        if next == NIL {
            self.lists[l].tail = prev;
        } else {
            self.slots[next as usize].prev = prev;
        }
        self.lists[l].len -= 1;
    }

    /// Moves node `i`, already on list `l`, to its head.
    #[inline]
    pub fn move_to_head(&mut self, l: usize, i: u32) {
        if self.lists[l].head != i {
            self.unlink(l, i);
            self.push_head(l, i);
        }
    }

    /// Unlinks and returns the tail (oldest) node of list `l`.
    ///
    /// Also reads ahead the node the pop after next will return: the new tail's `prev`. The
    /// new tail is in the CPU cache (this pop just wrote it), but its `prev` is an old, random
    /// slot whose load the next pop would otherwise wait for (policies evict from a tail on
    /// most misses); read now, the load overlaps the accesses in between.
    #[inline]
    pub fn pop_tail(&mut self, l: usize) -> Option<u32> {
        let t = self.lists[l].tail;
        if t == NIL {
            return None;
        }
        self.unlink(l, t);
        let new_tail = self.lists[l].tail;
        if new_tail != NIL {
            let next = self.slots[new_tail as usize].prev;
            if next != NIL {
                crate::prefetch::ahead(&self.slots, next as usize);
            }
        }
        Some(t)
    }

    /// Renumbers every entry into `n` slots and fixes links and list ends.
    fn rehash(&mut self, n: usize) {
        let old = std::mem::replace(&mut self.slots, vec![EMPTY_SLOT; n]);
        self.shift = 64 - n.trailing_zeros();
        self.tombs = 0;
        let mask = n - 1;
        let mut remap = vec![NIL; old.len()];
        for (j, s) in old.iter().enumerate() {
            if s.tag >= TOMB {
                continue;
            }
            let mut i = self.home(s.key);
            while self.slots[i].tag != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = *s;
            remap[j] = i as u32;
        }
        let fix = |x: u32| if x == NIL { NIL } else { remap[x as usize] };
        for s in &mut self.slots {
            if s.tag < TOMB {
                s.prev = fix(s.prev);
                s.next = fix(s.next);
            }
        }
        for l in &mut self.lists {
            l.head = fix(l.head);
            l.tail = fix(l.tail);
        }
    }

    /// Heap bytes held, for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.lists.capacity() * std::mem::size_of::<List>()
    }
}

/// The key → position table of the policies kept as a log or an array rather than lists
/// (LRU's latest log position, SIEVE's queue index): open addressing with linear probing
/// from the same hash as [`Table`] (the four keys of an aligned group of four blocks have neighbouring
/// home slots), at most 3/8 live (grown past that), in 16-byte slots.
///
/// A removal shifts the keys after it back (backward-shift deletion) instead of leaving a
/// tombstone: every eviction of a full cache is a removal, so tombstones filled the table to its
/// 5/8 limit again and again, lengthening every probe (a miss probes to an empty slot) and
/// forcing a rebuild each time. A key moved by a removal is reported to the caller
/// ([`PosTable::remove_at`]), whose log or queue names slots: the caller repoints that entry,
/// and must not hold a slot number across a removal (find the key again).
pub(crate) struct PosTable {
    pub(crate) slots: Vec<PosSlot>,
    shift: u32,
    pub(crate) live: usize,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct PosSlot {
    pub(crate) key: u64,
    /// The key's latest log position (a user may keep flags in bits 62 and 61), or [`POS_EMPTY`]
    /// / [`PENDING`].
    pub(crate) pos: u64,
}

const POS_EMPTY: u64 = u64::MAX;
/// A key just inserted, before the caller logs its access: live, and no log entry's position.
pub(crate) const PENDING: u64 = u64::MAX - 2;
pub(crate) const NIL_SLOT: usize = usize::MAX;
/// A log entry whose key left the table before a rebuild.
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// `slot`'s number after a rebuild that renumbered the slots by `renumber`.
#[inline]
pub(crate) fn renumber_slot(renumber: &[u32], slot: u32) -> u32 {
    renumber.get(slot as usize).copied().unwrap_or(NO_SLOT)
}
const POS_EMPTY_SLOT: PosSlot = PosSlot {
    key: 0,
    pos: POS_EMPTY,
};

impl PosTable {
    pub(crate) fn new(expected: u64) -> PosTable {
        let expected = expected.min(super::policy::PREALLOC_LINES) as usize;
        let n = (expected * 2).next_power_of_two().max(16);
        PosTable {
            slots: vec![POS_EMPTY_SLOT; n],
            shift: 64 - n.trailing_zeros(),
            live: 0,
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        let group = ((key >> 2).wrapping_mul(FIB) >> self.shift) as usize;
        (group + (key & 3) as usize) & (self.slots.len() - 1)
    }

    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        crate::prefetch::ahead(&self.slots, self.home(key));
    }

    /// The slot holding `key`, or [`NIL_SLOT`].
    #[inline]
    pub(crate) fn find(&self, key: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.pos == POS_EMPTY {
                return NIL_SLOT;
            }
            if s.key == key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Inserts `key` (which must be absent) and returns its slot; its position is the
    /// caller's to set.
    /// Growing the table renumbers the slots: `renumber` is then called with the map from old
    /// slot numbers to new ones ([`NO_SLOT`] for a slot that held no key), for the caller's logs.
    #[inline]
    pub(crate) fn insert(&mut self, key: u64, renumber: &mut dyn FnMut(&[u32])) -> usize {
        if (self.live + 1) * 8 > self.slots.len() * 3 {
            self.rebuild(self.slots.len() * 2, renumber);
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        while self.slots[i].pos != POS_EMPTY {
            debug_assert!(self.slots[i].key != key, "key inserted twice");
            i = (i + 1) & mask;
        }
        self.slots[i] = PosSlot { key, pos: PENDING };
        self.live += 1;
        i
    }

    /// Frees slot `i` and shifts back the keys after it that may sit closer to their home
    /// slots, so that no probe sequence has a gap. Each key moved is reported as `moved(pos,
    /// to)`, its position field and its new slot: the caller's entry for it must name `to` from
    /// now on. Keys move only within the probe run after `i`; a caller holding another slot
    /// number across this call must find its key again.
    #[inline]
    pub(crate) fn remove_at(&mut self, i: usize, mut moved: impl FnMut(u64, usize)) {
        let mask = self.slots.len() - 1;
        self.live -= 1;
        let mut hole = i;
        let mut j = (i + 1) & mask;
        loop {
            let s = self.slots[j];
            if s.pos == POS_EMPTY {
                break;
            }
            // The key at `j` may fill the hole when its home is not after the hole (cyclically,
            // within the run): it is at least as far from home at the hole as at `j`.
            let home = self.home(s.key);
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                self.slots[hole] = s;
                moved(s.pos, hole);
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.slots[hole] = POS_EMPTY_SLOT;
    }

    /// Re-inserts every live key into `n` slots and gives `renumber` the map of slot numbers.
    fn rebuild(&mut self, n: usize, renumber: &mut dyn FnMut(&[u32])) {
        let old = std::mem::replace(&mut self.slots, vec![POS_EMPTY_SLOT; n]);
        self.shift = 64 - n.trailing_zeros();
        let mask = n - 1;
        let mut map = vec![NO_SLOT; old.len()];
        for (j, s) in old
            .into_iter()
            .enumerate()
            .filter(|(_, s)| s.pos != POS_EMPTY)
        {
            let mut i = self.home(s.key);
            while self.slots[i].pos != POS_EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
            map[j] = i as u32;
        }
        renumber(&map);
    }
}

/// A node of an [`Arena`]: the key plus two small per-policy fields.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub key: u64,
    pub prev: u32,
    pub next: u32,
    /// Which list the node is on (policy-defined).
    pub tag: u8,
    /// A per-policy counter: a reference bit, a frequency, a bucket index.
    pub aux: u32,
}

/// A plain node store with its own lists, for LIRS, the one policy that keeps a key on up to
/// three lists at once (its stack S, its queue Q and the non-resident order), so a key cannot be
/// one table slot. Freed nodes are recycled through a free list.
#[derive(Clone, Debug, Default)]
pub struct Arena {
    nodes: Vec<Node>,
    free: Vec<u32>,
}

impl Arena {
    pub fn with_capacity(n: usize) -> Arena {
        Arena {
            nodes: Vec::with_capacity(n),
            free: Vec::new(),
        }
    }

    /// A fresh, unlinked node.
    #[inline]
    pub fn alloc(&mut self, key: u64, tag: u8, aux: u32) -> u32 {
        let node = Node {
            key,
            prev: NIL,
            next: NIL,
            tag,
            aux,
        };
        if let Some(i) = self.free.pop() {
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    /// Returns an unlinked node to the free list.
    #[inline]
    pub fn release(&mut self, i: u32) {
        self.free.push(i);
    }

    #[inline]
    pub fn get(&self, i: u32) -> &Node {
        &self.nodes[i as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Node {
        &mut self.nodes[i as usize]
    }

    /// Links node `i` at the head (newest end) of `list`.
    #[inline]
    pub fn push_head(&mut self, list: &mut List, i: u32) {
        let old = list.head;
        {
            let n = &mut self.nodes[i as usize];
            n.prev = NIL;
            n.next = old;
        }
        if old == NIL {
            list.tail = i;
        } else {
            self.nodes[old as usize].prev = i;
        }
        list.head = i;
        list.len += 1;
    }

    /// Links node `i` at the tail (oldest end) of `list`.
    #[inline]
    pub fn push_tail(&mut self, list: &mut List, i: u32) {
        let old = list.tail;
        {
            let n = &mut self.nodes[i as usize];
            n.next = NIL;
            n.prev = old;
        }
        if old == NIL {
            list.head = i;
        } else {
            self.nodes[old as usize].next = i;
        }
        list.tail = i;
        list.len += 1;
    }

    /// Unlinks node `i` from `list` (the node must be on it).
    #[inline]
    pub fn unlink(&mut self, list: &mut List, i: u32) {
        let Node { prev, next, .. } = self.nodes[i as usize];
        if prev == NIL {
            list.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            list.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        list.len -= 1;
    }

    /// Moves node `i`, already on `list`, to its head.
    #[inline]
    pub fn move_to_head(&mut self, list: &mut List, i: u32) {
        if list.head != i {
            self.unlink(list, i);
            self.push_head(list, i);
        }
    }

    /// Unlinks and returns the tail (oldest) node of `list`.
    #[inline]
    pub fn pop_tail(&mut self, list: &mut List) -> Option<u32> {
        let t = list.tail;
        if t == NIL {
            return None;
        }
        self.unlink(list, t);
        Some(t)
    }

    /// Heap bytes held, for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + self.free.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, VecDeque};

    fn keys(t: &Table, l: usize) -> Vec<u64> {
        let mut out = Vec::new();
        let mut i = t.list(l).head;
        while i != NIL {
            out.push(t.slot(i).key);
            i = t.slot(i).next;
        }
        out
    }

    #[test]
    fn push_unlink_move_keep_order() {
        let mut t = Table::new(1, 4);
        let ids: Vec<u32> = (0..4).map(|k| t.insert(k, 0, 0)).collect();
        for &i in &ids {
            t.push_head(0, i);
        }
        assert_eq!(keys(&t, 0), vec![3, 2, 1, 0]);
        t.move_to_head(0, ids[0]);
        assert_eq!(keys(&t, 0), vec![0, 3, 2, 1]);
        t.unlink(0, ids[2]);
        assert_eq!(keys(&t, 0), vec![0, 3, 1]);
        assert_eq!(t.pop_tail(0), Some(ids[1]));
        t.push_tail(0, ids[2]);
        assert_eq!(keys(&t, 0), vec![0, 3, 2]);
        assert_eq!(t.list(0).len, 3);
        assert_eq!(t.remove_at(ids[1]), 1);
        assert_eq!(t.find(1), NIL);
        assert_eq!(t.find(3), ids[3]);
    }

    proptest! {
        /// Random inserts, removals and moves over two lists, across many
        /// rehashes, against a map and two deques.
        #[test]
        fn matches_a_map_and_deques(ops in proptest::collection::vec((0u64..300, 0u8..4), 0..4000)) {
            let mut t = Table::new(2, 8);
            let mut model: BTreeMap<u64, usize> = BTreeMap::new();
            let mut lists = [VecDeque::new(), VecDeque::new()];
            for (k, op) in ops {
                let key = k.wrapping_mul(0x1_0000_0001); // sparse keys, some sharing home slots
                let at = t.find(key);
                prop_assert_eq!(at != NIL, model.contains_key(&key));
                match (model.get(&key).copied(), op) {
                    (None, _) => {
                        let l = (k % 2) as usize;
                        let i = t.insert(key, l as u8, 0);
                        t.push_head(l, i);
                        lists[l].push_front(key);
                        model.insert(key, l);
                    }
                    (Some(l), 0) => {
                        t.unlink(l, at);
                        t.remove_at(at);
                        lists[l].retain(|&x| x != key);
                        model.remove(&key);
                    }
                    (Some(l), 1) => {
                        t.move_to_head(l, at);
                        lists[l].retain(|&x| x != key);
                        lists[l].push_front(key);
                    }
                    (Some(l), _) => {
                        if let Some(tail) = t.pop_tail(l) {
                            let old = t.remove_at(tail);
                            prop_assert_eq!(lists[l].pop_back(), Some(old));
                            model.remove(&old);
                        }
                    }
                }
                prop_assert_eq!(t.len(), model.len());
            }
            for (l, want) in lists.iter().enumerate() {
                prop_assert_eq!(keys(&t, l), want.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(t.list(l).len, want.len() as u64);
            }
        }
    }
}
