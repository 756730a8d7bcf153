//! Named product presets: the policy, line size, write mode and admission rules that
//! approximate a real SSD-cache product, with the sources they come from and the assumptions
//! that fill the gaps. docs/cache.md repeats them for users.
//!
//! These are models, not replicas: each preset names the one or two mechanisms that dominate a
//! product's hit ratio and back-end load (what it admits, how it writes) and maps its eviction to
//! the closest policy here.

use super::admission::Admission;
use super::sim::SimConfig;
use super::{PolicyKind, WriteMode};

/// A named product model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// `--preset` name.
    pub name: &'static str,
    pub title: &'static str,
    pub policy: PolicyKind,
    pub line_bytes: u64,
    pub mode: WriteMode,
    pub admission: Admission,
    pub sequential_cutoff_bytes: Option<u64>,
    /// Where the parameters come from.
    pub sources: &'static [&'static str],
    /// What the model assumes where the sources are silent or the product is more complex.
    pub assumptions: &'static str,
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

impl Preset {
    pub const ALL: [Preset; 6] = [
        Preset {
            name: "dm-cache-approx",
            title: "Linux dm-cache / lvmcache with smq, approximated (the product model is simulate --preset dm-cache)",
            policy: PolicyKind::Slru,
            line_bytes: 64 * KIB,
            mode: WriteMode::WriteBack,
            admission: Admission::Smq,
            sequential_cutoff_bytes: None,
            sources: &[
                "Linux Documentation/admin-guide/device-mapper/cache-policies.rst (smq: hotspot queue, promotion of hot blocks, writeback default)",
                "Linux Documentation/admin-guide/device-mapper/cache.rst (cache block size, writeback/writethrough/passthrough)",
                "lvmcache(7): default chunk size 64 KiB, cachemode writethrough unless set (this preset uses writeback, dm-cache's own default)",
            ],
            assumptions: "smq's multiqueue of 64 levels is approximated by a 4-segment SLRU; its hotspot queue by 16-line regions whose decayed access count must reach 4 before a missed block is promoted once the cache is full; free cache blocks are used first.",
        },
        Preset {
            name: "bcache-approx",
            title: "Linux bcache with default settings, approximated (the product model is simulate --preset bcache)",
            policy: PolicyKind::Lru,
            line_bytes: 4 * KIB,
            mode: WriteMode::WriteThrough,
            admission: Admission::Always,
            sequential_cutoff_bytes: Some(4 * MIB),
            sources: &[
                "Linux Documentation/admin-guide/bcache.rst: writeback off by default (writethrough); sequential_cutoff 4.0M by default, sequential I/O detected per stream; cache_replacement_policy lru by default",
            ],
            assumptions: "bcache caches extents, not fixed lines; 4 KiB lines model that granularity. Its per-task average-size bypass and congestion-based bypass are not modelled.",
        },
        Preset {
            name: "opencas",
            title: "Open CAS Linux (default settings)",
            policy: PolicyKind::Lru,
            line_bytes: 4 * KIB,
            mode: WriteMode::WriteThrough,
            admission: Admission::Always,
            sequential_cutoff_bytes: Some(MIB),
            sources: &[
                "Open CAS Linux documentation: cache mode wt by default, cache line size 4 KiB by default (4-64 KiB), LRU eviction, promotion policy 'always' by default",
                "Open CAS sequential cutoff: policy 'full', threshold 1 MiB by default",
            ],
            assumptions: "The 'full' sequential cutoff policy only applies when the cache is full in Open CAS; here it always applies.",
        },
        Preset {
            name: "opencas-nhit",
            title: "Open CAS Linux with the nhit promotion policy",
            policy: PolicyKind::Lru,
            line_bytes: 4 * KIB,
            mode: WriteMode::WriteThrough,
            admission: Admission::NHit { n: 3 },
            sequential_cutoff_bytes: Some(MIB),
            sources: &[
                "Open CAS OCF source, promotion/nhit/nhit.h and nhit.c: insertion threshold 3 (OCF_NHIT_THRESHOLD_DEFAULT), trigger 80% occupancy (OCF_NHIT_TRIGGER_DEFAULT), hash of 2 entries per cache line, decided per request",
            ],
            assumptions: "Open CAS tracks recently seen core lines in a fixed hash; here a direct-mapped table of at least two entries per cache line.",
        },
        Preset {
            name: "cachecade1",
            title: "LSI MegaRAID CacheCade 1.0 (read-only SSD cache)",
            policy: PolicyKind::Lru,
            line_bytes: 64 * KIB,
            mode: WriteMode::ReadOnly,
            admission: Admission::NHit { n: 2 },
            sequential_cutoff_bytes: None,
            sources: &[
                "LSI MegaRAID CacheCade 1.0 product brief: read-only SSD caching of frequently read data (hot-spot read cache)",
            ],
            assumptions: "LSI does not publish the cache window size or promotion rule; 64 KiB lines and promotion on the second read within the tracking window are assumptions, as is LRU replacement.",
        },
        Preset {
            name: "cachecade2",
            title: "LSI CacheCade Pro 2.0 / HPE Smart Cache (read and write)",
            policy: PolicyKind::Lru,
            line_bytes: 64 * KIB,
            mode: WriteMode::WriteBack,
            admission: Admission::NHit { n: 2 },
            sequential_cutoff_bytes: None,
            sources: &[
                "LSI MegaRAID CacheCade Pro 2.0 product brief: read and write SSD caching",
                "HPE Smart Array SR SmartCache user guide: write-back or write-through caching of hot data on SSD",
            ],
            assumptions: "Write-back is modelled (HPE also offers write-through: use --mode wt). Cache line size (64 KiB) and promotion on the second access are assumptions; the vendors do not publish them.",
        },
    ];

