//! The `blk` backend: the kernel's blk tracer (what the blktrace tool uses), which emits
//! `struct blk_io_trace` records. The tool's ioctl + debugfs relay path answers EPERM on some
//! machines (VMs, locked-down kernels); the tracefs route works there: `current_tracer` = `blk`
//! with the `bin` option, per-disk `/sys/block/DISK/trace/enable`, and each CPU's `trace_pipe`
//! then carries raw `blk_io_trace` records.
//!
//! The blk tracer exists only at the tracefs top level, so unlike the `events` backend this
//! one borrows global state: it refuses to start when another tracer is active, saves what it
//! changes, and restores it on every exit. A marker file (`/run/blocksight/blk-tracer`) holds
//! our pid and the saved settings so a later start can undo what a killed collector left.

use std::io::Read;
use std::path::{Path, PathBuf};

use analyzer_core::Op;
use anyhow::{bail, Context};

use super::device::{DeviceMap, Level};
use super::tracefs::{self, write_control};
use super::tracker::{Kind, Record};
use super::{sys, Source};

/// `struct blk_io_trace` without its payload.
pub const TRACE_BYTES: usize = 48;
const MAGIC: u32 = 0x6561_7400;
const MAGIC_MASK: u32 = 0xffff_ff00;
const VERSION: u32 = 0x07;
/// Actions (`__BLK_TA_*`), low 16 bits of `action`.
const TA_QUEUE: u32 = 1;
const TA_ISSUE: u32 = 7;
const TA_COMPLETE: u32 = 8;
/// Category bits (`BLK_TC_*`), shifted into the high 16 bits of `action`.
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;

const MARKER: &str = "/run/blocksight/blk-tracer";

/// One decoded `blk_io_trace`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlkTrace {
    pub time_nanos: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    pub device: u32,
}

/// Splits a byte stream into `blk_io_trace` records (host endianness: the records come from
/// this machine's kernel). Returns bytes consumed; an incomplete tail stays for the next call.
/// Bytes that are not a record (no magic) are skipped one at a time and counted in `skipped`.
pub fn split_records(buf: &[u8], skipped: &mut u64, mut on: impl FnMut(BlkTrace)) -> usize {
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let u64_at = |b: &[u8], at: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(a)
    };
    let mut at = 0;
    while buf.len() - at >= TRACE_BYTES {
        let r = &buf[at..at + TRACE_BYTES];
        let magic = u32_at(r, 0);
        if magic & MAGIC_MASK != MAGIC || magic & 0xff != VERSION {
            *skipped += 1;
            at += 1;
            continue;
        }
        let pdu_len = usize::from(u16::from_le_bytes([r[46], r[47]]));
        if buf.len() - at < TRACE_BYTES + pdu_len {
            break;
        }
        on(BlkTrace {
            time_nanos: u64_at(r, 8),
            sector: u64_at(r, 16),
            bytes: u32_at(r, 24),
            action: u32_at(r, 28),
            pid: u32_at(r, 32),
            device: u32_at(r, 36),
        });
        at += TRACE_BYTES + pdu_len;
    }
    at
}

