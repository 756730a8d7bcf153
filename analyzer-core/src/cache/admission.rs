//! Admission: which missed lines are allowed into the cache. Products rarely cache every miss:
//! Open CAS can wait for the n-th access (`nhit`), dm-cache's smq promotes blocks in hot
//! regions, bcache bypasses sequential streams. The simulator asks [`AdmissionState`] before
//! every insertion; an unadmitted miss goes to the disks and leaves the cache untouched.
//!
//! Each model keeps a fixed-size table, so memory does not grow with the trace:
//! - n-hit (Open CAS `nhit`, `ocf/src/promotion/nhit/nhit.c`): decided per request. Below
//!   `trigger_threshold` (80%) occupancy every request is promoted; above it every line of the
//!   request has its access count incremented, and the request is promoted when all its lines
//!   reached `insertion_threshold` — or when any of its lines is already cached, as Open CAS lets
//!   partly hit requests in. Counts live in a direct-mapped table with 2 entries per cache line
//!   (Open CAS's `NHIT_MAPPING_RATIO`; 4096 … 4M entries); a collision forgets the older line.
//! - smq: a direct-mapped table of hot-spot regions of 16 lines with access counts that halve
//!   every `capacity` line accesses; while the cache has free lines every miss is admitted (as
//!   smq uses free blocks first), afterwards a line is admitted when its region was accessed at
//!   least 4 times in the current, decayed window.
//! - sequential cutoff: 64 recent streams (bcache's `RECENT_IO`); a request continuing a stream
//!   (starting where a tracked one ended, same device) adds to its length; once a stream reaches
//!   the cutoff its requests bypass the cache.

use serde::{Deserialize, Serialize};

use crate::event::IoEvent;
use crate::hash::mix64;

/// The admission rule of a simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Admission {
    /// Every miss is inserted.
    Always,
    /// A line is inserted on its `n`-th access while not cached (Open CAS `nhit`).
    NHit { n: u32 },
    /// Lines in hot regions are inserted (modelled on dm-cache's smq hot-spot queue).
    Smq,
    /// Requests in a sequential stream of at least `cutoff_bytes` bypass the cache (bcache).
    SeqCutoff { cutoff_bytes: u64 },
}

impl Admission {
    /// Short label: `always`, `nhit:3`, `smq`, `seqcut:4194304`.
    pub fn label(&self) -> String {
        match self {
            Admission::Always => "always".into(),
            Admission::NHit { n } => format!("nhit:{n}"),
            Admission::Smq => "smq".into(),
            Admission::SeqCutoff { cutoff_bytes } => format!("seqcut:{cutoff_bytes}"),
        }
    }

    /// Parses what `--admission` and the web app's control take: `always`, `nhit:N` (N ≥ 1),
    /// `smq`, `seqcut:SIZE` (`seqcut:4MiB` or bytes). [`Admission::label`] parses back.
    pub fn parse(text: &str) -> Result<Admission, AdmissionError> {
        let t = text.trim().to_ascii_lowercase();
        let text = || text.to_owned();
        if t == "always" {
            return Ok(Admission::Always);
        }
        if t == "smq" {
            return Ok(Admission::Smq);
        }
        if let Some(n) = t.strip_prefix("nhit:") {
            let n: u32 = n
                .trim()
                .parse()
                .map_err(|_| AdmissionError::NHitNotANumber { text: text() })?;
            if n == 0 {
                return Err(AdmissionError::NHitZero { text: text() });
            }
            return Ok(Admission::NHit { n });
        }
        if let Some(s) = t.strip_prefix("seqcut:") {
            let cutoff_bytes =
                crate::units::parse_size(s).map_err(|error| AdmissionError::CutoffSize {
                    text: text(),
                    error,
                })?;
            if cutoff_bytes == 0 {
                return Err(AdmissionError::CutoffZero { text: text() });
            }
            return Ok(Admission::SeqCutoff { cutoff_bytes });
        }
        Err(AdmissionError::Unknown { text: text() })
    }
}

/// Why [`Admission::parse`] refused a text. Each message quotes the text as typed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AdmissionError {
    #[error("{text:?}: nhit:N needs a whole number N >= 1")]
    NHitNotANumber { text: String },
    #[error("{text:?}: nhit:N needs N >= 1")]
    NHitZero { text: String },
    /// The size after `seqcut:` (its message is part of this one, so it is no `source`).
    #[error("{text:?}: {error}")]
    CutoffSize {
        text: String,
        error: crate::units::SizeError,
    },
    #[error("{text:?}: the sequential cutoff must be above 0 bytes")]
    CutoffZero { text: String },
    #[error("{text:?}: expected always, nhit:N, smq or seqcut:SIZE")]
    Unknown { text: String },
}

/// Open CAS's default `trigger_threshold`: n-hit only filters once the cache is this full.
pub const NHIT_TRIGGER_PERCENT: u64 = 80;
/// smq model: lines per hot-spot region.
pub const SMQ_REGION_LINES: u64 = 16;
/// smq model: region accesses (within the decay window) needed for promotion.
pub const SMQ_PROMOTE_ACCESSES: u32 = 4;
/// Streams the sequential detector tracks.
pub const SEQ_STREAMS: usize = 64;

