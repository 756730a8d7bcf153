//! Decodes one page of the kernel's per-CPU ring buffer as `trace_pipe_raw` hands it out.
//!
//! Layout (see `events/header_page` and `events/header_event`): a page header of a u64
//! timestamp and a u64 `commit` (bytes of data used; bit 31 flags events lost before this page,
//! bit 30 that the lost count is stored as a u64 right after the data), then events. Each event
//! starts with a u32 whose low 5 bits are `type_len` and high 27 bits a time delta:
//! `type_len` 1..=28 means a payload of `type_len * 4` bytes follows; 0 means the next u32 is
//! the length (including itself) and the payload follows it; 29 is padding (a discarded event,
//! or with delta 0 the unused end of the page); 30 extends the time delta by `array[0] << 27`;
//! 31 is an absolute time stamp. Only little-endian hosts are supported (the collector runs on
//! the machine it traces, and tracefs pages are in host order).

/// Flags in the page's `commit` word.
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
const PAGE_HEADER_BYTES: usize = 16;
const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
const TS_SHIFT: u32 = 27;
/// Absolute time stamps keep the low 59 bits; the rest comes from the running time.
const ABS_TS_MASK: u64 = (1 << 59) - 1;

/// What a page said besides its events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageSummary {
    /// Events that carried a payload.
    pub events: usize,
    /// The kernel dropped events before this page (overrun or full buffer).
    pub lost_before: bool,
    /// How many, when the kernel stored the count.
    pub lost_count: u64,
}

/// Malformed page: where and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageError {
    pub offset: usize,
    pub what: &'static str,
}

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ring-buffer page: {} at byte {}", self.what, self.offset)
    }
}

