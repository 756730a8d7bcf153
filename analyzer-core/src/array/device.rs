//! Device models: what one member disk does with one command. A hard disk is a mechanical
//! positioner (seek curve, rotation, zoned media rate, command overhead, look-ahead buffer and
//! on-disk queue reordering); an SSD or NVMe drive is a set of parallel flash lanes with
//! latency, IOPS and bandwidth caps and write amplification that depends on spare area.
//!
//! Every parameter is a public field with its unit in the name, so a description file can
//! override any of them; [`DiskPreset`] is the registry of documented starting points
//! (docs/model.md gives the datasheet behind each number).

use serde::{Deserialize, Serialize};

/// How a hard disk picks the next command among those queued on it (NCQ/TCQ).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiskScheduling {
    /// First come, first served: no reordering (queue depth 1 behaviour).
    Fifo,
    /// Shortest access (seek + rotation) time first over the queued commands, as drive
    /// firmware does (Worthington, Ganger & Patt 1994; Jacobson & Wilkes 1991).
    Satf,
}

/// A hard disk drive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HddModel {
    pub rpm: f64,
    pub capacity_bytes: u64,
    /// Seek between adjacent cylinders (datasheet "track-to-track", read).
    pub track_to_track_seek_nanos: u64,
    /// Datasheet average read seek; the curve passes through it at one third of the stroke.
    pub average_seek_nanos: u64,
    /// Datasheet full-stroke read seek.
    pub full_stroke_seek_nanos: u64,
    /// Extra settle time before a write (datasheet write seek minus read seek).
    pub write_settle_nanos: u64,
    /// Media rate at the outer diameter (LBA 0) and the inner diameter (last LBA).
    pub outer_rate_bytes_per_sec: f64,
    pub inner_rate_bytes_per_sec: f64,
    /// Fixed firmware and protocol time per command.
    pub command_overhead_nanos: u64,
    /// Interface (SATA/SAS link) rate, for data served from the drive's buffer.
    pub interface_rate_bytes_per_sec: f64,
    /// Commands the drive accepts at once (NCQ 32, SAS TCQ 64); the rest wait in the host queue.
    pub queue_depth: u32,
    pub scheduling: DiskScheduling,
    /// Read look-ahead: after a read the drive keeps reading up to this many bytes into its
    /// buffer, so a following sequential read is served without positioning.
    pub lookahead_bytes: u64,
}

/// Whether an SSD's flash has been written over and garbage collection is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SsdWriteState {
    /// Fresh out of the box (or after a secure erase): writes land in clean blocks, WA = 1.
    Fresh,
    /// Steady state: random writes pay the write amplification of greedy garbage collection.
    SteadyState,
}

/// A flash drive (SATA/SAS SSD or NVMe).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsdModel {
    pub capacity_bytes: u64,
    /// Raw flash beyond the user capacity, as a fraction of it (0.07 for 7 %).
    pub spare_fraction: f64,
    /// Typical 4 KiB read and write latency at queue depth 1 (datasheet).
    pub read_latency_nanos: u64,
    pub write_latency_nanos: u64,
    /// Datasheet 4 KiB random read IOPS at high queue depth.
    pub read_iops: f64,
    /// Datasheet 4 KiB random write IOPS, steady state over the full span.
    pub write_iops_steady: f64,
    pub read_bandwidth_bytes_per_sec: f64,
    pub write_bandwidth_bytes_per_sec: f64,
    pub write_state: SsdWriteState,
    /// Fraction of the drive the workload writes (LBAs outside it are assumed trimmed or never
    /// written, so they act as extra spare area). 1.0 = full span.
    pub written_span_fraction: f64,
}

/// A member device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DeviceModel {
    Hdd(HddModel),
    Ssd(SsdModel),
}

impl DeviceModel {
    pub fn capacity_bytes(&self) -> u64 {
        match self {
            DeviceModel::Hdd(h) => h.capacity_bytes,
            DeviceModel::Ssd(s) => s.capacity_bytes,
        }
    }

