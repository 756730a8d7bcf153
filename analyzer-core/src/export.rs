//! Exporters: [`IoEvent`]s out as other tools' trace formats, streaming.
//!
//! An [`Exporter`] appends bytes to a caller's `Vec<u8>`: [`Exporter::begin`] once,
//! [`Exporter::event`] per event (with the header as known so far, since text inputs discover
//! devices as they go), [`Exporter::end`] once. The caller writes the buffer out whenever it
//! likes, so memory stays bounded whatever the trace length.
//!
//! - `csv` ([`ExportFormat::Csv`]): `time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid`,
//!   readable back by the generic CSV importer without any flags.
//! - `fio` ([`ExportFormat::FioIolog`]): fio iolog version 3, to replay the workload with
//!   `fio --read_iolog=FILE --replay_redirect=/dev/X`.
//! - `libcachesim` ([`ExportFormat::LibCacheSim`]): libCacheSim's CSV trace, one row per cache block touched.

use std::io::Write;

use crate::event::{IoEvent, Op, TraceHeader};

/// The formats `blocksight export --to` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    Csv,
    FioIolog,
    LibCacheSim,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 3] = [
        ExportFormat::Csv,
        ExportFormat::FioIolog,
        ExportFormat::LibCacheSim,
    ];

    /// The name used by `--to`.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::FioIolog => "fio",
            ExportFormat::LibCacheSim => "libcachesim",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            ExportFormat::Csv => {
                "CSV: time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid"
            }
            ExportFormat::FioIolog => {
                "fio iolog v3, for fio --read_iolog (replay on other hardware)"
            }
            ExportFormat::LibCacheSim => "libCacheSim CSV: time,obj_id,obj_size,op per cache block",
        }
    }

    pub fn from_name(name: &str) -> Option<ExportFormat> {
        ExportFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }

    /// An exporter for this format. `block_bytes` is the cache block size of the libCacheSim
    /// export (ignored by the others).
    pub fn exporter(self, block_bytes: u64) -> Box<dyn Exporter> {
        match self {
            ExportFormat::Csv => Box::new(CsvExporter),
            ExportFormat::FioIolog => Box::new(FioExporter::default()),
            ExportFormat::LibCacheSim => Box::new(LibCacheSimExporter::new(block_bytes)),
        }
    }
}

/// Streams events out as one format. See the module documentation.
pub trait Exporter {
    /// Writes what comes before the first event (a header line).
    fn begin(&mut self, out: &mut Vec<u8>);
    /// Writes one event. `header` resolves `event.device` to its name.
    fn event(&mut self, header: &TraceHeader, event: &IoEvent, out: &mut Vec<u8>);
    /// Writes what comes after the last event.
    fn end(&mut self, header: &TraceHeader, out: &mut Vec<u8>);
}

/// The CSV header [`CsvExporter`] writes; the generic CSV importer recognises it.
pub const CSV_HEADER: &str = "time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid";

fn device_name(header: &TraceHeader, device: u32) -> std::borrow::Cow<'_, str> {
    match header.devices.get(device as usize) {
        Some(d) if !d.name.is_empty() => std::borrow::Cow::Borrowed(d.name.as_str()),
        _ => std::borrow::Cow::Owned(format!("dev{device}")),
    }
}

/// See [`ExportFormat::Csv`]. Device names that contain the delimiter (blkparse-style `8,0`) are
/// quoted; double quotes inside names become single quotes.
#[derive(Debug, Default)]
pub struct CsvExporter;

impl Exporter for CsvExporter {
    fn begin(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(CSV_HEADER.as_bytes());
        out.push(b'\n');
    }

