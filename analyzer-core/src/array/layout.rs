//! Layouts: how a logical address range of the array becomes commands on member disks.
//!
//! A layout is a tree of [`Node`]s whose leaves are disks, so RAID 10 is RAID 0 over RAID 1
//! pairs, RAID 50/60 are RAID 0 over RAID 5/6 groups, and any other nesting (software RAID 0
//! over hardware RAID 1 pairs, a mirror of two RAID 5s) is written the same way. Parity is
//! placed left-symmetric, as Linux md does by default. Small parity writes choose between
//! read-modify-write and reconstruct-write the way md does (fewer reads wins), full-stripe
//! writes read nothing, and degraded members are served by reconstruction.
//!
//! [`Node::expand`] emits [`DiskOp`]s tagged with a phase: every op of phase p completes before
//! any op of phase p + 1 starts (the reads of a read-modify-write come before its writes).

use serde::{Deserialize, Serialize};

use super::md::Raid10Layout;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Concatenation (JBOD spanning): members one after the other.
    Concat,
    Raid0,
    Raid1,
    Raid5,
    Raid6,
    /// Linux md's RAID 10 personality over disks: near, far or offset copies
    /// ([`Node::raid10`], default `n2`), any member count from the copies up. RAID 10 built
    /// as RAID 0 over RAID 1 pairs (a hardware controller's, or md's `n2` on an even number
    /// of disks, which places every byte the same way) is a nesting of the other levels.
    Raid10,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Concat => "concat",
            Level::Raid0 => "raid0",
            Level::Raid1 => "raid1",
            Level::Raid5 => "raid5",
            Level::Raid6 => "raid6",
            Level::Raid10 => "raid10",
        }
    }

    pub(crate) fn parity_members(self) -> usize {
        match self {
            Level::Raid5 => 1,
            Level::Raid6 => 2,
            _ => 0,
        }
    }

    /// Members that may fail, whichever they are, without losing data (`copies`: RAID 10's).
    fn tolerance(self, members: usize, copies: usize) -> usize {
        match self {
            Level::Concat | Level::Raid0 => 0,
            Level::Raid1 => members.saturating_sub(1),
            Level::Raid5 => 1,
            Level::Raid6 => 2,
            Level::Raid10 => copies.saturating_sub(1),
        }
    }
}

/// How a partial-stripe parity write is done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParityWrite {
    /// Linux md's rule: whichever of the two needs fewer member reads.
    #[default]
    Auto,
    /// Read old data and old parity, write new data and new parity.
    ReadModifyWrite,
    /// Read the untouched data of the stripe, write new data and parity computed from scratch.
    ReconstructWrite,
}

/// A member of a node: a disk (index into the array's device list) or a nested node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Member {
    Disk(u32),
    Node(Box<Node>),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub level: Level,
    /// Stripe unit (chunk) for RAID 0/5/6; ignored by concat and RAID 1.
    pub chunk_bytes: u64,
    pub members: Vec<Member>,
    /// Indices of failed members (degraded mode).
    pub failed: Vec<usize>,
    pub parity_write: ParityWrite,
    /// [`Level::Raid10`]'s copies (`None`: md's default, `n2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raid10: Option<Raid10Layout>,
}

/// The largest single command: the largest multiple of 512 that fits a `u32` length.
pub const MAX_COMMAND_BYTES: u64 = 0xFFFF_FE00;

/// One command for one member disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskOp {
    pub disk: u32,
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub write: bool,
    pub phase: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    #[error("{level} needs at least {min} members, got {got}")]
    TooFewMembers {
        level: &'static str,
        min: usize,
        got: usize,
    },
    #[error("{level}: chunk size must be a non-zero multiple of 512 bytes, got {chunk_bytes}")]
    BadChunk {
        level: &'static str,
        chunk_bytes: u64,
    },
    #[error("{level}: {failed} failed members but it survives only {tolerance}")]
    TooManyFailed {
        level: &'static str,
        failed: usize,
        tolerance: usize,
    },
    #[error("{level}: failed member index {index} out of range (members 0..{members})")]
    FailedOutOfRange {
        level: &'static str,
        index: usize,
        members: usize,
    },
    #[error("disk index {disk} has no device (the array has {devices})")]
    NoSuchDisk { disk: u32, devices: usize },
    #[error("raid10: {near} near and {far} far copies; md takes near, far or offset copies, one kind at a time")]
    Raid10Copies { near: u32, far: u32 },
}

/// What the layout needs to know about the disks when choosing a mirror for a read.
pub trait DiskView {
    /// Commands queued or in service on the disk.
    fn outstanding(&self, disk: u32) -> u32;
    /// Byte offset just past the disk's last command (where its head is).
    fn head_bytes(&self, disk: u32) -> u64;
    /// How a mirror's reads are spread: Linux md's `read_balance` for a software array, the
    /// least-loaded copy for a controller's (the default).
    fn read_balance(&self) -> ReadBalance {
        ReadBalance::LeastLoaded
    }
    /// Whether the disk has rotating media (md balances SSD mirrors by queue alone).
    fn rotational(&self, _disk: u32) -> bool {
        true
    }
}

/// How reads choose among a mirror's copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadBalance {
    /// The copy with the fewest commands outstanding, ties to the nearest head (what a
    /// controller's load balancing is taken to do; their algorithms are not published).
    LeastLoaded,
    /// Linux md's `read_balance` (drivers/md/raid1.c and raid10.c, kernel 6.1, as they
    /// behave): RAID 1 keeps a sequential read on the disk whose last read it continues; then,
    /// when a copy is on an SSD or some copy is idle, the copy with the fewest requests pending
    /// (the first in member order on ties, so at queue depth 1 every read goes to the first
    /// copy); otherwise, all copies busy on rotating disks, the nearest head. RAID 10 takes an
    /// idle near copy at once, reads far and offset copies at their lowest address on rotating
    /// disks, and balances SSD copies by pending requests.
    Md,
}