    /// Rejects parameters the model cannot run with (zero or non-finite rates, sizes or
    /// speeds), naming the field.
    pub fn validate(&self) -> Result<(), DeviceError> {
        fn positive(field: &'static str, value: f64) -> Result<(), DeviceError> {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(DeviceError::NotPositive { field, value })
            }
        }
        match self {
            DeviceModel::Hdd(h) => {
                positive("rpm", h.rpm)?;
                positive("capacity_bytes", h.capacity_bytes as f64)?;
                positive("outer_rate_bytes_per_sec", h.outer_rate_bytes_per_sec)?;
                positive("inner_rate_bytes_per_sec", h.inner_rate_bytes_per_sec)?;
                positive(
                    "interface_rate_bytes_per_sec",
                    h.interface_rate_bytes_per_sec,
                )?;
                if h.inner_rate_bytes_per_sec > h.outer_rate_bytes_per_sec {
                    return Err(DeviceError::InnerRateAboveOuter);
                }
            }
            DeviceModel::Ssd(s) => {
                positive("capacity_bytes", s.capacity_bytes as f64)?;
                positive("read_iops", s.read_iops)?;
                positive("write_iops_steady", s.write_iops_steady)?;
                positive(
                    "read_bandwidth_bytes_per_sec",
                    s.read_bandwidth_bytes_per_sec,
                )?;
                positive(
                    "write_bandwidth_bytes_per_sec",
                    s.write_bandwidth_bytes_per_sec,
                )?;
                positive("written_span_fraction", s.written_span_fraction)?;
                if !(s.spare_fraction.is_finite() && s.spare_fraction >= 0.0) {
                    return Err(DeviceError::SpareFraction {
                        value: s.spare_fraction,
                    });
                }
            }
        }
        Ok(())
    }

    pub fn is_rotating(&self) -> bool {
        matches!(self, DeviceModel::Hdd(_))
    }

    /// Commands served at once: 1 for a disk arm, the flash lanes for an SSD.
    pub fn parallelism(&self) -> u32 {
        match self {
            DeviceModel::Hdd(_) => 1,
            DeviceModel::Ssd(s) => ssd_lanes(s),
        }
    }
}

/// A device description the model cannot run with, naming the field ([`DeviceModel::validate`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    #[error("{field} must be a positive number, got {value}")]
    NotPositive { field: &'static str, value: f64 },
    #[error("inner_rate_bytes_per_sec must not exceed outer_rate_bytes_per_sec")]
    InnerRateAboveOuter,
    #[error("spare_fraction must be 0 or more, got {value}")]
    SpareFraction { value: f64 },
}

/// Write amplification of greedy garbage collection under uniform random writes, for spare
/// factor `spare` (spare / user data): the approximation WA = (1 + ρ) / (2ρ) of Hu et al.
/// ("Write amplification analysis in flash-based SSDs", SYSTOR 2009) and Desnoyers (2012),
/// bounded to [1, 50].
pub fn greedy_write_amplification(spare: f64) -> f64 {
    if spare <= 0.0 {
        return 50.0;
    }
    ((1.0 + spare) / (2.0 * spare)).clamp(1.0, 50.0)
}

/// Flash lanes: how many 4 KiB reads are in flight when the drive delivers its rated IOPS at
/// its rated latency (Little's law).
pub fn ssd_lanes(s: &SsdModel) -> u32 {
    let lanes = s.read_iops * s.read_latency_nanos as f64 * 1e-9;
    lanes.round().clamp(1.0, 1024.0) as u32
}

