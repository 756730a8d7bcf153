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
