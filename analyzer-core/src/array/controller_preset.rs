//! Named RAID controllers (`predict --controller NAME`): what each one's data sheet and
//! interfaces say about its cache and its ceilings, turned into a [`ControllerModel`].
//!
//! Every number is a published quantity or plain link arithmetic from one, with its source in
//! [`ControllerPreset::sources`] and in docs/model.md. A controller's ceilings are saturating
//! servers in the engine (`ControllerModel::max_iops`, `max_bytes_per_sec`,
//! `parity_chunks_per_sec`); a ceiling no source gives is left out (`None`) and the output says
//! so, rather than guessed. MB/s ceilings are the narrower of the host link (PCIe lanes × the
//! lane's data rate after line coding: 250 MB/s for PCIe 1.x, 500 MB/s for 2.0, 985 MB/s for
//! 3.0) and the drive side the logical drive sits behind (SAS lanes × 300, 600 or 1,200 MB/s
//! for 3, 6 or 12 Gb/s SAS, which HP's Smart Array technology brief gives as 600 MB/s per 6 Gb/s
//! link and direction).

use serde::Serialize;

use super::controller::{ControllerModel, MdSettings};

/// Firmware time per host request of a hardware RAID controller (docs/model.md, "Controller").
const HARDWARE_OVERHEAD_NANOS: u64 = 25_000;

/// One named controller.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ControllerPreset {
    pub name: &'static str,
    pub product: &'static str,
    /// Linux md underneath (Intel VROC): no controller of its own.
    pub software: bool,
    /// Battery- or flash-backed write-back cache.
    pub cache_bytes: u64,
    /// Host link: PCIe generation and lanes, as data bytes per second.
    pub host_link_bytes_per_sec: Option<f64>,
    /// Drive side of one logical drive: SAS lanes × the lane's data rate.
    pub drive_link_bytes_per_sec: Option<f64>,
    /// Host IOPS per logical drive, when a source gives one.
    pub max_iops: Option<f64>,
    /// Parity chunks per second, when a source gives one.
    pub parity_chunks_per_sec: Option<f64>,
    /// Controller read-ahead on sequential reads (0: the firmware's default read policy does not
    /// read ahead, or no source gives the window).
    pub read_ahead_bytes: u64,
    pub sources: &'static str,
}

const MB: f64 = 1e6;

const LSI_9361_8I: ControllerPreset = ControllerPreset {
    name: "lsi-9361-8i",
    product: "LSI MegaRAID SAS 9361-8i (LSISAS3108 dual-core ROC), 1 GB DDR3 cache, PCIe 3.0 x8, 8 lanes of 12 Gb/s SAS; CacheCade 2.0 with --cache-size and --preset cachecade2",
    software: false,
    cache_bytes: 1 << 30,
    host_link_bytes_per_sec: Some(8.0 * 985.0 * MB),
    drive_link_bytes_per_sec: Some(8.0 * 1200.0 * MB),
    max_iops: None,
    parity_chunks_per_sec: None,
    read_ahead_bytes: 0,
    sources: "Puget Systems, 'Qualification: LSI 9341-8i & 9361-8i RAID Controllers' (2014: LSISAS3108 dual-core ROC, 1 GB 1866 MHz DDR3, PCIe 3.0, 12 Gb/s SAS); CacheCade 2.0 is docs/cache.md's cachecade2 preset",
};

const LSI_9260_8I: ControllerPreset = ControllerPreset {
    name: "lsi-9260-8i",
    product: "LSI MegaRAID SAS 9260-8i (LSISAS2108 ROC), 512 MB cache, PCIe 2.0 x8, 8 lanes of 6 Gb/s SAS",
    software: false,
    cache_bytes: 512 << 20,
    host_link_bytes_per_sec: Some(8.0 * 500.0 * MB),
    drive_link_bytes_per_sec: Some(8.0 * 600.0 * MB),
    max_iops: None,
    parity_chunks_per_sec: None,
    read_ahead_bytes: 0,
    sources: "X-bit labs, 'LSI MegaRAID SAS 9260-8i Controller Review' (2009: LSISAS2108, 512 MB DDR2, PCIe 2.0 x8, 6 Gb/s SAS); HP Smart Array technology brief (600 MB/s per 6 Gb/s link)",
};

