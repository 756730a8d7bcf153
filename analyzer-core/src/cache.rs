//! SSD-cache simulation: what a cache of a given size, eviction policy, admission rule and write
//! mode would do with a trace — hit ratios, and the reads and writes the disks behind it see.
//!
//! Requests are split into cache lines ([`IoEvent::block_range`]); the hit/miss/evict loop,
//! write-mode handling and statistics live once, in [`Simulator`] (`cache/sim.rs`). Eviction
//! policies implement the small [`policy::Policy`] trait, one file each under `cache/policy/`;
//! admission rules (n-hit, smq-style hot spots, sequential cutoff) are in `cache/admission.rs`
//! and product presets in `cache/preset.rs`. Belady's MIN needs the future: `cache/future.rs`
//! builds it in a first pass ([`NextUse`]).
//!
//! Invariants: memory is bounded by the cache's capacity (plus ghost lists of at most the
//! capacity, the admission tables and a fixed number of time bins), never by the trace length
//! — except Belady's [`NextUse`], which is 8 bytes per line access by nature. No access
//! allocates once the cache is warm.
//!
//! [`IoEvent::block_range`]: crate::event::IoEvent::block_range

use serde::{Deserialize, Serialize};

pub mod admission;
pub mod bcache;
pub mod dmcache;
pub mod future;
pub mod list;
pub(crate) mod logs;
pub mod policy;
pub mod preset;
pub mod sampled;
pub mod sim;

pub use admission::Admission;
pub use future::{NextUse, NextUseBuilder};
pub use policy::Policy;
pub use preset::{CacheChoice, Preset};
pub use sampled::SampledSimulator;
pub use sim::{SimConfig, SimResult, Simulator};

/// The eviction policies the simulator implements: the registry behind `--policy` and the web
/// app's picker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyKind {
    Lru,
    Fifo,
    Clock,
    Lfu,
    Slru,
    #[serde(rename = "2q", alias = "twoq")]
    TwoQ,
    Arc,
    Lirs,
    Sieve,
    S3Fifo,
    Belady,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 11] = [
        PolicyKind::Lru,
        PolicyKind::Fifo,
        PolicyKind::Clock,
        PolicyKind::Lfu,
        PolicyKind::Slru,
        PolicyKind::TwoQ,
        PolicyKind::Arc,
        PolicyKind::Lirs,
        PolicyKind::Sieve,
        PolicyKind::S3Fifo,
        PolicyKind::Belady,
    ];

    /// Stable lower-case name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Lru => "lru",
            PolicyKind::Fifo => "fifo",
            PolicyKind::Clock => "clock",
            PolicyKind::Lfu => "lfu",
            PolicyKind::Slru => "slru",
            PolicyKind::TwoQ => "2q",
            PolicyKind::Arc => "arc",
            PolicyKind::Lirs => "lirs",
            PolicyKind::Sieve => "sieve",
            PolicyKind::S3Fifo => "s3fifo",
            PolicyKind::Belady => "belady",
        }
    }

    /// Parses [`PolicyKind::name`], case-insensitively, plus a few common spellings
    /// (`twoq`, `s3-fifo`, `opt`, `min`).
    pub fn from_name(name: &str) -> Option<PolicyKind> {
        let n = name.trim().to_ascii_lowercase().replace(['-', '_'], "");
        Some(match n.as_str() {
            "lru" => PolicyKind::Lru,
            "fifo" => PolicyKind::Fifo,
            "clock" => PolicyKind::Clock,
            "lfu" => PolicyKind::Lfu,
            "slru" => PolicyKind::Slru,
            "2q" | "twoq" => PolicyKind::TwoQ,
            "arc" => PolicyKind::Arc,
            "lirs" => PolicyKind::Lirs,
            "sieve" => PolicyKind::Sieve,
            "s3fifo" => PolicyKind::S3Fifo,
            "belady" | "opt" | "min" => PolicyKind::Belady,
            _ => return None,
        })
    }

    /// One line for pickers and `--help`.
    pub fn description(self) -> &'static str {
        match self {
            PolicyKind::Lru => "least recently used",
            PolicyKind::Fifo => "first in, first out",
            PolicyKind::Clock => "second chance with a reference bit",
            PolicyKind::Lfu => "least frequently used (in-cache counts, FIFO ties)",
            PolicyKind::Slru => "segmented LRU, four segments",
            PolicyKind::TwoQ => "2Q: FIFO probation, ghost FIFO, main LRU",
            PolicyKind::Arc => "adaptive replacement cache",
            PolicyKind::Lirs => "low inter-reference recency set",
            PolicyKind::Sieve => "SIEVE: FIFO with a visited bit and a moving hand",
            PolicyKind::S3Fifo => "S3-FIFO: small, main and ghost FIFOs",
            PolicyKind::Belady => "Belady's MIN, offline optimal (upper bound)",
        }
    }

    /// Whether the policy needs the future ([`NextUse`]) and hence two passes over the trace.
    pub fn needs_future(self) -> bool {
        self == PolicyKind::Belady
    }
}

