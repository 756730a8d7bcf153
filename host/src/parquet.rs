//! Traces as Apache Parquet: the writer behind `blocksight export --to parquet` and the reader
//! every command uses for a `.parquet` file (or a directory of them).
//!
//! The schema has units in its column names (docs/parquet.md): `time_nanos` (u64), `device`
//! (string, the device's name), `offset_bytes` (u64), `len_bytes` (u32), `op` (string: `read`,
//! `write`, `discard`, `flush`), `latency_nanos` (u64, null when unknown) and `pid` (u32, null
//! when unknown). The trace header is the file's key-value metadata `blocksight.header`, as JSON.
//! A dataset partitioned by device is a directory `device=NAME/part-N.parquet` (Hive style, the
//! name percent-encoded); its files leave out the `device` column, which the path carries.
//!
//! Memory is bounded both ways: the reader holds one record batch per file (files are merged by
//! time, then the engine's one ordering rule, `decode::order::Reorder`, applies), the writer at
//! most [`OPEN_PARTS`] files of [`PART_ROW_GROUP_ROWS`]-row groups in progress.

use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use analyzer_core::decode::order::Reorder;
use analyzer_core::{Diagnostics, IoEvent, Op, TraceHeader};
use anyhow::{bail, Context};
use arrow_array::builder::{StringBuilder, UInt32Builder, UInt64Builder};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::input::shown;

/// The file magic at both ends of every Parquet file.
pub use crate::input::PARQUET_MAGIC as MAGIC;

/// The key-value metadata key holding the trace header as JSON.
pub const HEADER_KEY: &str = "blocksight.header";

/// Rows per record batch, reading and writing.
const BATCH_ROWS: usize = 8192;

/// Rows per row group of a single-file export.
const FILE_ROW_GROUP_ROWS: usize = 1 << 20;

/// Rows per row group of a partitioned export (many files are in progress at once).
pub const PART_ROW_GROUP_ROWS: usize = 1 << 16;

/// Partition files open at once; the least recently written is closed beyond it (its device's
/// later requests go to its next `part-N`).
pub const OPEN_PARTS: usize = 32;

pub use crate::input::is_parquet;

/// The Arrow schema of an export; `with_device` false for the parts of a partitioned one.
pub fn schema(with_device: bool) -> SchemaRef {
    let mut fields = vec![Field::new("time_nanos", DataType::UInt64, false)];
    if with_device {
        fields.push(Field::new("device", DataType::Utf8, false));
    }
    fields.extend([
        Field::new("offset_bytes", DataType::UInt64, false),
        Field::new("len_bytes", DataType::UInt32, false),
        Field::new("op", DataType::Utf8, false),
        Field::new("latency_nanos", DataType::UInt64, true),
        Field::new("pid", DataType::UInt32, true),
    ]);
    Arc::new(Schema::new(fields))
}

