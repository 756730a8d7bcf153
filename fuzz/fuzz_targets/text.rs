//! Every text decoder (blkparse, tracefs, MSR, SPC, Alibaba, Tencent, fio iolog v2/v3, generic
//! CSV by header and by a fixed mapping): never panics, and chunked decoding equals one-shot
//! decoding for any input.
#![no_main]

use analyzer_core::decode::{decode_chunked, Action, DecodeOptions};
use analyzer_core::TraceFormat;

#[path = "common.rs"]
mod common;

const TEXT_FORMATS: [TraceFormat; 9] = [
    TraceFormat::BlkparseText,
    TraceFormat::TracefsText,
    TraceFormat::MsrCsv,
    TraceFormat::Spc,
    TraceFormat::AlibabaCsv,
    TraceFormat::TencentCsv,
    TraceFormat::FioIologV2,
    TraceFormat::FioIologV3,
    TraceFormat::GenericCsv,
];

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let format = TEXT_FORMATS[usize::from(first) % TEXT_FORMATS.len()];
    common::decode(format, data);
    common::sniff(data);
    let options = DecodeOptions {
        action: if first & 0x80 != 0 {
            Action::Queue
        } else {
            Action::Issue
        },
        csv_columns: (first & 0x40 != 0).then(|| {
            "time=0,op=1,offset=2,len=3,device=4,latency=5,pid=6,time_unit=us".to_string()
        }),
    };
    let one_shot = TraceFormat::decoder(format, &options)
        .ok()
        .map(|d| decode_chunked(d, rest, usize::MAX));
    let chunked = TraceFormat::decoder(format, &options)
        .ok()
        .map(|d| decode_chunked(d, rest, 7));
    assert_eq!(one_shot, chunked, "{format:?}: chunking changed the result");
});