/// Effective 4 KiB random write IOPS for the drive's state and written span.
pub fn ssd_write_iops(s: &SsdModel) -> f64 {
    let wa_rated = greedy_write_amplification(s.spare_fraction);
    let flash_write_iops = s.write_iops_steady * wa_rated;
    match s.write_state {
        SsdWriteState::Fresh => flash_write_iops,
        SsdWriteState::SteadyState => {
            let span = s.written_span_fraction.clamp(1e-6, 1.0);
            // Unwritten LBAs outside the span are spare area as far as GC is concerned.
            let spare = (1.0 + s.spare_fraction) / span - 1.0;
            flash_write_iops / greedy_write_amplification(spare)
        }
    }
}

/// The preset registry: one list feeds `--disk`, the web picker and docs/model.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DiskPreset {
    Sata7k2,
    Sas10k,
    Sas15k,
    SataSsd,
    Nvme,
}

impl DiskPreset {
    pub const ALL: [DiskPreset; 5] = [
        DiskPreset::Sata7k2,
        DiskPreset::Sas10k,
        DiskPreset::Sas15k,
        DiskPreset::SataSsd,
        DiskPreset::Nvme,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DiskPreset::Sata7k2 => "sata-7k2",
            DiskPreset::Sas10k => "sas-10k",
            DiskPreset::Sas15k => "sas-15k",
            DiskPreset::SataSsd => "sata-ssd",
            DiskPreset::Nvme => "nvme",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            DiskPreset::Sata7k2 => "7,200 rpm 3.5\" SATA, 2 TB (Seagate Constellation ES class)",
            DiskPreset::Sas10k => "10,000 rpm 2.5\" SAS, 600 GB (Seagate Savvio 10K.5 class)",
            DiskPreset::Sas15k => "15,000 rpm 3.5\" SAS, 73 GB (Seagate Cheetah 15K.5 class)",
            DiskPreset::SataSsd => "SATA SSD, 800 GB (Intel DC S3700 class)",
            DiskPreset::Nvme => "NVMe SSD, 2 TB (Intel DC P4510 class)",
        }
    }

    pub fn from_name(name: &str) -> Option<DiskPreset> {
        let n = name.trim().to_ascii_lowercase();
        let alias = match n.as_str() {
            "7k2" | "7.2k" | "sata" | "sata-7.2k" | "nl-sas" => "sata-7k2",
            "10k" | "sas10k" => "sas-10k",
            "15k" | "sas15k" | "cheetah" => "sas-15k",
            "ssd" | "s3700" => "sata-ssd",
            "p4510" => "nvme",
            other => other,
        };
        DiskPreset::ALL.into_iter().find(|p| p.name() == alias)
    }

    /// The model with every parameter filled from the class datasheet (see docs/model.md).
    pub fn model(self) -> DeviceModel {
        const MB: f64 = 1e6;
        match self {
            DiskPreset::Sata7k2 => DeviceModel::Hdd(HddModel {
                rpm: 7200.0,
                capacity_bytes: 2_000_000_000_000,
                track_to_track_seek_nanos: 800_000,
                average_seek_nanos: 8_500_000,
                full_stroke_seek_nanos: 17_000_000,
                write_settle_nanos: 1_000_000,
                outer_rate_bytes_per_sec: 140.0 * MB,
                inner_rate_bytes_per_sec: 70.0 * MB,
                command_overhead_nanos: 200_000,
                interface_rate_bytes_per_sec: 300.0 * MB,
                queue_depth: 32,
                scheduling: DiskScheduling::Satf,
                lookahead_bytes: 1 << 20,
            }),
            DiskPreset::Sas10k => DeviceModel::Hdd(HddModel {
                rpm: 10_000.0,
                capacity_bytes: 600_000_000_000,
                track_to_track_seek_nanos: 200_000,
                average_seek_nanos: 3_700_000,
                full_stroke_seek_nanos: 8_000_000,
                write_settle_nanos: 400_000,
                outer_rate_bytes_per_sec: 204.0 * MB,
                inner_rate_bytes_per_sec: 125.0 * MB,
                command_overhead_nanos: 130_000,
                interface_rate_bytes_per_sec: 600.0 * MB,
                queue_depth: 64,
                scheduling: DiskScheduling::Satf,
                lookahead_bytes: 1 << 20,
            }),
            DiskPreset::Sas15k => DeviceModel::Hdd(HddModel {
                rpm: 15_000.0,
                capacity_bytes: 73_400_000_000,
                track_to_track_seek_nanos: 200_000,
                average_seek_nanos: 3_500_000,
                full_stroke_seek_nanos: 7_400_000,
                write_settle_nanos: 500_000,
                outer_rate_bytes_per_sec: 125.0 * MB,
                inner_rate_bytes_per_sec: 73.0 * MB,
                command_overhead_nanos: 130_000,
                interface_rate_bytes_per_sec: 300.0 * MB,
                queue_depth: 64,
                scheduling: DiskScheduling::Satf,
                lookahead_bytes: 1 << 20,
            }),
            DiskPreset::SataSsd => DeviceModel::Ssd(SsdModel {
                capacity_bytes: 800_000_000_000,
                spare_fraction: 0.32,
                read_latency_nanos: 50_000,
                write_latency_nanos: 65_000,
                read_iops: 75_000.0,
                write_iops_steady: 36_000.0,
                read_bandwidth_bytes_per_sec: 500.0 * MB,
                write_bandwidth_bytes_per_sec: 460.0 * MB,
                write_state: SsdWriteState::SteadyState,
                written_span_fraction: 1.0,
            }),
            DiskPreset::Nvme => DeviceModel::Ssd(SsdModel {
                capacity_bytes: 2_000_000_000_000,
                spare_fraction: 0.07,
                read_latency_nanos: 77_000,
                write_latency_nanos: 18_000,
                read_iops: 637_000.0,
                write_iops_steady: 81_500.0,
                read_bandwidth_bytes_per_sec: 3200.0 * MB,
                write_bandwidth_bytes_per_sec: 2000.0 * MB,
                write_state: SsdWriteState::SteadyState,
                written_span_fraction: 1.0,
            }),
        }
    }
}

