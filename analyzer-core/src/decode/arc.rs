//! The ARC paper's traces (Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead Replacement
//! Cache", FAST '03): `.lis` files, one request per line as four whitespace-separated integers,
//! `start_block num_blocks ignore request_id`.
//!
//! Blocks are 512 bytes; every request is a read (the traces are disk reads seen below the
//! upstream caches). The files carry no timestamps: every event has time 0 and the request order
//! is the file order, so rates and time charts are not available for this format
//! ([`crate::TraceFormat::clock_resolution_nanos`] is `None`). The third field is ignored, as the
//! paper's own readers do; the fourth is the request's number. One device, named `lis`.

use super::text::{
    parse_u64, record_text, sectors_to_len_bytes, sectors_to_offset_bytes, split_fields, Delimiter,
    LineFormat, Out,
};
use crate::event::{IoEvent, Op};

#[derive(Default)]
pub struct ArcLis;

impl ArcLis {
    pub fn new() -> ArcLis {
        ArcLis
    }
}

fn record(line: &str, out: &mut Out) -> Result<IoEvent, String> {
    let (n, [start, blocks, ignore, id]) = split_fields::<4>(line, Delimiter::Whitespace);
    if n != 4 {
        return Err(format!(
            "expected 4 space-separated fields (start_block num_blocks ignore request_id), found \
             {n}"
        ));
    }
    let offset_bytes = sectors_to_offset_bytes(parse_u64(start, "start_block")?)?;
    let blocks = parse_u64(blocks, "num_blocks")?;
    if blocks == 0 {
        return Err("num_blocks is 0".into());
    }
    parse_u64(ignore, "third field")?;
    parse_u64(id, "request_id")?;
    Ok(IoEvent {
        time_nanos: 0,
        device: out.device("lis")?,
        offset_bytes,
        len_bytes: sectors_to_len_bytes(blocks)?,
        op: Op::Read,
        latency_nanos: None,
        pid: None,
    })
}

impl LineFormat for ArcLis {
    fn name(&self) -> &'static str {
        "arc"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        let Some(line) = record_text(line_no, text, out) else {
            return;
        };
        match record(line, out) {
            Ok(e) => out.emit(e),
            Err(why) => out.skip(line_no, why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_chunked;
    use crate::decode::text::TextDecoder;

    // Constructed lines in the shape of the published files (not a real sample: see
    // tests/data/real/README.md for those).
    const LINES: &str = "230027 8 0 0\n1842745 64 0 1\n\n216082 8 0 2\n";

    #[test]
    fn lines_become_reads_of_512_byte_blocks_in_any_chunking() {
        let one = decode_chunked(
            TextDecoder::new(ArcLis::new()),
            LINES.as_bytes(),
            usize::MAX,
        )
        .expect("decodes");
        let tiny =
            decode_chunked(TextDecoder::new(ArcLis::new()), LINES.as_bytes(), 3).expect("decodes");
        assert_eq!(one, tiny);
        let got: Vec<(u64, u32, Op, u64)> = one
            .events
            .iter()
            .map(|e| (e.offset_bytes, e.len_bytes, e.op, e.time_nanos))
            .collect();
        assert_eq!(
            got,
            [
                (230_027 * 512, 8 * 512, Op::Read, 0),
                (1_842_745 * 512, 64 * 512, Op::Read, 0),
                (216_082 * 512, 8 * 512, Op::Read, 0),
            ]
        );
        assert_eq!(one.header.devices[0].name, "lis");
        assert_eq!(one.diagnostics.skipped_records, 0);
    }

    #[test]
    fn bad_lines_are_skipped_with_their_line() {
        let d = decode_chunked(
            TextDecoder::new(ArcLis::new()),
            b"1 8 0 0\n1 8 0\nx 8 0 2\n",
            usize::MAX,
        )
        .expect("decodes");
        assert_eq!(d.events.len(), 1);
        assert_eq!(
            d.diagnostics.reasons,
            [
                "line 2: expected 4 space-separated fields (start_block num_blocks ignore \
                 request_id), found 3",
                "line 3: start_block \"x\" is not a non-negative integer",
            ]
        );
    }
}
