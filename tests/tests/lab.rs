//! The product models against the real kernel: every stored lab output in `tests/data/lab/`
//! (recorded by `validation/`, see its README) is replayed through `blocksight` and the model's
//! counters are compared with the kernel's, within the targets of docs/validation.md:
//! dm-cache read and write hit ratios within 2 points and promotions within 15%; md total
//! member reads and writes (bios and bytes) within 10%; bcache `cache_hit_ratio`, the share of
//! reads served from the cache and the share bypassed within 2 points.

use std::path::Path;

use blocksight_tests::{blocksight_json, data_dir};
use serde_json::Value;

/// Hit ratios: within this many points of the kernel's.
const HIT_RATIO_POINTS: f64 = 2.0;
/// Promotions: within this share of the kernel's.
const PROMOTIONS_SHARE: f64 = 0.15;
/// md: total member reads and writes (bios and bytes), each within this share of the kernel's.
const MEMBER_IO_SHARE: f64 = 0.10;
/// bcache write-back: dirty data when the counters were read, within this share of the
/// kernel's or [`DIRTY_BYTES_SLACK`] (`dirty_data` prints two or three significant digits).
const DIRTY_SHARE: f64 = 0.15;
const DIRTY_BYTES_SLACK: f64 = 512.0 * 1024.0;

/// A size as bcache's sysfs prints it (`bch_hprint`: "8.4M", "512k", "0").
fn hsize(v: &Value, key: &str) -> f64 {
    let text = v[key]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| v[key].to_string());
    let text = text.trim();
    let (digits, unit) = match text.chars().last() {
        Some(c @ ('k' | 'M' | 'G' | 'T')) => (&text[..text.len() - 1], c),
        _ => (text, ' '),
    };
    let n: f64 = digits
        .parse()
        .unwrap_or_else(|_| panic!("{key}: not a size: {text}"));
    n * match unit {
        'k' => 1024.0,
        'M' => 1024.0 * 1024.0,
        'G' => 1024.0 * 1024.0 * 1024.0,
        'T' => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => 1.0,
    }
}