/// How writes are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteMode {
    /// Only reads are cached; a write invalidates the lines it touches and goes to the disks.
    ReadOnly,
    /// Writes update (and on a miss, allocate) cache lines and always go to the disks too.
    WriteThrough,
    /// Writes go to the disks; lines already cached are updated in place, misses do not allocate.
    WriteAround,
    /// Writes are absorbed by the cache (lines become dirty); the disks see a write only when a
    /// dirty line is evicted or flushed at the end.
    WriteBack,
}

impl WriteMode {
    pub const ALL: [WriteMode; 4] = [
        WriteMode::ReadOnly,
        WriteMode::WriteThrough,
        WriteMode::WriteAround,
        WriteMode::WriteBack,
    ];

    /// Short name used by `--mode`: `ro`, `wt`, `wa`, `wb`.
    pub fn name(self) -> &'static str {
        match self {
            WriteMode::ReadOnly => "ro",
            WriteMode::WriteThrough => "wt",
            WriteMode::WriteAround => "wa",
            WriteMode::WriteBack => "wb",
        }
    }

    pub fn from_name(name: &str) -> Option<WriteMode> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "ro" | "read-only" | "readonly" => WriteMode::ReadOnly,
            "wt" | "write-through" | "writethrough" => WriteMode::WriteThrough,
            "wa" | "write-around" | "writearound" => WriteMode::WriteAround,
            "wb" | "write-back" | "writeback" => WriteMode::WriteBack,
            _ => return None,
        })
    }

    pub fn description(self) -> &'static str {
        match self {
            WriteMode::ReadOnly => "read-only (writes invalidate)",
            WriteMode::WriteThrough => "write-through",
            WriteMode::WriteAround => "write-around",
            WriteMode::WriteBack => "write-back",
        }
    }
}

/// A simulator configuration the engine cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("the cache needs at least one line (capacity 0)")]
    ZeroCapacity,
    #[error("a cache of {0} lines is beyond the simulator's limit of 2^31 lines; use a larger line size")]
    TooLarge(u64),
    #[error("line size {0} bytes is not a power of two between 4 KiB and 1 MiB")]
    LineSize(u64),
    #[error("time_bins must be at least 1")]
    TimeBins,
    #[error("the n-hit threshold must be at least 1")]
    NHit,
    #[error(
        "Belady needs the future: build a NextUse in a first pass and use Simulator::with_future"
    )]
    NeedsFuture,
    #[error("unknown {what} {name:?}; expected one of: {expected}")]
    UnknownName {
        what: &'static str,
        name: String,
        expected: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in PolicyKind::ALL {
            assert_eq!(PolicyKind::from_name(p.name()), Some(p));
        }
        for m in WriteMode::ALL {
            assert_eq!(WriteMode::from_name(m.name()), Some(m));
        }
        assert_eq!(PolicyKind::from_name("S3-FIFO"), Some(PolicyKind::S3Fifo));
        assert_eq!(PolicyKind::from_name("nope"), None);
        // JSON uses the same names as the command line.
        for p in PolicyKind::ALL {
            assert_eq!(
                serde_json::to_string(&p).ok(),
                Some(format!("\"{}\"", p.name()))
            );
        }
    }
}
