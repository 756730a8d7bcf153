//! A model of Linux bcache (a cached backing device) as kernel 6.1 behaves, written from
//! `Documentation/admin-guide/bcache.rst` and from how `drivers/md/bcache/` (request.c,
//! alloc.c, btree.c, super.c) behaves. It counts what `/sys/block/bcacheN/bcache/stats_total/`
//! counts, per bio:
//!
//! - **Bypass decision** (`check_should_bypass`). A bio bypasses the cache when the cache is more
//!   than 95% in use (`CUTOFF_CACHE_ADD`; the dirty and metadata buckets the last GC counted plus
//!   every bucket allocated since, as `bch_bucket_alloc` takes each off the available count), when it
//!   is a discard, when it is a write in write-around mode, or when it belongs to a sequential
//!   stream: 128 recent streams (`RECENT_IO = 1 << RECENT_IO_BITS`, bits 7, in bcache.h) are
//!   remembered by the sector they end at, for 5 s; a
//!   bio starting where one ended continues it, any other bio takes the least recently used
//!   entry and starts a new stream, first folding the task's last stream length into its
//!   average (`ewma_add(avg, seq, 8, 0)`: `avg = (7·avg + seq) / 8`). The bio bypasses when
//!   `max(stream length, task average)` reaches `sequential_cutoff` (0 turns detection off).
//!   Congestion bypass is off (the lab sets both congestion thresholds to 0, see
//!   docs/validation.md).
//! - **Reads.** A read is a hit when every sector is in the cache, otherwise a miss (a partial
//!   hit counts as a miss); bypassed reads are still looked up, served from the cache where they
//!   hit, and counted as `cache_bypass_hits` / `cache_bypass_misses`. A non-bypassed miss inserts
//!   the first hole of the bio only (at most 1 MiB, `BIO_MAX_VECS` pages), clean; later holes of
//!   the same bio are read from the backing device and not inserted. 6.1 has no readahead.
//! - **Writes** are not counted in `stats_total`. A bypassed write invalidates the cached range
//!   (`bch_data_invalidate`) and goes to the backing device; write-back writes (O_DIRECT writes
//!   are `REQ_SYNC`) are inserted dirty while the cache is at most 70% in use
//!   (`bch_cutoff_writeback_sync`), otherwise, and in write-through, inserted clean.
//! - **Space.** The cache is `nbuckets` buckets (`bucket_size`, 512 KiB by default in
//!   make-bcache); bucket 0 holds the superblock. Data is appended to one open bucket per
//!   writing task (`write_point`), which is pinned until full. The allocator keeps
//!   `8 + prio + 2·free` buckets invalidated in its free lists (`free = nbuckets rounded up to a
//!   power of two / 1024`: the btree, prio, moving-GC and general reserves) plus `free_inc`
//!   (`4·free`), which it refills a batch at a time once empty; journal
//!   (`clamp(nbuckets / 128, 2, 256)`), prio (2 sets), uuid and btree-node buckets hold
//!   metadata. When buckets are needed the `free_inc` batch with the lowest
//!   `(prio − min_prio + (32768 − min_prio)/8) · sectors_used` among clean, unpinned buckets is
//!   invalidated (their data is gone); `prio` is reset to 32768 when the bucket is allocated or
//!   read from and drops by one every `cache sectors / 1024` sectors of non-bypassed I/O, and
//!   `sectors_used` is the bucket size from allocation until garbage collection recounts the
//!   live sectors (GC runs after every `cache sectors / 16` inserted sectors). Buckets left
//!   empty by overwrites therefore go first, then the least recently used.
//! - **Allocation timing** (with `metadata_write_nanos`, the cache device's latency for one
//!   synchronous metadata write). Data buckets come from `RESERVE_NONE` (`free` buckets, 2 for
//!   2,048 buckets); the allocator thread refills it from `free_inc`, and once `free_inc` is
//!   empty it invalidates a new batch and may hand it out only after writing the batch's gens
//!   (a prio bucket, taken from `RESERVE_NONE` first) and journalling that write: two
//!   synchronous writes. A read-miss insertion or a write-through write that finds
//!   `RESERVE_NONE` empty meanwhile does not wait (`bcache_alloc_fail`): the miss is not
//!   inserted, the write's rest is invalidated; write-back writes wait. Without the latency
//!   buckets are always ready. The allocator thread's own scheduling delay is not modelled
//!   (docs/validation.md: under the lab's TCG it, not the device, causes most failures).
//! - **Miss collisions.** A read miss puts a check key over the range it will insert
//!   (`bch_btree_insert_check_key`, a random pointer) and inserts with it as the replace key
//!   once the backing read completes (the bio's latency when the trace has completions; with
//!   `queue_depth`, after the task's next `qd` bios; else at once). A write to the range, or a
//!   later miss over it (its own check key), in between makes the insertion collide
//!   (`cache_miss_collisions`): it is dropped.
//! - **Dirty data** stays in the cache: its buckets cannot be invalidated until background
//!   writeback (write-back mode; [`writeback`]: the thread, its rate controller towards
//!   `writeback_percent` of the cache, the maximum rate after about 30 s without a bio) has
//!   copied it to the backing device and marked it clean, without removing it.
//!
//! Memory is bounded by the cache's size (one entry per cached extent), never by the trace.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, Op};

pub mod congestion;
pub mod writeback;

use congestion::Congestion;
use writeback::Writeback;

/// `writeback_percent`'s default: the share of the cache the writeback rate aims to keep dirty.
pub const DEFAULT_WRITEBACK_PERCENT: u64 = 10;

fn default_writeback_percent() -> u64 {
    DEFAULT_WRITEBACK_PERCENT
}

/// `sequential_cutoff`'s default (bcache.rst: "defaults to 4.0M").
pub const DEFAULT_SEQUENTIAL_CUTOFF_BYTES: u64 = 4 << 20;
/// make-bcache's default bucket size (bcache-tools: 1024 sectors).
pub const DEFAULT_BUCKET_BYTES: u64 = 512 << 10;
/// `RECENT_IO` (`1 << RECENT_IO_BITS`, 7 in `bcache.h`): streams the sequential detector
/// remembers. With 64, the lab's two-job mix lost the sequential job's stream to the random
/// job's bios and bypassed 296 fewer bios than the kernel; with 128 every bypass decision
/// matches the kernel's `bcache_bypass_sequential` tracepoint.
pub const RECENT_IO: usize = 128;
/// A stream is forgotten this long after its last bio (`msecs_to_jiffies(5000)`).
pub const STREAM_TIMEOUT_NANOS: u64 = 5_000_000_000;
/// `CUTOFF_CACHE_ADD`: above this percentage in use every bio bypasses.
pub const CUTOFF_CACHE_ADD: u64 = 95;
/// `bch_cutoff_writeback_sync`: above this percentage in use writes are not written back.
pub const CUTOFF_WRITEBACK_SYNC: u64 = 70;
/// `INITIAL_PRIO`: a bucket's priority when allocated or read from.
pub const INITIAL_PRIO: u64 = 32768;
/// `MAX_OPEN_BUCKETS`: open data buckets (write points).
pub const MAX_OPEN_BUCKETS: usize = 128;
/// Largest insertion of one read miss: `BIO_MAX_VECS` (256) pages of 4 KiB, in sectors.
pub const MAX_MISS_INSERT_SECTORS: u64 = 256 * 8;
/// A btree node is at most 256 KiB (`BTREE_MAX_PAGES`), one per bucket, and holds extent keys
/// of 24 bytes (header, offset, one pointer). Nodes split at 80% full into two halves, so they
/// average about ln 2 ≈ 69% full under random insertion (Yao, "On random 2-3 trees", 1978).
const BTREE_NODE_BYTES: u64 = 256 << 10;
const KEY_BYTES: u64 = 24;
const BTREE_FILL: f64 = std::f64::consts::LN_2;

/// bcache's `cache_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BcacheMode {
    WriteThrough,
    WriteBack,
    WriteAround,
    None,
}

