//! `blocksight predict`: predicted IOPS, MB/s and latency of a RAID layout, with and without an
//! SSD cache tier, for a trace (replayed open or closed loop) or a synthetic profile. The flags
//! become an `analyzer_core::job::predict::PredictRequest`; the job is the web app's.

use std::io::Write;
use std::path::PathBuf;

use analyzer_core::array::md::MdLevel;
use analyzer_core::array::RunResult;
use analyzer_core::job::predict::md::{MdMembers, MdRequest};
use analyzer_core::job::predict::{
    ArrayParams, CacheDevicesParams, ControllerSettings, Predict, PredictRequest, PredictResult,
    ProfileParams, SampleParams,
};
use analyzer_core::job::{CacheParams, CacheSize, Job};
use analyzer_core::units::{
    bytes, bytes_per_sec, count, duration, duration_f64, escape, parse_size, per_sec,
};
use anyhow::{bail, Context};

use crate::input::{self, InputArgs};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Trace files to replay (omit with --profile). .gz/.zst/.xz are decompressed.
    #[arg(value_name = "IN", conflicts_with = "profile")]
    pub inputs: Vec<PathBuf>,
    /// The input format; detected when omitted.
    #[arg(long, short = 'f', value_name = "FORMAT")]
    pub format: Option<String>,
    /// blktrace, blkparse and tracefs: D (issued) or Q (queued; dm and md have only Q). Default:
    /// D, or Q for a blkparse or tracefs trace without any D.
    #[arg(long, value_name = "D|Q")]
    pub action: Option<String>,
    /// Generic CSV only: column mapping.
    #[arg(long, value_name = "MAP")]
    pub csv_columns: Option<String>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Synthetic profile instead of a trace: 4k-random-read, 4k-random-write, 64k-seq-read,
    /// 64k-seq-write, oltp-8k, sql-90-10, sql-80-20.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Working-set size the profile touches (default: the whole array).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub span: Option<u64>,
    /// Override the profile's request size.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub io_size: Option<u64>,
    /// Override the profile's read percentage (0-100).
    #[arg(long, value_name = "PCT")]
    pub read_pct: Option<f64>,
    /// Requests simulated per run (profiles) [default: 200000].
    #[arg(long, value_name = "N")]
    pub requests: Option<u64>,
    /// PRNG seed (profiles); the same seed gives the same numbers [default: 1].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// RAID level: jbod, raid0, raid1, raid5, raid6, raid10, raid50, raid60.
    #[arg(long, value_name = "LEVEL")]
    pub layout: Option<String>,
    /// Number of member disks.
    #[arg(long, value_name = "N")]
    pub disks: Option<u32>,
    /// Disk preset: sata-7k2, sas-10k, sas-15k, sata-ssd, nvme.
    #[arg(long, value_name = "PRESET")]
    pub disk: Option<String>,
    /// Stripe unit.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64KiB")]
    pub chunk: u64,
    /// RAID 1/5/6 groups for raid10/50/60.
    #[arg(long, value_name = "N")]
    pub groups: Option<u32>,
    /// Failed disks (degraded mode), by disk index 0..N-1, e.g. `0` or `0,3`; for raid10/50/60
    /// each failure lands in the disk's own mirror or parity group.
    #[arg(long, value_name = "I,J", value_delimiter = ',')]
    pub failed: Vec<u32>,
    /// Linux md rebuilds the failed disks onto replacements while the load runs: its
    /// recovery I/O shares the members' queues, and md yields to the load as it does (between
    /// --md-sync-speed-min and --md-sync-speed-max). The numbers are those during the
    /// rebuild, and the rebuild time the speed it reached. Software arrays only.
    #[arg(long, conflicts_with = "md_members")]
    pub rebuilding: bool,
    /// JSON array description (nesting, per-parameter overrides, controller, cache devices);
    /// replaces --layout/--disks/--disk. See docs/model.md.
    #[arg(long, value_name = "FILE")]
    pub array: Option<PathBuf>,

    /// A named RAID controller with its published cache and ceilings (perc-5e, perc-h730,
    /// lsi-9260-8i, lsi-9361-8i, hpe-p440, hpe-p421, intel-vroc, ...); `--controller list` lists them
    /// with their sources. The other controller flags override its values.
    #[arg(long, value_name = "NAME|list")]
    pub controller: Option<String>,
    /// Hardware controller with this much battery-backed write-back cache (0 = write-through).
    /// Without it the array is Linux md (no controller latency, no cache).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub controller_cache: Option<u64>,
    /// Controller read-ahead on sequential reads.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub read_ahead: Option<u64>,
    /// Controller ceiling: host IOPS per logical drive.
    #[arg(long, value_name = "IOPS")]
    pub max_iops: Option<f64>,
    /// Controller ceiling: host MB/s per logical drive (10^6 bytes).
    #[arg(long, value_name = "MBPS")]
    pub max_mbps: Option<f64>,
    /// Controller ceiling: parity chunks computed per second.
    #[arg(long, value_name = "N")]
    pub parity_rate: Option<f64>,

    /// Outstanding I/Os (closed loop).
    #[arg(long, value_name = "N", conflicts_with = "replay")]
    pub qd: Option<u32>,
    /// Replay the trace at its timestamps (open loop).
    #[arg(long, requires = "inputs")]
    pub replay: bool,
    /// Open-loop speed factor: 2 replays the trace twice as fast.
    #[arg(long, value_name = "X", default_value_t = 1.0, requires = "replay")]
    pub speed: f64,
    /// Add an IOPS-vs-latency curve (queue depths for closed loop, speed factors for replay).
    #[arg(long)]
    pub curve: bool,

    /// SSD cache size in front of the array (a size, or a percentage of the trace's footprint
    /// like 10%): prediction with and without it.
    #[arg(long, value_name = "SIZE|PCT%")]
    pub cache_size: Option<String>,
    /// Cache product preset (`blocksight simulate --help` lists them: dm-cache, bcache, opencas,
    /// cachecade1, ...). Without one: --policy (default lru), write-through, 4 KiB lines.
    #[arg(long, value_name = "NAME", requires = "cache_size")]
    pub preset: Option<String>,
    /// Cache replacement policy (overrides the preset's).
    #[arg(long, value_name = "POLICY", requires = "cache_size")]
    pub policy: Option<String>,
    /// Cache write mode: ro, wt, wa, wb (overrides the preset's).
    #[arg(long, value_name = "MODE", requires = "cache_size")]
    pub mode: Option<String>,
    /// Cache admission: always, nhit:N, smq, seqcut:SIZE (overrides the preset's).
    #[arg(long, value_name = "RULE", requires = "cache_size")]
    pub admission: Option<String>,
    /// Cache line size (default: the preset's, else 4 KiB, as `simulate`; `--line-size` is
    /// `simulate`'s name for it, accepted here too).
    #[arg(
        long,
        visible_alias = "line-size",
        value_name = "SIZE",
        value_parser = parse_size,
        requires = "cache_size"
    )]
    pub cache_line: Option<u64>,
    /// Cache devices: preset and count (RAID 1 when 2, RAID 0 otherwise).
    #[arg(
        long,
        value_name = "PRESET",
        default_value = "sata-ssd",
        requires = "cache_size"
    )]
    pub cache_disk: String,
    #[arg(long, value_name = "N", default_value_t = 2, requires = "cache_size")]
    pub cache_disks: u32,

    /// Instead of timing: what Linux md sends each member for the trace's bios (RAID 0/1/10/5/6
    /// from --layout, --disks and --chunk; RAID 5/6 with its stripe cache), per member.
    #[arg(long = "md-members", requires = "inputs")]
    pub md_members: bool,
    /// Linux md RAID 10 (software arrays, and --md-members): mdadm's --layout, n2 (default),
    /// f2, o2, n3, ... (near, far or offset copies); any disk count from the copies up.
    #[arg(long = "raid10-layout", value_name = "n2|f2|o2|...")]
    pub raid10_layout: Option<String>,
    /// Linux md RAID 5/6 (software arrays, and --md-members): stripe_cache_size (default 256).
    #[arg(long = "stripe-cache-size", value_name = "N")]
    pub stripe_cache_size: Option<u32>,
    /// Linux md RAID 5/6: group_thread_cnt, stripe-handling threads besides raid5d (default 0:
    /// raid5d alone, as md).
    #[arg(long = "group-thread-cnt", value_name = "N")]
    pub group_thread_cnt: Option<u32>,
    /// Linux md RAID 5/6: CPU time of one pass of md's stripe state machine in raid5d (a
    /// stripe head, or a batch of adjacent full-stripe heads; default 4.5us, a 2012-class
    /// Xeon core; see docs/model.md for the sources).
    #[arg(long = "md-stripe-cost", value_name = "DURATION")]
    pub md_stripe_cost: Option<String>,
    /// Linux md RAID 5/6: CPU time per 4 KiB page of parity input (copy and XOR or P+Q;
    /// default from the kernel's boot-time XOR and RAID 6 benchmarks, 0.30us for RAID 5;
    /// 6.8us models the 2016 Atom server of docs/model.md).
    #[arg(long = "md-page-cost", value_name = "DURATION")]
    pub md_page_cost: Option<String>,
    /// Linux md RAID 1/5/6/10: the write-intent bitmap: auto (default: what mdadm creates,
    /// an internal bitmap of 64 MiB chunks on members over 100 GiB), none, internal, or a
    /// bitmap chunk size (mdadm's --bitmap-chunk, e.g. 128MiB). Timing only: --md-members
    /// counts without a bitmap.
    #[arg(
        long = "md-bitmap",
        value_name = "auto|none|internal|CHUNK",
        conflicts_with = "md_members"
    )]
    pub md_bitmap: Option<String>,
    /// Linux md RAID 1/5/6/10 (software arrays, and --md-members): safe_mode_delay, how long
    /// after its writes end md marks the array clean in its superblock (default 200ms, md's;
    /// 0 turns safe mode off). Each mark, and the dirty mark before the next write, writes
    /// the superblock to every member.
    #[arg(long = "md-safe-mode-delay", value_name = "DURATION", value_parser = crate::output::parse_duration)]
    pub md_safe_mode_delay: Option<u64>,
    /// Linux md RAID 1/5/6/10 with --rebuilding: sync_speed_min in KiB/s, as md's sysfs takes
    /// it (default 1000, the sysctl dev.raid.speed_limit_min): below it the rebuild never
    /// yields to other I/O.
    #[arg(
        long = "md-sync-speed-min",
        value_name = "KIB_PER_SEC",
        requires = "rebuilding"
    )]
    pub md_sync_speed_min: Option<u32>,
    /// Linux md RAID 1/5/6/10 with --rebuilding: sync_speed_max in KiB/s (default 200000,
    /// dev.raid.speed_limit_max): above it the rebuild sleeps.
    #[arg(
        long = "md-sync-speed-max",
        value_name = "KIB_PER_SEC",
        requires = "rebuilding"
    )]
    pub md_sync_speed_max: Option<u32>,
    /// Only the requests from START to END after the trace's first request (`10s..70s`), as
    /// the web app's brushed time window.
    #[arg(long, value_name = "START..END")]
    pub window: Option<String>,
    /// An estimate: replay only slices of SLICE consecutive events every EVERY events (the
    /// cache tier still sees every request; an LRU tier without write-back simulates the
    /// slices' lines and a spatial sample of the others), as the Array view's first answer does
    /// on a large trace (1024/N for a trace of 32·N events; docs/web.md).
    #[arg(long, value_name = "SLICE/EVERY", conflicts_with = "replay")]
    pub sample: Option<String>,
    /// Print the prediction as JSON (the job's result, as the web app gets it).
    #[arg(long)]
    pub json: bool,
}

