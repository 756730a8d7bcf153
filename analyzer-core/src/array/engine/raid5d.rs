//! Linux md's RAID 5/6 server: the stripe model that decides each member's I/O and the
//! `raid5d` thread (plus its `group_thread_cnt` workers) whose stripe-head handling the
//! request's member I/O waits for.

use super::{Engine, HostIo};
use crate::array::controller::MdSettings;
use crate::array::layout::{DiskOp, Level, Member, Node, MAX_COMMAND_BYTES};
use crate::array::md::{MdConfig, MdLevel, MdModel, MdOp};
use crate::event::{IoEvent, Op};

/// The md RAID 5/6 state of a software array: the stripe model that decides member I/O and the
/// threads that handle stripe heads.
pub(super) struct MdTiming {
    pub(super) model: MdModel,
    /// Layout member → device index.
    pub(super) disk_of: Vec<u32>,
    pub(super) settings: MdSettings,
    /// When each handling thread is next free (`raid5d` first).
    pub(super) threads_free_at_nanos: Vec<f64>,
    pub(super) busy_nanos: f64,
    pub(super) heads: u64,
    pub(super) ops: Vec<MdOp>,
}

impl MdTiming {
    /// md's model for a flat, healthy RAID 5/6 over disks; `None` for anything md's RAID 5/6
    /// code would not run as modelled (nested nodes, degraded arrays, chunks that are not
    /// whole pages), which keeps the layout's generic rule.
    pub(super) fn for_layout(node: &Node, settings: &MdSettings) -> Option<MdTiming> {
        let level = match node.level {
            Level::Raid5 => MdLevel::Raid5,
            Level::Raid6 => MdLevel::Raid6,
            _ => return None,
        };
        if !node.failed.is_empty() {
            return None;
        }
        let disk_of: Vec<u32> = node
            .members
            .iter()
            .map(|m| match m {
                Member::Disk(d) => Some(*d),
                Member::Node(_) => None,
            })
            .collect::<Option<_>>()?;
        let mut config = MdConfig::new(level, disk_of.len() as u32, node.chunk_bytes);
        config.stripe_cache_size = settings.stripe_cache_size;
        config.group_thread_cnt = settings.group_thread_cnt;
        let mut model = MdModel::new(&config).ok()?;
        model.record_ops();
        Some(MdTiming {
            model,
            disk_of,
            threads_free_at_nanos: vec![0.0; settings.group_thread_cnt as usize + 1],
            settings: settings.clone(),
            busy_nanos: 0.0,
            heads: 0,
            ops: Vec::new(),
        })
    }
}

impl Engine {
    /// Runs one request through md's stripe model: fills `ops` with its member commands
    /// (pre-reads in phase 0, writes in phase 1; adjacent 4 KiB bios to one member merged into
    /// one command, as the block layer's plug merges them), counts md's bios per member, and
    /// returns when the threads handling its stripe heads are done with them (`None` when it
    /// handled none: reads go straight to the member, md's chunk-aligned read path).
    pub(super) fn md_expand(&mut self, io: HostIo, ops: &mut Vec<DiskOp>) -> Option<f64> {
        let measuring = self.measuring;
        let now = self.now as f64;
        let md = self.md.as_mut()?;
        let before = md.model.heads_handled();
        md.model.observe(&IoEvent {
            time_nanos: self.now,
            device: 0,
            offset_bytes: io.offset_bytes,
            len_bytes: io.len_bytes,
            op: if io.write { Op::Write } else { Op::Read },
            latency_nanos: None,
            pid: None,
        });
        let heads = md.model.heads_handled() - before;
        md.ops.clear();
        md.model.take_ops(&mut md.ops);
        for o in &md.ops {
            let disk = md.disk_of.get(o.member as usize).copied().unwrap_or(0);
            if measuring {
                self.disks[disk as usize].count(o.write, o.len_bytes);
            }
            ops.push(DiskOp {
                disk,
                offset_bytes: o.offset_bytes,
                len_bytes: o.len_bytes,
                write: o.write,
                phase: u8::from(o.write && io.write),
            });
        }
        ops.sort_by_key(|o| (o.phase, o.disk, o.offset_bytes));
        let mut merged = 0usize;
        for i in 0..ops.len() {
            let o = ops[i];
            if merged > 0 {
                let last = &mut ops[merged - 1];
                let end = last.offset_bytes + u64::from(last.len_bytes);
                if last.phase == o.phase
                    && last.disk == o.disk
                    && last.write == o.write
                    && end == o.offset_bytes
                    && u64::from(last.len_bytes) + u64::from(o.len_bytes) <= MAX_COMMAND_BYTES
                {
                    last.len_bytes += o.len_bytes;
                    continue;
                }
            }
            ops[merged] = o;
            merged += 1;
        }
        ops.truncate(merged);
        if heads == 0 {
            return None;
        }
        if measuring {
            md.heads += heads;
        }
        // Each head goes to the thread free first; the request's member I/O starts when its
        // last head has been handled.
        let cost = md.settings.stripe_cost_nanos.max(0.0);
        let mut done = now;
        if md.threads_free_at_nanos.len() == 1 {
            let t = md.threads_free_at_nanos[0].max(now) + heads as f64 * cost;
            md.threads_free_at_nanos[0] = t;
            done = t;
        } else {
            for _ in 0..heads {
                let (i, free) = md
                    .threads_free_at_nanos
                    .iter()
                    .copied()
                    .enumerate()
                    .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
                let t = free.max(now) + cost;
                md.threads_free_at_nanos[i] = t;
                done = done.max(t);
            }
        }
        if measuring {
            md.busy_nanos += heads as f64 * cost;
        }
        Some(done)
    }
}
