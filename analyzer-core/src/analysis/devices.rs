//! Per-device analysis for traces of many volumes (Tencent CBS, Alibaba, merged files): for each
//! device its requests, read share, footprint, hot data at 90%, the recommended cache size and
//! its hit ratio, and what that cache would save, ranked by the saving (`analyze --per-device`,
//! the Overview's device table).
//!
//! Each device gets its own LRU curve: one cache per volume is what a fleet buys, and a curve of
//! the merged stream would size one cache shared by all. The curve is SHARDS with a fixed sample
//! size ([`crate::mrc::shards`], Waldspurger et al., FAST '15) over the device's own lines; the
//! sample sizes share one budget, [`SAMPLE_BUDGET_LINES`]: each device may keep
//! `budget / devices` lines (a power of two between [`MIN_DEVICE_LINES`] and
//! [`MAX_DEVICE_LINES`]), and when a new device halves that share every device's sample is cut
//! at once. Memory is therefore at most `max(budget, devices × MIN_DEVICE_LINES)` sampled lines
//! (2 Mi lines for the decoders' 65,536 devices) plus a few hundred bytes per device. With up to
//! four devices each sample is [`MAX_DEVICE_LINES`] = the analysis's own curve's sample
//! (`AnalysisConfig::mrc_sample_lines`), and since both hash `block_key(device, line)`, a
//! one-device trace gets exactly the analysis's recommendation.
//!
//! Hot data at 90% and the footprint come from the analysis's per-block counts ([`super::hot`]),
//! grouped by device: exact while the whole trace touches at most `exact_block_limit` blocks
//! (`hot_exact`); past that hot data is the analysis's spatial sample and the footprint the
//! device's curve sample's estimate (`footprint_exact` false unless that sample holds it all).
//!
//! What a cache saves is counted in line accesses (the analysis's blocks): the recommended
//! size's hit ratio on the device's curve times the device's line accesses, i.e. the back-end
//! line I/Os the cache would serve instead of the disks (`recommend::SizePoint::
//! backend_io_reduction`). Rows are sorted by it; the report keeps the first `rows` and adds the
//! rest up in one `others` row, so its size is bounded whatever the device count.

use serde::{Deserialize, Serialize};

use crate::event::{IoEvent, Op, TraceHeader};
use crate::hash::IntMap;
use crate::mrc::recommend::{recommend, HitCurve};
use crate::mrc::shards::Shards;

#[cfg(test)]
use super::hot::HotBlocks;
use super::hot::HotPart;

/// Sampled lines shared by every device's curve.
pub const SAMPLE_BUDGET_LINES: u64 = 1 << 18;
/// A device's sample never shrinks below this many lines.
pub const MIN_DEVICE_LINES: u64 = 32;
/// Nor grows beyond this (the analysis's own curve's sample).
pub const MAX_DEVICE_LINES: u64 = 1 << 16;

/// One device's row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceRow {
    pub device: u32,
    pub device_name: String,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    /// Reads / (reads + writes).
    pub read_fraction: f64,
    pub bytes: u64,
    /// Line (block) accesses: a request touching k lines counts k.
    pub line_accesses: u64,
    pub footprint_bytes: u64,
    /// Whether the footprint is counted (false: estimated from the device's sample).
    pub footprint_exact: bool,
    /// The hottest data serving 90% of the device's block accesses.
    pub hot_90_bytes: u64,
    /// Whether `hot_90_bytes` is from exact counts (false: the analysis's spatial sample).
    pub hot_exact: bool,
    /// The recommended LRU cache for this device alone (`None`: no reuse at all).
    pub recommended_bytes: Option<u64>,
    /// Its hit ratio (line accesses), 0 without a recommendation.
    pub hit_ratio: f64,
    /// Line accesses that cache serves instead of the back end.
    pub saved_line_ios: u64,
    /// The device's curve's sampling rate (1: exact).
    pub curve_sampling_rate: f64,
}

/// The devices after the first `rows`, added up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OtherDevices {
    pub devices: u64,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub read_fraction: f64,
    pub bytes: u64,
    pub line_accesses: u64,
    pub footprint_bytes: u64,
    /// Sum of the devices' hot sets (each at 90% of its own accesses).
    pub hot_90_bytes: u64,
    /// Sum of the devices' recommended caches (one per device).
    pub recommended_bytes: u64,
    /// `saved_line_ios / line_accesses`.
    pub hit_ratio: f64,
    pub saved_line_ios: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceReport {
    /// Devices with at least one request.
    pub devices: u64,
    pub line_bytes: u64,
    /// The first rows by `saved_line_ios` (ties: more requests, then device index).
    pub rows: Vec<DeviceRow>,
    /// Every other device, added up; `None` when `rows` holds them all.
    pub others: Option<OtherDevices>,
}