/// `10s..70s` as nanoseconds after the first request.
pub fn parse_window(text: &str) -> anyhow::Result<(u64, u64)> {
    let (a, b) = text.split_once("..").with_context(|| {
        format!(
            "--window {:?}: expected START..END, like 10s..70s",
            escape(text)
        )
    })?;
    let start = analyzer_core::job::parse_duration(a).context("--window")?;
    let end = analyzer_core::job::parse_duration(b).context("--window")?;
    if end <= start {
        bail!(
            "--window {:?}: the end must be after the start",
            escape(text)
        );
    }
    Ok((start, end))
}

/// `54.6us`, `20us`, `1ms` as nanoseconds (fractions allowed).
fn parse_duration_nanos(text: &str) -> anyhow::Result<f64> {
    let t = text.trim();
    let (num, scale) = [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ]
    .iter()
    .find_map(|(u, k)| t.strip_suffix(u).map(|n| (n, *k)))
    .with_context(|| format!("{:?}: expected a duration like 20us or 0.05ms", escape(t)))?;
    let v: f64 = num
        .trim()
        .parse()
        .with_context(|| format!("{:?}: expected a number before the unit", escape(t)))?;
    if !(v.is_finite() && v >= 0.0) {
        bail!("{:?}: expected a duration of 0 or more", escape(t));
    }
    Ok(v * scale)
}

