//! What Linux md sends to its member disks for a stream of bios: a counting model of md RAID
//! 0/1/10 (near, far and offset copies) and RAID 5/6 with its stripe cache, written from md(4),
//! `Documentation/admin-guide/md.rst` and how `drivers/md/raid5.c` behaves (kernel 6.1):
//!
//! - **Stripe heads.** RAID 5/6 work in stripe heads: one page (4 KiB) of every member at the
//!   same member offset. A write marks the pages it covers; the stripe cache holds
//!   `stripe_cache_size` stripe heads (default 256) and remembers which pages are up to date
//!   (read or written while the head stayed cached, least recently used heads are reused).
//! - **Read-modify-write versus reconstruct-write, per stripe.** When a head with pending
//!   writes is handled, md counts the member reads each method needs, skipping pages already
//!   up to date in the head: rmw reads the old data of the written pages and the parity, rcw
//!   reads the data pages not being written. rmw is taken only when it needs strictly fewer
//!   reads (the default `rmw_level`), so a tie goes to rcw; a full-stripe write reads nothing,
//!   and when either method needs no read (a page rewritten while its old data and the parity
//!   are still cached) md writes at once by that method (`handle_stripe_dirtying`).
//!   Then every written data page and the parity page(s) are written, one 4 KiB bio each.
//! - **Gathering.** Heads needing reads are delayed (md's delayed list, released while fewer
//!   than `IO_THRESHOLD` pre-reads are active), so bios in flight at the same time can fill
//!   the same head: a head is handled once it is full or `gather_bios` later bios have
//!   arrived (the workload's queue depth is the natural value).
//! - **Reads** that fit a chunk go straight to the member (md's chunk-aligned read path), one
//!   bio per chunk piece; RAID 1/10 write all copies and read one: the first, which md's
//!   `read_balance` picks when every copy is idle (this model has no queues; under load md
//!   spreads reads by pending requests and head position, which the timing engine does:
//!   [`crate::array::layout::ReadBalance`]). Totals do not depend on the choice.
//! - **RAID 10 layouts** ([`Raid10Layout`], md(4) "RAID10", mdadm's `--layout=n2|f2|o2`):
//!   near copies of a chunk sit on consecutive members in the same row; far copies are a
//!   second (third…) RAID 0 of the whole array in a later part of every member, each copy
//!   shifted one member on; offset copies repeat each row in the next row, shifted one member
//!   on. Bios are split at chunk boundaries unless every member holds a near copy (md then
//!   sends each member the whole bio).
//! - **Flushes** (`REQ_PREFLUSH`, an `fsync`): every member gets one empty flush bio
//!   (`md_flush_request`), counted apart from the writes ([`MemberIo::flush_bios`]); the writes
//!   before a flush have completed, so it ends the gather window.
//! - **raid5d.** Every RAID 5/6 stripe head is handled by the single `raid5d` thread unless
//!   `group_thread_cnt` adds worker threads (md.rst, "group_thread_cnt"). The count model does
//!   not need it; [`MdConfig::group_thread_cnt`] is carried so the timing model can bound
//!   parity throughput by it (docs/model.md cites the measured ceilings).
//! - **Superblock updates** (RAID 1/5/6/10): the array is marked dirty before its first write
//!   and clean once its writes have ended for `safe_mode_delay`, each time a 512-byte
//!   superblock write to every member ([`crate::array::md_super`]); the trace's completion
//!   times tell when the writes ended (without them, no idle period is assumed), and a stream
//!   that ends dirty is marked clean after it.
//!
//! Memory: the stripe cache's heads plus the pending ones, bounded by `stripe_cache_size` and
//! the gather window.

use serde::{Deserialize, Serialize};

use super::md_super::{
    SafeModeCount, SAFE_MODE_DELAY_NANOS, SUPERBLOCK_OFFSET_BYTES, SUPERBLOCK_WRITE_BYTES,
};
use crate::event::{IoEvent, Op};
use crate::hash::IntMap;

/// md's stripe-head page (`RAID5_STRIPE_SIZE`, one page on x86).
pub const STRIPE_PAGE_BYTES: u64 = 4096;
/// md's default `stripe_cache_size`.
pub const DEFAULT_STRIPE_CACHE_SIZE: u32 = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MdLevel {
    Raid0,
    Raid1,
    /// Near-2 layout (md's default for RAID 10).
    Raid10,
    Raid5,
    Raid6,
}

impl MdLevel {
    pub const ALL: [MdLevel; 5] = [
        MdLevel::Raid0,
        MdLevel::Raid1,
        MdLevel::Raid10,
        MdLevel::Raid5,
        MdLevel::Raid6,
    ];

    /// The `--layout` name: `raid0`, `raid1`, `raid10`, `raid5`, `raid6`.
    pub fn name(self) -> &'static str {
        match self {
            MdLevel::Raid0 => "raid0",
            MdLevel::Raid1 => "raid1",
            MdLevel::Raid10 => "raid10",
            MdLevel::Raid5 => "raid5",
            MdLevel::Raid6 => "raid6",
        }
    }

    /// The level a `--layout` name selects, case-insensitively.
    pub fn from_name(name: &str) -> Option<MdLevel> {
        MdLevel::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name.trim()))
    }

    pub fn from_number(n: u32) -> Option<MdLevel> {
        match n {
            0 => Some(MdLevel::Raid0),
            1 => Some(MdLevel::Raid1),
            10 => Some(MdLevel::Raid10),
            5 => Some(MdLevel::Raid5),
            6 => Some(MdLevel::Raid6),
            _ => None,
        }
    }
    fn parity(self) -> u32 {
        match self {
            MdLevel::Raid5 => 1,
            MdLevel::Raid6 => 2,
            _ => 0,
        }
    }
}

/// One md array.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MdConfig {
    pub level: MdLevel,
    pub members: u32,
    pub chunk_bytes: u64,
    /// Stripe heads in the stripe cache (RAID 5/6).
    pub stripe_cache_size: u32,
    /// Bios (the one that dirtied a head included) a head needing pre-reads waits for before
    /// it is handled: 1 handles it at the end of its own bio.
    pub gather_bios: u32,
    /// raid5d worker threads besides raid5d itself (md's `group_thread_cnt`, default 0).
    pub group_thread_cnt: u32,
    /// RAID 10's copies (default: md's `n2`).
    #[serde(default)]
    pub raid10: Raid10Layout,
    /// md's `safe_mode_delay` (default 200 ms; 0 turns safe mode off): the array is marked
    /// clean this long after its writes end, and dirty again before the next write, each a
    /// superblock update on every member ([`crate::array::md_super`]).
    #[serde(default = "default_safe_mode_delay")]
    pub safe_mode_delay_nanos: u64,
    /// RAID 5/6: failed members (indices), the array running degraded: their pages are never
    /// read or written; a read of one reconstructs it from its stripe's other pages, and a
    /// write prices the method that would need one as impossible (md's `2 × disks`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<u32>,
}

fn default_safe_mode_delay() -> u64 {
    SAFE_MODE_DELAY_NANOS
}

