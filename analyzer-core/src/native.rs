//! Blocksight's native trace format (`.bst`): a compact, streamable, crash-tolerant file of
//! [`IoEvent`]s with their [`TraceHeader`]. The byte layout is specified in `docs/format.md`;
//! this module is the reference implementation.
//!
//! In short: a 12-byte file header (magic and version), then framed chunks. Each chunk frame
//! carries a kind, a codec, the payload length, a CRC32 of the payload and a CRC32 of the frame
//! itself. Chunks hold the trace header (a later header chunk supersedes earlier ones, which is
//! how a recorder reports its dropped-event count at the end), devices found since the last
//! header (appended, so a trace that finds a device per event stays linear in size), up to
//! [`MAX_CHUNK_EVENTS`] events as delta- and varint-coded columns, or the end marker. Every chunk decodes on its own, so a
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
/// 1.1 added the devices chunk ([`ChunkKind::Devices`]); a 1.0 reader skips it and names the
/// devices it lists as placeholders.
pub const VERSION_MINOR: u16 = 1;

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

/// Device indices in events must stay below this: the text decoders' own limit, so that fleet
/// traces with tens of thousands of volumes round-trip. A reader gives events whose device the
/// header does not list a placeholder entry, and this bounds how many it may add. The encoder
/// never writes an event over it (it counts such an event as dropped instead).
pub const MAX_DEVICES: usize = 1 << 16;

/// The largest header or devices payload a reader decodes. The encoder keeps every header chunk
/// below it by moving a long device list into devices chunks of at most this size.
pub const MAX_HEADER_PAYLOAD_BYTES: usize = 1 << 20;

/// Events per chunk unless told otherwise. A chunk is the unit of loss when a byte is damaged
/// (its CRC fails and all its events are skipped), so chunks are kept small: 4,096 events, about
/// 12 KiB on the sample trace; the extra frames and restarted deltas cost about 1% in size
/// (measured in docs/format.md).
pub const DEFAULT_CHUNK_EVENTS: usize = 4096;

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
    /// Devices appended to (or replacing entries of) the current header's list, from a first
    /// index on ([`DevicesPayload`]). Since version 1.1.
    Devices = 4,
}

