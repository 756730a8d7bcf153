//! Resolves the devices a user names (`/dev/sda`, `sda1`, `/dev/mapper/vg-lv`, `loop3`) to what
//! the kernel's block events carry: the dev_t of the request queue's disk and a sector range.
//!
//! Request events report the whole disk's dev_t with disk-relative sectors, so a partition is
//! traced as its disk filtered to the partition's range, and offsets are rewritten to be
//! relative to the partition. Device-mapper and md devices have their own dev_t and are traced
//! by it.
//!
//! Devices with a request queue (`/sys/block/X/mq` exists: SCSI, NVMe, virtio, loop) are traced
//! at the request level (`block_rq_issue`/`block_rq_complete`, blktrace `D`/`C`): what the
//! device executed, after merging and splitting. Bio-based devices (most dm targets, md, zram)
//! never form requests, so they are traced at the bio level (`block_bio_queue`/
//! `block_bio_complete`, blktrace `Q`/`C`): what was submitted to them.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// The kernel's internal dev_t encoding used by tracepoints (`MKDEV`): major in the top 12
/// bits, minor in the low 20.
pub fn kernel_dev(major: u32, minor: u32) -> u32 {
    (major << 20) | (minor & 0xf_ffff)
}

/// Which kernel events describe a device's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Requests as the device's queue issues them.
    Request,
    /// Bios as submitted to the device (for devices without a request queue).
    Bio,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Request => "request",
            Level::Bio => "bio",
        }
    }
}

/// A device the user asked for, as the kernel will report it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracedDevice {
    /// The kernel name of what the user named (`sda1`, `loop0`, `dm-0`).
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// The disk whose queue issues the requests (`sda` for `sda1`).
    pub disk_name: String,
    pub disk_major: u32,
    pub disk_minor: u32,
    /// First sector of the named device on its disk (0 for a whole disk).
    pub start_sector: u64,
    /// Size in 512-byte sectors; requests past it on the disk belong to something else.
    pub size_sectors: u64,
    pub level: Level,
}

impl TracedDevice {
    pub fn is_partition(&self) -> bool {
        (self.major, self.minor) != (self.disk_major, self.disk_minor)
    }

    /// The kernel dev_t of the disk, as tracepoint `dev` fields carry it.
    pub fn disk_kernel_dev(&self) -> u32 {
        kernel_dev(self.disk_major, self.disk_minor)
    }
}

/// A 1 GiB bio-based device `dm-3` (252:3) alone, for the backends' tests.
#[cfg(test)]
pub fn test_dm3() -> DeviceMap {
    DeviceMap::new(vec![TracedDevice {
        name: "dm-3".into(),
        major: 252,
        minor: 3,
        disk_name: "dm-3".into(),
        disk_major: 252,
        disk_minor: 3,
        start_sector: 0,
        size_sectors: 1 << 21,
        level: Level::Bio,
    }])
}

/// Decodes the user-space `st_rdev` into (major, minor) as glibc's `major()`/`minor()` do.
pub fn split_rdev(rdev: u64) -> (u32, u32) {
    let major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    (major as u32, minor as u32)
}

fn read_trimmed(path: &Path) -> anyhow::Result<String> {
    Ok(std::fs::read_to_string(path)
        .with_context(|| format!("reading {}", path.display()))?
        .trim()
        .to_string())
}

