//! Writing native files: [`NativeEncoder`] appends the file header and chunks to a caller's
//! buffer, so the caller decides when bytes reach the disk (the recorder flushes every chunk;
//! `blocksight import` writes as it goes).

use super::columns::ColumnEncoder;
use super::{
    bincode_config, write_frame, ChunkKind, Compression, EncodeOptions, EndPayload, MAGIC,
    MAX_CHUNK_EVENTS, VERSION_MAJOR, VERSION_MINOR,
};
use crate::event::{IoEvent, TraceHeader};

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
        };
        encoder.write_header(header, out);
        encoder
    }

    /// Buffers `event`; appends an events chunk when [`EncodeOptions::chunk_events`] are
    /// buffered.
    pub fn push(&mut self, event: &IoEvent, out: &mut Vec<u8>) {
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

    /// Appends an events chunk with everything buffered (nothing when nothing is buffered).
    pub fn flush(&mut self, out: &mut Vec<u8>) {
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

    /// Flushes buffered events and appends the end marker.
    pub fn finish(mut self, out: &mut Vec<u8>) {
        self.flush(out);
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

    fn write_header(&mut self, header: &TraceHeader, out: &mut Vec<u8>) {
        self.payload.clear();
        // Serializing plain data into a Vec cannot fail.
        let _ = bincode::serde::encode_into_std_write(header, &mut self.payload, bincode_config());
        self.write_payload(ChunkKind::Header, out);
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