/// Which md personality's `read_balance` a mirror choice follows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mirrors {
    Raid1,
    Near,
    Far,
}

/// A view with idle disks, for static questions (tests, capacity).
pub struct IdleDisks;

impl DiskView for IdleDisks {
    fn outstanding(&self, _disk: u32) -> u32 {
        0
    }
    fn head_bytes(&self, _disk: u32) -> u64 {
        0
    }
}

impl Node {
    pub fn new(level: Level, chunk_bytes: u64, members: Vec<Member>) -> Node {
        Node {
            level,
            chunk_bytes,
            members,
            failed: Vec::new(),
            parity_write: ParityWrite::Auto,
            raid10: None,
        }
    }

    /// md RAID 10 over consecutive disks `first..first + n` with `layout`'s copies.
    pub fn md_raid10(layout: Raid10Layout, chunk_bytes: u64, first: u32, n: u32) -> Node {
        Node {
            raid10: Some(layout),
            ..Node::over_disks(Level::Raid10, chunk_bytes, first, n)
        }
    }

    /// RAID 10's copies (md's default `n2` when unset).
    fn raid10_layout(&self) -> Raid10Layout {
        self.raid10.unwrap_or_default()
    }

    /// A flat node over consecutive disks `first..first + n`.
    pub fn over_disks(level: Level, chunk_bytes: u64, first: u32, n: u32) -> Node {
        Node::new(
            level,
            chunk_bytes,
            (first..first + n).map(Member::Disk).collect(),
        )
    }

    /// Checks member counts, chunk sizes and failures, recursively.
    pub fn validate(&self, devices: usize) -> Result<(), LayoutError> {
        let level = self.level.name();
        let min = match self.level {
            Level::Concat | Level::Raid0 => 1,
            Level::Raid1 => 2,
            Level::Raid5 => 3,
            Level::Raid6 => 4,
            Level::Raid10 => self.raid10_layout().copies().max(2) as usize,
        };
        if self.level == Level::Raid10 {
            let r = self.raid10_layout();
            if r.near == 0 || r.far == 0 || (r.near > 1 && r.far > 1) {
                return Err(LayoutError::Raid10Copies {
                    near: r.near,
                    far: r.far,
                });
            }
        }
        if self.members.len() < min {
            return Err(LayoutError::TooFewMembers {
                level,
                min,
                got: self.members.len(),
            });
        }
        if matches!(
            self.level,
            Level::Raid0 | Level::Raid5 | Level::Raid6 | Level::Raid10
        ) && (self.chunk_bytes == 0 || self.chunk_bytes % 512 != 0)
        {
            return Err(LayoutError::BadChunk {
                level,
                chunk_bytes: self.chunk_bytes,
            });
        }
        let mut failed = self.failed.clone();
        failed.sort_unstable();
        failed.dedup();
        if let Some(&index) = failed.iter().find(|&&i| i >= self.members.len()) {
            return Err(LayoutError::FailedOutOfRange {
                level,
                index,
                members: self.members.len(),
            });
        }
        let tolerance = self
            .level
            .tolerance(self.members.len(), self.raid10_layout().copies() as usize);
        // md's RAID 10 survives more failures than it guarantees: any whose every chunk keeps
        // a copy (the first `members` chunks show every placement).
        let raid10_lost = self.level == Level::Raid10 && {
            let r = self.raid10_layout();
            let n = self.members.len() as u64;
            (0..n).any(|c| {
                (0..r.copies()).all(|k| {
                    let (m, _) = r.copy(c * self.chunk_bytes, self.chunk_bytes, n, 0, k);
                    failed.contains(&(m as usize))
                })
            })
        };
        if (self.level != Level::Raid10 && failed.len() > tolerance) || raid10_lost {
            return Err(LayoutError::TooManyFailed {
                level,
                failed: failed.len(),
                tolerance,
            });
        }
        for m in &self.members {
            match m {
                Member::Disk(d) if *d as usize >= devices => {
                    return Err(LayoutError::NoSuchDisk { disk: *d, devices })
                }
                Member::Disk(_) => {}
                Member::Node(n) => n.validate(devices)?,
            }
        }
        Ok(())
    }

    fn member_capacity(m: &Member, disk_capacity: &dyn Fn(u32) -> u64) -> u64 {
        match m {
            Member::Disk(d) => disk_capacity(*d),
            Member::Node(n) => n.capacity_bytes(disk_capacity),
        }
    }

    /// Bytes each member contributes: the smallest member, rounded down to whole chunks for
    /// striped levels.
    pub(crate) fn per_member_bytes(&self, disk_capacity: &dyn Fn(u32) -> u64) -> u64 {
        let min = self
            .members
            .iter()
            .map(|m| Node::member_capacity(m, disk_capacity))
            .min()
            .unwrap_or(0);
        match self.level {
            Level::Raid0 | Level::Raid5 | Level::Raid6 => min - min % self.chunk_bytes.max(1),
            // Far copies split each member into `far` regions of whole chunks.
            Level::Raid10 => {
                let unit = self.chunk_bytes.max(1) * u64::from(self.raid10_layout().far.max(1));
                min - min % unit
            }
            _ => min,
        }
    }