/// How md RAID 10 places the copies of a chunk (md(4), "RAID10"; the `--layout` of `mdadm
/// --create --level=10`: `n2`, `f2`, `o2`, `n3`, …): `near` copies on consecutive members of
/// one row, or `far` copies in distant parts of the members (`offset`: in the rows right after
/// it instead). mdadm sets one of the three, so one of `near` and `far` is 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Raid10Layout {
    pub near: u32,
    pub far: u32,
    pub offset: bool,
}

impl Default for Raid10Layout {
    /// md's default, `n2`.
    fn default() -> Raid10Layout {
        Raid10Layout {
            near: 2,
            far: 1,
            offset: false,
        }
    }
}

impl Raid10Layout {
    /// Copies of every chunk.
    pub fn copies(&self) -> u32 {
        self.near * self.far
    }

    /// mdadm's name: `n2`, `f2`, `o2`, …
    pub fn name(&self) -> String {
        match (self.far > 1, self.offset) {
            (false, _) => format!("n{}", self.near),
            (true, false) => format!("f{}", self.far),
            (true, true) => format!("o{}", self.far),
        }
    }

    /// Parses mdadm's name (`n2`, `f2`, `o3`, also `near2`, `far2`, `offset2`), or `None`.
    pub fn from_name(name: &str) -> Option<Raid10Layout> {
        let n = name.trim().to_ascii_lowercase();
        let (kind, digits) = n.split_at(n.find(|c: char| c.is_ascii_digit())?);
        let copies: u32 = digits
            .parse()
            .ok()
            .filter(|&c| (1..=MAX_MEMBERS).contains(&c))?;
        Some(match kind {
            "n" | "near" => Raid10Layout {
                near: copies,
                far: 1,
                offset: false,
            },
            "f" | "far" => Raid10Layout {
                near: 1,
                far: copies,
                offset: false,
            },
            "o" | "offset" => Raid10Layout {
                near: 1,
                far: copies,
                offset: true,
            },
            _ => return None,
        })
    }

    /// Where copy `k` (0 ≤ k < [`Raid10Layout::copies`], the first copy first) of array byte
    /// `offset` lies on `members` members of `chunk_bytes` chunks: `(member, member offset)`.
    /// `member_bytes`, each member's data area, places far copies (copy `f` starts `f / far`
    /// of the way in); 0 when unknown puts every far copy at its region's start, which no
    /// count depends on.
    pub fn copy(
        &self,
        offset: u64,
        chunk_bytes: u64,
        members: u64,
        member_bytes: u64,
        k: u32,
    ) -> (u64, u64) {
        let c = offset / chunk_bytes;
        let within = offset % chunk_bytes;
        let near = u64::from(self.near.max(1));
        let far = u64::from(self.far.max(1));
        let (k, f) = (u64::from(k) % near, u64::from(k) / near);
        let slot = c * near + k;
        let (member, row) = (slot % members, slot / members);
        if far == 1 {
            return (member, row * chunk_bytes + within);
        }
        let m = (member + f * near) % members;
        if self.offset {
            (m, (row * far + f) * chunk_bytes + within)
        } else {
            let stride = member_bytes / far / chunk_bytes * chunk_bytes;
            (m, f * stride + row * chunk_bytes + within)
        }
    }
}

impl MdConfig {
    pub fn new(level: MdLevel, members: u32, chunk_bytes: u64) -> MdConfig {
        MdConfig {
            level,
            members,
            chunk_bytes,
            stripe_cache_size: DEFAULT_STRIPE_CACHE_SIZE,
            gather_bios: 1,
            group_thread_cnt: 0,
            raid10: Raid10Layout::default(),
            safe_mode_delay_nanos: SAFE_MODE_DELAY_NANOS,
            failed: Vec::new(),
        }
    }

    pub fn validate(&self) -> Result<(), MdConfigError> {
        let min = match self.level {
            MdLevel::Raid0 | MdLevel::Raid1 => 2,
            MdLevel::Raid10 => self.raid10.copies().max(2),
            MdLevel::Raid5 => 3,
            MdLevel::Raid6 => 4,
        };
        if self.level == MdLevel::Raid10 {
            let r = self.raid10;
            if r.near == 0 || r.far == 0 || (r.near > 1 && r.far > 1) {
                return Err(MdConfigError::Raid10Layout { layout: r });
            }
        }
        if self.members < min || self.members > MAX_MEMBERS {
            return Err(MdConfigError::Members {
                level: self.level,
                min,
                members: self.members,
            });
        }
        if self.level != MdLevel::Raid1
            && (self.chunk_bytes < STRIPE_PAGE_BYTES || self.chunk_bytes % STRIPE_PAGE_BYTES != 0)
        {
            return Err(MdConfigError::Chunk {
                chunk_bytes: self.chunk_bytes,
            });
        }
        if matches!(self.level, MdLevel::Raid5 | MdLevel::Raid6)
            && self.stripe_cache_size < MIN_STRIPE_CACHE_SIZE
        {
            return Err(MdConfigError::StripeCacheSize {
                stripe_cache_size: self.stripe_cache_size,
            });
        }
        let tolerated = match self.level {
            MdLevel::Raid5 | MdLevel::Raid6 => self.level.parity() as usize,
            _ => 0,
        };
        let mut failed = self.failed.clone();
        failed.sort_unstable();
        failed.dedup();
        if failed.len() != self.failed.len()
            || failed.len() > tolerated
            || failed.iter().any(|&f| f >= self.members.min(64))
        {
            return Err(MdConfigError::Failed {
                level: self.level,
                failed: self.failed.clone(),
            });
        }
        Ok(())
    }
}

/// Members the model takes (md's own limit for RAID 5/6 is far higher; 256 bounds memory).
pub const MAX_MEMBERS: u32 = 256;
/// md's minimum `stripe_cache_size` (`raid5_set_cache_size` refuses less).
pub const MIN_STRIPE_CACHE_SIZE: u32 = 17;

/// An md array the model cannot run, as [`MdConfig::validate`] finds it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MdConfigError {
    #[error("{level:?} needs {min} to {max} members, not {members}", max = MAX_MEMBERS)]
    Members {
        level: MdLevel,
        min: u32,
        members: u32,
    },
    #[error("chunk {chunk_bytes} bytes: expected a multiple of 4 KiB")]
    Chunk { chunk_bytes: u64 },
    #[error("stripe_cache_size must be at least 17 (md's minimum), not {stripe_cache_size}")]
    StripeCacheSize { stripe_cache_size: u32 },
    #[error(
        "RAID 10 layout of {} near and {} far copies: expected near, far or offset copies (n2, f2, o2, ...), one kind at a time, as mdadm sets them",
        layout.near,
        layout.far
    )]
    Raid10Layout { layout: Raid10Layout },
    #[error("{level:?} with failed members {failed:?}: the model runs RAID 5 with one and RAID 6 with up to two distinct failed members among the first 64")]
    Failed { level: MdLevel, failed: Vec<u32> },
}