/// A record for the tracker, when `t` is an issue or completion on a traced device: `D` is
/// the issue of request-level devices, `Q` of bio-level ones (see [`super::device::Level`]).
pub fn to_record(t: &BlkTrace, map: &DeviceMap) -> Option<Record> {
    let category = t.action >> 16;
    if category & TC_NOTIFY != 0 {
        return None;
    }
    let (kind, level) = match t.action & 0xffff {
        TA_ISSUE => (Kind::Issue, Some(Level::Request)),
        TA_QUEUE => (Kind::Issue, Some(Level::Bio)),
        TA_COMPLETE => (Kind::Complete, None),
        _ => return None,
    };
    // The level of the device: its completions are a bio's or a request's.
    let bio = level == Some(Level::Bio)
        || (kind == Kind::Complete
            && map.map(t.device, 0, false).and_then(|(i, _)| map.level(i)) == Some(Level::Bio));
    let op = if category & TC_DISCARD != 0 {
        Op::Discard
    } else if t.bytes == 0
        && (category & TC_FLUSH != 0 || (kind == Kind::Complete && !(bio && t.sector > 0)))
    {
        // A completion's flush flag may already be cleared; a bio's completion past sector 0
        // with nothing left is a bio consumed to its end (see `Record::bio`).
        Op::Flush
    } else if t.bytes == 0 && kind == Kind::Issue {
        return None;
    } else if category & TC_WRITE != 0 {
        Op::Write
    } else {
        Op::Read
    };
    let (device, rel_sector) = map.map(t.device, t.sector, op != Op::Flush)?;
    if level.is_some() && map.level(device) != level {
        return None;
    }
    Some(Record {
        time_nanos: t.time_nanos,
        kind,
        device,
        offset_bytes: rel_sector.saturating_mul(512),
        len_bytes: if op == Op::Flush { 0 } else { t.bytes },
        op,
        pid: Some(t.pid).filter(|&p| p != 0),
        bio,
    })
}

/// Global settings we change, to put back.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Saved {
    pid: u32,
    trace_clock: String,
    buffer_kb: String,
    bin: String,
    /// `options/context-info`: with it on, each record is preceded by pid, cpu and time.
    context_info: String,
    disks: Vec<String>,
}

impl Saved {
    fn to_text(&self) -> String {
        let mut s = format!(
            "pid {}\nclock {}\nbuffer_kb {}\nbin {}\ncontext_info {}\n",
            self.pid, self.trace_clock, self.buffer_kb, self.bin, self.context_info
        );
        for d in &self.disks {
            s.push_str(&format!("disk {d}\n"));
        }
        s
    }

    fn from_text(text: &str) -> Option<Saved> {
        let mut saved = Saved {
            pid: 0,
            trace_clock: "local".into(),
            buffer_kb: String::new(),
            bin: "0".into(),
            context_info: "1".into(),
            disks: Vec::new(),
        };
        for line in text.lines() {
            let (k, v) = line.split_once(' ')?;
            match k {
                "pid" => saved.pid = v.parse().ok()?,
                "clock" => saved.trace_clock = v.to_string(),
                "buffer_kb" => saved.buffer_kb = v.to_string(),
                "bin" => saved.bin = v.to_string(),
                "context_info" => saved.context_info = v.to_string(),
                "disk" => saved.disks.push(v.to_string()),
                _ => {}
            }
        }
        Some(saved)
    }
}

/// The current clock name from `trace_clock`'s `[local] global ...` listing.
fn selected_clock(text: &str) -> String {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap_or("local")
        .to_string()
}

fn restore(root: &Path, saved: &Saved) {
    for disk in &saved.disks {
        let _ = write_control(
            &PathBuf::from(format!("/sys/block/{disk}/trace/enable")),
            "0",
        );
    }
    let _ = write_control(&root.join("current_tracer"), "nop");
    let _ = write_control(&root.join("options/bin"), &saved.bin);
    let _ = write_control(&root.join("options/context-info"), &saved.context_info);
    let _ = write_control(&root.join("trace_clock"), &saved.trace_clock);
    if !saved.buffer_kb.is_empty() {
        let _ = write_control(&root.join("buffer_size_kb"), &saved.buffer_kb);
    }
}

/// Undoes what a killed collector's blk backend left; returns a message when it did.
pub fn remove_stale(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(MARKER).ok()?;
    let saved = Saved::from_text(&text)?;
    if tracefs::collector_alive(saved.pid) {
        return None;
    }
    restore(root, &saved);
    let _ = std::fs::remove_file(MARKER);
    Some(format!(
        "restored the blk tracer settings left by a killed collector (pid {})",
        saved.pid
    ))
}

struct CpuPipe {
    cpu: usize,
    file: std::fs::File,
    carry: Vec<u8>,
}

pub struct BlkBackend {
    cpus: Vec<CpuPipe>,
    root: PathBuf,
    saved: Saved,
    map: DeviceMap,
    buf: Vec<u8>,
    skipped_bytes: u64,
    active: bool,
}

