//! LBA × time heat maps, reads and writes separately, with fixed bin counts on both axes.
//!
//! The time axis starts with 1 ms bins and the address axis with 1 MiB bins from offset 0; when
//! an event falls past either end, neighbouring bins on that axis are merged pairwise and the bin
//! width doubles. Memory is `time_bins × lba_bins` counters per op and device for any trace.
//! A cell counts requests by their start offset. Maps are kept for the first
//! [`MAX_DEVICES`] devices; requests to others are counted as omitted.

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
    pub reads: Vec<u32>,
    pub writes: Vec<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HeatMapReport {
    pub maps: Vec<DeviceHeatMap>,
    /// Requests to devices beyond the first [`MAX_DEVICES`].
    pub omitted_requests: u64,
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
        let origin = *self.origin.get_or_insert(e.time_nanos);
        let rel = e.time_nanos.saturating_sub(origin);
        while rel / self.time_width >= tb as u64 {
            for m in &mut self.maps {
                halve_time(&mut m.reads, tb, lb);
                halve_time(&mut m.writes, tb, lb);
            }
            self.time_width = self.time_width.saturating_mul(2);
            self.max_time_bin /= 2;
        }
        let t = (rel / self.time_width) as usize;
        self.max_time_bin = self.max_time_bin.max(t);
        let m = &mut self.maps[dev];
        while e.offset_bytes / m.lba_width >= lb as u64 {
            halve_lba(&mut m.reads, tb, lb);
            halve_lba(&mut m.writes, tb, lb);
            m.lba_width = m.lba_width.saturating_mul(2);
            m.max_lba_bin /= 2;
        }
        let l = (e.offset_bytes / m.lba_width) as usize;
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
                    reads: trim(&m.reads),
                    writes: trim(&m.writes),
                }
            })
            .collect();
        HeatMapReport {
            maps,
            omitted_requests: self.omitted,
        }
    }
}

fn halve_time(v: &mut [u32], rows: usize, cols: usize) {
    for r in 0..rows / 2 {
        for c in 0..cols {
            v[r * cols + c] = v[2 * r * cols + c].saturating_add(v[(2 * r + 1) * cols + c]);
        }
    }
    v[rows / 2 * cols..].fill(0);
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
}