    /// Usable logical capacity.
    pub fn capacity_bytes(&self, disk_capacity: &dyn Fn(u32) -> u64) -> u64 {
        let n = self.members.len() as u64;
        match self.level {
            Level::Concat => self
                .members
                .iter()
                .map(|m| Node::member_capacity(m, disk_capacity))
                .sum(),
            Level::Raid1 => self.per_member_bytes(disk_capacity),
            Level::Raid10 => {
                // Every copy of every chunk, over all members' chunks.
                let chunk = self.chunk_bytes.max(1);
                let chunks = self.per_member_bytes(disk_capacity) / chunk * n;
                chunks / u64::from(self.raid10_layout().copies().max(1)) * chunk
            }
            _ => {
                let data = n.saturating_sub(self.level.parity_members() as u64);
                self.per_member_bytes(disk_capacity) * data
            }
        }
    }

    /// Every disk in the subtree, in member order.
    pub fn disks(&self, out: &mut Vec<u32>) {
        for m in &self.members {
            match m {
                Member::Disk(d) => out.push(*d),
                Member::Node(n) => n.disks(out),
            }
        }
    }

    /// Where a rebuild reads the data it writes to failed member `member` at `member_offset`:
    /// the surviving members and their offsets, and how many bytes (at most `len`) those same
    /// sources serve. RAID 1 reads the first surviving member; RAID 10 the first surviving copy
    /// of the chunk (a far or offset copy lies elsewhere, so a piece ends at the chunk); RAID
    /// 5/6 every survivor at the same offset, the stripe's other blocks, from which md
    /// computes the lost one. `None` for a level without redundancy or an offset past the
    /// member's data.
    pub fn rebuild_sources(
        &self,
        member: usize,
        member_offset: u64,
        len: u64,
        disk_capacity: &dyn Fn(u32) -> u64,
    ) -> Option<(Vec<(usize, u64)>, u64)> {
        let per = self.per_member_bytes(disk_capacity);
        if member_offset >= per || len == 0 {
            return None;
        }
        let len = len.min(per - member_offset);
        let survivors = || (0..self.members.len()).filter(|&m| m != member && !self.is_failed(m));
        match self.level {
            Level::Raid1 => Some((vec![(survivors().next()?, member_offset)], len)),
            Level::Raid5 | Level::Raid6 => {
                Some((survivors().map(|m| (m, member_offset)).collect(), len))
            }
            Level::Raid10 => {
                let chunk = self.chunk_bytes.max(1);
                let len = len.min(chunk - member_offset % chunk);
                let logical = self.logical_at(member, member_offset, disk_capacity)?;
                let r = self.raid10_layout();
                let n = self.members.len() as u64;
                let source = (0..r.copies()).find_map(|k| {
                    let (m, at) = r.copy(logical, chunk, n, per, k);
                    let m = m as usize;
                    (m != member && !self.is_failed(m)).then_some((m, at))
                })?;
                Some((vec![source], len))
            }
            Level::Concat | Level::Raid0 => None,
        }
    }

    fn is_failed(&self, member: usize) -> bool {
        self.failed.contains(&member)
    }

    /// Turns a logical request on this node into disk commands appended to `out`; returns the
    /// number of parity chunks computed (for the controller's parity-engine ceiling).
    #[allow(clippy::too_many_arguments)]
    pub fn expand(
        &self,
        write: bool,
        offset_bytes: u64,
        len_bytes: u64,
        phase: u8,
        view: &dyn DiskView,
        disk_capacity: &dyn Fn(u32) -> u64,
        out: &mut Vec<DiskOp>,
    ) -> u32 {
        if len_bytes == 0 {
            return 0;
        }
        match self.level {
            Level::Concat => {
                let mut parity = 0;
                let mut base = 0u64;
                let end = offset_bytes + len_bytes;
                for m in &self.members {
                    let cap = Node::member_capacity(m, disk_capacity);
                    let lo = offset_bytes.max(base);
                    let hi = end.min(base + cap);
                    if lo < hi {
                        parity += emit(
                            m,
                            write,
                            lo - base,
                            hi - lo,
                            phase,
                            view,
                            disk_capacity,
                            out,
                        );
                    }
                    base += cap;
                    if base >= end {
                        break;
                    }
                }
                parity
            }
            Level::Raid0 => {
                let mut parity = 0;
                let chunk = self.chunk_bytes;
                let n = self.members.len() as u64;
                let mut off = offset_bytes;
                let end = offset_bytes + len_bytes;
                while off < end {
                    let c = off / chunk;
                    let in_chunk = off % chunk;
                    let take = (chunk - in_chunk).min(end - off);
                    let member = (c % n) as usize;
                    let member_off = (c / n) * chunk + in_chunk;
                    parity += emit(
                        &self.members[member],
                        write,
                        member_off,
                        take,
                        phase,
                        view,
                        disk_capacity,
                        out,
                    );
                    off += take;
                }
                parity
            }
            Level::Raid1 => {
                if write {
                    let mut parity = 0;
                    for (i, m) in self.members.iter().enumerate() {
                        if !self.is_failed(i) {
                            parity += emit(
                                m,
                                true,
                                offset_bytes,
                                len_bytes,
                                phase,
                                view,
                                disk_capacity,
                                out,
                            );
                        }
                    }
                    parity
                } else {
                    let pick = self.pick_mirror(offset_bytes, view);
                    emit(
                        &self.members[pick],
                        false,
                        offset_bytes,
                        len_bytes,
                        phase,
                        view,
                        disk_capacity,
                        out,
                    )
                }
            }
            Level::Raid10 => {
                let r = self.raid10_layout();
                let n = self.members.len() as u64;
                let chunk = self.chunk_bytes;
                let member_bytes = self.per_member_bytes(disk_capacity);
                // md splits at chunk boundaries unless every member holds a near copy.
                let whole = r.far == 1 && u64::from(r.near) == n;
                let mut parity = 0;
                let mut off = offset_bytes;
                let end = offset_bytes + len_bytes;
                while off < end {
                    let take = if whole {
                        end - off
                    } else {
                        (chunk - off % chunk).min(end - off)
                    };
                    let copy = |k| {
                        let (m, at) = r.copy(off, chunk, n, member_bytes, k);
                        (m as usize, at)
                    };
                    // A write goes to every surviving copy, a read to the one md picks.
                    let picked = if write {
                        None
                    } else {
                        self.pick_copy(r, copy, view)
                    };
                    let targets = (0..r.copies())
                        .map(copy)
                        .filter(|&(m, _)| write && !self.is_failed(m))
                        .chain(picked);
                    for (m, at) in targets {
                        parity += emit(
                            &self.members[m],
                            write,
                            at,
                            take,
                            phase,
                            view,
                            disk_capacity,
                            out,
                        );
                    }
                    off += take;
                }
                parity
            }
            Level::Raid5 | Level::Raid6 => {
                let mut parity = 0;
                let chunk = self.chunk_bytes;
                let k = (self.members.len() - self.level.parity_members()) as u64;
                let stripe_bytes = chunk * k;
                let mut off = offset_bytes;
                let end = offset_bytes + len_bytes;
                while off < end {
                    let stripe = off / stripe_bytes;
                    let stripe_end = (stripe + 1) * stripe_bytes;
                    let take_end = end.min(stripe_end);
                    parity += self.parity_stripe(
                        write,
                        stripe,
                        off - stripe * stripe_bytes,
                        take_end - off,
                        phase,
                        view,
                        disk_capacity,
                        out,
                    );
                    off = take_end;
                }
                parity
            }
        }
    }