const EMPTY: u64 = u64::MAX;

#[derive(Clone, Copy)]
struct Stream {
    device: u32,
    next_offset_bytes: u64,
    length_bytes: u64,
    last_use: u64,
}

/// Runtime state of the admission rules of one simulation.
pub(crate) struct AdmissionState {
    nhit: Option<u32>,
    nhit_table: Vec<(u64, u32)>,
    smq: bool,
    smq_table: Vec<(u64, u32, u32)>,
    smq_epoch: u32,
    smq_accesses: u64,
    capacity_lines: u64,
    seq_cutoff_bytes: Option<u64>,
    streams: Vec<Stream>,
    requests: u64,
}

fn table_size(capacity_lines: u64) -> usize {
    (capacity_lines.saturating_mul(2))
        .clamp(4096, 1 << 22)
        .next_power_of_two() as usize
}

impl AdmissionState {
    pub fn new(
        admission: Admission,
        extra_seq_cutoff_bytes: Option<u64>,
        capacity_lines: u64,
    ) -> AdmissionState {
        let nhit = match admission {
            Admission::NHit { n } => Some(n.max(1)),
            _ => None,
        };
        let smq = admission == Admission::Smq;
        let seq_cutoff_bytes = match admission {
            Admission::SeqCutoff { cutoff_bytes } => Some(cutoff_bytes),
            _ => extra_seq_cutoff_bytes,
        };
        let size = table_size(capacity_lines);
        AdmissionState {
            nhit,
            nhit_table: if nhit.is_some() {
                vec![(EMPTY, 0); size]
            } else {
                Vec::new()
            },
            smq,
            smq_table: if smq {
                vec![(EMPTY, 0, 0); size]
            } else {
                Vec::new()
            },
            smq_epoch: 0,
            smq_accesses: 0,
            capacity_lines,
            seq_cutoff_bytes,
            streams: Vec::new(),
            requests: 0,
        }
    }

    /// Whether the whole request bypasses the cache (sequential cutoff).
    pub fn bypass_request(&mut self, e: &IoEvent) -> bool {
        let Some(cutoff) = self.seq_cutoff_bytes else {
            return false;
        };
        self.requests += 1;
        let now = self.requests;
        let len = u64::from(e.len_bytes);
        let found = self
            .streams
            .iter()
            .position(|s| s.device == e.device && s.next_offset_bytes == e.offset_bytes);
        let length = match found {
            Some(i) => {
                let s = &mut self.streams[i];
                s.length_bytes = s.length_bytes.saturating_add(len);
                s.next_offset_bytes = e.end_bytes();
                s.last_use = now;
                s.length_bytes
            }
            None => {
                let s = Stream {
                    device: e.device,
                    next_offset_bytes: e.end_bytes(),
                    length_bytes: len,
                    last_use: now,
                };
                if self.streams.len() < SEQ_STREAMS {
                    self.streams.push(s);
                } else if let Some(oldest) = self.streams.iter_mut().min_by_key(|s| s.last_use) {
                    *oldest = s;
                }
                len
            }
        };
        length >= cutoff
    }

    /// Records an access to line `line` of `key` (every line access, hit or miss).
    #[inline]
    pub fn touch(&mut self, key: u64) {
        if !self.smq {
            return;
        }
        self.smq_accesses += 1;
        if self.smq_accesses >= self.capacity_lines.max(1024) {
            self.smq_accesses = 0;
            self.smq_epoch = self.smq_epoch.wrapping_add(1);
        }
        let region = key / SMQ_REGION_LINES;
        let mask = self.smq_table.len() - 1;
        let slot = &mut self.smq_table[(mix64(region) as usize) & mask];
        let epoch = self.smq_epoch;
        if slot.0 == region {
            let age = epoch.wrapping_sub(slot.2).min(31);
            slot.1 = (slot.1 >> age).saturating_add(1);
        } else {
            *slot = (region, 1, epoch);
        }
        slot.2 = epoch;
    }

    /// Whether n-hit filtering is active for a cache holding `occupancy` of `capacity` lines
    /// (Open CAS: once occupancy reaches `ceil(trigger% x capacity)`).
    pub fn nhit_enabled(&self) -> bool {
        self.nhit.is_some()
    }

    pub fn nhit_active(&self, occupancy: u64, capacity: u64) -> bool {
        self.nhit.is_some() && occupancy >= (NHIT_TRIGGER_PERCENT * capacity).div_ceil(100)
    }

    /// Counts one more access to `key` and says whether it has reached the n-hit threshold.
    pub fn nhit_count(&mut self, key: u64) -> bool {
        let Some(n) = self.nhit else { return true };
        let mask = self.nhit_table.len() - 1;
        let slot = &mut self.nhit_table[(mix64(key) as usize) & mask];
        if slot.0 == key {
            slot.1 = slot.1.saturating_add(1);
        } else {
            *slot = (key, 1);
        }
        slot.1 >= n
    }

