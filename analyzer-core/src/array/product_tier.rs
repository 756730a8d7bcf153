//! The kernels' own cache models as the array replay's cache tier: `predict --preset dm-cache`
//! replays a trace through [`crate::cache::dmcache`] (Linux 6.1 dm-cache with smq) and
//! `--preset bcache` through [`crate::cache::bcache`], both checked against the kernel in
//! docs/validation.md, instead of the generic approximations.
//!
//! The model decides each bio's hits and misses from the trace's own timing (its policy ticks
//! when tagged bios complete, promotions end one origin trip after the bio that asked for
//! them), not from the replay's predicted timing: the answers are the ones
//! `simulate --preset dm-cache` counts. What the replay times is what the model sends to the
//! origin (the array): missed pieces, promotion copy reads, writebacks, write-through writes.
//! bcache's tier sends the backing device (the array) what bcache does per bio: a read that
//! is not wholly cached reads the bio from it, a write-through or bypassed write writes it;
//! write-back writes stay in the cache, and background writeback writes dirty extents to it at
//! bcache's writeback rate (sent with the bio during which the model wrote them back).

use crate::cache::bcache::{BcacheConfig, BcacheConfigError, BcacheMode, BcacheModel};
use crate::cache::dmcache::{Device, DeviceOp, DmCacheConfig, DmCacheConfigError, DmCacheMode};
use crate::cache::dmcache::{DmCacheModel, DmCacheStatus};
use crate::event::{IoEvent, Op};

use super::cache_tier::{CacheAccess, CacheTier};

/// dm-cache (smq) in front of the array.
pub struct DmCacheTier {
    model: DmCacheModel,
    write_back: bool,
    ops: Vec<DeviceOp>,
    description: String,
}

impl DmCacheTier {
    pub fn new(
        config: &DmCacheConfig,
        description: impl Into<String>,
    ) -> Result<DmCacheTier, DmCacheConfigError> {
        let mut model = DmCacheModel::new(config)?;
        model.log_device_ops();
        Ok(DmCacheTier {
            model,
            write_back: config.mode == DmCacheMode::WriteBack,
            ops: Vec::new(),
            description: description.into(),
        })
    }

    /// Cache blocks in use, in blocks of the cache's block size.
    pub fn occupancy_blocks(&self) -> u64 {
        self.model.resident_blocks()
    }

    /// The counters so far, as `dmsetup status` names them.
    pub fn status(&self) -> &DmCacheStatus {
        self.model.status()
    }
}

impl CacheTier for DmCacheTier {
    fn access(&mut self, r: &IoEvent, backend: &mut Vec<IoEvent>) -> CacheAccess {
        let before = *self.model.status();
        self.model.observe(r);
        self.ops.clear();
        self.model.take_device_ops(&mut self.ops);
        let after = self.model.status();
        let mut cache_write = false;
        for op in &self.ops {
            match op.device {
                Device::Origin => backend.push(IoEvent {
                    time_nanos: r.time_nanos,
                    device: r.device,
                    offset_bytes: op.offset_bytes,
                    len_bytes: u32::try_from(op.len_bytes).unwrap_or(u32::MAX),
                    op: op.op,
                    latency_nanos: None,
                    pid: None,
                }),
                Device::Cache => cache_write |= op.op == Op::Write,
            }
        }
        match r.op {
            // A read is served by the cache devices when none of its pieces missed (a piece
            // waiting for its block's migration is remapped once it ends).
            Op::Read => CacheAccess {
                hit: after.read_misses == before.read_misses,
                writes_cache: cache_write,
            },
            Op::Write => {
                let missed = after.write_misses > before.write_misses;
                CacheAccess {
                    // Write-back absorbs what it hits (and whole blocks it promotes with the
                    // bio); write-through also writes the origin, which the write waits for.
                    hit: self.write_back && !missed,
                    writes_cache: cache_write,
                }
            }
            Op::Discard | Op::Flush => CacheAccess::NO_DATA,
        }
    }

    fn writes_back(&self) -> bool {
        self.write_back
    }