/// The geometry derived once from an [`HddModel`], so the hot loop does no divisions it can
/// avoid.
#[derive(Clone, Debug)]
pub struct HddGeometry {
    pub rev_nanos: f64,
    inv_rev_nanos: f64,
    /// Inner radius as a fraction of the outer one (= inner rate / outer rate at constant
    /// linear density).
    inner_radius: f64,
    inv_capacity: f64,
    t2t: f64,
    sqrt_coef: f64,
    avg: f64,
    linear_coef: f64,
    overhead: f64,
    settle: f64,
    outer_rate_per_nano: f64,
    interface_per_byte: f64,
    pub lookahead_bytes: u64,
}

/// Where a request sits on the platter, computed once per member command.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Placement {
    /// Radial position as a fraction of the stroke, 0 = outer diameter.
    pub radial: f64,
    /// Angular position of the first sector, in revolutions [0, 1).
    pub angle: f64,
    /// Media time for the transfer, nanoseconds.
    pub media_nanos: f64,
    /// Interface time for the transfer, nanoseconds.
    pub bus_nanos: f64,
}

/// Fractional part of a non-negative finite number. `f64::fract` calls libm's `trunc` on
/// baseline x86-64; this is one conversion each way and it is in the engine's hottest loop.
#[inline]
fn frac(x: f64) -> f64 {
    if x < 9.0e15 {
        x - (x as u64) as f64
    } else {
        x.fract()
    }
}

/// The knee of the seek curve: square-root regime below a third of the stroke, linear above.
const SEEK_KNEE: f64 = 1.0 / 3.0;