impl BcacheMode {
    /// `wt`/`writethrough`, `wb`/`writeback`, `wa`/`writearound`, `none`.
    pub fn from_name(name: &str) -> Option<BcacheMode> {
        match name
            .trim()
            .to_ascii_lowercase()
            .replace(['-', '_'], "")
            .as_str()
        {
            "wt" | "writethrough" => Some(BcacheMode::WriteThrough),
            "wb" | "writeback" => Some(BcacheMode::WriteBack),
            "wa" | "writearound" => Some(BcacheMode::WriteAround),
            "none" => Some(BcacheMode::None),
            _ => None,
        }
    }
}

/// One bcache device: a backing device and its cache set (one cache device).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BcacheConfig {
    /// Size of the cache device.
    pub cache_bytes: u64,
    /// make-bcache's `--bucket`.
    pub bucket_bytes: u64,
    pub mode: BcacheMode,
    /// `sequential_cutoff`; 0 turns sequential detection off.
    pub sequential_cutoff_bytes: u64,
    /// For traces without completions: the submitting task's queue depth (fio's `iodepth`).
    /// A closed-loop task at depth `qd` submits its next bio when one completes, so a read
    /// miss is taken to complete (and be inserted) after the task's next `qd` bios. `None`:
    /// inserted at once.
    #[serde(default)]
    pub queue_depth: Option<u32>,
    /// The cache device's latency for one synchronous metadata write (a prio/gen bucket, a
    /// journal entry). The allocator thread makes a batch of invalidated buckets usable only
    /// after writing their gens and journalling them, two such writes one after the other
    /// (`bch_prio_write`); meanwhile insertions that do not wait (read misses, write-through
    /// writes) find at most `RESERVE_NONE`'s few buckets and are dropped when it is empty.
    /// `None`: the allocator is never late (a real SSD: a sub-millisecond pair of writes per
    /// batch of megabytes).
    #[serde(default)]
    pub metadata_write_nanos: Option<u64>,
    /// `writeback_percent`: write-back mode's background writeback aims to keep this share of
    /// the cache dirty; 0 writes back at the maximum rate all the time.
    #[serde(default = "default_writeback_percent")]
    pub writeback_percent: u64,
    /// How long before the first bio the backing device was attached to the cache: the
    /// writeback rate is updated every 5 s from then. `None`: 5 s after the first bio first.
    #[serde(default)]
    pub attached_before_nanos: Option<u64>,
    /// `congested_read_threshold_us` and `congested_write_threshold_us` (the cache set's sysfs
    /// files; the kernel's defaults 2,000 and 20,000): a cache-device bio slower than its
    /// direction's threshold makes the set "congested" ([`congestion`]); 0 turns that
    /// direction's accounting off, both 0 the congestion bypass.
    #[serde(default = "default_read_threshold_us")]
    pub congested_read_threshold_us: u64,
    #[serde(default = "default_write_threshold_us")]
    pub congested_write_threshold_us: u64,
    /// The cache device's latency for a data read (a hit); `None`: below the read threshold.
    /// Data writes take `metadata_write_nanos`. (A trace's own bio latencies are not used: a
    /// bio's latency is the cache device's only if the kernel served it from the cache, and a
    /// model that hits where the kernel bypassed would take a backing read's latency for a
    /// cache read; docs/validation.md.)
    #[serde(default)]
    pub cache_read_nanos: Option<u64>,
}

fn default_read_threshold_us() -> u64 {
    congestion::DEFAULT_READ_THRESHOLD_US
}

fn default_write_threshold_us() -> u64 {
    congestion::DEFAULT_WRITE_THRESHOLD_US
}

impl BcacheConfig {
    /// bcache's defaults: write-through, 4 MiB sequential cutoff, 512 KiB buckets.
    pub fn new(cache_bytes: u64) -> BcacheConfig {
        BcacheConfig {
            cache_bytes,
            bucket_bytes: DEFAULT_BUCKET_BYTES,
            mode: BcacheMode::WriteThrough,
            sequential_cutoff_bytes: DEFAULT_SEQUENTIAL_CUTOFF_BYTES,
            queue_depth: None,
            metadata_write_nanos: None,
            writeback_percent: DEFAULT_WRITEBACK_PERCENT,
            attached_before_nanos: None,
            congested_read_threshold_us: congestion::DEFAULT_READ_THRESHOLD_US,
            congested_write_threshold_us: congestion::DEFAULT_WRITE_THRESHOLD_US,
            cache_read_nanos: None,
        }
    }

    /// Buckets of the cache device (`nbuckets`).
    pub fn nbuckets(&self) -> u64 {
        self.cache_bytes / self.bucket_bytes.max(1)
    }

    pub fn validate(&self) -> Result<(), BcacheConfigError> {
        if self.bucket_bytes < 4096 || !self.bucket_bytes.is_power_of_two() {
            return Err(BcacheConfigError::BucketSize {
                bucket_bytes: self.bucket_bytes,
            });
        }
        if self.writeback_percent > 100 {
            return Err(BcacheConfigError::WritebackPercent {
                percent: self.writeback_percent,
            });
        }
        if self.bucket_bytes > MAX_BUCKET_BYTES {
            return Err(BcacheConfigError::BucketTooLarge {
                bucket_bytes: self.bucket_bytes,
            });
        }
        // cache_alloc(): `free = roundup_pow_of_two(nbuckets) >> 10` must not be 0.
        if self.nbuckets() <= 512 {
            return Err(BcacheConfigError::TooFewBuckets {
                nbuckets: self.nbuckets(),
            });
        }
        Ok(())
    }
}

/// The largest bucket the model takes.
pub const MAX_BUCKET_BYTES: u64 = 16 << 20;

/// A bcache set-up the model (or bcache itself) refuses, as [`BcacheConfig::validate`] finds it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BcacheConfigError {
    #[error("bucket size must be a power of two of at least 4 KiB, not {bucket_bytes} bytes")]
    BucketSize { bucket_bytes: u64 },
    #[error("bucket size must be at most 16 MiB, not {bucket_bytes} bytes")]
    BucketTooLarge { bucket_bytes: u64 },
    /// bcache's own refusal (`cache_alloc`).
    #[error(
        "bcache refuses a cache of {nbuckets} buckets (\"nbuckets is too small\"): it needs at \
         least 513; use smaller buckets or a larger cache"
    )]
    TooFewBuckets { nbuckets: u64 },
    #[error("writeback_percent is a percentage (0 to 100), not {percent}")]
    WritebackPercent { percent: u64 },
}

/// What `stats_total/` shows, plus what the model saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BcacheStats {
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub cache_bypass_hits: u64,
    pub cache_bypass_misses: u64,
    /// `bypassed`, in bytes (reads and writes).
    pub bypassed_bytes: u64,
    pub reads: u64,
    pub writes: u64,
    /// Writes inserted dirty / clean / bypassed (invalidating the range).
    pub writes_dirty: u64,
    pub writes_clean: u64,
    pub writes_bypassed: u64,
    /// `cache_miss_collisions`: read-miss insertions dropped because a write to the range
    /// came in while the miss was being read from the backing device.
    pub cache_miss_collisions: u64,
    /// Bytes inserted into the cache by read misses.
    pub miss_insert_bytes: u64,
    /// Buckets invalidated to make room.
    pub invalidated_buckets: u64,
    /// Bucket allocations that found `RESERVE_NONE` empty and did not wait (the kernel's
    /// `bcache_alloc_fail` tracepoint): the read-miss insertion was dropped, or the rest of the
    /// write-through write invalidated. Only with `metadata_write_nanos`.
    #[serde(default)]
    pub alloc_failures: u64,
    pub gc_runs: u64,
    /// Dirty bytes in the cache at the end.
    pub dirty_bytes: u64,
    /// Bytes background writeback copied to the backing device (and read from the cache).
    #[serde(default)]
    pub writeback_bytes: u64,
    /// Dirty keys it wrote back and marked clean.
    #[serde(default)]
    pub writeback_keys: u64,
    /// The writeback rate at the end, sectors per second (`writeback_rate`); `None` in
    /// write-through and write-around, or at the maximum (an idle device).
    #[serde(default)]
    pub writeback_rate_sectors: Option<i64>,
    /// Live cached bytes at the end.
    pub cached_bytes: u64,
    /// `cache_available_percent` at the end: 100 less the share of buckets in use
    /// (`gc_stats.in_use`: those the last garbage collection found holding dirty data or
    /// metadata, plus every bucket allocated since; it turns writes write-through above 70% and
    /// speeds writeback above 50%).
    #[serde(default)]
    pub cache_available_percent: u64,
    /// Bios bypassed as part of a sequential stream (the kernel's `bcache_bypass_sequential`
    /// tracepoint) and because the cache set was congested (`bcache_bypass_congested`).
    #[serde(default)]
    pub bypassed_sequential: u64,
    #[serde(default)]
    pub bypassed_congested: u64,
    /// Cache-device bios slower than their direction's congestion threshold.
    #[serde(default)]
    pub congested_ios: u64,
}

