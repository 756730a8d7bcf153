//! Intrusive doubly-linked lists stored in a `Vec` arena with `u32` indices: the building block
//! of every queue and stack the policies keep.
//!
//! One [`Arena`] holds the nodes of several [`List`]s (a policy's T1, T2, B1 and B2, say), so a
//! node moves between lists without allocating. Freed nodes are recycled through a free list:
//! after warm-up no access allocates. Direction: `head` is the newest end (most recently
//! inserted or used), `tail` the oldest; `prev` points towards the head, `next` towards the tail
//! (libCacheSim's convention, which keeps the policies easy to compare with its source).

/// The "no node" index.
pub const NIL: u32 = u32::MAX;

/// One list node: the key plus two small per-policy fields.
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

/// Head, tail and length of one list whose nodes live in an [`Arena`].
#[derive(Clone, Copy, Debug)]
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

/// The node store shared by a policy's lists.
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

    fn keys(a: &Arena, l: &List) -> Vec<u64> {
        let mut out = Vec::new();
        let mut i = l.head;
        while i != NIL {
            out.push(a.get(i).key);
            i = a.get(i).next;
        }
        out
    }

    #[test]
    fn push_unlink_move_keep_order() {
        let mut a = Arena::default();
        let mut l = List::default();
        let ids: Vec<u32> = (0..4).map(|k| a.alloc(k, 0, 0)).collect();
        for &i in &ids {
            a.push_head(&mut l, i);
        }
        assert_eq!(keys(&a, &l), vec![3, 2, 1, 0]);
        a.move_to_head(&mut l, ids[0]);
        assert_eq!(keys(&a, &l), vec![0, 3, 2, 1]);
        a.unlink(&mut l, ids[2]);
        assert_eq!(keys(&a, &l), vec![0, 3, 1]);
        assert_eq!(a.pop_tail(&mut l), Some(ids[1]));
        a.push_tail(&mut l, ids[2]);
        assert_eq!(keys(&a, &l), vec![0, 3, 2]);
        assert_eq!(l.len, 3);
        a.release(ids[1]);
        assert_eq!(a.alloc(9, 0, 0), ids[1]);
    }
}
