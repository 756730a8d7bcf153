//! The trace model: one [`IoEvent`] per block request, and the [`TraceHeader`] that describes where
//! the events came from.
//!
//! Every decoder produces this model and every analysis consumes it, so it stays small, `Copy`
//! and explicit about units.

use serde::{Deserialize, Serialize};

/// What a block request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Op {
    Read,
    Write,
    /// Discard, TRIM, UNMAP or secure erase: the range's data is no longer needed.
    Discard,
    /// A cache flush or FUA-only request with no data range of its own.
    Flush,
}

impl Op {
    pub const ALL: [Op; 4] = [Op::Read, Op::Write, Op::Discard, Op::Flush];

    /// Stable lower-case name used in CSV and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Discard => "discard",
            Op::Flush => "flush",
        }
    }

    /// Parses the names [`Op::name`] produces, plus the usual one-letter forms (R, W, D, F).
    pub fn from_name(name: &str) -> Option<Op> {
        // Compared in place (a text trace names an op on every line): no lower-cased copy.
        const NAMES: [(&str, Op); 10] = [
            ("read", Op::Read),
            ("r", Op::Read),
            ("write", Op::Write),
            ("w", Op::Write),
            ("discard", Op::Discard),
            ("d", Op::Discard),
            ("trim", Op::Discard),
            ("unmap", Op::Discard),
            ("flush", Op::Flush),
            ("f", Op::Flush),
        ];
        let name = name.trim();
        NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, op)| op)
    }

    /// Dense index for per-op tables: Read 0, Write 1, Discard 2, Flush 3.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn from_index(index: u8) -> Option<Op> {
        Op::ALL.get(index as usize).copied()
    }
}

/// One block request as the device saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoEvent {
    /// When the request was issued (or queued, when the trace counts queueing as the request),
    /// in nanoseconds since [`TraceHeader::start_unix_nanos`] (or since an arbitrary origin when
    /// that is unknown). Events come in file order, which is time order for every format that
    /// promises it.
    pub time_nanos: u64,
    /// Index into [`TraceHeader::devices`].
    pub device: u32,
    /// Start of the request on the device, in bytes.
    pub offset_bytes: u64,
    /// Length of the request in bytes; 0 for a flush.
    pub len_bytes: u32,
    pub op: Op,
    /// Time from issue (or queue) to completion, when the trace has completions.
    pub latency_nanos: Option<u64>,
    /// The process that issued the request, when the trace records it.
    pub pid: Option<u32>,
}

impl IoEvent {
    /// First byte past the request.
    pub fn end_bytes(&self) -> u64 {
        self.offset_bytes.saturating_add(u64::from(self.len_bytes))
    }

    /// The blocks of `block_bytes` the request touches, as a half-open range of block numbers. A
    /// request touching any byte of a block touches the whole block; a zero-length request
    /// touches no block.
    pub fn block_range(&self, block_bytes: u64) -> std::ops::Range<u64> {
        let block_bytes = block_bytes.max(1);
        if self.len_bytes == 0 {
            let b = self.offset_bytes / block_bytes;
            return b..b;
        }
        let first = self.offset_bytes / block_bytes;
        let last = (self.end_bytes() - 1) / block_bytes;
        first..last + 1
    }
}

/// A block device that appears in a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// The kernel's name (`sda`, `nvme0n1`, `loop3`) or the trace's own label (MSR `hm_0`,
    /// Alibaba volume 17).
    pub name: String,
    pub major: Option<u32>,
    pub minor: Option<u32>,
    pub size_bytes: Option<u64>,
}

impl DeviceInfo {
    pub fn named(name: impl Into<String>) -> DeviceInfo {
        DeviceInfo {
            name: name.into(),
            ..DeviceInfo::default()
        }
    }

    /// `major:minor` when both are known.
    pub fn dev_t(&self) -> Option<(u32, u32)> {
        Some((self.major?, self.minor?))
    }
}