impl BcacheStats {
    /// `cache_hit_ratio`'s definition: hits / (hits + misses), bypassed reads excluded.
    pub fn cache_hit_ratio(&self) -> Option<f64> {
        let d = self.cache_hits + self.cache_misses;
        (d > 0).then(|| self.cache_hits as f64 / d as f64)
    }
    /// Reads served wholly from the cache, bypassed or not, over all reads.
    pub fn read_hit_ratio(&self) -> Option<f64> {
        let d =
            self.cache_hits + self.cache_misses + self.cache_bypass_hits + self.cache_bypass_misses;
        (d > 0).then(|| (self.cache_hits + self.cache_bypass_hits) as f64 / d as f64)
    }
    /// Bypassed reads over all reads.
    pub fn read_bypass_ratio(&self) -> Option<f64> {
        let d =
            self.cache_hits + self.cache_misses + self.cache_bypass_hits + self.cache_bypass_misses;
        (d > 0).then(|| (self.cache_bypass_hits + self.cache_bypass_misses) as f64 / d as f64)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BucketState {
    Free,
    Data,
}

#[derive(Clone, Debug)]
struct Bucket {
    state: BucketState,
    gen: u32,
    /// Live sectors (exact) and live dirty sectors.
    live: u64,
    dirty: u64,
    /// `GC_SECTORS_USED`: the bucket size from allocation until a GC recounts it.
    gc_used: u64,
    /// The rescale tick at which prio was last reset to INITIAL_PRIO.
    touched: u64,
    /// An open bucket being filled (pinned: no decay, no invalidation).
    open: bool,
}

#[derive(Clone, Copy, Debug)]
struct Extent {
    end: u64,
    bucket: u32,
    gen: u32,
    dirty: bool,
}

#[derive(Clone, Copy, Debug)]
struct Stream {
    last: u64,
    sequential: u64,
    expires: u64,
    used: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Task {
    sequential_io: u64,
    sequential_io_avg: u64,
}

#[derive(Clone, Copy, Debug)]
struct OpenBucket {
    bucket: Option<u32>,
    free_sectors: u64,
    used: u64,
}

/// The bcache model; feed it bios with [`BcacheModel::observe`].
pub struct BcacheModel {
    cfg: BcacheConfig,
    bucket_sectors: u64,
    buckets: Vec<Bucket>,
    /// Buckets not available for data (superblock bucket, journal, prio, uuid, reserves).
    fixed_unavailable: u64,
    /// Journal, prio and uuid buckets (metadata counted in `in_use`).
    meta_buckets: u64,
    /// `free_inc`'s size: buckets invalidated per batch.
    free_inc: u64,
    /// Free (invalidated or never used) buckets, lowest index last.
    free_list: Vec<u32>,
    index: BTreeMap<u64, Extent>,
    streams: Vec<Stream>,
    tasks: HashMap<u32, Task>,
    open: HashMap<u32, OpenBucket>,
    clock: u64,
    tick: u64,
    rescale_left: i64,
    rescale_every: i64,
    sectors_to_gc: i64,
    gc_every: i64,
    in_use_percent: u64,
    data_buckets: u64,
    /// Read-miss insertions waiting for their backing read to complete:
    /// (completion time, pid, start, end, collided).
    pending: Vec<(u64, u32, u64, u64, bool)>,
    /// Bios submitted per task (the clock of `queue_depth` completions).
    submitted: HashMap<u32, u64>,
    /// When buckets are ready (with `metadata_write_nanos`).
    timing: Option<AllocTiming>,
    /// Background writeback (write-back mode).
    writeback: Option<Writeback>,
    /// The congestion bypass's state (`c->congested`), fed by the cache device's completions.
    congestion: Congestion,
    /// Live dirty sectors (`bcache_dev_sectors_dirty`).
    dirty_sectors: u64,
    /// Buckets not available: those the last GC found dirty or metadata, plus every bucket
    /// allocated since (`nbuckets - avail_nbuckets`).
    gc_unavailable_buckets: u64,
    /// The extents written back (backing sectors `[start, end)`), kept for a host that replays
    /// them on the backing device ([`BcacheModel::log_writebacks`]).
    writeback_log: Option<Vec<(u64, u64)>>,
    last_time: u64,
    stats: BcacheStats,
}

/// `init_fifo()`'s capacity (util.h): a free list of more than 4 entries holds a power of two
/// less one (`roundup_pow_of_two(size) - 1`), so `free_inc` of `4·free` = 8 holds 7.
fn fifo_size(n: u64) -> u64 {
    if n > 4 {
        n.next_power_of_two() - 1
    } else {
        n
    }
}

/// When the allocator thread (`bch_allocator_thread`, alloc.c) has buckets ready. Data
/// allocations pop `RESERVE_NONE` (`free` buckets, 2 for 2,048 buckets). The thread pushes the
/// buckets of `free_inc` into it as it empties; once `free_inc` is empty it invalidates a new
/// batch (`free_inc`'s size), writes their gens to a prio bucket (`bch_prio_write`, whose bucket
/// comes from `RESERVE_NONE` first, else from `RESERVE_PRIO`, which the next batch refills
/// first) and journals that write; only then may the batch be used. A write-back write waits
/// for a bucket (`bch_alloc_sectors(…, wait = op->writeback)`); a read-miss insertion or a
/// write-through write does not (`bch_bucket_alloc` returns -1, `bcache_alloc_fail`).
#[derive(Clone, Debug)]
struct AllocTiming {
    /// One batch's prio write and journal write, one after the other.
    refill_nanos: u64,
    none_cap: u64,
    batch: u64,
    /// Buckets in `RESERVE_NONE`, and written ones left in `free_inc`.
    none: u64,
    inc: u64,
    /// The refill in flight took `RESERVE_PRIO`'s bucket.
    prio_owed: bool,
    /// Waiting allocations the refill in flight will serve.
    owed: u64,
    refill_done: Option<u64>,
}

impl AllocTiming {
    /// An idle set: every free list full, a written batch waiting in `free_inc`.
    fn new(refill_nanos: u64, none_cap: u64, batch: u64) -> AllocTiming {
        AllocTiming {
            refill_nanos: refill_nanos.max(1),
            none_cap: none_cap.max(1),
            batch: batch.max(1),
            none: none_cap.max(1),
            inc: batch.max(1),
            prio_owed: false,
            owed: 0,
            refill_done: None,
        }
    }

    /// The thread moves `free_inc` into `RESERVE_NONE`; when `free_inc` is empty it starts
    /// the next batch.
    fn push(&mut self, now: u64) {
        let k = (self.none_cap - self.none).min(self.inc);
        self.none += k;
        self.inc -= k;
        if self.inc == 0 && self.refill_done.is_none() {
            if self.none > 0 {
                self.none -= 1;
            } else {
                self.prio_owed = true;
            }
            self.refill_done = Some(now.saturating_add(self.refill_nanos));
        }
    }

    fn advance(&mut self, now: u64) {
        while let Some(t) = self.refill_done.filter(|&t| t <= now) {
            self.refill_done = None;
            let mut got = self.batch;
            if self.prio_owed {
                got -= 1;
                self.prio_owed = false;
            }
            let served = self.owed.min(got);
            self.owed -= served;
            self.inc = got - served;
            self.push(t);
        }
    }

    /// One data bucket at `now`: false when `RESERVE_NONE` is empty and the caller does not
    /// wait (a waiting caller is served by the refill in flight).
    fn take(&mut self, now: u64, wait: bool) -> bool {
        self.advance(now);
        if self.none > 0 {
            self.none -= 1;
            self.push(now);
            true
        } else if wait {
            self.owed += 1;
            true
        } else {
            false
        }
    }
}

impl BcacheModel {
    pub fn new(cfg: &BcacheConfig) -> Result<BcacheModel, BcacheConfigError> {
        cfg.validate()?;
        let n = cfg.nbuckets();
        let bucket_sectors = cfg.bucket_bytes / 512;
        // cache_alloc(): free lists. prio_buckets = nbuckets · 3 bytes (struct bucket_disk)
        // over a bucket, less its 24-byte header (struct prio_set), rounded up.
        let free = (n.next_power_of_two() >> 10).max(1);
        let prio = (n * 3).div_ceil(cfg.bucket_bytes - 24).max(1);
        // free_inc (4·free) is counted apart: it is refilled a batch at a time when empty, so
        // between `reserves` and `reserves + free_inc` buckets stand empty. `init_fifo` sizes
        // (btree 8, moving GC and general `free`, free_inc `4·free`) as `fifo_size` does; the
        // prio list is exact (`init_fifo_exact`).
        let reserves = fifo_size(8) + prio + fifo_size(free) + fifo_size(free);
        let free_inc = fifo_size(free << 2);
        // run_cache_set() for a new set: journal = clamp(nbuckets >> 7, 2, 256); two prio sets
        // (the one written and the previous), one uuid bucket; bucket 0 is the superblock's.
        let journal = (n >> 7).clamp(2, 256);
        let meta_buckets = journal + 2 * prio + 1;
        let fixed_unavailable = 1 + meta_buckets + reserves;
        let cache_sectors = (n * bucket_sectors) as i64;
        let mut buckets = Vec::with_capacity(n as usize);
        for _ in 0..n {
            buckets.push(Bucket {
                state: BucketState::Free,
                gen: 0,
                live: 0,
                dirty: 0,
                gc_used: 0,
                touched: 0,
                open: false,
            });
        }
        Ok(BcacheModel {
            cfg: cfg.clone(),
            bucket_sectors,
            buckets,
            fixed_unavailable,
            meta_buckets,
            free_inc,
            free_list: (0..n as u32).rev().collect(),
            index: BTreeMap::new(),
            streams: (0..RECENT_IO)
                .map(|i| Stream {
                    last: u64::MAX,
                    sequential: 0,
                    expires: 0,
                    used: i as u64,
                })
                .collect(),
            tasks: HashMap::new(),
            open: HashMap::new(),
            clock: RECENT_IO as u64,
            tick: 0,
            rescale_every: (cache_sectors / 1024).max(1),
            rescale_left: (cache_sectors / 1024).max(1),
            gc_every: (cache_sectors / 16).max(1),
            sectors_to_gc: (cache_sectors / 16).max(1),
            in_use_percent: 0,
            data_buckets: 0,
            pending: Vec::new(),
            submitted: HashMap::new(),
            timing: cfg
                .metadata_write_nanos
                .filter(|&l| l > 0)
                .map(|l| AllocTiming::new(l.saturating_mul(2), fifo_size(free), free_inc)),
            writeback: (cfg.mode == BcacheMode::WriteBack)
                .then(|| Writeback::new(cfg.writeback_percent, cfg.attached_before_nanos)),
            congestion: Congestion::for_latencies(
                cfg.congested_read_threshold_us,
                cfg.congested_write_threshold_us,
                cfg.cache_read_nanos,
                cfg.metadata_write_nanos,
            ),
            dirty_sectors: 0,
            gc_unavailable_buckets: 0,
            writeback_log: None,
            last_time: 0,
            stats: BcacheStats::default(),
        })
    }

    /// Buckets data may occupy now (the btree grows with the number of extents).
    fn data_capacity(&self) -> u64 {
        self.cfg
            .nbuckets()
            .saturating_sub(self.fixed_unavailable + self.btree_buckets())
    }

    /// Btree nodes for the extents indexed now (one bucket each).
    fn btree_buckets(&self) -> u64 {
        let keys = self.index.len() as u64;
        1 + ((keys * KEY_BYTES) as f64 / (BTREE_NODE_BYTES as f64 * BTREE_FILL)).ceil() as u64
    }

    fn prio(&self, b: &Bucket) -> u64 {
        if b.open {
            INITIAL_PRIO
        } else {
            INITIAL_PRIO.saturating_sub(self.tick - b.touched)
        }
    }

    fn rescale(&mut self, sectors: u64) {
        self.rescale_left -= sectors as i64;
        while self.rescale_left < 0 {
            self.rescale_left += self.rescale_every;
            self.tick += 1;
        }
    }

    /// check_should_bypass(): the sequential part, and the rescale of non-bypassed bios.
    fn should_bypass(&mut self, e: &IoEvent, start: u64, sectors: u64) -> bool {
        let write = e.op == Op::Write;
        if self.in_use_percent > CUTOFF_CACHE_ADD || e.op == Op::Discard {
            return true;
        }
        if self.cfg.mode == BcacheMode::None || (self.cfg.mode == BcacheMode::WriteAround && write)
        {
            return true;
        }
        let now = e.time_nanos;
        // bch_get_congested(): 0, or the stream length (sectors) from which bios bypass.
        let congested = self.congestion.limit(now);
        if congested == 0 && self.cfg.sequential_cutoff_bytes == 0 {
            self.rescale(sectors);
            return false;
        }
        let pid = e.pid.unwrap_or(0);
        let found = self
            .streams
            .iter()
            .enumerate()
            .filter(|(_, s)| s.last == start && now < s.expires)
            .max_by_key(|(_, s)| s.used)
            .map(|(i, _)| i);
        let i = match found {
            Some(i) => i,
            None => {
                let i = self
                    .streams
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, s)| s.used)
                    .map(|(i, _)| i)
                    .unwrap_or(0);
                let t = self.tasks.entry(pid).or_default();
                t.sequential_io_avg = (t.sequential_io_avg * 7 + t.sequential_io) / 8;
                t.sequential_io = 0;
                self.streams[i].sequential = 0;
                i
            }
        };
        let bytes = sectors * 512;
        let s = &mut self.streams[i];
        s.sequential = s.sequential.saturating_add(bytes);
        s.last = start + sectors;
        s.expires = now.saturating_add(STREAM_TIMEOUT_NANOS);
        s.used = self.clock;
        self.clock += 1;
        let seq = s.sequential;
        let t = self.tasks.entry(pid).or_default();
        t.sequential_io = seq;
        let len = t.sequential_io.max(t.sequential_io_avg) >> 9;
        if self.cfg.sequential_cutoff_bytes > 0 && len >= self.cfg.sequential_cutoff_bytes >> 9 {
            self.stats.bypassed_sequential += 1;
            return true;
        }
        if congested > 0 && len >= congested {
            self.stats.bypassed_congested += 1;
            return true;
        }
        self.rescale(sectors);
        false
    }

    /// Removes `[start, end)` from the index, keeping the bucket accounting right.
    fn remove_range(&mut self, start: u64, end: u64) {
        let mut touched: Vec<(u64, Extent)> = Vec::new();
        if let Some((&s, &x)) = self.index.range(..start).next_back() {
            if x.end > start {
                touched.push((s, x));
            }
        }
        for (&s, &x) in self.index.range(start..end) {
            touched.push((s, x));
        }
        for (s, x) in touched {
            self.index.remove(&s);
            let cut_start = s.max(start);
            let cut_end = x.end.min(end);
            self.drop_sectors(&x, cut_end - cut_start);
            if s < start {
                self.index.insert(s, Extent { end: start, ..x });
            }
            if x.end > end {
                self.index.insert(end, x);
            }
        }
    }

    fn drop_sectors(&mut self, x: &Extent, n: u64) {
        let b = &mut self.buckets[x.bucket as usize];
        if b.gen == x.gen {
            b.live = b.live.saturating_sub(n);
            if x.dirty {
                b.dirty = b.dirty.saturating_sub(n);
                self.dirty_sectors = self.dirty_sectors.saturating_sub(n);
            }
        }
    }

    fn live(&self, x: &Extent) -> bool {
        self.buckets[x.bucket as usize].gen == x.gen
    }

    /// GC: stale keys go, `sectors_used` is recounted, `in_use` recomputed.
    fn gc(&mut self) {
        self.stats.gc_runs += 1;
        let buckets = &self.buckets;
        self.index
            .retain(|_, x| buckets[x.bucket as usize].gen == x.gen);
        let mut dirty = 0;
        for b in &mut self.buckets {
            if b.state == BucketState::Data {
                b.gc_used = b.live;
                if b.dirty > 0 {
                    dirty += 1;
                }
            }
        }
        let n = self.cfg.nbuckets();
        let meta = self.meta_buckets + self.btree_buckets();
        self.gc_unavailable_buckets = dirty + meta;
        self.in_use_percent = (dirty + meta) * 100 / n.max(1);
        self.sectors_to_gc = self.gc_every;
    }

    /// invalidate_buckets_lru(): the `free_inc` batch of clean, unpinned data buckets of
    /// lowest weighted prio, invalidated together (their data is gone) as the allocator
    /// refills `free_inc` once it is empty. False when there is no candidate.
    fn invalidate_batch(&mut self) -> bool {
        let min_prio = self
            .buckets
            .iter()
            .filter(|b| b.state == BucketState::Data && !b.open)
            .map(|b| self.prio(b))
            .min()
            .unwrap_or(0);
        let mut cands: Vec<(u64, u32)> = Vec::new();
        for (i, b) in self.buckets.iter().enumerate() {
            if b.state != BucketState::Data || b.open || b.dirty > 0 {
                continue;
            }
            let w = (self.prio(b) - min_prio + (INITIAL_PRIO - min_prio) / 8) * b.gc_used;
            cands.push((w, i as u32));
        }
        if cands.is_empty() {
            return false;
        }
        let k = (self.free_inc as usize).clamp(1, cands.len());
        if cands.len() > k {
            cands.select_nth_unstable(k - 1);
        }
        for &(_, i) in &cands[..k] {
            let b = &mut self.buckets[i as usize];
            b.state = BucketState::Free;
            b.gen = b.gen.wrapping_add(1);
            b.live = 0;
            b.dirty = 0;
            b.gc_used = 0;
            self.data_buckets -= 1;
            self.free_list.push(i);
            self.stats.invalidated_buckets += 1;
        }
        true
    }

    /// A fresh bucket for data; `None` when every bucket is dirty or pinned.
    fn alloc_bucket(&mut self) -> Option<u32> {
        while self.data_buckets >= self.data_capacity() {
            if !self.invalidate_batch() {
                self.gc();
                if !self.invalidate_batch() {
                    return None;
                }
            }
        }
        let i = self.free_list.pop()? as usize;
        let tick = self.tick;
        let b = &mut self.buckets[i];
        b.state = BucketState::Data;
        b.gc_used = self.bucket_sectors;
        b.touched = tick;
        b.open = true;
        self.data_buckets += 1;
        // bch_bucket_alloc() takes the bucket off the set's available count at once and
        // updates `in_use` from it (bch_update_bucket_in_use), so between two GCs every
        // allocated bucket counts as in use, clean or not; the next GC counts again.
        let n = self.cfg.nbuckets();
        self.gc_unavailable_buckets = (self.gc_unavailable_buckets + 1).min(n);
        self.in_use_percent = self.gc_unavailable_buckets * 100 / n.max(1);
        Some(i as u32)
    }

    /// bch_data_insert(): `[start, end)` written into the task's open bucket(s) at `now`.
    /// Dirty (write-back) insertions wait for a bucket; the others stop at the first bucket
    /// the allocator has not made ready (with `metadata_write_nanos`), leaving the rest of the
    /// range uncached: a miss insertion is dropped, a write-through write's rest invalidated
    /// (`bch_data_insert_start`, its `err:` path).
    fn insert(&mut self, pid: u32, start: u64, end: u64, dirty: bool, now: u64) {
        self.sectors_to_gc -= (end - start) as i64;
        if self.sectors_to_gc < 0 {
            self.gc();
        }
        self.remove_range(start, end);
        let mut at = start;
        while at < end {
            let ob = self.open_bucket(pid);
            if ob.free_sectors == 0 || ob.bucket.is_none() {
                if let Some(b) = ob.bucket {
                    self.buckets[b as usize].open = false;
                    self.buckets[b as usize].touched = self.tick;
                }
                if let Some(t) = &mut self.timing {
                    if !t.take(now, dirty) {
                        self.stats.alloc_failures += 1;
                        return;
                    }
                }
                let Some(nb) = self.alloc_bucket() else {
                    return;
                };
                let o = self.open.get_mut(&pid).expect("open bucket");
                o.bucket = Some(nb);
                o.free_sectors = self.bucket_sectors;
            }
            let o = self.open.get_mut(&pid).expect("open bucket");
            let b = o.bucket.expect("bucket");
            let n = (end - at).min(o.free_sectors);
            o.free_sectors -= n;
            let gen = self.buckets[b as usize].gen;
            self.index.insert(
                at,
                Extent {
                    end: at + n,
                    bucket: b,
                    gen,
                    dirty,
                },
            );
            let bk = &mut self.buckets[b as usize];
            bk.live += n;
            if dirty {
                bk.dirty += n;
                self.dirty_sectors += n;
            }
            at += n;
        }
    }

    fn open_bucket(&mut self, pid: u32) -> OpenBucket {
        self.clock += 1;
        let clock = self.clock;
        if let Some(o) = self.open.get_mut(&pid) {
            o.used = clock;
            return *o;
        }
        if self.open.len() >= MAX_OPEN_BUCKETS {
            // The least recently used open bucket passes to this task.
            if let Some((&old, _)) = self.open.iter().min_by_key(|(_, o)| o.used) {
                let mut o = self.open.remove(&old).expect("lru");
                o.used = clock;
                self.open.insert(pid, o);
                return o;
            }
        }
        let o = OpenBucket {
            bucket: None,
            free_sectors: 0,
            used: clock,
        };
        self.open.insert(pid, o);
        o
    }

    /// Whether `[start, end)` is wholly cached, its first hole, and how many cached pieces are
    /// read from the cache device (one bio each); touches the buckets read from.
    fn lookup(&mut self, start: u64, end: u64) -> (bool, Option<(u64, u64)>, usize) {
        let mut at = start;
        let mut first_hole = None;
        let mut full = true;
        let mut hit_buckets = Vec::new();
        let mut pieces: Vec<(u64, Extent)> = Vec::new();
        if let Some((&s, &x)) = self.index.range(..start).next_back() {
            if x.end > start {
                pieces.push((s, x));
            }
        }
        pieces.extend(self.index.range(start..end).map(|(&s, &x)| (s, x)));
        for (s, x) in pieces {
            if !self.live(&x) {
                continue;
            }
            if s > at {
                full = false;
                first_hole.get_or_insert((at, s));
            }
            hit_buckets.push(x.bucket);
            at = at.max(x.end);
        }
        if at < end {
            full = false;
            first_hole.get_or_insert((at, end));
        }
        let pieces = hit_buckets.len();
        for b in hit_buckets {
            let tick = self.tick;
            self.buckets[b as usize].touched = tick;
        }
        (full, first_hole, pieces)
    }

    /// A data bio to the cache device at `now` ([`congestion`]), taking the configured latency
    /// of its direction (none: below the threshold).
    fn cache_io(&mut self, now: u64, write: bool) {
        if !self.congestion.enabled() {
            return;
        }
        let latency = if write {
            self.cfg.metadata_write_nanos
        } else {
            self.cfg.cache_read_nanos
        };
        self.congestion.submit(now, latency.unwrap_or(0), write);
    }

    /// Inserts the read misses whose backing reads completed by `now` (a time, or with
    /// `queue_depth` the submitting task's bio count; `u64::MAX` completes all), in the order
    /// they completed. `at`: the time of the insertions when `now` counts bios, not time.
    fn complete_pending(&mut self, now: u64, pid: Option<u32>, at: Option<u64>) {
        if self.pending.is_empty() {
            return;
        }
        let mut due = Vec::new();
        let mut i = 0;
        while i < self.pending.len() {
            if pid.is_none_or(|p| p == self.pending[i].1) && self.pending[i].0 <= now {
                due.push(self.pending.swap_remove(i));
            } else {
                i += 1;
            }
        }
        due.sort_by_key(|p| p.0);
        for (done, pid, hs, he, collided) in due {
            if collided {
                self.stats.cache_miss_collisions += 1;
            } else {
                self.cache_io(at.unwrap_or(done), true);
                self.insert(pid, hs, he, false, at.unwrap_or(done));
            }
        }
    }

    /// A write to `[start, end)` makes in-flight miss insertions over it fail (the replace
    /// key no longer matches: `bch_btree_insert` returns -ESRCH).
    fn collide_pending(&mut self, start: u64, end: u64) {
        for p in &mut self.pending {
            if p.2 < end && start < p.3 {
                p.4 = true;
            }
        }
    }

    pub fn observe(&mut self, e: &IoEvent) {
        self.last_time = self.last_time.max(e.time_nanos);
        self.writeback_until(e.time_nanos);
        self.writeback_front_end_io();
        if self.cfg.queue_depth.is_some() && e.latency_nanos.is_none() {
            let pid = e.pid.unwrap_or(0);
            let n = self.submitted.entry(pid).or_insert(0);
            *n += 1;
            let n = *n;
            self.complete_pending(n, Some(pid), Some(e.time_nanos));
        } else {
            self.complete_pending(e.time_nanos, None, None);
        }
        if e.len_bytes == 0 || e.op == Op::Flush {
            return;
        }
        let start = e.offset_bytes / 512;
        let end = e.end_bytes().div_ceil(512);
        let sectors = end - start;
        let pid = e.pid.unwrap_or(0);
        let bypass = self.should_bypass(e, start, sectors);
        if bypass {
            self.stats.bypassed_bytes += sectors * 512;
        }
        match e.op {
            Op::Read => {
                self.stats.reads += 1;
                let (full, hole, pieces) = self.lookup(start, end);
                // The cached pieces are read from the cache device, one bio each.
                for _ in 0..pieces {
                    self.cache_io(e.time_nanos, false);
                }
                match (full, bypass) {
                    (true, false) => self.stats.cache_hits += 1,
                    (true, true) => self.stats.cache_bypass_hits += 1,
                    (false, false) => self.stats.cache_misses += 1,
                    (false, true) => self.stats.cache_bypass_misses += 1,
                }
                if let (Some((hs, he)), false) = (hole, bypass) {
                    let he = he.min(hs + MAX_MISS_INSERT_SECTORS);
                    self.stats.miss_insert_bytes += (he - hs) * 512;
                    // The miss puts a check key over the range (`bch_btree_insert_check_key`,
                    // a random pointer); an earlier miss still in flight over it loses its
                    // own check key, so its insertion will collide.
                    self.collide_pending(hs, he);
                    // The insertion happens when the backing read completes (the bio's
                    // latency when the trace has completions; at once otherwise).
                    match (e.latency_nanos, self.cfg.queue_depth) {
                        (Some(l), _) if l > 0 => {
                            let done = e.time_nanos.saturating_add(l);
                            self.pending.push((done, pid, hs, he, false));
                        }
                        (None, Some(qd)) if qd > 0 => {
                            let n = self.submitted.get(&pid).copied().unwrap_or(0);
                            self.pending.push((n + u64::from(qd), pid, hs, he, false));
                        }
                        _ => {
                            self.cache_io(e.time_nanos, true);
                            self.insert(pid, hs, he, false, e.time_nanos)
                        }
                    }
                }
            }
            Op::Write | Op::Discard => {
                if e.op == Op::Write {
                    self.stats.writes += 1;
                }
                self.collide_pending(start, end);
                if bypass {
                    self.stats.writes_bypassed += u64::from(e.op == Op::Write);
                    self.remove_range(start, end);
                } else if self.cfg.mode == BcacheMode::WriteBack
                    && self.in_use_percent <= CUTOFF_WRITEBACK_SYNC
                {
                    self.stats.writes_dirty += 1;
                    self.cache_io(e.time_nanos, true);
                    self.insert(pid, start, end, true, e.time_nanos);
                    self.writeback_dirty_added(e.time_nanos);
                } else {
                    self.stats.writes_clean += 1;
                    self.cache_io(e.time_nanos, true);
                    self.insert(pid, start, end, false, e.time_nanos);
                }
            }
            Op::Flush => {}
        }
    }

    /// Keeps every extent background writeback copies to the backing device from now on, for
    /// [`BcacheModel::take_writebacks`].
    pub fn log_writebacks(&mut self) {
        self.writeback_log.get_or_insert_with(Vec::new);
    }

    /// Moves the extents written back since the last call (backing-device byte ranges, in the
    /// order written) into `out`.
    pub fn take_writebacks(&mut self, out: &mut Vec<(u64, u64)>) {
        if let Some(log) = &mut self.writeback_log {
            out.extend(log.drain(..).map(|(s, e)| (s * 512, e * 512)));
        }
    }

    /// The counters so far (insertions still waiting for their backing read are not made).
    pub fn stats(&self) -> &BcacheStats {
        &self.stats
    }

    /// Extents in the index (its memory grows with them).
    pub fn extents(&self) -> u64 {
        self.index.len() as u64
    }

    /// No bio comes for `nanos` after the last one (the counters are read then, say): the
    /// misses in flight complete and background writeback runs on until then.
    pub fn idle_for(&mut self, nanos: u64) {
        let at = self.last_time;
        self.complete_pending(u64::MAX, None, Some(at));
        self.writeback_until(at.saturating_add(nanos));
    }

    pub fn finish(mut self) -> BcacheResult {
        // No bio follows: the rest complete after the last one (their timing changes nothing).
        let at = self.last_time;
        self.complete_pending(u64::MAX, None, Some(at));
        self.stats.writeback_rate_sectors = self.writeback.as_ref().and_then(|w| w.rate());
        self.congestion.complete_until(u64::MAX);
        self.stats.congested_ios = self.congestion.slow_ios;
        let mut cached = 0;
        let mut dirty = 0;
        for b in &self.buckets {
            cached += b.live;
            dirty += b.dirty;
        }
        self.stats.cached_bytes = cached * 512;
        self.stats.dirty_bytes = dirty * 512;
        self.stats.cache_available_percent = 100u64.saturating_sub(self.in_use_percent);
        BcacheResult {
            config: self.cfg.clone(),
            nbuckets: self.cfg.nbuckets(),
            data_buckets_available: self.data_capacity(),
            stats: self.stats,
        }
    }
}

/// The model's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BcacheResult {
    pub config: BcacheConfig,
    pub nbuckets: u64,
    /// Buckets data could occupy at the end (the rest: metadata and the allocator's reserves).
    pub data_buckets_available: u64,
    pub stats: BcacheStats,
}

