//! Blocksight's native trace format (`.bst`): a compact, streamable, crash-tolerant file of
//! [`IoEvent`]s with their [`TraceHeader`]. The byte layout is specified in `docs/format.md`;
//! this module is the reference implementation.
//!
//! In short: a 12-byte file header (magic and version), then framed chunks. Each chunk frame
//! carries a kind, a codec, the payload length, a CRC32 of the payload and a CRC32 of the frame
//! itself. Chunks hold the trace header (a later header chunk supersedes earlier ones, which is
//! how a recorder reports its dropped-event count at the end), up to [`MAX_CHUNK_EVENTS`] events
//! as delta- and varint-coded columns, or the end marker. Every chunk decodes on its own, so a
//! file cut off mid-write reads back every complete chunk, and a damaged chunk costs only its own
//! events.
//!
//! [`NativeEncoder`] writes the format into a caller's `Vec<u8>` (no IO here: the collector owns
//! the file), [`NativeDecoder`] is the push [`crate::Decoder`] for it.

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, Op};

mod columns;
mod decode;
mod encode;

pub use decode::NativeDecoder;
pub use encode::NativeEncoder;

/// The first 8 bytes of every native file. Like PNG's signature: a non-ASCII first byte catches
/// 7-bit transfers, and the CR LF / LF pair catches newline conversion.
pub const MAGIC: [u8; 8] = *b"\x89BST\r\n\x1a\n";

/// Format version written after the magic. Readers reject another major version; a minor
/// version only adds chunk kinds or codecs, which older readers skip.
pub const VERSION_MAJOR: u16 = 1;
pub const VERSION_MINOR: u16 = 0;

/// Magic plus major and minor version.
pub const FILE_HEADER_BYTES: usize = 12;

/// The first 4 bytes of every chunk frame, so a reader can find the next chunk after a damaged
/// frame.
pub const CHUNK_MAGIC: [u8; 4] = *b"\x89BSC";

/// Chunk magic, kind, codec, 2 reserved bytes, payload length, payload CRC32, frame CRC32.
pub const FRAME_BYTES: usize = 20;

/// The largest stored payload a reader accepts; a larger length marks a damaged frame. This
/// bounds the decoder's buffer.
pub const MAX_PAYLOAD_BYTES: usize = 64 << 20;

/// The most events one chunk may hold. With at most 46 column bytes per event this keeps every
/// events payload below [`MAX_PAYLOAD_BYTES`].
pub const MAX_CHUNK_EVENTS: usize = 1 << 20;

/// Device indices in events must stay below this. A reader gives events whose device the header
/// does not list a placeholder entry, and this bounds how many it may add.
pub const MAX_DEVICES: usize = 4096;

/// The largest header payload a reader decodes (device lists are small).
pub const MAX_HEADER_PAYLOAD_BYTES: usize = 1 << 20;

/// Events per chunk unless told otherwise: about 0.5 MiB of payload on real traces.
pub const DEFAULT_CHUNK_EVENTS: usize = 64 * 1024;

/// What a chunk holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ChunkKind {
    /// A bincode-encoded [`crate::TraceHeader`]; supersedes any earlier header chunk.
    Header = 1,
    /// Up to [`MAX_CHUNK_EVENTS`] events as columns.
    Events = 2,
    /// The clean end of the file; the payload is the total event count.
    End = 3,
}

impl ChunkKind {
    pub fn from_u8(kind: u8) -> Option<ChunkKind> {
        match kind {
            1 => Some(ChunkKind::Header),
            2 => Some(ChunkKind::Events),
            3 => Some(ChunkKind::End),
            _ => None,
        }
    }
}

/// Optional per-chunk compression. LZ4 (block format, `lz4_flex`) because it is pure Rust,
/// builds for wasm32, and decompresses at several GB/s, so it never dominates decoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compression {
    #[default]
    None,
    Lz4,
}

impl Compression {
    /// The codec byte in the chunk frame.
    pub fn codec(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Lz4 => 1,
        }
    }

    pub fn from_codec(codec: u8) -> Option<Compression> {
        match codec {
            0 => Some(Compression::None),
            1 => Some(Compression::Lz4),
            _ => None,
        }
    }

    /// Parses `none` or `lz4` (the CLI's `--compress` values).
    pub fn from_name(name: &str) -> Option<Compression> {
        match name.to_ascii_lowercase().as_str() {
            "none" => Some(Compression::None),
            "lz4" => Some(Compression::Lz4),
            _ => None,
        }
    }
}

