//! What a run measured: the per-device use, the latency summaries, the result of a run and
//! the bottleneck named in words; and the measurement window that bounds them.

use serde::{Deserialize, Serialize};

use super::Engine;
use crate::array::controller::ControllerModel;
use crate::array::histogram::Histogram;

/// Which set of devices a [`DiskUse`] belongs to: the array's members or the SSD cache tier's
/// devices. Serialised as `"array"` / `"cache"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Array,
    Cache,
}

impl Tier {
    /// The JSON name: `array` or `cache`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Array => "array",
            Tier::Cache => "cache",
        }
    }
}

/// Utilisation and load of one member device over the measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiskUse {
    pub index: u32,
    /// Which set of devices it belongs to (`"array"` or `"cache"` in JSON).
    pub tier: Tier,
    pub utilisation: f64,
    pub iops: f64,
    /// Reads and writes the RAID layer sent this device during the window, and their bytes
    /// (for Linux md RAID 5/6: md's bios, one per 4 KiB stripe page, as `--md-members`
    /// counts them; the timing merges adjacent ones into one command, as the block layer's
    /// plugging does).
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// Latency summary of the counted host requests.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub mean_nanos: f64,
    pub p50_nanos: u64,
    pub p95_nanos: u64,
    pub p99_nanos: u64,
}

/// What one simulation measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub requests: u64,
    pub elapsed_nanos: u64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub bytes_per_sec: f64,
    pub latency: Latency,
    pub read_latency: Latency,
    pub disks: Vec<DiskUse>,
    pub controller_utilisation: f64,
    pub parity_utilisation: f64,
    /// Linux md RAID 5/6 only: stripe heads handled during the window, and the busy share of
    /// the threads handling them (`raid5d` plus `group_thread_cnt` workers); 0 otherwise.
    pub md_stripe_heads: u64,
    pub raid5d_utilisation: f64,
    /// Member-disk commands issued during the window.
    pub backend_requests: u64,
    /// Open-loop requests that had to wait because too many were outstanding.
    pub throttled_requests: u64,
    /// The resource that limits throughput, in words.
    pub bottleneck: String,
    /// Linux md's write-intent bitmap, when the array has one (software RAID 1/5/6/10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_bitmap: Option<BitmapUse>,
    /// Linux md's superblock updates (safe mode: the array marked dirty before a write after
    /// an idle period, clean after one), each a write to every member counted in `disks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md_superblock: Option<SuperblockUse>,
    /// Linux md's recovery of failed members beside the load, when the run rebuilt
    /// (`--rebuilding`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuild: Option<super::RebuildUse>,
}

/// What md's superblock updates cost during the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuperblockUse {
    /// md's `safe_mode_delay` in nanoseconds (0: safe mode off).
    pub safe_mode_delay_nanos: u64,
    /// Updates started in the window (the one marking the array clean after the run
    /// included).
    pub updates: u64,
    /// Their writes to the members (the md superblock, and the bitmap's first page before it
    /// when the array has a bitmap).
    pub member_writes: u64,
}

/// What md's write-intent bitmap cost during the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BitmapUse {
    /// Bitmap chunk (bytes of a member for RAID 5/6, of the array for RAID 1/10) and bits.
    pub chunk_bytes: u64,
    pub chunks: u64,
    /// Unplugs that wrote bitmap pages (each held the writes waiting for it), and daemon
    /// passes that wrote pages of cleared bits.
    pub unplug_writes: u64,
    pub daemon_writes: u64,
    /// Bitmap page writes sent to the members (every page to every member), included in the
    /// members' `writes`.
    pub member_writes: u64,
    /// Share of the window during which an unplug was writing (writes to the array waiting;
    /// for RAID 5/6 `raid5d` too).
    pub unplug_busy: f64,
}

impl Engine {
    /// Restarts the measurement window at the current time (call after warm-up).
    pub fn start_measuring(&mut self) {
        self.measuring = true;
        self.window_start = self.now;
        self.window_end = None;
        self.hist = Histogram::new();
        self.read_hist = Histogram::new();
        self.reads_done = 0;
        self.writes_done = 0;
        self.bytes_done = 0;
        self.backend_ops = 0;
        self.ctrl_busy_nanos = 0.0;
        self.parity_busy_nanos = 0.0;
        for d in &mut self.disks {
            d.busy_nanos = 0.0;
            d.ops = 0;
            d.reads = 0;
            d.writes = 0;
            d.read_bytes = 0;
            d.write_bytes = 0;
        }
        if let Some(md) = &mut self.md {
            md.busy_nanos = 0.0;
            md.heads = 0;
        }
        let now = self.now;
        if let Some(b) = &mut self.bitmap {
            b.restart_window(now);
        }
        if let Some(s) = &mut self.safe_mode {
            s.restart_window();
        }
        if let Some(r) = &mut self.rebuild {
            r.restart_window();
        }
    }

    /// Closes the measurement window now (call before draining a closed loop, so the tail with
    /// fewer outstanding requests is not measured).
    pub fn stop_measuring(&mut self) {
        if self.measuring {
            self.window_end = Some(self.now);
            self.measuring = false;
        }
    }