/// What md sent one member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberIo {
    pub read_bios: u64,
    pub read_bytes: u64,
    pub write_bios: u64,
    pub write_bytes: u64,
    /// Empty cache-flush bios (md sends every member one per flush it gets); not in
    /// `write_bios`.
    #[serde(default)]
    pub flush_bios: u64,
}

/// One member bio, as md sends it (recorded when [`MdModel::record_ops`] is on, for the timing
/// engine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MdOp {
    pub member: u32,
    /// Offset on the member device.
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub write: bool,
    /// A read issued before the head's writes (an rmw/rcw pre-read), not a host read.
    pub pre_read: bool,
}

/// The model's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MdResult {
    pub config: MdConfig,
    pub members: Vec<MemberIo>,
    pub total: MemberIo,
    /// Stripe heads handled by read-modify-write, reconstruct-write and as full stripes.
    pub rmw_stripes: u64,
    pub rcw_stripes: u64,
    pub full_stripes: u64,
    /// Member reads saved because the page was up to date in the stripe cache.
    pub cached_page_reads_saved: u64,
    /// Superblock updates (the array marked dirty before a write, clean after its writes
    /// ended), each one 512-byte write to every member, counted in the members' writes.
    #[serde(default)]
    pub superblock_updates: u64,
}

#[derive(Clone, Copy, Default)]
struct Head {
    /// Pages up to date, one bit per member (≤ 64 members tracked; wider arrays never cache;
    /// a failed member's page once computed or written in the cache).
    uptodate: u64,
    /// Data pages with a pending write, one bit per member.
    pending: u64,
    /// Bio sequence number of the first pending write.
    first_bio: u64,
    last_use: u64,
}

/// The streaming md model.
pub struct MdModel {
    config: MdConfig,
    /// The failed members' bits (degraded RAID 5/6).
    failed: u64,
    data_disks: u64,
    chunk_pages: u64,
    heads: IntMap<u64, Head>,
    /// Heads with pending writes, in the order they became pending.
    pending: std::collections::VecDeque<u64>,
    /// Idle heads by last use (md's inactive list, least recently used first).
    lru: std::collections::BTreeMap<u64, u64>,
    members: Vec<MemberIo>,
    bios: u64,
    clock: u64,
    rmw: u64,
    rcw: u64,
    full: u64,
    saved: u64,
    /// Member bios since the last [`MdModel::take_ops`], when recording.
    log: Option<Vec<MdOp>>,
    /// Stripe heads wait for [`MdModel::handle_head`] instead of being handled at the end of
    /// their bio (the timing engine decides when md's threads reach them).
    deferred: bool,
    /// Heads the bios observed since the last [`MdModel::take_touched`] wrote to, in order of
    /// first touch (deferred mode).
    touched: Vec<u64>,
    /// Heads handled inside [`MdModel::observe`] since the last [`MdModel::take_touched`]
    /// because a new write overlapped a page still pending there (deferred mode).
    forced: Vec<(u64, u32)>,
    /// Safe mode's superblock updates (levels with redundancy), unless the caller keeps its
    /// own clock for them ([`MdModel::without_superblock`]).
    safe_mode: Option<SafeModeCount>,
}

/// How one stripe head was handled, for the timing engine's CPU cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handled {
    /// No pre-read: every data page was written.
    pub full: bool,
    /// Member pre-reads issued.
    pub reads: u32,
    /// Pages the parity computation reads (the data pages for a full stripe or
    /// reconstruct-write; the written pages' old and new data and the old parity for
    /// read-modify-write).
    pub parity_source_pages: u32,
}

impl MdModel {
    pub fn new(config: &MdConfig) -> Result<MdModel, MdConfigError> {
        config.validate()?;
        let data_disks = match config.level {
            MdLevel::Raid0 => u64::from(config.members),
            MdLevel::Raid1 => 1,
            MdLevel::Raid10 => u64::from(config.members / config.raid10.copies().max(1)).max(1),
            MdLevel::Raid5 | MdLevel::Raid6 => u64::from(config.members - config.level.parity()),
        };
        Ok(MdModel {
            failed: config.failed.iter().fold(0, |m, &f| m | 1u64 << (f % 64)),
            data_disks,
            chunk_pages: config.chunk_bytes / STRIPE_PAGE_BYTES,
            heads: IntMap::default(),
            pending: std::collections::VecDeque::new(),
            lru: std::collections::BTreeMap::new(),
            members: vec![MemberIo::default(); config.members as usize],
            bios: 0,
            clock: 0,
            rmw: 0,
            rcw: 0,
            full: 0,
            saved: 0,
            log: None,
            deferred: false,
            touched: Vec::new(),
            forced: Vec::new(),
            safe_mode: (config.level != MdLevel::Raid0)
                .then(|| SafeModeCount::new(config.safe_mode_delay_nanos)),
            config: config.clone(),
        })
    }

    /// Leaves safe mode's superblock updates to the caller (the timing engine, which times
    /// them on its own clock).
    pub fn without_superblock(&mut self) {
        self.safe_mode = None;
    }

    /// `updates` superblock updates, each a write to every member.
    fn superblock_writes(&mut self, updates: u32) {
        for _ in 0..updates {
            for m in 0..self.config.members as usize {
                self.write(
                    m,
                    SUPERBLOCK_OFFSET_BYTES,
                    u64::from(SUPERBLOCK_WRITE_BYTES),
                );
            }
        }
    }

    /// Records every member bio from now on, for [`MdModel::take_ops`].
    pub fn record_ops(&mut self) {
        self.log = Some(Vec::new());
    }

    /// Leaves every RAID 5/6 stripe head with pending writes for [`MdModel::handle_head`]: no
    /// head is handled at the end of its bio, full or not (except when a new write overlaps a
    /// page still pending, which md resolves first). The timing engine calls this and hands
    /// heads to md's threads as they come free, so bios in flight gather in the heads.
    pub fn defer_handling(&mut self) {
        self.deferred = true;
    }

    /// Moves the heads written since the last call into `touched` (once per page written, so
    /// a head appears once per data member the bio wrote there) and the heads handled early because of an overlapping write (with
    /// their parity source pages) into `forced`.
    pub fn take_touched(&mut self, touched: &mut Vec<u64>, forced: &mut Vec<(u64, u32)>) {
        touched.append(&mut self.touched);
        forced.append(&mut self.forced);
    }

    /// True when head `key` has a pending write on every data page (a full-stripe write).
    pub fn head_is_full(&self, key: u64) -> bool {
        let full = self.full_mask(key / self.chunk_pages);
        self.heads
            .get(&key)
            .is_some_and(|h| h.pending & full == full)
    }

    /// True when head `key` has writes waiting to be handled.
    pub fn head_is_pending(&self, key: u64) -> bool {
        self.heads.get(&key).is_some_and(|h| h.pending != 0)
    }

    /// Stripe heads (4 KiB pages) per chunk: heads `key` and `key + 1` share their chunk row
    /// (and so their parity member) unless `key + 1` is a multiple of this.
    pub fn chunk_pages(&self) -> u64 {
        self.chunk_pages
    }

