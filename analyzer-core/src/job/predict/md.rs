//! What Linux md sends its member disks for the trace's bios, as a job: `predict --md-members`
//! (the count model [`crate::array::md`], no timing). The request names the array as the CLI's
//! flags do (`--layout raid5 --disks 6 --chunk 64KiB`); the defaults (md's `stripe_cache_size`
//! 256, no worker threads, a head handled at the end of its own bio) and the parsing of the
//! level's name are here, so every host gets the same counts.

use serde::{Deserialize, Serialize};

use crate::array::md::{MdConfig, MdLevel, MdModel, MdResult, Raid10Layout};
use crate::job::{Job, JobError, WindowFilter, WindowNanos};
use crate::{Diagnostics, IoEvent, TraceHeader};

/// The md array to count for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MdRequest {
    /// `raid0`, `raid1`, `raid10`, `raid5` or `raid6` (the `--layout` names).
    pub layout: String,
    /// Member disks.
    pub members: u32,
    pub chunk_bytes: u64,
    /// md's `stripe_cache_size` (RAID 5/6); default 256.
    #[serde(default)]
    pub stripe_cache_size: Option<u32>,
    /// md's `group_thread_cnt`; default 0. Carried into the result's configuration.
    #[serde(default)]
    pub group_thread_cnt: Option<u32>,
    /// RAID 10's layout as mdadm names it (`n2`, `f2`, `o2`, `n3`, …); default `n2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raid10_layout: Option<String>,
    /// Bios a stripe head needing pre-reads waits for, the workload's queue depth (the CLI's
    /// `--qd`); default 1.
    #[serde(default)]
    pub gather_bios: Option<u32>,
    /// md's `safe_mode_delay` in nanoseconds (default 200 ms; 0 turns safe mode off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safe_mode_delay_nanos: Option<u64>,
    /// Only `[start, end)` nanoseconds after the first request.
    #[serde(default)]
    pub window_nanos: WindowNanos,
}

impl MdRequest {
    /// The array with md's defaults.
    pub fn new(layout: impl Into<String>, members: u32, chunk_bytes: u64) -> MdRequest {
        MdRequest {
            layout: layout.into(),
            members,
            chunk_bytes,
            stripe_cache_size: None,
            group_thread_cnt: None,
            raid10_layout: None,
            gather_bios: None,
            safe_mode_delay_nanos: None,
            window_nanos: None,
        }
    }

    /// md's configuration, checked.
    pub fn config(&self) -> Result<MdConfig, JobError> {
        let level = MdLevel::from_name(&self.layout).ok_or_else(|| JobError::UnknownName {
            what: "md level",
            name: self.layout.clone(),
            expected: MdLevel::ALL
                .iter()
                .map(|l| l.name())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
        let mut c = MdConfig::new(level, self.members, self.chunk_bytes);
        if let Some(n) = self.stripe_cache_size {
            c.stripe_cache_size = n;
        }
        if let Some(n) = self.group_thread_cnt {
            c.group_thread_cnt = n;
        }
        if let Some(name) = &self.raid10_layout {
            c.raid10 = raid10_layout(name, level.name())?;
        }
        c.gather_bios = self.gather_bios.unwrap_or(1).max(1);
        if let Some(ns) = self.safe_mode_delay_nanos {
            c.safe_mode_delay_nanos = ns;
        }
        c.validate().map_err(JobError::Md)?;
        Ok(c)
    }
}

/// A RAID 10 layout's name (`n2`, `f2`, `o2`, …), checked: refused for any level but `raid10`
/// (the `--layout` name given; mdadm's `--layout` means a parity rotation for RAID 5/6, which
/// the model does not vary).
pub fn raid10_layout(name: &str, level: &str) -> Result<Raid10Layout, JobError> {
    if MdLevel::from_name(level) != Some(MdLevel::Raid10) {
        return Err(JobError::Invalid {
            what: format!("RAID 10 layout {name:?}"),
            why: format!("given for {level}; it applies to raid10 only"),
        });
    }
    Raid10Layout::from_name(name).ok_or_else(|| JobError::UnknownName {
        what: "RAID 10 layout",
        name: name.to_owned(),
        expected: "n2, f2, o2 (near, far or offset copies; any number of copies up to the members, e.g. n3)"
            .into(),
    })
}

/// The model's name in the result, `"md"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MdModelName {
    #[serde(rename = "md")]
    Md,
}

/// What `blocksight predict --md-members --json` prints: the request, `"model": "md"` and the
/// member I/O.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MdMembersResult {
    pub request: MdRequest,
    pub model: MdModelName,
    pub result: MdResult,
}