impl HddGeometry {
    pub fn new(m: &HddModel) -> HddGeometry {
        let rev_nanos = 60e9 / m.rpm.max(1.0);
        let inner_radius =
            (m.inner_rate_bytes_per_sec / m.outer_rate_bytes_per_sec.max(1.0)).clamp(0.05, 1.0);
        let t2t = m.track_to_track_seek_nanos as f64;
        let avg = (m.average_seek_nanos as f64).max(t2t);
        let full = (m.full_stroke_seek_nanos as f64).max(avg);
        HddGeometry {
            rev_nanos,
            inv_rev_nanos: 1.0 / rev_nanos,
            inner_radius,
            inv_capacity: 1.0 / m.capacity_bytes.max(1) as f64,
            t2t,
            sqrt_coef: (avg - t2t) / SEEK_KNEE.sqrt(),
            avg,
            linear_coef: (full - avg) / (1.0 - SEEK_KNEE),
            overhead: m.command_overhead_nanos as f64,
            settle: m.write_settle_nanos as f64,
            outer_rate_per_nano: m.outer_rate_bytes_per_sec * 1e-9,
            interface_per_byte: 1e9 / m.interface_rate_bytes_per_sec.max(1.0),
            lookahead_bytes: m.lookahead_bytes,
        }
    }

    /// Seek time for a radial distance given as a fraction of the full stroke: a + b·√d below
    /// the knee, linear above it (Ruemmler & Wilkes, "An introduction to disk drive modeling",
    /// 1994). Zero distance costs nothing.
    #[inline]
    pub fn seek_nanos(&self, distance: f64) -> f64 {
        if distance <= 0.0 {
            0.0
        } else if distance < SEEK_KNEE {
            self.t2t + self.sqrt_coef * distance.sqrt()
        } else {
            self.avg + self.linear_coef * (distance - SEEK_KNEE)
        }
    }

    /// Radius (outer = 1) at a capacity fraction: equal areas hold equal bytes, so
    /// r² falls linearly with the fraction of capacity before it.
    fn radius_at(&self, fraction: f64) -> f64 {
        let ri2 = self.inner_radius * self.inner_radius;
        (1.0 - fraction.clamp(0.0, 1.0) * (1.0 - ri2)).sqrt()
    }

    pub fn place(&self, offset_bytes: u64, len_bytes: u32) -> Placement {
        let fraction = offset_bytes as f64 * self.inv_capacity;
        let r = self.radius_at(fraction);
        let radial = if self.inner_radius >= 1.0 {
            fraction
        } else {
            (1.0 - r) / (1.0 - self.inner_radius)
        };
        // Bytes per nanosecond under the head: proportional to the radius.
        let rate = self.outer_rate_per_nano * r;
        let track_bytes = rate * self.rev_nanos;
        let angle = frac(offset_bytes as f64 / track_bytes);
        Placement {
            radial,
            angle,
            media_nanos: f64::from(len_bytes) / rate,
            bus_nanos: f64::from(len_bytes) * self.interface_per_byte,
        }
    }

    /// Media rate in bytes per nanosecond at a placement's radius.
    pub fn rate_at(&self, p: &Placement) -> f64 {
        let r = 1.0 - p.radial * (1.0 - self.inner_radius);
        self.outer_rate_per_nano * r
    }

    /// Time from "command starts" to "first sector under the head": overhead, seek (plus write
    /// settle) and rotational wait, with the platter's angle a pure function of time.
    #[inline]
    pub fn positioning_nanos(
        &self,
        now_nanos: u64,
        head_radial: f64,
        target: &Placement,
        write: bool,
    ) -> f64 {
        self.positioning_below(now_nanos, head_radial, target, write, f64::INFINITY)
            .unwrap_or(f64::INFINITY)
    }

    /// [`HddGeometry::positioning_nanos`], or `None` as soon as it is known to be at least
    /// `bound` (overhead + seek alone reach it): the SATF scan skips the rotation for
    /// candidates that cannot win.
    #[inline]
    pub fn positioning_below(
        &self,
        now_nanos: u64,
        head_radial: f64,
        target: &Placement,
        write: bool,
        bound: f64,
    ) -> Option<f64> {
        let seek = self.seek_nanos((target.radial - head_radial).abs())
            + if write { self.settle } else { 0.0 };
        let before_rotation = self.overhead + seek;
        if before_rotation >= bound {
            return None;
        }
        let arrive = now_nanos as f64 + before_rotation;
        let angle_now = frac(arrive * self.inv_rev_nanos);
        let mut wait = target.angle - angle_now;
        if wait < 0.0 {
            wait += 1.0;
        }
        Some(before_rotation + wait * self.rev_nanos)
    }