/// The request the flags describe.
pub fn request(args: &Args) -> anyhow::Result<PredictRequest> {
    let spec_json = match &args.array {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", input::shown(path)))?,
        ),
        None => None,
    };
    let layout = if spec_json.is_some() {
        ArrayParams {
            spec_json,
            ..ArrayParams::default()
        }
    } else {
        let level = args
            .layout
            .clone()
            .context("give --layout LEVEL (or --array FILE)")?;
        let disks = args.disks.context("give --disks N")?;
        let disk = args
            .disk
            .clone()
            .context("give --disk PRESET (sata-7k2, sas-10k, sas-15k, sata-ssd, nvme)")?;
        ArrayParams {
            level,
            disks,
            disk,
            chunk_bytes: args.chunk,
            controller_cache: false,
            groups: args.groups,
            failed: args.failed.clone(),
            rebuilding: false,
            controller: ControllerSettings::default(),
            spec_json: None,
        }
    };
    let layout = ArrayParams {
        controller: ControllerSettings {
            preset: args.controller.clone(),
            cache_bytes: args.controller_cache,
            read_ahead_bytes: args.read_ahead,
            max_iops: args.max_iops,
            max_bytes_per_sec: args.max_mbps.map(|m| m * 1e6),
            parity_chunks_per_sec: args.parity_rate,
            md_stripe_cache_size: args.stripe_cache_size,
            md_group_thread_cnt: args.group_thread_cnt,
            md_raid10_layout: args.raid10_layout.clone(),
            md_bitmap: args.md_bitmap.clone(),
            md_safe_mode_delay_nanos: args.md_safe_mode_delay,
            md_sync_speed_min_kib: args.md_sync_speed_min,
            md_sync_speed_max_kib: args.md_sync_speed_max,
            md_stripe_cost_nanos: args
                .md_stripe_cost
                .as_deref()
                .map(parse_duration_nanos)
                .transpose()
                .context("--md-stripe-cost")?,
            md_page_cost_nanos: args
                .md_page_cost
                .as_deref()
                .map(parse_duration_nanos)
                .transpose()
                .context("--md-page-cost")?,
        },
        rebuilding: args.rebuilding,
        ..layout
    };
    let cache = match &args.cache_size {
        Some(size) => Some(
            CacheParams::choose(
                args.preset.as_deref(),
                args.policy.as_deref(),
                args.cache_line,
                args.mode.as_deref(),
                args.admission.as_deref(),
                CacheSize::parse(size).context("--cache-size")?,
            )
            .context("cache")?,
        ),
        None => None,
    };
    if args.qd == Some(0) {
        bail!("--qd 0: a closed-loop replay keeps at least 1 I/O outstanding");
    }
    if args.profile.is_some() && args.window.is_some() {
        bail!("--window takes a time window of a trace; a --profile has no timestamps to cut");
    }
    let profile = match &args.profile {
        Some(name) => Some(ProfileParams {
            name: name.clone(),
            span_bytes: args.span,
            io_size_bytes: args.io_size,
            read_percent: args.read_pct,
            requests: args.requests.unwrap_or(200_000),
            seed: args.seed.unwrap_or(1),
        }),
        None => {
            if args.inputs.is_empty() {
                bail!("give trace files (IN...) or --profile NAME");
            }
            // A profile's settings would change nothing on a trace: refused, not ignored.
            let profile_only = [
                ("--span", args.span.is_some()),
                ("--io-size", args.io_size.is_some()),
                ("--read-pct", args.read_pct.is_some()),
                ("--requests", args.requests.is_some()),
                ("--seed", args.seed.is_some()),
            ];
            let given = super::flags_given(&profile_only);
            if !given.is_empty() {
                let one = given.len() == 1;
                bail!(
                    "{} {} a synthetic --profile's workload; a trace replay has its own (leave {} out)",
                    given.join(", "),
                    if one { "sets" } else { "set" },
                    if one { "it" } else { "them" }
                );
            }
            None
        }
    };
    Ok(PredictRequest {
        speed: args.replay.then_some(args.speed),
        cache_devices: CacheDevicesParams {
            disk: args.cache_disk.clone(),
            count: args.cache_disks,
        },
        profile,
        sample: args
            .sample
            .as_deref()
            .map(str::parse::<SampleParams>)
            .transpose()
            .context("--sample")?,
        ..PredictRequest::new(vec![layout], cache, args.qd.unwrap_or(1))
            .with_curve(args.curve)
            .with_window(args.window.as_deref().map(parse_window).transpose()?)
    })
}

