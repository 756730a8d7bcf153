//! Text lines from tracefs (`trace_pipe` or `trace`) with the kernel's block events:
//! `fio-1234 [001] ..... 123.456789: block_rq_issue: 7,0 WS 4096 () 2048 + 8 be,0,4 [fio]` and
//! `block_rq_complete: 7,0 WS () 2048 + 8 be,0,4 [0]`.
//!
//! Kernels differ in the event text: since 6.10 an `ioprio` field (`be,0,4`) follows the range;
//! older kernels print `7,0 WS 4096 () 2048 + 8 [fio]`, and the flags column (`.....`) is
//! missing or shorter on old kernels and with some options. The decoder finds the range by its
//! ` + ` and ignores the fields around it, so all these variants read the same.
//!
//! The request is `block_rq_issue` by default, or `block_bio_queue` with `--action Q`.
//! Requests take their latency from `block_rq_complete` by device and start sector; bios from
//! `block_bio_complete` (or `block_rq_complete`) by device and **end** sector, because a bio's
//! completion prints what is left of its iterator: the remainder after a stacked device (dm, md)
//! split it (`R 64 + 64` for a queued `R 0 + 128` cut at a 32 KiB cache block), or nothing at
//! its end sector once a request-based driver or bcache consumed it (`W 2048 + 0`); the end is
//! the one sector all three share. Flushes complete in order. `block_rq_requeue` withdraws the
//! pending issue it matches, since the request is issued again. Times are seconds since boot; `time_nanos` counts from the first
//! request. `CPU:N [LOST M EVENTS]` lines add to the header's dropped-event count. Comment
//! lines (`#`, the header of the `trace` file) and other events are ignored.

use super::text::{
    op_from_rwbs, op_with_range, parse_seconds_nanos, sectors_to_len_bytes,
    sectors_to_offset_bytes, utf8, ActionFormat, Clock, LineFormat, Out, Pending,
};
use super::Action;
use crate::event::{IoEvent, Op};

pub struct Tracefs {
    request_events: [&'static str; 1],
    complete_events: &'static [&'static str],
    /// The other `--action`'s request event.
    other_request: &'static str,
    clock: Clock,
    pending: Pending,
}

/// One parsed line.
struct TraceLine<'a> {
    pid: Option<u32>,
    time_nanos: u64,
    event: &'a str,
    data: &'a str,
}