    /// Handles head `key` now (rmw, rcw or full stripe, decided on the pages pending now),
    /// logging its member bios; `None` when nothing is pending there.
    pub fn handle_head(&mut self, key: u64) -> Option<Handled> {
        let h = self.handle(key);
        self.evict();
        h
    }

    /// Moves the member bios recorded since the last call into `out`.
    pub fn take_ops(&mut self, out: &mut Vec<MdOp>) {
        if let Some(log) = &mut self.log {
            out.append(log);
        }
    }

    /// Stripe heads handled so far (rmw, rcw and full-stripe), each one pass of md's stripe
    /// state machine (`handle_stripe`) in `raid5d` or a worker thread.
    pub fn heads_handled(&self) -> u64 {
        self.rmw + self.rcw + self.full
    }

    fn log_op(&mut self, member: usize, offset_bytes: u64, bytes: u64, write: bool, pre: bool) {
        if let Some(log) = &mut self.log {
            log.push(MdOp {
                member: member as u32,
                offset_bytes,
                len_bytes: bytes.min(u64::from(u32::MAX)) as u32,
                write,
                pre_read: pre,
            });
        }
    }

    fn read(&mut self, member: usize, offset_bytes: u64, bytes: u64) {
        let m = &mut self.members[member];
        m.read_bios += 1;
        m.read_bytes += bytes;
        self.log_op(member, offset_bytes, bytes, false, false);
    }

    fn pre_read(&mut self, member: usize, offset_bytes: u64, bytes: u64) {
        let m = &mut self.members[member];
        m.read_bios += 1;
        m.read_bytes += bytes;
        self.log_op(member, offset_bytes, bytes, false, true);
    }

    fn write(&mut self, member: usize, offset_bytes: u64, bytes: u64) {
        let m = &mut self.members[member];
        m.write_bios += 1;
        m.write_bytes += bytes;
        self.log_op(member, offset_bytes, bytes, true, false);
    }

    /// Left-symmetric parity: the members holding P (and Q) and the member of data index `d`
    /// in stripe row `row`.
    fn parity_layout(&self, row: u64) -> (u64, u64) {
        let n = u64::from(self.config.members);
        // P rotates backwards from the last member; Q follows P (RAID 6).
        let p = n - 1 - row % n;
        (p, (p + 1) % n)
    }

    fn data_member(&self, row: u64, d: u64) -> u64 {
        let n = u64::from(self.config.members);
        let (p, _) = self.parity_layout(row);
        // Left-symmetric: data starts just after the parity and wraps.
        (p + u64::from(self.config.level.parity()) + d) % n
    }

    pub fn observe(&mut self, e: &IoEvent) {
        if e.op == Op::Flush {
            self.observe_flush();
            return;
        }
        if e.len_bytes == 0 || !matches!(e.op, Op::Read | Op::Write) {
            return;
        }
        if e.op == Op::Write {
            if let Some(s) = &mut self.safe_mode {
                let updates = s.write(e.time_nanos, e.latency_nanos);
                self.superblock_writes(updates);
            }
        }
        self.bios += 1;
        let chunk = self.config.chunk_bytes;
        match self.config.level {
            MdLevel::Raid1 => {
                let n = self.config.members as usize;
                let len = u64::from(e.len_bytes);
                if e.op == Op::Read {
                    // md's read_balance with every mirror idle: the first.
                    self.read(0, e.offset_bytes, len);
                } else {
                    for m in 0..n {
                        self.write(m, e.offset_bytes, len);
                    }
                }
            }
            MdLevel::Raid0 => {
                let n = u64::from(self.config.members);
                let mut off = e.offset_bytes;
                let end = e.end_bytes();
                while off < end {
                    let c = off / chunk;
                    let piece = ((c + 1) * chunk).min(end) - off;
                    let member_off = (c / n) * chunk + off % chunk;
                    if e.op == Op::Read {
                        self.read((c % n) as usize, member_off, piece);
                    } else {
                        self.write((c % n) as usize, member_off, piece);
                    }
                    off += piece;
                }
            }
            MdLevel::Raid10 => self.observe_raid10(e),
            MdLevel::Raid5 | MdLevel::Raid6 => self.observe_parity(e),
        }
    }

    /// A cache flush (`REQ_PREFLUSH`): md's `md_flush_request` sends every member an empty
    /// flush bio, at every level (md coalesces only a flush that waits behind one already in
    /// flight, which a flush issued after its writes completed, as `fsync` does, never is).
    /// The writes before it have completed, so their stripe heads were handled: the gather
    /// window ends here.
    fn observe_flush(&mut self) {
        if !self.deferred {
            self.flush();
        }
        for m in &mut self.members {
            m.flush_bios += 1;
        }
    }

    fn observe_raid10(&mut self, e: &IoEvent) {
        let chunk = self.config.chunk_bytes;
        let layout = self.config.raid10;
        let n = u64::from(self.config.members);
        // md splits a bio at chunk boundaries unless every member holds a near copy (a
        // mirror: each member then gets the whole bio, contiguous).
        let whole = layout.far == 1 && u64::from(layout.near) == n;
        let copies = layout.copies();
        let mut off = e.offset_bytes;
        let end = e.end_bytes();
        while off < end {
            let piece = if whole {
                end - off
            } else {
                ((off / chunk + 1) * chunk).min(end) - off
            };
            // No member size here: far copies are logged at their region's start (only the
            // timing engine's layout, which knows the disks, places them; no count depends on
            // it).
            let copy = |k| layout.copy(off, chunk, n, 0, k);
            if e.op == Op::Read {
                // md's read_balance with every copy idle: the first (for far and offset copies
                // also the lowest-addressed).
                let (m, at) = copy(0);
                self.read(m as usize, at, piece);
            } else {
                for k in 0..copies {
                    let (m, at) = copy(k);
                    self.write(m as usize, at, piece);
                }
            }
            off += piece;
        }
    }

    fn observe_parity(&mut self, e: &IoEvent) {
        let chunk = self.config.chunk_bytes;
        let dd = self.data_disks;
        if e.op == Op::Read {
            let mut off = e.offset_bytes;
            let end = e.end_bytes();
            while off < end {
                let c = off / chunk;
                let piece = ((c + 1) * chunk).min(end) - off;
                let row = c / dd;
                let m = self.data_member(row, c % dd);
                if self.failed & 1u64 << (m % 64) != 0 {
                    self.reconstruct_read(row, off % chunk, piece);
                } else {
                    self.read(m as usize, row * chunk + off % chunk, piece);
                }
                off += piece;
            }
            self.handle_due();
            return;
        }
        // Writes: mark each page's stripe head.
        let first_page = e.offset_bytes / STRIPE_PAGE_BYTES;
        let last_page = (e.end_bytes() - 1) / STRIPE_PAGE_BYTES;
        for page in first_page..=last_page {
            let c = page / self.chunk_pages;
            let in_chunk = page % self.chunk_pages;
            let row = c / dd;
            let member = self.data_member(row, c % dd);
            let key = row * self.chunk_pages + in_chunk;
            let full = self.full_mask(row);
            self.clock += 1;
            let clock = self.clock;
            let bios = self.bios;
            let bit = 1u64 << (member % 64);
            // A write overlapping a page already pending waits for that stripe to be handled
            // (md's R5_Overlap), then is written on its own: overlapping writes never merge.
            if self.heads.get(&key).is_some_and(|h| h.pending & bit != 0) {
                if let Some(h) = self.handle(key) {
                    if self.deferred {
                        self.forced.push((key, h.parity_source_pages));
                    }
                }
            }
            if self.deferred {
                self.touched.push(key);
            }
            let h = self.heads.entry(key).or_default();
            if h.pending == 0 && h.last_use != 0 {
                self.lru.remove(&h.last_use);
            }
            if h.pending == 0 {
                h.first_bio = bios;
                if !self.deferred {
                    self.pending.push_back(key);
                }
            }
            h.pending |= bit;
            h.last_use = clock;
            let pending = h.pending;
            if pending & full == full && !self.deferred {
                self.handle(key);
            }
        }
        self.handle_due();
    }