    /// The RAID 1 copy a read of `offset_bytes` goes to ([`ReadBalance`]).
    fn pick_mirror(&self, offset_bytes: u64, view: &dyn DiskView) -> usize {
        let copies = (0..self.members.len()).map(|i| (i, offset_bytes));
        self.choose_copy(copies, Mirrors::Raid1, view)
            .map_or(0, |(i, _)| i)
    }

    /// The RAID 10 copy a read goes to ([`ReadBalance`]); `None` when every copy failed
    /// (validation refuses such arrays).
    fn pick_copy(
        &self,
        r: Raid10Layout,
        copy: impl Fn(u32) -> (usize, u64) + Clone,
        view: &dyn DiskView,
    ) -> Option<(usize, u64)> {
        let kind = if r.far > 1 {
            Mirrors::Far
        } else {
            Mirrors::Near
        };
        self.choose_copy((0..r.copies()).map(copy), kind, view)
    }

    /// Chooses among the surviving `copies` (member index, offset on it), in copy order.
    fn choose_copy(
        &self,
        copies: impl Iterator<Item = (usize, u64)> + Clone,
        kind: Mirrors,
        view: &dyn DiskView,
    ) -> Option<(usize, u64)> {
        let alive = copies.filter(|&(m, _)| !self.is_failed(m));
        let disk = |m: usize| first_disk(&self.members[m]);
        let pending = |m: usize| view.outstanding(disk(m));
        let distance = |m: usize, at: u64| view.head_bytes(disk(m)).abs_diff(at);
        if view.read_balance() == ReadBalance::LeastLoaded {
            // `min_by_key` keeps the first of equal keys: member order breaks ties.
            return alive.min_by_key(|&(m, at)| (pending(m), distance(m, at)));
        }
        if kind == Mirrors::Raid1 {
            // A read that continues the last one on a disk stays there.
            if let Some(c) = alive.clone().find(|&(m, at)| distance(m, at) == 0) {
                return Some(c);
            }
        }
        let nonrot = alive.clone().any(|(m, _)| !view.rotational(disk(m)));
        let least_pending = alive.clone().min_by_key(|&(m, _)| pending(m));
        match kind {
            _ if nonrot => least_pending,
            Mirrors::Far => alive.min_by_key(|&(_, at)| at),
            Mirrors::Raid1 | Mirrors::Near => {
                if least_pending.is_some_and(|(m, _)| pending(m) == 0) {
                    least_pending
                } else {
                    alive.min_by_key(|&(m, at)| distance(m, at))
                }
            }
        }
    }

    /// Member holding data chunk `j` of `stripe` (left-symmetric: the data follows the parity).
    #[inline]
    pub fn data_member(&self, stripe: u64, j: usize) -> usize {
        let n = self.members.len();
        let p = n - 1 - (stripe % n as u64) as usize;
        (p + self.level.parity_members() + j) % n
    }

    /// Member holding parity `i` (0 = P, 1 = Q) of `stripe`.
    #[inline]
    pub fn parity_member(&self, stripe: u64, i: usize) -> usize {
        let n = self.members.len();
        let p = n - 1 - (stripe % n as u64) as usize;
        (p + i) % n
    }

    /// Members holding the data chunks of `stripe` in order, and its parity members.
    pub fn parity_placement(&self, stripe: u64) -> (Vec<usize>, Vec<usize>) {
        let n = self.members.len();
        let p = n - 1 - (stripe % n as u64) as usize;
        let parities = self.level.parity_members();
        let parity: Vec<usize> = (0..parities).map(|i| (p + i) % n).collect();
        let data: Vec<usize> = (0..n - parities).map(|j| (p + parities + j) % n).collect();
        (data, parity)
    }