impl BlkBackend {
    pub fn start(root: &Path, map: DeviceMap, buffer_kb: u64) -> anyhow::Result<BlkBackend> {
        if let Some(msg) = remove_stale(root) {
            eprintln!("blocksight: {msg}");
        }
        let current = tracefs::read_control(&root.join("current_tracer"))?;
        if current != "nop" {
            bail!(
                "the kernel's tracer is in use (current_tracer is {current:?}, maybe by blktrace, \
                 perf or another blocksight): stop that tool, or use `--backend events`, which \
                 needs no global tracer"
            );
        }
        if !tracefs::read_control(&root.join("available_tracers"))?
            .split_whitespace()
            .any(|t| t == "blk")
        {
            bail!(
                "this kernel has no blk tracer (CONFIG_BLK_DEV_IO_TRACE): use `--backend events`"
            );
        }
        let mut disks: Vec<String> = map.devices().iter().map(|d| d.disk_name.clone()).collect();
        disks.sort();
        disks.dedup();
        let saved = Saved {
            pid: std::process::id(),
            trace_clock: selected_clock(&tracefs::read_control(&root.join("trace_clock"))?),
            buffer_kb: tracefs::read_control(&root.join("buffer_size_kb")).unwrap_or_default(),
            bin: tracefs::read_control(&root.join("options/bin")).unwrap_or_else(|_| "0".into()),
            context_info: tracefs::read_control(&root.join("options/context-info"))
                .unwrap_or_else(|_| "1".into()),
            disks: disks.clone(),
        };
        if let Some(dir) = Path::new(MARKER).parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(MARKER, saved.to_text()).with_context(|| format!("writing {MARKER}"))?;
        let mut backend = BlkBackend {
            cpus: Vec::new(),
            root: root.to_path_buf(),
            saved,
            map,
            buf: vec![0; 64 * 1024],
            skipped_bytes: 0,
            active: true,
        };
        // From here on, Drop restores everything.
        write_control(&root.join("buffer_size_kb"), &buffer_kb.to_string()).with_context(|| {
            format!(
                "allocating {buffer_kb} KiB of trace buffer per CPU (try a smaller --buffer-kb)"
            )
        })?;
        write_control(&root.join("trace_clock"), "mono")?;
        write_control(&root.join("options/bin"), "1")?;
        // Without this each record comes after 16 bytes of pid, cpu and time stamp.
        write_control(&root.join("options/context-info"), "0")?;
        write_control(&root.join("current_tracer"), "blk")?;
        for (cpu, dir) in tracefs::cpu_dirs(root)? {
            backend.cpus.push(CpuPipe {
                cpu,
                file: tracefs::open_nonblocking(&dir.join("trace_pipe"))?,
                carry: Vec::new(),
            });
        }
        for disk in &disks {
            let dir = PathBuf::from(format!("/sys/block/{disk}/trace"));
            // Only the actions we use: fewer records to copy and decode.
            let bio_level = backend
                .map
                .devices()
                .iter()
                .any(|d| &d.disk_name == disk && d.level == Level::Bio);
            let mask = if bio_level {
                "queue,complete"
            } else {
                "issue,complete"
            };
            let _ = write_control(&dir.join("act_mask"), mask);
            write_control(&dir.join("enable"), "1").with_context(|| {
                format!("enabling the blk tracer on {disk} (is blktrace already tracing it?)")
            })?;
        }
        Ok(backend)
    }

    fn restore_all(&mut self) {
        if !self.active {
            return;
        }
        self.active = false;
        self.cpus.clear();
        restore(&self.root, &self.saved);
        let _ = std::fs::remove_file(MARKER);
    }
}

impl Drop for BlkBackend {
    fn drop(&mut self) {
        self.restore_all();
    }
}

impl Source for BlkBackend {
    fn now_nanos(&self) -> u64 {
        sys::monotonic_nanos()
    }

