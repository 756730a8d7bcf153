//! The array description file itself: its JSON schema and how it becomes an `ArrayConfig`
//! (feature `array-files`, serde_json's parser: the native hosts; the browser's worker has no
//! way to be given one and leaves the parser out of its bundle).

use serde::Deserialize;

use super::preset_device;
use crate::array::controller::ControllerModel;
use crate::array::device::DeviceModel;
use crate::array::layout::{Level, Member, Node, ParityWrite};
use crate::array::{ArrayConfig, ArrayError, CacheDevices, StandardLevel};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArraySpec {
    /// Preset name for every disk unless a node says otherwise.
    pub disk: String,
    /// Fields of the device model to override (any field of the preset's model).
    #[serde(default)]
    pub disk_overrides: Option<serde_json::Map<String, serde_json::Value>>,
    pub layout: NodeSpec,
    #[serde(default)]
    pub controller: Option<ControllerModel>,
    #[serde(default)]
    pub cache: Option<CacheSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSpec {
    pub disk: String,
    #[serde(default)]
    pub disk_overrides: Option<serde_json::Map<String, serde_json::Value>>,
    pub layout: NodeSpec,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// concat/jbod, raid0, raid1, raid5, raid6, raid10, raid50, raid60.
    pub level: String,
    #[serde(default)]
    pub chunk_bytes: Option<u64>,
    /// Leaf disks directly under this node.
    #[serde(default)]
    pub disks: Option<u32>,
    /// Nested members (instead of `disks`).
    #[serde(default)]
    pub members: Option<Vec<NodeSpec>>,
    /// Groups for raid10/50/60 given with `disks`.
    #[serde(default)]
    pub groups: Option<u32>,
    #[serde(default)]
    pub failed: Vec<usize>,
    #[serde(default)]
    pub parity_write: Option<ParityWrite>,
}

/// Default stripe unit when a description names none: 64 KiB, the usual controller default.
pub const DEFAULT_CHUNK_BYTES: u64 = 64 * 1024;

/// A preset's model with `overrides` applied field by field; unknown fields are errors.
pub fn device_with_overrides(
    preset: &str,
    overrides: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Result<DeviceModel, ArrayError> {
    let model = preset_device(preset)?;
    let Some(over) = overrides else {
        return Ok(model);
    };
    let mut value = serde_json::to_value(&model).map_err(|e| ArrayError::Spec(e.to_string()))?;
    if let Some(obj) = value.as_object_mut() {
        for (k, v) in over {
            if k == "kind" {
                return Err(ArrayError::Spec(
                    "disk_overrides cannot change the device kind".into(),
                ));
            }
            obj.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(value).map_err(|e| ArrayError::Spec(format!("disk_overrides: {e}")))
}

fn build(spec: &NodeSpec, next_disk: &mut u32) -> Result<Node, ArrayError> {
    let chunk = spec.chunk_bytes.unwrap_or(DEFAULT_CHUNK_BYTES);
    let level = StandardLevel::from_name(&spec.level)
        .ok_or_else(|| ArrayError::Spec(format!("unknown level {:?} (expected concat, raid0, raid1, raid5, raid6, raid10, raid50 or raid60)", spec.level)))?;
    let mut node = match (&spec.members, spec.disks) {
        (Some(members), None) => {
            let base = match level {
                StandardLevel::Jbod => Level::Concat,
                StandardLevel::Raid0 => Level::Raid0,
                StandardLevel::Raid1 => Level::Raid1,
                StandardLevel::Raid5 => Level::Raid5,
                StandardLevel::Raid6 => Level::Raid6,
                other => {
                    return Err(ArrayError::Spec(format!(
                        "{} with explicit members: write it as raid0 over raid1/5/6 members",
                        other.name()
                    )))
                }
            };
            let mut children = Vec::new();
            for m in members {
                children.push(Member::Node(Box::new(build(m, next_disk)?)));
            }
            Node::new(base, chunk, children)
        }
        (None, Some(n)) => {
            let mut node = level.build(n, chunk, spec.groups)?;
            shift(&mut node, *next_disk);
            *next_disk += n;
            node
        }
        _ => {
            return Err(ArrayError::Spec(format!(
                "level {:?}: give exactly one of \"disks\" or \"members\"",
                spec.level
            )))
        }
    };
    node.failed = spec.failed.clone();
    if let Some(p) = spec.parity_write {
        node.parity_write = p;
    }
    Ok(node)
}

fn shift(node: &mut Node, by: u32) {
    for m in &mut node.members {
        match m {
            Member::Disk(d) => *d += by,
            Member::Node(n) => shift(n, by),
        }
    }
}

impl ArraySpec {
    pub fn parse(json: &str) -> Result<ArraySpec, ArrayError> {
        serde_json::from_str(json)
            .map_err(|e| ArrayError::Spec(format!("line {} column {}: {e}", e.line(), e.column())))
    }

    pub fn to_config(&self) -> Result<ArrayConfig, ArrayError> {
        let mut n = 0;
        let layout = build(&self.layout, &mut n)?;
        let device = device_with_overrides(&self.disk, self.disk_overrides.as_ref())?;
        let mut cfg = ArrayConfig::new(
            vec![device; n as usize],
            layout,
            self.controller
                .clone()
                .unwrap_or_else(ControllerModel::software),
        )?;
        if let Some(c) = &self.cache {
            let mut m = 0;
            let layout = build(&c.layout, &mut m)?;
            let device = device_with_overrides(&c.disk, c.disk_overrides.as_ref())?;
            cfg = cfg.with_cache(CacheDevices {
                devices: vec![device; m as usize],
                layout,
            })?;
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_description_builds_raid0_over_mirrors_with_overrides() {
        let spec = ArraySpec::parse(
            r#"{"disk":"sas-15k","disk_overrides":{"capacity_bytes":146000000000,"rpm":10000},
                "layout":{"level":"raid0","chunk_bytes":131072,"members":[{"level":"raid1","disks":2},{"level":"raid1","disks":2}]},
                "controller":{"overhead_nanos":10000},
                "cache":{"disk":"nvme","layout":{"level":"raid1","disks":2}}}"#,
        )
        .expect("parses");
        let cfg = spec.to_config().expect("builds");
        assert_eq!(cfg.devices.len(), 4);
        let mut disks = Vec::new();
        cfg.layout.disks(&mut disks);
        assert_eq!(disks, vec![0, 1, 2, 3]);
        assert_eq!(
            cfg.capacity_bytes(),
            2 * (146_000_000_000 - 146_000_000_000 % 131072)
        );
        let DeviceModel::Hdd(h) = &cfg.devices[0] else {
            panic!("hdd")
        };
        assert_eq!(h.rpm, 10000.0);
        assert_eq!(cfg.controller.overhead_nanos, 10000);
        assert_eq!(cfg.cache.as_ref().map(|c| c.devices.len()), Some(2));
    }

    #[test]
    fn errors_name_the_problem() {
        let e = ArraySpec::parse(r#"{"disk":"sas-15k","layout":{"level":"raid7","disks":4}}"#)
            .and_then(|s| s.to_config());
        assert!(format!("{}", e.expect_err("bad level")).contains("raid7"));
        let e = ArraySpec::parse(r#"{"disk":"sas-15k","disk_overrides":{"warp":1},"layout":{"level":"raid5","disks":4}}"#).and_then(|s| s.to_config());
        assert!(format!("{}", e.expect_err("bad field")).contains("warp"));
        let e = ArraySpec::parse(
            r#"{"disk":"sas-15k","layout":{"level":"raid5","disks":4,"failed":[0,1]}}"#,
        )
        .and_then(|s| s.to_config());
        assert!(format!("{}", e.expect_err("two failed")).contains("failed"));
        let e = ArraySpec::parse(
            r#"{"disk":"sas-15k","disk_overrides":{"rpm":0},"layout":{"level":"raid1","disks":2}}"#,
        )
        .and_then(|s| s.to_config());
        assert!(format!("{}", e.expect_err("zero rpm")).contains("rpm"));
        assert!(ArraySpec::parse("{").is_err());
    }
}