    fn describe(&self) -> String {
        self.description.clone()
    }
}

/// bcache in front of the array (its backing device).
pub struct BcacheTier {
    model: BcacheModel,
    write_back: bool,
    writebacks: Vec<(u64, u64)>,
    description: String,
}

impl BcacheTier {
    pub fn new(
        config: &BcacheConfig,
        description: impl Into<String>,
    ) -> Result<BcacheTier, BcacheConfigError> {
        let mut model = BcacheModel::new(config)?;
        model.log_writebacks();
        Ok(BcacheTier {
            model,
            write_back: config.mode == BcacheMode::WriteBack,
            writebacks: Vec::new(),
            description: description.into(),
        })
    }

    /// Extents the model indexes (its memory grows with them).
    pub fn occupancy_extents(&self) -> u64 {
        self.model.extents()
    }
}

impl CacheTier for BcacheTier {
    fn access(&mut self, r: &IoEvent, backend: &mut Vec<IoEvent>) -> CacheAccess {
        let before = self.model.stats().clone();
        self.model.observe(r);
        // Background writeback the model ran up to this bio: dirty extents written to the
        // backing device (read from the cache devices, which the tier does not time).
        self.writebacks.clear();
        self.model.take_writebacks(&mut self.writebacks);
        for &(start, end) in &self.writebacks {
            let mut at = start;
            while at < end {
                let len = (end - at).min(u64::from(u32::MAX) & !511);
                backend.push(IoEvent {
                    time_nanos: r.time_nanos,
                    device: r.device,
                    offset_bytes: at,
                    len_bytes: len as u32,
                    op: Op::Write,
                    latency_nanos: None,
                    pid: None,
                });
                at += len;
            }
        }
        let after = self.model.stats();
        let to_backing = IoEvent {
            latency_nanos: None,
            pid: None,
            ..*r
        };
        match r.op {
            Op::Read => {
                // `cache_hits` and `cache_bypass_hits`: every sector cached, served from it.
                let hit = after.cache_hits + after.cache_bypass_hits
                    > before.cache_hits + before.cache_bypass_hits;
                if !hit {
                    backend.push(to_backing);
                }
                CacheAccess {
                    hit,
                    writes_cache: after.miss_insert_bytes > before.miss_insert_bytes,
                }
            }
            Op::Write => {
                let dirty = after.writes_dirty > before.writes_dirty;
                let clean = after.writes_clean > before.writes_clean;
                if !dirty {
                    // Write-through (clean), bypassed or write-around: the backing device is
                    // written and the write waits for it.
                    backend.push(to_backing);
                }
                CacheAccess {
                    hit: dirty,
                    writes_cache: dirty || clean,
                }
            }
            Op::Discard | Op::Flush => CacheAccess::NO_DATA,
        }
    }

    fn writes_back(&self) -> bool {
        self.write_back
    }

    fn describe(&self) -> String {
        self.description.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::dmcache::simulate_dm_cache;
    use crate::cache::dmcache::tests::ev;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;

    /// A skewed mix over 32 MiB for three seconds: the hotspot queue ranks the hot blocks
    /// after a second and they get promoted.
    fn trace() -> Vec<IoEvent> {
        let mut v = Vec::new();
        let mut x: u64 = 7;
        for i in 0..6000u64 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let hot = (x >> 33) % 10 < 8;
            let block = if hot { (x >> 40) % 16 } else { (x >> 40) % 512 };
            let op = if (x >> 20) % 10 < 7 {
                Op::Read
            } else {
                Op::Write
            };
            v.push(ev(
                i / 2,
                op,
                block * 64 * KIB + ((x >> 50) % 16) * 4096,
                4096,
            ));
        }
        v
    }

