//! Merging partial results (issue 15, `analyzer_core::merge`) against the unpartitioned run on
//! the sample trace: split by device (the sample's requests spread over three volumes by their
//! offset), by hash slice and by time (heat maps too). What the module says is exact is asserted equal; what
//! it says is an estimate is asserted within the bound measured here.

use analyzer_core::analysis::heatmap::HeatMapReport;
use analyzer_core::cache::sim::SimResult;
use analyzer_core::job::load::{Load, LoadRequest};
use analyzer_core::job::mrc::{Mrc, MrcRequest, Sizes};
use analyzer_core::job::simulate::{Simulate, SimulateRequest};
use analyzer_core::job::{run_events, CacheParams, CacheSize};
use analyzer_core::merge::{hash_slice, merge, Split};
use analyzer_core::stat::StatSummary;
use analyzer_core::{DeviceInfo, IoEvent, TraceHeader};
use blocksight_host::input::{read_events, InputArgs};
use blocksight_tests::data_dir;

const EXTENT: u64 = analyzer_core::merge::SLICE_EXTENT_BYTES;

fn sample() -> (TraceHeader, Vec<IoEvent>) {
    let args = InputArgs {
        inputs: vec![data_dir().join("sample/pgbench.bst")],
        format: None,
        action: None,
        csv_columns: None,
        quiet: true,
    };
    let mut events = Vec::new();
    let read = read_events(&args, |e| events.push(*e)).expect("sample reads");
    (read.header, events)
}

/// The sample as three volumes: each request goes to the device of its 256 MiB region mod 3.
fn three_volumes() -> (TraceHeader, Vec<IoEvent>) {
    let (mut header, mut events) = sample();
    header.devices = ["vol0", "vol1", "vol2"].map(DeviceInfo::named).to_vec();
    for e in &mut events {
        e.device = ((e.offset_bytes >> 28) % 3) as u32;
    }
    (header, events)
}

fn stat(header: &TraceHeader, events: &[IoEvent]) -> StatSummary {
    let request = LoadRequest {
        analysis: false,
        ..LoadRequest::new()
    };
    run_events(Load::new(request).expect("load"), header, events)
        .expect("stat")
        .stat
}

fn sim(header: &TraceHeader, events: &[IoEvent], size_bytes: u64) -> SimResult {
    let cache = CacheParams::choose(
        None,
        Some("lru"),
        None,
        Some("wb"),
        None,
        CacheSize::Bytes(size_bytes),
    )
    .expect("params");
    let job = Simulate::new(SimulateRequest::new(cache)).expect("simulate");
    let mut r = run_events(job, header, events).expect("runs");
    r.runs.remove(0).result
}

fn parts_by(events: &[IoEvent], n: u32, part: impl Fn(&IoEvent) -> u32) -> Vec<Vec<IoEvent>> {
    let mut parts = vec![Vec::new(); n as usize];
    for e in events {
        parts[part(e) as usize].push(*e);
    }
    parts
}

#[test]
fn stat_merged_by_device_equals_the_whole() {
    let (header, events) = three_volumes();
    let whole = stat(&header, &events);
    let parts: Vec<StatSummary> = parts_by(&events, 3, |e| e.device)
        .iter()
        .map(|p| stat(&header, p))
        .collect();
    assert!(
        parts.iter().all(|p| p.events > 10_000),
        "every volume has requests"
    );
    let merged = merge(&parts, Split::Device).expect("merges");
    assert_eq!(merged, whole);
}

#[test]
fn stat_merged_by_time_adds_counts_and_bounds_the_footprint() {
    let (header, events) = sample();
    let whole = stat(&header, &events);
    let mid = events[events.len() / 2].time_nanos;
    let parts: Vec<StatSummary> = parts_by(&events, 2, |e| u32::from(e.time_nanos >= mid))
        .iter()
        .map(|p| stat(&header, p))
        .collect();
    let merged = merge(&parts, Split::Time).expect("merges");
    assert_eq!(
        (
            merged.events,
            merged.reads,
            merged.writes,
            merged.flushes,
            merged.read_bytes,
            merged.write_bytes
        ),
        (
            whole.events,
            whole.reads,
            whole.writes,
            whole.flushes,
            whole.read_bytes,
            whole.write_bytes
        )
    );
    assert_eq!(merged.size_histogram, whole.size_histogram);
    assert_eq!(
        (merged.first_time_nanos, merged.last_time_nanos),
        (whole.first_time_nanos, whole.last_time_nanos)
    );
    assert_eq!(merged.iops, whole.iops);
    assert_eq!(merged.mean_request_bytes, whole.mean_request_bytes);
    // Blocks touched in both halves count twice: an upper bound, said to be one.
    assert!(!merged.footprint_exact);
    assert!(merged.footprint_blocks >= whole.footprint_blocks);
    assert!(parts
        .iter()
        .all(|p| p.footprint_blocks <= whole.footprint_blocks));
    // A stream cut at the boundary loses at most its one request per half.
    assert!((merged.sequential_fraction - whole.sequential_fraction).abs() < 1e-3);
}