/// HP's technology brief "HP Smart Array Controllers and basic RAID performance factors"
/// (HP, December 2012): the Gen8 Smart Array P222/P420/P421/P822 run a 1000 MHz RAID-on-Chip
/// that "can support up to 200,000 4 KB random IOPS" (the previous generation up to 60,000);
/// its measurements use a P421 with 2 GiB of flash-backed cache, 15K SAS drives and two x4
/// 6 Gb/s SAS ports ("4 x 6 Gb" and "8 x 6 Gb SAS bandwidth limit").
const HP_SMART_ARRAY_BRIEF: &str = "HP, 'HP Smart Array Controllers and basic RAID performance factors', technology brief, December 2012 (manualshelf.com/manual/hp/hp-smart-array-p222-512mb-fbwc-6gb-1-port-int-1-port-ext-sas-controller/hp-smart-array-controllers-and-basic-raid-performance-factors/page-3.html: 1000 MHz RoC, up to 200,000 4 KB random IOPS; pages 10-11: P421 with 2 GiB cache, 4 x 6 Gb and 8 x 6 Gb SAS bandwidth limits)";

impl ControllerPreset {
    pub const ALL: [ControllerPreset; 8] = [
        ControllerPreset {
            name: "perc-5e",
            product: "Dell PERC 5/E (LSI 1078 ROC), 256 MB battery-backed cache, PCIe 1.x x8, two external x4 3 Gb/s SAS ports (one per MD1000 enclosure chain)",
            software: false,
            cache_bytes: 256 << 20,
            host_link_bytes_per_sec: Some(8.0 * 250.0 * MB),
            drive_link_bytes_per_sec: Some(4.0 * 300.0 * MB),
            max_iops: None,
            parity_chunks_per_sec: None,
            read_ahead_bytes: 0,
            sources: "Dell PERC 5 User's Guide (support.dell.com/support/edocs/storage/RAID/PERC5: PCI-E x8 host interface, two x4 external SAS ports, up to 15 disks per enclosure); Dell 'A Reference Guide for Optimizing MD1000 SAS Solutions' (3 Gb/s SAS); HP Smart Array technology brief (per-link SAS data rate)",
        },
        ControllerPreset {
            name: "perc-h730",
            product: "Dell PERC H730 (LSI SAS3108 ROC, the MegaRAID 9361's), 1 GB non-volatile cache, PCIe 3.0 x8, 8 lanes of 12 Gb/s SAS",
            cache_bytes: 1 << 30,
            sources: "Dell PERC 9 (H330/H730/H730P/H830) user's guide for the 1 GB cache and 12 Gb/s SAS (not retrieved here: check it); the same SAS3108 ROC and PCIe 3.0 x8 as the LSI 9361-8i (Puget Systems, 'Qualification: LSI 9341-8i & 9361-8i RAID Controllers', 2014)",
            ..LSI_9361_8I
        },
        LSI_9260_8I,
        ControllerPreset {
            name: "lsi-9260-8i-cachecade",
            product: "LSI MegaRAID SAS 9260-8i with CacheCade (SSD read cache: add --cache-size and --preset cachecade1)",
            sources: "as lsi-9260-8i; CacheCade 1.0 (read cache) is docs/cache.md's cachecade1 preset",
            ..LSI_9260_8I
        },
        LSI_9361_8I,
        ControllerPreset {
            name: "hpe-p440",
            product: "HPE Smart Array P440 (12 Gb/s SAS, PCIe 3.0 x8), 4 GB flash-backed write cache; HPE SmartCache with --cache-size",
            cache_bytes: 4 << 30,
            sources: "HPE Smart Array P440 QuickSpecs for the 4 GB FBWC, PCIe 3.0 x8 and 8 lanes of 12 Gb/s SAS (not retrieved here: check them); SmartCache as a controller read cache on SSDs (bitcon.be, 'HP SmartCache')",
            ..LSI_9361_8I
        },
        ControllerPreset {
            name: "hpe-p421",
            product: "HP Smart Array P421 (Gen8, 1000 MHz RAID-on-Chip), 2 GiB flash-backed write cache, PCIe x8, two external x4 6 Gb/s SAS ports",
            software: false,
            cache_bytes: 2 << 30,
            // PCIe 3.0 x8 per HP's Gen8 QuickSpecs (not retrieved here: check them); the brief's
            // measurements are bound by the SAS side, never by the host link.
            host_link_bytes_per_sec: Some(8.0 * 985.0 * MB),
            drive_link_bytes_per_sec: Some(8.0 * 600.0 * MB),
            max_iops: Some(200_000.0),
            parity_chunks_per_sec: None,
            read_ahead_bytes: 0,
            sources: HP_SMART_ARRAY_BRIEF,
        },
        ControllerPreset {
            name: "intel-vroc",
            product: "Intel VROC: Linux md RAID on NVMe behind the CPU's VMD (no controller, no cache; md's raid5d bounds RAID 5)",
            software: true,
            cache_bytes: 0,
            host_link_bytes_per_sec: None,
            drive_link_bytes_per_sec: None,
            max_iops: None,
            parity_chunks_per_sec: None,
            read_ahead_bytes: 0,
            sources: "Intel, 'RAID Performance Analysis on Intel VROC' (2019) and Intel VROC Linux documentation: VROC on Linux is md (mdadm, IMSM metadata); md.rst for raid5d and group_thread_cnt",
        },
    ];