fn parse_majmin(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Looks a device up under `sys_root` (normally `/sys`). `spec` is a path to a block special
/// file, or a bare kernel name found under `/sys/class/block`.
pub fn resolve(spec: &str, sys_root: &Path) -> anyhow::Result<TracedDevice> {
    let class_block = sys_root.join("class/block");
    let (major, minor) = if spec.contains('/') {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let meta = std::fs::metadata(spec).with_context(|| {
            format!("device {spec} not found: name an existing block device (see `lsblk`)")
        })?;
        if !meta.file_type().is_block_device() {
            bail!("{spec} is not a block device: name a disk, partition, dm or md device (see `lsblk`)");
        }
        split_rdev(meta.rdev())
    } else {
        let dev = class_block.join(spec).join("dev");
        let text = std::fs::read_to_string(&dev).map_err(|_| {
            anyhow::anyhow!(
                "device {spec} not found: name a block device from `lsblk`, e.g. sda or /dev/sda"
            )
        })?;
        parse_majmin(&text).with_context(|| format!("{}: expected MAJ:MIN", dev.display()))?
    };
    let sys_dev: PathBuf = sys_root.join(format!("dev/block/{major}:{minor}"));
    let real = std::fs::canonicalize(&sys_dev).with_context(|| {
        format!(
            "device {spec} ({major}:{minor}) is not known to the kernel's block layer ({} missing)",
            sys_dev.display()
        )
    })?;
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let size_sectors: u64 = read_trimmed(&real.join("size"))?
        .parse()
        .context("sysfs size")?;
    if real.join("partition").exists() {
        let start_sector: u64 = read_trimmed(&real.join("start"))?
            .parse()
            .context("sysfs start")?;
        let disk = real
            .parent()
            .context("partition without a parent disk in sysfs")?;
        let disk_name = disk
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (disk_major, disk_minor) = parse_majmin(&read_trimmed(&disk.join("dev"))?)
            .with_context(|| format!("{}: expected MAJ:MIN", disk.join("dev").display()))?;
        if !disk.join("mq").exists() {
            bail!(
                "{name} is a partition of {disk_name}, which has no request queue: record {disk_name} \
                 itself and keep the partition's range ({start_sector} + {size_sectors} sectors)"
            );
        }
        Ok(TracedDevice {
            name,
            major,
            minor,
            disk_name,
            disk_major,
            disk_minor,
            start_sector,
            size_sectors,
            level: Level::Request,
        })
    } else {
        Ok(TracedDevice {
            disk_name: name.clone(),
            name,
            major,
            minor,
            disk_major: major,
            disk_minor: minor,
            start_sector: 0,
            size_sectors,
            level: if real.join("mq").exists() {
                Level::Request
            } else {
                Level::Bio
            },
        })
    }
}

/// Maps what an event reports (disk dev_t and disk sector) to the index of the named device
/// and a sector relative to it.
#[derive(Clone, Debug, Default)]
pub struct DeviceMap {
    devices: Vec<TracedDevice>,
}

impl DeviceMap {
    pub fn new(devices: Vec<TracedDevice>) -> DeviceMap {
        DeviceMap { devices }
    }

    pub fn devices(&self) -> &[TracedDevice] {
        &self.devices
    }

    /// The named device a request on `kernel_dev` at `sector` belongs to, and the sector
    /// relative to it. Requests with no data range (flushes, `sector` may be all ones) go to the
    /// first named device on that disk at sector 0. When a disk and one of its partitions are
    /// both named, the first one named that contains the sector wins.
    pub fn map(&self, kernel_dev: u32, sector: u64, has_range: bool) -> Option<(u32, u64)> {
        for (i, d) in self.devices.iter().enumerate() {
            if d.disk_kernel_dev() != kernel_dev {
                continue;
            }
            if !has_range {
                return Some((i as u32, 0));
            }
            if !d.is_partition() {
                return Some((i as u32, sector));
            }
            if sector >= d.start_sector && sector - d.start_sector < d.size_sectors {
                return Some((i as u32, sector - d.start_sector));
            }
        }
        None
    }

    /// The level of the device at `index`.
    pub fn level(&self, index: u32) -> Option<Level> {
        self.devices.get(index as usize).map(|d| d.level)
    }

    /// The distinct disks traced at `level`, as kernel dev_t values.
    pub fn kernel_devs(&self, level: Level) -> Vec<u32> {
        let mut devs: Vec<u32> = self
            .devices
            .iter()
            .filter(|d| d.level == level)
            .map(TracedDevice::disk_kernel_dev)
            .collect();
        devs.sort_unstable();
        devs.dedup();
        devs
    }

    /// The tracefs filter expression selecting the disks traced at `level`.
    pub fn filter_expression(&self, level: Level) -> String {
        self.kernel_devs(level)
            .iter()
            .map(|d| format!("dev == {d}"))
            .collect::<Vec<_>>()
            .join(" || ")
    }
}

/// A message when a traced device has disappeared or lost its media (a detached loop device
/// keeps its node but its size drops to 0).
pub fn gone(map: &DeviceMap, sys_root: &Path) -> Option<String> {
    for d in map.devices() {
        let dir = sys_root.join(format!("dev/block/{}:{}", d.major, d.minor));
        let size = std::fs::read_to_string(dir.join("size"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        match size {
            None => {
                return Some(format!(
                    "device {} ({}:{}) was removed",
                    d.name, d.major, d.minor
                ))
            }
            Some(0) if d.size_sectors > 0 => {
                return Some(format!(
                    "device {} ({}:{}) has gone away (size is now 0: detached?)",
                    d.name, d.major, d.minor
                ))
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_sys() -> PathBuf {
        let root = std::env::temp_dir().join(format!("bs-sys-{}-{}", std::process::id(), line!()));
        let _ = std::fs::remove_dir_all(&root);
        let disk = root.join("devices/virtual/block/sdz");
        let part = disk.join("sdz2");
        std::fs::create_dir_all(&part).expect("mkdir");
        std::fs::create_dir_all(disk.join("mq")).expect("mkdir");
        std::fs::create_dir_all(root.join("class/block")).expect("mkdir");
        std::fs::create_dir_all(root.join("dev/block")).expect("mkdir");
        std::fs::write(disk.join("dev"), "8:16\n").expect("w");
        std::fs::write(disk.join("size"), "2000\n").expect("w");
        std::fs::write(part.join("dev"), "8:18\n").expect("w");
        std::fs::write(part.join("size"), "500\n").expect("w");
        std::fs::write(part.join("start"), "1000\n").expect("w");
        std::fs::write(part.join("partition"), "2\n").expect("w");
        std::os::unix::fs::symlink(&disk, root.join("class/block/sdz")).expect("ln");
        std::os::unix::fs::symlink(&part, root.join("class/block/sdz2")).expect("ln");
        std::os::unix::fs::symlink(&disk, root.join("dev/block/8:16")).expect("ln");
        std::os::unix::fs::symlink(&part, root.join("dev/block/8:18")).expect("ln");
        root
    }

    #[test]
    fn partitions_map_to_their_disk_with_relative_sectors() {
        let sys = fake_sys();
        let part = resolve("sdz2", &sys).expect("resolves");
        assert_eq!(
            (part.major, part.minor, part.disk_major, part.disk_minor),
            (8, 18, 8, 16)
        );
        assert_eq!((part.start_sector, part.size_sectors), (1000, 500));
        assert_eq!(part.disk_name, "sdz");
        let disk = resolve("sdz", &sys).expect("resolves");
        assert!(!disk.is_partition());
        let map = DeviceMap::new(vec![part, disk]);
        let dev = kernel_dev(8, 16);
        assert_eq!(map.map(dev, 1000, true), Some((0, 0)));
        assert_eq!(map.map(dev, 1499, true), Some((0, 499)));
        assert_eq!(map.map(dev, 1500, true), Some((1, 1500)));
        assert_eq!(map.map(dev, u64::MAX, false), Some((0, 0)));
        assert_eq!(map.map(kernel_dev(8, 0), 0, true), None);
        assert_eq!(
            map.filter_expression(Level::Request),
            format!("dev == {dev}")
        );
        assert_eq!(map.filter_expression(Level::Bio), "");
        assert!(resolve("nope", &sys)
            .expect_err("missing")
            .to_string()
            .contains("not found"));
        let _ = std::fs::remove_dir_all(&sys);
    }

    #[test]
    fn rdev_split_matches_glibc() {
        assert_eq!(split_rdev(0x0801), (8, 1));
        assert_eq!(split_rdev(0x0700), (7, 0));
        // major 259, minor 300 (nvme-style large numbers).
        let rdev = ((259u64 & 0xfff) << 8) | (300 & 0xff) | ((300 & !0xff) << 12);
        assert_eq!(split_rdev(rdev), (259, 300));
    }
}
