//! LBA × time heat maps, reads and writes separately, with fixed bin counts on both axes.
//!
//! The time axis starts with 1 ms bins and the address axis with 1 MiB bins from offset 0; when
//! an event falls past either end, neighbouring bins on that axis are merged pairwise and the bin
//! width doubles. Memory is `time_bins × lba_bins` counters per op and device for any trace.
//! A cell counts requests by their start offset. Maps are kept for the first
//! [`MAX_DEVICES`] devices; requests to others are counted as omitted.
//!
//! Both grids are aligned to absolute multiples of their bin width: a time bin of width `w`
//! covers `[n·w, (n+1)·w)` nanoseconds of the trace clock (row 0 is the bin holding the first
//! request, so it may start up to one bin before it), an address bin `[n·w, (n+1)·w)` bytes.
//! Since every width is the initial one times a power of two, the bins of a coarser grid are
//! unions of the bins of a finer one, whatever range each saw. That is what lets the maps of a
//! trace's parts (devices, hash slices, time slices) re-bin onto one grid and add up to the
//! map of the whole exactly (`merge`): the final widths depend only on the span of times and
//! the largest offset seen, and the count in a cell only on the requests in it.

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, Op, TraceHeader};

pub const MAX_DEVICES: usize = 8;
const INITIAL_TIME_NANOS: u64 = 1_000_000;
const INITIAL_LBA_BYTES: u64 = 1 << 20;

/// One device's heat maps. `reads` and `writes` are row-major: `time_bins` rows of `lba_bins`
/// request counts; row `t`, column `l` covers times `[t·time_bin_nanos, (t+1)·time_bin_nanos)`
/// after the first event and offsets `[l·lba_bin_bytes, (l+1)·lba_bin_bytes)`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceHeatMap {
    pub device: u32,
    pub device_name: String,
    pub time_bins: u32,
    pub lba_bins: u32,
    pub time_bin_nanos: u64,
    pub lba_bin_bytes: u64,
    /// The device's size from the trace header, when it knows it (the columns cover it).
    #[serde(default)]
    pub device_size_bytes: Option<u64>,
    pub reads: Vec<u32>,
    pub writes: Vec<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HeatMapReport {
    pub maps: Vec<DeviceHeatMap>,
    /// Requests to devices beyond the first [`MAX_DEVICES`].
    pub omitted_requests: u64,
    /// Where row 0 starts on the trace clock: the first request's time rounded down to a
    /// multiple of the time bin width (the grid is absolute, see the module documentation).
    #[serde(default)]
    pub time_origin_nanos: u64,
    /// The row and column limits the maps were made with (`AnalysisConfig::heat_time_bins`
    /// and `heat_lba_bins`, rounded as [`HeatMap::new`] rounds them); merging needs them.
    #[serde(default)]
    pub max_time_bins: u32,
    #[serde(default)]
    pub max_lba_bins: u32,
}

#[derive(Debug, Clone)]
struct Map {
    lba_width: u64,
    max_lba_bin: usize,
    reads: Vec<u32>,
    writes: Vec<u32>,
}

/// Streaming heat maps; all devices share one time axis.
#[derive(Debug)]
pub struct HeatMap {
    time_bins: usize,
    lba_bins: usize,
    origin: Option<u64>,
    time_width: u64,
    max_time_bin: usize,
    maps: Vec<Map>,
    omitted: u64,
}

impl HeatMap {
    pub fn new(time_bins: usize, lba_bins: usize) -> HeatMap {
        HeatMap {
            time_bins: time_bins.clamp(2, 4096) & !1,
            lba_bins: lba_bins.clamp(2, 4096) & !1,
            origin: None,
            time_width: INITIAL_TIME_NANOS,
            max_time_bin: 0,
            maps: Vec::new(),
            omitted: 0,
        }
    }

