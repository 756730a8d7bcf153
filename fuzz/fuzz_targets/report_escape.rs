//! Fuzzes the report's escaping (`analyzer_core::report`): escaped text never holds markup
//! characters and unescapes to the original, and a page built from hostile names, results and
//! trace bytes still has exactly one executable script and no way out of its data elements.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    blocksight_fuzz::report_escape(data);
});