/// `stats_total/` as text, with the model's extra counts.
pub fn stats_text(r: &BcacheResult) -> String {
    let s = &r.stats;
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{:.1}%", v * 100.0));
    format!(
        "bcache model ({:?}, cache {} B in {} buckets of {} B, sequential_cutoff {} B)\n\
         cache_hits {}\ncache_misses {}\ncache_bypass_hits {}\ncache_bypass_misses {}\n\
         cache_hit_ratio {}\nread hit ratio (bypassed reads included) {}\nbypassed {} B\n\
         writes {} (dirty {}, clean {}, bypassed {})\ndirty data {} B\n",
        r.config.mode,
        r.config.cache_bytes,
        r.nbuckets,
        r.config.bucket_bytes,
        r.config.sequential_cutoff_bytes,
        s.cache_hits,
        s.cache_misses,
        s.cache_bypass_hits,
        s.cache_bypass_misses,
        pct(s.cache_hit_ratio()),
        pct(s.read_hit_ratio()),
        s.bypassed_bytes,
        s.writes,
        s.writes_dirty,
        s.writes_clean,
        s.writes_bypassed,
        s.dirty_bytes,
    )
}

/// The `--preset` name of this model.
pub const MODEL_NAME: &str = "bcache-kernel";
/// The product's own name, which selects this model wherever one runs (`simulate`); the
/// generic approximation is `bcache-approx` ([`crate::cache::Preset`]).
pub const PRODUCT_NAME: &str = "bcache";