    /// The tier's answers are the model's counts: every read it calls a miss waited on the
    /// origin, the origin ops it hands the array are the model's origin I/O, op for op.
    #[test]
    fn the_tier_sends_the_array_what_the_model_sends_the_origin() {
        for mode in [DmCacheMode::WriteBack, DmCacheMode::WriteThrough] {
            let config = DmCacheConfig {
                mode,
                ..DmCacheConfig::new(64 * KIB, 4 * MIB, 32 * MIB)
            };
            let events = trace();
            let direct = simulate_dm_cache(&config, events.clone()).expect("model");
            let mut tier = DmCacheTier::new(&config, "dm-cache").expect("tier");
            let (mut reads, mut writes, mut read_bytes) = (0u64, 0u64, 0u64);
            let (mut read_hits, mut reads_seen) = (0u64, 0u64);
            let mut backend = Vec::new();
            for e in &events {
                backend.clear();
                let a = tier.access(e, &mut backend);
                if e.op == Op::Read {
                    reads_seen += 1;
                    read_hits += u64::from(a.hit);
                    if !a.hit {
                        assert!(
                            backend.iter().any(|b| b.op == Op::Read),
                            "a miss reads the origin"
                        );
                    }
                }
                if e.op == Op::Write && mode == DmCacheMode::WriteThrough {
                    assert!(!a.hit, "write-through waits for the origin");
                }
                for b in &backend {
                    match b.op {
                        Op::Read => {
                            reads += 1;
                            read_bytes += u64::from(b.len_bytes);
                        }
                        _ => writes += 1,
                    }
                }
            }
            let s = *tier.status();
            // Migrations in flight at the end are completed by finish(), not by the tier.
            assert!(reads <= direct.origin.read_ops && writes <= direct.origin.write_ops);
            assert!(direct.origin.read_ops - reads <= 4 && direct.origin.write_ops - writes <= 4);
            assert!(read_bytes <= direct.origin.read_bytes);
            assert_eq!(
                (s.read_hits, s.read_misses),
                (direct.status.read_hits, direct.status.read_misses)
            );
            assert!(s.promotions > 0 && s.read_hits > 0, "{mode:?}: {s:?}");
            // One-block reads: a read is a hit exactly when its one piece hit.
            assert_eq!(read_hits, s.read_hits, "{mode:?}");
            assert_eq!(reads_seen, s.read_hits + s.read_misses);
        }
    }

    /// bcache's tier answers per bio as its counters do: a read is served by the cache exactly
    /// when bcache counts a (bypass) hit, and the backing device sees every other read and
    /// every write that is not kept dirty.
    #[test]
    fn bcache_tier_follows_the_model_s_counters() {
        for mode in [
            BcacheMode::WriteBack,
            BcacheMode::WriteThrough,
            BcacheMode::WriteAround,
        ] {
            let config = BcacheConfig {
                mode,
                bucket_bytes: 16 * KIB,
                ..BcacheConfig::new(16 * MIB)
            };
            let events = trace();
            let mut tier = BcacheTier::new(&config, "bcache").expect("tier");
            let (mut read_hits, mut backing_reads, mut backing_writes) = (0u64, 0u64, 0u64);
            let mut backend = Vec::new();
            for e in &events {
                backend.clear();
                let a = tier.access(e, &mut backend);
                read_hits += u64::from(e.op == Op::Read && a.hit);
                backing_reads += backend.iter().filter(|b| b.op == Op::Read).count() as u64;
                backing_writes += backend.iter().filter(|b| b.op == Op::Write).count() as u64;
            }
            let s = tier.model.stats();
            assert_eq!(read_hits, s.cache_hits + s.cache_bypass_hits, "{mode:?}");
            assert_eq!(backing_reads, s.reads - read_hits, "{mode:?}");
            assert_eq!(
                backing_writes,
                s.writes - s.writes_dirty + s.writeback_keys,
                "{mode:?}"
            );
            assert!(read_hits > 0, "{mode:?}: {s:?}");
            match mode {
                BcacheMode::WriteBack => assert!(
                    s.writes_dirty > 0 && s.writeback_keys > 0 && backing_writes < s.writes,
                    "{s:?}"
                ),
                _ => assert_eq!(backing_writes, s.writes, "{mode:?}"),
            }
        }
    }
}
