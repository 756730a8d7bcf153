//! `blocksight predict`: predicted IOPS, MB/s and latency of a RAID layout, with and without an
//! SSD cache tier, for a trace (replayed open or closed loop) or a synthetic profile.

use std::io::Write;
use std::path::PathBuf;

use analyzer_core::array::device::DeviceModel;
use analyzer_core::array::spec::{device_with_overrides, ArraySpec};
use analyzer_core::array::{
    cache_warmup_requests, run_synthetic, sweep_depths, AccessSpec, ArrayConfig, CacheDevices,
    CacheTier, ControllerModel, CurvePoint, Prediction, ProfileKind, ReplayMode, RunResult,
    SimulatorTier, StandardLevel, Synthetic, TraceReplay,
};
use analyzer_core::array::{Member, Node};
use analyzer_core::cache::{PolicyKind, Preset, SimConfig, WriteMode};
use anyhow::{bail, Context};

use crate::input::{self, InputArgs};
use crate::output::{bytes, count, duration, parse_size};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Trace files to replay (omit with --profile). .gz/.zst/.xz are decompressed.
    #[arg(value_name = "IN", conflicts_with = "profile")]
    pub inputs: Vec<PathBuf>,
    /// The input format; detected when omitted.
    #[arg(long, short = 'f', value_name = "FORMAT")]
    pub format: Option<String>,
    /// blktrace only: D (issued, default) or Q (queued).
    #[arg(long, value_name = "D|Q", default_value = "D")]
    pub action: String,
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
    /// Requests simulated per run (profiles).
    #[arg(long, default_value_t = 200_000)]
    pub requests: u64,
    /// PRNG seed (profiles); the same seed gives the same numbers.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

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
    pub failed: Vec<usize>,
    /// JSON array description (nesting, per-parameter overrides, controller, cache devices);
    /// replaces --layout/--disks/--disk. See docs/model.md.
    #[arg(long, value_name = "FILE")]
    pub array: Option<PathBuf>,

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

    /// SSD cache size in front of the array: prediction with and without it.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub cache_size: Option<u64>,
    /// Cache product preset (`blocksight simulate --help` lists them: dm-cache, bcache, opencas,
    /// cachecade1, ...). Without one: --policy (default lru), write-through, 64 KiB lines.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Cache replacement policy (overrides the preset's).
    #[arg(long, value_name = "POLICY")]
    pub policy: Option<String>,
    /// Cache write mode: ro, wt, wa, wb (overrides the preset's).
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Cache line size (default: the preset's, else 64 KiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub cache_line: Option<u64>,
    /// Cache devices: preset and count (RAID 1 when 2, RAID 0 otherwise).
    #[arg(long, value_name = "PRESET", default_value = "sata-ssd")]
    pub cache_disk: String,
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub cache_disks: u32,

    /// Instead of timing: what Linux md sends each member for the trace's bios (RAID 0/1/10/5/6
    /// from --layout, --disks and --chunk; RAID 5/6 with its stripe cache), per member.
    #[arg(long = "md-members", requires = "inputs")]
    pub md_members: bool,
    /// md's stripe_cache_size for --md-members (default 256).
    #[arg(long = "stripe-cache-size", value_name = "N")]
    pub stripe_cache_size: Option<u32>,
    /// md's group_thread_cnt for --md-members (default 0: raid5d alone).
    #[arg(long = "group-thread-cnt", value_name = "N")]
    pub group_thread_cnt: Option<u32>,
    /// Print the prediction as JSON.
    #[arg(long)]
    pub json: bool,
}