fn input_args(args: &Args) -> InputArgs {
    InputArgs {
        inputs: args.inputs.clone(),
        format: args.format.clone(),
        action: args.action.clone(),
        csv_columns: args.csv_columns.clone(),
        quiet: args.quiet,
    }
}

/// Runs the job over the trace (or the profile) and returns its result.
pub fn predict(args: &Args) -> anyhow::Result<PredictResult> {
    let job = Predict::new(request(args)?)?;
    if job.passes() == 0 {
        return Ok(job.finish()?);
    }
    let (result, read) = input::run_job(&input_args(args), job)?;
    input::warn_diagnostics(&read);
    Ok(result)
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    if args.controller.as_deref() == Some("list") {
        return list_controllers(args.json);
    }
    if args.md_members {
        return run_md_members(args);
    }
    let prediction = predict(args)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &prediction)?;
        writeln!(out)?;
    } else {
        print_text(&mut out, &prediction)?;
    }
    Ok(())
}

fn print_run(out: &mut impl Write, label: &str, r: &RunResult) -> std::io::Result<()> {
    writeln!(
        out,
        "{label:<12} {} IOPS (read {}, write {}), {}",
        per_sec(r.iops),
        per_sec(r.read_iops),
        per_sec(r.write_iops),
        bytes_per_sec(r.bytes_per_sec)
    )?;
    writeln!(
        out,
        "{:<12} latency mean {}, p50 {}, p95 {}, p99 {}",
        "",
        duration_f64(r.latency.mean_nanos),
        duration(r.latency.p50_nanos),
        duration(r.latency.p95_nanos),
        duration(r.latency.p99_nanos)
    )?;
    let array: Vec<f64> = r
        .disks
        .iter()
        .filter(|d| d.tier == analyzer_core::array::Tier::Array)
        .map(|d| d.utilisation * 100.0)
        .collect();
    // The cache devices only appear when the run used them.
    let cache: Vec<f64> = if r
        .disks
        .iter()
        .any(|d| d.tier == analyzer_core::array::Tier::Cache && d.iops > 0.0)
    {
        r.disks
            .iter()
            .filter(|d| d.tier == analyzer_core::array::Tier::Cache)
            .map(|d| d.utilisation * 100.0)
            .collect()
    } else {
        Vec::new()
    };
    let range = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        format!("{lo:.0}–{hi:.0}% busy")
    };
    if !array.is_empty() {
        writeln!(
            out,
            "{:<12} array disks {}{}",
            "",
            range(&array),
            if cache.is_empty() {
                String::new()
            } else {
                format!(", cache devices {}", range(&cache))
            }
        )?;
    }
    let members: Vec<_> = r
        .disks
        .iter()
        .filter(|d| d.tier == analyzer_core::array::Tier::Array)
        .collect();
    if members.iter().any(|d| d.reads + d.writes > 0) {
        let sum = |f: fn(&&analyzer_core::array::engine::DiskUse) -> u64| {
            members.iter().map(f).sum::<u64>()
        };
        writeln!(
            out,
            "{:<12} member I/O {} reads ({}), {} writes ({}) over {} members{}",
            "",
            count(sum(|d| d.reads)),
            bytes(sum(|d| d.read_bytes)),
            count(sum(|d| d.writes)),
            bytes(sum(|d| d.write_bytes)),
            members.len(),
            if r.md_stripe_heads > 0 {
                format!(
                    "; {} md stripe heads, raid5d {:.0}% busy",
                    count(r.md_stripe_heads),
                    r.raid5d_utilisation * 100.0
                )
            } else {
                String::new()
            }
        )?;
    }
    if let Some(b) = &r.md_bitmap {
        writeln!(
            out,
            "{:<12} md write-intent bitmap ({} chunks): {} unplugs and {} daemon passes wrote pages, {} page writes to the members; an unplug writing {:.0}% of the time",
            "",
            bytes(b.chunk_bytes),
            count(b.unplug_writes),
            count(b.daemon_writes),
            count(b.member_writes),
            b.unplug_busy * 100.0
        )?;
    }
    if let Some(s) = &r.md_superblock {
        writeln!(
            out,
            "{:<12} md superblock: {} updates (safe mode marking the array dirty or clean), {} writes to the members",
            "",
            count(s.updates),
            count(s.member_writes)
        )?;
    }
    writeln!(out, "{:<12} bottleneck: {}", "", r.bottleneck)?;
    Ok(())
}