fn u32_at(page: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(page.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(page: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(page.get(at..at + 8)?.try_into().ok()?))
}

/// Walks the events of `page` (exactly the bytes one read of `trace_pipe_raw` returned),
/// calling `on_event(timestamp_nanos, payload)` for each. The payload starts with the event's
/// `common_type`.
pub fn parse_page(
    page: &[u8],
    mut on_event: impl FnMut(u64, &[u8]),
) -> Result<PageSummary, PageError> {
    let bad = |offset, what| PageError { offset, what };
    let mut ts = u64_at(page, 0).ok_or(bad(0, "page shorter than its header"))?;
    let commit_word = u64_at(page, 8).ok_or(bad(8, "page shorter than its header"))?;
    let mut summary = PageSummary {
        lost_before: commit_word & MISSED_EVENTS != 0,
        ..PageSummary::default()
    };
    let commit = (commit_word & !(MISSED_EVENTS | MISSED_STORED)) as usize;
    let end = PAGE_HEADER_BYTES + commit;
    if end > page.len() {
        return Err(bad(8, "commit size larger than the page"));
    }
    if commit_word & MISSED_STORED != 0 {
        summary.lost_count = u64_at(page, end).unwrap_or(0);
    }
    // Events must lie within the committed bytes.
    let page = &page[..end];
    let mut at = PAGE_HEADER_BYTES;
    while at + 4 <= end {
        let word = u32_at(page, at).ok_or(bad(at, "truncated event header"))?;
        let type_len = word & 0x1f;
        let delta = u64::from(word >> 5);
        match type_len {
            TYPE_PADDING => {
                if delta == 0 {
                    break; // The rest of the page is unused.
                }
                let len = u32_at(page, at + 4).ok_or(bad(at, "truncated padding"))? as usize;
                ts = ts.wrapping_add(delta);
                // `array[0]` counts itself and the discarded payload.
                at += 4 + len;
            }
            TYPE_TIME_EXTEND => {
                let high = u64::from(u32_at(page, at + 4).ok_or(bad(at, "truncated time extend"))?);
                ts = ts.wrapping_add((high << TS_SHIFT) + delta);
                at += 8;
            }
            TYPE_TIME_STAMP => {
                let high = u64::from(u32_at(page, at + 4).ok_or(bad(at, "truncated time stamp"))?);
                let abs = ((high << TS_SHIFT) | delta) & ABS_TS_MASK;
                ts = (ts & !ABS_TS_MASK) | abs;
                at += 8;
            }
            0 => {
                let len = u32_at(page, at + 4).ok_or(bad(at, "truncated event length"))? as usize;
                if len < 4 {
                    return Err(bad(at, "event length below 4"));
                }
                let payload = page
                    .get(at + 8..at + 4 + len)
                    .ok_or(bad(at, "event past the commit"))?;
                ts = ts.wrapping_add(delta);
                on_event(ts, payload);
                summary.events += 1;
                at += 4 + ((len + 3) & !3);
            }
            n => {
                let len = n as usize * 4;
                let payload = page
                    .get(at + 4..at + 4 + len)
                    .ok_or(bad(at, "event past the commit"))?;
                ts = ts.wrapping_add(delta);
                on_event(ts, payload);
                summary.events += 1;
                at += 4 + len;
            }
        }
    }
    Ok(summary)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds pages the way the kernel does, for tests here and in the backends.
    #[derive(Default)]
    pub struct PageBuilder {
        pub data: Vec<u8>,
        pub timestamp: u64,
        pub flags: u64,
        pub lost: Option<u64>,
    }

    impl PageBuilder {
        pub fn new(timestamp: u64) -> PageBuilder {
            PageBuilder {
                timestamp,
                ..PageBuilder::default()
            }
        }
        fn header(&mut self, type_len: u32, delta: u32) {
            self.data
                .extend_from_slice(&((delta << 5) | type_len).to_le_bytes());
        }
        /// A data event, using the small form when it fits and the length form otherwise.
        pub fn event(&mut self, delta: u32, payload: &[u8]) -> &mut Self {
            let padded = (payload.len() + 3) & !3;
            if padded <= 28 * 4 && !payload.is_empty() {
                self.header((padded / 4) as u32, delta);
            } else {
                self.header(0, delta);
                self.data
                    .extend_from_slice(&((padded + 4) as u32).to_le_bytes());
            }
            self.data.extend_from_slice(payload);
            self.data
                .resize(self.data.len() + padded - payload.len(), 0);
            self
        }
        pub fn extend(&mut self, delta: u64) -> &mut Self {
            self.header(TYPE_TIME_EXTEND, (delta & ((1 << 27) - 1)) as u32);
            self.data
                .extend_from_slice(&((delta >> 27) as u32).to_le_bytes());
            self
        }
        pub fn padding(&mut self, delta: u32, len: u32) -> &mut Self {
            self.header(TYPE_PADDING, delta);
            // Like the kernel: `len` counts itself and the discarded payload after it.
            self.data.extend_from_slice(&len.to_le_bytes());
            self.data.resize(self.data.len() + len as usize - 4, 0);
            self
        }
        pub fn build(&self, page_bytes: usize) -> Vec<u8> {
            let mut page = Vec::with_capacity(page_bytes);
            page.extend_from_slice(&self.timestamp.to_le_bytes());
            let mut commit = self.data.len() as u64 | self.flags;
            if self.lost.is_some() {
                commit |= MISSED_EVENTS | MISSED_STORED;
            }
            page.extend_from_slice(&commit.to_le_bytes());
            page.extend_from_slice(&self.data);
            if let Some(lost) = self.lost {
                page.extend_from_slice(&lost.to_le_bytes());
            }
            page.resize(page_bytes.max(page.len()), 0);
            page
        }
    }

    fn collect(page: &[u8]) -> (Vec<(u64, Vec<u8>)>, PageSummary) {
        let mut out = Vec::new();
        let s = parse_page(page, |ts, p| out.push((ts, p.to_vec()))).expect("valid page");
        (out, s)
    }

    #[test]
    fn small_and_long_events_with_deltas() {
        let long = vec![7u8; 200];
        let page = PageBuilder::new(1_000)
            .event(5, b"abcd")
            .event(10, &long)
            .event(0, b"xy")
            .build(4096);
        let (events, s) = collect(&page);
        assert_eq!(s.events, 3);
        assert!(!s.lost_before);
        assert_eq!(events[0], (1_005, b"abcd".to_vec()));
        assert_eq!(events[1], (1_015, long));
        assert_eq!(events[2], (1_015, b"xy\0\0".to_vec()));
    }

    #[test]
    fn time_extend_and_padding_advance_the_clock() {
        let page = PageBuilder::new(0)
            .extend(5_000_000_000)
            .event(0, b"aaaa")
            .padding(3, 12)
            .event(1, b"bbbb")
            .build(4096);
        let (events, _) = collect(&page);
        assert_eq!(
            events,
            vec![
                (5_000_000_000, b"aaaa".to_vec()),
                (5_000_000_004, b"bbbb".to_vec())
            ]
        );
    }

    #[test]
    fn null_padding_ends_the_page() {
        let mut b = PageBuilder::new(0);
        b.event(1, b"aaaa");
        b.data.extend_from_slice(&TYPE_PADDING.to_le_bytes());
        b.data.extend_from_slice(&[0; 12]);
        let (events, _) = collect(&b.build(4096));
        assert_eq!(events.len(), 1);
    }

    #[test]
    fn lost_event_flags_and_count() {
        let mut b = PageBuilder::new(0);
        b.event(1, b"aaaa");
        b.lost = Some(42);
        let (_, s) = collect(&b.build(4096));
        assert!(s.lost_before);
        assert_eq!(s.lost_count, 42);
        let mut b = PageBuilder::new(0);
        b.flags = MISSED_EVENTS;
        let (_, s) = collect(&b.build(4096));
        assert!(s.lost_before);
        assert_eq!(s.lost_count, 0);
    }

    #[test]
    fn a_partial_page_read_is_just_shorter() {
        let page = PageBuilder::new(9).event(1, b"aaaa").build(0);
        assert_eq!(page.len(), 16 + 8);
        assert_eq!(collect(&page).0.len(), 1);
    }

    #[test]
    fn corrupt_pages_are_errors_not_panics() {
        let mut page = PageBuilder::new(0).event(1, b"aaaa").build(64);
        page[8..16].copy_from_slice(&5000u64.to_le_bytes());
        assert!(parse_page(&page, |_, _| {}).is_err());
        assert!(parse_page(&page[..10], |_, _| {}).is_err());
        // A length-form event claiming more than the commit.
        let mut b = PageBuilder::new(0);
        b.data.extend_from_slice(&0u32.to_le_bytes());
        b.data.extend_from_slice(&4000u32.to_le_bytes());
        assert!(parse_page(&b.build(4096), |_, _| {}).is_err());
        // Every truncation of a valid page either parses or errors; none panics.
        let page = PageBuilder::new(0)
            .event(1, b"aaaa")
            .extend(1 << 40)
            .event(2, &[1; 150])
            .build(0);
        for cut in 0..page.len() {
            let mut p = page[..cut].to_vec();
            if p.len() >= 16 {
                let commit = (cut - 16) as u64;
                p[8..16].copy_from_slice(&commit.to_le_bytes());
            }
            let _ = parse_page(&p, |_, _| {});
        }
    }
}