#[test]
fn simulations_merged_by_device_equal_one_cache_per_volume() {
    let (header, events) = three_volumes();
    let parts = parts_by(&events, 3, |e| e.device);
    let results: Vec<SimResult> = parts.iter().map(|p| sim(&header, p, 64 << 20)).collect();
    let merged = merge(&results, Split::Device).expect("merges");
    // Each volume its own 64 MiB cache: the counts are the three runs' sums, exactly.
    let hits: u64 = results.iter().map(|r| r.whole.counts.read.line_hits).sum();
    assert_eq!(merged.whole.counts.read.line_hits, hits);
    assert_eq!(merged.capacity_bytes, 3 * (64 << 20));
    let backend: u64 = results
        .iter()
        .map(|r| r.whole.counts.backend.read_ops)
        .sum();
    assert_eq!(merged.whole.counts.backend.read_ops, backend);
    assert!(
        merge(&results, Split::Time).is_err(),
        "time slices start cold"
    );
}

#[test]
fn hash_sliced_simulation_estimates_the_whole_cache() {
    let (header, events) = sample();
    let size = 256u64 << 20;
    let whole = sim(&header, &events, size);
    let exact = whole.whole.ratios.line_hit_ratio.expect("lines");
    let mut errors = Vec::new();
    for k in [2u32, 4, 8] {
        let parts = parts_by(&events, k, |e| hash_slice(e, EXTENT, k));
        let results: Vec<SimResult> = parts
            .iter()
            .map(|p| sim(&header, p, size / u64::from(k)))
            .collect();
        let merged = merge(&results, Split::Hash { slices: k }).expect("merges");
        assert_eq!(
            merged.whole.counts.read.requests + merged.whole.counts.write.requests,
            whole.whole.counts.read.requests + whole.whole.counts.write.requests
        );
        assert_eq!(merged.capacity_bytes, whole.capacity_bytes);
        let estimate = merged.whole.ratios.line_hit_ratio.expect("lines");
        errors.push((k, (estimate - exact).abs()));
    }
    // Measured on this trace (256 MiB LRU, write-back): errors 0.0036, 0.0054, 0.0102 at k = 2, 4,
    // 8; bounded at 0.02, and fewer slices err less.
    eprintln!("hash-sliced line hit ratio error by k: {errors:?}");
    for &(k, err) in &errors {
        assert!(err < 0.02, "k = {k}: error {err} ({errors:?})");
    }
    assert!(errors[0].1 < errors[2].1, "{errors:?}");
}

#[test]
fn hash_sliced_mrcs_merge_by_the_shards_rule() {
    let (header, events) = sample();
    let mut request = MrcRequest::new("lru");
    request.method = Some("exact".into());
    request.sizes = Sizes::Count(32);
    let whole =
        run_events(Mrc::new(request.clone()).expect("mrc"), &header, &events).expect("runs");
    let k = 4;
    let parts: Vec<_> = parts_by(&events, k, |e| hash_slice(e, EXTENT, k))
        .iter()
        .map(|p| run_events(Mrc::new(request.clone()).expect("mrc"), &header, p).expect("runs"))
        .collect();
    let merged = merge(&parts, Split::Hash { slices: k }).expect("merges");
    assert_eq!(merged.line_accesses, whole.line_accesses);
    // The merged curve read at the whole curve's sizes: mean absolute error in miss ratio.
    let at = |s: u64| {
        let p = merged
            .points
            .iter()
            .min_by_key(|p| p.size_lines.abs_diff(s))
            .expect("points");
        p.miss_ratio
    };
    let mae: f64 = whole
        .points
        .iter()
        .map(|p| (at(p.size_lines) - p.miss_ratio).abs())
        .sum::<f64>()
        / whole.points.len() as f64;
    assert!(mae < 0.03, "MAE {mae}");
    assert!(merge(&parts, Split::Device).is_err());
}