    /// The preset `name` selects. The product names `dm-cache` and `bcache` select the
    /// approximations here: where a product model can run (`simulate`, Python's `simulate`), its
    /// host asks [`crate::job::simulate::model::KernelModel::from_preset`] first, so these names
    /// reach this function only from the jobs that need a generic cache (the array replay's
    /// cache tier, the web app's Cache view and its curves), whose stated assumptions then name
    /// the approximation.
    pub fn from_name(name: &str) -> Option<Preset> {
        let n = name.trim().to_ascii_lowercase().replace('_', "-");
        let n = match n.as_str() {
            "dm-cache" | "dmcache" => "dm-cache-approx",
            "bcache" => "bcache-approx",
            other => other,
        };
        Preset::ALL
            .into_iter()
            .find(|p| p.name == n || p.name.replace('-', "") == n.replace('-', ""))
    }

    /// The preset's configuration for a cache of `capacity_lines` lines of the preset's size.
    pub fn config(&self, capacity_lines: u64) -> SimConfig {
        SimConfig {
            mode: self.mode,
            admission: self.admission,
            sequential_cutoff_bytes: self.sequential_cutoff_bytes,
            ..SimConfig::new(self.policy, capacity_lines, self.line_bytes)
        }
    }
}

/// A cache as a user describes it: a product preset (or none), then explicit settings that
/// override the preset's. The one place where `blocksight simulate --preset P --policy ...
/// --line-size ... --mode ... --admission ...` and the web app's Cache view controls become a
/// [`SimConfig`], so both give the same simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheChoice {
    pub preset: Option<Preset>,
    pub policy: Option<PolicyKind>,
    pub line_bytes: Option<u64>,
    pub mode: Option<WriteMode>,
    /// Replaces the preset's admission rule; a preset's extra sequential cutoff
    /// ([`Preset::sequential_cutoff_bytes`]) stays, as with `--preset opencas-nhit --admission smq`.
    pub admission: Option<Admission>,
}

impl CacheChoice {
    /// The preset's settings (without one: lru, 4 KiB lines, write-through, every miss
    /// admitted), each overridden by the explicit setting when there is one. The capacity is
    /// `capacity_lines` lines of the resulting line size; the result is not validated.
    pub fn config(&self, capacity_lines: u64) -> SimConfig {
        let mut config = match self.preset {
            Some(p) => p.config(capacity_lines),
            None => SimConfig::new(PolicyKind::Lru, capacity_lines, 4096),
        };
        if let Some(p) = self.policy {
            config.policy = p;
        }
        if let Some(l) = self.line_bytes {
            config.line_bytes = l;
        }
        if let Some(m) = self.mode {
            config.mode = m;
        }
        if let Some(a) = self.admission {
            config.admission = a;
        }
        config
    }

    /// The line size [`CacheChoice::config`] will use.
    pub fn effective_line_bytes(&self) -> u64 {
        self.line_bytes
            .or(self.preset.map(|p| p.line_bytes))
            .unwrap_or(4096)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_settings_override_the_preset() {
        let bcache = Preset::from_name("bcache");
        let plain = CacheChoice {
            preset: bcache,
            ..CacheChoice::default()
        };
        assert_eq!(plain.config(10), Preset::ALL[1].config(10));
        let c = CacheChoice {
            preset: Preset::from_name("opencas-nhit"),
            mode: Some(WriteMode::WriteBack),
            admission: Some(Admission::Smq),
            line_bytes: Some(65536),
            ..CacheChoice::default()
        }
        .config(7);
        assert_eq!(c.policy, PolicyKind::Lru);
        assert_eq!(c.mode, WriteMode::WriteBack);
        assert_eq!(c.admission, Admission::Smq);
        // The preset's sequential cutoff stays under an explicit admission rule.
        assert_eq!(c.sequential_cutoff_bytes, Some(MIB));
        assert_eq!((c.capacity_lines, c.line_bytes), (7, 65536));
        let none = CacheChoice::default().config(3);
        assert_eq!(none, SimConfig::new(PolicyKind::Lru, 3, 4096));
        assert_eq!(CacheChoice::default().effective_line_bytes(), 4096);
        assert_eq!(
            CacheChoice {
                preset: Preset::from_name("dm-cache"),
                ..CacheChoice::default()
            }
            .effective_line_bytes(),
            64 * KIB
        );
    }

    #[test]
    fn presets_are_valid_and_findable() {
        for p in Preset::ALL {
            assert_eq!(Preset::from_name(p.name), Some(p));
            assert!(p.config(1000).validate().is_ok());
            assert!(!p.sources.is_empty());
        }
        assert_eq!(
            Preset::from_name("OpenCAS").map(|p| p.name),
            Some("opencas")
        );
        // The product names reach the approximations only where no product model runs.
        assert_eq!(
            Preset::from_name("dm-cache").map(|p| p.name),
            Some("dm-cache-approx")
        );
        assert_eq!(
            Preset::from_name("BCACHE").map(|p| p.name),
            Some("bcache-approx")
        );
    }
}