    pub fn overhead_nanos(&self) -> f64 {
        self.overhead
    }
}

/// Service-time constants derived once from an [`SsdModel`].
#[derive(Clone, Debug)]
pub struct SsdTiming {
    pub lanes: u32,
    read_base: f64,
    read_per_byte: f64,
    write_base: f64,
    write_per_byte: f64,
}

impl SsdTiming {
    pub fn new(s: &SsdModel) -> SsdTiming {
        let lanes = ssd_lanes(s);
        let l = f64::from(lanes);
        // Per lane: a 4 KiB read takes lanes / IOPS (so all lanes deliver the rated IOPS) and
        // each byte takes lanes / bandwidth (so all lanes deliver the rated bandwidth).
        let read_per_byte = l * 1e9 / s.read_bandwidth_bytes_per_sec.max(1.0);
        let read_4k = (l * 1e9 / s.read_iops.max(1.0)).max(s.read_latency_nanos as f64);
        let write_per_byte = l * 1e9 / s.write_bandwidth_bytes_per_sec.max(1.0);
        let write_4k = (l * 1e9 / ssd_write_iops(s).max(1.0)).max(s.write_latency_nanos as f64);
        SsdTiming {
            lanes,
            read_base: (read_4k - 4096.0 * read_per_byte).max(read_4k * 0.25),
            read_per_byte,
            write_base: (write_4k - 4096.0 * write_per_byte).max(write_4k * 0.25),
            write_per_byte,
        }
    }

