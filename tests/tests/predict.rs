//! The array model against published measurements, its properties (monotonicity,
//! determinism, RAID penalties), and the `blocksight predict` CLI.
//!
//! Every comparison states the tolerance it reaches; docs/model.md has the table and explains
//! each calibration. The published workloads are reproduced as the benchmarks ran them:
//! bonnie++ 1.03 seeks (3 seeker processes, 8 KiB blocks, 10 % dirtied and written back through
//! the page cache), bonnie++ block reads (8 KiB read(2) calls turned by Linux read-ahead into
//! 128 KiB requests, one in flight and the next prefetched), IOMeter with its default single
//! outstanding I/O.

use analyzer_core::array::device::{DeviceModel, DiskPreset, HddModel};
use analyzer_core::array::{
    cache_warmup_requests, run_synthetic, AccessSpec, ArrayConfig, CacheDevices, CacheTier,
    ControllerModel, Level, Node, ProfileKind, RunResult, SimulatorTier, StandardLevel, Synthetic,
};
use analyzer_core::job::{CacheParams, CacheSize};
use blocksight_tests::{assert_golden, blocksight_json, data_dir, run_blocksight};
use std::path::Path;

fn hdd(p: DiskPreset) -> HddModel {
    match p.model() {
        DeviceModel::Hdd(h) => h,
        DeviceModel::Ssd(_) => panic!("{p:?} is not a hard disk"),
    }
}

fn run(
    cfg: &ArrayConfig,
    spec: AccessSpec,
    span: u64,
    qd: u32,
    requests: u64,
    cache: Option<&mut dyn CacheTier>,
    warm: u64,
) -> RunResult {
    run_synthetic(
        cfg,
        &Synthetic {
            spec,
            span_bytes: span,
            outstanding: qd,
            requests,
            seed: 1,
            cache_warmup_requests: warm,
        },
        cache,
    )
}

/// Relative error of `predicted` against `published`.
fn err(predicted: f64, published: f64) -> f64 {
    (predicted - published) / published
}

fn check(what: &str, predicted: f64, published: f64, tolerance: f64) {
    let e = err(predicted, published);
    eprintln!(
        "{what}: predicted {predicted:.0}, published {published:.0}, error {:+.1}%",
        e * 100.0
    );
    assert!(
        e.abs() <= tolerance,
        "{what}: predicted {predicted:.0} vs published {published:.0} ({:+.1}%, tolerance ±{:.0}%)",
        e * 100.0,
        tolerance * 100.0
    );
}

/// PERC 5/E-class controller: 256 MiB battery-backed write-back cache, no controller
/// read-ahead ("Adaptive" read-ahead only triggers on sequential streams, which the seek test
/// is not; the block-read test relies on the disks' own look-ahead).
fn perc(cache_bytes: u64) -> ControllerModel {
    ControllerModel::hardware(cache_bytes)
}

/// bonnie++ 1.03's seek test: 3 concurrent seeker processes, 8 KiB reads at random block
/// offsets, 10 % of the blocks dirtied and written back (by the page cache, so the seeker does
/// not wait for the write).
fn bonnie_seeks() -> AccessSpec {
    AccessSpec {
        len_bytes: 8192,
        read_fraction: 1.0,
        sequential: false,
        async_write_back_fraction: 0.1,
        align_bytes: 8192,
    }
}

const BONNIE_FILE_BYTES: u64 = 65_000 << 20;

#[test]
fn published_md1000_bonnie_seeks_per_second() {
    // Dell PowerVault MD1000, 72 GB 15K SAS (Seagate Cheetah 15K.5 class), 64 KiB stripe unit.
    for (level, disks, published) in [
        (StandardLevel::Raid1, 2, 436.0),
        (StandardLevel::Raid10, 4, 615.0),
        (StandardLevel::Raid10, 8, 737.0),
        (StandardLevel::Raid10, 14, 821.0),
    ] {
        let cfg = ArrayConfig::standard(
            level,
            disks,
            DiskPreset::Sas15k.model(),
            65536,
            perc(256 << 20),
        )
        .expect("config");
        let r = run(&cfg, bonnie_seeks(), BONNIE_FILE_BYTES, 3, 30_000, None, 0);
        // bonnie++ counts seeks (reads); the write-backs are extra disk work.
        check(
            &format!("MD1000 {disks}-disk {} seeks/s", level.name()),
            r.read_iops,
            published,
            0.15,
        );
    }
}

#[test]
fn published_md1000_bonnie_sequential_block_read() {
    for (level, disks, published_kb) in [
        (StandardLevel::Raid1, 2, 97_459.0),
        (StandardLevel::Raid10, 4, 246_490.0),
        (StandardLevel::Raid10, 8, 423_983.0),
    ] {
        check(
            &format!("MD1000 {disks}-disk {} block read KB/s", level.name()),
            md1000_block_read_kb(level, disks, perc(256 << 20)),
            published_kb,
            0.12,
        );
    }
}

/// bonnie++'s block read on the MD1000's 15K disks behind `controller`, in KB/s: Linux
/// read-ahead turns bonnie's 8 KiB read(2) calls into 128 KiB requests with the next window
/// prefetched while the current one is consumed (two in flight), one pass over the file.
fn md1000_block_read_kb(level: StandardLevel, disks: u32, controller: ControllerModel) -> f64 {
    let spec = AccessSpec {
        len_bytes: 131072,
        read_fraction: 1.0,
        sequential: true,
        async_write_back_fraction: 0.0,
        align_bytes: 131072,
    };
    let cfg = ArrayConfig::standard(level, disks, DiskPreset::Sas15k.model(), 65536, controller)
        .expect("config");
    let r = run(
        &cfg,
        spec,
        BONNIE_FILE_BYTES,
        2,
        BONNIE_FILE_BYTES / 131072,
        None,
        0,
    );
    r.bytes_per_sec / 1024.0
}

/// The LSI Nytro rig's disks: 15K SAS on a 6 Gb/s link (the Nytro MegaRAID cards and the 15K
/// drives sold with them are 6 Gb/s SAS; the preset's Cheetah 15K.5 is 3 Gb/s).
fn nytro_array() -> ArrayConfig {
    let mut h = hdd(DiskPreset::Sas15k);
    h.interface_rate_bytes_per_sec = 600e6;
    ArrayConfig::standard(
        StandardLevel::Raid5,
        10,
        DeviceModel::Hdd(h),
        65536,
        perc(1 << 30),
    )
    .expect("config")
}

#[test]
fn published_nytro_raid5_16k_sequential_read_qd1() {
    let spec = AccessSpec {
        len_bytes: 16384,
        read_fraction: 1.0,
        sequential: true,
        async_write_back_fraction: 0.0,
        align_bytes: 16384,
    };
    let r = run(&nytro_array(), spec, 200_000_000_000, 1, 40_000, None, 0);
    check(
        "Nytro RAID 5 x10 16 KiB sequential read QD1 IOPS",
        r.iops,
        5503.0,
        0.05,
    );
}

#[test]
fn published_nytro_cache_on_twice_as_much_hot_data() {
    // 200 GB of uniformly hot data read as 16 KiB requests at one outstanding I/O; 100 GB of
    // flash cache (SATA-SSD class) holds half of it. Published: "only about 1.5x".
    let mut cfg = nytro_array();
    let mut ssd = match DiskPreset::SataSsd.model() {
        DeviceModel::Ssd(s) => s,
        DeviceModel::Hdd(_) => unreachable!(),
    };
    ssd.capacity_bytes = 100_000_000_000;
    cfg = cfg
        .with_cache(CacheDevices {
            devices: vec![DeviceModel::Ssd(ssd)],
            layout: Node::over_disks(Level::Raid0, 65536, 0, 1),
        })
        .expect("cache");
    let spec = AccessSpec {
        len_bytes: 16384,
        read_fraction: 1.0,
        sequential: false,
        async_write_back_fraction: 0.0,
        align_bytes: 16384,
    };
    let span = 200_000_000_000;
    let base = run(&cfg, spec, span, 1, 8_000, None, 0);
    // The simulator users get: LRU, 64 KiB lines, write-through (allocate on read miss).
    let (mut tier, factor) = tier(
        CacheParams::choose(
            None,
            Some("lru"),
            Some(65536),
            Some("wt"),
            None,
            CacheSize::Bytes(100_000_000_000),
        )
        .expect("cache"),
    );
    let warm = cache_warmup_requests(span, 100_000_000_000, 65536, spec.len_bytes) * factor;
    let cached = run(&cfg, spec, span, 1, 8_000, Some(&mut tier), warm);
    check(
        "Nytro 100 GB cache on 200 GB hot data, speed-up x100",
        100.0 * cached.iops / base.iops,
        150.0,
        0.40,
    );
}

fn cachecade() -> (ArrayConfig, ArrayConfig) {
    let base = ArrayConfig::standard(
        StandardLevel::Raid1,
        2,
        DiskPreset::Sata7k2.model(),
        65536,
        perc(512 << 20),
    )
    .expect("config");
    let mut ssd = match DiskPreset::SataSsd.model() {
        DeviceModel::Ssd(s) => s,
        DeviceModel::Hdd(_) => unreachable!(),
    };
    ssd.capacity_bytes = 120_000_000_000;
    let cached = base
        .clone()
        .with_cache(CacheDevices {
            devices: vec![DeviceModel::Ssd(ssd); 2],
            layout: Node::over_disks(Level::Raid1, 0, 0, 2),
        })
        .expect("cache");
    (base, cached)
}

/// The cache tier `blocksight predict` and the web app build for these settings, and how many
/// times more warm-up its admission rule needs.
fn tier(params: CacheParams) -> (SimulatorTier, u64) {
    let cfg = params.sim_config(None).expect("valid cache");
    let factor = SimulatorTier::warmup_factor(&cfg);
    (SimulatorTier::new(&cfg, "test").expect("tier"), factor)
}

fn cachecade_run(span: u64, requests: u64) -> RunResult {
    let (_, cfg) = cachecade();
    // `--preset cachecade1`: the read-only cache with promotion on the second read.
    let (mut tier, factor) = tier(
        CacheParams::choose(
            Some("cachecade1"),
            None,
            None,
            None,
            None,
            CacheSize::Bytes(120_000_000_000),
        )
        .expect("preset"),
    );
    let spec = ProfileKind::RandRead4k.spec();
    let warm = cache_warmup_requests(span, 120_000_000_000, 65536, spec.len_bytes) * factor;
    run(&cfg, spec, span, 1, requests, Some(&mut tier), warm)
}

#[test]
fn published_cachecade_1tb_span() {
    check(
        "CacheCade 1 TB span IOPS",
        cachecade_run(1_000_000_000_000, 6_000).iops,
        119.0,
        0.20,
    );
}

#[test]
fn published_cachecade_300gb_span() {
    check(
        "CacheCade 300 GB span IOPS",
        cachecade_run(300_000_000_000, 6_000).iops,
        218.0,
        0.20,
    );
}