fn config(args: &Args) -> anyhow::Result<ArrayConfig> {
    let mut cfg = if let Some(path) = &args.array {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        ArraySpec::parse(&text)
            .and_then(|s| s.to_config())
            .with_context(|| format!("{}", path.display()))?
    } else {
        let level_name = args
            .layout
            .as_deref()
            .context("give --layout LEVEL (or --array FILE)")?;
        let level = StandardLevel::from_name(level_name).with_context(|| {
            let names: Vec<&str> = StandardLevel::ALL.iter().map(|l| l.name()).collect();
            format!(
                "unknown --layout {level_name:?} (expected one of {})",
                names.join(", ")
            )
        })?;
        let disks = args.disks.context("give --disks N")?;
        let preset = args
            .disk
            .as_deref()
            .context("give --disk PRESET (sata-7k2, sas-10k, sas-15k, sata-ssd, nvme)")?;
        let device = device_with_overrides(preset, None)?;
        let mut layout = level.build(disks, args.chunk, args.groups)?;
        fail_disks(&mut layout, &args.failed)?;
        ArrayConfig::new(
            vec![device; disks as usize],
            layout,
            ControllerModel::software(),
        )?
    };
    if let Some(c) = args.controller_cache {
        let keep = cfg.controller.clone();
        cfg.controller = ControllerModel {
            rebuild_bytes_per_sec: keep.rebuild_bytes_per_sec,
            ..ControllerModel::hardware(c)
        };
    }
    if let Some(r) = args.read_ahead {
        cfg.controller.read_ahead_bytes = r;
    }
    if args.max_iops.is_some() {
        cfg.controller.max_iops = args.max_iops;
    }
    if let Some(m) = args.max_mbps {
        cfg.controller.max_bytes_per_sec = Some(m * 1e6);
    }
    if args.parity_rate.is_some() {
        cfg.controller.parity_chunks_per_sec = args.parity_rate;
    }
    if args.cache_size.is_some() && cfg.cache.is_none() {
        let device: DeviceModel = device_with_overrides(&args.cache_disk, None)?;
        let n = args.cache_disks.max(1);
        let level = if n == 2 {
            StandardLevel::Raid1
        } else {
            StandardLevel::Raid0
        };
        let layout = level.build(n, 65536, None)?;
        cfg = cfg.with_cache(CacheDevices {
            devices: vec![device; n as usize],
            layout,
        })?;
    }
    Ok(cfg)
}

/// Marks disks failed in the node that holds them directly (the mirror or parity group of a
/// nested level).
fn fail_disks(layout: &mut Node, disks: &[usize]) -> anyhow::Result<()> {
    fn mark(node: &mut Node, disk: u32) -> bool {
        if let Some(i) = node
            .members
            .iter()
            .position(|m| matches!(m, Member::Disk(d) if *d == disk))
        {
            if !node.failed.contains(&i) {
                node.failed.push(i);
            }
            return true;
        }
        node.members.iter_mut().any(|m| match m {
            Member::Node(child) => mark(child, disk),
            Member::Disk(_) => false,
        })
    }
    for &d in disks {
        let disk = u32::try_from(d).ok().filter(|&d| mark(layout, d));
        if disk.is_none() {
            bail!("--failed {d}: no such disk");
        }
    }
    Ok(())
}

/// The cache simulator's configuration and a description for the assumptions.
fn cache_config(args: &Args) -> anyhow::Result<Option<(SimConfig, String)>> {
    let Some(size) = args.cache_size else {
        return Ok(None);
    };
    let (mut cfg, mut desc) = match &args.preset {
        Some(name) => {
            let p = Preset::from_name(name).with_context(|| {
                let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name).collect();
                format!(
                    "unknown cache --preset {name:?} (expected one of {})",
                    names.join(", ")
                )
            })?;
            let line = args.cache_line.unwrap_or(p.line_bytes);
            (
                SimConfig {
                    line_bytes: line,
                    ..p.config(size / line.max(1))
                },
                format!("{} ({})", p.name, p.title),
            )
        }
        None => {
            let line = args.cache_line.unwrap_or(64 << 10);
            (
                SimConfig::new(PolicyKind::Lru, size / line.max(1), line),
                "no preset".to_string(),
            )
        }
    };
    if let Some(p) = &args.policy {
        cfg.policy =
            PolicyKind::from_name(p).with_context(|| format!("unknown cache --policy {p:?}"))?;
    }
    if cfg.policy.needs_future() {
        bail!("--policy {} needs the whole future of the trace; predict streams it, pick an online policy", cfg.policy.name());
    }
    if let Some(m) = &args.mode {
        cfg.mode = WriteMode::from_name(m)
            .with_context(|| format!("unknown cache --mode {m:?} (expected ro, wt, wa or wb)"))?;
    }
    cfg.validate().map_err(|e| anyhow::anyhow!("cache: {e}"))?;
    desc = format!(
        "{desc}: {} over {} lines of {}, {}, admission {}",
        cfg.policy.name(),
        count(cfg.capacity_lines),
        bytes(cfg.line_bytes),
        cfg.mode.name(),
        cfg.admission.label()
    );
    Ok(Some((cfg, desc)))
}

