//! blkparse's default text output, one trace action per line:
//! `  8,0    1        1     0.000000000  1234  D   W 2048 + 8 [fio]`
//! (device `major,minor`, CPU, sequence, seconds since the trace start, PID, action, RWBS, then
//! `sector + sectors [process]`, or `[error]` for completions).
//!
//! The request is the `D` (issue) line by default or the `Q` (queue) line
//! ([`DecodeOptions::action`](super::DecodeOptions)); `C` lines complete the oldest pending
//! request with the same device and start sector and give its latency (flushes complete in
//! order). With `Q` the match is by **end** sector: a bio's `C` prints what is left of it, the
//! remainder after a stacked device split it or nothing at its end once consumed (see
//! `decode::tracefs`), and a request's `C` ends where its last bio ends. An `R` (requeue) line withdraws the pending issue it matches, since the request is
//! issued again. Other actions are counted as ignored. Sectors are 512 bytes. The summary blkparse
//! prints at the end (`CPU0 (8,0):`, `Total (8,0):`) ends the events without errors.

use super::text::{
    op_from_rwbs, op_with_range, parse_seconds_nanos, sectors_to_len_bytes,
    sectors_to_offset_bytes, utf8, ActionFormat, LineFormat, Out, Pending,
};
use super::Action;
use crate::event::{IoEvent, Op};

pub struct Blkparse {
    request_action: &'static str,
    /// The other `--action`'s request action.
    other_action: &'static str,
    pending: Pending,
}