#[test]
fn published_cachecade_1gb_span_is_cache_bound() {
    let r = cachecade_run(1_000_000_000, 60_000);
    // Everything hits: the HDDs are idle and the cache path sets the rate. At IOMeter's single
    // outstanding I/O the model is bound by SSD + controller latency and predicts about half
    // the published rate (docs/model.md discusses why).
    let array_busy = r
        .disks
        .iter()
        .filter(|d| d.tier == analyzer_core::array::Tier::Array)
        .map(|d| d.utilisation)
        .fold(0.0, f64::max);
    let cache_busy = r
        .disks
        .iter()
        .filter(|d| d.tier == analyzer_core::array::Tier::Cache)
        .map(|d| d.utilisation)
        .fold(0.0, f64::max);
    assert!(
        array_busy < 0.01 && cache_busy > array_busy,
        "array {array_busy}, cache {cache_busy}"
    );
    check("CacheCade 1 GB span IOPS", r.iops, 22_955.0, 0.60);
}

#[test]
fn more_disks_raise_random_read_iops_until_a_ceiling() {
    let array = |level, disks, controller| {
        ArrayConfig::standard(level, disks, DiskPreset::Sas10k.model(), 65536, controller)
            .expect("config")
    };
    let rand_read = |cfg: &ArrayConfig, qd: u32| {
        run(
            cfg,
            ProfileKind::RandRead4k.spec(),
            100 << 30,
            qd,
            8_000,
            None,
            0,
        )
        .iops
    };
    // One disk alone: in FIFO order at depth 1, and at its best with 32 commands to reorder.
    let one = array(StandardLevel::Jbod, 1, ControllerModel::software());
    let (one_qd1, one_qd32) = (rand_read(&one, 1), rand_read(&one, 32));
    assert!(one_qd32 > 2.0 * one_qd1, "{one_qd32:.0} vs {one_qd1:.0}");
    for level in [
        StandardLevel::Raid0,
        StandardLevel::Raid5,
        StandardLevel::Raid10,
    ] {
        let mut last = 0.0;
        for disks in (4..=12).step_by(2) {
            let iops = rand_read(&array(level, disks, ControllerModel::software()), 32);
            let n = f64::from(disks);
            // Every disk holds data and serves reads: 32 outstanding keep each one busy with
            // at least one command most of the time, so the array beats n disks at depth 1
            // (each disk is idle with probability (1 - 1/n)^32, 6 % at 12 disks), and it cannot
            // beat n disks each reordering 32 commands.
            assert!(
                iops >= 0.9 * n * one_qd1 && iops <= n * one_qd32,
                "{} with {disks} disks: {iops:.0} IOPS outside [0.9 × {disks} × {one_qd1:.0}, \
                 {disks} × {one_qd32:.0}]",
                level.name()
            );
            assert!(
                iops > last * 1.05,
                "{} with {disks} disks: {iops:.0} vs {last:.0} with two fewer",
                level.name()
            );
            last = iops;
        }
    }
    // Behind a controller that handles at most 3,000 commands per second the disks add IOPS
    // until the ceiling, then none.
    let mut capped = ControllerModel::software();
    capped.max_iops = Some(3_000.0);
    for disks in (4..=12).step_by(2) {
        let free = rand_read(
            &array(StandardLevel::Raid0, disks, ControllerModel::software()),
            32,
        );
        let iops = rand_read(&array(StandardLevel::Raid0, disks, capped.clone()), 32);
        let want = free.min(3_000.0);
        assert!(
            (iops - want).abs() <= 0.03 * want,
            "{disks} disks behind the ceiling: {iops:.0} IOPS, expected min({free:.0}, 3000)"
        );
    }
}

#[test]
fn higher_queue_depth_never_lowers_iops_until_saturation() {
    for (level, disk) in [
        (StandardLevel::Raid5, DiskPreset::Sata7k2),
        (StandardLevel::Raid10, DiskPreset::Sas15k),
        (StandardLevel::Raid0, DiskPreset::SataSsd),
    ] {
        let cfg = ArrayConfig::standard(level, 4, disk.model(), 65536, ControllerModel::software())
            .expect("config");
        let mut last = 0.0;
        let mut at_qd1 = 0.0;
        for qd in [1, 2, 4, 8, 16, 32, 64] {
            let r = run(
                &cfg,
                ProfileKind::Oltp8k.spec(),
                50 << 30,
                qd,
                8_000,
                None,
                0,
            );
            assert!(
                r.iops >= last * 0.97,
                "{} on {disk:?} QD{qd}: {:.0} < {last:.0}",
                level.name(),
                r.iops
            );
            if qd == 1 {
                at_qd1 = r.iops;
            }
            last = r.iops;
        }
        // One request at a time keeps one of the 4 disks busy; 64 keep all of them busy and
        // give each a queue to reorder.
        assert!(
            last > 2.0 * at_qd1,
            "{} on {disk:?}: QD64 {last:.0} vs QD1 {at_qd1:.0}",
            level.name()
        );
    }
}

#[test]
fn same_seed_same_prediction_and_different_seed_differs() {
    let cfg = ArrayConfig::standard(
        StandardLevel::Raid6,
        6,
        DiskPreset::Sata7k2.model(),
        65536,
        perc(64 << 20),
    )
    .expect("config");
    let a = run(&cfg, ProfileKind::Sql80.spec(), 10 << 30, 8, 5_000, None, 0);
    let b = run(&cfg, ProfileKind::Sql80.spec(), 10 << 30, 8, 5_000, None, 0);
    assert_eq!(a, b);
    let c = run_synthetic(
        &cfg,
        &Synthetic {
            spec: ProfileKind::Sql80.spec(),
            span_bytes: 10 << 30,
            outstanding: 8,
            requests: 5_000,
            seed: 2,
            cache_warmup_requests: 0,
        },
        None,
    );
    assert_ne!(a.iops, c.iops);
}

#[test]
fn raid5_small_write_penalty_is_about_four_disk_ios() {
    // Write-through, 8 disks at high queue depth: a 4 KiB write costs RMW = 2 reads + 2 writes,
    // so RAID 5 random-write IOPS ≈ RAID 0 random-read IOPS / 4. A little worse in practice: each
    // write lands where its read just was, and the sector is back under the head only after
    // most of a revolution.
    let r0 = ArrayConfig::standard(
        StandardLevel::Raid0,
        8,
        DiskPreset::Sas15k.model(),
        65536,
        ControllerModel::software(),
    )
    .expect("r0");
    let r5 = ArrayConfig::standard(
        StandardLevel::Raid5,
        8,
        DiskPreset::Sas15k.model(),
        65536,
        ControllerModel::software(),
    )
    .expect("r5");
    let reads = run(
        &r0,
        ProfileKind::RandRead4k.spec(),
        40 << 30,
        64,
        20_000,
        None,
        0,
    )
    .iops;
    let writes = run(
        &r5,
        ProfileKind::RandWrite4k.spec(),
        40 << 30,
        64,
        20_000,
        None,
        0,
    )
    .iops;
    let ratio = reads / writes;
    assert!(
        (3.5..=5.5).contains(&ratio),
        "RAID 0 reads {reads:.0} / RAID 5 writes {writes:.0} = {ratio:.2}"
    );
    // RAID 10: each write costs two disk writes.
    let r10 = ArrayConfig::standard(
        StandardLevel::Raid10,
        8,
        DiskPreset::Sas15k.model(),
        65536,
        ControllerModel::software(),
    )
    .expect("r10");
    let w10 = run(
        &r10,
        ProfileKind::RandWrite4k.spec(),
        40 << 30,
        64,
        20_000,
        None,
        0,
    )
    .iops;
    assert!(
        w10 > writes * 1.4,
        "RAID 10 writes {w10:.0} vs RAID 5 {writes:.0}"
    );
}

#[test]
fn degraded_raid5_reads_slower_and_rebuild_is_estimated() {
    let healthy = ArrayConfig::standard(
        StandardLevel::Raid5,
        6,
        DiskPreset::Sas10k.model(),
        65536,
        ControllerModel::software(),
    )
    .expect("cfg");
    let mut degraded = healthy.clone();
    degraded.layout.failed = vec![1];
    let h = run(
        &healthy,
        ProfileKind::RandRead4k.spec(),
        100 << 30,
        32,
        10_000,
        None,
        0,
    );
    let d = run(
        &degraded,
        ProfileKind::RandRead4k.spec(),
        100 << 30,
        32,
        10_000,
        None,
        0,
    );
    assert!(
        d.iops < h.iops * 0.85,
        "degraded {:.0} vs healthy {:.0}",
        d.iops,
        h.iops
    );
    assert!(healthy.rebuild_estimate_secs(0.0).is_none());
    let idle = degraded.rebuild_estimate_secs(0.0).expect("degraded");
    let busy = degraded.rebuild_estimate_secs(0.5).expect("degraded");
    // 600 GB at the disk's mean media rate (~170 MB/s): about an hour idle, twice that at 50 %.
    assert!((2_500.0..5_000.0).contains(&idle), "{idle}");
    assert!((busy / idle - 2.0).abs() < 1e-9);
}

#[test]
fn write_back_cache_absorbs_bursts_and_ssd_write_state_matters() {
    let wt = ArrayConfig::standard(
        StandardLevel::Raid5,
        4,
        DiskPreset::Sata7k2.model(),
        65536,
        ControllerModel::software(),
    )
    .expect("cfg");
    let wb = ArrayConfig::standard(
        StandardLevel::Raid5,
        4,
        DiskPreset::Sata7k2.model(),
        65536,
        perc(1 << 30),
    )
    .expect("cfg");
    let spec = ProfileKind::RandWrite4k.spec();
    // 2,000 writes fit in 1 GiB of cache: the host sees controller latency, not disks.
    let a = run(&wt, spec, 10 << 30, 4, 2_000, None, 0);
    let b = run(&wb, spec, 10 << 30, 4, 2_000, None, 0);
    assert!(
        b.latency.mean_nanos * 20.0 < a.latency.mean_nanos,
        "wb {} vs wt {}",
        b.latency.mean_nanos,
        a.latency.mean_nanos
    );
    let nvme = |fresh: bool| {
        let mut m = match DiskPreset::Nvme.model() {
            DeviceModel::Ssd(s) => s,
            DeviceModel::Hdd(_) => unreachable!(),
        };
        if fresh {
            m.write_state = analyzer_core::array::device::SsdWriteState::Fresh;
        }
        ArrayConfig::standard(
            StandardLevel::Raid0,
            1,
            DeviceModel::Ssd(m),
            65536,
            ControllerModel::software(),
        )
        .expect("cfg")
    };
    let steady = run(&nvme(false), spec, 1 << 40, 128, 40_000, None, 0).iops;
    let fresh = run(&nvme(true), spec, 1 << 40, 128, 40_000, None, 0).iops;
    // Datasheet steady state (81.5k) and a fresh drive several times faster.
    assert!((70_000.0..95_000.0).contains(&steady), "{steady}");
    assert!(fresh > 3.0 * steady, "fresh {fresh} vs steady {steady}");
}