fn cache_tier(args: &Args) -> anyhow::Result<Option<Box<dyn CacheTier>>> {
    match cache_config(args)? {
        Some((cfg, desc)) => Ok(Some(Box::new(
            SimulatorTier::new(&cfg, desc).map_err(|e| anyhow::anyhow!("cache: {e}"))?,
        ))),
        None => Ok(None),
    }
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

fn replay(
    args: &Args,
    cfg: &ArrayConfig,
    mode: ReplayMode,
    with_cache: bool,
) -> anyhow::Result<(RunResult, u64)> {
    let mut cache = if with_cache { cache_tier(args)? } else { None };
    let mut r = TraceReplay::new(
        cfg,
        mode,
        cache.as_mut().map(|c| &mut **c as &mut dyn CacheTier),
    );
    let read = input::read_events(&input_args(args), |e| r.observe(e))?;
    if with_cache {
        input::warn_diagnostics(&read);
    }
    let (seen, _) = r.counts();
    Ok((r.finish(), seen))
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    if args.md_members {
        return run_md_members(args);
    }
    let cfg = config(args)?;
    let capacity = cfg.capacity_bytes();
    let mut assumptions = cfg.assumptions();
    let depths: Vec<u32> = [1u32, 2, 4, 8, 16, 32, 64, 128, 256].into_iter().collect();
    let (without, with, curve, workload) = if let Some(name) = &args.profile {
        let kind = ProfileKind::from_name(name).with_context(|| {
            let names: Vec<&str> = ProfileKind::ALL.iter().map(|p| p.name()).collect();
            format!(
                "unknown --profile {name:?} (expected one of {})",
                names.join(", ")
            )
        })?;
        let mut spec: AccessSpec = kind.spec();
        if let Some(s) = args.io_size {
            if s == 0 || s > (1 << 30) || s % 512 != 0 {
                bail!("--io-size must be a multiple of 512 bytes up to 1 GiB");
            }
            spec.len_bytes = s as u32;
            spec.align_bytes = s;
        }
        if let Some(p) = args.read_pct {
            if !(0.0..=100.0).contains(&p) {
                bail!("--read-pct must be between 0 and 100");
            }
            spec.read_fraction = p / 100.0;
        }
        let span = args.span.unwrap_or(capacity).min(capacity);
        let qd = args.qd.unwrap_or(1);
        let warm = match cache_config(args)? {
            Some((c, _)) => cache_warmup_requests(
                span,
                c.capacity_lines * c.line_bytes,
                c.line_bytes,
                spec.len_bytes,
            )
            .saturating_mul(SimulatorTier::warmup_factor(&c))
            .min(50_000_000),
            None => 0,
        };
        let w = Synthetic {
            spec,
            span_bytes: span,
            outstanding: qd,
            requests: args.requests.max(100),
            seed: args.seed,
            cache_warmup_requests: warm,
        };
        let without = run_synthetic(&cfg, &w, None);
        let with = match cache_tier(args)? {
            Some(mut c) => {
                assumptions.push(format!(
                    "cache tier: {}, warmed with {} requests of the same profile before measuring",
                    c.describe(),
                    count(warm)
                ));
                Some(run_synthetic(&cfg, &w, Some(&mut *c)))
            }
            None => None,
        };
        let curve = if args.curve {
            sweep_depths(
                &cfg,
                &Synthetic {
                    requests: w.requests.min(50_000),
                    ..w
                },
                &depths,
                || None,
            )
        } else {
            Vec::new()
        };
        let workload = format!(
            "{} ({} KiB, {:.0}% read, {}) over {}, {} outstanding I/O{}, {} requests, seed {}",
            kind.name(),
            spec.len_bytes / 1024,
            spec.read_fraction * 100.0,
            if spec.sequential {
                "sequential"
            } else {
                "random"
            },
            bytes(span),
            qd,
            if qd == 1 { "" } else { "s" },
            count(w.requests),
            args.seed
        );
        (without, with, curve, workload)
    } else {
        if args.inputs.is_empty() {
            bail!("give trace files (IN...) or --profile NAME");
        }
        let mode = if args.replay {
            ReplayMode::Open { speed: args.speed }
        } else {
            ReplayMode::Closed {
                outstanding: args.qd.unwrap_or(1),
            }
        };
        let (without, seen) = replay(args, &cfg, mode, false)?;
        let with = if args.cache_size.is_some() {
            if let Some(c) = cache_tier(args)? {
                assumptions.push(format!("cache tier: {}, starting cold", c.describe()));
            }
            Some(replay(args, &cfg, mode, true)?.0)
        } else {
            None
        };
        assumptions.push("trace offsets beyond the array's capacity wrap around it; discards and flushes are not replayed".into());
        let curve = if args.curve {
            match mode {
                ReplayMode::Open { speed } => {
                    let mut pts = Vec::new();
                    for f in [0.5, 1.0, 2.0, 4.0, 8.0] {
                        let (r, _) =
                            replay(args, &cfg, ReplayMode::Open { speed: speed * f }, false)?;
                        pts.push(CurvePoint {
                            load: speed * f,
                            iops: r.iops,
                            mean_latency_nanos: r.latency.mean_nanos,
                            p99_latency_nanos: r.latency.p99_nanos,
                        });
                    }
                    pts
                }
                ReplayMode::Closed { .. } => {
                    let mut pts = Vec::new();
                    for &qd in &depths {
                        let (r, _) =
                            replay(args, &cfg, ReplayMode::Closed { outstanding: qd }, false)?;
                        pts.push(CurvePoint {
                            load: f64::from(qd),
                            iops: r.iops,
                            mean_latency_nanos: r.latency.mean_nanos,
                            p99_latency_nanos: r.latency.p99_nanos,
                        });
                    }
                    pts
                }
            }
        } else {
            Vec::new()
        };
        let workload = match mode {
            ReplayMode::Open { speed } => format!(
                "trace replay at its timestamps, speed ×{speed}, {} requests",
                count(seen)
            ),
            ReplayMode::Closed { outstanding } => format!(
                "trace replay in closed loop, {outstanding} outstanding I/Os, {} requests",
                count(seen)
            ),
        };
        (without, with, curve, workload)
    };
    let busiest = without
        .disks
        .iter()
        .filter(|d| d.tier == "array")
        .map(|d| d.utilisation)
        .fold(0.0, f64::max);
    let speedup = with.as_ref().map(|w| w.iops / without.iops.max(1e-9));
    let prediction = Prediction {
        array: cfg.describe(),
        capacity_bytes: capacity,
        workload,
        rebuild_secs: cfg.rebuild_estimate_secs(busiest),
        without_cache: without,
        with_cache: with,
        speedup,
        curve,
        assumptions,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &prediction)?;
        writeln!(out)?;
    } else {
        print_text(&mut out, &prediction)?;
    }
    Ok(())
}