impl Tracefs {
    pub fn new(action: Action) -> Tracefs {
        let (request_events, complete_events): (_, &'static [&'static str]) = match action {
            // A bio's completion on a request-based disk prints its consumed iterator (the end
            // sector, no length), never a request's start: it cannot complete a request.
            Action::Issue => (["block_rq_issue"], &["block_rq_complete"]),
            Action::Queue => (
                ["block_bio_queue"],
                &["block_rq_complete", "block_bio_complete"],
            ),
        };
        Tracefs {
            request_events,
            complete_events,
            other_request: <Tracefs as ActionFormat>::request_names(action).1,
            clock: Clock,
            pending: Pending::new(action),
        }
    }

    fn handle(&mut self, line: &str, out: &mut Out) -> Result<(), String> {
        let t = split_line(line)?;
        out.saw_header = true;
        let is_request = self.request_events.contains(&t.event);
        // A requeued request is issued again; only the issue side has to undo it.
        let is_requeue = t.event == "block_rq_requeue" && self.request_events == ["block_rq_issue"];
        if !is_request && !is_requeue && !self.complete_events.contains(&t.event) {
            if t.event == self.other_request {
                self.pending.other_request();
            }
            out.ignore();
            return Ok(());
        }
        let mut tokens = t.data.split_whitespace();
        let dev = tokens.next().ok_or("no device field")?;
        let (major, minor) = dev
            .split_once(',')
            .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
            .ok_or_else(|| format!("device {dev:?} is not major,minor"))?;
        let rwbs = tokens.next().ok_or("no RWBS field")?;
        let op = op_from_rwbs(rwbs).ok_or_else(|| format!("RWBS {rwbs:?} is not an RWBS field"))?;
        // The range is `sector + sectors`; find it by its `+` (the fields before it vary).
        let mut prev = "";
        let mut range = None;
        while let Some(tok) = tokens.next() {
            if tok == "+" {
                let n = tokens.next().ok_or("no sector count after `+`")?;
                let sector = prev
                    .parse::<u64>()
                    .map_err(|_| format!("sector {prev:?} is not a number"))?;
                let sectors = n
                    .parse::<u64>()
                    .map_err(|_| format!("sector count {n:?} is not a number"))?;
                range = Some((sector, sectors));
                break;
            }
            prev = tok;
        }
        let op = op_with_range(op, rwbs, range.map_or(0, |(_, n)| n));
        let time_nanos = self.clock.absolute_nanos(t.time_nanos, 1, out, |_| None);
        let device = out.device_by_dev_t(major, minor)?;
        if is_request {
            let (sector, sectors) = match (range, op) {
                (_, Op::Flush) => (0, 0),
                (Some(r), _) => r,
                (None, _) => return Err(format!("{} has no `sector + sectors` range", t.event)),
            };
            let event = IoEvent {
                time_nanos,
                device,
                offset_bytes: sectors_to_offset_bytes(sector)?,
                len_bytes: sectors_to_len_bytes(sectors)?,
                op,
                latency_nanos: None,
                pid: t.pid,
            };
            out.accept();
            self.pending.issue(event, sector, sectors, out);
        } else if is_requeue {
            let sector = range.map(|(s, _)| s).unwrap_or(0);
            if self.pending.requeue(device, op, sector, out) {
                out.accept();
            } else {
                out.ignore();
            }
        } else if self.pending.complete(device, op, range, time_nanos, out) {
            out.accept();
        } else {
            out.ignore();
        }
        Ok(())
    }
}

/// Splits `TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: DATA`.
fn split_line(line: &str) -> Result<TraceLine<'_>, String> {
    // The CPU column `[001]` follows the task; task names may contain spaces and brackets, so
    // take the last `[digits]` before the first `: `.
    let colon = line.find(": ").ok_or("no `TIMESTAMP: EVENT:` part")?;
    let head = &line[..colon];
    let mut cpu_at = None;
    let mut search = head;
    while let Some(open) = search.rfind('[') {
        let after = &search[open + 1..];
        if let Some(close) = after.find(']') {
            if close > 0 && after[..close].bytes().all(|b| b.is_ascii_digit()) {
                cpu_at = Some((open, open + 1 + close + 1));
                break;
            }
        }
        search = &search[..open];
    }
    let (open, close) = cpu_at.ok_or("no `[CPU]` column")?;
    let task = head[..open].trim_end();
    let pid = task
        .rsplit_once('-')
        .and_then(|(_, p)| p.parse::<u32>().ok());
    let ts = head[close..]
        .split_whitespace()
        .last()
        .ok_or("no timestamp")?;
    let time_nanos =
        parse_seconds_nanos(ts).ok_or_else(|| format!("timestamp {ts:?} is not seconds"))?;
    let rest = &line[colon + 2..];
    let (event, data) = rest
        .split_once(": ")
        .unwrap_or((rest.trim_end_matches(':'), ""));
    if event.is_empty()
        || !event
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return Err(format!("event name {event:?} is not an event name"));
    }
    Ok(TraceLine {
        pid,
        time_nanos,
        event,
        data,
    })
}

/// `CPU:1 [LOST 123 EVENTS]` from trace_pipe after a ring-buffer overrun.
fn lost_events(line: &str) -> Option<u64> {
    let rest = line.trim().strip_prefix("CPU:")?;
    let (_, rest) = rest.split_once("[LOST ")?;
    rest.strip_suffix(" EVENTS]")?.trim().parse().ok()
}

impl ActionFormat for Tracefs {
    const REQUEST_NAMES: [&'static str; 2] = ["block_rq_issue", "block_bio_queue"];

    fn with_action(action: Action) -> Tracefs {
        Tracefs::new(action)
    }

    fn request_action_of(line: &[u8]) -> Option<Action> {
        let line = std::str::from_utf8(line).ok()?;
        if line.contains(": block_rq_issue: ") {
            Some(Action::Issue)
        } else if line.contains(": block_bio_queue: ") {
            Some(Action::Queue)
        } else {
            None
        }
    }
}

impl LineFormat for Tracefs {
    fn name(&self) -> &'static str {
        "tracefs"
    }

