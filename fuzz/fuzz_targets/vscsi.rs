//! CloudPhysics vscsi v1 and v2.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::decode(analyzer_core::TraceFormat::VscsiV1, data);
    common::decode(analyzer_core::TraceFormat::VscsiV2, data);
    common::sniff(data);
});