    pub fn service_nanos(&self, len_bytes: u32, write: bool) -> f64 {
        if write {
            self.write_base + f64::from(len_bytes) * self.write_per_byte
        } else {
            self.read_base + f64::from(len_bytes) * self.read_per_byte
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdd(p: DiskPreset) -> HddModel {
        match p.model() {
            DeviceModel::Hdd(h) => h,
            DeviceModel::Ssd(_) => panic!("not an hdd"),
        }
    }

    #[test]
    fn seek_curve_passes_datasheet_points_and_is_monotonic() {
        let m = hdd(DiskPreset::Sas15k);
        let g = HddGeometry::new(&m);
        assert_eq!(g.seek_nanos(0.0), 0.0);
        assert!((g.seek_nanos(SEEK_KNEE) - m.average_seek_nanos as f64).abs() < 1.0);
        assert!((g.seek_nanos(1.0) - m.full_stroke_seek_nanos as f64).abs() < 1.0);
        let mut last = 0.0;
        for i in 1..=1000 {
            let s = g.seek_nanos(i as f64 / 1000.0);
            assert!(s >= last);
            last = s;
        }
        assert!(g.seek_nanos(1e-6) < m.track_to_track_seek_nanos as f64 * 1.1);
    }

    #[test]
    fn zoned_rate_falls_from_outer_to_inner() {
        let m = hdd(DiskPreset::Sata7k2);
        let g = HddGeometry::new(&m);
        let outer = g.place(0, 1 << 20);
        let inner = g.place(m.capacity_bytes - (1 << 20), 1 << 20);
        let r_out = g.rate_at(&outer) * 1e9;
        let r_in = g.rate_at(&inner) * 1e9;
        assert!((r_out - m.outer_rate_bytes_per_sec).abs() / m.outer_rate_bytes_per_sec < 0.01);
        assert!((r_in - m.inner_rate_bytes_per_sec).abs() / m.inner_rate_bytes_per_sec < 0.02);
        assert!(outer.media_nanos < inner.media_nanos);
        assert!(outer.radial < 0.01 && inner.radial > 0.99);
    }

    #[test]
    fn rotational_wait_is_within_one_revolution() {
        let g = HddGeometry::new(&hdd(DiskPreset::Sas15k));
        let p = g.place(12_345_678, 4096);
        for t in (0..100).map(|i| i * 37_171) {
            let pos = g.positioning_nanos(t, p.radial, &p, false);
            assert!(pos >= g.overhead_nanos() && pos <= g.overhead_nanos() + g.rev_nanos + 1.0);
        }
    }

    #[test]
    fn write_amplification_falls_with_spare_area() {
        assert!(greedy_write_amplification(0.07) > greedy_write_amplification(0.28));
        assert!((greedy_write_amplification(1.0) - 1.0).abs() < 1e-9);
        let DeviceModel::Ssd(mut s) = DiskPreset::Nvme.model() else {
            panic!("ssd")
        };
        let full = ssd_write_iops(&s);
        assert!((full - s.write_iops_steady).abs() < 1.0);
        s.written_span_fraction = 0.5;
        assert!(ssd_write_iops(&s) > 2.0 * full);
        s.write_state = SsdWriteState::Fresh;
        assert!(ssd_write_iops(&s) > 4.0 * full);
    }

    #[test]
    fn ssd_timing_meets_datasheet_latency_and_iops() {
        for p in [DiskPreset::SataSsd, DiskPreset::Nvme] {
            let DeviceModel::Ssd(s) = p.model() else {
                panic!("ssd")
            };
            let t = SsdTiming::new(&s);
            let lat = t.service_nanos(4096, false);
            assert!(
                (lat - s.read_latency_nanos as f64).abs() / (s.read_latency_nanos as f64) < 0.35,
                "{p:?} {lat}"
            );
            let iops = f64::from(t.lanes) * 1e9 / lat;
            assert!(
                (iops - s.read_iops).abs() / s.read_iops < 0.35,
                "{p:?} {iops}"
            );
            let big =
                f64::from(t.lanes) * (1u64 << 20) as f64 * 1e9 / t.service_nanos(1 << 20, false);
            assert!(big <= s.read_bandwidth_bytes_per_sec * 1.01);
        }
    }

    #[test]
    fn validation_names_the_bad_field() {
        for p in DiskPreset::ALL {
            p.model().validate().expect("presets are valid");
        }
        let DeviceModel::Hdd(mut h) = DiskPreset::Sas15k.model() else {
            panic!("hdd")
        };
        h.outer_rate_bytes_per_sec = 0.0;
        let e = DeviceModel::Hdd(h.clone())
            .validate()
            .expect_err("zero rate");
        assert_eq!(
            e,
            DeviceError::NotPositive {
                field: "outer_rate_bytes_per_sec",
                value: 0.0
            }
        );
        assert_eq!(
            e.to_string(),
            "outer_rate_bytes_per_sec must be a positive number, got 0"
        );
        h.outer_rate_bytes_per_sec = h.inner_rate_bytes_per_sec / 2.0;
        assert_eq!(
            DeviceModel::Hdd(h).validate(),
            Err(DeviceError::InnerRateAboveOuter)
        );
        let DeviceModel::Ssd(mut s) = DiskPreset::Nvme.model() else {
            panic!("ssd")
        };
        s.spare_fraction = f64::NAN;
        assert!(matches!(
            DeviceModel::Ssd(s).validate(),
            Err(DeviceError::SpareFraction { value }) if value.is_nan()
        ));
    }

    #[test]
    fn presets_round_trip_names() {
        for p in DiskPreset::ALL {
            assert_eq!(DiskPreset::from_name(p.name()), Some(p));
        }
        assert_eq!(DiskPreset::from_name("15k"), Some(DiskPreset::Sas15k));
        assert_eq!(DiskPreset::from_name("floppy"), None);
    }
}