#[test]
fn every_array_fixture_predicts_through_the_cli() {
    let dir = data_dir().join("array");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("fixture dir") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        seen += 1;
        let mut args: Vec<std::ffi::OsString> = vec![
            "predict".into(),
            "--array".into(),
            path.clone().into_os_string(),
        ];
        args.extend(
            [
                "--profile",
                "oltp-8k",
                "--span",
                "20GiB",
                "--qd",
                "8",
                "--requests",
                "3000",
                "--json",
            ]
            .map(Into::into),
        );
        let out = run_blocksight(&args);
        assert!(
            out.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let c = &v["configs"][0];
        let iops = c["without_cache"]["iops"].as_f64().expect("iops");
        assert!(iops > 10.0, "{}: {iops}", path.display());
        // Closed loop at 8 outstanding I/Os: Little's law ties IOPS to the mean latency.
        let mean = c["without_cache"]["latency"]["mean_nanos"]
            .as_f64()
            .expect("latency");
        let little = 8.0 / (mean / 1e9);
        assert!(
            (iops / little - 1.0).abs() < 0.1,
            "{}: {iops} IOPS vs 8 / {mean} ns = {little}",
            path.display()
        );
        if path
            .file_name()
            .is_some_and(|n| n == "raid50-degraded.json")
        {
            assert!(c["rebuild_secs"].as_f64().is_some_and(|s| s > 1000.0));
        }
    }
    assert!(seen >= 5);
}

