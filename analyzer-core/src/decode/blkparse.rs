//! blkparse's default text output, one trace action per line:
//! `  8,0    1        1     0.000000000  1234  D   W 2048 + 8 [fio]`
//! (device `major,minor`, CPU, sequence, seconds since the trace start, PID, action, RWBS, then
//! `sector + sectors [process]`, or `[error]` for completions).
//!
//! The request is the `D` (issue) line by default or the `Q` (queue) line
//! ([`DecodeOptions::action`](super::DecodeOptions)); `C` lines complete the oldest pending
//! request with the same device and start sector and give its latency (flushes complete in
//! order). Other actions are counted as ignored. Sectors are 512 bytes. The summary blkparse
//! prints at the end (`CPU0 (8,0):`, `Total (8,0):`) ends the events without errors.

use super::text::{
    op_from_rwbs, op_with_range, parse_seconds_nanos, sectors_to_len_bytes,
    sectors_to_offset_bytes, utf8, LineFormat, Out, Pending,
};
use super::Action;
use crate::event::{IoEvent, Op};

pub struct Blkparse {
    request_action: &'static str,
    pending: Pending,
}

impl Blkparse {
    pub fn new(action: Action) -> Blkparse {
        let request_action = match action {
            Action::Issue => "D",
            Action::Queue => "Q",
        };
        Blkparse {
            request_action,
            pending: Pending::default(),
        }
    }

    fn parse(&mut self, line: &str, out: &mut Out) -> Result<(), String> {
        let mut tokens = line.split_whitespace();
        let mut next = |what: &str| tokens.next().ok_or_else(|| format!("no {what} field"));
        let dev = next("device")?;
        let (major, minor) = dev
            .split_once(',')
            .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
            .ok_or_else(|| format!("device {dev:?} is not major,minor"))?;
        let cpu = next("CPU")?;
        cpu.parse::<u32>()
            .map_err(|_| format!("CPU {cpu:?} is not a number"))?;
        let seq = next("sequence")?;
        seq.parse::<u64>()
            .map_err(|_| format!("sequence {seq:?} is not a number"))?;
        let time = next("time")?;
        let time_nanos =
            parse_seconds_nanos(time).ok_or_else(|| format!("time {time:?} is not seconds"))?;
        let pid = next("PID")?;
        let pid = pid
            .parse::<u32>()
            .map_err(|_| format!("PID {pid:?} is not a number"))?;
        let action = next("action")?;
        if action.is_empty() || action.len() > 2 || !action.bytes().all(|b| b.is_ascii_alphabetic())
        {
            return Err(format!("action {action:?} is not a blkparse action"));
        }
        // The line has blkparse's shape: sniffing can be sure from here on.
        out.saw_header = true;
        let is_request = action == self.request_action;
        if !is_request && action != "C" {
            out.ignore();
            return Ok(());
        }
        let rwbs = next("RWBS")?;
        let op = op_from_rwbs(rwbs).ok_or_else(|| format!("RWBS {rwbs:?} is not an RWBS field"))?;
        let rest: Vec<&str> = tokens.take(4).collect();
        // `sector + sectors`, or (flushes) nothing or a lone sector.
        let range = match rest.as_slice() {
            [sector, "+", n, ..] => Some((parse_sector(sector)?, parse_sector(n)?)),
            _ => None,
        };
        let op = op_with_range(op, rwbs, range.map_or(0, |(_, n)| n));
        let device = out.header.device_index_by_dev_t(major, minor);
        if is_request {
            let (sector, sectors) = match (range, op) {
                (Some(r), _) => r,
                (None, Op::Flush) => (0, 0),
                (None, _) => {
                    return Err(format!(
                        "{action} {rwbs} line has no `sector + sectors` range"
                    ))
                }
            };
            let event = IoEvent {
                time_nanos,
                device,
                offset_bytes: if op == Op::Flush {
                    0
                } else {
                    sectors_to_offset_bytes(sector)?
                },
                len_bytes: if op == Op::Flush {
                    0
                } else {
                    sectors_to_len_bytes(sectors)?
                },
                op,
                latency_nanos: None,
                pid: Some(pid),
            };
            out.accept();
            self.pending.issue(event, sector, out);
        } else {
            let sector = range.map(|(s, _)| s).unwrap_or(0);
            if self.pending.complete(device, op, sector, time_nanos, out) {
                out.accept();
            } else {
                out.ignore();
            }
        }
        Ok(())
    }
}

fn parse_sector(field: &str) -> Result<u64, String> {
    field
        .parse::<u64>()
        .map_err(|_| format!("sector field {field:?} is not a number"))
}

/// blkparse's per-CPU and total summaries start with `CPU0 (8,0):` and `Total (8,0):`.
fn is_summary(line: &str) -> bool {
    let line = line.trim_start();
    (line.starts_with("CPU") || line.starts_with("Total (")) && line.trim_end().ends_with("):")
}

impl LineFormat for Blkparse {
    fn name(&self) -> &'static str {
        "blkparse"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        let line = match utf8(text) {
            Ok(l) => l,
            Err(why) => return out.skip(line_no, why),
        };
        if line.trim().is_empty() {
            return out.ignore();
        }
        if is_summary(line) {
            return out.stop();
        }
        if let Err(why) = self.parse(line, out) {
            out.skip(line_no, why);
        }
    }

    fn finish(&mut self, out: &mut Out) {
        self.pending.flush(out);
    }
}