    fn event(&mut self, header: &TraceHeader, e: &IoEvent, out: &mut Vec<u8>) {
        let name = device_name(header, e.device);
        // Writing to a Vec cannot fail.
        let _ = write!(out, "{},", e.time_nanos);
        if name.contains([',', '"', ' ', '\t', '\r', '\n']) || name.starts_with('#') {
            out.push(b'"');
            for c in name.chars() {
                match c {
                    '"' => out.push(b'\''),
                    '\r' | '\n' => out.push(b' '),
                    c => {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                }
            }
            out.push(b'"');
        } else {
            out.extend_from_slice(name.as_bytes());
        }
        let _ = write!(out, ",{},{},{},", e.offset_bytes, e.len_bytes, e.op.name());
        if let Some(l) = e.latency_nanos {
            let _ = write!(out, "{l}");
        }
        out.push(b',');
        if let Some(p) = e.pid {
            let _ = write!(out, "{p}");
        }
        out.push(b'\n');
    }

    fn end(&mut self, _header: &TraceHeader, _out: &mut Vec<u8>) {}
}

/// See [`ExportFormat::FioIolog`]. Each device becomes a file named after the device (spaces
/// replaced by `_`); its `add` and `open` lines come just before its first request, and every
/// file is closed at the end. Timestamps are milliseconds (`time_nanos / 1e6`, truncated).
/// Reads, writes and discards (`trim`) carry offset and length in bytes; a flush is a `sync`.
#[derive(Debug, Default)]
pub struct FioExporter {
    /// Which device indices have had their `add`/`open` lines.
    opened: Vec<bool>,
    last_ms: u64,
}

fn fio_file_name(header: &TraceHeader, device: u32) -> String {
    device_name(header, device)
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

impl Exporter for FioExporter {
    fn begin(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"fio version 3 iolog\n");
    }

    fn event(&mut self, header: &TraceHeader, e: &IoEvent, out: &mut Vec<u8>) {
        let ms = e.time_nanos / 1_000_000;
        self.last_ms = self.last_ms.max(ms);
        let idx = e.device as usize;
        if self.opened.len() <= idx {
            self.opened.resize(idx + 1, false);
        }
        let file = fio_file_name(header, e.device);
        if !self.opened[idx] {
            self.opened[idx] = true;
            let _ = writeln!(out, "{ms} {file} add");
            let _ = writeln!(out, "{ms} {file} open");
        }
        let _ = match e.op {
            Op::Read => writeln!(out, "{ms} {file} read {} {}", e.offset_bytes, e.len_bytes),
            Op::Write => writeln!(out, "{ms} {file} write {} {}", e.offset_bytes, e.len_bytes),
            Op::Discard => writeln!(out, "{ms} {file} trim {} {}", e.offset_bytes, e.len_bytes),
            Op::Flush => writeln!(out, "{ms} {file} sync {} 0", e.offset_bytes),
        };
    }

    fn end(&mut self, header: &TraceHeader, out: &mut Vec<u8>) {
        for (idx, _) in self.opened.iter().enumerate().filter(|(_, &o)| o) {
            let _ = writeln!(
                out,
                "{} {} close",
                self.last_ms,
                fio_file_name(header, idx as u32)
            );
        }
    }
}

/// See [`ExportFormat::LibCacheSim`]: `time,obj_id,obj_size,op` with a header line. A request
/// becomes one row per `block_bytes` block it touches (as a block cache sees it): `obj_id` is
/// [`crate::hash::block_key`] of the device and block number, `obj_size` is `block_bytes`,
/// `time` is whole seconds since the trace start, `op` is `read`, `write` or `delete` (a discard
/// invalidates the blocks). Flushes touch no block and are left out.
#[derive(Debug)]
pub struct LibCacheSimExporter {
    block_bytes: u64,
}

impl LibCacheSimExporter {
    pub fn new(block_bytes: u64) -> LibCacheSimExporter {
        LibCacheSimExporter {
            block_bytes: block_bytes.max(1),
        }
    }
}

impl Exporter for LibCacheSimExporter {
    fn begin(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"time,obj_id,obj_size,op\n");
    }

    fn event(&mut self, _header: &TraceHeader, e: &IoEvent, out: &mut Vec<u8>) {
        let op = match e.op {
            Op::Read => "read",
            Op::Write => "write",
            Op::Discard => "delete",
            Op::Flush => return,
        };
        let seconds = e.time_nanos / 1_000_000_000;
        for block in e.block_range(self.block_bytes) {
            let id = crate::hash::block_key(e.device, block);
            let _ = writeln!(out, "{seconds},{id},{},{op}", self.block_bytes);
        }
    }

    fn end(&mut self, _header: &TraceHeader, _out: &mut Vec<u8>) {}
}