    /// A read of a failed member's pages (degraded RAID 5/6): md reads each page's stripe
    /// through its stripe head, every surviving page of the stripe not already cached, and
    /// computes the lost one; the head keeps them all.
    fn reconstruct_read(&mut self, row: u64, in_chunk: u64, bytes: u64) {
        let first = in_chunk / STRIPE_PAGE_BYTES;
        let last = (in_chunk + bytes - 1) / STRIPE_PAGE_BYTES;
        let all = self.all_mask();
        for page in first..=last {
            let key = row * self.chunk_pages + page;
            self.clock += 1;
            let clock = self.clock;
            let h = self.heads.get(&key).copied().unwrap_or_default();
            let reads = all & !self.failed & !h.uptodate;
            let member_off = row * self.config.chunk_bytes + page * STRIPE_PAGE_BYTES;
            for m in 0..self.config.members as usize {
                if reads & 1u64 << (m % 64) != 0 {
                    self.read(m, member_off, STRIPE_PAGE_BYTES);
                }
            }
            let h = self.heads.entry(key).or_default();
            if h.pending == 0 && h.last_use != 0 {
                self.lru.remove(&h.last_use);
            }
            h.uptodate |= all;
            h.last_use = clock;
            if h.pending == 0 {
                self.lru.insert(clock, key);
            }
        }
    }

    /// Every member's bit (the first 64).
    fn all_mask(&self) -> u64 {
        if self.config.members >= 64 {
            u64::MAX
        } else {
            (1u64 << self.config.members) - 1
        }
    }

    /// A method's cost in reads as md prices it (`handle_stripe_dirtying`): one per page to
    /// read, and `2 × disks` for a failed member's page, which cannot be read.
    fn method_cost(&self, needed: u64) -> u32 {
        let unreadable = (needed & self.failed).count_ones();
        (needed & !self.failed).count_ones() + unreadable * 2 * self.config.members
    }

    fn full_mask(&self, row: u64) -> u64 {
        (0..self.data_disks).fold(0u64, |m, d| m | 1u64 << (self.data_member(row, d) % 64))
    }

    /// Handles the pending heads whose gather window has passed (in deferred mode the caller
    /// decides, so this only keeps the stripe cache within its size).
    fn handle_due(&mut self) {
        if self.deferred {
            self.evict();
            return;
        }
        while let Some(&key) = self.pending.front() {
            match self.heads.get(&key) {
                Some(h) if h.pending != 0 => {
                    if self.bios - h.first_bio + 1 < u64::from(self.config.gather_bios) {
                        break;
                    }
                    self.handle(key);
                }
                Some(_) => {
                    self.pending.pop_front();
                }
                None => {
                    self.pending.pop_front();
                }
            }
        }
        // Heads that need no pre-read are not delayed: handled at the end of their bio.
        let ready: Vec<u64> = self
            .pending
            .iter()
            .copied()
            .filter(|&k| {
                self.heads
                    .get(&k)
                    .is_some_and(|h| h.pending != 0 && self.reads_needed(k, h) == 0)
            })
            .collect();
        for k in ready {
            self.handle(k);
        }
        self.evict();
    }

    /// Member reads the cheaper method needs for head `key` now.
    fn reads_needed(&self, key: u64, h: &Head) -> u32 {
        let row = key / self.chunk_pages;
        let (p, q) = self.parity_layout(row);
        let parity_mask = if self.config.level == MdLevel::Raid6 {
            1u64 << (p % 64) | 1u64 << (q % 64)
        } else {
            1u64 << (p % 64)
        };
        let data = self.full_mask(row);
        let written = h.pending & data;
        if written == data {
            return 0;
        }
        let rmw = self.method_cost((written | parity_mask) & !h.uptodate);
        let rcw = self.method_cost((data & !written) & !h.uptodate);
        if rmw.min(rcw) >= 2 * self.config.members {
            // Both need a lost page: md reads every surviving page and computes it.
            return (self.all_mask() & !self.failed & !h.uptodate).count_ones();
        }
        rmw.min(rcw)
    }

    /// Runs rmw or rcw on one head and writes its pages.
    fn handle(&mut self, key: u64) -> Option<Handled> {
        let mut h = self.heads.get(&key).copied()?;
        if h.pending == 0 {
            return None;
        }
        let row = key / self.chunk_pages;
        let (p, q) = self.parity_layout(row);
        let parity_mask = if self.config.level == MdLevel::Raid6 {
            1u64 << (p % 64) | 1u64 << (q % 64)
        } else {
            1u64 << (p % 64)
        };
        let data = self.full_mask(row);
        let written = h.pending & data;
        let not_up = !h.uptodate;
        // rmw: old data of the written pages and the parity, where not up to date.
        let rmw_set = (written | parity_mask) & not_up;
        // rcw: the data pages not being written, where not up to date.
        let rcw_set = (data & !written) & not_up;
        let (rmw, rcw) = (self.method_cost(rmw_set), self.method_cost(rcw_set));
        // md's handle_stripe_dirtying: it reads for rmw only when rmw needs strictly fewer
        // (and some) reads, for rcw only when rcw needs some reads and no more than rmw; when
        // either method needs none, it writes at once by that method (rcw first). A method
        // needing a failed member's page costs `2 × disks`; when both do (RAID 6 with two
        // failed), md reads every surviving page and computes the lost ones first.
        let use_rmw = written != data && rcw > 0 && (rmw == 0 || rmw < rcw);
        let impossible = 2 * self.config.members;
        let reads = if written == data {
            self.full += 1;
            0
        } else if rmw.min(rcw) >= impossible {
            self.rcw += 1;
            self.all_mask() & !self.failed & not_up
        } else if use_rmw {
            self.rmw += 1;
            rmw_set & !self.failed
        } else {
            self.rcw += 1;
            rcw_set & !self.failed
        };
        let saved_from = if use_rmw {
            written | parity_mask
        } else {
            data & !written
        };
        if written != data {
            self.saved += u64::from((saved_from & h.uptodate).count_ones());
        }
        let member_off =
            row * self.config.chunk_bytes + (key % self.chunk_pages) * STRIPE_PAGE_BYTES;
        for m in 0..self.config.members as usize {
            let bit = 1u64 << (m % 64);
            if reads & bit != 0 {
                self.pre_read(m, member_off, STRIPE_PAGE_BYTES);
            }
        }
        for m in 0..self.config.members as usize {
            let bit = 1u64 << (m % 64);
            if (written | parity_mask) & !self.failed & bit != 0 {
                self.write(m, member_off, STRIPE_PAGE_BYTES);
            }
        }
        h.uptodate |= reads | written | parity_mask;
        h.pending = 0;
        self.heads.insert(key, h);
        self.lru.insert(h.last_use, key);
        let parity_source_pages = if written == data || !use_rmw {
            data.count_ones()
        } else {
            2 * written.count_ones() + parity_mask.count_ones()
        };
        Some(Handled {
            full: written == data,
            reads: reads.count_ones(),
            parity_source_pages,
        })
    }