/// The job: one pass through the model.
pub struct MdMembers {
    request: MdRequest,
    window: WindowFilter,
    model: MdModel,
}

impl MdMembers {
    pub fn new(request: MdRequest) -> Result<MdMembers, JobError> {
        let model = MdModel::new(&request.config()?).map_err(JobError::Md)?;
        Ok(MdMembers {
            window: WindowFilter::new(request.window_nanos),
            request,
            model,
        })
    }
}

impl Job for MdMembers {
    type Output = MdMembersResult;

    fn passes(&self) -> usize {
        1
    }

    fn begin_pass(&mut self, _pass: usize) {
        self.window.reset();
    }

    fn observe(&mut self, e: &IoEvent) {
        if self.window.admits(e) {
            self.model.observe(e);
        }
    }

    fn end_pass(
        &mut self,
        _header: &TraceHeader,
        _diagnostics: &Diagnostics,
    ) -> Result<(), JobError> {
        Ok(())
    }

    fn finish(self) -> Result<MdMembersResult, JobError> {
        Ok(MdMembersResult {
            request: self.request,
            model: MdModelName::Md,
            result: self.model.finish(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::md::{simulate_md, MdConfigError};
    use crate::job::run_events;
    use crate::Op;

    const KIB: u64 = 1024;

    fn writes() -> Vec<IoEvent> {
        (0..64u64)
            .map(|i| IoEvent {
                time_nanos: i * 1_000_000,
                device: 0,
                offset_bytes: ((i * 37) % 64) * 4 * KIB,
                len_bytes: 4096,
                op: Op::Write,
                latency_nanos: None,
                pid: None,
            })
            .collect()
    }

    #[test]
    fn the_job_is_the_model_fed_directly() {
        let mut request = MdRequest::new("RAID5", 5, 16 * KIB);
        request.gather_bios = Some(4);
        let job = run_events(
            MdMembers::new(request.clone()).expect("job"),
            &TraceHeader::default(),
            &writes(),
        )
        .expect("runs");
        let mut config = MdConfig::new(MdLevel::Raid5, 5, 16 * KIB);
        config.gather_bios = 4;
        assert_eq!(job.result, simulate_md(&config, writes()).expect("model"));
        let v = serde_json::to_value(&job).expect("serialises");
        assert_eq!(v["model"], "md");
        assert_eq!(v["request"]["layout"], "RAID5");
        let back: MdMembersResult = serde_json::from_value(v).expect("reads back");
        assert_eq!(back, job);
    }

    #[test]
    fn a_window_keeps_only_its_bios() {
        let mut request = MdRequest::new("raid0", 2, 64 * KIB);
        request.window_nanos = Some((0, 10_000_000));
        let r = run_events(
            MdMembers::new(request).expect("job"),
            &TraceHeader::default(),
            &writes(),
        )
        .expect("runs");
        assert_eq!(r.result.total.write_bios, 10);
    }

    #[test]
    fn bad_arrays_are_refused_before_any_pass() {
        assert!(matches!(
            MdMembers::new(MdRequest::new("raid4", 5, 64 * KIB)).err(),
            Some(JobError::UnknownName {
                what: "md level",
                ..
            })
        ));
        let e = MdMembers::new(MdRequest::new("raid6", 3, 64 * KIB))
            .err()
            .expect("too few members");
        assert!(matches!(
            e,
            JobError::Md(MdConfigError::Members { min: 4, .. })
        ));
        assert_eq!(e.to_string(), "md: Raid6 needs 4 to 256 members, not 3");
    }
}