    fn line(&mut self, line_no: u64, text: &[u8], out: &mut Out) {
        let line = match utf8(text) {
            Ok(l) => l,
            Err(why) => return out.skip(line_no, why),
        };
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return out.ignore();
        }
        if let Some(lost) = lost_events(trimmed) {
            out.header.dropped_events += lost;
            return out.ignore();
        }
        if let Err(why) = self.handle(line, out) {
            out.skip(line_no, why);
        }
    }

    fn finish(&mut self, out: &mut Out) {
        self.pending
            .finish("tracefs", self.request_events[0], self.other_request, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::text::TextDecoder;
    use crate::decode::{decode_chunked, Decoded};

    fn decode(action: Action, input: &str) -> Decoded {
        let one = decode_chunked(
            TextDecoder::new(Tracefs::new(action)),
            input.as_bytes(),
            usize::MAX,
        )
        .expect("decodes");
        assert_eq!(
            one,
            decode_chunked(TextDecoder::new(Tracefs::new(action)), input.as_bytes(), 1)
                .expect("decodes")
        );
        one
    }

    #[test]
    fn new_and_old_kernel_lines_read_the_same() {
        let new = "fio-1234 [001] ..... 10.000001: block_rq_issue: 7,0 WS 4096 () 2048 + 8 be,0,4 [fio]\n\
                   ksoftirqd/0-14 [000] ..s.. 10.000051: block_rq_complete: 7,0 WS () 2048 + 8 be,0,4 [0]\n";
        let old = "fio-1234 [001] d..1 10.000001: block_rq_issue: 7,0 WS 4096 () 2048 + 8 [fio]\n\
                   <idle>-0 [000] 10.000051: block_rq_complete: 7,0 WS () 2048 + 8 [0]\n";
        let (a, b) = (decode(Action::Issue, new), decode(Action::Issue, old));
        assert_eq!(a.events, b.events);
        assert_eq!(a.events[0].latency_nanos, Some(50_000));
        assert_eq!(a.events[0].pid, Some(1234));
        assert_eq!(a.events[0].offset_bytes, 2048 * 512);
    }

    #[test]
    fn a_requeued_request_counts_once() {
        let input = "fio-1 [000] 1.000000: block_rq_issue: 8,0 W 4096 () 64 + 8 [fio]\n\
                     kworker-9 [000] 1.000005: block_rq_requeue: 8,0 W () 64 + 8 [0]\n\
                     kworker-9 [000] 1.000020: block_rq_issue: 8,0 W 4096 () 64 + 8 [kworker]\n\
                     <idle>-0 [000] 1.000100: block_rq_complete: 8,0 W () 64 + 8 [0]\n";
        let d = decode(Action::Issue, input);
        assert_eq!(d.events.len(), 1);
        // The withdrawn first issue is no record: time counts from the re-issue, the earliest
        // record (decode::order).
        assert_eq!(d.events[0].time_nanos, 0);
        assert_eq!(d.events[0].latency_nanos, Some(80_000));
    }

    #[test]
    fn lost_events_are_counted_as_dropped() {
        let d = decode(Action::Issue, "CPU:0 [LOST 17 EVENTS]\nCPU:1 [LOST 3 EVENTS]\nfio-1 [000] 1.0: block_rq_issue: 8,0 R 512 () 0 + 1 [fio]\n");
        assert_eq!(d.header.dropped_events, 20);
        assert_eq!(d.events.len(), 1);
    }

    #[test]
    fn bio_queue_is_the_request_with_action_q() {
        let input = "fio-1 [000] 1.000000: block_bio_queue: 8,0 W 64 + 8 [fio]\n\
                     fio-1 [000] 1.000010: block_rq_issue: 8,0 W 4096 () 64 + 8 [fio]\n\
                     <idle>-0 [000] 1.000100: block_rq_complete: 8,0 W () 64 + 8 [0]\n";
        let q = decode(Action::Queue, input);
        assert_eq!(q.events.len(), 1);
        assert_eq!(q.events[0].latency_nanos, Some(100_000));
        let d = decode(Action::Issue, input);
        assert_eq!(d.events[0].latency_nanos, Some(90_000));
    }

    /// dm-cache cut each 64 KiB bio at its 32 KiB blocks; the completion names the remainder
    /// (lab run `dmc-wt32k-64m-scan-then-z12`). Matched by start sector, the first bio took a
    /// later 4 KiB read's completion at its sector, seconds later, and that read none.
    #[test]
    fn a_split_bio_completes_by_its_end_sector() {
        let input = "fio-1 [000] 1.000000: block_bio_queue: 252,3 R 0 + 128 [fio]\n\
                     fio-1 [000] 1.000010: block_bio_queue: 252,3 R 128 + 128 [fio]\n\
                     <idle>-0 [001] 1.000200: block_bio_complete: 252,3 R 64 + 64 [0]\n\
                     <idle>-0 [001] 1.000300: block_bio_complete: 252,3 R 192 + 64 [0]\n\
                     fio-1 [000] 2.000000: block_bio_queue: 252,3 R 0 + 8 [fio]\n\
                     <idle>-0 [001] 2.000050: block_bio_complete: 252,3 R 0 + 8 [0]\n";
        let d = decode(Action::Queue, input);
        let latencies: Vec<_> = d.events.iter().map(|e| e.latency_nanos).collect();
        assert_eq!(latencies, [Some(200_000), Some(290_000), Some(50_000)]);
    }

    /// A dm device's trace (bios only) read as requests names the action to use, and the other
    /// way round; a trace with both is read without complaint.
    #[test]
    fn a_trace_of_the_other_action_says_which_to_use() {
        let bios = "fio-1 [000] 1.000000: block_bio_queue: 252,3 R 0 + 8 [fio]\n\
                    <idle>-0 [001] 1.000200: block_bio_complete: 252,3 R 0 + 8 [0]\n";
        let run = |action, input: &str| {
            decode_chunked(TextDecoder::new(Tracefs::new(action)), input.as_bytes(), 5)
        };
        let e = run(Action::Issue, bios)
            .expect_err("no requests")
            .to_string();
        assert!(e.contains("no block_rq_issue record"), "{e}");
        assert!(
            e.contains("1 block_bio_queue records") && e.contains("--action Q"),
            "{e}"
        );
        let rqs = "fio-1 [000] 1.0: block_rq_issue: 8,0 R 4096 () 0 + 8 [fio]\n";
        let e = run(Action::Queue, rqs).expect_err("no bios").to_string();
        assert!(e.contains("--action D"), "{e}");
        let both = format!("{rqs}{bios}");
        assert_eq!(run(Action::Issue, &both).expect("decodes").events.len(), 1);
    }

    /// With no `--action` the trace chooses: bios when it has no issue (a dm device, with a
    /// note), requests as soon as an issue line comes, however many bios were queued before it;
    /// the same events as the explicit action either way, in any chunking.
    #[test]
    fn without_an_action_a_trace_of_bios_is_read_as_bios() {
        use crate::decode::text::{AutoAction, AUTO_ACTION_QUEUE_LINES};
        let auto = |input: &str, chunk| {
            decode_chunked(
                TextDecoder::new(AutoAction::<Tracefs>::new()),
                input.as_bytes(),
                chunk,
            )
            .expect("decodes")
        };
        let bios = "fio-1 [000] 1.000000: block_bio_queue: 252,3 R 0 + 128 [fio]\n\
                    fio-1 [000] 1.000010: block_bio_queue: 252,3 W 512 + 8 [fio]\n\
                    <idle>-0 [001] 1.000200: block_bio_complete: 252,3 R 64 + 64 [0]\n\
                    <idle>-0 [001] 1.000300: block_bio_complete: 252,3 W 512 + 8 [0]\n";
        let d = auto(bios, usize::MAX);
        assert_eq!(d, auto(bios, 1));
        let explicit = decode(Action::Queue, bios);
        assert_eq!(d.events, explicit.events);
        assert_eq!(d.events.len(), 2);
        assert_eq!(d.events[0].latency_nanos, Some(200_000));
        assert_eq!(
            d.diagnostics.notes,
            vec![
                "no block_rq_issue record, so each block_bio_queue record is a request (the bios \
                 of a device without requests of its own: dm, md, bcache); --action D or Q chooses"
                    .to_string()
            ]
        );
        assert!(explicit.diagnostics.notes.is_empty());
        // A request-based disk: its bios are queued first, then the requests issued.
        let mut disk = String::new();
        for i in 0..40u64 {
            disk.push_str(&format!(
                "fio-1 [000] 2.{:06}: block_bio_queue: 8,0 W {} + 8 [fio]\n",
                i,
                i * 8
            ));
        }
        disk.push_str("fio-1 [000] 2.000100: block_rq_issue: 8,0 W 163840 () 0 + 320 [fio]\n");
        disk.push_str("<idle>-0 [000] 2.000500: block_rq_complete: 8,0 W () 0 + 320 [0]\n");
        let d = auto(&disk, usize::MAX);
        assert_eq!(d, auto(&disk, 7));
        assert_eq!(d.events, decode(Action::Issue, &disk).events);
        assert_eq!(d.events.len(), 1);
        assert!(d.diagnostics.notes.is_empty());
        // Past the threshold with no issue in sight the bios are the requests.
        let many: String = (0..AUTO_ACTION_QUEUE_LINES + 5)
            .map(|i| {
                format!(
                    "fio-1 [000] 3.000000: block_bio_queue: 252,3 R {} + 8 [fio]\n",
                    i * 8
                )
            })
            .collect();
        let d = auto(&many, usize::MAX);
        assert_eq!(d.events.len() as u64, AUTO_ACTION_QUEUE_LINES + 5);
        assert_eq!(d.diagnostics.notes.len(), 1);
    }

    /// A bio a request-based driver (or bcache) consumed completes with no length at its end.
    #[test]
    fn a_consumed_bio_completes_at_its_end_sector() {
        let input = "fio-1 [000] 1.000000: block_bio_queue: 8,0 W 2048 + 8 [fio]\n\
                     <idle>-0 [000] 1.000100: block_bio_complete: 8,0 W 2056 + 0 [0]\n";
        let d = decode(Action::Queue, input);
        assert_eq!(d.events.len(), 1);
        assert_eq!(d.events[0].op, Op::Write);
        assert_eq!(d.events[0].latency_nanos, Some(100_000));
    }

    /// Requests complete by `block_rq_complete` alone: a bio's completion at a sector where
    /// another request starts is not that request's.
    #[test]
    fn a_bio_completion_never_completes_a_request() {
        let input = "fio-1 [000] 1.000000: block_rq_issue: 8,0 W 4096 () 64 + 8 [fio]\n\
                     fio-1 [000] 1.000001: block_rq_issue: 8,0 W 4096 () 72 + 8 [fio]\n\
                     <idle>-0 [000] 1.000050: block_bio_complete: 8,0 W 72 + 0 [0]\n\
                     <idle>-0 [000] 1.000060: block_rq_complete: 8,0 W () 64 + 8 [0]\n\
                     <idle>-0 [000] 1.000081: block_rq_complete: 8,0 W () 72 + 8 [0]\n";
        let d = decode(Action::Issue, input);
        let latencies: Vec<_> = d.events.iter().map(|e| e.latency_nanos).collect();
        assert_eq!(latencies, [Some(60_000), Some(80_000)]);
    }

    #[test]
    fn task_names_with_spaces_and_brackets() {
        let d = decode(
            Action::Issue,
            "Web [Content]-77 [003] .... 5.5: block_rq_issue: 8,0 R 4096 () 8 + 8 [Web Content]\n",
        );
        assert_eq!(d.events[0].pid, Some(77));
        assert_eq!(d.diagnostics.skipped_records, 0);
    }
}