fn heat_maps(header: &TraceHeader, events: &[IoEvent]) -> HeatMapReport {
    run_events(Load::new(LoadRequest::new()).expect("load"), header, events)
        .expect("analyze")
        .analysis
        .expect("the analysis ran")
        .heatmaps
}

/// The merged maps equal the whole's, cell by cell, and say so in the numbers that matter.
fn assert_same_maps(merged: &HeatMapReport, whole: &HeatMapReport) {
    assert!(!whole.maps.is_empty());
    let cells = |r: &HeatMapReport| -> u64 {
        r.maps
            .iter()
            .flat_map(|m| m.reads.iter().chain(&m.writes))
            .map(|&c| u64::from(c))
            .sum()
    };
    assert_eq!(cells(merged), cells(whole));
    assert_eq!(merged, whole);
}

#[test]
fn heat_maps_merged_by_device_equal_the_whole() {
    let (header, mut events) = three_volumes();
    // vol2 starts late (its first half moved to vol1), so alone its map has another origin.
    let late = events[events.len() / 2].time_nanos + 1_234_567;
    for e in &mut events {
        if e.device == 2 && e.time_nanos < late {
            e.device = 1;
        }
    }
    let whole = heat_maps(&header, &events);
    assert_eq!(whole.maps.len(), 3);
    let by_device = parts_by(&events, 3, |e| e.device);
    // Parts that share the trace's header keep their device numbers.
    let parts: Vec<HeatMapReport> = by_device.iter().map(|p| heat_maps(&header, p)).collect();
    // The time axis is shared: a volume alone starts at its own first request, often in
    // another bin, and spans less time, so its map is on another grid than the whole's.
    assert!(parts
        .iter()
        .any(|p| p.maps[0].time_bin_nanos != whole.maps[0].time_bin_nanos
            || p.time_origin_nanos != whole.time_origin_nanos));
    assert_same_maps(&merge(&parts, Split::Device).expect("merges"), &whole);
    // Volumes read on their own (each its own device 0, as a partitioned dataset gives them)
    // are numbered in the order given: the header's order gives the whole's numbers.
    let alone: Vec<HeatMapReport> = by_device
        .iter()
        .zip(&header.devices)
        .map(|(p, d)| {
            let mut h = header.clone();
            h.devices = vec![d.clone()];
            let events: Vec<IoEvent> = p.iter().map(|e| IoEvent { device: 0, ..*e }).collect();
            heat_maps(&h, &events)
        })
        .collect();
    assert!(alone.iter().all(|p| p.maps[0].device == 0));
    assert_same_maps(&merge(&alone, Split::Device).expect("merges"), &whole);
}

#[test]
fn heat_maps_merged_by_hash_slice_equal_the_whole() {
    let (header, events) = three_volumes();
    let whole = heat_maps(&header, &events);
    for k in [2u32, 5] {
        let parts: Vec<HeatMapReport> = parts_by(&events, k, |e| hash_slice(e, EXTENT, k))
            .iter()
            .map(|p| heat_maps(&header, p))
            .collect();
        assert_same_maps(
            &merge(&parts, Split::Hash { slices: k }).expect("merges"),
            &whole,
        );
    }
}

#[test]
fn heat_maps_merged_by_time_equal_the_whole() {
    let (header, events) = three_volumes();
    let whole = heat_maps(&header, &events);
    // Cuts at arbitrary times (not at bin boundaries): each slice has its own origin and a
    // finer width than the whole.
    let span = events.last().map_or(0, |e| e.time_nanos) - events[0].time_nanos;
    let cuts = [span / 7 + 12_345, span / 2 + 999, span * 5 / 6 + 1];
    let slice = |e: &IoEvent| {
        let rel = e.time_nanos - events[0].time_nanos;
        cuts.iter().filter(|&&c| rel >= c).count() as u32
    };
    let parts: Vec<HeatMapReport> = parts_by(&events, 4, slice)
        .iter()
        .map(|p| heat_maps(&header, p))
        .collect();
    assert!(parts
        .iter()
        .all(|p| p.maps[0].time_bin_nanos < whole.maps[0].time_bin_nanos));
    assert_same_maps(&merge(&parts, Split::Time).expect("merges"), &whole);
    // Maps made with other bin counts do not merge.
    let mut other = parts.clone();
    other[1].max_time_bins /= 2;
    assert!(merge(&other, Split::Time).is_err());
}