pub fn print_text(out: &mut impl Write, p: &PredictResult) -> std::io::Result<()> {
    let open = p.request.speed.is_some();
    for c in &p.configs {
        writeln!(
            out,
            "array        {}, {} usable",
            c.description,
            bytes(c.capacity_bytes)
        )?;
        writeln!(out, "workload     {}", p.workload)?;
        print_run(out, "no cache", &c.without_cache)?;
        if let Some(w) = &c.with_cache {
            print_run(out, "with cache", w)?;
            if let Some(s) = c.speedup {
                writeln!(out, "speed-up     {s:.2}× IOPS")?;
            }
        }
        match (&c.without_cache.rebuild, c.rebuild_secs) {
            (Some(r), secs) => {
                writeln!(
                    out,
                    "rebuild      md rebuilt {}/s of each replacement beside the load ({} in {}; it yielded to the load at {} of its looks, slept above sync_speed_max at {}){}",
                    bytes(r.bytes_per_sec as u64),
                    bytes(r.member_bytes),
                    duration(c.without_cache.elapsed_nanos),
                    count(r.yields),
                    count(r.sleeps),
                    match secs {
                        Some(secs) => format!(
                            ": about {} for {} at that speed",
                            duration_f64(secs * 1e9),
                            bytes(r.member_capacity_bytes)
                        ),
                        None => String::new(),
                    }
                )?;
            }
            (None, Some(secs)) => {
                writeln!(
                    out,
                    "rebuild      about {} for one member at this load (an estimate; --rebuilding runs md's rebuild beside the load)",
                    duration_f64(secs * 1e9)
                )?;
            }
            (None, None) => {}
        }
        for (label, curve) in [("curve", &c.curve), ("with cache", &c.curve_with_cache)] {
            if curve.is_empty() {
                continue;
            }
            writeln!(
                out,
                "{label:<12} {:>8} {:>10} {:>10} {:>10}",
                if open { "speed" } else { "depth" },
                "IOPS",
                "mean",
                "p99"
            )?;
            for pt in curve.iter() {
                writeln!(
                    out,
                    "             {:>8} {:>10} {:>10} {:>10}",
                    pt.load.to_string(),
                    per_sec(pt.iops),
                    duration_f64(pt.mean_latency_nanos),
                    duration(pt.p99_latency_nanos)
                )?;
            }
        }
    }
    writeln!(out, "assumptions")?;
    for a in &p.assumptions {
        writeln!(out, "  - {a}")?;
    }
    writeln!(out, "  - model presets and calibration: docs/model.md")?;
    Ok(())
}