/// Exports `events` whole into a byte vector: for tests and small traces.
pub fn export_all(
    format: ExportFormat,
    block_bytes: u64,
    header: &TraceHeader,
    events: &[IoEvent],
) -> Vec<u8> {
    let mut exporter = format.exporter(block_bytes);
    let mut out = Vec::new();
    exporter.begin(&mut out);
    for e in events {
        exporter.event(header, e, &mut out);
    }
    exporter.end(header, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode_chunked, DecodeOptions};
    use crate::event::DeviceInfo;
    use crate::format::TraceFormat;

    fn header() -> TraceHeader {
        let mut h = TraceHeader::new("test");
        h.devices.push(DeviceInfo {
            name: "8,0".into(),
            major: Some(8),
            minor: Some(0),
            size_bytes: None,
        });
        h.devices.push(DeviceInfo::named("nvme0n1"));
        h
    }

    fn events() -> Vec<IoEvent> {
        let ev =
            |t: u64, d: u32, o: u64, l: u32, op: Op, lat: Option<u64>, pid: Option<u32>| IoEvent {
                time_nanos: t,
                device: d,
                offset_bytes: o,
                len_bytes: l,
                op,
                latency_nanos: lat,
                pid,
            };
        vec![
            ev(0, 0, 4096, 4096, Op::Read, Some(1500), Some(42)),
            ev(1_500_000, 1, 0, 65536, Op::Write, None, None),
            ev(2_000_000, 0, 8192, 8192, Op::Discard, Some(7), None),
            ev(3_000_000_000, 1, 0, 0, Op::Flush, None, Some(1)),
        ]
    }

    #[test]
    fn csv_export_quotes_names_and_reads_back() {
        let bytes = export_all(ExportFormat::Csv, 4096, &header(), &events());
        let text = String::from_utf8(bytes.clone()).expect("utf8");
        assert_eq!(
            text.lines().nth(1),
            Some("0,\"8,0\",4096,4096,read,1500,42")
        );
        assert_eq!(text.lines().nth(2), Some("1500000,nvme0n1,0,65536,write,,"));
        let csv = TraceFormat::GenericCsv
            .decoder(&DecodeOptions::default())
            .expect("decoder");
        let back = decode_chunked(csv, &bytes, 7).expect("decodes");
        assert_eq!(back.events, events());
        assert_eq!(back.header.devices[0].name, "8,0");
        assert_eq!(back.header.devices[1].name, "nvme0n1");
    }

    #[test]
    fn fio_export_opens_each_file_once_and_closes_all() {
        let text = String::from_utf8(export_all(
            ExportFormat::FioIolog,
            4096,
            &header(),
            &events(),
        ))
        .expect("utf8");
        let expected = "fio version 3 iolog\n\
                        0 8,0 add\n0 8,0 open\n0 8,0 read 4096 4096\n\
                        1 nvme0n1 add\n1 nvme0n1 open\n1 nvme0n1 write 0 65536\n\
                        2 8,0 trim 8192 8192\n\
                        3000 nvme0n1 sync 0 0\n\
                        3000 8,0 close\n3000 nvme0n1 close\n";
        assert_eq!(text, expected);
        let fio = TraceFormat::FioIologV3
            .decoder(&DecodeOptions::default())
            .expect("decoder");
        let back = decode_chunked(fio, text.as_bytes(), 1).expect("decodes");
        assert_eq!(back.events.len(), 4);
        assert_eq!(back.events[1].time_nanos, 1_000_000);
        assert_eq!(back.events[2].op, Op::Discard);
    }

    #[test]
    fn libcachesim_rows_are_blocks() {
        let text = String::from_utf8(export_all(
            ExportFormat::LibCacheSim,
            4096,
            &header(),
            &events(),
        ))
        .expect("utf8");
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows[0], "time,obj_id,obj_size,op");
        // read 1 block + write 16 blocks + discard 2 blocks; the flush has none.
        assert_eq!(rows.len(), 1 + 1 + 16 + 2);
        assert_eq!(rows[1], "0,1,4096,read");
        assert!(rows[18].ends_with(",4096,delete"));
    }
}