    /// Forgets the count of a promoted line.
    pub fn nhit_purge(&mut self, key: u64) {
        if self.nhit.is_none() {
            return;
        }
        let mask = self.nhit_table.len() - 1;
        let slot = &mut self.nhit_table[(mix64(key) as usize) & mask];
        if slot.0 == key {
            *slot = (EMPTY, 0);
        }
    }

    /// Whether a missed line may enter a cache holding `occupancy` of `capacity` lines, for the
    /// per-line rules (smq). n-hit decides per request ([`AdmissionState::nhit_count`]) and
    /// sequential cutoff per stream ([`AdmissionState::bypass_request`]), so both pass here.
    #[inline]
    pub fn admit(&mut self, key: u64, occupancy: u64, capacity: u64) -> bool {
        if self.smq {
            if occupancy < capacity {
                return true;
            }
            let region = key / SMQ_REGION_LINES;
            let mask = self.smq_table.len() - 1;
            let slot = self.smq_table[(mix64(region) as usize) & mask];
            if slot.0 != region {
                return false;
            }
            let age = self.smq_epoch.wrapping_sub(slot.2).min(31);
            return (slot.1 >> age) >= SMQ_PROMOTE_ACCESSES;
        }
        true
    }

    pub fn heap_bytes(&self) -> usize {
        self.nhit_table.capacity() * 16
            + self.smq_table.capacity() * 16
            + self.streams.capacity() * 32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Op;

    fn ev(offset_bytes: u64, len_bytes: u32) -> IoEvent {
        IoEvent {
            time_nanos: 0,
            device: 0,
            offset_bytes,
            len_bytes,
            op: Op::Read,
            latency_nanos: None,
            pid: None,
        }
    }

    #[test]
    fn specs_parse_and_labels_parse_back() {
        for (text, want) in [
            ("always", Admission::Always),
            (" SMQ ", Admission::Smq),
            ("nhit:3", Admission::NHit { n: 3 }),
            (
                "seqcut:4MiB",
                Admission::SeqCutoff {
                    cutoff_bytes: 4 << 20,
                },
            ),
            (
                "seqcut:4194304",
                Admission::SeqCutoff {
                    cutoff_bytes: 4 << 20,
                },
            ),
        ] {
            assert_eq!(Admission::parse(text), Ok(want), "{text}");
            assert_eq!(Admission::parse(&want.label()), Ok(want));
        }
        use crate::units::SizeError;
        let err = |text: &str| Admission::parse(text).expect_err(text);
        assert!(matches!(err("nhit:0"), AdmissionError::NHitZero { .. }));
        assert!(matches!(
            err("nhit:x"),
            AdmissionError::NHitNotANumber { .. }
        ));
        assert!(matches!(
            err("seqcut:"),
            AdmissionError::CutoffSize {
                error: SizeError::NotANumber { .. },
                ..
            }
        ));
        assert!(matches!(err("seqcut:0"), AdmissionError::CutoffZero { .. }));
        assert!(matches!(err("lru"), AdmissionError::Unknown { .. }));
        assert!(matches!(err(""), AdmissionError::Unknown { .. }));
        // The size's own message is kept inside this one, after the text as typed.
        assert_eq!(
            err("seqcut:4Q").to_string(),
            "\"seqcut:4Q\": \"4q\": unknown size unit \"q\" (use K, M, G, T, KiB, MiB, GiB, TiB)"
        );
    }

    #[test]
    fn nhit_counts_to_the_threshold_once_the_cache_is_full() {
        let mut a = AdmissionState::new(Admission::NHit { n: 3 }, None, 100);
        assert!(
            !a.nhit_active(79, 100),
            "below the trigger every request is promoted"
        );
        assert!(a.nhit_active(80, 100));
        assert!(!a.nhit_count(7));
        assert!(!a.nhit_count(7));
        assert!(a.nhit_count(7));
        a.nhit_purge(7);
        assert!(!a.nhit_count(7), "the count restarts after promotion");
        assert!(a.admit(7, 100, 100), "n-hit does not filter per line");
    }

    #[test]
    fn sequential_cutoff_bypasses_long_streams_only() {
        let mut a = AdmissionState::new(
            Admission::SeqCutoff {
                cutoff_bytes: 1 << 20,
            },
            None,
            100,
        );
        let mut bypassed = 0;
        for i in 0..64u64 {
            if a.bypass_request(&ev(i * 65536, 65536)) {
                bypassed += 1;
            }
        }
        // 1 MiB is reached on the 16th 64 KiB request; the remaining 49 bypass.
        assert_eq!(bypassed, 49);
        assert!(
            !a.bypass_request(&ev(1 << 40, 4096)),
            "a random request starts a new stream"
        );
    }

    #[test]
    fn smq_promotes_hot_regions_when_full() {
        let mut a = AdmissionState::new(Admission::Smq, None, 1 << 20);
        assert!(a.admit(5, 0, 10), "free space: admit");
        assert!(!a.admit(5, 10, 10));
        for k in 0..4 {
            a.touch(k);
        }
        assert!(a.admit(5, 10, 10), "region 0 accessed 4 times");
    }
}