/// `--controller list`: the presets, their ceilings and sources.
fn list_controllers(json: bool) -> anyhow::Result<()> {
    use analyzer_core::array::controller_preset::ControllerPreset;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &ControllerPreset::ALL)?;
        writeln!(out)?;
        return Ok(());
    }
    for p in ControllerPreset::ALL {
        writeln!(out, "{:<22} {}", p.name, p.product)?;
        writeln!(out, "{:<22} {}", "", p.describe_ceilings())?;
        writeln!(out, "{:<22} sources: {}", "", p.sources)?;
    }
    Ok(())
}

/// `--md-members`: the md member-I/O job (`job::predict::md`) on the trace's bios.
fn run_md_members(args: &Args) -> anyhow::Result<()> {
    let layout = args
        .layout
        .as_deref()
        .context("--md-members needs --layout raid0, raid1, raid10, raid5 or raid6")?;
    let disks = args.disks.context("--md-members needs --disks")?;
    // What times a layout does not change what md sends its members: refused, not ignored.
    let vroc = args.controller.as_deref().is_some_and(|c| {
        analyzer_core::array::controller_preset::ControllerPreset::by_name(c)
            .is_some_and(|p| p.software)
    });
    let timing_only = [
        ("--disk", args.disk.is_some()),
        ("--groups", args.groups.is_some()),
        ("--failed", !args.failed.is_empty()),
        ("--array", args.array.is_some()),
        ("--controller", args.controller.is_some() && !vroc),
        ("--controller-cache", args.controller_cache.is_some()),
        ("--read-ahead", args.read_ahead.is_some()),
        ("--max-iops", args.max_iops.is_some()),
        ("--max-mbps", args.max_mbps.is_some()),
        ("--parity-rate", args.parity_rate.is_some()),
        ("--md-stripe-cost", args.md_stripe_cost.is_some()),
        ("--md-page-cost", args.md_page_cost.is_some()),
        ("--cache-size", args.cache_size.is_some()),
        ("--curve", args.curve),
        ("--replay", args.replay),
        ("--sample", args.sample.is_some()),
    ];
    let given = super::flags_given(&timing_only);
    if !given.is_empty() {
        bail!(
            "--md-members counts the bios Linux md sends its members, which {} {} not change (it times a layout: leave out --md-members)",
            given.join(", "),
            if given.len() == 1 { "does" } else { "do" }
        );
    }
    let request = MdRequest {
        stripe_cache_size: args.stripe_cache_size,
        group_thread_cnt: args.group_thread_cnt,
        gather_bios: args.qd,
        safe_mode_delay_nanos: args.md_safe_mode_delay,
        raid10_layout: args.raid10_layout.clone(),
        window_nanos: args.window.as_deref().map(parse_window).transpose()?,
        ..MdRequest::new(layout, disks, args.chunk)
    };
    let job = MdMembers::new(request).context("--md-members")?;
    let (done, read) = input::run_job(&input_args(args), job)?;
    input::warn_diagnostics(&read);
    let (config, result) = (&done.result.config, &done.result);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &done)?;
        writeln!(out)?;
    } else {
        let detail = match config.level {
            MdLevel::Raid5 | MdLevel::Raid6 => {
                format!(", stripe_cache_size {}", config.stripe_cache_size)
            }
            MdLevel::Raid10 => format!(", layout {}", config.raid10.name()),
            _ => String::new(),
        };
        writeln!(
            out,
            "md {}, {} members, chunk {}{detail}",
            config.level.name(),
            config.members,
            bytes(config.chunk_bytes)
        )?;
        if matches!(config.level, MdLevel::Raid5 | MdLevel::Raid6) {
            writeln!(
                out,
                "stripes: {} rmw, {} rcw, {} full",
                count(result.rmw_stripes),
                count(result.rcw_stripes),
                count(result.full_stripes)
            )?;
        }
        for (i, m) in result.members.iter().enumerate() {
            writeln!(
                out,
                "member {i}: {} reads ({} bytes), {} writes ({} bytes), {} flushes",
                count(m.read_bios),
                count(m.read_bytes),
                count(m.write_bios),
                count(m.write_bytes),
                count(m.flush_bios)
            )?;
        }
        let t = result.total;
        writeln!(
            out,
            "total: {} reads ({} bytes), {} writes ({} bytes), {} flushes",
            count(t.read_bios),
            count(t.read_bytes),
            count(t.write_bios),
            count(t.write_bytes),
            count(t.flush_bios)
        )?;
        if result.superblock_updates > 0 {
            writeln!(
                out,
                "superblock: {} updates (safe mode marking the array dirty or clean), one 512-byte write to every member each, in the writes above",
                count(result.superblock_updates)
            )?;
        }
    }
    Ok(())
}
