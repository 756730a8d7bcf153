//! The drivers shared by the fuzz targets. Every decoder must, for any input: never panic, never
//! buffer without bound, and give the same result whether the input arrives in one piece or in
//! small chunks.

use analyzer_core::compress::{Decompressing, Decompressor};
use analyzer_core::decode::{decode_chunked, DecodeOptions};
use analyzer_core::native::NativeDecoder;
use analyzer_core::TraceFormat;

/// The options every target decodes with; the generic CSV format needs a column mapping.
fn options(format: TraceFormat) -> DecodeOptions {
    DecodeOptions {
        csv_columns: (format == TraceFormat::GenericCsv)
            .then(|| "time=0,op=1,offset=2,len=3".to_string()),
        ..DecodeOptions::default()
    }
}

/// The chunk size for the chunked pass: 1 to 16 bytes, taken from the input so the fuzzer
/// explores different splits.
fn chunk_bytes(data: &[u8]) -> usize {
    1 + data.last().map_or(0, |&b| usize::from(b % 16))
}

/// Decodes `data` as `format` in one piece and in small chunks and requires equal results.
/// Formats whose decoder is not built yet return at once.
pub fn decode_format(format: TraceFormat, data: &[u8]) {
    let options = options(format);
    let (Ok(one), Ok(two)) = (format.decoder(&options), format.decoder(&options)) else {
        return;
    };
    let whole = decode_chunked(one, data, data.len().max(1));
    let chunked = decode_chunked(two, data, chunk_bytes(data));
    assert_eq!(
        whole,
        chunked,
        "{} decoding depends on chunking",
        format.name()
    );
    if let Ok(d) = whole {
        for e in &d.events {
            assert!(
                (e.device as usize) < d.header.devices.len(),
                "{}: device {} not in the header",
                format.name(),
                e.device
            );
        }
        assert!(d.diagnostics.truncated_tail_bytes <= data.len() as u64);
    }
}

/// Decompresses `data` in one piece and in small chunks: the byte streams must be equal, each
/// read bounded by one step, and the native decoder behind the wrapper must agree too.
pub fn decompress(data: &[u8]) {
    let run = |chunk: usize| {
        let mut d = Decompressor::new();
        let mut out = Vec::new();
        let mut step = Vec::new();
        let mut pump = |d: &mut Decompressor, out: &mut Vec<u8>| loop {
            step.clear();
            match d.read(&mut step) {
                Ok(0) => return Ok(()),
                Ok(n) => {
                    assert!(n <= analyzer_core::compress::STEP_BYTES && n == step.len());
                    out.extend_from_slice(&step);
                    // Keep memory bounded whatever the expansion ratio.
                    if out.len() > 64 << 20 {
                        return Ok(());
                    }
                }
                Err(e) => return Err(e),
            }
        };
        for c in data.chunks(chunk) {
            d.push(c);
            if let Err(e) = pump(&mut d, &mut out) {
                return (out, Err(e));
            }
        }
        d.finish();
        let r = pump(&mut d, &mut out);
        (out, r)
    };
    let (whole_out, whole_result) = run(data.len().max(1));
    let (chunked_out, chunked_result) = run(chunk_bytes(data));
    assert_eq!(
        whole_result, chunked_result,
        "decompression result depends on chunking"
    );
    if whole_result.is_ok() {
        assert_eq!(
            whole_out, chunked_out,
            "decompressed bytes depend on chunking"
        );
    }
    let whole = decode_chunked(
        Decompressing::new(NativeDecoder::new()),
        data,
        data.len().max(1),
    );
    let chunked = decode_chunked(
        Decompressing::new(NativeDecoder::new()),
        data,
        chunk_bytes(data),
    );
    assert_eq!(whole, chunked, "decompressing decoder depends on chunking");
}

use analyzer_core::event::{DeviceInfo, IoEvent, Op, TraceHeader};
use analyzer_core::native::{Compression, EncodeOptions, NativeEncoder};
use libfuzzer_sys::arbitrary::{Result as ArbResult, Unstructured};

const OPS: [Op; 4] = [Op::Read, Op::Write, Op::Discard, Op::Flush];