impl DeviceReport {
    /// Column titles of [`DeviceReport::cells`].
    pub const COLUMNS: [&'static str; 8] = [
        "device",
        "requests",
        "reads",
        "footprint",
        "hot 90%",
        "cache",
        "hits",
        "saved I/Os",
    ];

    /// The table's cells, one row per device then the `others` row, formatted by the one set of
    /// rules (`units`) that `analyze --per-device` prints and the web Overview shows: a `~`
    /// marks a size estimated from a spatial sample; `-` a device with no recommendation. The
    /// device name is raw (a host escapes it for its sink); an unnamed device shows its index.
    pub fn cells(&self) -> Vec<[String; 8]> {
        use crate::units::{bytes, count, pct, percent, plural};
        let approx = |exact: bool, b: u64| format!("{}{}", if exact { "" } else { "~" }, bytes(b));
        let mut rows: Vec<[String; 8]> = self
            .rows
            .iter()
            .map(|r| {
                [
                    if r.device_name.is_empty() {
                        r.device.to_string()
                    } else {
                        r.device_name.clone()
                    },
                    count(r.requests),
                    pct(r.reads, r.reads + r.writes),
                    approx(r.footprint_exact, r.footprint_bytes),
                    approx(r.hot_exact, r.hot_90_bytes),
                    r.recommended_bytes.map_or_else(|| "-".into(), bytes),
                    if r.recommended_bytes.is_some() {
                        percent(Some(r.hit_ratio))
                    } else {
                        "-".into()
                    },
                    count(r.saved_line_ios),
                ]
            })
            .collect();
        if let Some(o) = &self.others {
            rows.push([
                plural(o.devices, "other", "others"),
                count(o.requests),
                pct(o.reads, o.reads + o.writes),
                bytes(o.footprint_bytes),
                bytes(o.hot_90_bytes),
                bytes(o.recommended_bytes),
                percent(Some(o.hit_ratio)),
                count(o.saved_line_ios),
            ]);
        }
        rows
    }

    /// The report cut to its first `n` rows, the rest folded into `others`.
    pub fn top(&self, n: usize) -> DeviceReport {
        let mut others = self.others.clone();
        for r in self.rows.iter().skip(n) {
            fold(others.get_or_insert_with(OtherDevices::default), r);
        }
        if let Some(o) = others.as_mut() {
            finish_others(o);
        }
        DeviceReport {
            devices: self.devices,
            line_bytes: self.line_bytes,
            rows: self.rows.iter().take(n).cloned().collect(),
            others,
        }
    }
}

fn fold(o: &mut OtherDevices, r: &DeviceRow) {
    o.devices += 1;
    o.requests += r.requests;
    o.reads += r.reads;
    o.writes += r.writes;
    o.bytes += r.bytes;
    o.line_accesses += r.line_accesses;
    o.footprint_bytes += r.footprint_bytes;
    o.hot_90_bytes += r.hot_90_bytes;
    o.recommended_bytes += r.recommended_bytes.unwrap_or(0);
    o.saved_line_ios += r.saved_line_ios;
}