    pub fn observe(&mut self, e: &IoEvent) {
        let op = match e.op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return,
        };
        let dev = e.device as usize;
        if dev >= MAX_DEVICES {
            self.omitted += 1;
            return;
        }
        let (tb, lb) = (self.time_bins, self.lba_bins);
        while self.maps.len() <= dev {
            self.maps.push(Map {
                lba_width: INITIAL_LBA_BYTES,
                max_lba_bin: 0,
                reads: vec![0; tb * lb],
                writes: vec![0; tb * lb],
            });
        }
        let first = *self.origin.get_or_insert(e.time_nanos);
        // Rows count from the absolute bin of the first request; a request before it (out of
        // order) falls in row 0.
        let row = |width: u64| (e.time_nanos / width).saturating_sub(first / width);
        while row(self.time_width) >= tb as u64 && self.time_width < u64::MAX / 2 {
            // Row r is absolute bin a0 + r; at twice the width it is bin (a0 + r) / 2, row
            // (a0 + r) / 2 - a0 / 2: rows pair as (0,1),(2,3)... when a0 is even, else as
            // (0),(1,2),(3,4)...
            let odd = (first / self.time_width) % 2 == 1;
            for m in &mut self.maps {
                halve_time(&mut m.reads, tb, lb, odd);
                halve_time(&mut m.writes, tb, lb, odd);
            }
            self.time_width = self.time_width.saturating_mul(2);
            self.max_time_bin = (self.max_time_bin + usize::from(odd)) / 2;
        }
        let t = (row(self.time_width) as usize).min(tb - 1);
        self.max_time_bin = self.max_time_bin.max(t);
        let m = &mut self.maps[dev];
        while e.offset_bytes / m.lba_width >= lb as u64 && m.lba_width < u64::MAX / 2 {
            halve_lba(&mut m.reads, tb, lb);
            halve_lba(&mut m.writes, tb, lb);
            m.lba_width = m.lba_width.saturating_mul(2);
            m.max_lba_bin /= 2;
        }
        let l = ((e.offset_bytes / m.lba_width) as usize).min(lb - 1);
        m.max_lba_bin = m.max_lba_bin.max(l);
        let cells = if op == 0 { &mut m.reads } else { &mut m.writes };
        let c = &mut cells[t * lb + l];
        *c = c.saturating_add(1);
    }

    /// The maps, trimmed to the rows and columns that saw requests (and, when the header knows
    /// the device size, to the columns covering the device).
    pub fn finish(&self, header: &TraceHeader) -> HeatMapReport {
        let rows = if self.origin.is_some() {
            self.max_time_bin + 1
        } else {
            0
        };
        let maps = self
            .maps
            .iter()
            .enumerate()
            .filter(|(_, m)| m.reads.iter().chain(&m.writes).any(|&c| c > 0))
            .map(|(i, m)| {
                let info = header.devices.get(i);
                let by_size = info
                    .and_then(|d| d.size_bytes)
                    .map(|s| s.div_ceil(m.lba_width) as usize)
                    .unwrap_or(0);
                let cols = (m.max_lba_bin + 1).max(by_size).min(self.lba_bins);
                let trim = |v: &[u32]| {
                    (0..rows)
                        .flat_map(|r| {
                            v[r * self.lba_bins..r * self.lba_bins + cols]
                                .iter()
                                .copied()
                        })
                        .collect()
                };
                DeviceHeatMap {
                    device: i as u32,
                    device_name: info.map(|d| d.name.clone()).unwrap_or_default(),
                    time_bins: rows as u32,
                    lba_bins: cols as u32,
                    time_bin_nanos: self.time_width,
                    lba_bin_bytes: m.lba_width,
                    device_size_bytes: info.and_then(|d| d.size_bytes),
                    reads: trim(&m.reads),
                    writes: trim(&m.writes),
                }
            })
            .collect();
        HeatMapReport {
            maps,
            omitted_requests: self.omitted,
            time_origin_nanos: self
                .origin
                .map_or(0, |first| first / self.time_width * self.time_width),
            max_time_bins: self.time_bins as u32,
            max_lba_bins: self.lba_bins as u32,
        }
    }
}