    fn read(&mut self, out: &mut Vec<Record>) -> anyhow::Result<u64> {
        let mut total = 0u64;
        for cpu in &mut self.cpus {
            for _ in 0..256 {
                let n = match cpu.file.read(&mut self.buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        return Err(e).with_context(|| format!("reading cpu{} trace_pipe", cpu.cpu))
                    }
                };
                total += n as u64;
                cpu.carry.extend_from_slice(&self.buf[..n]);
                let map = &self.map;
                let used = split_records(&cpu.carry, &mut self.skipped_bytes, |t| {
                    out.extend(to_record(&t, map))
                });
                cpu.carry.drain(..used);
            }
        }
        Ok(total)
    }

    fn lost_events(&mut self) -> u64 {
        tracefs::lost_from_stats(&self.root)
    }

    fn stop(&mut self) -> anyhow::Result<()> {
        for disk in &self.saved.disks {
            let _ = write_control(
                &PathBuf::from(format!("/sys/block/{disk}/trace/enable")),
                "0",
            );
        }
        Ok(())
    }

    fn teardown(&mut self) -> anyhow::Result<()> {
        self.restore_all();
        Ok(())
    }

    fn skipped(&self) -> u64 {
        self.skipped_bytes
    }

    fn device_gone(&self) -> Option<String> {
        super::device::gone(&self.map, Path::new("/sys"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::device::{kernel_dev, TracedDevice};

    fn trace(time: u64, sector: u64, bytes: u32, action: u32, dev: u32) -> Vec<u8> {
        let mut r = Vec::with_capacity(TRACE_BYTES);
        r.extend_from_slice(&(MAGIC | VERSION).to_le_bytes());
        r.extend_from_slice(&0u32.to_le_bytes());
        r.extend_from_slice(&time.to_le_bytes());
        r.extend_from_slice(&sector.to_le_bytes());
        r.extend_from_slice(&bytes.to_le_bytes());
        r.extend_from_slice(&action.to_le_bytes());
        r.extend_from_slice(&42u32.to_le_bytes());
        r.extend_from_slice(&dev.to_le_bytes());
        r.extend_from_slice(&0u32.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        r
    }

    fn disk() -> DeviceMap {
        DeviceMap::new(vec![TracedDevice {
            name: "loop1".into(),
            major: 7,
            minor: 1,
            disk_name: "loop1".into(),
            disk_major: 7,
            disk_minor: 1,
            start_sector: 0,
            size_sectors: 1 << 20,
            level: Level::Request,
        }])
    }

    #[test]
    fn decodes_the_kernels_records_from_the_fixture() {
        // The first records of tests/data/blktrace/mixed.blktrace.0 (made on this kernel).
        let bytes: [u8; 48] = [
            0x07, 0x74, 0x61, 0x65, 0, 0, 0, 0, 0x63, 0x3c, 0xe3, 0xa0, 0x9e, 0, 0, 0, 0xe0, 0x1e,
            0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0x01, 0, 0x1a, 0, 0xad, 0x60, 0, 0, 0x01, 0, 0x70, 0,
            0, 0, 0, 0, 0, 0, 0, 0,
        ];
        let mut got = Vec::new();
        let mut skipped = 0;
        assert_eq!(split_records(&bytes, &mut skipped, |t| got.push(t)), 48);
        assert_eq!(got[0].sector, 0x1ee0);
        assert_eq!(got[0].bytes, 0x8000);
        assert_eq!(got[0].device, kernel_dev(7, 1));
        assert_eq!(got[0].action & 0xffff, 1); // a queue event: not ours
        assert_eq!(to_record(&got[0], &disk()), None);
    }

    #[test]
    fn issues_completions_ops_and_split_reads() {
        let dev = kernel_dev(7, 1);
        let mut stream = Vec::new();
        stream.extend(trace(
            10,
            8,
            4096,
            TA_ISSUE | ((TC_WRITE | 1 << 6) << 16),
            dev,
        ));
        stream.extend(trace(
            20,
            8,
            4096,
            TA_COMPLETE | ((TC_WRITE | 1 << 7) << 16),
            dev,
        ));
        stream.extend(trace(30, 0, 0, TA_ISSUE | (TC_FLUSH << 16), dev));
        stream.extend(trace(40, 16, 8192, TA_ISSUE | (TC_DISCARD << 16), dev));
        stream.extend(trace(50, 16, 4096, TA_ISSUE, kernel_dev(7, 2)));
        stream.extend(trace(60, 24, 512, TA_ISSUE, dev));
        let mut records = Vec::new();
        let mut carry: Vec<u8> = Vec::new();
        let mut skipped = 0;
        // Fed 7 bytes at a time, as short pipe reads would.
        for chunk in stream.chunks(7) {
            carry.extend_from_slice(chunk);
            let used = split_records(&carry, &mut skipped, |t| {
                records.extend(to_record(&t, &disk()))
            });
            carry.drain(..used);
        }
        assert!(carry.is_empty());
        assert_eq!(skipped, 0);
        let summary: Vec<_> = records
            .iter()
            .map(|r| (r.time_nanos, r.kind, r.op, r.offset_bytes, r.len_bytes))
            .collect();
        assert_eq!(
            summary,
            vec![
                (10, Kind::Issue, Op::Write, 4096, 4096),
                (20, Kind::Complete, Op::Write, 4096, 4096),
                (30, Kind::Issue, Op::Flush, 0, 0),
                (40, Kind::Issue, Op::Discard, 8192, 8192),
                (60, Kind::Issue, Op::Read, 12288, 512),
            ]
        );
    }

    /// A bio-based device: `Q` is the issue; a completion with nothing left past sector 0 is a
    /// bio consumed to its end (a write here), at sector 0 a flush; all marked as bios.
    #[test]
    fn bio_level_queues_and_consumed_completions() {
        let dev = kernel_dev(252, 3);
        let map = super::super::device::test_dm3();
        let mut records = Vec::new();
        for t in [
            BlkTrace {
                time_nanos: 10,
                sector: 2048,
                bytes: 4096,
                action: TA_QUEUE | (TC_WRITE << 16),
                pid: 1,
                device: dev,
            },
            BlkTrace {
                time_nanos: 20,
                sector: 2056,
                bytes: 0,
                action: TA_COMPLETE | (TC_WRITE << 16),
                pid: 0,
                device: dev,
            },
            BlkTrace {
                time_nanos: 30,
                sector: 0,
                bytes: 0,
                action: TA_COMPLETE | (TC_WRITE << 16),
                pid: 0,
                device: dev,
            },
            BlkTrace {
                time_nanos: 40,
                sector: 64,
                bytes: 4096,
                action: TA_ISSUE,
                pid: 1,
                device: dev,
            },
        ] {
            records.extend(to_record(&t, &map));
        }
        let summary: Vec<_> = records
            .iter()
            .map(|r| {
                (
                    r.time_nanos,
                    r.kind,
                    r.op,
                    r.offset_bytes,
                    r.len_bytes,
                    r.bio,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (10, Kind::Issue, Op::Write, 2048 * 512, 4096, true),
                (20, Kind::Complete, Op::Write, 2056 * 512, 0, true),
                (30, Kind::Complete, Op::Flush, 0, 0, true),
            ]
        );
    }

    #[test]
    fn garbage_is_skipped_and_settings_round_trip() {
        let mut stream = vec![1, 2, 3];
        stream.extend(trace(10, 8, 4096, TA_ISSUE, kernel_dev(7, 1)));
        let mut n = 0;
        let mut skipped = 0;
        split_records(&stream, &mut skipped, |_| n += 1);
        assert_eq!((n, skipped), (1, 3));
        let saved = Saved {
            pid: 9,
            trace_clock: "local".into(),
            buffer_kb: "1410".into(),
            bin: "0".into(),
            context_info: "1".into(),
            disks: vec!["loop1".into()],
        };
        assert_eq!(Saved::from_text(&saved.to_text()), Some(saved));
        assert_eq!(selected_clock("[local] global counter mono"), "local");
        assert_eq!(selected_clock("local global [mono] x86-tsc"), "mono");
    }
}
