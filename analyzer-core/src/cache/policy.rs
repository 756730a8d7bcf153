//! The eviction-policy trait and the factory that builds a policy from its [`PolicyKind`].
//!
//! A policy only decides what stays: the simulator owns request splitting, write modes,
//! admission and statistics. Keys are opaque `u64` line keys ([`crate::hash::block_key`]).
//! Each policy lives in its own file under `cache/policy/`, with a doc comment citing its paper,
//! saying how it relates to libCacheSim's implementation and when it is a poor fit.

use super::{ConfigError, PolicyKind};

/// Lines whose bookkeeping a policy allocates up front; beyond this its tables grow as lines
/// arrive. A large cache over a small footprint then costs memory for the lines it holds, not
/// for its capacity (a 64 GiB cache of 4 KiB lines would otherwise allocate about 1 GB at once).
pub(crate) const PREALLOC_LINES: u64 = 1 << 18;

pub mod arc;
pub mod belady;
pub mod clock;
pub mod fifo;
pub mod lfu;
pub mod lirs;
pub mod lru;
pub mod s3fifo;
pub mod sieve;
pub mod slru;
pub mod twoq;

#[cfg(test)]
mod reference;

/// What every eviction policy implements. Capacity is counted in lines.
pub trait Policy {
    fn kind(&self) -> PolicyKind;
    fn capacity(&self) -> u64;
    /// Resident lines (ghost entries do not count).
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether `key` is resident, without touching any state.
    fn contains(&self, key: u64) -> bool;
    /// Looks `key` up as a request would. On a hit, updates the policy's state and returns true.
    /// On a miss returns false; the caller then decides (admission) whether to [`insert`]. A
    /// policy may evict other lines even on a hit (SLRU's cascading demotion): those keys are
    /// appended to `evicted`. `now` is the index of this line access (Belady reads the future
    /// with it; other policies ignore it).
    ///
    /// [`insert`]: Policy::insert
    fn access(&mut self, key: u64, now: u64, evicted: &mut Vec<u64>) -> bool;
    /// Makes room and inserts `key` after a miss at line access `now`, appending evicted keys
    /// to `evicted`. Returns whether `key` is resident afterwards.
    fn insert(&mut self, key: u64, now: u64, evicted: &mut Vec<u64>) -> bool;
    /// Drops `key` (invalidation: a write in read-only mode, a discard). Returns whether it was
    /// resident.
    fn remove(&mut self, key: u64) -> bool;
    /// Warms the CPU cache for an upcoming access to `key` (the simulator knows a request's
    /// lines before it runs them). Changes no state; the default does nothing.
    #[inline]
    fn prefetch(&self, _key: u64) {}
    /// Heap bytes held, for memory reports.
    fn heap_bytes(&self) -> usize;
}

/// Builds a policy of `capacity_lines`. Belady takes the future as `next_use`
/// ([`super::NextUse`]); every other policy ignores it.
pub fn new_policy(
    kind: PolicyKind,
    capacity_lines: u64,
    next_use: Option<Vec<u64>>,
) -> Result<Box<dyn Policy>, ConfigError> {
    if capacity_lines == 0 {
        return Err(ConfigError::ZeroCapacity);
    }
    if capacity_lines > (1 << 31) {
        return Err(ConfigError::TooLarge(capacity_lines));
    }
    Ok(match kind {
        PolicyKind::Lru => Box::new(lru::Lru::new(capacity_lines)),
        PolicyKind::Fifo => Box::new(fifo::Fifo::new(capacity_lines)),
        PolicyKind::Clock => Box::new(clock::Clock::new(capacity_lines, 1)),
        PolicyKind::Lfu => Box::new(lfu::Lfu::new(capacity_lines)),
        PolicyKind::Slru => Box::new(slru::Slru::new(capacity_lines)),
        PolicyKind::TwoQ => Box::new(twoq::TwoQ::new(capacity_lines)),
        PolicyKind::Arc => Box::new(arc::Arc::new(capacity_lines)),
        PolicyKind::Lirs => Box::new(lirs::Lirs::new(capacity_lines)),
        PolicyKind::Sieve => Box::new(sieve::Sieve::new(capacity_lines)),
        PolicyKind::S3Fifo => Box::new(s3fifo::S3Fifo::new(capacity_lines)),
        PolicyKind::Belady => Box::new(belady::Belady::new(
            capacity_lines,
            next_use.ok_or(ConfigError::NeedsFuture)?,
        )),
    })
}

/// Runs `keys` through a fresh policy (every miss inserted) and returns the hit count: the
/// same experiment as libCacheSim's `cache->get` loop with unit-size objects. Used by tests and
/// the agreement fixtures.
pub fn count_hits(kind: PolicyKind, capacity_lines: u64, keys: &[u64]) -> Result<u64, ConfigError> {
    let next_use = kind
        .needs_future()
        .then(|| super::future::next_use_of_keys(keys));
    let mut p = new_policy(kind, capacity_lines, next_use)?;
    let mut evicted = Vec::new();
    let mut hits = 0;
    for (now, &k) in keys.iter().enumerate() {
        evicted.clear();
        if p.access(k, now as u64, &mut evicted) {
            hits += 1;
        } else {
            p.insert(k, now as u64, &mut evicted);
        }
    }
    Ok(hits)
}