    /// Keeps at most `stripe_cache_size` heads, reusing the least recently used idle ones.
    fn evict(&mut self) {
        let cap = self.config.stripe_cache_size as usize;
        while self.heads.len() > cap {
            let Some((_, k)) = self.lru.pop_first() else {
                return;
            };
            self.heads.remove(&k);
        }
    }

    /// Handles every head still waiting for its gather window (the end of the stream).
    pub fn flush(&mut self) {
        while let Some(key) = self.pending.pop_front() {
            self.handle(key);
        }
        self.evict();
    }

    /// Member I/O so far, per member.
    pub fn members(&self) -> &[MemberIo] {
        &self.members
    }

    pub fn finish(mut self) -> MdResult {
        self.flush();
        if let Some(s) = &mut self.safe_mode {
            let updates = s.finish();
            self.superblock_writes(updates);
        }
        let superblock_updates = self.safe_mode.as_ref().map_or(0, |s| s.updates);
        let total = self
            .members
            .iter()
            .fold(MemberIo::default(), |a, m| MemberIo {
                read_bios: a.read_bios + m.read_bios,
                read_bytes: a.read_bytes + m.read_bytes,
                write_bios: a.write_bios + m.write_bios,
                write_bytes: a.write_bytes + m.write_bytes,
                flush_bios: a.flush_bios + m.flush_bios,
            });
        MdResult {
            members: self.members,
            total,
            rmw_stripes: self.rmw,
            rcw_stripes: self.rcw,
            full_stripes: self.full,
            cached_page_reads_saved: self.saved,
            superblock_updates,
            config: self.config,
        }
    }
}