/// How [`NativeEncoder`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodeOptions {
    /// Events per chunk, clamped to `1..=MAX_CHUNK_EVENTS`. Larger chunks compress a little
    /// better; smaller ones lose less when a file is cut off.
    pub chunk_events: usize,
    pub compression: Compression,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            chunk_events: DEFAULT_CHUNK_EVENTS,
            compression: Compression::None,
        }
    }
}

/// The bincode configuration for every payload: little-endian, varint lengths.
fn bincode_config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Payload of an [`ChunkKind::End`] chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct EndPayload {
    /// Events written to the file in total, for tools that check completeness.
    total_events: u64,
}

/// Ops by their 2-bit code in the tag byte (the order of [`Op::index`]).
const OPS: [Op; 4] = [Op::Read, Op::Write, Op::Discard, Op::Flush];

/// The frame CRC covers the first 16 bytes of a frame.
fn frame_crc(frame: &[u8]) -> u32 {
    crc32fast::hash(&frame[..16])
}

/// Appends one framed chunk holding `payload` (already compressed when `codec` says so).
fn write_frame(out: &mut Vec<u8>, kind: ChunkKind, codec: u8, payload: &[u8]) {
    let start = out.len();
    out.extend_from_slice(&CHUNK_MAGIC);
    out.push(kind as u8);
    out.push(codec);
    out.extend_from_slice(&[0, 0]);
    // Payloads are bounded by MAX_PAYLOAD_BYTES, far below u32::MAX.
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    let crc = frame_crc(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(payload);
}

/// Convenience for tests and small traces: the whole file for `events` in one buffer.
pub fn encode_all(
    header: &crate::TraceHeader,
    events: &[IoEvent],
    options: EncodeOptions,
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = NativeEncoder::new(header, options, &mut out);
    for e in events {
        encoder.push(e, &mut out);
    }
    encoder.finish(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode_chunked, Decoded, Decoder, Diagnostics};
    use crate::event::{DeviceInfo, TraceHeader};
    use proptest::prelude::*;

    fn header() -> TraceHeader {
        TraceHeader {
            devices: vec![DeviceInfo::named("sda"), DeviceInfo::named("nvme0n1")],
            host: Some("db1".into()),
            tool_version: Some("blocksight test".into()),
            ..TraceHeader::new("blktrace")
        }
    }

    fn ev(time_nanos: u64, offset_bytes: u64, len_bytes: u32, op: Op) -> IoEvent {
        IoEvent {
            time_nanos,
            device: 0,
            offset_bytes,
            len_bytes,
            op,
            latency_nanos: None,
            pid: None,
        }
    }

    /// A small mixed trace: sequential run, random jumps, unaligned, flush, options.
    fn sample_events() -> Vec<IoEvent> {
        let mut v = Vec::new();
        for i in 0..40u64 {
            let mut e = ev(1_000 * i, 4096 * i, 4096, Op::Read);
            e.latency_nanos = Some(50_000 + i * 1000);
            e.pid = Some(100 + (i as u32 % 3));
            v.push(e);
        }
        v.push(ev(41_000, 1 << 40, 131_072, Op::Write));
        v.push(ev(40_500, 7, 3, Op::Discard));
        v.push(IoEvent {
            device: 1,
            ..ev(42_000, 0, 0, Op::Flush)
        });
        v.push(ev(u64::MAX, u64::MAX, u32::MAX, Op::Write));
        v
    }

    fn decode(bytes: &[u8], chunk: usize) -> Decoded {
        decode_chunked(NativeDecoder::new(), bytes, chunk).expect("decodes")
    }

    fn small_chunks() -> EncodeOptions {
        EncodeOptions {
            chunk_events: 16,
            compression: Compression::None,
        }
    }

    #[test]
    fn round_trips_in_any_chunking() {
        let events = sample_events();
        for options in [
            small_chunks(),
            EncodeOptions::default(),
            EncodeOptions {
                chunk_events: 5,
                compression: Compression::Lz4,
            },
        ] {
            let bytes = encode_all(&header(), &events, options);
            let one_shot = decode(&bytes, bytes.len());
            assert_eq!(one_shot.events, events);
            assert_eq!(one_shot.header, header());
            assert_eq!(one_shot.diagnostics, Diagnostics::default());
            for chunk in [1, 7, 4096] {
                assert_eq!(decode(&bytes, chunk), one_shot, "chunk {chunk}");
            }
        }
    }

    #[test]
    fn sequential_reads_cost_few_bytes() {
        let events: Vec<IoEvent> = (0..10_000u64)
            .map(|i| IoEvent {
                pid: Some(42),
                ..ev(i * 20_000, i * 4096, 4096, Op::Read)
            })
            .collect();
        let bytes = encode_all(&header(), &events, EncodeOptions::default());
        // A tag byte, a one-byte time delta (the 20 µs step is the time unit) and a one-byte zero
        // offset delta.
        assert!(
            bytes.len() < 3 * events.len() + 200,
            "{} bytes",
            bytes.len()
        );
    }

    #[test]
    fn header_update_supersedes_and_end_marker_counts() {
        let mut out = Vec::new();
        let mut enc = NativeEncoder::new(&header(), small_chunks(), &mut out);
        let events = sample_events();
        for e in &events {
            enc.push(e, &mut out);
        }
        assert_eq!(enc.buffered_events(), events.len() % 16);
        let mut later = header();
        later.dropped_events = 17;
        enc.update_header(&later, &mut out);
        assert_eq!(enc.buffered_events(), 0);
        enc.finish(&mut out);
        let mut d = NativeDecoder::new();
        d.push(&out);
        d.finish();
        let mut n = 0;
        while d.next_event().expect("decodes").is_some() {
            n += 1;
        }
        assert_eq!(n, events.len());
        assert_eq!(d.header().dropped_events, 17);
        assert_eq!(d.end_total_events(), Some(events.len() as u64));
    }

    /// Byte offsets where each chunk ends, found by walking the frames.
    fn chunk_ends(bytes: &[u8]) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut pos = FILE_HEADER_BYTES;
        while pos + FRAME_BYTES <= bytes.len() {
            let len = u32::from_le_bytes(bytes[pos + 8..pos + 12].try_into().expect("4 bytes"));
            pos += FRAME_BYTES + len as usize;
            ends.push(pos);
        }
        ends
    }

    #[test]
    fn every_truncation_yields_a_prefix_and_reports_the_cut() {
        let events = sample_events();
        let bytes = encode_all(&header(), &events, small_chunks());
        let ends = chunk_ends(&bytes);
        for cut in 0..bytes.len() {
            let got = decode(&bytes[..cut], 7);
            assert_eq!(got.events[..], events[..got.events.len()], "cut {cut}");
            // Everything after the last complete chunk (or the whole input when not even the
            // file header is complete) is the truncated tail.
            let complete = std::iter::once(FILE_HEADER_BYTES)
                .chain(ends.iter().copied())
                .filter(|&e| e <= cut)
                .max()
                .unwrap_or(0);
            let expected_tail = cut - complete;
            assert_eq!(
                got.diagnostics.truncated_tail_bytes, expected_tail as u64,
                "cut {cut}"
            );
            assert_eq!(got.diagnostics.skipped_records, 0, "cut {cut}");
        }
    }

    #[test]
    fn bad_payload_crc_skips_one_chunk_and_names_its_offset() {
        let events = sample_events();
        let mut bytes = encode_all(&header(), &events, small_chunks());
        let ends = chunk_ends(&bytes);
        // ends[0] is the header chunk; the second events chunk starts at ends[1].
        let start = ends[1];
        bytes[start + FRAME_BYTES + 3] ^= 0x55;
        for chunk in [1, 7, bytes.len()] {
            let got = decode(&bytes, chunk);
            let mut expected = events[..16].to_vec();
            expected.extend_from_slice(&events[32..]);
            assert_eq!(got.events, expected);
            assert_eq!(got.diagnostics.skipped_records, 1);
            assert!(
                got.diagnostics.reasons[0].contains(&format!("byte {start}")),
                "{:?}",
                got.diagnostics
            );
            assert!(got.diagnostics.reasons[0].contains("CRC"));
        }
    }

    #[test]
    fn damaged_frame_resynchronises_at_the_next_chunk() {
        let events = sample_events();
        let mut bytes = encode_all(&header(), &events, small_chunks());
        let ends = chunk_ends(&bytes);
        // Corrupt the length of the first events chunk: its frame CRC fails.
        bytes[ends[0] + 9] ^= 0xff;
        for chunk in [1, 7, bytes.len()] {
            let got = decode(&bytes, chunk);
            assert_eq!(got.events, events[16..].to_vec());
            assert_eq!(got.diagnostics.skipped_records, 1, "{:?}", got.diagnostics);
            assert!(got.diagnostics.reasons[0].contains(&format!("byte {}", ends[0])));
        }
    }

    #[test]
    fn rejects_other_formats_and_versions() {
        let mut d = NativeDecoder::new();
        d.push(b"Timestamp,Hostname");
        let err = d.next_event().expect_err("not native");
        assert!(err.to_string().contains("native: at byte 0"), "{err}");
        assert_eq!(d.next_event(), Ok(None));

        let mut bytes = encode_all(&header(), &[], EncodeOptions::default());
        bytes[8] = 2;
        let err = decode_chunked(NativeDecoder::new(), &bytes, 3).expect_err("version 2");
        assert!(err.to_string().contains("version 2.0"), "{err}");
    }

    #[test]
    fn bytes_after_the_end_marker_are_reported() {
        let mut bytes = encode_all(&header(), &sample_events(), small_chunks());
        bytes.extend_from_slice(b"junk");
        let got = decode(&bytes, 7);
        assert_eq!(got.events, sample_events());
        assert_eq!(got.diagnostics.skipped_records, 1);
        assert!(got.diagnostics.reasons[0].contains("4 byte(s) after the end marker"));
    }

    #[test]
    fn unknown_chunk_kinds_are_ignored() {
        let mut bytes = encode_all(&header(), &[], EncodeOptions::default());
        let end = bytes.split_off(chunk_ends(&bytes)[0]);
        write_frame(&mut bytes, ChunkKind::Header, 0, b"");
        // Rewrite the kind to an unknown one and fix the frame CRC.
        let at = bytes.len() - FRAME_BYTES;
        bytes[at + 4] = 200;
        let crc = frame_crc(&bytes[at..]);
        bytes[at + 16..at + 20].copy_from_slice(&crc.to_le_bytes());
        bytes.extend_from_slice(&end);
        let got = decode(&bytes, 1);
        assert_eq!(got.diagnostics.ignored_records, 1);
        assert_eq!(got.diagnostics.skipped_records, 0);
        assert_eq!(got.header, header());
    }

    #[test]
    fn resync_finds_a_frame_behind_a_false_start_in_any_chunking() {
        // Found by the decode_native fuzz target: a damaged frame, then a byte that starts like a
        // chunk magic but is not one, then a valid header chunk within the same 20 bytes.
        let mut input = MAGIC.to_vec();
        input.extend_from_slice(&[1, 0, 0, 0, 0x89, b'B']);
        input.extend_from_slice(&MAGIC);
        input.extend_from_slice(&[1, 0, 0, 0]);
        input.extend_from_slice(&encode_all(&header(), &sample_events(), small_chunks())[12..]);
        let one_shot = decode(&input, input.len());
        assert_eq!(one_shot.header, header());
        assert_eq!(one_shot.events, sample_events());
        assert_eq!(one_shot.diagnostics.skipped_records, 1);
        for chunk in [1, 3, 7] {
            assert_eq!(decode(&input, chunk), one_shot, "chunk {chunk}");
        }
    }

    fn arb_event() -> impl Strategy<Value = IoEvent> {
        (
            any::<u64>(),
            0u32..4,
            prop_oneof![any::<u64>(), (0u64..1 << 20).prop_map(|s| s * 512)],
            prop_oneof![any::<u32>(), (0u32..256).prop_map(|s| s * 512)],
            0u8..4,
            proptest::option::of(any::<u64>()),
            proptest::option::of(prop_oneof![any::<u32>(), 1u32..4]),
        )
            .prop_map(
                |(time_nanos, device, offset_bytes, len_bytes, op, latency_nanos, pid)| IoEvent {
                    time_nanos,
                    device,
                    offset_bytes,
                    len_bytes,
                    op: OPS[op as usize],
                    latency_nanos,
                    pid,
                },
            )
    }

    proptest! {
        #[test]
        fn random_events_round_trip(
            events in proptest::collection::vec(arb_event(), 0..200),
            chunk_events in 1usize..64,
            lz4 in any::<bool>(),
        ) {
            let options = EncodeOptions {
                chunk_events,
                compression: if lz4 { Compression::Lz4 } else { Compression::None },
            };
            let bytes = encode_all(&header(), &events, options);
            let one_shot = decode(&bytes, bytes.len());
            prop_assert_eq!(&one_shot.events, &events);
            prop_assert_eq!(&one_shot.diagnostics, &Diagnostics::default());
            prop_assert_eq!(&decode(&bytes, 1), &one_shot);
            prop_assert_eq!(&decode(&bytes, 7), &one_shot);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let mut input = MAGIC.to_vec();
            input.extend_from_slice(&[1, 0, 0, 0]);
            input.extend_from_slice(&bytes);
            let _ = decode_chunked(NativeDecoder::new(), &input, 7);
        }
    }
}
