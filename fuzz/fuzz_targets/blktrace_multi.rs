//! blktrace binary, two per-CPU inputs merged: the input is split in two at a point taken from its
//! first two bytes, and the halves are fed in small interleaved chunks.
#![no_main]

use analyzer_core::decode::{Action, DecodeOptions};
use analyzer_core::TraceFormat;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let split = usize::from(u16::from_le_bytes([data[0], data[1]])) % (data.len() - 1);
    let inputs = [&data[2..2 + split.min(data.len() - 2)], &data[2 + split.min(data.len() - 2)..]];
    let action = if data[0] & 1 == 1 { Action::Queue } else { Action::Issue };
    let options = DecodeOptions { action, ..DecodeOptions::default() };
    let Ok(mut d) = TraceFormat::BlktraceBin.multi_decoder(2, &options) else { return };
    let mut fed = [0usize; 2];
    let mut finished = [false; 2];
    loop {
        loop {
            match d.next_event() {
                Ok(Some(e)) => assert!((e.device as usize) < d.header().devices.len()),
                Ok(None) => break,
                Err(_) => return,
            }
        }
        let Some(i) = d.wants() else { break };
        assert!(!finished[i], "asked again for a finished input");
        if fed[i] == inputs[i].len() {
            d.finish_input(i);
            finished[i] = true;
        } else {
            let end = (fed[i] + 13).min(inputs[i].len());
            d.push(i, &inputs[i][fed[i]..end]);
            fed[i] = end;
        }
    }
});
