//! Synthetic workloads beside traces: the classic IOMeter/fio access specifications, each with
//! a span (working-set size) and an outstanding-I/O count, generated from a seeded PRNG.

use serde::{Deserialize, Serialize};

use super::rng::Rng;

/// The named profiles (`--profile NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProfileKind {
    RandRead4k,
    RandWrite4k,
    SeqRead64k,
    SeqWrite64k,
    Oltp8k,
    Sql90,
    Sql80,
}

impl ProfileKind {
    pub const ALL: [ProfileKind; 7] = [
        ProfileKind::RandRead4k,
        ProfileKind::RandWrite4k,
        ProfileKind::SeqRead64k,
        ProfileKind::SeqWrite64k,
        ProfileKind::Oltp8k,
        ProfileKind::Sql90,
        ProfileKind::Sql80,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProfileKind::RandRead4k => "4k-random-read",
            ProfileKind::RandWrite4k => "4k-random-write",
            ProfileKind::SeqRead64k => "64k-seq-read",
            ProfileKind::SeqWrite64k => "64k-seq-write",
            ProfileKind::Oltp8k => "oltp-8k",
            ProfileKind::Sql90 => "sql-90-10",
            ProfileKind::Sql80 => "sql-80-20",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            ProfileKind::RandRead4k => "4 KiB, 100% read, 100% random",
            ProfileKind::RandWrite4k => "4 KiB, 100% write, 100% random",
            ProfileKind::SeqRead64k => "64 KiB, 100% read, sequential",
            ProfileKind::SeqWrite64k => "64 KiB, 100% write, sequential",
            ProfileKind::Oltp8k => {
                "8 KiB, 67% read / 33% write, 100% random (IOMeter OLTP/database)"
            }
            ProfileKind::Sql90 => "8 KiB, 90% read / 10% write, 100% random",
            ProfileKind::Sql80 => "8 KiB, 80% read / 20% write, 100% random",
        }
    }

    pub fn from_name(name: &str) -> Option<ProfileKind> {
        let n = name.trim().to_ascii_lowercase();
        ProfileKind::ALL.into_iter().find(|p| p.name() == n)
    }

    /// The access specification, before span and queue depth are chosen.
    pub fn spec(self) -> AccessSpec {
        let (len_bytes, read_fraction, sequential) = match self {
            ProfileKind::RandRead4k => (4096, 1.0, false),
            ProfileKind::RandWrite4k => (4096, 0.0, false),
            ProfileKind::SeqRead64k => (65536, 1.0, true),
            ProfileKind::SeqWrite64k => (65536, 0.0, true),
            ProfileKind::Oltp8k => (8192, 0.67, false),
            ProfileKind::Sql90 => (8192, 0.90, false),
            ProfileKind::Sql80 => (8192, 0.80, false),
        };
        AccessSpec {
            len_bytes,
            read_fraction,
            sequential,
            async_write_back_fraction: 0.0,
            align_bytes: len_bytes.into(),
        }
    }
}

/// One access specification: size, read share, random or sequential, and optional
/// asynchronous write-back of a fraction of the reads (bonnie++'s seek test dirties and writes
/// back 10 % of the blocks it reads; the page cache writes them later, so the reader does not
/// wait for them).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccessSpec {
    pub len_bytes: u32,
    pub read_fraction: f64,
    pub sequential: bool,
    pub async_write_back_fraction: f64,
    /// Random offsets are multiples of this.
    pub align_bytes: u64,
}

/// A generated request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generated {
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub write: bool,
    /// Also write this block back later, without waiting (see [`AccessSpec`]).
    pub write_back: bool,
}

/// Draws requests for an [`AccessSpec`] over `[0, span_bytes)`.
#[derive(Clone, Debug)]
pub struct Generator {
    spec: AccessSpec,
    span_bytes: u64,
    next_sequential: u64,
    rng: Rng,
}

impl Generator {
    pub fn new(spec: AccessSpec, span_bytes: u64, seed: u64) -> Generator {
        let span_bytes = span_bytes.max(u64::from(spec.len_bytes));
        Generator {
            spec,
            span_bytes,
            next_sequential: 0,
            rng: Rng::new(seed),
        }
    }

    pub fn next_request(&mut self) -> Generated {
        let len = u64::from(self.spec.len_bytes);
        let offset = if self.spec.sequential {
            if self.next_sequential + len > self.span_bytes {
                self.next_sequential = 0;
            }
            let o = self.next_sequential;
            self.next_sequential += len;
            o
        } else {
            let align = self.spec.align_bytes.max(512);
            let slots = (self.span_bytes - len) / align + 1;
            self.rng.below(slots) * align
        };
        let write = self.spec.read_fraction < 1.0 && self.rng.next_f64() >= self.spec.read_fraction;
        let write_back = !write
            && self.spec.async_write_back_fraction > 0.0
            && self.rng.next_f64() < self.spec.async_write_back_fraction;
        Generated {
            offset_bytes: offset,
            len_bytes: self.spec.len_bytes,
            write,
            write_back,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_requests_stay_in_span_aligned_with_the_right_mix() {
        let spec = ProfileKind::Oltp8k.spec();
        let mut g = Generator::new(spec, 1 << 30, 1);
        let mut reads = 0;
        for _ in 0..100_000 {
            let r = g.next_request();
            assert!(r.offset_bytes + u64::from(r.len_bytes) <= 1 << 30);
            assert_eq!(r.offset_bytes % 8192, 0);
            reads += u32::from(!r.write);
        }
        assert!((66_000..68_000).contains(&reads), "{reads}");
    }

    #[test]
    fn sequential_requests_follow_each_other_and_wrap() {
        let mut g = Generator::new(ProfileKind::SeqRead64k.spec(), 4 * 65536, 1);
        let offsets: Vec<u64> = (0..6).map(|_| g.next_request().offset_bytes).collect();
        assert_eq!(offsets, vec![0, 65536, 131072, 196608, 0, 65536]);
    }

    #[test]
    fn names_round_trip() {
        for p in ProfileKind::ALL {
            assert_eq!(ProfileKind::from_name(p.name()), Some(p));
        }
    }
}