fn finish_others(o: &mut OtherDevices) {
    let data = o.reads + o.writes;
    o.read_fraction = ratio(o.reads, data);
    o.hit_ratio = ratio(o.saved_line_ios, o.line_accesses);
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

#[derive(Debug)]
struct Device {
    requests: u64,
    ops: [u64; 2],
    bytes: u64,
    curve: Shards,
}

/// The streaming per-device tracker.
#[derive(Debug)]
pub struct Devices {
    line_bytes: u64,
    rows: usize,
    devices: IntMap<u32, Device>,
    /// The current per-device sample limit.
    limit: u64,
}

impl Devices {
    /// Per-device figures at `line_bytes`; the report keeps `rows` rows.
    pub fn new(line_bytes: u64, rows: usize) -> Devices {
        Devices {
            line_bytes: line_bytes.max(1),
            rows,
            devices: IntMap::default(),
            limit: MAX_DEVICE_LINES,
        }
    }

    /// The per-device limit for `n` devices: the budget's share, a power of two, clamped.
    fn limit_for(n: u64) -> u64 {
        let share = SAMPLE_BUDGET_LINES / n.max(1);
        let pow = if share == 0 {
            0
        } else {
            1u64 << (63 - share.leading_zeros())
        };
        pow.clamp(MIN_DEVICE_LINES, MAX_DEVICE_LINES)
    }

    pub fn observe(&mut self, e: &IoEvent) {
        let op = match e.op {
            Op::Read => 0,
            Op::Write => 1,
            _ => return,
        };
        if !self.devices.contains_key(&e.device) {
            let limit = Self::limit_for(self.devices.len() as u64 + 1);
            if limit < self.limit {
                self.limit = limit;
                for d in self.devices.values_mut() {
                    d.curve.set_max_lines(limit);
                }
            }
            self.devices.insert(
                e.device,
                Device {
                    requests: 0,
                    ops: [0; 2],
                    bytes: 0,
                    curve: Shards::small(self.line_bytes, self.limit),
                },
            );
        }
        let Some(d) = self.devices.get_mut(&e.device) else {
            return;
        };
        d.requests += 1;
        d.ops[op] += 1;
        d.bytes += u64::from(e.len_bytes);
        d.curve.observe(e);
    }

    pub fn finish(&self, header: &TraceHeader, hot: &HotPart) -> DeviceReport {
        let hot90: IntMap<u32, (f64, f64)> = hot
            .per_device_90
            .iter()
            .map(|&(dev, blocks, footprint)| (dev, (blocks, footprint)))
            .collect();
        let mut rows: Vec<DeviceRow> = self
            .devices
            .iter()
            .map(|(&dev, d)| {
                let profile = d.curve.profile(true);
                let footprint = d.curve.footprint_lines().max(profile.max_distance());
                let capacity = header.devices.get(dev as usize).and_then(|i| i.size_bytes);
                let rec = (profile.total() > 0.0)
                    .then(|| recommend(&profile, self.line_bytes, footprint, capacity))
                    .and_then(|r| r.recommended);
                let hit_ratio = rec
                    .as_ref()
                    .map_or(0.0, |p| profile.hit_ratio(p.size_lines));
                let line_accesses = d.curve.line_accesses();
                let (hot_blocks, hot_footprint) = hot90.get(&dev).copied().unwrap_or((0.0, 0.0));
                // The footprint: counted by the hot-data tracker while it is exact (it sees every
                // block), else the device's own curve sample's estimate.
                let (footprint_lines, footprint_exact) = if hot.exact {
                    (hot_footprint.round() as u64, true)
                } else {
                    (d.curve.footprint_lines(), d.curve.rate() >= 1.0)
                };
                DeviceRow {
                    device: dev,
                    device_name: header
                        .devices
                        .get(dev as usize)
                        .map_or_else(|| format!("device {dev}"), |i| i.name.clone()),
                    requests: d.requests,
                    reads: d.ops[0],
                    writes: d.ops[1],
                    read_fraction: ratio(d.ops[0], d.ops[0] + d.ops[1]),
                    bytes: d.bytes,
                    line_accesses,
                    footprint_bytes: footprint_lines.saturating_mul(self.line_bytes),
                    footprint_exact,
                    hot_90_bytes: (hot_blocks * self.line_bytes as f64).round() as u64,
                    hot_exact: hot.exact,
                    recommended_bytes: rec.as_ref().map(|p| p.size_bytes),
                    hit_ratio,
                    saved_line_ios: (hit_ratio * line_accesses as f64).round() as u64,
                    curve_sampling_rate: d.curve.rate(),
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.saved_line_ios
                .cmp(&a.saved_line_ios)
                .then(b.requests.cmp(&a.requests))
                .then(a.device.cmp(&b.device))
        });
        let all = DeviceReport {
            devices: rows.len() as u64,
            line_bytes: self.line_bytes,
            rows,
            others: None,
        };
        all.top(self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::DeviceInfo;

    fn ev(device: u32, block: u64, op: Op) -> IoEvent {
        IoEvent {
            time_nanos: block,
            device,
            offset_bytes: block * 4096,
            len_bytes: 4096,
            op,
            latency_nanos: None,
            pid: None,
        }
    }

    fn header(n: u32) -> TraceHeader {
        let mut h = TraceHeader::new("test");
        h.devices = (0..n)
            .map(|i| DeviceInfo::named(format!("vol{i}")))
            .collect();
        h
    }

    #[test]
    fn rows_rank_by_what_a_cache_saves_and_count_exactly() {
        let mut d = Devices::new(4096, 8);
        let mut hot = HotBlocks::new(4096, 1 << 20);
        let mut feed = |e: IoEvent| {
            d.observe(&e);
            hot.observe(&e);
        };
        // Device 0: 1,000 distinct blocks read once (no reuse). Device 1: 10 blocks read 100
        // times each (a tiny cache serves 99% of it). Device 2: 100 blocks written 5 times.
        for b in 0..1000 {
            feed(ev(0, b, Op::Read));
        }
        for _ in 0..100 {
            for b in 0..10 {
                feed(ev(1, b, Op::Read));
            }
        }
        for _ in 0..5 {
            for b in 0..100 {
                feed(ev(2, b, Op::Write));
            }
        }
        let r = d.finish(&header(3), &hot.part(&header(3), true));
        assert_eq!(r.devices, 3);
        assert_eq!(r.others, None);
        let order: Vec<u32> = r.rows.iter().map(|x| x.device).collect();
        assert_eq!(order, [1, 2, 0], "{r:?}");
        let v1 = &r.rows[0];
        assert_eq!((v1.requests, v1.reads, v1.writes), (1000, 1000, 0));
        assert_eq!(v1.footprint_bytes, 10 * 4096);
        assert!(v1.footprint_exact);
        assert_eq!(v1.hot_90_bytes, 9 * 4096);
        assert_eq!(v1.saved_line_ios, 990, "10 cold misses of 1,000");
        assert_eq!(v1.device_name, "vol1");
        let v2 = &r.rows[1];
        assert_eq!(v2.saved_line_ios, 400, "100 cold misses of 500");
        assert_eq!(v2.read_fraction, 0.0);
        let v0 = &r.rows[2];
        assert_eq!((v0.saved_line_ios, v0.recommended_bytes), (0, None));
        assert_eq!(v0.footprint_bytes, 1000 * 4096);
    }

    #[test]
    fn others_add_up_what_the_rows_leave_out() {
        let mut d = Devices::new(4096, 2);
        let mut hot = HotBlocks::new(4096, 1 << 20);
        for dev in 0..5u32 {
            for _ in 0..=dev {
                for b in 0..4 {
                    let e = ev(dev, b, Op::Read);
                    d.observe(&e);
                    hot.observe(&e);
                }
            }
        }
        let r = d.finish(&header(5), &hot.part(&header(5), true));
        assert_eq!(r.devices, 5);
        assert_eq!(r.rows.len(), 2);
        assert_eq!(r.rows[0].device, 4);
        let o = r.others.as_ref().expect("three devices left over");
        assert_eq!(o.devices, 3);
        assert_eq!(o.requests, 4 * (1 + 2 + 3));
        assert_eq!(o.footprint_bytes, 3 * 4 * 4096);
        // Devices 0..=2 save 0, 4 and 8 line accesses (all but the 4 first touches).
        assert_eq!(o.saved_line_ios, 12);
        assert!((o.hit_ratio - 12.0 / 24.0).abs() < 1e-12);
        // Cutting further folds more rows in, and the totals stay.
        let one = r.top(1);
        let o1 = one.others.as_ref().expect("others");
        assert_eq!(o1.devices, 4);
        assert_eq!(o1.requests, o.requests + r.rows[1].requests);
    }

    #[test]
    fn many_devices_share_one_sample_budget() {
        assert_eq!(Devices::limit_for(1), MAX_DEVICE_LINES);
        assert_eq!(Devices::limit_for(4), MAX_DEVICE_LINES);
        assert_eq!(Devices::limit_for(5), 32768);
        assert_eq!(Devices::limit_for(65_536), MIN_DEVICE_LINES);
        let mut d = Devices::new(4096, 4);
        // A hot-data tracker that must sample (2M blocks over a limit of 64K).
        let mut hot = HotBlocks::new(4096, 1 << 16);
        // 2,000 devices, each touching 1,000 lines: each keeps at most 128 of them.
        for b in 0..1000 {
            for dev in 0..2000 {
                let e = ev(dev, b, Op::Read);
                d.observe(&e);
                hot.observe(&e);
            }
        }
        let total: u64 = d.devices.values().map(|x| x.curve.sampled_lines()).sum();
        assert!(total <= SAMPLE_BUDGET_LINES, "{total}");
        assert!(!hot.is_exact());
        let r = d.finish(&header(2000), &hot.part(&header(2000), true));
        assert_eq!(r.rows.len(), 4);
        assert_eq!(r.others.as_ref().map(|o| o.devices), Some(1996));
        // The estimate from a 128-line sample is near the true 1,000 lines.
        let f = r.rows[0].footprint_bytes as f64 / 4096.0;
        assert!((700.0..1400.0).contains(&f), "{f}");
        assert!(!r.rows[0].footprint_exact);
    }
}