#[test]
fn cli_text_output_is_stable() {
    let out = run_blocksight([
        "predict",
        "--profile",
        "sql-90-10",
        "--span",
        "50GiB",
        "--layout",
        "raid6",
        "--disks",
        "6",
        "--disk",
        "sas-10k",
        "--qd",
        "16",
        "--requests",
        "4000",
        "--controller-cache",
        "256MiB",
        "--cache-size",
        "8GiB",
        "--mode",
        "wb",
        "--curve",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains("speed-up"));
    assert!(text.contains("assumptions"));
    assert_golden(&data_dir().join("array/predict_text_golden.txt"), &text);
}

#[test]
fn cli_replays_a_trace_open_and_closed_loop() {
    let trace = data_dir().join("sample/pgbench.bst");
    let mut speeds = Vec::new();
    for extra in [
        vec!["--replay", "--speed", "2"],
        vec!["--qd", "4"],
        vec!["--replay", "--speed", "4"],
    ] {
        let mut args = vec![
            "predict".to_string(),
            trace.display().to_string(),
            "-q".into(),
        ];
        args.extend(
            [
                "--layout", "raid10", "--disks", "4", "--disk", "nvme", "--json",
            ]
            .map(String::from),
        );
        args.extend(extra.iter().map(|s| s.to_string()));
        let out = run_blocksight(&args);
        assert!(
            out.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let measured = v["configs"][0]["without_cache"]["requests"]
            .as_u64()
            .expect("requests");
        let replayed = v["replayed_requests"].as_u64().expect("replayed");
        // Every replayed request is measured (closed loop measures from the first).
        assert_eq!(
            replayed, 106_356,
            "{extra:?}: the sample's reads and writes"
        );
        let without = &v["configs"][0]["without_cache"];
        if extra[0] == "--replay" {
            // An open loop measures every request it issued.
            assert_eq!(measured, replayed, "{extra:?}");
        } else {
            // A closed loop stops measuring when the trace runs out, so at most its depth of
            // requests (the drain, no longer at full depth) is left out; and with 4 always in
            // flight, Little's law ties the rate to the mean latency.
            assert!(
                (replayed - 4..=replayed).contains(&measured),
                "{extra:?}: {measured} of {replayed} measured"
            );
            let iops = without["iops"].as_f64().expect("iops");
            let mean_secs = without["latency"]["mean_nanos"].as_f64().expect("mean") / 1e9;
            assert!(
                (iops * mean_secs / 4.0 - 1.0).abs() < 0.02,
                "{iops} IOPS × {mean_secs} s = {} outstanding, not 4",
                iops * mean_secs
            );
        }
        assert!(v["workload"]
            .as_str()
            .is_some_and(|w| w.contains("trace replay")));
        speeds.push(
            v["configs"][0]["without_cache"]["iops"]
                .as_f64()
                .expect("iops"),
        );
    }
    // Replayed twice as fast as speed 2, an open loop offers (and, on NVMe far from
    // saturation, completes) twice the IOPS.
    let (x2, x4) = (speeds[0], speeds[2]);
    assert!(
        (x4 / x2 - 2.0).abs() < 0.05,
        "speed 4: {x4} IOPS vs speed 2: {x2}"
    );
}

#[test]
fn cli_errors_name_the_problem() {
    let sample = data_dir().join("sample/pgbench.bst").display().to_string();
    // Each command line, split on spaces (SAMPLE is the bundled sample's path), and a part of
    // the message it must give.
    let profile = "predict --profile 4k-random-read --layout raid5 --disks 4";
    for (line, needle) in [
        (
            "predict --profile 4k-random-read --layout raid7 --disks 4 --disk sas-15k".to_string(),
            "raid7",
        ),
        (
            "predict --profile 4k-random-read --layout raid5 --disks 2 --disk sas-15k".to_string(),
            "at least 3",
        ),
        (
            "predict --profile nope --layout raid5 --disks 4 --disk sas-15k".to_string(),
            "nope",
        ),
        (format!("{profile} --disk floppy"), "floppy"),
        (
            "predict --layout raid5 --disks 4 --disk sas-15k".to_string(),
            "--profile",
        ),
        // Settings that would change nothing are refused, never ignored: the cache's without
        // --cache-size, and a layout's timing with --md-members (VROC, which is md, passes).
        (
            format!("{profile} --disk sas-15k --policy arc"),
            "--cache-size",
        ),
        (
            format!("{profile} --disk sas-15k --cache-disk nvme"),
            "--cache-size",
        ),
        (
            "predict SAMPLE --md-members --layout raid5 --disks 4 --controller perc-h730 --max-iops 1000"
                .to_string(),
            "--controller, --max-iops do not change",
        ),
        (
            "predict SAMPLE --layout raid5 --disks 4 --disk nvme --span 1GiB --seed 2".to_string(),
            "--span, --seed set a synthetic --profile's workload",
        ),
        (
            format!("{profile} --disk nvme --window 1s..2s"),
            "--window",
        ),
    ] {
        let args: Vec<&str> = line
            .split(' ')
            .map(|a| if a == "SAMPLE" { sample.as_str() } else { a })
            .collect();
        let out = run_blocksight(&args);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn controller_ceilings_are_named_as_the_bottleneck() {
    let mut ctrl = ControllerModel::software();
    ctrl.max_iops = Some(20_000.0);
    let cfg = ArrayConfig::standard(
        StandardLevel::Raid0,
        4,
        DiskPreset::SataSsd.model(),
        65536,
        ctrl,
    )
    .expect("cfg");
    let r = run(
        &cfg,
        ProfileKind::RandRead4k.spec(),
        100 << 30,
        64,
        40_000,
        None,
        0,
    );
    assert!((r.iops - 20_000.0).abs() / 20_000.0 < 0.03, "{}", r.iops);
    assert!(r.bottleneck.contains("ceiling"), "{}", r.bottleneck);
    let mut ctrl = ControllerModel::software();
    ctrl.parity_chunks_per_sec = Some(5_000.0);
    let cfg = ArrayConfig::standard(
        StandardLevel::Raid5,
        6,
        DiskPreset::SataSsd.model(),
        65536,
        ctrl,
    )
    .expect("cfg");
    let r = run(
        &cfg,
        ProfileKind::RandWrite4k.spec(),
        100 << 30,
        64,
        20_000,
        None,
        0,
    );
    // One parity chunk per small write.
    assert!(r.iops < 5_200.0, "{}", r.iops);
    assert!(r.bottleneck.contains("parity"), "{}", r.bottleneck);
}

#[test]
fn controller_read_ahead_speeds_up_a_single_sequential_stream() {
    let spec = AccessSpec {
        len_bytes: 65536,
        read_fraction: 1.0,
        sequential: true,
        async_write_back_fraction: 0.0,
        align_bytes: 65536,
    };
    let mut ctrl = perc(256 << 20);
    let plain = ArrayConfig::standard(
        StandardLevel::Raid5,
        8,
        DiskPreset::Sas10k.model(),
        65536,
        ctrl.clone(),
    )
    .expect("cfg");
    ctrl.read_ahead_bytes = 4 << 20;
    let ahead = ArrayConfig::standard(
        StandardLevel::Raid5,
        8,
        DiskPreset::Sas10k.model(),
        65536,
        ctrl,
    )
    .expect("cfg");
    let a = run(&plain, spec, 50 << 30, 1, 20_000, None, 0);
    let b = run(&ahead, spec, 50 << 30, 1, 20_000, None, 0);
    assert!(
        b.bytes_per_sec > 1.5 * a.bytes_per_sec,
        "read-ahead {:.0} vs none {:.0}",
        b.bytes_per_sec,
        a.bytes_per_sec
    );
}

#[test]
fn open_loop_replay_follows_the_speed_factor() {
    use analyzer_core::array::{ReplayMode, TraceReplay};
    use analyzer_core::{IoEvent, Op};
    let cfg = ArrayConfig::standard(
        StandardLevel::Raid10,
        4,
        DiskPreset::Sas15k.model(),
        65536,
        ControllerModel::software(),
    )
    .expect("cfg");
    // 300 random 8 KiB reads per second for 20 s.
    let mut gen = analyzer_core::array::Generator::new(ProfileKind::Sql90.spec(), 20 << 30, 7);
    let events: Vec<IoEvent> = (0..6_000u64)
        .map(|i| {
            let g = gen.next_request();
            IoEvent {
                time_nanos: i * 3_333_333,
                device: 0,
                offset_bytes: g.offset_bytes,
                len_bytes: g.len_bytes,
                op: if g.write { Op::Write } else { Op::Read },
                latency_nanos: None,
                pid: None,
            }
        })
        .collect();
    let replay = |speed: f64| {
        let mut r = TraceReplay::new(&cfg, ReplayMode::Open { speed }, None);
        events.iter().for_each(|e| r.observe(e));
        r.finish()
    };
    let slow = replay(1.0);
    let fast = replay(2.0);
    assert!((slow.iops - 300.0).abs() < 15.0, "{}", slow.iops);
    assert!((fast.iops - 600.0).abs() < 30.0, "{}", fast.iops);
    assert!(
        fast.latency.mean_nanos > slow.latency.mean_nanos,
        "queueing grows with load"
    );
}

#[test]
fn cli_cache_tier_on_a_trace_and_degraded_raid10() {
    let trace = data_dir().join("sample/pgbench.bst");
    let out = run_blocksight([
        "predict",
        &trace.display().to_string(),
        "-q",
        "--layout",
        "raid10",
        "--disks",
        "4",
        "--disk",
        "sata-7k2",
        "--qd",
        "4",
        "--cache-size",
        "8GiB",
        "--preset",
        "bcache",
        "--failed",
        "1",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let c = &v["configs"][0];
    let (without, with) = (&c["without_cache"], &c["with_cache"]);
    let iops = |r: &serde_json::Value| r["iops"].as_f64().expect("iops");
    // Commands the array's member disks served (the cache devices' are not counted).
    let member_io = |r: &serde_json::Value| {
        let secs = r["elapsed_nanos"].as_f64().expect("elapsed") / 1e9;
        let per_sec: f64 = r["disks"]
            .as_array()
            .expect("disks")
            .iter()
            .filter(|d| d["tier"] == "array")
            .map(|d| d["iops"].as_f64().expect("iops"))
            .sum();
        (per_sec * secs).round() as u64
    };
    // The speed-up is the ratio of the two runs, and a cache that hits takes I/O off the
    // member disks.
    let speedup = c["speedup"].as_f64().expect("speedup");
    assert!(
        (speedup - iops(with) / iops(without)).abs() < 1e-9,
        "{speedup}"
    );
    assert!(
        member_io(with) < member_io(without),
        "member I/O with the cache {} vs without {}",
        member_io(with),
        member_io(without)
    );
    assert!(
        c["description"]
            .as_str()
            .is_some_and(|a| a.contains("DEGRADED")),
        "{}",
        c["description"]
    );
    // The replacement 2 TB SATA disk cannot be written faster than its outer-zone media rate
    // (140 MB/s, docs/model.md), and a busier array leaves less disk time to the rebuild.
    let rebuild =
        |v: &serde_json::Value| v["configs"][0]["rebuild_secs"].as_f64().expect("rebuild");
    let DeviceModel::Hdd(sata) = DiskPreset::Sata7k2.model() else {
        panic!("sata-7k2 is a hard disk")
    };
    let fastest = sata.capacity_bytes as f64 / sata.outer_rate_bytes_per_sec;
    assert!(rebuild(&v) > fastest, "{} s vs {fastest} s", rebuild(&v));
    let light = run_blocksight([
        "predict",
        &trace.display().to_string(),
        "-q",
        "--layout",
        "raid10",
        "--disks",
        "4",
        "--disk",
        "sata-7k2",
        "--replay",
        "--speed",
        "0.1",
        "--failed",
        "1",
        "--json",
    ]);
    let light: serde_json::Value = serde_json::from_slice(&light.stdout).expect("json");
    assert!(
        rebuild(&light) < rebuild(&v) && rebuild(&light) > fastest,
        "rebuild under a tenth of the trace's rate: {} s; under 4 outstanding: {} s",
        rebuild(&light),
        rebuild(&v)
    );
    let bad = run_blocksight([
        "predict",
        "--profile",
        "4k-random-read",
        "--layout",
        "raid10",
        "--disks",
        "4",
        "--disk",
        "sas-15k",
        "--failed",
        "0,1",
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("failed"));
}

/// `--rebuilding`: md rebuilds the failed disk beside the trace's load. The members carry the
/// rebuild's reads and writes, the load is slower than on the degraded array alone, the
/// rebuild time is the measured speed's, md's minimum speed changes it, and a hardware
/// controller or an array with nothing failed is refused with the reason.
#[test]
fn cli_md_rebuilds_beside_the_load() {
    let trace = data_dir().join("sample/pgbench.bst").display().to_string();
    let args = |extra: &[&str]| {
        let mut a: Vec<String> = [
            "predict", &trace, "-q", "--layout", "raid5", "--disks", "6", "--disk", "sas-10k",
            "--qd", "4", "--failed", "2", "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let degraded = blocksight_json("degraded", args(&[]));
    let rebuilding = blocksight_json("rebuilding", args(&["--rebuilding"]));
    let forced = blocksight_json(
        "rebuilding at a high minimum",
        args(&["--rebuilding", "--md-sync-speed-min", "500000"]),
    );
    let run = |v: &serde_json::Value| v["configs"][0]["without_cache"].clone();
    assert!(run(&degraded).get("rebuild").is_none());
    let r = run(&rebuilding)["rebuild"].clone();
    let speed = r["bytes_per_sec"].as_f64().expect("rebuild speed");
    let member = r["member_capacity_bytes"].as_f64().expect("member bytes");
    assert!(r["yields"].as_u64().expect("yields") > 0, "{r}");
    let secs = rebuilding["configs"][0]["rebuild_secs"]
        .as_f64()
        .expect("secs");
    assert!(
        (secs - member / speed).abs() / secs < 1e-9,
        "{secs} {member} {speed}"
    );
    let iops = |v: &serde_json::Value| run(v)["iops"].as_f64().expect("iops");
    assert!(
        iops(&degraded) > iops(&rebuilding),
        "{} {}",
        iops(&degraded),
        iops(&rebuilding)
    );
    let forced_speed = run(&forced)["rebuild"]["bytes_per_sec"]
        .as_f64()
        .expect("speed");
    assert!(forced_speed > speed && iops(&forced) < iops(&rebuilding));
    // The replacement (disk 2) is written, never read; the others are read.
    let disks = run(&rebuilding)["disks"].as_array().expect("disks").clone();
    assert_eq!(disks[2]["read_bytes"].as_u64(), Some(0));
    let rebuilt = r["member_bytes"].as_u64().expect("rebuilt");
    assert!(disks[2]["write_bytes"].as_u64().expect("writes") >= rebuilt);
    assert!(disks[0]["read_bytes"].as_u64().expect("reads") >= rebuilt);
    let text = run_blocksight(
        args(&["--rebuilding"])
            .into_iter()
            .filter(|a| a != "--json"),
    );
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(text.contains("md rebuilt"), "{text}");
    let mut nothing_failed = args(&["--rebuilding"]);
    let i = nothing_failed
        .iter()
        .position(|x| x == "--failed")
        .expect("--failed");
    nothing_failed.drain(i..i + 2);
    for (a, why) in [
        (
            args(&["--rebuilding", "--controller", "perc-h730"]),
            "controller",
        ),
        (nothing_failed, "nothing to rebuild"),
        (args(&["--md-sync-speed-max", "5000"]), "--rebuilding"),
    ] {
        let out = run_blocksight(&a);
        assert!(!out.status.success(), "{a:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{a:?}: {err}");
    }
}

/// `blocksight predict EXTRA COMMON` on a stored lab workload `dir`, its JSON.
fn predict_json(dir: &Path, extra: &[&str], common: &[String]) -> serde_json::Value {
    let mut args = vec!["predict".to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(common.iter().cloned());
    blocksight_json(&dir.display().to_string(), &args)
}

/// Issue 10: for software RAID 5/6 the timing engine sends the members what md's stripe model
/// (`predict --md-members`) says md sends them, per member, for the real bios stored from the
/// lab (tests/data/lab, docs/validation.md). Both run with one bio in flight, so md's gather
/// window is one bio in each.
#[test]
fn issue_10_timing_engine_member_io_equals_md_members_on_lab_bios() {
    let lab = data_dir().join("lab");
    let mut dirs: Vec<_> = std::fs::read_dir(&lab)
        .expect("tests/data/lab")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("md5-") || n.starts_with("md6-"))
        })
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 5, "md RAID 5/6 lab workloads: {}", dirs.len());
    let num = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let mut all_writes = 0.0;
    for dir in dirs {
        let lab: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("lab.json")).expect("lab.json"))
                .expect("lab.json is JSON");
        let p = &lab["params"];
        let mut common = vec![
            "--layout".to_string(),
            format!("raid{}", num(p, "level") as u64),
            "--disks".into(),
            format!("{}", num(p, "disks") as u64),
            "--chunk".into(),
            format!("{}", num(p, "chunk_bytes") as u64),
            "--qd".into(),
            "1".into(),
        ];
        let sc = num(p, "stripe_cache") as u64;
        if sc > 0 {
            common.extend(["--stripe-cache-size".to_string(), sc.to_string()]);
        }
        common.extend([
            dir.join("bios.bst").display().to_string(),
            "--json".into(),
            "-q".into(),
        ]);
        let json = |extra: &[&str]| predict_json(&dir, extra, &common);
        let md = json(&["--md-members"]);
        let timing = json(&["--disk", "nvme", "--md-bitmap", "none"]);
        let run = &timing["configs"][0]["without_cache"];
        let disks = run["disks"].as_array().expect("disks");
        let members = md["result"]["members"].as_array().expect("members");
        assert_eq!(disks.len(), members.len(), "{}", dir.display());
        for (i, (d, m)) in disks.iter().zip(members).enumerate() {
            for (engine_key, md_key) in [
                ("reads", "read_bios"),
                ("writes", "write_bios"),
                ("read_bytes", "read_bytes"),
                ("write_bytes", "write_bytes"),
            ] {
                assert_eq!(
                    num(d, engine_key),
                    num(m, md_key),
                    "{} member {i}: engine {engine_key} vs --md-members {md_key}",
                    dir.display()
                );
            }
        }
        let io: f64 = members
            .iter()
            .map(|m| num(m, "write_bios") + num(m, "read_bios"))
            .sum();
        assert!(io > 0.0, "{}: no member I/O", dir.display());
        all_writes += members.iter().map(|m| num(m, "write_bios")).sum::<f64>();
        // Every stripe head md handles (rmw, rcw or full stripe) is one pass of raid5d.
        let r = &md["result"];
        assert_eq!(
            num(run, "md_stripe_heads"),
            num(r, "rmw_stripes") + num(r, "rcw_stripes") + num(r, "full_stripes"),
            "{}: stripe heads in the timing engine vs --md-members",
            dir.display()
        );
    }
    assert!(all_writes > 0.0, "no member writes in any workload");
}

/// Issue 10: md RAID 10's layouts (near, far, offset; any member count) in the timing engine
/// send the members what the count model (`predict --md-members`) sends, on the lab's real
/// bios: the same totals, and for far and offset copies the same reads per member (both read
/// the lowest-addressed copy, md's rule on rotating members; near copies are balanced by the
/// engine's queues, which the count model does not have). The kernel's own counts for the same
/// bios are checked in tests/tests/lab.rs.
#[test]
fn issue_10_md_raid10_layouts_in_the_timing_engine_on_lab_bios() {
    let lab = data_dir().join("lab");
    let mut checked = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&lab)
        .expect("tests/data/lab")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    dirs.sort();
    let num = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    for dir in dirs {
        let Ok(text) = std::fs::read_to_string(dir.join("lab.json")) else {
            continue;
        };
        let lab: serde_json::Value = serde_json::from_str(&text).expect("lab.json is JSON");
        let p = &lab["params"];
        let Some(layout) = p["raid10_layout"].as_str() else {
            continue;
        };
        let common = vec![
            "--layout".to_string(),
            "raid10".into(),
            "--raid10-layout".into(),
            layout.into(),
            "--disks".into(),
            format!("{}", num(p, "disks") as u64),
            "--chunk".into(),
            format!("{}", num(p, "chunk_bytes") as u64),
            "--qd".into(),
            "4".into(),
            dir.join("bios.bst").display().to_string(),
            "--json".into(),
            "-q".into(),
        ];
        let json = |extra: &[&str]| predict_json(&dir, extra, &common);
        let md = json(&["--md-members"]);
        let timing = json(&["--disk", "sas-15k", "--md-bitmap", "none"]);
        let disks = timing["configs"][0]["without_cache"]["disks"]
            .as_array()
            .expect("disks")
            .clone();
        let members = md["result"]["members"].as_array().expect("members").clone();
        assert_eq!(disks.len(), members.len(), "{}", dir.display());
        let far = !layout.starts_with('n');
        for (engine_key, md_key) in [
            ("reads", "read_bios"),
            ("writes", "write_bios"),
            ("read_bytes", "read_bytes"),
            ("write_bytes", "write_bytes"),
        ] {
            let sum = |v: &[serde_json::Value], k: &str| v.iter().map(|x| num(x, k)).sum::<f64>();
            assert_eq!(
                sum(&disks, engine_key),
                sum(&members, md_key),
                "{}: {engine_key}",
                dir.display()
            );
            if far || engine_key.starts_with("write") {
                for (i, (d, m)) in disks.iter().zip(&members).enumerate() {
                    assert_eq!(
                        num(d, engine_key),
                        num(m, md_key),
                        "{} member {i}: {engine_key}",
                        dir.display()
                    );
                }
            }
        }
        checked.push(layout.to_string());
    }
    checked.sort();
    checked.dedup();
    assert!(
        checked.len() >= 4,
        "RAID 10 layouts among the lab workloads: {checked:?}"
    );
}

/// Issue 10: md handles RAID 5/6 stripe heads in the single raid5d thread unless
/// group_thread_cnt adds workers. A 4 KiB random write is one stripe head, one pass of md's
/// state machine: on eight NVMe members (fresh) the thread, not the SSDs, bounds them at one
/// pass cost plus three pages of parity input (read-modify-write of one data page) per write;
/// on hard disks it is idle next to the disks; two workers besides raid5d triple the ceiling
/// (Shaohua Li, linux-raid 2012: "+200%" on a 4-disk RAID 5 of PCIe flash).
#[test]
fn issue_10_raid5d_bounds_nvme_raid5_writes_not_hdd_and_group_threads_lift_it() {
    let md_cfg = |disk: DeviceModel, disks: u32, threads: u32| {
        let mut ctrl = ControllerModel::software();
        if let Some(md) = &mut ctrl.md {
            md.group_thread_cnt = threads;
        }
        ArrayConfig::standard(StandardLevel::Raid5, disks, disk, 65536, ctrl).expect("cfg")
    };
    let md = ControllerModel::software()
        .md
        .expect("md on a software array");
    let ceiling = 1e9 / (md.stripe_cost_nanos + 3.0 * md.page_cost_nanos(false));
    let mut fresh = match DiskPreset::Nvme.model() {
        DeviceModel::Ssd(s) => s,
        DeviceModel::Hdd(_) => panic!("nvme is an SSD"),
    };
    fresh.write_state = analyzer_core::array::device::SsdWriteState::Fresh;
    let fresh = DeviceModel::Ssd(fresh);
    let spec = ProfileKind::RandWrite4k.spec();
    let random_writes = |disk: DeviceModel, disks: u32, threads: u32, qd: u32, requests: u64| {
        run(
            &md_cfg(disk, disks, threads),
            spec,
            100 << 30,
            qd,
            requests,
            None,
            0,
        )
    };
    let nvme = random_writes(fresh.clone(), 8, 0, 256, 60_000);
    eprintln!(
        "NVMe RAID 5 of 8, raid5d alone: {:.0} write IOPS (ceiling {ceiling:.0}), raid5d {:.0}% busy, {}",
        nvme.write_iops,
        nvme.raid5d_utilisation * 100.0,
        nvme.bottleneck
    );
    assert!(
        (nvme.write_iops - ceiling).abs() / ceiling < 0.03,
        "{} vs the raid5d ceiling {ceiling}",
        nvme.write_iops
    );
    assert!(nvme.bottleneck.starts_with("raid5d"), "{}", nvme.bottleneck);
    let busiest_disk = nvme.disks.iter().map(|d| d.utilisation).fold(0.0, f64::max);
    assert!(busiest_disk < 0.6, "NVMe members {busiest_disk} busy");
    // Two workers besides raid5d: three threads share the heads.
    let lifted = random_writes(fresh, 8, 2, 1024, 120_000);
    eprintln!(
        "NVMe RAID 5 of 8, group_thread_cnt 2: {:.0} write IOPS ({:+.0}%), {}",
        lifted.write_iops,
        (lifted.write_iops / nvme.write_iops - 1.0) * 100.0,
        lifted.bottleneck
    );
    assert!(
        lifted.write_iops > 2.7 * nvme.write_iops,
        "{} vs {}",
        lifted.write_iops,
        nvme.write_iops
    );
    let hdd = random_writes(DiskPreset::Sata7k2.model(), 8, 0, 64, 3_000);
    eprintln!(
        "HDD RAID 5: {:.0} write IOPS, raid5d {:.1}% busy, {}",
        hdd.write_iops,
        hdd.raid5d_utilisation * 100.0,
        hdd.bottleneck
    );
    assert!(hdd.raid5d_utilisation < 0.05, "{}", hdd.raid5d_utilisation);
    assert!(
        hdd.bottleneck.contains("member disks"),
        "{}",
        hdd.bottleneck
    );
    // The same with md's behaviour off (a hardware controller's RAID 5): no raid5d at all.
    let mut hw = md_cfg(DiskPreset::Nvme.model(), 8, 0);
    hw.controller.md = None;
    let hw = run(&hw, spec, 100 << 30, 256, 20_000, None, 0);
    assert_eq!((hw.md_stripe_heads, hw.raid5d_utilisation), (0, 0.0));
}

/// Issue 10: the 2016 Atom figure kept as an alternative (kernel commit 765d704db1f5: ~600 MB/s
/// of large sequential writes to a 9-disk RAID 5 with raid5d alone). Its writes are full
/// stripes batched a chunk at a time, so it is a per-page cost (6.8 µs); with it and no pass
/// cost, 1 MiB sequential writes to nine members fast enough not to bind come back to the
/// source's 600 MB/s, raid5d-bound. A consistency check of the batching and the page
/// accounting (the figure is this value's source, not a validation).
#[test]
fn issue_10_atom_page_cost_gives_back_its_source() {
    use analyzer_core::array::controller::MD_ATOM_PAGE_COST_NANOS;
    let mut fresh = match DiskPreset::Nvme.model() {
        DeviceModel::Ssd(s) => s,
        DeviceModel::Hdd(_) => panic!("nvme is an SSD"),
    };
    fresh.write_state = analyzer_core::array::device::SsdWriteState::Fresh;
    let mut ctrl = ControllerModel::software();
    if let Some(md) = &mut ctrl.md {
        md.stripe_cost_nanos = 0.0;
        md.page_cost_nanos = Some(MD_ATOM_PAGE_COST_NANOS);
    }
    let cfg = ArrayConfig::standard(
        StandardLevel::Raid5,
        9,
        DeviceModel::Ssd(fresh),
        512 << 10,
        ctrl,
    )
    .expect("RAID 5");
    let spec = AccessSpec {
        len_bytes: 1 << 20,
        ..ProfileKind::SeqWrite64k.spec()
    };
    let r = run(&cfg, spec, cfg.capacity_bytes(), 32, 4_000, None, 0);
    check(
        "9-disk RAID 5, 1 MiB sequential writes, Atom page cost, MB/s",
        r.bytes_per_sec / 1e6,
        600.0,
        0.05,
    );
    assert!(r.bottleneck.starts_with("raid5d"), "{}", r.bottleneck);
}

/// Issue 10: named controller presets. `--controller list` names every preset with its
/// sources; a named controller's link ceiling binds a wide sequential read that the generic
/// `--controller-cache` controller (no ceilings, and the output says so) lets through.
#[test]
fn issue_10_controller_presets_bind_wide_sequential_reads_and_name_their_ceilings() {
    let list = run_blocksight(["predict", "--controller", "list"]);
    assert!(list.status.success());
    let text = String::from_utf8_lossy(&list.stdout);
    for name in [
        "perc-5e",
        "perc-h730",
        "lsi-9260-8i",
        "lsi-9361-8i",
        "hpe-p440",
        "intel-vroc",
    ] {
        assert!(text.contains(name), "{name} missing from\n{text}");
    }
    assert_eq!(
        text.matches("sources:").count(),
        analyzer_core::array::controller_preset::ControllerPreset::ALL.len()
    );
    let bad = run_blocksight([
        "predict",
        "--profile",
        "4k-random-read",
        "--layout",
        "raid5",
        "--disks",
        "4",
        "--disk",
        "nvme",
        "--controller",
        "perc-9",
        "-q",
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("perc-5e"));
    let vroc_cache = run_blocksight([
        "predict",
        "--profile",
        "4k-random-read",
        "--layout",
        "raid5",
        "--disks",
        "4",
        "--disk",
        "nvme",
        "--controller",
        "intel-vroc",
        "--controller-cache",
        "1GiB",
        "-q",
    ]);
    assert!(!vroc_cache.status.success());

    // 14 × 15K disks in one MD1000 behind a PERC 5/E: one x4 3 Gb/s port, 1,200 MB/s.
    let seq = |controller: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "predict",
            "--profile",
            "64k-seq-read",
            "--io-size",
            "128KiB",
            "--layout",
            "raid0",
            "--disks",
            "14",
            "--disk",
            "sas-15k",
            "--qd",
            "8",
            "--requests",
            "20000",
            "--json",
            "-q",
        ];
        args.extend_from_slice(controller);
        let out = run_blocksight(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON")
    };
    let named = seq(&["--controller", "perc-5e"]);
    let generic = seq(&["--controller-cache", "256MiB"]);
    let mbps = |v: &serde_json::Value| {
        v["configs"][0]["without_cache"]["bytes_per_sec"]
            .as_f64()
            .unwrap_or(f64::NAN)
    };
    eprintln!(
        "14 × 15K RAID 0, 128 KiB sequential reads: PERC 5/E preset {:.0} MB/s, generic controller {:.0} MB/s",
        mbps(&named) / 1e6,
        mbps(&generic) / 1e6
    );
    assert!(
        (mbps(&named) - 1200e6).abs() / 1200e6 < 0.03,
        "{}",
        mbps(&named)
    );
    assert!(mbps(&generic) > 1.05 * 1200e6, "{}", mbps(&generic));
    let bottleneck = named["configs"][0]["without_cache"]["bottleneck"]
        .as_str()
        .unwrap_or("");
    assert!(bottleneck.contains("ceiling"), "{bottleneck}");
    let said = |v: &serde_json::Value, what: &str| {
        v["assumptions"].as_array().is_some_and(|a| {
            a.iter()
                .any(|s| s.as_str().is_some_and(|s| s.contains(what)))
        })
    };
    assert!(said(&named, "controller perc-5e: 256 MiB cache"));
    assert!(said(&named, "IOPS ceiling not published"));
    assert!(said(
        &generic,
        "controller ceilings assumed: no IOPS ceiling, no MB/s ceiling"
    ));
}

/// Issue 10: the PERC 5/E preset leaves the published MD1000 block reads of up to 8 disks
/// where the PERC-class controller put them (its 1,200 MB/s link is far above 424 MB/s).
#[test]
fn issue_10_perc_5e_preset_keeps_the_md1000_block_reads() {
    use analyzer_core::array::controller_preset::ControllerPreset;
    let perc5e = ControllerPreset::by_name("perc-5e")
        .expect("preset")
        .model();
    for (level, disks, published_kb) in [
        (StandardLevel::Raid10, 4, 246_490.0),
        (StandardLevel::Raid10, 8, 423_983.0),
    ] {
        check(
            &format!(
                "MD1000 {disks}-disk {} block read KB/s, perc-5e",
                level.name()
            ),
            md1000_block_read_kb(level, disks, perc5e.clone()),
            published_kb,
            0.12,
        );
    }
}

/// Issue 10: the md flags reach the timing engine: `--md-stripe-cost` moves the raid5d ceiling
/// (one 4 KiB random write is one stripe head), bad values are refused, and a hardware
/// controller refuses md settings.
#[test]
fn issue_10_md_flags_set_the_raid5d_ceiling() {
    let write_iops = |extra: &[&str]| -> Result<f64, String> {
        let mut args = vec![
            "predict",
            "--profile",
            "4k-random-write",
            "--span",
            "10GiB",
            "--layout",
            "raid5",
            "--disks",
            "4",
            "--disk",
            "nvme",
            "--qd",
            "64",
            "--requests",
            "20000",
            "--json",
            "-q",
        ];
        args.extend_from_slice(extra);
        let out = run_blocksight(&args);
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        Ok(v["configs"][0]["without_cache"]["write_iops"]
            .as_f64()
            .unwrap_or(f64::NAN))
    };
    let at_20us = write_iops(&["--md-stripe-cost", "20us", "--md-page-cost", "0us"]).expect("20us");
    assert!((at_20us - 50_000.0).abs() / 50_000.0 < 0.03, "{at_20us}");
    // Three pages of parity input (rcw of one page on 3 data disks reads the three data
    // pages) at 10 µs each: 50 µs a write.
    let with_pages =
        write_iops(&["--md-stripe-cost", "20us", "--md-page-cost", "10us"]).expect("pages");
    assert!(
        (with_pages - 20_000.0).abs() / 20_000.0 < 0.03,
        "{with_pages}"
    );
    // group_thread_cnt is honoured: one worker besides raid5d doubles the ceiling (40 µs a
    // pass: 25,000 writes a second per thread, well below what the members take).
    let two_threads = write_iops(&[
        "--md-stripe-cost",
        "40us",
        "--md-page-cost",
        "0us",
        "--group-thread-cnt",
        "1",
    ])
    .expect("threads");
    assert!(
        (two_threads - 50_000.0).abs() / 50_000.0 < 0.03,
        "{two_threads}"
    );
    let err = write_iops(&["--md-stripe-cost", "fast"]).unwrap_err();
    assert!(err.contains("--md-stripe-cost"), "{err}");
    let err = write_iops(&["--md-page-cost=-1us"]).unwrap_err();
    assert!(
        err.contains("page cost") || err.contains("--md-page-cost"),
        "{err}"
    );
    let err = write_iops(&["--stripe-cache-size", "5"]).unwrap_err();
    assert!(err.contains("17"), "{err}");
    let err = write_iops(&["--controller", "lsi-9361-8i", "--group-thread-cnt", "2"]).unwrap_err();
    assert!(err.contains("Linux md"), "{err}");
    // Intel VROC is md: the same raid5d ceiling as plain software RAID.
    let vroc = write_iops(&["--controller", "intel-vroc"]).expect("vroc");
    let plain = write_iops(&[]).expect("plain");
    assert_eq!(vroc, plain);
}

/// RAID 10 on a trace: both disks of a mirror pair write the same (every host write goes to
/// both copies, so the members write at least twice the host's writes); a write-through cache
/// sends every write on unchanged and takes at least as many reads off the members as its
/// devices served.
#[test]
fn raid10_mirrors_write_alike_and_a_write_through_cache_only_takes_reads() {
    let trace = data_dir().join("sample/pgbench.bst");
    let t = trace.display().to_string();
    let stat: serde_json::Value =
        serde_json::from_slice(&run_blocksight(["stat", &t, "--json", "-q"]).stdout)
            .expect("stat json");
    let host_writes = stat["writes"].as_u64().expect("writes");
    let out = run_blocksight([
        "predict",
        &t,
        "-q",
        "--layout",
        "raid10",
        "--disks",
        "4",
        "--disk",
        "nvme",
        "--qd",
        "4",
        "--cache-size",
        "8GiB",
        "--preset",
        "bcache",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let c = &v["configs"][0];
    let members = |r: &serde_json::Value, tier: &str, key: &str| -> Vec<u64> {
        r["disks"]
            .as_array()
            .expect("disks")
            .iter()
            .filter(|d| d["tier"] == tier)
            .map(|d| d[key].as_u64().expect("count"))
            .collect()
    };
    let (without, with) = (&c["without_cache"], &c["with_cache"]);
    for r in [without, with] {
        let w = members(r, "array", "writes");
        let wb = members(r, "array", "write_bytes");
        assert_eq!(w.len(), 4);
        assert_eq!((w[0], wb[0]), (w[1], wb[1]), "first mirror pair");
        assert_eq!((w[2], wb[2]), (w[3], wb[3]), "second mirror pair");
        assert!(
            w.iter().sum::<u64>() >= 2 * host_writes,
            "{w:?} vs {host_writes} host writes"
        );
    }
    assert_eq!(
        members(without, "array", "writes"),
        members(with, "array", "writes"),
        "write-through: the members write the same with the cache"
    );
    let reads = |r| members(r, "array", "reads").iter().sum::<u64>();
    let served: u64 = members(with, "cache", "reads").iter().sum();
    assert!(served > 0, "the cache served no read");
    assert!(
        reads(without) - reads(with) >= served,
        "member reads {} → {}, cache devices served {served}",
        reads(without),
        reads(with)
    );
}

/// The disks and controller of HP's Smart Array P421 measurements (HP, "HP Smart Array
/// Controllers and basic RAID performance factors", technology brief, December 2012): 15K SAS
/// drives on 6 Gb/s links behind the `hpe-p421` preset (2 GiB flash-backed cache, its
/// RAID-on-Chip's 200,000 4 KB IOPS). The 15K drives are the `sas-15k` preset with its link
/// at 6 Gb/s, as for the Nytro rows.
fn smart_array_p421(level: StandardLevel, disks: u32) -> ArrayConfig {
    use analyzer_core::array::controller_preset::ControllerPreset;
    let mut drive = hdd(DiskPreset::Sas15k);
    drive.interface_rate_bytes_per_sec = 600e6;
    let controller = ControllerPreset::by_name("hpe-p421")
        .expect("hpe-p421 preset")
        .model();
    ArrayConfig::standard(level, disks, DeviceModel::Hdd(drive), 256 << 10, controller)
        .expect("P421 array")
}

/// Issue 10, published wide hard-disk array behind a hardware controller: HP's brief measures a
/// twelve-drive RAID 0 on a P421 at 4,850 random 4 KiB reads per second (the maximum over queue
/// depths 1 to 256, page 15). The model, at 256 outstanding reads over the whole array, is
/// bound by the member disks as HP says ("drive limited"). The RoC's 200,000 IOPS ceiling is
/// far above it and binds only what the cache absorbs: a burst of random writes that fits in
/// the 2 GiB cache completes at the RoC's rate, where a controller without a ceiling lets it
/// through at memory speed.
#[test]
fn issue_10_published_smart_array_p421_random_reads_and_its_roc_ceiling() {
    let cfg = smart_array_p421(StandardLevel::Raid0, 12);
    let span = cfg.capacity_bytes();
    let reads = run(
        &cfg,
        ProfileKind::RandRead4k.spec(),
        span,
        256,
        40_000,
        None,
        0,
    );
    check(
        "P421, 12 × 15K RAID 0, 4 KiB random reads, QD 256",
        reads.iops,
        4_850.0,
        0.15,
    );
    assert!(
        reads.bottleneck.contains("member disks"),
        "{}",
        reads.bottleneck
    );
    // 100,000 writes of 4 KiB (400 MB) fit in the 2 GiB cache: the RoC is the bottleneck.
    let burst = run(
        &cfg,
        ProfileKind::RandWrite4k.spec(),
        span,
        256,
        100_000,
        None,
        0,
    );
    eprintln!(
        "P421 write burst into its cache: {:.0} IOPS, {}",
        burst.iops, burst.bottleneck
    );
    assert!(
        (burst.iops - 200_000.0).abs() / 200_000.0 < 0.03,
        "{}",
        burst.iops
    );
    assert!(burst.bottleneck.contains("ceiling"), "{}", burst.bottleneck);
    let mut unbounded = cfg.clone();
    unbounded.controller.max_iops = None;
    let free = run(
        &unbounded,
        ProfileKind::RandWrite4k.spec(),
        span,
        256,
        100_000,
        None,
        0,
    );
    assert!(free.iops > 5.0 * burst.iops, "{}", free.iops);
}

/// An md RAID 6 of eight NVMe drives (each good for 250,000 4 KiB random reads), as in kernel
/// commit 97ae27252f49 ("md/raid5: avoid device_lock in read_one_chunk()", Gal Ofri, 2021,
/// Linux 5.14): 6+2, 1,024 I/O threads, 4 KiB random reads.
fn ofri_raid6() -> ArrayConfig {
    let mut ssd = match DiskPreset::Nvme.model() {
        DeviceModel::Ssd(s) => s,
        DeviceModel::Hdd(_) => panic!("nvme is an SSD"),
    };
    ssd.read_iops = 250_000.0;
    ArrayConfig::standard(
        StandardLevel::Raid6,
        8,
        DeviceModel::Ssd(ssd),
        512 << 10,
        ControllerModel::software(),
    )
    .expect("RAID 6")
}

/// Issue 10, published NVMe md RAID: random reads of an md RAID 6 on NVMe go down md's
/// chunk-aligned read path, no stripe head and no raid5d; with the commit above the array
/// reached 2 M IOPS, "throttled" by its eight drives (8 × 250,000). Before it (Linux ≤ 5.13)
/// the same array did 1.6 M IOPS, bound by `device_lock` contention, which the model does not
/// have: the row compares with the kernels that have the fix.
#[test]
fn issue_10_published_nvme_md_raid6_random_reads_are_drive_bound() {
    let r = run(
        &ofri_raid6(),
        ProfileKind::RandRead4k.spec(),
        ofri_raid6().capacity_bytes(),
        1024,
        300_000,
        None,
        0,
    );
    check(
        "md RAID 6, 8 NVMe (250k IOPS each), 4 KiB random reads, 1,024 in flight",
        r.iops,
        2_000_000.0,
        0.10,
    );
    assert_eq!(r.md_stripe_heads, 0);
    assert!(r.bottleneck.contains("member disks"), "{}", r.bottleneck);
}

/// The RAID 5 of 2+1 Samsung 980 PRO (1 TB) in the md-bitmap patch of Shushu Yi et al.
/// (linux-raid, December 2024, mail.spinics.net/lists/raid/msg77914.html; Phoronix,
/// 10 December 2024), 512 KiB chunks, driven with 4 KiB sequential writes (fio libaio,
/// 16 jobs × iodepth 32: 512 outstanding), each drive at its data sheet's rates
/// (7,000 / 5,000 MB/s, 1 M / 1 M 4 KiB IOPS), written once (fresh).
fn samsung_980_pro_raid5_sequential_4k_writes() -> RunResult {
    let mut ssd = match DiskPreset::Nvme.model() {
        DeviceModel::Ssd(s) => s,
        DeviceModel::Hdd(_) => panic!("nvme is an SSD"),
    };
    ssd.capacity_bytes = 1_000_000_000_000;
    ssd.read_iops = 1_000_000.0;
    ssd.write_iops_steady = 1_000_000.0;
    ssd.read_bandwidth_bytes_per_sec = 7e9;
    ssd.write_bandwidth_bytes_per_sec = 5e9;
    ssd.write_state = analyzer_core::array::device::SsdWriteState::Fresh;
    let cfg = ArrayConfig::standard(
        StandardLevel::Raid5,
        3,
        DeviceModel::Ssd(ssd),
        512 << 10,
        ControllerModel::software(),
    )
    .expect("RAID 5");
    let spec = AccessSpec {
        len_bytes: 4096,
        ..ProfileKind::SeqWrite64k.spec()
    };
    run(&cfg, spec, cfg.capacity_bytes(), 512, 40_000, None, 0)
}

/// Issue 10, published NVMe md RAID 5 writes, checked (not used to set any constant): with
/// the patch's bitmap (no global lock in the write path) the array wrote 9,884 MB/s, the two
/// data drives' 5,000 MB/s each less 1 %: drive-bound. md gathers the 512 sequential 4 KiB
/// writes in flight into full-stripe heads and batches each chunk row's heads into one pass,
/// so raid5d alone (4.5 µs a pass, 0.30 µs a page) keeps up and the members bind. Tolerance
/// ±20 %.
#[test]
fn issue_10_published_nvme_md_raid5_sequential_4k_writes_are_drive_bound() {
    let r = samsung_980_pro_raid5_sequential_4k_writes();
    check(
        "md RAID 5 2+1 980 PRO, 4 KiB sequential writes, 512 in flight, MB/s (patched bitmap)",
        r.bytes_per_sec / 1e6,
        9_884.0,
        0.20,
    );
    assert!(r.bottleneck.contains("member disks"), "{}", r.bottleneck);
    // Full stripes: no member reads but the tail's partial row.
    let reads: u64 = r.disks.iter().map(|d| d.reads).sum();
    let writes: u64 = r.disks.iter().map(|d| d.writes).sum();
    assert!(
        reads * 100 < writes,
        "{reads} member reads, {writes} writes"
    );
}

/// Issue 10, published, a kept miss: the same array with md's stock bitmap wrote 5,218 MB/s.
/// The patch's authors name the bottleneck: the stock bitmap's global spinlock and its
/// scattered updates in the write path ("reduce CPU suspension time caused by lock
/// contention"), which the model does not have; it predicts the drive-bound figure above,
/// about 60 % over this one. Before issue 10's second step the model said 75 MB/s (−98.6 %:
/// a 2016 Atom's 54.6 µs per head, no gathering). The test fails if the error leaves
/// +40 … +90 %.
#[test]
fn issue_10_published_nvme_md_raid5_sequential_4k_writes_stock_bitmap_is_a_kept_miss() {
    let r = samsung_980_pro_raid5_sequential_4k_writes();
    let e = err(r.bytes_per_sec / 1e6, 5_218.0);
    eprintln!(
        "md RAID 5 2+1 980 PRO, 4 KiB sequential writes, stock bitmap: predicted {:.0} MB/s, published 5,218 MB/s, error {:+.1}% (kept miss: bitmap lock), {}",
        r.bytes_per_sec / 1e6,
        e * 100.0,
        r.bottleneck
    );
    assert!((0.40..=0.90).contains(&e), "error {:+.1}%", e * 100.0);
}

/// Issue 10, published, a kept miss: the same twelve-drive RAID 0 on the P421 sustains 8,350
/// random 4 KiB writes per second through its 2 GiB write cache (HP's brief, page 15: "primarily
/// attributable to the benefits of the write cache"). The model's steady state (the rate
/// between two runs that both filled the cache) is about 4,300: its cache destages at most
/// `destage_per_disk` = 2 commands per drive, so each drive's reordering sees two candidates.
/// No source used gives a controller's destage concurrency; with 8 per drive the model gives
/// 8,300, which docs/model.md reports without making it the default (it would be fitted to
/// this one figure). The test fails if the error leaves −35 % … −60 %.
#[test]
fn issue_10_published_smart_array_p421_cached_random_writes_miss_by_destage_depth() {
    let cfg = smart_array_p421(StandardLevel::Raid0, 12);
    let span = cfg.capacity_bytes();
    let at = |requests: u64| {
        run(
            &cfg,
            ProfileKind::RandWrite4k.spec(),
            span,
            256,
            requests,
            None,
            0,
        )
    };
    let (a, b) = (at(1_000_000), at(2_000_000));
    let steady =
        (b.requests - a.requests) as f64 / ((b.elapsed_nanos - a.elapsed_nanos) as f64 / 1e9);
    let e = err(steady, 8_350.0);
    eprintln!(
        "P421, 12 × 15K RAID 0, 4 KiB random writes, steady state: predicted {steady:.0}, published 8,350, error {:+.1}% (kept miss), {}",
        e * 100.0,
        b.bottleneck
    );
    assert!((-0.60..=-0.35).contains(&e), "error {:+.1}%", e * 100.0);
}

/// Issue 10: `predict --preset dm-cache` and `--preset bcache` replay the trace through the
/// kernels' own models, not the generic approximations: what the array's member disks read and
/// write is what the model sends the origin in `simulate` (on one disk, bytes for bytes, but for
/// the few migrations still in flight when the trace ends), and differs from the
/// approximation's.
#[test]
fn issue_10_predict_replays_the_kernels_caches_through_their_own_models() {
    let bios = data_dir().join("lab/dmc-wb32k-128m-z099-rw60/bios.bst");
    let b = bios.display().to_string();
    let json = |args: &[&str]| -> serde_json::Value {
        let out = run_blocksight(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let model = json(&[
        "simulate",
        &b,
        "-q",
        "--json",
        "--preset",
        "dm-cache",
        "--cache-size",
        "128MiB",
        "--line-size",
        "32KiB",
        "--mode",
        "wb",
    ]);
    let origin = &model["result"]["origin"];
    // RAID 0 of one disk: its member I/O is the origin's (backing device's) I/O.
    let predict = |cache: &[&str]| {
        let mut args = vec![
            "predict", &b, "-q", "--json", "--layout", "raid0", "--disks", "1", "--disk",
            "sata-7k2", "--qd", "8",
        ];
        args.extend_from_slice(cache);
        json(&args)
    };
    let dm_with = |preset, line_flag| {
        predict(&[
            "--cache-size",
            "128MiB",
            line_flag,
            "32KiB",
            "--mode",
            "wb",
            "--preset",
            preset,
        ])
    };
    let dm = |preset| dm_with(preset, "--cache-line");
    let p = dm("dm-cache");
    assert_eq!(p["request"]["cache"]["preset"], "dm-cache");
    // `simulate`'s name for the line size is accepted too, for the same request.
    let aliased = dm_with("dm-cache", "--line-size");
    assert_eq!(aliased["request"], p["request"]);
    assert_eq!(p["request"]["cache"]["line_bytes"], 32 << 10);
    let c = &p["configs"][0];
    assert!(
        c["cache_description"]
            .as_str()
            .or(p["cache_description"].as_str())
            .is_some_and(|d| d.contains("the kernel's model")),
        "{p}"
    );
    let sum = |r: &serde_json::Value, key: &str| -> u64 {
        r["disks"]
            .as_array()
            .expect("disks")
            .iter()
            .filter(|d| d["tier"] == "array")
            .map(|d| d[key].as_u64().expect("count"))
            .sum()
    };
    let with = &c["with_cache"];
    let (read_bytes, write_bytes) = (sum(with, "read_bytes"), sum(with, "write_bytes"));
    let (model_reads, model_writes) = (
        origin["read_bytes"].as_u64().expect("origin reads"),
        origin["write_bytes"].as_u64().expect("origin writes"),
    );
    // Migrations in flight at the end of the trace (a few 32 KiB blocks) are not replayed.
    assert!(
        read_bytes <= model_reads && model_reads - read_bytes <= 8 * 32768,
        "member reads {read_bytes} B, the model's origin reads {model_reads} B"
    );
    assert!(
        write_bytes <= model_writes && model_writes - write_bytes <= 8 * 32768,
        "member writes {write_bytes} B, the model's origin writes {model_writes} B"
    );
    let approx = dm("dm-cache-approx");
    let a = &approx["configs"][0]["with_cache"];
    assert_ne!(
        (sum(a, "read_bytes"), sum(a, "write_bytes")),
        (read_bytes, write_bytes),
        "the approximation sends the disks something else"
    );

    // bcache likewise: in write-through the backing disk reads every bio bcache counts as a
    // miss and writes every write.
    let bcache = json(&[
        "simulate",
        &b,
        "-q",
        "--json",
        "--preset",
        "bcache",
        "--cache-size",
        "512MiB",
        "--mode",
        "wt",
    ]);
    let stats = &bcache["result"]["stats"];
    let p = predict(&[
        "--cache-size",
        "512MiB",
        "--mode",
        "wt",
        "--preset",
        "bcache",
    ]);
    let with = &p["configs"][0]["with_cache"];
    assert!(p["cache_description"]
        .as_str()
        .or(p["configs"][0]["cache_description"].as_str())
        .is_some_and(|d| d.contains("bcache, the kernel's model")));
    let misses = stats["cache_misses"].as_u64().expect("misses")
        + stats["cache_bypass_misses"]
            .as_u64()
            .expect("bypass misses");
    assert_eq!(sum(with, "reads"), misses);
    assert_eq!(
        sum(with, "writes"),
        stats["writes"].as_u64().expect("writes")
    );
}

/// Issue 12: `--sample SLICE/EVERY` replays the Array view's estimate (evenly spaced slices,
/// the cache tier seeing every request) and says so; it is refused with an open-loop replay.
#[test]
fn cli_sample_replays_slices_as_the_array_view_estimate() {
    let trace = data_dir().join("sample/pgbench.bst").display().to_string();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "predict",
            trace.as_str(),
            "-q",
            "--layout",
            "raid5",
            "--disks",
            "6",
            "--disk",
            "sas-10k",
            "--qd",
            "16",
            "--cache-size",
            "256MiB",
            "--json",
        ];
        args.extend_from_slice(extra);
        run_blocksight(&args)
    };
    let out = run(&["--sample", "2048/8192"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let (replayed, all) = (
        v["replayed_requests"].as_u64().expect("replayed"),
        v["trace_requests"].as_u64().expect("trace_requests"),
    );
    // About a quarter of the requests, the cache tier's answers from the whole trace.
    assert!(
        replayed * 5 > all && replayed * 3 < all,
        "{replayed} of {all}"
    );
    assert!(v["assumptions"].to_string().contains("an estimate"));
    let exact: serde_json::Value =
        serde_json::from_slice(&run(&[]).stdout).expect("JSON of the exact run");
    assert_eq!(exact["replayed_requests"].as_u64(), Some(all));
    for bad in [
        &["--sample", "5"][..],
        &["--sample", "4096/2048"],
        &["--sample", "1/2", "--replay"],
    ] {
        let out = run(bad);
        assert!(!out.status.success(), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("sample") || err.contains("--replay"),
            "{bad:?}: {err}"
        );
    }
}

/// Issue 10: md's write-intent bitmap. The bios of six lab runs of Linux 6.1 md (RAID 1, 5, 6
/// and 10) with an internal bitmap of 1 MiB chunks (tests/data/lab-bitmap) replayed at their
/// times through the timing engine with the same bitmap: the bitmap page writes md sent its
/// members, and the member reads and writes in all, each within issue 10's 10% of the
/// kernel's. The replay ends with the last request, as the kernel's counts do (they stop when
/// fio ended). Without the bitmap the writes miss by the bitmap's share (checked, so the
/// comparison can fail).
#[test]
fn issue_10_md_bitmap_writes_match_the_kernel_on_lab_bios() {
    let dir = data_dir().join("lab-bitmap");
    let kernel: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("kernel.json")).expect("kernel.json"),
    )
    .expect("kernel.json is JSON");
    let num = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let workloads = kernel.as_object().expect("workloads");
    assert!(workloads.len() >= 6, "{} workloads", workloads.len());
    let mut levels = std::collections::BTreeSet::new();
    for (name, k) in workloads {
        levels.insert(num(k, "level") as u64);
        let run = |bitmap: &str| {
            let args = [
                "predict".to_string(),
                dir.join(format!("{name}.bst")).display().to_string(),
                "--replay".into(),
                "--array".into(),
                dir.join(k["array"].as_str().expect("array"))
                    .display()
                    .to_string(),
                "--md-bitmap".into(),
                bitmap.into(),
                "--json".into(),
                "-q".into(),
            ];
            let json = blocksight_json(name, &args);
            json["configs"][0]["without_cache"].clone()
        };
        let r = run("1MiB");
        let disks = r["disks"].as_array().expect("disks");
        assert_eq!(disks.len() as f64, num(k, "members"), "{name}");
        let sum = |key: &str| disks.iter().map(|d| num(d, key)).sum::<f64>();
        let bitmap = num(&r["md_bitmap"], "member_writes");
        let close = |what: &str, model: f64, kernel: f64| {
            eprintln!("{name}: {what} kernel {kernel} model {model}");
            assert!(
                (model - kernel).abs() <= 0.10 * kernel,
                "{name}: {what}: kernel {kernel}, model {model}"
            );
        };
        close("bitmap writes", bitmap, num(k, "bitmap_write_bios"));
        close("member reads", sum("reads"), num(k, "member_read_bios"));
        close("member writes", sum("writes"), num(k, "member_write_bios"));
        let none = run("none");
        assert!(none["md_bitmap"].is_null());
        let without: f64 = none["disks"]
            .as_array()
            .expect("disks")
            .iter()
            .map(|d| num(d, "writes"))
            .sum();
        assert!(
            num(k, "member_write_bios") - without > 0.8 * num(k, "bitmap_write_bios"),
            "{name}: without the bitmap {without} writes"
        );
    }
    assert_eq!(levels.into_iter().collect::<Vec<_>>(), vec![1, 5, 6, 10]);
}

/// Issue 10: md marks an array dirty in its superblock before a write that finds it clean and
/// clean once its writes have paused for `safe_mode_delay` (md.rst). The lab's bursts of writes
/// separated by pauses (tests/data/lab-safemode) made exactly one superblock write per member
/// at each mark; both models must give the same count (the control, with 100 ms pauses, only
/// the marks before the first write and after the last) and the same member I/O. With a
/// bitmap (`smb-`, the timing engine only) each mark also writes the bitmap's first page.
#[test]
fn issue_10_md_safe_mode_superblock_writes_match_the_kernel_on_lab_bios() {
    let dir = data_dir().join("lab-safemode");
    let kernel: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("kernel.json")).expect("kernel.json"),
    )
    .expect("kernel.json is JSON");
    let num = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let workloads = kernel.as_object().expect("workloads");
    assert!(workloads.len() >= 5, "{} workloads", workloads.len());
    let mut pauses = 0;
    for (name, k) in workloads {
        let bst = dir.join(format!("{name}.bst")).display().to_string();
        let level = num(k, "level") as u64;
        let members = num(k, "members");
        let sb = num(k, "superblock_write_bios");
        let bitmap = name.starts_with("smb-");
        // More than the two marks around the job: the pauses turned the array clean.
        if sb > 2.0 * members {
            pauses += 1;
        }
        let md = blocksight_json(
            name,
            [
                "predict",
                "--md-members",
                "--layout",
                &format!("raid{level}"),
                "--disks",
                &format!("{members}"),
                "--chunk",
                "64KiB",
                &bst,
                "--json",
                "-q",
            ],
        );
        let r = &md["result"];
        assert_eq!(
            num(r, "superblock_updates") * members,
            sb,
            "{name}: --md-members superblock writes"
        );
        // The count model has no bitmap: its member I/O is compared without one.
        if !bitmap {
            assert_eq!(
                num(&r["total"], "write_bios"),
                num(k, "member_write_bios"),
                "{name}"
            );
            assert_eq!(
                num(&r["total"], "read_bios"),
                num(k, "member_read_bios"),
                "{name}"
            );
        }
        // Safe mode off: marked dirty before the first write and clean when stopped, whatever
        // the pauses.
        let off = blocksight_json(
            name,
            [
                "predict",
                "--md-members",
                "--md-safe-mode-delay",
                "0",
                "--layout",
                &format!("raid{level}"),
                "--disks",
                &format!("{members}"),
                &bst,
                "--json",
                "-q",
            ],
        );
        assert_eq!(num(&off["result"], "superblock_updates"), 2.0, "{name}");
        let array = dir.join(format!("r{level}.json")).display().to_string();
        let timing = blocksight_json(
            name,
            [
                "predict",
                &bst,
                "--replay",
                "--array",
                &array,
                "--md-bitmap",
                if bitmap { "1MiB" } else { "none" },
                "--json",
                "-q",
            ],
        );
        let run = &timing["configs"][0]["without_cache"];
        assert_eq!(
            num(&run["md_superblock"], "updates") * members,
            sb,
            "{name}: timing engine superblock writes"
        );
        if bitmap {
            let (model, kernel) = (
                num(&run["md_bitmap"], "member_writes"),
                num(k, "bitmap_write_bios"),
            );
            eprintln!("{name}: bitmap writes kernel {kernel} model {model}");
            assert!(
                (model - kernel).abs() <= 0.02 * kernel,
                "{name}: bitmap writes: kernel {kernel}, model {model}"
            );
        }
        let disks = run["disks"].as_array().expect("disks");
        let sum = |key: &str| disks.iter().map(|d| num(d, key)).sum::<f64>();
        for (what, model, kernel) in [
            ("writes", sum("writes"), num(k, "member_write_bios")),
            ("reads", sum("reads"), num(k, "member_read_bios")),
        ] {
            eprintln!("{name}: member {what} kernel {kernel} model {model}");
            assert!(
                (model - kernel).abs() <= 0.02 * kernel,
                "{name}: member {what}: kernel {kernel}, model {model}"
            );
        }
    }
    assert!(pauses >= 6, "{pauses} workloads with pauses");
}

/// Issue 10: mdadm gives an array of members over 100 GiB an internal bitmap by default, and
/// `predict` says so and what it cost; `--md-bitmap none` takes it away, and on small members
/// there is none unless asked for.
#[test]
fn issue_10_md_bitmap_is_mdadms_default_and_stated() {
    let output = |disk: &str, bitmap: &str| {
        run_blocksight([
            "predict",
            "--profile",
            "4k-random-write",
            "--layout",
            "raid5",
            "--disks",
            "4",
            "--disk",
            disk,
            "--qd",
            "8",
            "--requests",
            "3000",
            "--md-bitmap",
            bitmap,
        ])
    };
    let run = |disk: &str, bitmap: &str| {
        let out = output(disk, bitmap);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    // sata-7k2: 2 TB members.
    let auto = run("sata-7k2", "auto");
    assert!(
        auto.contains("md write-intent bitmap (64.0 MiB chunks)"),
        "{auto}"
    );
    assert!(
        auto.contains("mdadm's default on members over 100 GiB"),
        "{auto}"
    );
    let none = run("sata-7k2", "none");
    assert!(!none.contains("md write-intent bitmap ("), "{none}");
    assert!(
        none.contains("no write-intent bitmap (--md-bitmap none)"),
        "{none}"
    );
    // sas-15k: 73 GB members, none by default; a chunk size asks for one.
    let small = run("sas-15k", "auto");
    assert!(!small.contains("md write-intent bitmap ("), "{small}");
    assert!(small.contains("mdadm adds one by default only on members over 100 GiB"));
    let asked = run("sas-15k", "128MiB");
    assert!(
        asked.contains("md write-intent bitmap (128 MiB chunks)")
            || asked.contains("md write-intent bitmap (128.0 MiB chunks)"),
        "{asked}"
    );
    let bad = output("nvme", "sometimes");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr)
        .contains("expected auto, none, internal or a chunk size"));
}
