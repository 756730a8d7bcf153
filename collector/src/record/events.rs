//! The `events` backend: our own tracefs instance with the `block_rq_issue` and
//! `block_rq_complete` tracepoints (`block_bio_queue` and `block_bio_complete` for bio-based
//! devices such as dm, md and zram; see [`super::device::Level`]), filtered in the kernel to the
//! traced disks, read as binary ring-buffer pages from each CPU's `trace_pipe_raw`.
//!
//! Binary rather than text: the kernel skips formatting every record with `printf`, and we skip
//! parsing it back (see docs/record.md for the measurement).

use std::io::Read;
use std::path::Path;

use analyzer_core::Op;
use anyhow::{bail, Context};

use super::device::{kernel_dev, DeviceMap, Level};
use super::event_format::{EventFormat, Field};
use super::ringbuf;
use super::tracefs::{self, Instance};
use super::tracker::{Kind, Record};
use super::{sys, Source};

/// Field positions of one block event in this kernel.
#[derive(Clone, Debug)]
struct Layout {
    id: u16,
    kind: Kind,
    level: Level,
    pid: Field,
    place: Place,
    nr_sector: Field,
    /// `bytes` (issue and insert only): the data length, also right for passthrough requests.
    bytes: Option<Field>,
    rwbs: Field,
}

/// Where an event names its device and sector.
#[derive(Clone, Debug)]
enum Place {
    /// The block events: `dev` (a kernel dev_t) and `sector`.
    Block { dev: Field, sector: Field },
    /// bcache's `bcache_request_end`, a bcache device's bio completion (its bios get no
    /// `block_bio_complete`: they end remapped to the backing device): the device is
    /// `orig_major:orig_minor`, the sector `orig_sector`, which the kernel computes as the
    /// backing device's sector less bcache's default data offset (16 sectors) and keeps in a
    /// 32-bit field, so bios past 2 TiB get no latency.
    Bcache {
        major: Field,
        minor: Field,
        sector: Field,
    },
}

impl Layout {
    fn from_format(format: &EventFormat, kind: Kind, level: Level) -> Result<Layout, String> {
        Ok(Layout {
            id: format.id,
            kind,
            level,
            pid: format.field("common_pid")?,
            place: Place::Block {
                dev: format.field("dev")?,
                sector: format.field("sector")?,
            },
            nr_sector: format.field("nr_sector")?,
            bytes: format.field("bytes").ok(),
            rwbs: format.field("rwbs")?,
        })
    }

    /// `bcache:bcache_request_end`: a bcache device's completions.
    fn bcache_end(format: &EventFormat) -> Result<Layout, String> {
        Ok(Layout {
            id: format.id,
            kind: Kind::Complete,
            level: Level::Bio,
            pid: format.field("common_pid")?,
            place: Place::Bcache {
                major: format.field("orig_major")?,
                minor: format.field("orig_minor")?,
                sector: format.field("orig_sector")?,
            },
            nr_sector: format.field("nr_sector")?,
            bytes: None,
            rwbs: format.field("rwbs")?,
        })
    }
}

/// The op an `rwbs` string describes, or `None` for requests with no block data op (`N`).
/// Layout (`blk_fill_rwbs`): an optional `F` for a preflush, then the op letter (`W`, `R`,
/// `D` discard, `DE` secure erase, `F` flush, `N` other), then flags.
pub fn op_from_rwbs(rwbs: &[u8]) -> Option<Op> {
    let end = rwbs.iter().position(|&b| b == 0).unwrap_or(rwbs.len());
    let s = &rwbs[..end];
    let body = match s {
        [b'F', rest @ ..] if matches!(rest.first(), Some(b'W' | b'R' | b'D' | b'F' | b'N')) => rest,
        _ => s,
    };
    match body.first()? {
        b'W' => Some(Op::Write),
        b'R' => Some(Op::Read),
        b'D' => Some(Op::Discard),
        b'F' => Some(Op::Flush),
        _ => None,
    }
}

struct CpuReader {
    cpu: usize,
    file: std::fs::File,
}

/// The events backend. Field order matters: the per-CPU files close before the instance is
/// removed.
pub struct EventsBackend {
    cpus: Vec<CpuReader>,
    page: Vec<u8>,
    layouts: Vec<Layout>,
    map: DeviceMap,
    lost_in_pages: u64,
    pages_with_loss: u64,
    bad_pages: u64,
    skipped_records: u64,
    instance: Instance,
}