/// Runs `events` through a fresh model.
pub fn simulate_md(
    config: &MdConfig,
    events: impl IntoIterator<Item = IoEvent>,
) -> Result<MdResult, MdConfigError> {
    let mut m = MdModel::new(config)?;
    for e in events {
        m.observe(&e);
    }
    Ok(m.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;

    fn w(offset_bytes: u64, len_bytes: u32) -> IoEvent {
        IoEvent {
            time_nanos: 0,
            device: 0,
            offset_bytes,
            len_bytes,
            op: Op::Write,
            latency_nanos: None,
            pid: None,
        }
    }

    /// The stripe and copy rules alone, without safe mode's superblock writes.
    fn run(c: &MdConfig, events: &[IoEvent]) -> MdResult {
        let mut m = MdModel::new(c).unwrap();
        m.without_superblock();
        for e in events {
            m.observe(e);
        }
        m.finish()
    }

    #[test]
    fn safe_mode_writes_the_superblock_to_every_member_around_the_writes() {
        let at = |t_ms: u64, latency_ms: Option<u64>| IoEvent {
            time_nanos: t_ms * 1_000_000,
            latency_nanos: latency_ms.map(|l| l * 1_000_000),
            ..w(t_ms * 4096, 4096)
        };
        let read = IoEvent {
            op: Op::Read,
            ..at(5, Some(1))
        };
        for level in [
            MdLevel::Raid1,
            MdLevel::Raid5,
            MdLevel::Raid6,
            MdLevel::Raid10,
        ] {
            let c = MdConfig::new(level, 4, 64 * KIB);
            // Marked dirty before the first write and clean after the last: 2 updates.
            let plain = run(&c, &[at(0, Some(1)), read, at(100, Some(1))]);
            let with = simulate_md(&c, [at(0, Some(1)), read, at(100, Some(1))]).unwrap();
            assert_eq!(with.superblock_updates, 2, "{level:?}");
            for (p, m) in plain.members.iter().zip(&with.members) {
                assert_eq!(m.write_bios, p.write_bios + 2, "{level:?}");
                assert_eq!(m.write_bytes, p.write_bytes + 2 * 512, "{level:?}");
                assert_eq!(m.read_bios, p.read_bios);
            }
            // An idle period (the first write ended at 1 ms: clean at 400 ms) adds a clean and
            // a dirty mark; reads alone never mark the array.
            let idle = simulate_md(&c, [at(0, Some(1)), read, at(400, Some(1))]).unwrap();
            assert_eq!(idle.superblock_updates, 4, "{level:?}");
            // Without completion times no idle period is assumed.
            let unknown = simulate_md(&c, [at(0, None), at(5_000, None)]).unwrap();
            assert_eq!(unknown.superblock_updates, 2, "{level:?}");
        }
        // RAID 0 has no superblock to mark.
        let c = MdConfig::new(MdLevel::Raid0, 4, 64 * KIB);
        let r = simulate_md(&c, [at(0, Some(1)), at(900, Some(1))]).unwrap();
        assert_eq!((r.superblock_updates, r.total.write_bios), (0, 2));
    }

    /// Degraded RAID 5/6 (md's `handle_stripe_dirtying` and `need_this_block`): a failed
    /// member's page is never read or written; reading it reads the stripe's other pages
    /// into the head, writing it takes reconstruct-write, and a method that would need it is
    /// priced out.
    #[test]
    fn degraded_stripes_reconstruct_the_lost_page_and_never_touch_it() {
        // RAID 5 of 4, row 0: data on members 0, 1, 2, parity on 3.
        let degraded = |failed: Vec<u32>| MdConfig {
            failed,
            ..MdConfig::new(MdLevel::Raid5, 4, 64 * KIB)
        };
        let per = |r: &MdResult| -> Vec<(u64, u64)> {
            r.members
                .iter()
                .map(|m| (m.read_bios, m.write_bios))
                .collect()
        };
        let read = |offset_bytes: u64| IoEvent {
            op: Op::Read,
            ..w(offset_bytes, 4096)
        };
        let c = degraded(vec![1]);
        // A read of the lost page reads the three others once; again, and then a write
        // beside it, find them cached.
        let r = run(&c, &[read(64 * KIB), read(64 * KIB), w(0, 4096)]);
        assert_eq!(per(&r), vec![(1, 1), (0, 0), (1, 0), (1, 1)]);
        // Writing the lost page: rmw would need its old data, so rcw reads the other data
        // pages and writes the parity alone.
        let r = run(&c, &[w(64 * KIB, 4096)]);
        assert_eq!(per(&r), vec![(1, 0), (0, 0), (1, 0), (0, 1)]);
        assert_eq!(r.rcw_stripes, 1);
        // Writing a surviving page: rcw would need the lost page, so rmw (old data, parity).
        let r = run(&c, &[w(0, 4096)]);
        assert_eq!(per(&r), vec![(1, 1), (0, 0), (0, 0), (1, 1)]);
        assert_eq!(r.rmw_stripes, 1);
        // The parity member lost: rcw, and no parity write.
        let r = run(&degraded(vec![3]), &[w(0, 4096)]);
        assert_eq!(per(&r), vec![(0, 1), (1, 0), (1, 0), (0, 0)]);
        // A full stripe reads nothing and writes the surviving pages.
        let r = run(&c, &[w(0, 192 * 1024)]);
        assert_eq!(r.total.read_bios, 0);
        assert_eq!(r.members[1].write_bios, 0);
        // RAID 6 of 5 with data member 2 and P (member 4) lost, row 0 (Q on 0, data on 1,
        // 2, 3): a write to member 1 can go neither way, so md reads every surviving page
        // first and writes the data and Q.
        let c6 = MdConfig {
            failed: vec![2, 4],
            ..MdConfig::new(MdLevel::Raid6, 5, 64 * KIB)
        };
        let r = run(&c6, &[w(0, 4096)]);
        assert_eq!(per(&r), vec![(1, 1), (1, 1), (0, 0), (1, 0), (0, 0)]);
        // More failed members than the level survives, or one twice, are refused.
        for failed in [vec![0, 1], vec![1, 1], vec![4]] {
            assert!(matches!(
                degraded(failed).validate(),
                Err(MdConfigError::Failed { .. })
            ));
        }
    }

    #[test]
    fn a_small_raid5_write_ties_and_md_takes_reconstruct_write() {
        // 3 data disks: rmw reads old data + parity (2), rcw the two other data pages (2).
        let c = MdConfig::new(MdLevel::Raid5, 4, 64 * KIB);
        let r = run(&c, &[w(0, 4096)]);
        assert_eq!((r.rcw_stripes, r.rmw_stripes), (1, 0));
        assert_eq!((r.total.read_bios, r.total.write_bios), (2, 2));
        // 4 data disks: rmw 2 reads beats rcw 3.
        let c5 = MdConfig::new(MdLevel::Raid5, 5, 64 * KIB);
        let r = run(&c5, &[w(0, 4096)]);
        assert_eq!(
            (r.rmw_stripes, r.total.read_bios, r.total.write_bios),
            (1, 2, 2)
        );
    }

    #[test]
    fn configurations_md_refuses_are_named() {
        let mut c = MdConfig::new(MdLevel::Raid6, 3, 64 * KIB);
        assert_eq!(
            MdModel::new(&c).err(),
            Some(MdConfigError::Members {
                level: MdLevel::Raid6,
                min: 4,
                members: 3
            })
        );
        c.members = 6;
        c.chunk_bytes = 6 * KIB;
        assert!(matches!(
            c.validate(),
            Err(MdConfigError::Chunk { chunk_bytes }) if chunk_bytes == 6 * KIB
        ));
        // RAID 1 has no chunks, so any chunk size is fine there.
        let mirror = MdConfig {
            level: MdLevel::Raid1,
            ..c.clone()
        };
        assert_eq!(mirror.validate(), Ok(()));
        c.chunk_bytes = 64 * KIB;
        c.stripe_cache_size = 16;
        let e = simulate_md(&c, []).expect_err("below md's minimum");
        assert!(matches!(
            e,
            MdConfigError::StripeCacheSize {
                stripe_cache_size: 16
            }
        ));
        assert_eq!(
            e.to_string(),
            "stripe_cache_size must be at least 17 (md's minimum), not 16"
        );
    }

    #[test]
    fn raid6_small_write_reads_the_other_data_page() {
        let c = MdConfig::new(MdLevel::Raid6, 4, 64 * KIB);
        let r = run(&c, &[w(0, 4096)]);
        assert_eq!((r.total.read_bios, r.total.write_bios), (1, 3));
    }

    #[test]
    fn full_stripes_read_nothing_and_cached_pages_save_reads() {
        let c = MdConfig::new(MdLevel::Raid5, 4, 64 * KIB);
        let r = run(&c, &[w(0, 192 * 1024)]);
        assert_eq!(r.full_stripes, 16);
        assert_eq!((r.total.read_bios, r.total.write_bios), (0, 64));
        assert_eq!(r.total.write_bytes, 4 * 64 * KIB);
        // The same page twice: the second write finds the stripe up to date.
        let r = run(&c, &[w(0, 4096), w(0, 4096)]);
        assert_eq!((r.total.read_bios, r.total.write_bios), (2, 4));
        assert_eq!(r.cached_page_reads_saved, 2);
        // A stripe cache of 17 heads forgets: 40 other stripes in between.
        let mut c17 = c.clone();
        c17.stripe_cache_size = 17;
        let mut ev = vec![w(0, 4096)];
        ev.extend((1..41u64).map(|i| w(i * 192 * KIB, 4096)));
        ev.push(w(0, 4096));
        let r = run(&c17, &ev);
        assert_eq!(r.total.read_bios, 2 * 42);
    }

    #[test]
    fn a_method_that_needs_no_read_is_taken_at_once() {
        // Six members: a 4 KiB write takes rmw (old data and parity, 2 reads, against 4 for
        // rcw). Rewriting the same page finds both up to date: rmw needs nothing, rcw still 4
        // reads, and md writes at once (lab run M3, `md5-6d-c128-randrw60-16k`: reading the rcw
        // pages there put the model 12% over the kernel's member reads).
        let c = MdConfig::new(MdLevel::Raid5, 6, 64 * KIB);
        let r = run(&c, &[w(0, 4096), w(0, 4096)]);
        assert_eq!((r.rmw_stripes, r.rcw_stripes), (2, 0));
        assert_eq!((r.total.read_bios, r.total.write_bios), (2, 4));
        assert_eq!(r.cached_page_reads_saved, 2);
    }

    #[test]
    fn a_flush_reaches_every_member_and_ends_the_gather_window() {
        let flush = IoEvent {
            op: Op::Flush,
            len_bytes: 0,
            ..w(0, 0)
        };
        // RAID 5 of three: two half-stripe writes gather into one full stripe, unless a flush
        // (their completion) comes between them.
        let mut c = MdConfig::new(MdLevel::Raid5, 3, 4 * KIB);
        c.gather_bios = 2;
        let r = run(&c, &[w(0, 4096), w(4096, 4096)]);
        assert_eq!((r.full_stripes, r.total.read_bios), (1, 0));
        let r = run(&c, &[w(0, 4096), flush, w(4096, 4096)]);
        assert_eq!((r.full_stripes, r.total.read_bios), (0, 1));
        assert_eq!(r.total.flush_bios, 3);
        assert!(r.members.iter().all(|m| m.flush_bios == 1));
        // Every level, every member; flushes are not writes.
        for (level, members) in [
            (MdLevel::Raid0, 2),
            (MdLevel::Raid1, 2),
            (MdLevel::Raid10, 4),
        ] {
            let c = MdConfig::new(level, members, 64 * KIB);
            let r = run(&c, &[flush, flush]);
            assert_eq!(r.total.flush_bios, 2 * u64::from(members));
            assert_eq!(r.total.write_bios, 0);
        }
    }

    #[test]
    fn gathering_lets_two_bios_fill_one_stripe() {
        // Two halves of a stripe row: with a window of 2 bios they meet in one head.
        let mut c = MdConfig::new(MdLevel::Raid5, 3, 4 * KIB);
        let halves = [w(0, 4096), w(4096, 4096)];
        let r = run(&c, &halves);
        assert_eq!((r.full_stripes, r.total.read_bios), (0, 1));
        c.gather_bios = 2;
        let r = run(&c, &halves);
        assert_eq!((r.full_stripes, r.total.read_bios), (1, 0));
    }

    #[test]
    fn parity_rotates_left_symmetric_and_reads_go_to_one_member() {
        let c = MdConfig::new(MdLevel::Raid5, 4, 64 * KIB);
        let m = MdModel::new(&c).unwrap();
        // Row 0: parity on the last member, data on 0, 1, 2; row 1: parity on member 2, data
        // starts after it (3, 0, 1).
        assert_eq!(m.parity_layout(0).0, 3);
        assert_eq!(
            (0..3).map(|d| m.data_member(0, d)).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(m.parity_layout(1).0, 2);
        assert_eq!(
            (0..3).map(|d| m.data_member(1, d)).collect::<Vec<_>>(),
            [3, 0, 1]
        );
        let read = IoEvent {
            op: Op::Read,
            ..w(60 * 1024, 8192)
        };
        let r = run(&c, &[read]);
        // 60 KiB + 8 KiB crosses the first chunk boundary: two member reads.
        assert_eq!((r.members[0].read_bios, r.members[1].read_bios), (1, 1));
    }

    /// Which chunk copy sits at each (row, member) of the first `rows` rows of `members`
    /// members, `rows_per_region` rows to a far region: the diagrams of the layouts.
    fn grid(r: Raid10Layout, members: u64, rows: u64, region_rows: u64) -> Vec<Vec<u64>> {
        let chunk = 64 * KIB;
        let mut g = vec![vec![u64::MAX; members as usize]; rows as usize];
        let chunks = rows * members / u64::from(r.copies());
        for c in 0..chunks {
            for k in 0..r.copies() {
                let (m, at) = r.copy(
                    c * chunk,
                    chunk,
                    members,
                    region_rows * r.far as u64 * chunk,
                    k,
                );
                assert_eq!(at % chunk, 0);
                let row = (at / chunk) as usize;
                assert_eq!(
                    g[row][m as usize],
                    u64::MAX,
                    "two copies at row {row} member {m}"
                );
                g[row][m as usize] = c + 1;
            }
        }
        g
    }

    #[test]
    fn raid10_layouts_place_copies_as_md_documents_them() {
        // The diagrams of md's RAID 10 layouts on four drives (md(4), and Wikipedia's
        // "Non-standard RAID levels", Linux MD RAID 10): chunks numbered from 1.
        let near = Raid10Layout::from_name("n2").unwrap();
        assert_eq!(grid(near, 4, 2, 0), [[1, 1, 2, 2], [3, 3, 4, 4]],);
        // Three drives: the copies wrap onto the next row.
        assert_eq!(grid(near, 3, 2, 0), [[1, 1, 2], [2, 3, 3]]);
        // Far: a RAID 0 of every chunk, then the copies shifted one drive on, in the second
        // half of every drive (here two rows a half).
        let far = Raid10Layout::from_name("f2").unwrap();
        assert_eq!(
            grid(far, 4, 4, 2),
            [[1, 2, 3, 4], [5, 6, 7, 8], [4, 1, 2, 3], [8, 5, 6, 7]],
        );
        // Offset: each row repeated in the next, shifted one drive on.
        let offset = Raid10Layout::from_name("o2").unwrap();
        assert_eq!(
            grid(offset, 4, 4, 0),
            [[1, 2, 3, 4], [4, 1, 2, 3], [5, 6, 7, 8], [8, 5, 6, 7]],
        );
        assert_eq!(Raid10Layout::from_name("near3").unwrap().name(), "n3");
        assert_eq!(Raid10Layout::from_name(" O2 ").unwrap(), offset);
        for bad in ["", "x2", "n", "f0", "n2f2"] {
            assert_eq!(Raid10Layout::from_name(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn raid10_reads_one_copy_and_writes_every_copy() {
        let read = |off| IoEvent {
            op: Op::Read,
            ..w(off, 8192)
        };
        for (name, members, writes) in [("n2", 3, 2), ("f2", 4, 2), ("o2", 5, 2), ("n3", 4, 3)] {
            let mut c = MdConfig::new(MdLevel::Raid10, members, 64 * KIB);
            c.raid10 = Raid10Layout::from_name(name).unwrap();
            // 60 KiB + 8 KiB crosses a chunk boundary: split in two, as md does.
            let r = run(&c, &[w(60 * KIB, 8192), read(60 * KIB), read(1 << 20)]);
            assert_eq!(r.total.write_bios, 2 * writes, "{name}");
            assert_eq!(r.total.write_bytes, 8192 * writes, "{name}");
            assert_eq!(r.total.read_bios, 3, "{name}");
        }
        // Far copies: reads go to the first copy's member (the lowest address), so a RAID 0
        // of every member; chunks 0..4 on members 0..4.
        let mut c = MdConfig::new(MdLevel::Raid10, 4, 64 * KIB);
        c.raid10 = Raid10Layout::from_name("f2").unwrap();
        let r = run(&c, &(0..8).map(|i| read(i * 64 * KIB)).collect::<Vec<_>>());
        assert!(
            r.members.iter().all(|m| m.read_bios == 2),
            "{:?}",
            r.members
        );
        // Every member holds a near copy: a mirror, each member gets the whole bio.
        let mut c = MdConfig::new(MdLevel::Raid10, 3, 64 * KIB);
        c.raid10 = Raid10Layout::from_name("n3").unwrap();
        let r = run(&c, &[w(60 * KIB, 8192)]);
        assert!(
            r.members.iter().all(|m| m.write_bios == 1),
            "{:?}",
            r.members
        );
        // md refuses near and far copies together, and fewer members than copies.
        c.raid10 = Raid10Layout {
            near: 2,
            far: 2,
            offset: false,
        };
        c.members = 4;
        assert!(matches!(
            MdModel::new(&c).err(),
            Some(MdConfigError::Raid10Layout { .. })
        ));
        c.raid10 = Raid10Layout::from_name("f3").unwrap();
        c.members = 2;
        assert!(matches!(
            MdModel::new(&c).err(),
            Some(MdConfigError::Members { min: 3, .. })
        ));
    }
}