/// A valid native file generated from `u`: events that look like real traces most of the time
/// (sequential runs, sector-aligned offsets, small time steps, a few pids) and anything at all
/// some of the time, devices found on the way, header updates and early flushes.
fn generate(u: &mut Unstructured<'_>) -> ArbResult<(Vec<u8>, TraceHeader, Vec<IoEvent>)> {
    let options = EncodeOptions {
        chunk_events: u.int_in_range(1..=64)?,
        compression: if u.arbitrary()? {
            Compression::Lz4
        } else {
            Compression::None
        },
    };
    let mut header = TraceHeader::new("fuzz");
    header.devices.push(DeviceInfo::named("d0"));
    let mut out = Vec::new();
    let mut enc = NativeEncoder::new(&header, options, &mut out);
    let mut events = Vec::new();
    let (mut time, mut end) = (0u64, 0u64);
    let n = u.int_in_range(0..=400)?;
    for _ in 0..n {
        match u.int_in_range(0u8..=15)? {
            0 => {
                let name = format!("d{}", header.devices.len());
                header.devices.push(DeviceInfo::named(name));
                enc.add_devices(&header.devices);
            }
            1 => {
                header.dropped_events += 1;
                enc.update_header(&header, &mut out);
            }
            2 => enc.flush(&mut out),
            _ => {}
        }
        let device = u.int_in_range(0..=header.devices.len() - 1)? as u32;
        time = if u.ratio(1, 16)? {
            u.arbitrary()?
        } else {
            time.wrapping_add(u.int_in_range(0..=200_000)?)
        };
        let op = OPS[usize::from(u.int_in_range(0u8..=3)?)];
        let offset_bytes = match u.int_in_range(0u8..=3)? {
            0 => end,
            1 => u64::from(u.arbitrary::<u32>()?) * 512,
            2 => end.wrapping_add(u.int_in_range(0..=64)? * 4096),
            _ => u.arbitrary()?,
        };
        let len_bytes = match u.int_in_range(0u8..=3)? {
            0 => 4096,
            1 => u32::from(u.arbitrary::<u8>()?) * 512,
            2 => 0,
            _ => u.arbitrary()?,
        };
        let e = IoEvent {
            time_nanos: time,
            device,
            offset_bytes,
            len_bytes,
            op,
            latency_nanos: if u.arbitrary()? {
                Some(u.int_in_range(0..=50_000_000)?)
            } else {
                None
            },
            pid: if u.ratio(3, 4)? {
                Some(if u.ratio(7, 8)? {
                    u.int_in_range(1..=4)?
                } else {
                    u.arbitrary()?
                })
            } else {
                None
            },
        };
        end = offset_bytes.wrapping_add(u64::from(len_bytes));
        enc.push(&e, &mut out);
        events.push(e);
    }
    enc.update_header(&header, &mut out);
    enc.finish(&mut out);
    Ok((out, header, events))
}

/// The frames of a native file: (start, payload start, end) of each complete chunk.
fn frames(bytes: &[u8]) -> Vec<(usize, usize, usize)> {
    let mut v = Vec::new();
    let mut pos = analyzer_core::native::FILE_HEADER_BYTES;
    let frame = analyzer_core::native::FRAME_BYTES;
    while pos + frame <= bytes.len() {
        let len = u32::from_le_bytes([
            bytes[pos + 8],
            bytes[pos + 9],
            bytes[pos + 10],
            bytes[pos + 11],
        ]) as usize;
        let end = pos + frame + len;
        if end > bytes.len() {
            break;
        }
        v.push((pos, pos + frame, end));
        pos = end;
    }
    v
}

/// Rewrites the length and both CRCs of the frame at `start` for its payload `start+20..end`.
fn fix_frame(bytes: &mut [u8], start: usize, end: usize) {
    let payload_start = start + analyzer_core::native::FRAME_BYTES;
    let len = (end - payload_start) as u32;
    bytes[start + 8..start + 12].copy_from_slice(&len.to_le_bytes());
    let crc = crc32fast::hash(&bytes[payload_start..end]);
    bytes[start + 12..start + 16].copy_from_slice(&crc.to_le_bytes());
    let frame_crc = crc32fast::hash(&bytes[start..start + 16]);
    bytes[start + 16..start + 20].copy_from_slice(&frame_crc.to_le_bytes());
}