fn lat(n: f64) -> String {
    duration(n.round() as u64)
}

fn print_run(out: &mut impl Write, label: &str, r: &RunResult) -> std::io::Result<()> {
    writeln!(
        out,
        "{label:<12} {} IOPS (read {}, write {}), {:.1} MB/s",
        count(r.iops.round() as u64),
        count(r.read_iops.round() as u64),
        count(r.write_iops.round() as u64),
        r.bytes_per_sec / 1e6
    )?;
    writeln!(
        out,
        "{:<12} latency mean {}, p50 {}, p95 {}, p99 {}",
        "",
        lat(r.latency.mean_nanos),
        duration(r.latency.p50_nanos),
        duration(r.latency.p95_nanos),
        duration(r.latency.p99_nanos)
    )?;
    let array: Vec<f64> = r
        .disks
        .iter()
        .filter(|d| d.tier == "array")
        .map(|d| d.utilisation * 100.0)
        .collect();
    // The cache devices only appear when the run used them.
    let cache: Vec<f64> = if r.disks.iter().any(|d| d.tier == "cache" && d.iops > 0.0) {
        r.disks
            .iter()
            .filter(|d| d.tier == "cache")
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
    writeln!(out, "{:<12} bottleneck: {}", "", r.bottleneck)?;
    Ok(())
}

pub fn print_text(out: &mut impl Write, p: &Prediction) -> std::io::Result<()> {
    writeln!(
        out,
        "array        {}, {} usable",
        p.array,
        bytes(p.capacity_bytes)
    )?;
    writeln!(out, "workload     {}", p.workload)?;
    print_run(out, "no cache", &p.without_cache)?;
    if let Some(w) = &p.with_cache {
        print_run(out, "with cache", w)?;
        if let Some(s) = p.speedup {
            writeln!(out, "speed-up     {s:.2}× IOPS")?;
        }
    }
    if let Some(secs) = p.rebuild_secs {
        writeln!(
            out,
            "rebuild      about {} for one member at this load",
            duration((secs * 1e9) as u64)
        )?;
    }
    if !p.curve.is_empty() {
        writeln!(
            out,
            "curve        {:>8} {:>10} {:>10} {:>10}",
            "load", "IOPS", "mean", "p99"
        )?;
        for c in &p.curve {
            writeln!(
                out,
                "             {:>8} {:>10} {:>10} {:>10}",
                c.load,
                count(c.iops.round() as u64),
                lat(c.mean_latency_nanos),
                duration(c.p99_latency_nanos)
            )?;
        }
    }
    writeln!(out, "assumptions")?;
    for a in &p.assumptions {
        writeln!(out, "  - {a}")?;
    }
    writeln!(out, "  - model presets and calibration: docs/model.md")?;
    Ok(())
}

/// `--md-members`: the md member-I/O model (`analyzer_core::array::md`) on the trace's bios.
fn run_md_members(args: &Args) -> anyhow::Result<()> {
    use analyzer_core::array::md::{MdConfig, MdLevel, MdModel};
    let level = match args
        .layout
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("raid0") => MdLevel::Raid0,
        Some("raid1") => MdLevel::Raid1,
        Some("raid10") => MdLevel::Raid10,
        Some("raid5") => MdLevel::Raid5,
        Some("raid6") => MdLevel::Raid6,
        other => {
            bail!("--md-members needs --layout raid0, raid1, raid10, raid5 or raid6, not {other:?}")
        }
    };
    let disks = args.disks.context("--md-members needs --disks")?;
    let mut config = MdConfig::new(level, disks, args.chunk);
    if let Some(n) = args.stripe_cache_size {
        config.stripe_cache_size = n;
    }
    if let Some(n) = args.group_thread_cnt {
        config.group_thread_cnt = n;
    }
    config.gather_bios = args.qd.unwrap_or(1).max(1);
    let mut model = MdModel::new(&config).map_err(anyhow::Error::msg)?;
    let input = crate::input::InputArgs {
        inputs: args.inputs.clone(),
        format: args.format.clone(),
        action: args.action.clone(),
        csv_columns: args.csv_columns.clone(),
        quiet: args.quiet,
    };
    let read = crate::input::read_events(&input, |e| model.observe(e))?;
    crate::input::warn_diagnostics(&read);
    let result = model.finish();
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(
            &mut out,
            &serde_json::json!({ "model": "md", "result": result }),
        )?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "md {:?}, {} members, chunk {} bytes, stripe_cache_size {}",
            level, disks, args.chunk, config.stripe_cache_size
        )?;
        writeln!(
            out,
            "stripes: {} rmw, {} rcw, {} full",
            result.rmw_stripes, result.rcw_stripes, result.full_stripes
        )?;
        for (i, m) in result.members.iter().enumerate() {
            writeln!(
                out,
                "member {i}: {} reads ({} bytes), {} writes ({} bytes)",
                m.read_bios, m.read_bytes, m.write_bios, m.write_bytes
            )?;
        }
        let t = result.total;
        writeln!(
            out,
            "total: {} reads ({} bytes), {} writes ({} bytes)",
            t.read_bios, t.read_bytes, t.write_bios, t.write_bytes
        )?;
    }
    Ok(())
}