/// Whether `name` selects this model (`bcache-kernel` or `bcache`, any case).
pub fn is_model_name(name: &str) -> bool {
    let n = name.trim();
    n.eq_ignore_ascii_case(MODEL_NAME) || n.eq_ignore_ascii_case(PRODUCT_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn ev(t_ms: u64, op: Op, offset: u64, len: u32, pid: u32) -> IoEvent {
        IoEvent {
            time_nanos: t_ms * 1_000_000,
            device: 0,
            offset_bytes: offset,
            len_bytes: len,
            op,
            latency_nanos: None,
            pid: Some(pid),
        }
    }

    fn cfg(mode: BcacheMode, cutoff: u64) -> BcacheConfig {
        BcacheConfig {
            cache_bytes: 64 * MIB,
            bucket_bytes: 64 << 10,
            mode,
            sequential_cutoff_bytes: cutoff,
            queue_depth: None,
            metadata_write_nanos: None,
            writeback_percent: DEFAULT_WRITEBACK_PERCENT,
            attached_before_nanos: None,
            congested_read_threshold_us: congestion::DEFAULT_READ_THRESHOLD_US,
            congested_write_threshold_us: congestion::DEFAULT_WRITE_THRESHOLD_US,
            cache_read_nanos: None,
        }
    }

    /// Re-reads a cached 1 MiB region 4 KiB at a time (pid 1, every hit a random-looking
    /// 8-sector stream after the first pass), with a 64 KiB sequential reader (pid 2) beside
    /// it over new data. Returns the stats.
    fn congestion_run(c: &BcacheConfig) -> BcacheStats {
        let mut m = BcacheModel::new(c).unwrap();
        let mut t = 0;
        // Fill: one read miss per 4 KiB block, inserted at once.
        for b in 0..256u64 {
            m.observe(&ev(t, Op::Read, (b * 37 % 256) * 4096, 4096, 1));
            t += 1;
        }
        for k in 0..2000u64 {
            m.observe(&ev(t, Op::Read, (k * 101 % 256) * 4096, 4096, 1));
            m.observe(&ev(t, Op::Read, 512 * MIB + k * 65536, 65536, 2));
            t += 1;
        }
        m.finish().stats
    }

    #[test]
    fn slow_cache_reads_make_bcache_bypass_as_congested() {
        // A fast cache device (or none given): never congested.
        let c = cfg(BcacheMode::WriteThrough, 0);
        let fast = congestion_run(&c);
        assert_eq!((fast.bypassed_congested, fast.congested_ios), (0, 0));
        assert_eq!(fast.cache_bypass_misses, 0);
        // 5 ms cache reads: each hit takes 4 of the kernel's milliseconds off `congested` and
        // only the fills' fast writes add one back, so the limit soon reaches 1 sector and the
        // sequential reader's 64 KiB bios bypass, as the random re-reads do once their task's
        // average stream is long enough.
        let mut slow_cfg = c.clone();
        slow_cfg.cache_read_nanos = Some(5_000_000);
        let slow = congestion_run(&slow_cfg);
        assert!(slow.congested_ios >= 1900, "{slow:?}");
        assert!(slow.bypassed_congested > 1000, "{slow:?}");
        assert!(slow.cache_bypass_misses > 1000, "{slow:?}");
        // Thresholds at 0 turn it off whatever the latency.
        slow_cfg.congested_read_threshold_us = 0;
        slow_cfg.congested_write_threshold_us = 0;
        assert_eq!(congestion_run(&slow_cfg), fast);
    }

    #[test]
    fn too_few_buckets_is_refused_like_the_kernel() {
        assert_eq!(
            BcacheModel::new(&BcacheConfig::new(128 * MIB)).err(),
            Some(BcacheConfigError::TooFewBuckets { nbuckets: 256 })
        );
        let mut odd = BcacheConfig::new(512 * MIB);
        odd.bucket_bytes = 3 << 12;
        assert!(matches!(
            odd.validate(),
            Err(BcacheConfigError::BucketSize { .. })
        ));
        odd.bucket_bytes = 32 << 20;
        assert!(matches!(
            odd.validate(),
            Err(BcacheConfigError::BucketTooLarge { .. })
        ));
        assert!(BcacheModel::new(&BcacheConfig::new(512 * MIB)).is_ok());
    }

    #[test]
    fn reread_hits_and_partial_hit_is_a_miss() {
        let mut m = BcacheModel::new(&cfg(BcacheMode::WriteThrough, 0)).unwrap();
        m.observe(&ev(0, Op::Read, 0, 4096, 1));
        m.observe(&ev(1, Op::Read, 0, 4096, 1));
        m.observe(&ev(2, Op::Read, 0, 8192, 1));
        m.observe(&ev(3, Op::Read, 0, 8192, 1));
        let s = m.finish().stats;
        assert_eq!((s.cache_hits, s.cache_misses), (2, 2));
    }

    #[test]
    fn allocated_buckets_count_as_in_use_until_the_next_gc() {
        // 1,024 buckets of 64 KiB; GC every 4 MiB inserted. 48 read misses of 64 KiB fill 48
        // clean buckets: bcache takes each off the available count as it allocates it, so
        // `cache_available_percent` is 100 - 48 * 100 / 1024 = 96 before any GC has counted.
        let run = |misses: u64| {
            let mut m = BcacheModel::new(&cfg(BcacheMode::WriteThrough, 0)).unwrap();
            for i in 0..misses {
                m.observe(&ev(i, Op::Read, i * 65536, 65536, 1));
            }
            m.finish().stats
        };
        let before_gc = run(48);
        assert_eq!(
            (before_gc.gc_runs, before_gc.cache_available_percent),
            (0, 96)
        );
        // Past 4 MiB a GC recounts: clean buckets are available again (only dirty data and
        // metadata stay counted), then the allocations after it count again.
        let after_gc = run(72);
        assert_eq!(after_gc.gc_runs, 1);
        assert!(
            after_gc.cache_available_percent > before_gc.cache_available_percent,
            "{after_gc:?}"
        );
    }

    #[test]
    fn sequential_stream_bypasses_after_the_cutoff_and_the_average_sticks() {
        let mut m = BcacheModel::new(&cfg(BcacheMode::WriteThrough, 4 * MIB)).unwrap();
        // 8 MiB sequential in 64 KiB reads: the first 63 are cached, the rest bypass.
        for i in 0..128u64 {
            m.observe(&ev(i, Op::Read, i * 65536, 65536, 1));
        }
        let s = m.stats.clone();
        assert_eq!(s.cache_misses, 63);
        assert_eq!(s.cache_bypass_misses, 65);
        // A new stream of the same task starts with the average (8 MiB / 8 = 1 MiB): cached,
        // and re-reading the first 4 MiB bypasses once the stream passes the cutoff again.
        m.observe(&ev(200, Op::Read, 512 * MIB, 4096, 1));
        assert_eq!(m.stats.cache_misses, 64);
    }

    #[test]
    fn write_around_write_invalidates_and_write_back_write_hits() {
        let mut m = BcacheModel::new(&cfg(BcacheMode::WriteAround, 4 * MIB)).unwrap();
        m.observe(&ev(0, Op::Read, 0, 4096, 1));
        m.observe(&ev(1, Op::Write, 0, 4096, 1));
        m.observe(&ev(2, Op::Read, 0, 4096, 1));
        assert_eq!(m.stats.cache_misses, 2);
        let mut m = BcacheModel::new(&cfg(BcacheMode::WriteBack, 4 * MIB)).unwrap();
        m.observe(&ev(0, Op::Write, 0, 4096, 1));
        m.observe(&ev(1, Op::Read, 0, 4096, 1));
        assert_eq!(m.stats.cache_hits, 1);
        // The writeback thread woke for the first dirty key, wrote it back (clean, still
        // cached: the read hit) and, its search of the index complete, sleeps for 30 s.
        let s = m.finish().stats;
        assert_eq!(
            (s.dirty_bytes, s.writeback_bytes, s.cached_bytes),
            (0, 4096, 4096)
        );
    }

    #[test]
    fn writeback_rate_updates_run_every_5_s_from_the_attachment() {
        // Dirty data below 10% of the cache: the first update drops the rate from its initial
        // 1,024 to the minimum, 8 sectors/s. Attached 4 s before the first bio, that update
        // comes 1 s after it; without the attachment time, 5 s after.
        let rate_at = |attached: Option<u64>, t: u64| {
            let mut c = cfg(BcacheMode::WriteBack, 4 * MIB);
            c.attached_before_nanos = attached;
            let mut m = BcacheModel::new(&c).unwrap();
            m.observe(&ev(0, Op::Write, 0, 4096, 1));
            m.observe(&ev(1, Op::Write, 8192, 4096, 1));
            m.idle_for(t);
            m.finish().stats.writeback_rate_sectors
        };
        let second = 1_000_000_000;
        assert_eq!(rate_at(Some(4 * second), second / 2), Some(1024));
        assert_eq!(rate_at(Some(4 * second), 3 * second / 2), Some(8));
        assert_eq!(rate_at(Some(9 * second), 3 * second / 2), Some(8));
        assert_eq!(rate_at(None, 3 * second / 2), Some(1024));
        assert_eq!(rate_at(None, 11 * second / 2), Some(8));
    }

    #[test]
    fn a_write_during_a_miss_makes_its_insertion_collide() {
        // Write-around, depth 2: the miss at 0 completes after the task's next 2 bios; the
        // write to it comes first, so the insertion fails and the re-read misses again.
        let mut c = cfg(BcacheMode::WriteAround, 4 * MIB);
        c.queue_depth = Some(2);
        let mut m = BcacheModel::new(&c).unwrap();
        m.observe(&ev(0, Op::Read, 0, 4096, 1));
        m.observe(&ev(1, Op::Write, 0, 4096, 1));
        m.observe(&ev(2, Op::Read, 1 << 20, 4096, 1));
        m.observe(&ev(3, Op::Read, 0, 4096, 1));
        let s = m.finish().stats;
        assert_eq!((s.cache_misses, s.cache_miss_collisions), (3, 1));
        // Without the write the miss is inserted by then and the re-read hits.
        let mut m = BcacheModel::new(&c).unwrap();
        m.observe(&ev(0, Op::Read, 0, 4096, 1));
        m.observe(&ev(1, Op::Read, 2 << 20, 4096, 1));
        m.observe(&ev(2, Op::Read, 1 << 20, 4096, 1));
        m.observe(&ev(3, Op::Read, 0, 4096, 1));
        assert_eq!(m.finish().stats.cache_hits, 1);
    }

    #[test]
    fn a_second_miss_in_flight_takes_the_check_key() {
        // Two reads of block 0 in flight (completions 5 ms after submission): the second
        // miss replaces the first's check key, so the first insertion collides; the second
        // caches the block and the read after both completes hits.
        let mut m = BcacheModel::new(&cfg(BcacheMode::WriteAround, 4 * MIB)).unwrap();
        let read = |t_ms: u64| {
            let mut e = ev(t_ms, Op::Read, 0, 4096, 1);
            e.latency_nanos = Some(5_000_000);
            e
        };
        m.observe(&read(0));
        m.observe(&read(1));
        m.observe(&read(20));
        let s = m.finish().stats;
        assert_eq!(
            (s.cache_misses, s.cache_miss_collisions, s.cache_hits),
            (2, 1, 1)
        );
    }

    #[test]
    fn insertions_fail_while_the_allocator_refills_and_write_back_waits() {
        // 64 MiB in 64 KiB buckets: 1,024 buckets, RESERVE_NONE holds 1 and free_inc 4.
        // Sequential 64 KiB misses every 0.1 ms, each needing a new bucket, against a refill
        // of 2 x 1 ms: most insertions find no bucket ready and are dropped.
        let mut c = cfg(BcacheMode::WriteThrough, 0);
        c.metadata_write_nanos = Some(1_000_000);
        let mut m = BcacheModel::new(&c).unwrap();
        for i in 0..200u64 {
            let mut e = ev(0, Op::Read, i * 65536, 65536, 1);
            e.time_nanos = i * 100_000;
            m.observe(&e);
        }
        let s = m.finish().stats;
        assert!(s.alloc_failures > 150, "{}", s.alloc_failures);
        assert_eq!(s.cached_bytes, (200 - s.alloc_failures) * 65536);
        // Spaced 5 ms apart the allocator keeps up: every miss is inserted.
        let mut m = BcacheModel::new(&c).unwrap();
        for i in 0..200u64 {
            let mut e = ev(0, Op::Read, i * 65536, 65536, 1);
            e.time_nanos = i * 5_000_000;
            m.observe(&e);
        }
        assert_eq!(m.finish().stats.alloc_failures, 0);
        // Write-back writes at the fast pace wait instead: none is lost.
        let mut c = cfg(BcacheMode::WriteBack, 0);
        c.metadata_write_nanos = Some(1_000_000);
        let mut m = BcacheModel::new(&c).unwrap();
        for i in 0..200u64 {
            let mut e = ev(0, Op::Write, i * 65536, 65536, 1);
            e.time_nanos = i * 100_000;
            m.observe(&e);
        }
        let s = m.finish().stats;
        assert_eq!(s.alloc_failures, 0);
        assert_eq!(s.dirty_bytes + s.writeback_bytes, 200 * 65536);
    }

    #[test]
    fn a_cache_smaller_than_the_working_set_evicts() {
        let mut m = BcacheModel::new(&cfg(BcacheMode::WriteThrough, 0)).unwrap();
        // Two passes over 128 MiB through a 64 MiB cache: LRU-like eviction, no hits.
        for pass in 0..2u64 {
            for i in 0..2048u64 {
                m.observe(&ev(pass * 10_000 + i, Op::Read, i * 65536, 65536, 1));
            }
        }
        let s = m.finish().stats;
        assert_eq!(s.cache_hits, 0);
        assert!(s.invalidated_buckets > 1000);
        // A pass over 32 MiB, twice: all hits the second time.
        let mut m = BcacheModel::new(&cfg(BcacheMode::WriteThrough, 0)).unwrap();
        for pass in 0..2u64 {
            for i in 0..512u64 {
                m.observe(&ev(pass * 10_000 + i, Op::Read, i * 65536, 65536, 1));
            }
        }
        assert_eq!(m.finish().stats.cache_hits, 512);
    }
}