    #[allow(clippy::too_many_arguments)]
    fn parity_stripe(
        &self,
        write: bool,
        stripe: u64,
        in_stripe: u64,
        len: u64,
        phase: u8,
        view: &dyn DiskView,
        cap: &dyn Fn(u32) -> u64,
        out: &mut Vec<DiskOp>,
    ) -> u32 {
        let chunk = self.chunk_bytes;
        let base = stripe * chunk;
        // Touched data chunks: (data index, in-chunk start, in-chunk end).
        let first = in_stripe / chunk;
        let last = (in_stripe + len - 1) / chunk;
        let touched = |j: u64| -> (u64, u64) {
            let lo = if j == first { in_stripe % chunk } else { 0 };
            let hi = if j == last {
                (in_stripe + len - 1) % chunk + 1
            } else {
                chunk
            };
            (lo, hi)
        };
        // The rows (in-chunk byte range) the request covers in any chunk.
        let (row_lo, row_hi) = if first == last {
            touched(first)
        } else {
            (0, chunk)
        };
        let mut parity_count = 0;
        if !write {
            for j in first..=last {
                let (lo, hi) = touched(j);
                let member = self.data_member(stripe, j as usize);
                if !self.is_failed(member) {
                    parity_count += emit(
                        &self.members[member],
                        false,
                        base + lo,
                        hi - lo,
                        phase,
                        view,
                        cap,
                        out,
                    );
                } else {
                    // Reconstruct from every surviving member of the stripe.
                    for (i, m) in self.members.iter().enumerate() {
                        if i != member && !self.is_failed(i) {
                            parity_count +=
                                emit(m, false, base + lo, hi - lo, phase, view, cap, out);
                        }
                    }
                }
            }
            return parity_count;
        }
        let parities = self.level.parity_members();
        let k = (self.members.len() - parities) as u64;
        let data = |j: u64| self.data_member(stripe, j as usize);
        let full_stripe =
            first == 0 && last == k - 1 && touched(first).0 == 0 && touched(last).1 == chunk;
        let alive_parities = (0..parities)
            .filter(|&i| !self.is_failed(self.parity_member(stripe, i)))
            .count();
        let write_phase = if full_stripe || alive_parities == 0 {
            phase
        } else {
            phase.saturating_add(1)
        };
        if !full_stripe && alive_parities > 0 {
            let touched_failed = (first..=last).any(|j| self.is_failed(data(j)));
            let untouched = || (0..k).filter(|j| *j < first || *j > last);
            let untouched_failed = untouched().any(|j| self.is_failed(data(j)));
            let rmw_reads = (last - first + 1) as usize + alive_parities;
            let partial_ends =
                usize::from(touched(first).0 > row_lo) + usize::from(touched(last).1 < row_hi);
            let rcw_reads = untouched().count() + partial_ends;
            let use_rmw = match (touched_failed, untouched_failed) {
                (true, _) => false,
                (false, true) => true,
                _ => match self.parity_write {
                    ParityWrite::ReadModifyWrite => true,
                    ParityWrite::ReconstructWrite => false,
                    ParityWrite::Auto => rmw_reads < rcw_reads,
                },
            };
            if use_rmw {
                for j in first..=last {
                    let (lo, hi) = touched(j);
                    parity_count += emit(
                        &self.members[data(j)],
                        false,
                        base + lo,
                        hi - lo,
                        phase,
                        view,
                        cap,
                        out,
                    );
                }
                for i in 0..parities {
                    let p = self.parity_member(stripe, i);
                    if !self.is_failed(p) {
                        parity_count += emit(
                            &self.members[p],
                            false,
                            base + row_lo,
                            row_hi - row_lo,
                            phase,
                            view,
                            cap,
                            out,
                        );
                    }
                }
            } else {
                for j in 0..k {
                    let member = data(j);
                    if self.is_failed(member) {
                        continue;
                    }
                    let m = &self.members[member];
                    if j < first || j > last {
                        parity_count += emit(
                            m,
                            false,
                            base + row_lo,
                            row_hi - row_lo,
                            phase,
                            view,
                            cap,
                            out,
                        );
                    } else {
                        // Partially covered end chunks need their untouched rows too.
                        let (lo, hi) = touched(j);
                        if lo > row_lo {
                            parity_count +=
                                emit(m, false, base + row_lo, lo - row_lo, phase, view, cap, out);
                        }
                        if hi < row_hi {
                            parity_count +=
                                emit(m, false, base + hi, row_hi - hi, phase, view, cap, out);
                        }
                    }
                }
            }
        }
        for j in first..=last {
            let (lo, hi) = touched(j);
            let member = data(j);
            if !self.is_failed(member) {
                parity_count += emit(
                    &self.members[member],
                    true,
                    base + lo,
                    hi - lo,
                    write_phase,
                    view,
                    cap,
                    out,
                );
            }
        }
        for i in 0..parities {
            let p = self.parity_member(stripe, i);
            if !self.is_failed(p) {
                parity_count += 1 + emit(
                    &self.members[p],
                    true,
                    base + row_lo,
                    row_hi - row_lo,
                    write_phase,
                    view,
                    cap,
                    out,
                );
            }
        }
        parity_count
    }

    /// Where logical byte `offset` lives: the member index and the offset inside it (the
    /// first copy for mirrors). `None` past the end.
    pub fn locate(
        &self,
        offset_bytes: u64,
        disk_capacity: &dyn Fn(u32) -> u64,
    ) -> Option<(usize, u64)> {
        if offset_bytes >= self.capacity_bytes(disk_capacity) {
            return None;
        }
        match self.level {
            Level::Concat => {
                let mut base = 0;
                for (i, m) in self.members.iter().enumerate() {
                    let c = Node::member_capacity(m, disk_capacity);
                    if offset_bytes < base + c {
                        return Some((i, offset_bytes - base));
                    }
                    base += c;
                }
                None
            }
            Level::Raid1 => Some((0, offset_bytes)),
            Level::Raid10 => {
                let (m, at) = self.raid10_layout().copy(
                    offset_bytes,
                    self.chunk_bytes,
                    self.members.len() as u64,
                    self.per_member_bytes(disk_capacity),
                    0,
                );
                Some((m as usize, at))
            }
            Level::Raid0 => {
                let n = self.members.len() as u64;
                let c = offset_bytes / self.chunk_bytes;
                Some((
                    (c % n) as usize,
                    (c / n) * self.chunk_bytes + offset_bytes % self.chunk_bytes,
                ))
            }
            Level::Raid5 | Level::Raid6 => {
                let k = (self.members.len() - self.level.parity_members()) as u64;
                let stripe_bytes = self.chunk_bytes * k;
                let stripe = offset_bytes / stripe_bytes;
                let j = (offset_bytes % stripe_bytes) / self.chunk_bytes;
                Some((
                    self.data_member(stripe, j as usize),
                    stripe * self.chunk_bytes + offset_bytes % self.chunk_bytes,
                ))
            }
        }
    }

