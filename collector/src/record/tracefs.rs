//! tracefs plumbing: finding (or mounting) it, writing control files with useful errors, and
//! the `instances/` directory `blocksight record` owns.
//!
//! Our instances are named [`INSTANCE_PREFIX`] + our pid. A collector killed with SIGKILL
//! cannot remove its instance, so every start removes instances with our prefix whose pid is
//! no longer alive, and only those: another tool's instance, or a live collector's, is never
//! touched.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::sys;

/// Name prefix of the tracefs instances `blocksight record` creates.
pub const INSTANCE_PREFIX: &str = "blocksight-rec-";

/// Writes `value` to a tracefs or sysfs control file; the error names the file.
pub fn write_control(path: &Path, value: &str) -> anyhow::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.write_all(value.as_bytes())
        .with_context(|| format!("writing {value:?} to {}", path.display()))
}

/// Reads a control file, trimmed.
pub fn read_control(path: &Path) -> anyhow::Result<String> {
    Ok(std::fs::read_to_string(path)
        .with_context(|| format!("reading {}", path.display()))?
        .trim()
        .to_string())
}

/// The tracefs root, mounting tracefs at /sys/kernel/tracing when it is not mounted.
pub fn find_or_mount() -> anyhow::Result<PathBuf> {
    for root in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        let root = PathBuf::from(root);
        if root.join("instances").is_dir() {
            return Ok(root);
        }
    }
    let root = PathBuf::from("/sys/kernel/tracing");
    let status = std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev"])
        .arg(&root)
        .stderr(std::process::Stdio::null())
        .status();
    if matches!(status, Ok(s) if s.success()) && root.join("instances").is_dir() {
        return Ok(root);
    }
    bail!(
        "tracefs is not available: mount it with `mount -t tracefs nodev /sys/kernel/tracing` \
         (the kernel needs CONFIG_FTRACE and CONFIG_BLK_DEV_IO_TRACE or block tracepoints)"
    )
}

/// The pid encoded in one of our instance names.
pub fn instance_pid(name: &str) -> Option<u32> {
    name.strip_prefix(INSTANCE_PREFIX)?.parse().ok()
}

/// Whether `pid` is a running blocksight. A live pid running something else means the
/// collector died and its pid was reused.
pub fn collector_alive(pid: u32) -> bool {
    if !sys::pid_alive(pid) {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        Ok(comm) => comm.trim().starts_with("blocksight"),
        // Cannot tell: leave it alone.
        Err(_) => true,
    }
}

/// Removes instances left by collectors that no longer run; returns their names.
pub fn remove_stale_instances(root: &Path) -> Vec<String> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(root.join("instances")) else {
        return removed;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = instance_pid(&name) else {
            continue;
        };
        if pid == std::process::id() || collector_alive(pid) {
            continue;
        }
        let dir = entry.path();
        let _ = write_control(&dir.join("tracing_on"), "0");
        let _ = write_control(&dir.join("events/enable"), "0");
        if std::fs::remove_dir(&dir).is_ok() {
            removed.push(name);
        }
    }
    removed
}

/// A tracefs instance we created; dropping it disables its tracing and removes it. Files opened
/// inside it must be closed first (the kernel refuses to remove a busy instance), so owners drop
/// their readers before this.
#[derive(Debug)]
pub struct Instance {
    pub dir: PathBuf,
    removed: bool,
}

impl Instance {
    /// Creates `instances/blocksight-rec-<pid>`.
    pub fn create(root: &Path) -> anyhow::Result<Instance> {
        let dir = root
            .join("instances")
            .join(format!("{INSTANCE_PREFIX}{}", std::process::id()));
        if dir.exists() {
            // Left by an earlier run of this very pid (pid reuse after a SIGKILL).
            let _ = std::fs::remove_dir(&dir);
        }
        std::fs::create_dir(&dir).with_context(|| {
            format!(
                "creating tracefs instance {} (is tracefs writable? are you root?)",
                dir.display()
            )
        })?;
        Ok(Instance {
            dir,
            removed: false,
        })
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Disables tracing in the instance (idempotent).
    pub fn disable(&self) {
        let _ = write_control(&self.path("tracing_on"), "0");
        let _ = write_control(&self.path("events/enable"), "0");
    }

    /// Disables and removes the instance; the error says what is left behind.
    pub fn remove(&mut self) -> anyhow::Result<()> {
        if self.removed {
            return Ok(());
        }
        self.disable();
        // The kernel can briefly report EBUSY while a reader's file is being released.
        let mut last = None;
        for _ in 0..50 {
            match std::fs::remove_dir(&self.dir) {
                Ok(()) => {
                    self.removed = true;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    self.removed = true;
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Err(anyhow::anyhow!(
            "could not remove tracefs instance {}: {} (remove it with `rmdir {}`)",
            self.dir.display(),
            last.map(|e| e.to_string()).unwrap_or_default(),
            self.dir.display()
        ))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            eprintln!("blocksight: warning: {e:#}");
        }
    }
}

/// Number of CPUs with a `per_cpu/cpuN` directory under `dir`.
pub fn cpu_dirs(dir: &Path) -> anyhow::Result<Vec<(usize, PathBuf)>> {
    let mut cpus = Vec::new();
    for entry in std::fs::read_dir(dir.join("per_cpu"))
        .with_context(|| format!("listing {}/per_cpu", dir.display()))?
    {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(n) = name
            .strip_prefix("cpu")
            .and_then(|n| n.parse::<usize>().ok())
        {
            cpus.push((n, entry.path()));
        }
    }
    cpus.sort();
    Ok(cpus)
}

/// Sum of `overrun` and `dropped events` over the per-CPU `stats` files under `dir`.
pub fn lost_from_stats(dir: &Path) -> u64 {
    let Ok(cpus) = cpu_dirs(dir) else { return 0 };
    let mut lost = 0;
    for (_, cpu) in cpus {
        let Ok(text) = std::fs::read_to_string(cpu.join("stats")) else {
            continue;
        };
        lost += parse_lost(&text);
    }
    lost
}

fn parse_lost(stats: &str) -> u64 {
    stats
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| matches!(k.trim(), "overrun" | "dropped events"))
        .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
        .sum()
}

/// Opens a per-CPU pipe file for non-blocking reads.
pub fn open_nonblocking(path: &Path) -> anyhow::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_lost_counts_overruns_and_drops() {
        let stats = "entries: 5\noverrun: 3\ncommit overrun: 9\nbytes: 100\noldest event ts:     0.000000\nnow ts:   597.623901\ndropped events: 4\nread events: 10\n";
        assert_eq!(parse_lost(stats), 7);
    }

    #[test]
    fn a_reused_pid_is_not_a_live_collector() {
        // pid 1 is alive but is init, not blocksight; our own test binary is not named
        // blocksight either.
        assert!(!collector_alive(1));
        assert!(!collector_alive(u32::MAX));
    }

    #[test]
    fn only_our_prefix_with_a_pid_is_ours() {
        assert_eq!(instance_pid("blocksight-rec-123"), Some(123));
        assert_eq!(instance_pid("blocksight-rec-x"), None);
        assert_eq!(instance_pid("blocksight-fixture-123"), None);
        assert_eq!(instance_pid("perf-123"), None);
    }
}