/// A path segment for a device name: `device=` and the name with every byte but ASCII letters,
/// digits, `-` and `.` percent-encoded (so `/`, `=`, `%` and control characters cannot escape
/// the directory or confuse a Hive reader); a leading `.` is encoded too (readers skip hidden
/// files), as is a `_`.
pub fn partition_dir(name: &str) -> String {
    let mut out = String::from("device=");
    for (i, b) in name.bytes().enumerate() {
        let plain = b.is_ascii_alphanumeric() || b == b'-' || (b == b'.' && i > 0);
        if plain {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The device name of a `device=...` path segment (percent-decoding), if it is one.
pub fn partition_name(segment: &str) -> Option<String> {
    let encoded = segment.strip_prefix("device=")?;
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Column builders for one batch of events.
struct Columns {
    with_device: bool,
    time: UInt64Builder,
    device: StringBuilder,
    offset: UInt64Builder,
    len: UInt32Builder,
    op: StringBuilder,
    latency: UInt64Builder,
    pid: UInt32Builder,
    rows: usize,
}

impl Columns {
    fn new(with_device: bool) -> Columns {
        Columns {
            with_device,
            time: UInt64Builder::with_capacity(BATCH_ROWS),
            device: StringBuilder::new(),
            offset: UInt64Builder::with_capacity(BATCH_ROWS),
            len: UInt32Builder::with_capacity(BATCH_ROWS),
            op: StringBuilder::new(),
            latency: UInt64Builder::with_capacity(BATCH_ROWS),
            pid: UInt32Builder::with_capacity(BATCH_ROWS),
            rows: 0,
        }
    }

    fn push(&mut self, device_name: &str, e: &IoEvent) {
        self.time.append_value(e.time_nanos);
        if self.with_device {
            self.device.append_value(device_name);
        }
        self.offset.append_value(e.offset_bytes);
        self.len.append_value(e.len_bytes);
        self.op.append_value(e.op.name());
        self.latency.append_option(e.latency_nanos);
        self.pid.append_option(e.pid);
        self.rows += 1;
    }

    fn take(&mut self) -> anyhow::Result<RecordBatch> {
        let mut columns: Vec<ArrayRef> = vec![Arc::new(self.time.finish())];
        if self.with_device {
            columns.push(Arc::new(self.device.finish()));
        }
        columns.extend([
            Arc::new(self.offset.finish()) as ArrayRef,
            Arc::new(self.len.finish()),
            Arc::new(self.op.finish()),
            Arc::new(self.latency.finish()),
            Arc::new(self.pid.finish()),
        ]);
        self.rows = 0;
        Ok(RecordBatch::try_new(schema(self.with_device), columns)?)
    }
}

fn device_name(header: &TraceHeader, e: &IoEvent) -> String {
    header
        .devices
        .get(e.device as usize)
        .map_or_else(|| e.device.to_string(), |d| d.name.clone())
}

fn properties(row_group_rows: usize) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(row_group_rows))
        .set_created_by(format!("blocksight {}", env!("CARGO_PKG_VERSION")))
        .build()
}

fn header_metadata(header: &TraceHeader) -> anyhow::Result<KeyValue> {
    Ok(KeyValue::new(
        HEADER_KEY.to_string(),
        serde_json::to_string(header)?,
    ))
}

/// One output file in progress.
struct Part {
    path: PathBuf,
    writer: ArrowWriter<File>,
    columns: Columns,
}

impl Part {
    fn create(path: &Path, with_device: bool, row_group_rows: usize) -> anyhow::Result<Part> {
        let file = File::create(path).with_context(|| format!("cannot create {}", shown(path)))?;
        let writer =
            ArrowWriter::try_new(file, schema(with_device), Some(properties(row_group_rows)))
                .with_context(|| format!("cannot write {}", shown(path)))?;
        Ok(Part {
            path: path.to_path_buf(),
            writer,
            columns: Columns::new(with_device),
        })
    }

    fn push(&mut self, header: &TraceHeader, e: &IoEvent) -> anyhow::Result<()> {
        let name = if self.columns.with_device {
            device_name(header, e)
        } else {
            String::new()
        };
        self.columns.push(&name, e);
        if self.columns.rows >= BATCH_ROWS {
            self.write_batch()?;
        }
        Ok(())
    }

    fn write_batch(&mut self) -> anyhow::Result<()> {
        if self.columns.rows == 0 {
            return Ok(());
        }
        let batch = self.columns.take()?;
        self.writer
            .write(&batch)
            .with_context(|| format!("cannot write {}", shown(&self.path)))
    }

    fn close(mut self, header: &TraceHeader) -> anyhow::Result<()> {
        self.write_batch()?;
        self.writer
            .append_key_value_metadata(header_metadata(header)?);
        self.writer
            .close()
            .with_context(|| format!("cannot write {}", shown(&self.path)))?;
        Ok(())
    }
}

/// `blocksight export --to parquet -o FILE`: one file, every column.
pub struct FileWriter {
    part: Part,
    events: u64,
}

impl FileWriter {
    pub fn create(path: &Path) -> anyhow::Result<FileWriter> {
        Ok(FileWriter {
            part: Part::create(path, true, FILE_ROW_GROUP_ROWS)?,
            events: 0,
        })
    }

    /// One event, with the header as known so far (names its device).
    pub fn push(&mut self, header: &TraceHeader, e: &IoEvent) -> anyhow::Result<()> {
        self.events += 1;
        self.part.push(header, e)
    }

    /// Writes the last rows and the footer with the final header. Returns the events written.
    pub fn finish(self, header: &TraceHeader) -> anyhow::Result<u64> {
        self.part.close(header)?;
        Ok(self.events)
    }
}

/// `blocksight export --to parquet --partition-by device -o DIR`: `DIR/device=NAME/part-N.parquet`.
pub struct DatasetWriter {
    dir: PathBuf,
    /// Per device index: its open part (if any) and the number of parts started.
    open: HashMap<u32, (Part, u64)>,
    parts_started: HashMap<u32, u64>,
    tick: u64,
    events: u64,
    files: u64,
}

impl DatasetWriter {
    /// Creates `dir` (which must not exist, or be empty, so no stale part joins the dataset).
    pub fn create(dir: &Path) -> anyhow::Result<DatasetWriter> {
        if dir.exists() {
            let mut entries =
                std::fs::read_dir(dir).with_context(|| format!("cannot read {}", shown(dir)))?;
            if entries.next().is_some() {
                bail!(
                    "{} is not empty; a partitioned export writes into a new or empty directory",
                    shown(dir)
                );
            }
        }
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", shown(dir)))?;
        Ok(DatasetWriter {
            dir: dir.to_path_buf(),
            open: HashMap::new(),
            parts_started: HashMap::new(),
            tick: 0,
            events: 0,
            files: 0,
        })
    }

    pub fn push(&mut self, header: &TraceHeader, e: &IoEvent) -> anyhow::Result<()> {
        self.events += 1;
        self.tick += 1;
        if !self.open.contains_key(&e.device) {
            if self.open.len() >= OPEN_PARTS {
                let oldest = self
                    .open
                    .iter()
                    .min_by_key(|(_, (_, t))| *t)
                    .map(|(&d, _)| d);
                if let Some(d) = oldest.and_then(|d| self.open.remove(&d)) {
                    d.0.close(header)?;
                }
            }
            let started = self.parts_started.entry(e.device).or_insert(0);
            let dir = self.dir.join(partition_dir(&device_name(header, e)));
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", shown(&dir)))?;
            let path = dir.join(format!("part-{started}.parquet"));
            *started += 1;
            self.files += 1;
            let part = Part::create(&path, false, PART_ROW_GROUP_ROWS)?;
            self.open.insert(e.device, (part, self.tick));
        }
        let tick = self.tick;
        if let Some((part, last)) = self.open.get_mut(&e.device) {
            *last = tick;
            part.push(header, e)?;
        }
        Ok(())
    }

    /// Closes every part with the final header. Returns (events, files) written.
    pub fn finish(mut self, header: &TraceHeader) -> anyhow::Result<(u64, u64)> {
        let mut open: Vec<_> = self.open.drain().collect();
        open.sort_by_key(|(d, _)| *d);
        for (_, (part, _)) in open {
            part.close(header)?;
        }
        Ok((self.events, self.files))
    }
}

/// One Parquet file of the input and where it sits.
struct InputFile {
    path: PathBuf,
    /// The device named by a `device=NAME` directory above it, for files without the column.
    partition_device: Option<String>,
}

/// The Parquet files of the inputs: files as given, directories walked (sorted; hidden files and
/// `_`-prefixed metadata files skipped, as Hive readers do).
fn input_files(paths: &[PathBuf]) -> anyhow::Result<Vec<InputFile>> {
    fn walk(dir: &Path, device: Option<String>, out: &mut Vec<InputFile>) -> anyhow::Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read {}", shown(dir)))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .with_context(|| format!("cannot read {}", shown(dir)))?;
        entries.sort();
        for p in entries {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.starts_with('.') || name.starts_with('_') {
                continue;
            }
            if p.is_dir() {
                let d = partition_name(&name).or_else(|| device.clone());
                walk(&p, d, out)?;
            } else if name.ends_with(".parquet") || name.ends_with(".parq") {
                out.push(InputFile {
                    path: p,
                    partition_device: device.clone(),
                });
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let device = p
                .file_name()
                .and_then(|n| partition_name(&n.to_string_lossy()));
            let before = out.len();
            walk(p, device, &mut out)?;
            if out.len() == before {
                bail!("{} holds no .parquet files", shown(p));
            }
        } else {
            let device = p
                .parent()
                .and_then(|d| d.file_name())
                .and_then(|n| partition_name(&n.to_string_lossy()));
            out.push(InputFile {
                path: p.clone(),
                partition_device: device,
            });
        }
    }
    Ok(out)
}

/// Integer values of a column of any integer type, as i128 (so no type's range is lost).
fn ints(array: &dyn Array, row: usize) -> Option<i128> {
    if array.is_null(row) {
        return None;
    }
    Some(match array.data_type() {
        DataType::UInt64 => i128::from(array.as_primitive::<UInt64Type>().value(row)),
        DataType::UInt32 => i128::from(array.as_primitive::<UInt32Type>().value(row)),
        DataType::UInt16 => i128::from(array.as_primitive::<UInt16Type>().value(row)),
        DataType::UInt8 => i128::from(array.as_primitive::<UInt8Type>().value(row)),
        DataType::Int64 => i128::from(array.as_primitive::<Int64Type>().value(row)),
        DataType::Int32 => i128::from(array.as_primitive::<Int32Type>().value(row)),
        DataType::Int16 => i128::from(array.as_primitive::<Int16Type>().value(row)),
        DataType::Int8 => i128::from(array.as_primitive::<Int8Type>().value(row)),
        _ => return None,
    })
}

fn is_int(t: &DataType) -> bool {
    t.is_integer()
}

fn is_text(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(k, v) => k.is_integer() && is_text(v),
        _ => false,
    }
}

/// A string value of a text column (plain, large, view or dictionary-encoded).
fn text(array: &dyn Array, row: usize) -> Option<String> {
    if array.is_null(row) {
        return None;
    }
    match array.data_type() {
        DataType::Utf8 => Some(array.as_string::<i32>().value(row).to_string()),
        DataType::LargeUtf8 => Some(array.as_string::<i64>().value(row).to_string()),
        DataType::Utf8View => Some(array.as_string_view().value(row).to_string()),
        DataType::Dictionary(k, _) => {
            let (keys, values): (Option<usize>, &ArrayRef) = match k.as_ref() {
                DataType::Int8 => dict::<Int8Type>(array, row),
                DataType::Int16 => dict::<Int16Type>(array, row),
                DataType::Int32 => dict::<Int32Type>(array, row),
                DataType::Int64 => dict::<Int64Type>(array, row),
                DataType::UInt8 => dict::<UInt8Type>(array, row),
                DataType::UInt16 => dict::<UInt16Type>(array, row),
                DataType::UInt32 => dict::<UInt32Type>(array, row),
                DataType::UInt64 => dict::<UInt64Type>(array, row),
                _ => return None,
            };
            keys.and_then(|k| text(values.as_ref(), k))
        }
        _ => None,
    }
}

fn dict<K: arrow_array::types::ArrowDictionaryKeyType>(
    array: &dyn Array,
    row: usize,
) -> (Option<usize>, &ArrayRef) {
    let d = array.as_dictionary::<K>();
    let key = d.key(row);
    (key, d.values())
}

/// The columns a file must have (beside `device`, which a partition directory may carry).
const REQUIRED: [&str; 4] = ["time_nanos", "offset_bytes", "len_bytes", "op"];

/// One input file being read: its reader and the events of its current batch.
struct FileStream {
    index: usize,
    path: PathBuf,
    reader: ParquetRecordBatchReader,
    /// Column positions in the projected batch: time, device, offset, len, op, latency, pid.
    cols: [Option<usize>; 7],
    partition_device: Option<u32>,
    batch: Vec<IoEvent>,
    next: usize,
    row: u64,
    names: HashMap<String, u32>,
}

impl FileStream {
    /// Refills the batch; false at the end of the file.
    fn refill(
        &mut self,
        header: &mut TraceHeader,
        diagnostics: &mut Diagnostics,
    ) -> anyhow::Result<bool> {
        self.batch.clear();
        self.next = 0;
        while self.batch.is_empty() {
            let Some(batch) = self.reader.next() else {
                return Ok(false);
            };
            let batch = batch.with_context(|| format!("cannot decode {}", shown(&self.path)))?;
            self.convert(&batch, header, diagnostics);
        }
        Ok(true)
    }

    fn convert(&mut self, batch: &RecordBatch, header: &mut TraceHeader, d: &mut Diagnostics) {
        let col = |i: usize| self.cols[i].map(|c| batch.column(c).clone());
        let (time, device, offset, len, op, latency, pid) =
            (col(0), col(1), col(2), col(3), col(4), col(5), col(6));
        let (Some(time), Some(offset), Some(len), Some(op)) = (time, offset, len, op) else {
            return;
        };
        for r in 0..batch.num_rows() {
            let row = self.row;
            self.row += 1;
            let path = &self.path;
            let bad = |what: &str| format!("parquet {} row {row}: {what}", shown(path));
            let Some(t) = ints(time.as_ref(), r).and_then(|v| u64::try_from(v).ok()) else {
                d.skip(|| bad("time_nanos is null or negative"));
                continue;
            };
            let Some(o) = ints(offset.as_ref(), r).and_then(|v| u64::try_from(v).ok()) else {
                d.skip(|| bad("offset_bytes is null or negative"));
                continue;
            };
            let Some(l) = ints(len.as_ref(), r).and_then(|v| u32::try_from(v).ok()) else {
                d.skip(|| bad("len_bytes is null, negative or 4 GiB or more"));
                continue;
            };
            let Some(kind) = text(op.as_ref(), r).as_deref().and_then(Op::from_name) else {
                d.skip(|| bad("op is not read, write, discard or flush (or R, W, D, F)"));
                continue;
            };
            let dev = match (&device, self.partition_device) {
                (Some(c), _) => {
                    let name = if is_int(c.data_type()) {
                        ints(c.as_ref(), r).map(|v| v.to_string())
                    } else {
                        text(c.as_ref(), r)
                    };
                    let Some(name) = name else {
                        d.skip(|| bad("device is null"));
                        continue;
                    };
                    match self.names.get(&name) {
                        Some(&i) => i,
                        None => {
                            let i = header.device_index(&name);
                            self.names.insert(name, i);
                            i
                        }
                    }
                }
                (None, Some(i)) => i,
                (None, None) => 0,
            };
            let opt = |c: &Option<ArrayRef>| c.as_ref().and_then(|c| ints(c.as_ref(), r));
            self.batch.push(IoEvent {
                time_nanos: t,
                device: dev,
                offset_bytes: o,
                len_bytes: l,
                op: kind,
                latency_nanos: opt(&latency).and_then(|v| u64::try_from(v).ok()),
                pid: opt(&pid).and_then(|v| u32::try_from(v).ok()),
            });
        }
    }
}

/// An opened file: its stream (not yet filled) and the header its metadata carries.
fn open_file(
    index: usize,
    input: &InputFile,
) -> anyhow::Result<(FileStream, Option<TraceHeader>, Option<String>)> {
    let path = &input.path;
    let file = File::open(path).with_context(|| format!("cannot open {}", shown(path)))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .with_context(|| format!("cannot read {} as Parquet", shown(path)))?;
    let header = match builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == HEADER_KEY))
        .and_then(|k| k.value.clone())
    {
        Some(json) => Some(serde_json::from_str::<TraceHeader>(&json).with_context(|| {
            format!(
                "{}: its {HEADER_KEY} metadata is not a Blocksight trace header",
                shown(path)
            )
        })?),
        None => None,
    };
    let schema = builder.schema().clone();
    let names = [
        "time_nanos",
        "device",
        "offset_bytes",
        "len_bytes",
        "op",
        "latency_nanos",
        "pid",
    ];
    let mut roots = Vec::new();
    for name in names {
        if let Ok(i) = schema.index_of(name) {
            roots.push(i);
        }
    }
    for name in REQUIRED {
        if schema.index_of(name).is_err() {
            bail!(
                "{} has no {name} column; a Blocksight Parquet trace has time_nanos, device, \
                 offset_bytes, len_bytes, op (and optionally latency_nanos, pid); it has {}",
                shown(path),
                schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    for (name, want_int) in [
        ("time_nanos", true),
        ("offset_bytes", true),
        ("len_bytes", true),
        ("latency_nanos", true),
        ("pid", true),
        ("op", false),
    ] {
        if let Ok(i) = schema.index_of(name) {
            let t = schema.field(i).data_type();
            let ok = if want_int { is_int(t) } else { is_text(t) };
            if !ok {
                bail!(
                    "{}: column {name} is {t}; expected {}",
                    shown(path),
                    if want_int { "an integer" } else { "a string" }
                );
            }
        }
    }
    if let Ok(i) = schema.index_of("device") {
        let t = schema.field(i).data_type();
        if !is_int(t) && !is_text(t) {
            bail!(
                "{}: column device is {t}; expected a string or an integer",
                shown(path)
            );
        }
    }
    roots.sort_unstable();
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
    let reader = builder
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
        .build()
        .with_context(|| format!("cannot read {}", shown(path)))?;
    let projected = reader.schema();
    let mut cols = [None; 7];
    for (slot, name) in names.iter().enumerate() {
        cols[slot] = projected.index_of(name).ok();
    }
    let partition = if cols[1].is_none() {
        input.partition_device.clone()
    } else {
        None
    };
    Ok((
        FileStream {
            index,
            path: path.clone(),
            reader,
            cols,
            partition_device: None,
            batch: Vec::new(),
            next: 0,
            row: 0,
            names: HashMap::new(),
        },
        header,
        partition,
    ))
}

/// What reading Parquet inputs produced besides the events.
pub struct ReadParquet {
    pub header: TraceHeader,
    pub diagnostics: Diagnostics,
    pub files: usize,
}

/// Reads Parquet inputs (files or dataset directories) as one trace, merged by time across
/// files, and calls `each` with the header as known and every event.
pub fn read(
    paths: &[PathBuf],
    mut each: impl FnMut(&TraceHeader, &IoEvent),
) -> anyhow::Result<ReadParquet> {
    let inputs = input_files(paths)?;
    let mut streams = Vec::with_capacity(inputs.len());
    let mut headers = Vec::new();
    let mut partitions = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let (s, h, p) = open_file(i, input)?;
        streams.push(s);
        headers.extend(h);
        partitions.push(p);
    }
    // Every part of a dataset carries the header as known when it was closed; the last closed
    // knows every device and every dropped event.
    let mut header = headers
        .into_iter()
        .max_by_key(|h| (h.devices.len(), h.dropped_events))
        .unwrap_or_else(|| TraceHeader::new("parquet"));
    for (s, p) in streams.iter_mut().zip(&partitions) {
        s.partition_device = p.as_deref().map(|name| header.device_index(name));
    }
    let mut diagnostics = Diagnostics::default();
    // Files are merged by time, one batch held per file; the ordering rule then applies to the
    // merged stream (external files need not be sorted).
    let mut heap = BinaryHeap::new();
    for s in &mut streams {
        if s.refill(&mut header, &mut diagnostics)? {
            heap.push(std::cmp::Reverse((s.batch[0].time_nanos, s.index)));
        }
    }
    let mut reorder = Reorder::default();
    while let Some(std::cmp::Reverse((_, i))) = heap.pop() {
        let s = &mut streams[i];
        let e = s.batch[s.next];
        s.next += 1;
        let row = s.row;
        reorder.push(
            e,
            || format!("{} near row {row}", shown(&s.path)),
            &mut diagnostics,
        );
        if s.next < s.batch.len() || s.refill(&mut header, &mut diagnostics)? {
            heap.push(std::cmp::Reverse((s.batch[s.next].time_nanos, i)));
        }
        while let Some(e) = reorder.pop(false, &mut header, &mut diagnostics) {
            each(&header, &e);
        }
    }
    while let Some(e) = reorder.pop(true, &mut header, &mut diagnostics) {
        each(&header, &e);
    }
    Ok(ReadParquet {
        header,
        diagnostics,
        files: streams.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_names_round_trip_and_stay_one_safe_segment() {
        for name in [
            "sda", "nvme0n1", "hm_0", "a/b", "..", ".x", "%41", "dm=3", "v 1\n", "ü", "",
        ] {
            let seg = partition_dir(name);
            assert!(!seg.contains('/') && !seg[7..].contains('='), "{seg}");
            assert!(
                !seg[7..].starts_with('.') && !seg[7..].starts_with('_'),
                "{seg}"
            );
            assert!(seg[7..].bytes().all(|b| b.is_ascii_graphic()), "{seg}");
            assert_eq!(partition_name(&seg).as_deref(), Some(name), "{seg}");
        }
        assert_eq!(partition_dir("sda"), "device=sda");
        assert_eq!(partition_dir("a/b"), "device=a%2Fb");
    }
}