/// Spatial sampling applied when the trace was recorded (SHARDS-style): a request is kept when a
/// hash of its block address, modulo `modulus`, is below `threshold`. Analyses divide counts by
/// `rate()` to rescale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sampling {
    /// Size in bytes of the blocks whose addresses are hashed.
    pub block_bytes: u64,
    pub threshold: u64,
    pub modulus: u64,
}

impl Sampling {
    pub fn rate(&self) -> f64 {
        if self.modulus == 0 {
            1.0
        } else {
            self.threshold as f64 / self.modulus as f64
        }
    }
}

/// What is known about a trace as a whole.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceHeader {
    /// The format the events were decoded from ([`crate::TraceFormat::name`]).
    pub source_format: String,
    /// Devices referenced by [`IoEvent::device`]; decoders append as they discover them.
    pub devices: Vec<DeviceInfo>,
    /// Wall-clock time of `time_nanos == 0`, in nanoseconds since the Unix epoch, when known.
    pub start_unix_nanos: Option<i64>,
    pub host: Option<String>,
    /// The recording tool and its version, for example `blocksight 0.1.0` or `blktrace`.
    pub tool_version: Option<String>,
    pub sampling: Option<Sampling>,
    /// Events the recorder knows it lost (ring-buffer overruns, blktrace's dropped counter).
    pub dropped_events: u64,
}

impl TraceHeader {
    pub fn new(source_format: impl Into<String>) -> TraceHeader {
        TraceHeader {
            source_format: source_format.into(),
            ..TraceHeader::default()
        }
    }

    /// Returns the index of the device named `name`, adding it when it is new.
    pub fn device_index(&mut self, name: &str) -> u32 {
        if let Some(i) = self.devices.iter().position(|d| d.name == name) {
            return i as u32;
        }
        self.devices.push(DeviceInfo::named(name));
        (self.devices.len() - 1) as u32
    }

    /// Returns the index of the device `major:minor`, adding it (named `major,minor` as blkparse
    /// prints it) when it is new.
    pub fn device_index_by_dev_t(&mut self, major: u32, minor: u32) -> u32 {
        if let Some(i) = self
            .devices
            .iter()
            .position(|d| d.major == Some(major) && d.minor == Some(minor))
        {
            return i as u32;
        }
        self.devices.push(DeviceInfo {
            name: format!("{major},{minor}"),
            major: Some(major),
            minor: Some(minor),
            size_bytes: None,
        });
        (self.devices.len() - 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn block_range_counts_partially_touched_blocks() {
        assert_eq!(ev(0, 4096).block_range(4096), 0..1);
        assert_eq!(ev(1, 4096).block_range(4096), 0..2);
        assert_eq!(ev(4095, 2).block_range(4096), 0..2);
        assert_eq!(ev(8192, 512).block_range(4096), 2..3);
        assert_eq!(ev(8192, 0).block_range(4096), 2..2);
    }

    #[test]
    fn op_names_round_trip() {
        for op in Op::ALL {
            assert_eq!(Op::from_name(op.name()), Some(op));
            assert_eq!(Op::from_index(op.index() as u8), Some(op));
        }
    }

    proptest::proptest! {
        /// Any case and surrounding blanks, as a lower-cased copy would match them; nothing else.
        #[test]
        fn op_names_match_in_any_case(
            name in proptest::sample::select(vec![
                "read", "r", "write", "w", "discard", "d", "trim", "unmap", "flush", "f",
                "reads", "wr", "x", "", "ſ", "dİscard",
            ]),
            upper in proptest::collection::vec(proptest::bool::ANY, 8),
            pad in "[ \t]{0,2}",
        ) {
            let cased: String = name
                .chars()
                .zip(upper.iter().cycle())
                .map(|(c, &u)| if u { c.to_ascii_uppercase() } else { c })
                .collect();
            let want = match name {
                "read" | "r" => Some(Op::Read),
                "write" | "w" => Some(Op::Write),
                "discard" | "d" | "trim" | "unmap" => Some(Op::Discard),
                "flush" | "f" => Some(Op::Flush),
                _ => None,
            };
            proptest::prop_assert_eq!(Op::from_name(&format!("{pad}{cased}{pad}")), want);
        }
    }
}