/// Damages a valid file the way disks, copies and crashes do, steered by `u`.
fn mutate(mut bytes: Vec<u8>, u: &mut Unstructured<'_>) -> ArbResult<Vec<u8>> {
    for _ in 0..u.int_in_range(0..=4)? {
        let f = frames(&bytes);
        if f.is_empty() {
            break;
        }
        let (start, payload, end) = f[u.choose_index(f.len())?];
        match u.int_in_range(0u8..=6)? {
            // A changed payload byte with valid CRCs: only the payload decoder can notice.
            0 | 1 if end > payload => {
                let at = payload + u.choose_index(end - payload)?;
                bytes[at] ^= u.int_in_range(1u8..=255)?;
                fix_frame(&mut bytes, start, end);
            }
            // A payload byte inserted or removed, length and CRCs fixed.
            2 => {
                let at = payload + u.choose_index(end - payload + 1)?;
                if u.arbitrary()? && at < end {
                    bytes.remove(at);
                    fix_frame(&mut bytes, start, end - 1);
                } else {
                    bytes.insert(at, u.arbitrary()?);
                    fix_frame(&mut bytes, start, end + 1);
                }
            }
            // A chunk lost or written twice.
            3 => {
                bytes.drain(start..end);
            }
            4 => {
                let copy = bytes[start..end].to_vec();
                bytes.splice(end..end, copy);
            }
            // A file cut off, or a raw flipped bit (CRCs not fixed).
            5 => bytes.truncate(start + u.choose_index(end - start + 1)?),
            _ => {
                let at = u.choose_index(bytes.len())?;
                bytes[at] ^= 1 << u.int_in_range(0u8..=7)?;
            }
        }
    }
    Ok(bytes)
}

/// The `native_structured` target: generated files round-trip; damaged ones decode the same in
/// any chunking, never panic and keep every event's device in the header.
pub fn native_structured(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok((bytes, header, events)) = generate(&mut u) else {
        return;
    };
    let whole = decode_chunked(NativeDecoder::new(), &bytes, bytes.len()).expect("valid file");
    assert_eq!(whole.events, events, "events do not round-trip");
    assert_eq!(whole.header, header, "header does not round-trip");
    assert_eq!(whole.diagnostics, Default::default(), "a valid file has diagnostics");
    let chunk = chunk_bytes(data);
    let Ok(damaged) = mutate(bytes, &mut u) else {
        return;
    };
    let whole = decode_chunked(NativeDecoder::new(), &damaged, damaged.len().max(1));
    let chunked = decode_chunked(NativeDecoder::new(), &damaged, chunk);
    assert_eq!(whole, chunked, "native decoding depends on chunking");
    if let Ok(d) = whole {
        for e in &d.events {
            assert!((e.device as usize) < d.header.devices.len());
        }
    }
}

/// The `http_head` target: one piece and byte by byte agree; extra input never panics.
pub fn http_head(data: &[u8]) {
    use analyzer_core::http::{HeadReader, MAX_HEAD_BYTES};
    let whole = HeadReader::new().push(data);
    let mut r = HeadReader::new();
    let mut last = Ok(None);
    for b in data.chunks(chunk_bytes(data)) {
        last = r.push(b);
        if !matches!(last, Ok(None)) {
            break;
        }
    }
    assert_eq!(whole, last, "the head parser depends on chunking");
    if let Ok(Some(head)) = &whole {
        assert!(head.method.len() + head.target.len() <= MAX_HEAD_BYTES);
        assert!(head.path().starts_with('/') || !head.target.starts_with('/'));
    }
}

/// Undoes [`analyzer_core::report::escape`].
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The `report_escape` target.
pub fn report_escape(data: &[u8]) {
    use analyzer_core::report::{escape, render, Bundle, Page};
    let split = data.first().map_or(0, |&b| usize::from(b)).min(data.len());
    let (name_bytes, rest) = data.split_at(split);
    let name = String::from_utf8_lossy(name_bytes);
    let escaped = escape(&name);
    assert!(
        !escaped.contains(['<', '>', '"', '\'']),
        "markup survives escaping: {escaped:?}"
    );
    assert_eq!(unescape(&escaped), name, "escaping loses text");
    let bundle = Bundle {
        css: "body{}".into(),
        main_js: "async function __wbg_init(x) {}".into(),
        main_wasm: vec![0, 97, 115, 109],
        worker_js: b"let wasm_bindgen;".to_vec(),
        worker_wasm: vec![1],
    };
    let html = render(&Page {
        bundle: &bundle,
        results_json: rest,
        trace: Some(rest),
        name: &name,
        url_hash: Some(&name),
    });
    assert_eq!(html.matches("<script type=\"module\">").count(), 1);
    // Seven data elements and the bootstrap: nothing from the input opened or closed another.
    let data_elements = 7 + usize::from(!name.is_empty());
    assert_eq!(html.matches("<script").count(), data_elements + 1, "{html}");
    assert_eq!(html.matches("</script>").count(), data_elements + 1);
    let title = html
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .expect("a title");
    assert!(!title.contains('<'));
}