    pub(super) fn result(&self) -> RunResult {
        let end = self.window_end.unwrap_or(self.now);
        let elapsed = end.saturating_sub(self.window_start).max(1);
        let secs = elapsed as f64 * 1e-9;
        let requests = self.reads_done + self.writes_done;
        let lat = |h: &Histogram| Latency {
            mean_nanos: h.mean_nanos(),
            p50_nanos: h.quantile_nanos(0.50),
            p95_nanos: h.quantile_nanos(0.95),
            p99_nanos: h.quantile_nanos(0.99),
        };
        let disks: Vec<DiskUse> = self
            .disks
            .iter()
            .enumerate()
            .map(|(i, d)| DiskUse {
                index: if i < self.array_disks {
                    i as u32
                } else {
                    (i - self.array_disks) as u32
                },
                tier: if i < self.array_disks {
                    Tier::Array
                } else {
                    Tier::Cache
                },
                utilisation: (d.busy_nanos / (elapsed as f64 * f64::from(d.parallelism))).min(1.0),
                iops: d.ops as f64 / secs,
                reads: d.reads,
                writes: d.writes,
                read_bytes: d.read_bytes,
                write_bytes: d.write_bytes,
            })
            .collect();
        let controller_utilisation = (self.ctrl_busy_nanos / elapsed as f64).min(1.0);
        let parity_utilisation = (self.parity_busy_nanos / elapsed as f64).min(1.0);
        let (md_stripe_heads, raid5d_utilisation) = match &self.md {
            Some(md) => (
                md.heads,
                (md.busy_nanos / (elapsed as f64 * md.threads_free_at_nanos.len() as f64)).min(1.0),
            ),
            None => (0, 0.0),
        };
        let md_bitmap = self.bitmap.as_ref().map(|b| {
            let (chunk_bytes, chunks) = b.describe();
            BitmapUse {
                chunk_bytes,
                chunks,
                unplug_writes: b.unplug_writes,
                daemon_writes: b.daemon_writes,
                member_writes: b.page_writes,
                unplug_busy: (b.unplug_busy_nanos(end) / elapsed as f64).min(1.0),
            }
        });
        let md_superblock = self.safe_mode.as_ref().map(|s| SuperblockUse {
            safe_mode_delay_nanos: s.delay_nanos(),
            updates: s.updates,
            member_writes: s.member_writes,
        });
        let bottleneck = name_bottleneck(
            &disks,
            controller_utilisation,
            parity_utilisation,
            self.md
                .as_ref()
                .map(|m| (raid5d_utilisation, m.threads_free_at_nanos.len())),
            md_bitmap.as_ref().map(|b| b.unplug_busy),
            &self.controller,
        );
        RunResult {
            requests,
            elapsed_nanos: elapsed,
            iops: requests as f64 / secs,
            read_iops: self.reads_done as f64 / secs,
            write_iops: self.writes_done as f64 / secs,
            bytes_per_sec: self.bytes_done as f64 / secs,
            latency: lat(&self.hist),
            read_latency: lat(&self.read_hist),
            disks,
            controller_utilisation,
            parity_utilisation,
            md_stripe_heads,
            raid5d_utilisation,
            backend_requests: self.backend_ops,
            throttled_requests: self.throttled,
            bottleneck,
            md_bitmap,
            md_superblock,
            rebuild: self.rebuild.as_ref().map(|r| r.result(elapsed)),
        }
    }
}

pub(super) fn name_bottleneck(
    disks: &[DiskUse],
    ctrl: f64,
    parity: f64,
    raid5d: Option<(f64, usize)>,
    bitmap_unplugs: Option<f64>,
    c: &ControllerModel,
) -> String {
    const BUSY: f64 = 0.85;
    let busiest = disks
        .iter()
        .filter(|d| d.tier == Tier::Array)
        .map(|d| d.utilisation)
        .fold(0.0, f64::max);
    let cache = disks
        .iter()
        .filter(|d| d.tier == Tier::Cache)
        .map(|d| d.utilisation)
        .fold(0.0, f64::max);
    let mean = {
        let a: Vec<f64> = disks
            .iter()
            .filter(|d| d.tier == Tier::Array)
            .map(|d| d.utilisation)
            .collect();
        a.iter().sum::<f64>() / a.len().max(1) as f64
    };
    let mut candidates = vec![(
        busiest,
        if mean > 0.0 && busiest > 1.5 * mean {
            "one member disk (hot spot)"
        } else {
            "the member disks"
        },
    )];
    candidates.push((cache, "the SSD cache devices"));
    if c.max_iops.is_some() || c.max_bytes_per_sec.is_some() {
        candidates.push((ctrl, "the controller's per-logical-drive ceiling"));
    }
    if c.parity_chunks_per_sec.is_some() {
        candidates.push((parity, "the controller's parity engine"));
    }
    if let Some((u, threads)) = raid5d {
        candidates.push((
            u,
            if threads == 1 {
                "raid5d (md's single stripe-handling thread; raise group_thread_cnt)"
            } else {
                "raid5d and its group_thread_cnt workers (md stripe handling)"
            },
        ));
    }
    if let Some(u) = bitmap_unplugs {
        candidates.push((
            u,
            "md's write-intent bitmap (writes wait for its page writes; a larger bitmap chunk or none lifts it)",
        ));
    }
    let (u, what) = candidates
        .into_iter()
        .fold((0.0, ""), |a, b| if b.0 > a.0 { b } else { a });
    if u >= BUSY {
        format!("{what} ({:.0}% busy)", u * 100.0)
    } else {
        format!("none saturated (busiest: {what}, {:.0}% busy): latency-bound, more outstanding I/O would raise IOPS", u * 100.0)
    }
}