/// Merges rows pairwise into `rows / 2` (plus one when `odd`) rows: new row n holds rows
/// 2n and 2n+1, or, when `odd`, rows 2n-1 and 2n (row 0 alone).
fn halve_time(v: &mut [u32], rows: usize, cols: usize, odd: bool) {
    let shift = usize::from(odd);
    let new_rows = (rows + shift).div_ceil(2);
    for n in 0..new_rows {
        for c in 0..cols {
            let at = |r: usize| if r < rows { v[r * cols + c] } else { 0 };
            let sum = if odd && n == 0 {
                at(0)
            } else {
                at(2 * n - shift).saturating_add(at(2 * n + 1 - shift))
            };
            v[n * cols + c] = sum;
        }
    }
    v[new_rows * cols..].fill(0);
}

fn halve_lba(v: &mut [u32], rows: usize, cols: usize) {
    for r in 0..rows {
        let row = &mut v[r * cols..(r + 1) * cols];
        for c in 0..cols / 2 {
            row[c] = row[2 * c].saturating_add(row[2 * c + 1]);
        }
        row[cols / 2..].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, offset_bytes: u64, op: Op) -> IoEvent {
        IoEvent {
            time_nanos: t,
            device: 0,
            offset_bytes,
            len_bytes: 4096,
            op,
            latency_nanos: None,
            pid: None,
        }
    }

    #[test]
    fn both_axes_rebin_and_keep_counts() {
        let mut h = HeatMap::new(4, 4);
        h.observe(&ev(0, 0, Op::Read));
        h.observe(&ev(3_500_000, 3 << 20, Op::Write));
        // Forces the time axis to 2 ms bins and the address axis to 2 MiB bins.
        h.observe(&ev(7_000_000, 7 << 20, Op::Read));
        let r = h.finish(&TraceHeader::new("t"));
        let m = &r.maps[0];
        assert_eq!((m.time_bin_nanos, m.lba_bin_bytes), (2_000_000, 2 << 20));
        assert_eq!((m.time_bins, m.lba_bins), (4, 4));
        assert_eq!(m.reads[0], 1);
        assert_eq!(m.writes[4 + 1], 1);
        assert_eq!(m.reads[3 * 4 + 3], 1);
        assert_eq!(
            m.reads.iter().sum::<u32>() + m.writes.iter().sum::<u32>(),
            3
        );
    }

    /// The streaming map against binning on the final grid directly: the bins are absolute
    /// multiples of the widths, whatever the first request's phase within a bin.
    #[test]
    fn streaming_bins_equal_direct_binning_on_the_absolute_grid() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 11
        };
        for case in 0..40u64 {
            let (tb, lb) = (8usize, 6usize);
            let first = 3_500_000 + case * 777_777;
            let mut events = Vec::new();
            let mut t = first;
            for _ in 0..300 {
                t += next() % (1 + case * 200_000);
                events.push(ev(
                    t,
                    next() % ((case + 1) << 22),
                    if next() % 3 == 0 { Op::Write } else { Op::Read },
                ));
            }
            let mut h = HeatMap::new(tb, lb);
            for e in &events {
                h.observe(e);
            }
            let r = h.finish(&TraceHeader::new("t"));
            let m = &r.maps[0];
            let last = events.iter().map(|e| e.time_nanos).max().unwrap_or(0);
            let mut w = INITIAL_TIME_NANOS;
            while last / w - first / w >= tb as u64 {
                w *= 2;
            }
            let max_off = events.iter().map(|e| e.offset_bytes).max().unwrap_or(0);
            let mut l = INITIAL_LBA_BYTES;
            while max_off / l >= lb as u64 {
                l *= 2;
            }
            assert_eq!((m.time_bin_nanos, m.lba_bin_bytes), (w, l), "case {case}");
            assert_eq!(r.time_origin_nanos, first / w * w);
            let rows = (last / w - first / w + 1) as usize;
            let cols = (max_off / l + 1) as usize;
            assert_eq!((m.time_bins as usize, m.lba_bins as usize), (rows, cols));
            let mut want = (vec![0u32; rows * cols], vec![0u32; rows * cols]);
            for e in &events {
                let at =
                    (e.time_nanos / w - first / w) as usize * cols + (e.offset_bytes / l) as usize;
                match e.op {
                    Op::Read => want.0[at] += 1,
                    _ => want.1[at] += 1,
                }
            }
            assert_eq!((&m.reads, &m.writes), (&want.0, &want.1), "case {case}");
        }
    }
}
