//! Writing native files: [`NativeEncoder`] appends the file header and chunks to a caller's
//! buffer, so the caller decides when bytes reach the disk (the recorder flushes every chunk;
//! `blocksight import` writes as it goes).

use super::columns::ColumnEncoder;
use super::{
    bincode_config, write_frame, ChunkKind, Compression, DevicesPayload, EncodeOptions, EndPayload,
    MAGIC, MAX_CHUNK_EVENTS, MAX_DEVICES, MAX_HEADER_PAYLOAD_BYTES, VERSION_MAJOR, VERSION_MINOR,
};
use crate::event::{DeviceInfo, IoEvent, TraceHeader};

/// Devices per devices chunk at most, whatever their names' length; with names of a few bytes
/// a chunk of this many is far below [`MAX_HEADER_PAYLOAD_BYTES`].
const DEVICES_PER_CHUNK: usize = 4096;

/// Writes a native trace. Every method appends to `out`; nothing is written behind the caller's
/// back, and at most [`EncodeOptions::chunk_events`] events are buffered.
#[derive(Debug)]
pub struct NativeEncoder {
    options: EncodeOptions,
    pending: Vec<IoEvent>,
    columns: ColumnEncoder,
    payload: Vec<u8>,
    compressed: Vec<u8>,
    total_events: u64,
    /// Devices the file names so far (in header and devices chunks), plus those queued.
    devices_known: usize,
    /// Devices found since, written as a devices chunk before the next events chunk.
    new_devices: Vec<DeviceInfo>,
    /// Events not written because their device index is at or over [`MAX_DEVICES`] (a reader
    /// would drop them); added to the dropped-event count of every header written.
    refused_events: u64,
    /// The last header written and the refusals it counted, to restate it at the end when
    /// events were refused since.
    last_header: TraceHeader,
    refused_in_last_header: u64,
}