fn read_format(root: &Path, event: &str) -> anyhow::Result<EventFormat> {
    read_event_format(root, "block", event)
}

fn read_event_format(root: &Path, system: &str, event: &str) -> anyhow::Result<EventFormat> {
    let path = root.join("events").join(system).join(event).join("format");
    let text = std::fs::read_to_string(&path).map_err(|_| {
        anyhow::anyhow!(
            "this kernel has no {event} tracepoint ({} missing): it needs CONFIG_BLOCK with \
             tracepoints; try `--backend blk`",
            path.display()
        )
    })?;
    EventFormat::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

impl EventsBackend {
    /// Creates and arms the instance. `buffer_kb` is per CPU.
    pub fn start(root: &Path, map: DeviceMap, buffer_kb: u64) -> anyhow::Result<EventsBackend> {
        let mut layouts = Vec::new();
        let mut wanted = Vec::new();
        for level in [Level::Request, Level::Bio] {
            if map.kernel_devs(level).is_empty() {
                continue;
            }
            let names = match level {
                Level::Request => ["block_rq_issue", "block_rq_complete"],
                Level::Bio => ["block_bio_queue", "block_bio_complete"],
            };
            for (name, kind) in names.into_iter().zip([Kind::Issue, Kind::Complete]) {
                let format = read_format(root, name)?;
                layouts
                    .push(Layout::from_format(&format, kind, level).map_err(anyhow::Error::msg)?);
                wanted.push((format!("block/{name}"), map.filter_expression(level)));
            }
        }
        // bcache devices' bios never get `block_bio_complete`; bcache's own request end stands
        // for it where the kernel has it (docs/record.md).
        let bcache: Vec<String> = map
            .devices()
            .iter()
            .filter(|d| d.level == Level::Bio && d.name.starts_with("bcache"))
            .map(|d| format!("(orig_major == {} && orig_minor == {})", d.major, d.minor))
            .collect();
        if !bcache.is_empty() {
            if let Ok(format) = read_event_format(root, "bcache", "bcache_request_end") {
                layouts.push(Layout::bcache_end(&format).map_err(anyhow::Error::msg)?);
                wanted.push(("bcache/bcache_request_end".into(), bcache.join(" || ")));
            }
        }
        let instance = Instance::create(root)?;
        tracefs::write_control(&instance.path("tracing_on"), "0")?;
        tracefs::write_control(&instance.path("buffer_size_kb"), &buffer_kb.to_string())
            .with_context(|| format!("allocating {buffer_kb} KiB of trace buffer per CPU (try a smaller --buffer-kb)"))?;
        // `mono` is CLOCK_MONOTONIC, which we can read too (the ordering horizon and the start
        // time in the header need it).
        tracefs::write_control(&instance.path("trace_clock"), "mono")?;
        // Keep the oldest unread events when full: new ones are dropped and counted, rather than
        // unread pages being overwritten under the reader.
        let _ = tracefs::write_control(&instance.path("options/overwrite"), "0");
        for (event, filter) in &wanted {
            let dir = instance.path(&format!("events/{event}"));
            tracefs::write_control(&dir.join("filter"), filter)
                .with_context(|| format!("setting the device filter {filter:?}"))?;
            tracefs::write_control(&dir.join("enable"), "1")?;
        }
        let subbuf_kb: usize = tracefs::read_control(&instance.path("buffer_subbuf_size_kb"))
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(4);
        let mut cpus = Vec::new();
        for (cpu, dir) in tracefs::cpu_dirs(&instance.dir)? {
            cpus.push(CpuReader {
                cpu,
                file: tracefs::open_nonblocking(&dir.join("trace_pipe_raw"))?,
            });
        }
        if cpus.is_empty() {
            bail!("{} has no per_cpu directories", instance.dir.display());
        }
        tracefs::write_control(&instance.path("tracing_on"), "1")?;
        Ok(EventsBackend {
            cpus,
            page: vec![0; subbuf_kb.max(4) * 1024],
            layouts,
            map,
            lost_in_pages: 0,
            pages_with_loss: 0,
            bad_pages: 0,
            skipped_records: 0,
            instance,
        })
    }
}

/// Decodes one event payload into a record; `None` for events of other types or ops.
fn decode(layouts: &[Layout], map: &DeviceMap, ts: u64, payload: &[u8]) -> Option<Record> {
    let id = u16::from_le_bytes(payload.get(0..2)?.try_into().ok()?);
    let layout = layouts.iter().find(|l| l.id == id)?;
    let mut op = op_from_rwbs(layout.rwbs.bytes(payload)?)?;
    let (dev, sector) = match &layout.place {
        Place::Block { dev, sector } => (dev.read_u64(payload)? as u32, sector.read_u64(payload)?),
        Place::Bcache {
            major,
            minor,
            sector,
        } => (
            kernel_dev(
                major.read_u64(payload)? as u32,
                minor.read_u64(payload)? as u32,
            ),
            sector.read_u64(payload)?,
        ),
    };
    let nr_sector = layout.nr_sector.read_u64(payload)?;
    let len_bytes = match layout.bytes {
        Some(f) => f.read_u64(payload)?,
        None => nr_sector * 512,
    };
    // An empty read or write is a flush whose PREFLUSH flag the kernel has cleared by the time
    // of this event (bios on devices without a write cache, completions), except a bio's
    // completion past sector 0: a bio consumed to its end (see `Record::bio`).
    let bio = layout.level == Level::Bio;
    let consumed = bio && layout.kind == Kind::Complete && sector > 0;
    if len_bytes == 0 && matches!(op, Op::Read | Op::Write) && !consumed {
        op = Op::Flush;
    }
    let has_range = op != Op::Flush;
    let (device, rel_sector) = map.map(dev, sector, has_range)?;
    if map.level(device) != Some(layout.level) {
        return None;
    }
    let pid = layout
        .pid
        .read_u64(payload)
        .map(|p| p as u32)
        .filter(|&p| p != 0);
    Some(Record {
        time_nanos: ts,
        kind: layout.kind,
        device,
        offset_bytes: rel_sector.saturating_mul(512),
        len_bytes: if op == Op::Flush {
            0
        } else {
            u32::try_from(len_bytes).unwrap_or(u32::MAX)
        },
        op,
        pid,
        bio,
    })
}

/// Pages read per CPU per round, so one busy CPU cannot starve the others' readers.
const MAX_PAGES_PER_ROUND: usize = 1024;

impl Source for EventsBackend {
    fn now_nanos(&self) -> u64 {
        sys::monotonic_nanos()
    }

    fn read(&mut self, out: &mut Vec<Record>) -> anyhow::Result<u64> {
        let mut bytes = 0u64;
        for cpu in &mut self.cpus {
            for _ in 0..MAX_PAGES_PER_ROUND {
                let n = match cpu.file.read(&mut self.page) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        return Err(e)
                            .with_context(|| format!("reading cpu{} trace_pipe_raw", cpu.cpu))
                    }
                };
                bytes += n as u64;
                let layouts = &self.layouts;
                let map = &self.map;
                let mut skipped = 0u64;
                let parsed = ringbuf::parse_page(&self.page[..n], |ts, payload| {
                    match decode(layouts, map, ts, payload) {
                        Some(r) => out.push(r),
                        None => skipped += 1,
                    }
                });
                self.skipped_records += skipped;
                match parsed {
                    Ok(summary) => {
                        if summary.lost_before {
                            self.pages_with_loss += 1;
                            self.lost_in_pages += summary.lost_count;
                        }
                    }
                    Err(_) => self.bad_pages += 1,
                }
            }
        }
        Ok(bytes)
    }

    fn lost_events(&mut self) -> u64 {
        // The stats files count every overrun and drop; page markers are a lower bound used
        // when the stats cannot be read.
        tracefs::lost_from_stats(&self.instance.dir)
            .max(self.lost_in_pages)
            .max(self.pages_with_loss)
    }

    fn stop(&mut self) -> anyhow::Result<()> {
        self.instance.disable();
        Ok(())
    }

    fn teardown(&mut self) -> anyhow::Result<()> {
        self.cpus.clear();
        self.instance.remove()
    }

    fn skipped(&self) -> u64 {
        // Records of other ops (`N`) or filtered out of a partition's range count here too.
        self.skipped_records + self.bad_pages
    }

    fn device_gone(&self) -> Option<String> {
        super::device::gone(&self.map, Path::new("/sys"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::device::{kernel_dev, TracedDevice};
    use crate::record::ringbuf::tests::PageBuilder;

    #[test]
    fn rwbs_to_op() {
        assert_eq!(op_from_rwbs(b"WS\0\0"), Some(Op::Write));
        assert_eq!(op_from_rwbs(b"RA"), Some(Op::Read));
        assert_eq!(op_from_rwbs(b"FF"), Some(Op::Flush));
        assert_eq!(op_from_rwbs(b"FWFS"), Some(Op::Write));
        assert_eq!(op_from_rwbs(b"DS"), Some(Op::Discard));
        assert_eq!(op_from_rwbs(b"DE"), Some(Op::Discard));
        assert_eq!(op_from_rwbs(b"N"), None);
        assert_eq!(op_from_rwbs(b"\0"), None);
    }

    fn layouts() -> Vec<Layout> {
        let f = |offset, size| Field {
            offset,
            size,
            signed: false,
        };
        let rq = [
            Layout {
                id: 10,
                kind: Kind::Issue,
                level: Level::Request,
                pid: f(4, 4),
                place: Place::Block {
                    dev: f(8, 4),
                    sector: f(16, 8),
                },
                nr_sector: f(24, 4),
                bytes: Some(f(28, 4)),
                rwbs: f(34, 10),
            },
            Layout {
                id: 11,
                kind: Kind::Complete,
                level: Level::Request,
                pid: f(4, 4),
                place: Place::Block {
                    dev: f(8, 4),
                    sector: f(16, 8),
                },
                nr_sector: f(24, 4),
                bytes: None,
                rwbs: f(34, 10),
            },
        ];
        // The bio events of a bio-level device, with the same layout for the test.
        let bio = rq.clone().map(|l| Layout {
            id: l.id + 10,
            level: Level::Bio,
            ..l
        });
        rq.into_iter().chain(bio).collect()
    }

    fn payload(id: u16, dev: u32, sector: u64, nr: u32, rwbs: &[u8]) -> Vec<u8> {
        let mut p = vec![0u8; 64];
        p[0..2].copy_from_slice(&id.to_le_bytes());
        p[4..8].copy_from_slice(&77u32.to_le_bytes());
        p[8..12].copy_from_slice(&dev.to_le_bytes());
        p[16..24].copy_from_slice(&sector.to_le_bytes());
        p[24..28].copy_from_slice(&nr.to_le_bytes());
        p[28..32].copy_from_slice(&(nr * 512).to_le_bytes());
        p[34..34 + rwbs.len()].copy_from_slice(rwbs);
        p
    }

    #[test]
    fn decodes_records_from_a_page_and_maps_partitions() {
        let part = TracedDevice {
            name: "sdz1".into(),
            major: 8,
            minor: 17,
            disk_name: "sdz".into(),
            disk_major: 8,
            disk_minor: 16,
            start_sector: 2048,
            size_sectors: 1000,
            level: Level::Request,
        };
        let map = DeviceMap::new(vec![part]);
        let dev = kernel_dev(8, 16);
        let page = PageBuilder::new(1_000)
            .event(1, &payload(10, dev, 2048 + 8, 8, b"WS"))
            .event(2, &payload(11, dev, 2048 + 8, 8, b"WS"))
            .event(3, &payload(10, dev, 10, 8, b"R")) // outside the partition
            .event(4, &payload(10, kernel_dev(8, 0), 0, 8, b"R")) // another disk
            .event(5, &payload(10, dev, 0, 0, b"FF"))
            .event(6, &payload(12, dev, 0, 0, b"R")) // another event type
            .event(7, &payload(20, dev, 2048 + 16, 8, b"W")) // bio event, request-level device
            .event(8, &payload(11, dev, 0, 0, b"WS")) // a flush completing as an empty write
            .build(4096);
        let l = layouts();
        let mut out = Vec::new();
        ringbuf::parse_page(&page, |ts, p| out.extend(decode(&l, &map, ts, p))).expect("page");
        assert_eq!(out.len(), 4);
        assert_eq!((out[3].kind, out[3].op), (Kind::Complete, Op::Flush));
        assert_eq!(
            (
                out[0].time_nanos,
                out[0].kind,
                out[0].offset_bytes,
                out[0].len_bytes
            ),
            (1_001, Kind::Issue, 4096, 4096)
        );
        assert_eq!(
            (out[1].kind, out[1].op, out[1].pid),
            (Kind::Complete, Op::Write, Some(77))
        );
        assert_eq!(
            (out[2].op, out[2].len_bytes, out[2].offset_bytes),
            (Op::Flush, 0, 0)
        );
    }

    /// A bio-based device's completions: one split by a stacked device (its remainder), one
    /// consumed to its end (no length, past sector 0: a write, not a flush), an empty flush.
    #[test]
    fn bio_completions_keep_their_op_and_are_marked_bio() {
        let map = super::super::device::test_dm3();
        let dev = kernel_dev(252, 3);
        let page = PageBuilder::new(1_000)
            .event(1, &payload(20, dev, 0, 128, b"R"))
            .event(2, &payload(21, dev, 64, 64, b"R"))
            .event(3, &payload(21, dev, 2056, 0, b"W"))
            .event(4, &payload(21, dev, 0, 0, b"W"))
            .build(4096);
        let l = layouts();
        let mut out = Vec::new();
        ringbuf::parse_page(&page, |ts, p| out.extend(decode(&l, &map, ts, p))).expect("page");
        let got: Vec<_> = out
            .iter()
            .map(|r| (r.kind, r.op, r.offset_bytes, r.len_bytes, r.bio))
            .collect();
        assert_eq!(
            got,
            [
                (Kind::Issue, Op::Read, 0, 65536, true),
                (Kind::Complete, Op::Read, 32768, 32768, true),
                (Kind::Complete, Op::Write, 2056 * 512, 0, true),
                (Kind::Complete, Op::Flush, 0, 0, true),
            ]
        );
    }

    /// `bcache:bcache_request_end` as Debian's 6.1 kernel prints its format (the lab's
    /// `validation/guest/record.sh`): a bcache device's completions, at its own sector.
    const BCACHE_REQUEST_END_FORMAT: &str = "name: bcache_request_end
ID: 1423
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:unsigned int orig_major;\toffset:12;\tsize:4;\tsigned:0;
\tfield:unsigned int orig_minor;\toffset:16;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:24;\tsize:8;\tsigned:0;
\tfield:dev_t orig_sector;\toffset:32;\tsize:4;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:36;\tsize:4;\tsigned:0;
\tfield:char rwbs[6];\toffset:40;\tsize:6;\tsigned:1;

print fmt: \"%d,%d %s %llu + %u (from %d,%d @ %llu)\", REC->dev
";

    #[test]
    fn bcache_request_ends_complete_the_bcache_devices_bios() {
        let format = EventFormat::parse(BCACHE_REQUEST_END_FORMAT).expect("format");
        let layouts = vec![Layout::bcache_end(&format).expect("layout")];
        let map = DeviceMap::new(vec![TracedDevice {
            name: "bcache0".into(),
            major: 251,
            minor: 0,
            disk_name: "bcache0".into(),
            disk_major: 251,
            disk_minor: 0,
            start_sector: 0,
            size_sectors: 1 << 21,
            level: Level::Bio,
        }]);
        // A consumed write (nothing left, at its end) and a read, on bcache0; one of another
        // bcache device.
        let end = |major: u32, minor: u32, orig_sector: u32, nr: u32, rwbs: &[u8]| {
            let mut p = vec![0u8; 48];
            p[0..2].copy_from_slice(&1423u16.to_le_bytes());
            p[4..8].copy_from_slice(&9u32.to_le_bytes());
            p[8..12].copy_from_slice(&kernel_dev(254, 64).to_le_bytes());
            p[12..16].copy_from_slice(&major.to_le_bytes());
            p[16..20].copy_from_slice(&minor.to_le_bytes());
            p[24..32].copy_from_slice(&u64::from(orig_sector + 16).to_le_bytes());
            p[32..36].copy_from_slice(&orig_sector.to_le_bytes());
            p[36..40].copy_from_slice(&nr.to_le_bytes());
            p[40..40 + rwbs.len()].copy_from_slice(rwbs);
            p
        };
        let page = PageBuilder::new(1_000)
            .event(1, &end(251, 0, 2056, 0, b"W"))
            .event(2, &end(251, 0, 4096, 8, b"R"))
            .event(3, &end(251, 128, 64, 8, b"R"))
            .build(4096);
        let mut out = Vec::new();
        ringbuf::parse_page(&page, |ts, p| out.extend(decode(&layouts, &map, ts, p)))
            .expect("page");
        let got: Vec<_> = out
            .iter()
            .map(|r| (r.kind, r.device, r.op, r.offset_bytes, r.len_bytes, r.bio))
            .collect();
        assert_eq!(
            got,
            [
                (Kind::Complete, 0, Op::Write, 2056 * 512, 0, true),
                (Kind::Complete, 0, Op::Read, 4096 * 512, 4096, true),
            ]
        );
    }
}