impl ChunkKind {
    pub fn from_u8(kind: u8) -> Option<ChunkKind> {
        match kind {
            1 => Some(ChunkKind::Header),
            2 => Some(ChunkKind::Events),
            3 => Some(ChunkKind::End),
            4 => Some(ChunkKind::Devices),
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

/// Payload of a [`ChunkKind::Devices`] chunk: `devices[i]` is the device with index `first + i`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct DevicesPayload {
    first: u64,
    devices: Vec<crate::event::DeviceInfo>,
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
        // Each chunk adds its frame and restarts the deltas: a few dozen bytes.
        let chunks = events.len().div_ceil(DEFAULT_CHUNK_EVENTS);
        assert!(
            bytes.len() < 3 * events.len() + 200 + 64 * chunks,
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
        assert!(err.to_string().contains("version 2.1"), "{err}");
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

    /// One event per device, each device found as it first appears, the way `import` writes a
    /// text trace: the encoder is told the device list grew before each event.
    fn one_event_per_device(devices: usize, options: EncodeOptions) -> (Vec<u8>, TraceHeader) {
        let mut header = TraceHeader::new("csv");
        let mut out = Vec::new();
        let mut enc = NativeEncoder::new(&header, options, &mut out);
        for i in 0..devices {
            header.devices.push(DeviceInfo::named(format!("dev{i}")));
            enc.add_devices(&header.devices);
            let e = IoEvent {
                device: i as u32,
                ..ev(i as u64 * 1000, 0, 4096, Op::Read)
            };
            enc.push(&e, &mut out);
        }
        enc.update_header(&header, &mut out);
        enc.finish(&mut out);
        (out, header)
    }

    #[test]
    fn issue_13_tens_of_thousands_of_devices_round_trip_in_linear_size() {
        for devices in [5_000, 20_000, MAX_DEVICES] {
            let (bytes, header) = one_event_per_device(devices, EncodeOptions::default());
            let got = decode(&bytes, bytes.len());
            assert_eq!(got.events.len(), devices, "{devices} devices");
            assert_eq!(got.header, header);
            assert_eq!(got.diagnostics, Diagnostics::default());
            // Each device is named twice at most (a devices chunk, the final header), each event
            // costs a few bytes: linear. (Rewriting the header per device took 837 MB for
            // 20,000.)
            assert!(
                bytes.len() < 40 * devices,
                "{devices}: {} bytes",
                bytes.len()
            );
        }
    }

    #[test]
    fn a_file_cut_anywhere_names_the_devices_its_chunks_use() {
        let options = EncodeOptions {
            chunk_events: 100,
            ..EncodeOptions::default()
        };
        let (bytes, _) = one_event_per_device(1_000, options);
        for cut in (0..bytes.len()).step_by(97) {
            let got = decode(&bytes[..cut], 7);
            for e in &got.events {
                assert_eq!(
                    got.header.devices[e.device as usize].name,
                    format!("dev{}", e.device),
                    "cut {cut}"
                );
            }
        }
    }

    /// Events of devices the header does not list (a damaged or hand-made file) get placeholder
    /// entries up to the largest device any event uses, whichever chunk or batch brings it,
    /// and the devices the header names keep their names.
    #[test]
    fn devices_the_header_does_not_list_get_placeholders() {
        let header = TraceHeader::new("csv");
        let mut bytes = Vec::new();
        let mut enc = NativeEncoder::new(&header, small_chunks(), &mut bytes);
        // Device 9 only in the third chunk, between device 0's events; 4 in the first.
        for i in 0..48u32 {
            let device = match i {
                5 => 4,
                37 => 9,
                _ => 0,
            };
            let e = IoEvent {
                device,
                ..ev(u64::from(i) * 1000, 0, 4096, Op::Read)
            };
            enc.push(&e, &mut bytes);
        }
        enc.finish(&mut bytes);
        for chunk in [1, 7, bytes.len()] {
            let got = decode(&bytes, chunk);
            assert_eq!(got.events.len(), 48);
            let names: Vec<&str> = got.header.devices.iter().map(|d| d.name.as_str()).collect();
            assert_eq!(names.len(), 10, "{names:?}");
            assert_eq!(names[9], "device9 (not named in the file)");
            assert_eq!(names[4], "device4 (not named in the file)");
        }
    }

    #[test]
    fn a_header_too_large_for_one_chunk_moves_its_devices_into_devices_chunks() {
        let mut header = TraceHeader::new("csv");
        // 4,000 names of 1 KiB: about 4 MiB, over the 1 MiB a header chunk may hold.
        header.devices = (0..4_000)
            .map(|i| DeviceInfo::named(format!("{i:01024}")))
            .collect();
        let events: Vec<IoEvent> = (0..4_000u32)
            .map(|d| IoEvent {
                device: d,
                ..ev(u64::from(d), 0, 512, Op::Write)
            })
            .collect();
        let bytes = encode_all(&header, &events, EncodeOptions::default());
        let got = decode(&bytes, 4096);
        assert_eq!(got.header, header);
        assert_eq!(got.events, events);
        assert_eq!(got.diagnostics, Diagnostics::default());
    }

    #[test]
    fn issue_13_events_the_reader_would_drop_are_never_written_but_counted() {
        let mut events = sample_events();
        events.insert(
            3,
            IoEvent {
                device: MAX_DEVICES as u32,
                ..ev(2_500, 0, 4096, Op::Read)
            },
        );
        let bytes = encode_all(&header(), &events, small_chunks());
        let got = decode(&bytes, 7);
        events.remove(3);
        assert_eq!(got.events, events);
        assert_eq!(got.header.dropped_events, 1);
        assert_eq!(got.diagnostics, Diagnostics::default());
    }

    #[test]
    fn issue_13_a_file_without_its_end_marker_says_so_even_when_cut_between_chunks() {
        let bytes = encode_all(&header(), &sample_events(), small_chunks());
        let ends = chunk_ends(&bytes);
        // Cut exactly after the last events chunk (before the final header and end marker), as
        // a SIGKILLed recorder leaves its file.
        let cut = ends[ends.len() - 2];
        let got = decode(&bytes[..cut], 7);
        assert_eq!(got.events, sample_events());
        assert_eq!(got.diagnostics.truncated_tail_bytes, 0);
        assert!(got.diagnostics.end_marker_missing);
        assert!(!decode(&bytes, 7).diagnostics.end_marker_missing);
    }

    #[test]
    fn issue_13_one_bad_byte_loses_at_most_one_small_chunk() {
        // Before, the default chunk held 65,536 events: one changed byte lost all of them.
        let events: Vec<IoEvent> = (0..100_000u64)
            .map(|i| ev(i * 10_000, (i * 7919 % 100_000) * 4096, 4096, Op::Read))
            .collect();
        let mut bytes = encode_all(&header(), &events, EncodeOptions::default());
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x55;
        let got = decode(&bytes, bytes.len());
        let lost = events.len() - got.events.len();
        assert!((1..=4096).contains(&lost), "{lost} events lost");
    }

    #[test]
    fn an_lz4_size_claim_beyond_what_lz4_can_expand_to_is_damage() {
        // A changed size word (CRCs fixed, as native_structured makes them) claiming 60 MiB for
        // a block of a few hundred bytes: the reader zeroed 60 MiB for such a chunk.
        let events: Vec<IoEvent> = (0..64u64)
            .map(|i| ev(i, i * 4096, 4096, Op::Read))
            .collect();
        let options = EncodeOptions {
            chunk_events: 64,
            compression: Compression::Lz4,
        };
        let mut bytes = encode_all(&header(), &events, options);
        let ends = chunk_ends(&bytes);
        let (start, end) = (ends[0], ends[1]);
        assert_eq!(bytes[start + 5], Compression::Lz4.codec());
        let payload = start + FRAME_BYTES;
        bytes[payload..payload + 4].copy_from_slice(&(60u32 << 20).to_le_bytes());
        let crc = crc32fast::hash(&bytes[payload..end]);
        bytes[start + 12..start + 16].copy_from_slice(&crc.to_le_bytes());
        let frame = frame_crc(&bytes[start..]);
        bytes[start + 16..start + 20].copy_from_slice(&frame.to_le_bytes());
        let got = decode(&bytes, 7);
        assert!(got.events.is_empty());
        assert!(
            got.diagnostics.reasons[0].contains("more than LZ4 can expand to"),
            "{:?}",
            got.diagnostics
        );
    }

    #[test]
    fn version_1_0_files_still_read() {
        // 1.0 had no devices chunk; only the minor version differs for such a file.
        let mut bytes = encode_all(&header(), &sample_events(), small_chunks());
        bytes[10] = 0;
        let got = decode(&bytes, 7);
        assert_eq!(got.events, sample_events());
        assert_eq!(got.header, header());
    }

    #[test]
    fn damaged_headers_say_what_is_wrong_in_words() {
        let mut bytes = encode_all(&header(), &[], EncodeOptions::default());
        let start = FILE_HEADER_BYTES;
        let len = u32::from_le_bytes(bytes[start + 8..start + 12].try_into().expect("4")) as usize;
        // Drop the header payload's last byte and fix up the frame, so only bincode notices.
        bytes.remove(start + FRAME_BYTES + len - 1);
        let payload = bytes[start + FRAME_BYTES..start + FRAME_BYTES + len - 1].to_vec();
        bytes[start + 8..start + 12].copy_from_slice(&((len - 1) as u32).to_le_bytes());
        bytes[start + 12..start + 16].copy_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        let crc = frame_crc(&bytes[start..]);
        bytes[start + 16..start + 20].copy_from_slice(&crc.to_le_bytes());
        let got = decode(&bytes, 7);
        let reason = &got.diagnostics.reasons[0];
        assert!(
            reason.contains(&format!("chunk at byte {start}")),
            "{reason}"
        );
        assert!(
            reason.contains("ends 1 byte(s) before its last field"),
            "{reason}"
        );
        assert!(!reason.contains("UnexpectedEnd"), "{reason}");
    }

    /// What the CLI's decoder for a native file (in the ordering window) gives for `bytes`
    /// pushed `push` bytes at a time, read event by event (`max` `None`) or in batches of
    /// `max`: the events, the header, the diagnostics and the error that stopped it.
    fn read_ordered(
        bytes: &[u8],
        push: usize,
        max: Option<usize>,
    ) -> (Vec<IoEvent>, TraceHeader, Diagnostics, Option<String>) {
        let mut d = crate::TraceFormat::Native
            .decoder(&crate::decode::DecodeOptions::default())
            .expect("a decoder");
        let mut events = Vec::new();
        let mut drain = |d: &mut Box<dyn Decoder>| -> Result<(), crate::DecodeError> {
            match max {
                None => {
                    while let Some(e) = d.next_event()? {
                        events.push(e);
                    }
                }
                Some(max) => while d.next_events(&mut events, max)? > 0 {},
            }
            Ok(())
        };
        let mut error = None;
        for chunk in bytes.chunks(push) {
            d.push(chunk);
            if let Err(e) = drain(&mut d) {
                error = Some(e.to_string());
                break;
            }
        }
        if error.is_none() {
            d.finish();
            error = drain(&mut d).err().map(|e| e.to_string());
        }
        (events, d.header().clone(), d.diagnostics().clone(), error)
    }

    /// Past the ordering window: records far out of order are moved forward (clamped) in the
    /// same places whether read one by one or in batches.
    #[test]
    fn batches_clamp_what_single_events_clamp() {
        // Records late by a few records, by about the window (16,384 records) and by more.
        let late_by = [100u64, 16_383, 16_384, 16_385, 16_700, 17_500, 40_000];
        let events: Vec<IoEvent> = (0..150_000u64)
            .map(|i| {
                let late = if i % 20_000 == 19_999 {
                    late_by[(i / 20_000) as usize % late_by.len()] * 1_000 - 500
                } else {
                    0
                };
                ev((i * 1_000).saturating_sub(late), i * 4096, 4096, Op::Read)
            })
            .collect();
        let bytes = encode_all(&header(), &events, EncodeOptions::default());
        let one = read_ordered(&bytes, 1 << 20, None);
        // The rule itself: the window pushed one record at a time, releasing one whenever it
        // holds more than it may.
        let mut window = crate::decode::order::Reorder::default();
        let mut own = Diagnostics::default();
        let mut want = Vec::new();
        for &e in &decode(&bytes, bytes.len()).events {
            window.push(e, String::new, &mut own);
            want.extend(window.pop_relative(false, &mut own));
        }
        while let Some(e) = window.pop_relative(true, &mut own) {
            want.push(e);
        }
        assert_eq!(one.0, want);
        // Half a record less late than the list says: the last three are past the window.
        assert_eq!(own.clamped_records, 3);
        assert_eq!(
            (one.2.clamped_records, one.2.out_of_order_records),
            (own.clamped_records, own.out_of_order_records)
        );
        for max in [1, 100, 1024, 5000] {
            assert_eq!(
                read_ordered(&bytes, 1 << 20, Some(max)),
                one,
                "batches of {max}"
            );
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

        /// Batches of any size (`next_events`, as the CLI reads) give exactly what `next_event`
        /// gives: events, header, diagnostics and errors, through the ordering window, from
        /// damaged files and in any push size.
        #[test]
        fn batches_give_what_single_events_give(
            events in proptest::collection::vec(arb_event(), 0..300),
            chunk_events in 1usize..64,
            lz4 in any::<bool>(),
            damage in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
            push in 1usize..5000,
            max in 1usize..3000,
        ) {
            let options = EncodeOptions {
                chunk_events,
                compression: if lz4 { Compression::Lz4 } else { Compression::None },
            };
            let mut bytes = encode_all(&header(), &events, options);
            for (at, byte) in damage {
                let at = 12 + at % (bytes.len() - 12);
                bytes[at] ^= byte;
            }
            prop_assert_eq!(read_ordered(&bytes, push, None), read_ordered(&bytes, push, Some(max)));
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