    pub fn by_name(name: &str) -> Option<ControllerPreset> {
        let n = name.to_ascii_lowercase();
        ControllerPreset::ALL.into_iter().find(|p| p.name == n)
    }

    /// The narrowest MB/s ceiling of the logical drive.
    pub fn max_bytes_per_sec(&self) -> Option<f64> {
        match (self.host_link_bytes_per_sec, self.drive_link_bytes_per_sec) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn model(&self) -> ControllerModel {
        if self.software {
            return ControllerModel {
                md: Some(MdSettings::default()),
                ..ControllerModel::default()
            };
        }
        ControllerModel {
            overhead_nanos: HARDWARE_OVERHEAD_NANOS,
            write_back_bytes: self.cache_bytes,
            read_ahead_bytes: self.read_ahead_bytes,
            max_iops: self.max_iops,
            max_bytes_per_sec: self.max_bytes_per_sec(),
            parity_chunks_per_sec: self.parity_chunks_per_sec,
            ..ControllerModel::default()
        }
    }

    /// One line for the output: which ceilings the preset sets and which no source gives.
    pub fn describe_ceilings(&self) -> String {
        if self.software {
            return format!("controller {}: Linux md, no controller ceilings", self.name);
        }
        let mbps = self
            .max_bytes_per_sec()
            .map_or("none".to_string(), |b| format!("{:.0} MB/s", b / MB));
        format!(
            "controller {}: {} cache, logical-drive ceiling {mbps} (host link {}, drive side {}); IOPS ceiling {}; parity rate {}",
            self.name,
            crate::units::bytes(self.cache_bytes),
            self.host_link_bytes_per_sec
                .map_or("?".into(), |b| format!("{:.0} MB/s", b / MB)),
            self.drive_link_bytes_per_sec
                .map_or("?".into(), |b| format!("{:.0} MB/s", b / MB)),
            self.max_iops
                .map_or("not published in the sources used, not modelled".into(), |v| format!("{v:.0}")),
            self.parity_chunks_per_sec
                .map_or("not published in the sources used, not modelled".into(), |v| format!("{v:.0} chunks/s")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_have_unique_names_sources_and_link_ceilings() {
        let mut names: Vec<_> = ControllerPreset::ALL.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ControllerPreset::ALL.len());
        for p in ControllerPreset::ALL {
            assert!(!p.sources.is_empty(), "{}", p.name);
            assert_eq!(ControllerPreset::by_name(&p.name.to_uppercase()), Some(p));
            let m = p.model();
            if p.software {
                assert!(m.md.is_some() && m.max_bytes_per_sec.is_none());
            } else {
                assert!(m.md.is_none());
                assert_eq!(m.write_back_bytes, p.cache_bytes);
                assert!(m.max_bytes_per_sec.is_some_and(|b| b > 0.0));
            }
        }
        // PERC 5/E: one x4 3 Gb/s wide port (1,200 MB/s) is narrower than PCIe 1.x x8 (2,000).
        let perc = ControllerPreset::by_name("perc-5e").unwrap();
        assert_eq!(perc.max_bytes_per_sec(), Some(1200e6));
        assert!(ControllerPreset::by_name("perc-9").is_none());
        // The Smart Array P421's RAID-on-Chip: HP's published 200,000 4 KB IOPS.
        let p421 = ControllerPreset::by_name("hpe-p421").unwrap();
        assert_eq!(p421.model().max_iops, Some(200_000.0));
        assert!(p421.describe_ceilings().contains("IOPS ceiling 200000"));
    }
}