    /// The inverse of [`Node::locate`]: the logical byte stored at `member_offset` of member
    /// `member`, or `None` when that byte holds parity (or is past the end).
    pub fn logical_at(
        &self,
        member: usize,
        member_offset: u64,
        disk_capacity: &dyn Fn(u32) -> u64,
    ) -> Option<u64> {
        let n = self.members.len() as u64;
        let per = self.per_member_bytes(disk_capacity);
        if member >= self.members.len() || (self.level != Level::Concat && member_offset >= per) {
            return None;
        }
        match self.level {
            Level::Concat => {
                let base: u64 = self.members[..member]
                    .iter()
                    .map(|m| Node::member_capacity(m, disk_capacity))
                    .sum();
                (member_offset < Node::member_capacity(&self.members[member], disk_capacity))
                    .then_some(base + member_offset)
            }
            Level::Raid1 => Some(member_offset),
            Level::Raid10 => {
                let r = self.raid10_layout();
                let chunk = self.chunk_bytes;
                let (near, far) = (u64::from(r.near.max(1)), u64::from(r.far.max(1)));
                let within = member_offset % chunk;
                // Which far copy (0 for near layouts) and which row of slots it is.
                let (f, row) = if far == 1 {
                    (0, member_offset / chunk)
                } else if r.offset {
                    let rows = member_offset / chunk;
                    (rows % far, rows / far)
                } else {
                    let stride = per / far;
                    (member_offset / stride, member_offset % stride / chunk)
                };
                // The first copy's member, then the slot (chunk × near + near copy) it is.
                let first = (member as u64 + n - f * near % n) % n;
                let c = (row * n + first) / near;
                let logical = c * chunk + within;
                (logical < self.capacity_bytes(disk_capacity)).then_some(logical)
            }
            Level::Raid0 => {
                let row = member_offset / self.chunk_bytes;
                Some(
                    (row * n + member as u64) * self.chunk_bytes + member_offset % self.chunk_bytes,
                )
            }
            Level::Raid5 | Level::Raid6 => {
                let stripe = member_offset / self.chunk_bytes;
                let k = (self.members.len() - self.level.parity_members()) as u64;
                let j = (0..k).find(|&j| self.data_member(stripe, j as usize) == member)?;
                Some(
                    stripe * k * self.chunk_bytes
                        + j * self.chunk_bytes
                        + member_offset % self.chunk_bytes,
                )
            }
        }
    }
}

fn first_disk(m: &Member) -> u32 {
    match m {
        Member::Disk(d) => *d,
        Member::Node(n) => n.members.first().map(first_disk).unwrap_or(0),
    }
}