fn lab_dirs() -> Vec<std::path::PathBuf> {
    let root = data_dir().join("lab");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|d| d.ok().map(|d| d.path()))
        .filter(|d| d.join("lab.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn load(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("lab.json")).expect("lab.json");
    serde_json::from_str(&text).expect("lab.json is JSON")
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .or_else(|| v[key].as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn ratio(hits: f64, misses: f64) -> Option<f64> {
    (hits + misses > 0.0).then(|| hits / (hits + misses))
}

/// Runs `blocksight ARGS... DIR/bios.bst --json -q` on a stored workload: the model's JSON and
/// the workload's name.
fn run_model(dir: &Path, mut args: Vec<String>) -> (Value, String) {
    args.extend([
        dir.join("bios.bst").display().to_string(),
        "--json".into(),
        "-q".into(),
    ]);
    let model = blocksight_json(&dir.display().to_string(), &args);
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    (model, name)
}

/// Runs `blocksight simulate --preset dm-cache-smq` on a stored dm-cache workload and returns
/// the failures (empty when every counter is within its target).
fn check_dm_cache(dir: &Path, lab: &Value) -> Vec<String> {
    let p = &lab["params"];
    let mode = if p["mode"] == "writeback" { "wb" } else { "wt" };
    // smq's first tick runs at the resume, the last step of `dmsetup create`: where the run
    // recorded when that returned, it is the closer bound (the marker before the create is
    // 0.1-0.3 s early under TCG, docs/validation.md).
    let created = p["create_returned_before_first_bio_s"]
        .as_f64()
        .or_else(|| p["created_before_first_bio_s"].as_f64())
        .unwrap_or(0.0);
    let (model, name) = run_model(
        dir,
        vec![
            "simulate".to_string(),
            "--preset".into(),
            "dm-cache-smq".into(),
            "--cache-size".into(),
            format!("{}", num(p, "cache_bytes") as u64),
            "--line-size".into(),
            format!("{}", num(p, "block_bytes") as u64),
            "--origin-size".into(),
            format!("{}", num(p, "origin_bytes") as u64),
            "--mode".into(),
            mode.into(),
            "--created-before".into(),
            format!("{created}"),
        ],
    );
    let s = &model["result"]["status"];
    let k = &lab["counters"];
    let mut failures = Vec::new();
    for what in ["read", "write"] {
        let kr = ratio(
            num(k, &format!("{what}_hits")),
            num(k, &format!("{what}_misses")),
        );
        let mr = ratio(
            num(s, &format!("{what}_hits")),
            num(s, &format!("{what}_misses")),
        );
        match (kr, mr) {
            (Some(kr), Some(mr)) if ((mr - kr) * 100.0).abs() > HIT_RATIO_POINTS => {
                failures.push(format!(
                    "{name}: {what} hit ratio kernel {:.1}% model {:.1}%",
                    kr * 100.0,
                    mr * 100.0
                ))
            }
            (None, None) | (Some(_), Some(_)) => {}
            _ => failures.push(format!("{name}: {what}s on one side only")),
        }
    }
    let (kp, mp) = (num(k, "promotions"), num(s, "promotions"));
    if (mp - kp).abs() > PROMOTIONS_SHARE * kp.max(1.0) {
        failures.push(format!("{name}: promotions kernel {kp} model {mp}"));
    }
    // Same bio pieces on both sides: the kernel counts every piece as a hit or a miss except
    // the whole-block writes it promotes with the bio itself.
    let kernel_counted: f64 = ["read_hits", "read_misses", "write_hits", "write_misses"]
        .iter()
        .map(|c| num(k, c))
        .sum();
    let model_counted: f64 = ["read_hits", "read_misses", "write_hits", "write_misses"]
        .iter()
        .map(|c| num(s, c))
        .sum();
    if (kernel_counted - model_counted).abs() > 0.01 * kernel_counted {
        failures.push(format!(
            "{name}: bio pieces counted: kernel {kernel_counted}, model {model_counted}"
        ));
    }
    failures
}

/// Runs `blocksight predict --md-members` on a stored md workload and compares the member I/O
/// with the bios md sent its members (their `block_bio_queue`); then the same for the timing
/// engine (`predict` at the workload's queue depth, `nvme` members), whose stripe heads
/// gather the bios in flight until md's thread takes them.
fn check_md(dir: &Path, lab: &Value) -> Vec<String> {
    let mut failures = check_md_with(dir, lab, &["--md-members"], "");
    failures.extend(check_md_with(
        dir,
        lab,
        &["--disk", "nvme", "--md-bitmap", "none"],
        "timing ",
    ));
    failures
}

/// Runs `predict ARGS` on a stored md workload and compares its member I/O totals (the count
/// model's `result.total`, or the timing engine's `disks[]`); `label` prefixes each failure.
fn check_md_with(dir: &Path, lab: &Value, extra: &[&str], label: &str) -> Vec<String> {
    let p = &lab["params"];
    let mut args = vec!["predict".to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend([
        "--layout".into(),
        format!("raid{}", num(p, "level") as u64),
        "--disks".into(),
        format!("{}", num(p, "disks") as u64),
        "--chunk".into(),
        format!("{}", num(p, "chunk_bytes") as u64),
        "--qd".into(),
        format!("{}", num(p, "iodepth") as u64),
    ]);
    let sc = num(p, "stripe_cache") as u64;
    if sc > 0 {
        args.extend(["--stripe-cache-size".to_string(), sc.to_string()]);
    }
    // md RAID 10's layout (n2, f2, o2, ...), recorded since the RAID 10 layouts were modelled.
    if let Some(layout) = p["raid10_layout"].as_str() {
        args.extend(["--raid10-layout".to_string(), layout.to_string()]);
    }
    let (model, name) = run_model(dir, args);
    let total = if label.is_empty() {
        model["result"]["total"].clone()
    } else {
        let disks = model["configs"][0]["without_cache"]["disks"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let sum = |k: &str| disks.iter().map(|d| num(d, k)).sum::<f64>();
        serde_json::json!({
            "read_bios": sum("reads"),
            "read_bytes": sum("read_bytes"),
            "write_bios": sum("writes"),
            "write_bytes": sum("write_bytes"),
        })
    };
    let t = &total;
    let members = lab["members_bios"].as_object().expect("members_bios");
    let kernel = |key: &str| members.values().map(|m| num(m, key)).sum::<f64>();
    let mut failures = Vec::new();
    // The empty flushes md sent its members (runs that replay flushes count them apart from
    // the writes); the count model's, exactly one per member and flush.
    let kernel_flushes: f64 = members
        .values()
        .map(|m| m["flush_bios"].as_f64().unwrap_or(0.0))
        .sum();
    if label.is_empty() {
        let model_flushes = num(t, "flush_bios");
        if (model_flushes - kernel_flushes).abs() > MEMBER_IO_SHARE * kernel_flushes.max(1.0) {
            failures.push(format!(
                "{name}: member flush bios kernel {kernel_flushes} model {model_flushes}"
            ));
        }
    }
    for (what, kernel_value, model_value) in [
        ("member read bios", kernel("read_bios"), num(t, "read_bios")),
        (
            "member read bytes",
            kernel("read_sectors") * 512.0,
            num(t, "read_bytes"),
        ),
        (
            "member write bios",
            kernel("write_bios"),
            num(t, "write_bios"),
        ),
        (
            "member write bytes",
            kernel("write_sectors") * 512.0,
            num(t, "write_bytes"),
        ),
    ] {
        if (model_value - kernel_value).abs() > MEMBER_IO_SHARE * kernel_value.max(1.0) {
            failures.push(format!(
                "{name}: {label}{what} kernel {kernel_value} model {model_value}"
            ));
        }
    }
    failures
}

/// Runs `blocksight simulate --preset bcache-kernel` on a stored bcache workload and compares it with
/// the kernel's `stats_total/`: the hit ratio bcache reports (`cache_hit_ratio`: hits over
/// hits + misses, bypassed reads excluded), the share of reads served from the cache (bypassed
/// or not) and the share of reads bypassed, each within 2 points. The kernel counts exactly
/// one read more than the trace holds, a miss: the partition scan when bcache0 appears, before
/// tracing starts; it is taken off the kernel's misses. Where the run traced the cache device
/// (`cache_device` in lab.json), the model takes its measured metadata write latency (the mean
/// of the prio writes' and the journal writes' median latencies, so that the allocator's
/// refill, one of each, lasts their sum).
fn check_bcache(dir: &Path, lab: &Value) -> Vec<String> {
    let p = &lab["params"];
    let mode = match p["mode"].as_str() {
        Some("writeback") => "wb",
        Some("writearound") => "wa",
        _ => "wt",
    };
    let mut extra = Vec::new();
    let c = &lab["cache_device"];
    if let (Some(prio), Some(journal)) = (
        c["prio_write_us"]["median"].as_f64(),
        c["journal_write_us"]["median"].as_f64(),
    ) {
        extra.push("--cache-write-latency".to_string());
        extra.push(format!("{:.0}us", (prio + journal) / 2.0));
    }
    // The congestion thresholds the run had (older runs set both to 0 and recorded
    // `congested_thresholds_us`); with them on, the cache device's read latency is the median
    // the run measured on it (its data reads, block_bio_queue to block_bio_complete).
    let threshold = |key: &str| {
        p[key]
            .as_f64()
            .or_else(|| p[key].as_str().and_then(|s| s.parse().ok()))
            .unwrap_or(0.0) as u64
    };
    let (read_us, write_us) = (
        threshold("congested_read_threshold_us"),
        threshold("congested_write_threshold_us"),
    );
    extra.extend([
        "--congested-read-threshold-us".to_string(),
        read_us.to_string(),
        "--congested-write-threshold-us".to_string(),
        write_us.to_string(),
    ]);
    if let (true, Some(read)) = (read_us + write_us > 0, c["data_read_us"]["median"].as_f64()) {
        extra.push("--cache-read-latency".to_string());
        extra.push(format!("{read:.0}us"));
    }
    let args: Vec<String> = vec![
        "simulate".to_string(),
        "--preset".into(),
        "bcache-kernel".into(),
        "--cache-size".into(),
        format!("{}", num(p, "cache_bytes") as u64),
        "--bucket-size".into(),
        format!("{}", num(p, "bucket_bytes") as u64),
        "--seq-cutoff".into(),
        format!("{}", num(p, "sequential_cutoff") as u64),
        "--mode".into(),
        mode.into(),
    ]
    .into_iter()
    .chain(extra)
    .collect();
    let k = &lab["counters"];
    // Runs that recorded when the counters were read (seconds after the last fio job ended)
    // give the model that idle time: background writeback goes on until then.
    let idle = |key: &str| -> Vec<String> {
        k[key]
            .as_f64()
            .or_else(|| k[key].as_str().and_then(|s| s.parse().ok()))
            .map(|s| vec!["--idle-after".to_string(), format!("{s}s")])
            .unwrap_or_default()
    };
    // Runs that recorded when the backing device was attached (its writeback timer's phase).
    let args: Vec<String> = match p["attached_before_first_bio_s"].as_f64() {
        Some(s) => [args, vec!["--attached-before".into(), format!("{s}s")]].concat(),
        None => args,
    };
    let (model, name) = run_model(dir, [args.clone(), idle("counters_after_s")].concat());
    let s = &model["result"]["stats"];
    let mut failures = dirty_failures(&name, "dirty data", hsize(k, "dirty_data"), s);
    if k.get("idle_dirty_data").is_some() {
        let (after_idle, _) = run_model(dir, [args, idle("idle_counters_after_s")].concat());
        failures.extend(dirty_failures(
            &name,
            "dirty data after idle",
            hsize(k, "idle_dirty_data"),
            &after_idle["result"]["stats"],
        ));
    }
    let kernel = [
        num(k, "hits"),
        num(k, "misses") - 1.0,
        num(k, "bypass_hits"),
        num(k, "bypass_misses"),
    ];
    let modelled = [
        num(s, "cache_hits"),
        num(s, "cache_misses"),
        num(s, "cache_bypass_hits"),
        num(s, "cache_bypass_misses"),
    ];
    let (kr, mr): (f64, f64) = (kernel.iter().sum(), modelled.iter().sum());
    if kr != mr {
        failures.push(format!(
            "{name}: reads counted kernel {kr} (less the partition scan's) model {mr}"
        ));
    }
    let measures = |c: &[f64; 4]| {
        [
            ("cache_hit_ratio", ratio(c[0], c[1])),
            ("read hit ratio", ratio(c[0] + c[2], c[1] + c[3])),
            ("read bypass ratio", ratio(c[2] + c[3], c[0] + c[1])),
        ]
    };
    // bcache's own bypass tracepoints (runs since the congestion run): the share of bios
    // bypassed as congested, within the hit ratios' target.
    // Runs with the thresholds on traced `bcache_bypass_congested` (none recorded: 0).
    if read_us + write_us > 0 {
        let kc = lab["bypass_events"]["congested"].as_f64().unwrap_or(0.0);
        let bios = num(lab, "bios").max(1.0);
        let mc = num(s, "bypassed_congested");
        if ((mc - kc) / bios * 100.0).abs() > HIT_RATIO_POINTS {
            failures.push(format!(
                "{name}: congested bypasses kernel {kc} model {mc} of {bios} bios"
            ));
        }
    }
    for ((what, kv), (_, mv)) in measures(&kernel).into_iter().zip(measures(&modelled)) {
        match (kv, mv) {
            (Some(kv), Some(mv)) if ((mv - kv) * 100.0).abs() > HIT_RATIO_POINTS => {
                failures.push(format!(
                    "{name}: {what} kernel {:.1}% model {:.1}%",
                    kv * 100.0,
                    mv * 100.0
                ))
            }
            (None, None) | (Some(_), Some(_)) => {}
            _ => failures.push(format!("{name}: {what} on one side only")),
        }
    }
    failures
}

/// The model's dirty bytes against the kernel's `dirty_data` (write-back only; both 0 in the
/// other modes).
fn dirty_failures(name: &str, what: &str, kernel: f64, stats: &Value) -> Vec<String> {
    let model = num(stats, "dirty_bytes");
    let off = (model - kernel).abs();
    if off > DIRTY_BYTES_SLACK && off > DIRTY_SHARE * kernel {
        vec![format!(
            "{name}: {what} kernel {:.1} MiB model {:.1} MiB",
            kernel / 1048576.0,
            model / 1048576.0
        )]
    } else {
        Vec::new()
    }
}

#[test]
fn bcache_model_matches_the_kernel_on_every_lab_workload() {
    check_product("bcache", check_bcache, "bc-");
}

/// Workload counters the model misses its target on today (docs/validation.md gives the
/// numbers and the suspected mechanisms). The test fails when this set changes either way: a
/// new miss is a regression, a fixed one must be moved out of this list and the docs.
const KNOWN_OUTSIDE: &[&str] = &[
    "bc-wa-128m-z12-rw70: cache_hit_ratio",
    "bc-wa-128m-z12-rw70: read hit ratio",
    "bc-wa-64m-mix: cache_hit_ratio",
    "bc-wa-64m-mix: read hit ratio",
    "bc-wb-128m-seqread96m-co0: cache_hit_ratio",
    "bc-wb-128m-seqread96m-co0: read hit ratio",
    "bc-wb-128m-seqread96m-co0-ct: cache_hit_ratio",
    "bc-wb-128m-seqread96m-co0-ct: read hit ratio",
    "bc-wb-64m-mix-co0: cache_hit_ratio",
    "bc-wb-64m-mix-co0: read hit ratio",
    "bc-wb-64m-mix-co0-ct: cache_hit_ratio",
    "bc-wb-64m-mix-co0-ct: read hit ratio",
    "bc-wb-128m-mix-cgd2: cache_hit_ratio",
    "bc-wb-64m-mix-co0-cgd2: cache_hit_ratio",
    "bc-wb-64m-randwrite192m-idle: dirty data",
    "bc-wb-64m-z12-rw70-qd32-ct: dirty data",
    "bc-wb-64m-z12-rw70-co0-cgd3: cache_hit_ratio",
    "bc-wt-128m-seqwrite96m-read-co0: cache_hit_ratio",
    "bc-wt-128m-seqwrite96m-read-co0: read hit ratio",
    "bc-wt-128m-seqwrite96m-read-co0-ct: cache_hit_ratio",
    "bc-wt-128m-seqwrite96m-read-co0-ct: read hit ratio",
    "dmc-wb128k-128m-z11-bssplit: read hit ratio",
    "dmc-wb128k-128m-z11-bssplit: write hit ratio",
    "dmc-wb1m-128m-z099-rw50: read hit ratio",
    "dmc-wb1m-128m-z099-rw50: promotions",
    "dmc-wb32k-64m-phases-rw70: write hit ratio",
    "dmc-wb32k-64m-phases-rw70-fixed: promotions",
    "dmc-wb32k-64m-uniform-rw60: promotions",
    "dmc-wb64k-128m-hotset-rw70: write hit ratio",
    "dmc-wb64k-256m-z099-rw20: read hit ratio",
    "dmc-wb64k-256m-z099-rw20: write hit ratio",
    "dmc-wb64k-64m-z12-rw70: read hit ratio",
    "dmc-wb64k-64m-z12-rw70: write hit ratio",
    "dmc-wt128k-32m-z12-rw60: promotions",
    "dmc-wt32k-128m-z099-rw60: promotions",
    "dmc-wt32k-64m-scan-then-z12: read hit ratio",
    "dmc-wt32k-64m-scan-then-z12: write hit ratio",
    "dmc-wt64k-256m-z099-r4k: promotions",
    "md5-c512-seqwrite1m: member read bios",
    "md5-c512-seqwrite1m: member read bytes",
    "md5-c512-seqwrite1m: timing member read bios",
    "md5-c512-seqwrite1m: timing member read bytes",
    "md5-c64-seqwrite96k: member read bios",
    "md5-c64-seqwrite96k: member read bytes",
    "md5-c64-seqwrite96k: timing member read bios",
    "md5-c64-seqwrite96k: timing member read bytes",
];

fn key(failure: &str) -> String {
    // "name: what kernel ... model ..." -> "name: what"
    let cut = failure.find(" kernel").unwrap_or(failure.len());
    failure[..cut].to_string()
}

#[test]
fn dm_cache_model_matches_the_kernel_on_every_lab_workload() {
    check_product("dm-cache", check_dm_cache, "dmc-");
}

#[test]
fn md_model_matches_the_kernel_on_every_lab_workload() {
    check_product("md", check_md, "md");
}

/// Checks every stored workload of `product` (at least 8) and compares the misses with
/// `KNOWN_OUTSIDE`.
fn check_product(product: &str, check: fn(&Path, &Value) -> Vec<String>, prefix: &str) {
    let mut checked = 0;
    let mut failures = Vec::new();
    for dir in lab_dirs() {
        let lab = load(&dir);
        if lab["params"]["product"] == product {
            failures.extend(check(&dir, &lab));
            checked += 1;
        }
    }
    assert!(
        checked >= 8,
        "only {checked} {product} lab workloads stored"
    );
    check_known(&failures, prefix);
}

/// Asserts that the failures are exactly the known misses among workloads named `prefix...`.
fn check_known(failures: &[String], prefix: &str) {
    let got: std::collections::BTreeSet<String> = failures.iter().map(|f| key(f)).collect();
    let known: std::collections::BTreeSet<String> = KNOWN_OUTSIDE
        .iter()
        .filter(|k| k.starts_with(prefix))
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        got,
        known,
        "the set of counters outside their targets changed; all misses now:\n{}",
        failures.join("\n")
    );
}

/// md recovering failed members with no other load (`validation/guest/md-rebuild.sh`,
/// docs/validation.md "md rebuilding"): the members the kernel read during the recovery and
/// how much, and what it wrote to a replacement, beside `--rebuilding`'s engine on the same
/// layouts. brd members and spares keep no statistics and are not compared.
#[test]
fn md_rebuild_reads_and_writes_what_the_kernel_did() {
    use analyzer_core::array::md::Raid10Layout;
    use analyzer_core::array::{
        ArrayConfig, ControllerModel, DeviceModel, DiskPreset, Level, Node,
    };
    let text = std::fs::read_to_string(data_dir().join("lab-rebuild/console.txt"))
        .expect("lab-rebuild/console.txt");
    // (run, device) -> (read sectors, write sectors) after less before; run -> component KiB.
    let mut stat = std::collections::HashMap::new();
    let mut component = std::collections::HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["###", which @ ("STAT-BEFORE" | "STAT-AFTER"), run, dev, fields @ ..] => {
                let n = |i: usize| fields[i].parse::<i64>().expect("stat field");
                let sign = if *which == "STAT-AFTER" { 1 } else { -1 };
                let e = stat
                    .entry((run.to_string(), dev.to_string()))
                    .or_insert((0, 0));
                e.0 += sign * n(2);
                e.1 += sign * n(6);
            }
            ["###", run, "component_size_kib", kib, ..] => {
                component.insert(run.to_string(), kib.parse::<u64>().expect("KiB"));
            }
            _ => {}
        }
    }
    let raid10 = |n| Node::md_raid10(Raid10Layout::default(), 64 << 10, 0, n);
    let cases: [(&str, Node, &[&str], &[usize]); 5] = [
        (
            "raid1-2",
            Node::over_disks(Level::Raid1, 0, 0, 2),
            &["vda", "vdb"],
            &[1],
        ),
        ("raid10n2-4", raid10(4), &["vda", "vdb", "vdc", "vdd"], &[2]),
        (
            "raid5-4",
            Node::over_disks(Level::Raid5, 64 << 10, 0, 4),
            &["vda", "vdb", "vdc", "vdd"],
            &[1],
        ),
        (
            "raid6-5-one",
            Node::over_disks(Level::Raid6, 64 << 10, 0, 5),
            &["vda", "vdb", "vdc", "vdd", "ram1"],
            &[2],
        ),
        (
            "raid6-5-two",
            Node::over_disks(Level::Raid6, 64 << 10, 0, 5),
            &["vda", "vdb", "vdc", "vdd", "ram1"],
            &[1, 3],
        ),
    ];
    let mut compared = 0;
    for (run, mut layout, members, failed) in cases {
        let bytes = component[run] * 1024;
        layout.failed = failed.to_vec();
        let mut device = DiskPreset::Nvme.model();
        if let DeviceModel::Ssd(s) = &mut device {
            s.capacity_bytes = bytes;
        }
        let mut cfg = ArrayConfig::new(
            vec![device; members.len()],
            layout,
            ControllerModel::software_without_bitmap(),
        )
        .expect("layout");
        cfg.rebuilding = true;
        let mut engine = cfg.engine();
        engine.run_until(3_600_000_000_000);
        let r = engine.finish();
        assert!(
            r.rebuild
                .as_ref()
                .is_some_and(|b| b.finished_nanos.is_some()),
            "{run}: the model's rebuild did not finish"
        );
        for (i, dev) in members.iter().enumerate() {
            let Some(&(read, write)) = stat.get(&(run.to_string(), dev.to_string())) else {
                continue;
            };
            if dev.starts_with("ram") || failed.contains(&i) {
                continue;
            }
            let (kernel, model) = ((read * 512) as f64, r.disks[i].read_bytes as f64);
            // The kernel's counts include a page or two of md's own reads (superblock).
            assert!(
                (kernel - model).abs() <= 0.02 * bytes as f64 + 8192.0,
                "{run}: {dev} (member {i}) read {kernel} bytes in the kernel, {model} in the model"
            );
            assert!(
                write * 512 < 64 << 10,
                "{run}: {dev} written {write} sectors"
            );
            compared += 1;
        }
        // The one replacement with statistics: vde, the second spare of raid6-5-two.
        if let Some(&(_, write)) = stat.get(&(run.to_string(), "vde".to_string())) {
            if write > 0 {
                let model = r.disks[failed[failed.len() - 1]].write_bytes as f64;
                assert!(
                    ((write * 512) as f64 - model).abs() <= 0.02 * bytes as f64,
                    "{run}: replacement written {} bytes in the kernel, {model} in the model",
                    write * 512
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 12, "only {compared} counts compared");
}

/// Degraded md RAID 5 (`validation/guest/md-degraded.sh`, docs/validation.md "Degraded md RAID
/// 5"): the bytes the kernel's members read and wrote for md0's bios, beside the timing
/// engine's replay of the same bios on the same degraded layout (md's stripe model with the
/// failed member), within md's target (10 %). The counter it misses is listed (the healthy
/// array's `md5-c64-seqwrite96k` misses the same way: `KNOWN_OUTSIDE`), and the test fails
/// when that set changes either way.
#[test]
fn degraded_md_raid5_member_io_against_the_kernel() {
    const KNOWN_DEGRADED_OUTSIDE: &[&str] = &["seqwrite96k: member read bytes"];
    let dir = data_dir().join("lab-degraded");
    let text = std::fs::read_to_string(dir.join("kernel.json")).expect("kernel.json");
    let kernel: Value = serde_json::from_str(&text).expect("kernel.json is JSON");
    let workloads = kernel["workloads"].as_object().expect("workloads");
    assert!(workloads.len() >= 4);
    let mut misses = std::collections::BTreeSet::new();
    let mut table = Vec::new();
    for (name, w) in workloads {
        let bst = dir.join(format!("{name}.bst")).display().to_string();
        let depth = format!("{}", num(w, "iodepth") as u64);
        let model = blocksight_json(
            name,
            [
                "predict",
                &bst,
                "-q",
                "--layout",
                "raid5",
                "--disks",
                "4",
                "--chunk",
                "65536",
                "--qd",
                &depth,
                "--disk",
                "nvme",
                "--md-bitmap",
                "none",
                "--failed",
                "1",
                "--json",
            ],
        );
        let disks = model["configs"][0]["without_cache"]["disks"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let model_sum = |k: &str| {
            disks
                .iter()
                .filter(|d| d["tier"] == "array")
                .map(|d| num(d, k))
                .sum::<f64>()
        };
        let members = w["members"].as_object().expect("members");
        let kernel_sum = |k: &str| members.values().map(|m| num(m, k)).sum::<f64>() * 512.0;
        for (what, k, m) in [
            (
                "member read bytes",
                kernel_sum("read_sectors"),
                model_sum("read_bytes"),
            ),
            (
                "member write bytes",
                kernel_sum("write_sectors"),
                model_sum("write_bytes"),
            ),
        ] {
            // md's superblock writes make a few KiB the model has no bios for.
            let outside = (m - k).abs() > MEMBER_IO_SHARE * k.max(64.0 * 1024.0);
            table.push(format!("{name}: {what} kernel {k} model {m}"));
            if outside {
                misses.insert(format!("{name}: {what}"));
            }
        }
    }
    let known: std::collections::BTreeSet<String> = KNOWN_DEGRADED_OUTSIDE
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(misses, known, "all counters:\n{}", table.join("\n"));
}