impl Blkparse {
    pub fn new(action: Action) -> Blkparse {
        let (request_action, other_action) = <Blkparse as ActionFormat>::request_names(action);
        Blkparse {
            request_action,
            other_action,
            pending: Pending::new(action),
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
        // A requeue (`R`) undoes an issue; with `Q` as the request it does not matter.
        let is_requeue = action == "R" && self.request_action == "D";
        if action == self.other_action {
            self.pending.other_request();
        }
        if !is_request && action != "C" && !is_requeue {
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
        let device = out.device_by_dev_t(major, minor)?;
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

impl ActionFormat for Blkparse {
    const REQUEST_NAMES: [&'static str; 2] = ["D", "Q"];

    fn with_action(action: Action) -> Blkparse {
        Blkparse::new(action)
    }

    /// The action is the sixth field: `8,0 1 1 0.000000000 1234 Q WS 123 + 8 [fio]`.
    fn request_action_of(line: &[u8]) -> Option<Action> {
        match line
            .split(u8::is_ascii_whitespace)
            .filter(|f| !f.is_empty())
            .nth(5)?
        {
            b"D" => Some(Action::Issue),
            b"Q" => Some(Action::Queue),
            _ => None,
        }
    }
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
        // Blank lines and `#` comments (docs/formats.md) are not records.
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
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
        self.pending
            .finish("blkparse", self.request_action, self.other_action, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::text::{TextDecoder, MAX_PENDING};
    use crate::decode::{decode_chunked, Decoded};

    fn decode(action: Action, input: &str) -> Decoded {
        let one = decode_chunked(
            TextDecoder::new(Blkparse::new(action)),
            input.as_bytes(),
            usize::MAX,
        )
        .expect("decodes");
        let seven = decode_chunked(TextDecoder::new(Blkparse::new(action)), input.as_bytes(), 7)
            .expect("decodes");
        assert_eq!(one, seven);
        one
    }

    const LINES: &str = "  8,0    1        1     0.000000000  1234  Q   W 2048 + 8 [fio]\n\
                         \x20 8,0    1        2     0.000001000  1234  G   W 2048 + 8 [fio]\n\
                         \x20 8,0    1        3     0.000002000  1234  D   W 2048 + 8 [fio]\n\
                         \x20 8,0    1        4     0.000003000  1234  D   R 4096 + 16 [fio]\n\
                         \x20 8,0    0        5     0.000010000     0  C   R 4096 + 16 [0]\n\
                         \x20 8,0    0        6     0.000012000     0  C   W 2048 + 8 [0]\n\
                         \x20 8,0    1        7     0.000013000   99  D  FN [kworker]\n\
                         \x20 8,0    0        8     0.000020000     0  C  FN 0 [0]\n\
                         CPU1 (8,0):\n Reads Queued:           0,        0KiB\n";

    /// With no `--action`, a blkparse trace of a dm device (only `Q` and `C`) is read as bios,
    /// with a note; one with `D` lines as requests.
    #[test]
    fn without_an_action_the_trace_chooses() {
        use crate::decode::text::AutoAction;
        let auto = |input: &str, chunk| {
            decode_chunked(
                TextDecoder::new(AutoAction::<Blkparse>::new()),
                input.as_bytes(),
                chunk,
            )
            .expect("decodes")
        };
        let dm = "252,3 0 1 0.000000000 100 Q R 0 + 128 [fio]\n\
                  252,3 1 2 0.000200000 0 C R 64 + 64 [0]\n";
        let d = auto(dm, usize::MAX);
        assert_eq!(d, auto(dm, 1));
        assert_eq!(d.events, decode(Action::Queue, dm).events);
        assert_eq!(d.events[0].latency_nanos, Some(200_000));
        assert!(
            d.diagnostics.notes[0].contains("no D record"),
            "{:?}",
            d.diagnostics.notes
        );
        let disk = "8,0 0 1 0.000000000 100 Q W 0 + 8 [fio]\n\
                    8,0 0 2 0.000010000 100 D W 0 + 8 [fio]\n\
                    8,0 0 3 0.000300000 0 C W 0 + 8 [0]\n";
        let d = auto(disk, 3);
        assert_eq!(d.events, decode(Action::Issue, disk).events);
        assert!(d.diagnostics.notes.is_empty());
    }

    #[test]
    fn comment_lines_are_ignored_not_skipped() {
        // Regression (issue 14.4): `#` lines were skipped as bad records with a warning.
        let input = format!("# blkparse -i sda\n  # another comment\n{LINES}");
        let d = decode(Action::Issue, &input);
        assert_eq!(
            d.diagnostics.skipped_records, 0,
            "{:?}",
            d.diagnostics.reasons
        );
        assert_eq!(d.events.len(), 3);
        let plain = decode(Action::Issue, LINES);
        assert_eq!(d.events, plain.events);
        assert_eq!(
            d.diagnostics.ignored_records,
            plain.diagnostics.ignored_records + 2
        );
    }

    #[test]
    fn issue_lines_get_latency_from_completions() {
        let d = decode(Action::Issue, LINES);
        let got: Vec<(u64, u64, u32, Op, Option<u64>)> = d
            .events
            .iter()
            .map(|e| {
                (
                    e.time_nanos,
                    e.offset_bytes,
                    e.len_bytes,
                    e.op,
                    e.latency_nanos,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (2000, 2048 * 512, 4096, Op::Write, Some(10_000)),
                (3000, 4096 * 512, 8192, Op::Read, Some(7000)),
                (13_000, 0, 0, Op::Flush, Some(7000)),
            ]
        );
        assert_eq!(d.header.devices[0].dev_t(), Some((8, 0)));
        // Q and G are ignored; the summary after `CPU1 (8,0):` is not read at all.
        assert_eq!(d.diagnostics.ignored_records, 2);
        assert_eq!(d.diagnostics.skipped_records, 0);
    }

    /// An md device's trace has only `Q` and `C`: read with `D` it names `--action Q`.
    #[test]
    fn a_trace_without_issues_says_to_use_queue() {
        let input =
            "9,0 0 1 0.000001000 7 Q W 64 + 8 [fio]\n9,0 0 2 0.000201000 0 C W 64 + 8 [0]\n\
                     CPU0 (9,0):\n Reads Queued: 0\n";
        let e = decode_chunked(
            TextDecoder::new(Blkparse::new(Action::Issue)),
            input.as_bytes(),
            3,
        )
        .expect_err("no D lines")
        .to_string();
        assert!(e.contains("no D record") && e.contains("--action Q"), "{e}");
    }

    /// With `Q`, a bio split by a stacked device completes its remainder (`C R 64 + 64` for
    /// `Q R 0 + 128`); matched by end sector, a later bio at the same start keeps its own.
    #[test]
    fn queued_bios_complete_by_their_end_sector() {
        let d = decode(
            Action::Queue,
            "252,3 0 1 0.000001000 7 Q R 0 + 128 [fio]\n252,3 0 2 0.000201000 0 C R 64 + 64 [0]\n\
             252,3 0 3 1.000000000 7 Q R 0 + 8 [fio]\n252,3 0 4 1.000050000 0 C R 0 + 8 [0]\n",
        );
        let latencies: Vec<_> = d.events.iter().map(|e| e.latency_nanos).collect();
        assert_eq!(latencies, [Some(200_000), Some(50_000)]);
    }

    #[test]
    fn a_requeued_request_counts_once() {
        let d = decode(
            Action::Issue,
            "  8,0 0 1 0.000001000 7 D W 64 + 8 [x]\n  8,0 0 2 0.000002000 7 R W 64 + 8 [0]\n\
             \x20 8,0 0 3 0.000004000 7 D W 64 + 8 [x]\n  8,0 0 4 0.000009000 0 C W 64 + 8 [0]\n",
        );
        assert_eq!(d.events.len(), 1);
        assert_eq!(d.events[0].time_nanos, 4000);
        assert_eq!(d.events[0].latency_nanos, Some(5000));
    }

    #[test]
    fn queue_action_counts_from_queueing() {
        let d = decode(Action::Queue, LINES);
        assert_eq!(d.events.len(), 1);
        assert_eq!(d.events[0].time_nanos, 0);
        assert_eq!(d.events[0].latency_nanos, Some(12_000));
    }

    #[test]
    fn missing_completions_keep_memory_bounded() {
        let mut input = String::new();
        let n = MAX_PENDING + 100;
        for i in 0..n {
            input.push_str(&format!("  8,0 0 {i} 0.{i:09} 1 D W {} + 8 [x]\n", i * 8));
        }
        let d = decode(Action::Issue, &input);
        assert_eq!(d.events.len(), n);
        assert!(d.events.iter().all(|e| e.latency_nanos.is_none()));
        assert!(d
            .events
            .windows(2)
            .all(|w| w[0].time_nanos < w[1].time_nanos));
    }

    #[test]
    fn bad_lines_are_skipped_with_their_line_number() {
        let d = decode(Action::Issue, "  8,0 0 1 0.1 1 D W 8 + 8 [x]\n  8,0 0 2 zero 1 D W 8 + 8 [x]\n  8,0 0 3 0.3 1 D W 8\n");
        assert_eq!(d.events.len(), 1);
        assert_eq!(
            d.diagnostics.reasons,
            vec![
                "line 2: time \"zero\" is not seconds".to_string(),
                "line 3: D W line has no `sector + sectors` range".to_string()
            ]
        );
    }

    /// What a random blkparse line does, on one device: a `D` issue, `C` completion or `R`
    /// requeue of one of four sectors, some microseconds after the line before.
    #[derive(Clone, Debug)]
    enum Line {
        Issue(u8, bool, u64),
        Complete(u8, bool, u64),
        Requeue(u8, bool, u64),
    }

    fn lines() -> impl proptest::strategy::Strategy<Value = Vec<Line>> {
        use proptest::prelude::*;
        let line = prop_oneof![
            3 => (0u8..4, any::<bool>(), 0u64..50).prop_map(|(k, w, dt)| Line::Issue(k, w, dt)),
            3 => (0u8..4, any::<bool>(), 0u64..50).prop_map(|(k, w, dt)| Line::Complete(k, w, dt)),
            1 => (0u8..4, any::<bool>(), 0u64..50).prop_map(|(k, w, dt)| Line::Requeue(k, w, dt)),
        ];
        prop::collection::vec(line, 0..120)
    }

    proptest::proptest! {
        /// The decoder pairs lines exactly as the brute-force reference matcher does (oldest
        /// first by device and sector, requeues drop the oldest), whatever the chunking.
        #[test]
        fn pairs_like_the_reference_matcher_in_tiny_chunks(
            lines in lines(),
            chunks in proptest::collection::vec(1usize..8, 1..16),
        ) {
            use crate::decode::pending::reference::Reference;
            use crate::decode::pending::{MatchRule, PendingConfig, Pick, Withdrawal};
            use crate::decode::text::MAX_PENDING_AGE_NANOS;
            use crate::decode::Decoder as _;
            let mut reference = Reference::new(PendingConfig {
                rule: MatchRule::Oldest,
                max_pending: MAX_PENDING,
                timeout_nanos: MAX_PENDING_AGE_NANOS,
                max_orphans: 0,
                orphan_nanos: 0,
            });
            let mut text = String::new();
            let mut expected = Vec::new();
            let (mut micros, mut item) = (0u64, 0u32);
            for (seq, line) in lines.iter().enumerate() {
                let (action, key, write, dt) = match *line {
                    Line::Issue(k, w, dt) => ("D", k, w, dt),
                    Line::Complete(k, w, dt) => ("C", k, w, dt),
                    Line::Requeue(k, w, dt) => ("R", k, w, dt),
                };
                micros += dt;
                let sector = 2048 + u64::from(key) * 8;
                text.push_str(&format!(
                    "  8,0    0 {:8} {:5}.{:09} 1234  {action}   {} {sector} + 8 [fio]\n",
                    seq + 1,
                    micros / 1_000_000,
                    (micros % 1_000_000) * 1000,
                    if write { "W" } else { "R" },
                ));
                let t = micros * 1000;
                match action {
                    "D" => {
                        item += 1;
                        reference.issue(key, t, item);
                    }
                    "C" => {
                        reference.complete(key, t);
                    }
                    _ => {
                        reference.withdraw(key, Pick::Oldest, Withdrawal::Drop);
                    }
                }
                while let Some(r) = reference.pop(false) {
                    expected.push(r);
                }
            }
            while let Some(r) = reference.pop(true) {
                expected.push(r);
            }
            // Item n is the n-th `D` line: its time and its sector.
            let issues: Vec<(u64, u64)> = lines
                .iter()
                .scan(0u64, |micros, l| {
                    let (dt, issue) = match *l {
                        Line::Issue(k, _, dt) => (dt, Some(k)),
                        Line::Complete(_, _, dt) | Line::Requeue(_, _, dt) => (dt, None),
                    };
                    *micros += dt;
                    Some(issue.map(|k| (*micros * 1000, (2048 + u64::from(k) * 8) * 512)))
                })
                .flatten()
                .collect();
            let want: Vec<(u64, u64, Option<u64>)> = expected
                .iter()
                .map(|&(n, latency)| {
                    let (t, offset) = issues[n as usize - 1];
                    (t, offset, latency)
                })
                .collect();

            let one = decode_chunked(
                TextDecoder::new(Blkparse::new(Action::Issue)),
                text.as_bytes(),
                usize::MAX,
            )
            .expect("decodes");
            let got: Vec<(u64, u64, Option<u64>)> = one
                .events
                .iter()
                .map(|e| (e.time_nanos, e.offset_bytes, e.latency_nanos))
                .collect();
            proptest::prop_assert_eq!(&got, &want);

            let mut d = TextDecoder::new(Blkparse::new(Action::Issue));
            let mut events = Vec::new();
            let (mut at, mut i) = (0, 0);
            let bytes = text.as_bytes();
            while at < bytes.len() {
                let n = chunks[i % chunks.len()].min(bytes.len() - at);
                d.push(&bytes[at..at + n]);
                at += n;
                i += 1;
                while let Some(e) = d.next_event().expect("decodes") {
                    events.push(e);
                }
            }
            d.finish();
            while let Some(e) = d.next_event().expect("decodes") {
                events.push(e);
            }
            proptest::prop_assert_eq!(&events, &one.events);
            proptest::prop_assert_eq!(d.diagnostics(), &one.diagnostics);
        }
    }
}
