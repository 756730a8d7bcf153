//! The array description file (`--array FILE`, JSON): nested layouts, per-parameter device
//! overrides, the controller and the cache tier in one small document. Sizes are plain byte
//! counts in fields named `*_bytes`. Example (tests/data/array/ has more):
//!
//! ```json
//! {
//!   "disk": "sas-15k",
//!   "disk_overrides": { "capacity_bytes": 146000000000 },
//!   "layout": { "level": "raid0", "chunk_bytes": 65536,
//!               "members": [ { "level": "raid1", "disks": 2 }, { "level": "raid1", "disks": 2 } ] },
//!   "controller": { "overhead_nanos": 25000, "write_back_bytes": 268435456 },
//!   "cache": { "disk": "sata-ssd", "layout": { "level": "raid1", "disks": 2 } }
//! }
//! ```

use super::device::{DeviceModel, DiskPreset};
use super::ArrayError;

#[cfg(feature = "array-files")]
mod file;
#[cfg(feature = "array-files")]
pub use file::*;

/// A preset's model, by name (`unknown disk preset` names the presets).
pub fn preset_device(preset: &str) -> Result<DeviceModel, ArrayError> {
    DiskPreset::from_name(preset)
        .map(|p| p.model())
        .ok_or_else(|| {
            let names: Vec<&str> = DiskPreset::ALL.iter().map(|p| p.name()).collect();
            ArrayError::Spec(format!(
                "unknown disk preset {preset:?} (expected one of {})",
                names.join(", ")
            ))
        })
}