#[allow(clippy::too_many_arguments)]
fn emit(
    m: &Member,
    write: bool,
    offset_bytes: u64,
    len_bytes: u64,
    phase: u8,
    view: &dyn DiskView,
    cap: &dyn Fn(u32) -> u64,
    out: &mut Vec<DiskOp>,
) -> u32 {
    match m {
        Member::Disk(d) => {
            // Member requests never exceed a chunk or the logical request, which is a u32.
            let mut off = offset_bytes;
            let mut left = len_bytes;
            while left > 0 {
                let take = left.min(MAX_COMMAND_BYTES);
                out.push(DiskOp {
                    disk: *d,
                    offset_bytes: off,
                    len_bytes: take as u32,
                    write,
                    phase,
                });
                off += take;
                left -= take;
            }
            0
        }
        Member::Node(n) => n.expand(write, offset_bytes, len_bytes, phase, view, cap, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DISK: u64 = 1 << 30;
    fn cap(_: u32) -> u64 {
        DISK
    }

    fn raid10(pairs: u32) -> Node {
        Node::new(
            Level::Raid0,
            65536,
            (0..pairs)
                .map(|p| Member::Node(Box::new(Node::over_disks(Level::Raid1, 0, p * 2, 2))))
                .collect(),
        )
    }

    fn far(copies: u32) -> Raid10Layout {
        Raid10Layout {
            near: 1,
            far: copies,
            offset: false,
        }
    }

    fn ops(node: &Node, write: bool, off: u64, len: u64) -> Vec<DiskOp> {
        let mut out = Vec::new();
        node.expand(write, off, len, 0, &IdleDisks, &cap, &mut out);
        out
    }

    #[test]
    fn capacities() {
        assert_eq!(
            Node::over_disks(Level::Raid5, 65536, 0, 4).capacity_bytes(&cap),
            3 * DISK
        );
        assert_eq!(
            Node::over_disks(Level::Raid6, 65536, 0, 6).capacity_bytes(&cap),
            4 * DISK
        );
        assert_eq!(
            Node::over_disks(Level::Raid1, 0, 0, 2).capacity_bytes(&cap),
            DISK
        );
        assert_eq!(
            Node::over_disks(Level::Concat, 0, 0, 3).capacity_bytes(&cap),
            3 * DISK
        );
        assert_eq!(raid10(4).capacity_bytes(&cap), 4 * DISK);
    }

    #[test]
    fn left_symmetric_parity_rotates_over_every_member() {
        let n = Node::over_disks(Level::Raid5, 65536, 0, 5);
        let mut seen = [0; 5];
        for s in 0..5 {
            let (data, parity) = n.parity_placement(s);
            assert_eq!(parity.len(), 1);
            seen[parity[0]] += 1;
            // Left-symmetric: the first data chunk follows the parity chunk.
            assert_eq!(data[0], (parity[0] + 1) % 5);
            let mut all: Vec<usize> = data.iter().chain(parity.iter()).copied().collect();
            all.sort_unstable();
            assert_eq!(all, vec![0, 1, 2, 3, 4]);
        }
        assert_eq!(seen, [1; 5]);
        for s in 0..10 {
            let (data, parity) = n.parity_placement(s);
            assert!(data
                .iter()
                .enumerate()
                .all(|(j, &m)| n.data_member(s, j) == m));
            assert_eq!(n.parity_member(s, 0), parity[0]);
        }
        assert_eq!(n.parity_placement(0).1, vec![4]);
        let r6 = Node::over_disks(Level::Raid6, 65536, 0, 6);
        let (_, pq) = r6.parity_placement(0);
        assert_eq!(pq, vec![5, 0]);
    }

    #[test]
    fn small_writes_choose_rmw_or_rcw_like_md() {
        // 4-disk RAID 5: 1 chunk touched -> RMW needs 2 reads, RCW needs 2: md picks RCW on a
        // tie (rmw < rcw is false).
        let r5 = Node::over_disks(Level::Raid5, 65536, 0, 4);
        let o = ops(&r5, true, 0, 4096);
        assert_eq!(o.iter().filter(|d| !d.write).count(), 2);
        assert_eq!(o.iter().filter(|d| d.write).count(), 2);
        // 8-disk RAID 5: RMW (2 reads) beats RCW (6 reads).
        let r5 = Node::over_disks(Level::Raid5, 65536, 0, 8);
        let o = ops(&r5, true, 0, 4096);
        assert_eq!(o.iter().filter(|d| !d.write).count(), 2);
        assert!(o.iter().filter(|d| d.write).all(|d| d.phase == 1));
        assert!(o.iter().filter(|d| !d.write).all(|d| d.phase == 0));
        // Full-stripe write: no reads, one phase.
        let o = ops(&r5, true, 0, 7 * 65536);
        assert_eq!(o.iter().filter(|d| !d.write).count(), 0);
        assert_eq!(o.len(), 8);
        let mut forced = r5.clone();
        forced.parity_write = ParityWrite::ReconstructWrite;
        assert_eq!(
            ops(&forced, true, 0, 4096)
                .iter()
                .filter(|d| !d.write)
                .count(),
            6
        );
    }

    #[test]
    fn degraded_reads_reconstruct_and_raid0_failures_are_rejected() {
        let mut r5 = Node::over_disks(Level::Raid5, 65536, 0, 4);
        r5.failed = vec![0];
        r5.validate(4).expect("one failure is fine");
        // Stripe 0: parity on member 3, data 0 on member 0 (failed).
        let o = ops(&r5, false, 0, 4096);
        assert_eq!(o.len(), 3);
        assert!(o.iter().all(|d| d.disk != 0));
        let o = ops(&r5, true, 0, 4096);
        assert!(o.iter().all(|d| d.disk != 0));
        r5.failed = vec![0, 1];
        assert!(r5.validate(4).is_err());
        let mut r0 = Node::over_disks(Level::Raid0, 65536, 0, 2);
        r0.failed = vec![1];
        assert!(r0.validate(2).is_err());
    }

    #[test]
    fn mirror_reads_prefer_idle_then_nearest() {
        struct View;
        impl DiskView for View {
            fn outstanding(&self, d: u32) -> u32 {
                u32::from(d == 0)
            }
            fn head_bytes(&self, _: u32) -> u64 {
                0
            }
        }
        let r1 = Node::over_disks(Level::Raid1, 0, 0, 2);
        let mut out = Vec::new();
        r1.expand(false, 0, 4096, 0, &View, &cap, &mut out);
        assert_eq!(out[0].disk, 1);
    }

    /// Disks with given pending counts and head positions, balanced as md or by load.
    struct Disks {
        pending: Vec<u32>,
        heads: Vec<u64>,
        rotational: bool,
        md: bool,
    }

    impl DiskView for Disks {
        fn outstanding(&self, d: u32) -> u32 {
            self.pending[d as usize]
        }
        fn head_bytes(&self, d: u32) -> u64 {
            self.heads[d as usize]
        }
        fn read_balance(&self) -> ReadBalance {
            if self.md {
                ReadBalance::Md
            } else {
                ReadBalance::LeastLoaded
            }
        }
        fn rotational(&self, _: u32) -> bool {
            self.rotational
        }
    }

    #[test]
    fn md_reads_mirrors_as_its_read_balance_does() {
        let read = |node: &Node, off: u64, pending: [u32; 4], heads: [u64; 4], rot, md| {
            let view = Disks {
                pending: pending.to_vec(),
                heads: heads.to_vec(),
                rotational: rot,
                md,
            };
            let mut out = Vec::new();
            node.expand(false, off, 4096, 0, &view, &cap, &mut out);
            (out[0].disk, out[0].offset_bytes)
        };
        let r1 = Node::over_disks(Level::Raid1, 0, 0, 2);
        let far_head = [0, 1 << 20, 0, 0];
        // Both idle: md reads the first disk; balancing by load, the nearest head.
        let near_disk_1 = (1 << 20) + 65536;
        assert_eq!(read(&r1, near_disk_1, [0; 4], far_head, true, true).0, 0);
        assert_eq!(read(&r1, near_disk_1, [0; 4], far_head, true, false).0, 1);
        // A read continuing the last on disk 1 stays there, busy or not.
        assert_eq!(read(&r1, 1 << 20, [0, 3, 0, 0], far_head, true, true).0, 1);
        // Both busy on hard disks: the nearest head, whatever the queues.
        let heads = [1 << 30, 1 << 20, 0, 0];
        let near_disk_0 = (1 << 30) + 65536;
        assert_eq!(read(&r1, near_disk_0, [5, 1, 0, 0], heads, true, true).0, 0);
        // On SSDs: the fewest pending.
        assert_eq!(
            read(&r1, near_disk_0, [5, 1, 0, 0], heads, false, true).0,
            1
        );
        // One idle: it, though the other's head is nearer.
        assert_eq!(
            read(&r1, 1 << 30 | 4096, [2, 0, 0, 0], heads, true, true).0,
            1
        );
        // md RAID 10 near copies (n2 on 3 disks, chunk 0 on disks 0 and 1): an idle copy at
        // once; far copies (f2 on 4 disks) at their lowest address on hard disks, even busy,
        // and by pending requests on SSDs.
        let near = Node::md_raid10(Raid10Layout::default(), 65536, 0, 3);
        assert_eq!(read(&near, 0, [1, 0, 0, 0], [0; 4], true, true).0, 1);
        assert_eq!(read(&near, 0, [0, 0, 0, 0], [9, 0, 0, 0], true, true).0, 0);
        let f2 = Node::md_raid10(far(2), 65536, 0, 4);
        let capacity = f2.capacity_bytes(&cap);
        assert_eq!(capacity, 2 * DISK);
        assert_eq!(read(&f2, 0, [7, 0, 0, 0], [0; 4], true, true), (0, 0));
        assert_eq!(
            read(&f2, 0, [7, 0, 0, 0], [0; 4], false, true),
            (1, DISK / 2)
        );
    }

    fn layouts() -> Vec<(Node, usize, usize)> {
        // (layout, copies a written data byte has, parity chunks a small write updates)
        vec![
            (Node::over_disks(Level::Concat, 0, 0, 3), 1, 0),
            (Node::over_disks(Level::Raid0, 65536, 0, 5), 1, 0),
            (Node::over_disks(Level::Raid1, 0, 0, 3), 3, 0),
            (Node::over_disks(Level::Raid5, 16384, 0, 5), 1, 1),
            (Node::over_disks(Level::Raid6, 32768, 0, 6), 1, 2),
            (raid10(3), 2, 0),
            (Node::md_raid10(Raid10Layout::default(), 65536, 0, 3), 2, 0),
            (Node::md_raid10(far(2), 32768, 0, 4), 2, 0),
            (
                Node::md_raid10(
                    Raid10Layout {
                        offset: true,
                        ..far(2)
                    },
                    65536,
                    0,
                    5,
                ),
                2,
                0,
            ),
            (
                Node::md_raid10(
                    Raid10Layout {
                        near: 3,
                        ..Raid10Layout::default()
                    },
                    16384,
                    0,
                    4,
                ),
                3,
                0,
            ),
            (Node::md_raid10(far(3), 65536, 0, 3), 3, 0),
            (
                Node::new(
                    Level::Raid0,
                    131072,
                    vec![
                        Member::Node(Box::new(Node::over_disks(Level::Raid5, 65536, 0, 4))),
                        Member::Node(Box::new(Node::over_disks(Level::Raid5, 65536, 4, 4))),
                    ],
                ),
                1,
                1,
            ),
        ]
    }

    proptest! {
        #[test]
        fn locate_and_logical_at_round_trip(idx in 0usize..12, frac in 0.0f64..1.0) {
            let (node, _, _) = layouts().swap_remove(idx);
            let capacity = node.capacity_bytes(&cap);
            let off = ((capacity as f64 * frac) as u64).min(capacity - 1);
            let (member, member_off) = node.locate(off, &cap).expect("inside");
            prop_assert_eq!(node.logical_at(member, member_off, &cap), Some(off));
        }

        #[test]
        fn every_byte_goes_to_the_right_number_of_disks(idx in 0usize..12, frac in 0.0f64..1.0, len_sectors in 1u64..64) {
            let (node, copies, parities) = layouts().swap_remove(idx);
            let capacity = node.capacity_bytes(&cap);
            let len = len_sectors * 512;
            let off = (((capacity - len) as f64 * frac) as u64) / 512 * 512;
            // A read touches each byte exactly once.
            let reads = ops(&node, false, off, len);
            prop_assert_eq!(reads.iter().map(|d| u64::from(d.len_bytes)).sum::<u64>(), len);
            prop_assert!(reads.iter().all(|d| !d.write));
            // A write puts each data byte on `copies` disks, plus parity.
            let writes = ops(&node, true, off, len);
            let data_bytes: u64 = writes.iter().filter(|d| d.write).map(|d| u64::from(d.len_bytes)).sum();
            prop_assert!(data_bytes >= len * copies as u64);
            if parities == 0 {
                prop_assert_eq!(data_bytes, len * copies as u64);
                prop_assert!(writes.iter().all(|d| d.write));
            } else {
                let mut disks: Vec<u32> = writes.iter().filter(|d| d.write).map(|d| d.disk).collect();
                disks.sort_unstable();
                disks.dedup();
                prop_assert!(disks.len() > parities);
            }
            // No two writes of one request overlap on one disk.
            let mut w: Vec<(u32, u64, u64)> = writes.iter().filter(|d| d.write).map(|d| (d.disk, d.offset_bytes, d.offset_bytes + u64::from(d.len_bytes))).collect();
            w.sort_unstable();
            for pair in w.windows(2) {
                prop_assert!(pair[0].0 != pair[1].0 || pair[0].2 <= pair[1].1);
            }
        }
    }
}