impl NativeEncoder {
    /// Appends the file header and a header chunk for `header` to `out`.
    pub fn new(header: &TraceHeader, options: EncodeOptions, out: &mut Vec<u8>) -> NativeEncoder {
        let options = EncodeOptions {
            chunk_events: options.chunk_events.clamp(1, MAX_CHUNK_EVENTS),
            ..options
        };
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION_MAJOR.to_le_bytes());
        out.extend_from_slice(&VERSION_MINOR.to_le_bytes());
        let mut encoder = NativeEncoder {
            options,
            pending: Vec::with_capacity(options.chunk_events.min(1 << 16)),
            columns: ColumnEncoder::default(),
            payload: Vec::new(),
            compressed: Vec::new(),
            total_events: 0,
            devices_known: 0,
            new_devices: Vec::new(),
            refused_events: 0,
            last_header: TraceHeader::default(),
            refused_in_last_header: 0,
        };
        encoder.write_header(header, out);
        encoder
    }

    /// Buffers `event`; appends an events chunk when [`EncodeOptions::chunk_events`] are
    /// buffered. An event whose device index is at or over [`MAX_DEVICES`] is not written (no
    /// reader would keep it) but counted in [`NativeEncoder::refused_events`] and in the
    /// dropped-event count of the headers written from now on.
    pub fn push(&mut self, event: &IoEvent, out: &mut Vec<u8>) {
        if event.device as usize >= MAX_DEVICES {
            self.refused_events += 1;
            return;
        }
        self.pending.push(*event);
        if self.pending.len() >= self.options.chunk_events {
            self.flush(out);
        }
    }

    /// Events buffered and not yet written.
    pub fn buffered_events(&self) -> usize {
        self.pending.len()
    }

    /// Events written in chunks so far.
    pub fn written_events(&self) -> u64 {
        self.total_events
    }

    /// Events not written because their device index is over [`MAX_DEVICES`].
    pub fn refused_events(&self) -> u64 {
        self.refused_events
    }

    /// Notes the devices of `devices` (the whole current list) beyond those the file names
    /// already. They are written as a devices chunk just before the next events chunk, so a file
    /// cut off anywhere names every device its complete chunks use, and the output stays linear
    /// in the events however many devices a trace finds. Entries already named must keep their
    /// meaning (a changed entry reaches the file with the next [`NativeEncoder::update_header`]).
    pub fn add_devices(&mut self, devices: &[DeviceInfo]) {
        let limit = devices.len().min(MAX_DEVICES);
        if limit > self.devices_known {
            self.new_devices
                .extend_from_slice(&devices[self.devices_known..limit]);
            self.devices_known = limit;
        }
    }

    /// Appends an events chunk with everything buffered (nothing when nothing is buffered),
    /// preceded by a devices chunk for devices added since the last one.
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        self.write_new_devices(out);
        if self.pending.is_empty() {
            return;
        }
        self.payload.clear();
        self.columns.encode(&self.pending, &mut self.payload);
        self.total_events += self.pending.len() as u64;
        self.pending.clear();
        self.write_payload(ChunkKind::Events, out);
    }

    /// Flushes buffered events, then appends a header chunk that supersedes the earlier ones
    /// (for example with the final dropped-event count, or devices found since). Device indices
    /// already used by events must keep their meaning.
    pub fn update_header(&mut self, header: &TraceHeader, out: &mut Vec<u8>) {
        self.flush(out);
        self.write_header(header, out);
    }

    /// Flushes buffered events and appends the end marker, after restating the last header when
    /// events were refused since it was written.
    pub fn finish(mut self, out: &mut Vec<u8>) {
        self.flush(out);
        if self.refused_events > self.refused_in_last_header {
            let header = std::mem::take(&mut self.last_header);
            self.write_header(&header, out);
        }
        self.payload.clear();
        let end = EndPayload {
            total_events: self.total_events,
        };
        let _ = bincode::serde::encode_into_std_write(end, &mut self.payload, bincode_config());
        write_frame(
            out,
            ChunkKind::End,
            Compression::None.codec(),
            &self.payload,
        );
    }

    /// Writes a header chunk for `header` (with the refused events added to its dropped count),
    /// moving its device list into devices chunks when it would make the header chunk larger
    /// than a reader accepts.
    fn write_header(&mut self, header: &TraceHeader, out: &mut Vec<u8>) {
        let mut stored = header.clone();
        stored.dropped_events = stored.dropped_events.saturating_add(self.refused_events);
        stored.devices.truncate(MAX_DEVICES);
        self.payload.clear();
        // Serializing plain data into a Vec cannot fail.
        let _ = bincode::serde::encode_into_std_write(&stored, &mut self.payload, bincode_config());
        let devices = if self.payload.len() > MAX_HEADER_PAYLOAD_BYTES {
            let devices = std::mem::take(&mut stored.devices);
            self.payload.clear();
            let _ =
                bincode::serde::encode_into_std_write(&stored, &mut self.payload, bincode_config());
            devices
        } else {
            Vec::new()
        };
        self.write_payload(ChunkKind::Header, out);
        self.devices_known = stored.devices.len();
        self.new_devices.clear();
        if !devices.is_empty() {
            self.add_devices(&devices);
            self.write_new_devices(out);
        }
        self.refused_in_last_header = self.refused_events;
        self.last_header = header.clone();
    }

    /// Writes the queued new devices as devices chunks, each below the reader's payload limit.
    fn write_new_devices(&mut self, out: &mut Vec<u8>) {
        let queued = std::mem::take(&mut self.new_devices);
        let mut first = self.devices_known - queued.len();
        let mut rest = &queued[..];
        while !rest.is_empty() {
            let mut n = rest.len().min(DEVICES_PER_CHUNK);
            loop {
                let payload = DevicesPayload {
                    first: first as u64,
                    devices: rest[..n].to_vec(),
                };
                self.payload.clear();
                let _ = bincode::serde::encode_into_std_write(
                    &payload,
                    &mut self.payload,
                    bincode_config(),
                );
                if self.payload.len() <= MAX_HEADER_PAYLOAD_BYTES || n == 1 {
                    break;
                }
                n /= 2;
            }
            if self.payload.len() <= MAX_HEADER_PAYLOAD_BYTES {
                self.write_payload(ChunkKind::Devices, out);
            }
            // A single device whose entry alone is over the limit (a name of more than 1 MiB)
            // is left out; the reader names it as a placeholder.
            first += n;
            rest = &rest[n..];
        }
    }

    /// Frames `self.payload`, compressed when asked and when that makes it smaller.
    fn write_payload(&mut self, kind: ChunkKind, out: &mut Vec<u8>) {
        if self.options.compression == Compression::Lz4 {
            let raw_len = self.payload.len();
            self.compressed.clear();
            self.compressed
                .extend_from_slice(&(raw_len as u32).to_le_bytes());
            self.compressed
                .resize(4 + lz4_flex::block::get_maximum_output_size(raw_len), 0);
            if let Ok(n) = lz4_flex::block::compress_into(&self.payload, &mut self.compressed[4..])
            {
                self.compressed.truncate(4 + n);
                if self.compressed.len() < raw_len {
                    write_frame(out, kind, Compression::Lz4.codec(), &self.compressed);
                    return;
                }
            }
        }
        write_frame(out, kind, Compression::None.codec(), &self.payload);
    }
}
