//! End-to-end tests of `blocksight record` on real loop devices (issue 3). They need root (tracefs,
//! losetup) and fio; without root each test prints why it is skipped and passes.
//!
//! Each test makes its own loop device over a file in a temporary directory and removes it on
//! every path (a guard's `Drop` runs on panic too). The tests take a process-wide lock because
//! the `blk` backend uses the kernel's single global blk tracer.
//!
//! The independent capture ("the truth") is a separate tracefs instance with the same two
//! tracepoints in text form, read by this file's own parser: it shares no code with the
//! collector, and it checks both backends and fio's own I/O counts.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use analyzer_core::native::NativeDecoder;
use analyzer_core::{Decoder, IoEvent, Op, TraceHeader};
use blocksight_tests::blocksight_bin;

static SERIAL: Mutex<()> = Mutex::new(());
const TRACING: &str = "/sys/kernel/tracing";

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Takes the lock and says whether the test can run here; prints why not.
fn setup(test: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    if !is_root() {
        eprintln!("SKIPPED {test}: blocksight record needs root (tracefs and loop devices); run the tests as root");
        return None;
    }
    if !have("fio") || !have("losetup") {
        eprintln!("SKIPPED {test}: needs fio and losetup (scripts/setup.sh installs them)");
        return None;
    }
    if !Path::new(TRACING).join("instances").is_dir() {
        let _ = Command::new("mount")
            .args(["-t", "tracefs", "nodev", TRACING])
            .status();
    }
    Some(SERIAL.lock().unwrap_or_else(|e| e.into_inner()))
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("bs-rec-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg(&self.0)
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A loop device over a sparse file; detached on drop.
struct LoopDev {
    path: String,
    name: String,
    major: u32,
    minor: u32,
    detached: bool,
}

impl LoopDev {
    fn new(dir: &Path, size_mib: u64, partitioned: bool) -> LoopDev {
        let img = dir.join("disk.img");
        let f = std::fs::File::create(&img).expect("create image");
        f.set_len(size_mib << 20).expect("size image");
        if partitioned {
            write_mbr(
                &img,
                PART_START_SECTORS,
                (size_mib << 11) - PART_START_SECTORS,
            );
        }
        let mut cmd = Command::new("losetup");
        if partitioned {
            cmd.arg("-P");
        }
        let path = run(cmd.args(["-f", "--show"]).arg(&img)).trim().to_string();
        let name = path.trim_start_matches("/dev/").to_string();
        let dev =
            std::fs::read_to_string(format!("/sys/class/block/{name}/dev")).expect("sysfs dev");
        let (major, minor) = dev.trim().split_once(':').expect("MAJ:MIN");
        LoopDev {
            path,
            name,
            major: major.parse().expect("major"),
            minor: minor.parse().expect("minor"),
            detached: false,
        }
    }

    fn kernel_dev(&self) -> u32 {
        (self.major << 20) | self.minor
    }

    fn detach(&mut self) {
        run(Command::new("losetup").args(["-d", &self.path]));
        self.detached = true;
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        if !self.detached {
            let _ = Command::new("losetup").args(["-d", &self.path]).status();
        }
    }
}

const PART_START_SECTORS: u64 = 2048;

/// A DOS partition table with one Linux partition.
fn write_mbr(img: &Path, start: u64, sectors: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut mbr = [0u8; 512];
    let e = &mut mbr[446..462];
    e[4] = 0x83;
    e[1..4].copy_from_slice(&[0xfe, 0xff, 0xff]);
    e[5..8].copy_from_slice(&[0xfe, 0xff, 0xff]);
    e[8..12].copy_from_slice(&(start as u32).to_le_bytes());
    e[12..16].copy_from_slice(&(sectors as u32).to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(img)
        .expect("open image");
    f.seek(SeekFrom::Start(0)).expect("seek");
    f.write_all(&mbr).expect("write mbr");
}

/// The independent capture: a tracefs instance with the text form of the two tracepoints.
struct TextCapture {
    dir: PathBuf,
}

impl TextCapture {
    /// Request-level events, or with `bio` the bio-level ones.
    fn start(kernel_dev: u32, bio: bool) -> TextCapture {
        let dir = Path::new(TRACING)
            .join("instances")
            .join(format!("bstest-truth-{}", std::process::id()));
        let _ = std::fs::remove_dir(&dir);
        std::fs::create_dir(&dir).expect("create truth instance");
        let cap = TextCapture { dir };
        std::fs::write(cap.dir.join("buffer_size_kb"), "65536").expect("buffer");
        let events = if bio {
            ["block_bio_queue", "block_bio_complete"]
        } else {
            ["block_rq_issue", "block_rq_complete"]
        };
        for ev in events {
            let d = cap.dir.join("events/block").join(ev);
            std::fs::write(d.join("filter"), format!("dev == {kernel_dev}")).expect("filter");
            std::fs::write(d.join("enable"), "1").expect("enable");
        }
        cap
    }

    /// Stops and returns the issued requests as (offset, len, op), and the completion count.
    fn finish(&self) -> (Vec<(u64, u32, Op)>, usize) {
        std::fs::write(self.dir.join("tracing_on"), "0").expect("stop");
        let text = std::fs::read_to_string(self.dir.join("trace")).expect("read trace");
        let mut issued = Vec::new();
        let mut completed = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            // `... block_rq_issue: 7,0 WS 4096 () 984 + 8 be,0,4 [fio]`
            // `... block_bio_queue: 7,0 WS 984 + 8 [fio]`
            let Some((_, rest)) = line
                .split_once(": block_rq_")
                .or_else(|| line.split_once(": block_bio_"))
            else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            let rwbs = f[2].trim_start_matches('F');
            let op = match (rwbs.chars().next(), f[2]) {
                (Some('W'), _) => Op::Write,
                (Some('R'), _) => Op::Read,
                (Some('D'), _) => Op::Discard,
                (_, s) if s.starts_with('F') => Op::Flush,
                _ => continue,
            };
            let plus = f.iter().position(|&x| x == "+").expect("+");
            let sector: u64 = f[plus - 1].parse().expect("sector");
            let sectors: u32 = f[plus + 1].parse().expect("sectors");
            let bytes = sectors * 512;
            // An empty read or write is a flush whose flag the kernel cleared.
            let op = if bytes == 0 { Op::Flush } else { op };
            if f[0] == "issue:" || f[0] == "queue:" {
                issued.push(if op == Op::Flush {
                    (0, 0, op)
                } else {
                    (sector * 512, bytes, op)
                });
            } else if f[0] == "complete:" {
                completed += 1;
            }
        }
        (issued, completed)
    }
}

impl Drop for TextCapture {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
        let _ = std::fs::write(self.dir.join("events/enable"), "0");
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A running `blocksight record`; killed on drop if still running.
struct Recorder {
    child: Child,
    stderr: mpsc::Receiver<String>,
    lines: Vec<String>,
}

impl Recorder {
    fn start(args: &[&str], cwd: &Path) -> Recorder {
        let mut child = Command::new(blocksight_bin())
            .arg("record")
            .args(args)
            .current_dir(cwd)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start blocksight record");
        let (tx, rx) = mpsc::channel();
        let err = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut r = Recorder {
            child,
            stderr: rx,
            lines: Vec::new(),
        };
        // Tracing is armed once this line is printed; nothing is started before it.
        r.wait_for_line("blocksight: recording");
        r
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn wait_for_line(&mut self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.lines.iter().any(|l| l.contains(needle)) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) => self.lines.push(line),
                Err(_) => panic!(
                    "no {needle:?} from blocksight record; stderr so far:\n{}",
                    self.lines.join("\n")
                ),
            }
        }
    }

    fn signal(&self, sig: &str) {
        run(Command::new("kill").args([&format!("-{sig}"), &self.pid().to_string()]));
    }

    /// Waits for exit (bounded) and returns (success, stdout, stderr).
    fn wait(mut self) -> (bool, String, String) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "blocksight record did not exit; stderr:\n{}",
                self.lines.join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        if let Some(mut o) = self.child.stdout.take() {
            let _ = std::io::Read::read_to_string(&mut o, &mut out);
        }
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(5)) {
            self.lines.push(line);
        }
        (status.success(), out, self.lines.join("\n"))
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

struct Trace {
    events: Vec<IoEvent>,
    header: TraceHeader,
    ended: bool,
    truncated_tail_bytes: u64,
}

fn read_trace(path: &Path) -> Trace {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut d = NativeDecoder::new();
    d.push(&bytes);
    d.finish();
    let mut events = Vec::new();
    while let Some(e) = d
        .next_event()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    {
        events.push(e);
    }
    Trace {
        events,
        header: d.header().clone(),
        ended: d.end_total_events().is_some(),
        truncated_tail_bytes: d.diagnostics().truncated_tail_bytes,
    }
}

/// fio's issued I/O counts (read, write, trim) from `--output-format=json`.
fn fio(args: &[&str]) -> (u64, u64, u64) {
    let out = run(Command::new("fio").args(args).args([
        "--direct=1",
        "--output-format=json",
        "--randseed=7",
    ]));
    let json: serde_json::Value =
        serde_json::from_str(&out[out.find('{').expect("json")..]).expect("fio json");
    let mut totals = (0, 0, 0);
    for job in json["jobs"].as_array().expect("jobs") {
        totals.0 += job["read"]["total_ios"].as_u64().expect("read ios");
        totals.1 += job["write"]["total_ios"].as_u64().expect("write ios");
        totals.2 += job["trim"]["total_ios"].as_u64().unwrap_or(0);
    }
    totals
}

fn counts(reqs: &[(u64, u32, Op)]) -> (u64, u64, u64) {
    let n = |op| reqs.iter().filter(|r| r.2 == op).count() as u64;
    (n(Op::Read), n(Op::Write), n(Op::Discard))
}

fn multiset(reqs: impl IntoIterator<Item = (u64, u32, Op)>) -> BTreeMap<(u64, u32, Op), usize> {
    let mut m = BTreeMap::new();
    for r in reqs {
        *m.entry(r).or_default() += 1;
    }
    m
}

fn requests(t: &Trace) -> Vec<(u64, u32, Op)> {
    t.events
        .iter()
        .map(|e| (e.offset_bytes, e.len_bytes, e.op))
        .collect()
}

fn instance_exists(pid: u32) -> bool {
    Path::new(TRACING)
        .join(format!("instances/blocksight-rec-{pid}"))
        .exists()
}

/// A block device under test.
struct Target {
    path: String,
    name: String,
    major: u32,
    minor: u32,
}

/// One workload recorded by both backends and the independent capture at once.
fn check_workload(tag: &str, fio_args: &[&str]) {
    let tmp = TempDir::new(tag);
    let dev = LoopDev::new(&tmp.0, 256, false);
    let target = Target {
        path: dev.path.clone(),
        name: dev.name.clone(),
        major: dev.major,
        minor: dev.minor,
    };
    check_target(&tmp, &target, false, &[], fio_args);
}

/// Records `target` with both backends (plus `extra` flags) and the independent capture at
/// the request level, or with `bio` at the bio level, and compares all three with fio.
fn check_target(tmp: &TempDir, dev: &Target, bio: bool, extra: &[&str], fio_args: &[&str]) {
    let tag = tmp
        .0
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let truth = TextCapture::start((dev.major << 20) | dev.minor, bio);
    let ev_out = tmp.0.join("events.bst");
    let blk_out = tmp.0.join("blk.bst");
    let mut ev_args = vec!["-d", &dev.path, "-o", ev_out.to_str().expect("utf8")];
    ev_args.extend_from_slice(extra);
    let events = Recorder::start(&ev_args, &tmp.0);
    let mut blk_args = vec![
        "-d",
        &dev.name,
        "--backend",
        "blk",
        "-o",
        blk_out.to_str().expect("utf8"),
    ];
    blk_args.extend_from_slice(extra);
    let blk = Recorder::start(&blk_args, &tmp.0);
    let filename = format!("--filename={}", dev.path);
    let mut args = vec!["--name=w", filename.as_str(), "--ioengine=psync"];
    args.extend_from_slice(fio_args);
    let fio_counts = fio(&args);
    events.signal("INT");
    blk.signal("INT");
    let (ok_e, _, err_e) = events.wait();
    let (ok_b, _, err_b) = blk.wait();
    assert!(ok_e, "events backend failed:\n{err_e}");
    assert!(ok_b, "blk backend failed:\n{err_b}");
    let (truth_reqs, truth_completions) = truth.finish();

    let ev = read_trace(&ev_out);
    let bk = read_trace(&blk_out);
    for (name, t, err) in [("events", &ev, &err_e), ("blk", &bk, &err_b)] {
        assert!(t.ended, "{name}: no end marker\n{err}");
        assert_eq!(t.header.dropped_events, 0, "{name} dropped events\n{err}");
        assert_eq!(t.header.devices.len(), 1);
        assert_eq!(t.header.devices[0].name, dev.name);
        assert_eq!(
            (t.header.devices[0].major, t.header.devices[0].minor),
            (Some(dev.major), Some(dev.minor))
        );
        assert!(
            t.events
                .windows(2)
                .all(|w| w[0].time_nanos <= w[1].time_nanos),
            "{name}: not in time order"
        );
        assert!(
            t.events.iter().all(|e| e.latency_nanos.is_some()),
            "{name}: a request without latency\n{err}"
        );
        assert_eq!(
            counts(&requests(t)),
            fio_counts,
            "{name}: request counts differ from fio's issued I/O"
        );
        assert_eq!(
            multiset(requests(t)),
            multiset(truth_reqs.iter().copied()),
            "{name}: requests differ from the independent capture"
        );
    }
    assert_eq!(
        counts(&truth_reqs),
        fio_counts,
        "the independent capture differs from fio"
    );
    assert_eq!(
        truth_completions,
        truth_reqs.len(),
        "the independent capture saw every completion"
    );
    eprintln!(
        "{tag}: {} requests (fio r/w/trim {:?}) equal in both backends and the independent capture",
        ev.events.len(),
        fio_counts
    );
}

#[test]
fn record_random_reads_4k_match_fio_and_an_independent_capture() {
    let Some(_lock) = setup("record_random_reads_4k") else {
        return;
    };
    check_workload(
        "randread4k",
        &[
            "--rw=randread",
            "--bs=4k",
            "--size=200M",
            "--number_ios=3000",
        ],
    );
}

#[test]
fn record_sequential_writes_and_reads_at_several_sizes() {
    let Some(_lock) = setup("record_sequential") else {
        return;
    };
    check_workload("seqwrite64k", &["--rw=write", "--bs=64k", "--size=64M"]);
    check_workload("seqread128k", &["--rw=read", "--bs=128k", "--size=64M"]);
    check_workload("seqread512", &["--rw=read", "--bs=512", "--size=1M"]);
}

#[test]
fn record_mixed_random_workloads_with_trims() {
    let Some(_lock) = setup("record_mixed") else {
        return;
    };
    check_workload(
        "randrw16k",
        &[
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=16k",
            "--size=200M",
            "--number_ios=3000",
        ],
    );
    check_workload(
        "randrw_bssplit",
        &[
            "--rw=randrw",
            "--bssplit=4k/50:8k/25:64k/25",
            "--size=200M",
            "--number_ios=2000",
        ],
    );
    check_workload(
        "randtrim8k",
        &["--rw=randtrim", "--bs=8k", "--size=64M", "--number_ios=500"],
    );
}

/// zram is bio-based like dm and md (no request queue): `auto` must pick bio events for it.
#[test]
fn record_a_bio_based_device_zram_uses_bio_events_automatically() {
    let Some(_lock) = setup("record_zram") else {
        return;
    };
    let sys = Path::new("/sys/block/zram0");
    let in_use = std::fs::read_to_string(sys.join("disksize"))
        .map(|s| s.trim() != "0")
        .unwrap_or(true);
    if !sys.exists() || in_use || sys.join("mq").exists() {
        eprintln!("SKIPPED record_zram: no unused bio-based zram0 here");
        return;
    }
    struct Zram;
    impl Drop for Zram {
        fn drop(&mut self) {
            let _ = std::fs::write("/sys/block/zram0/reset", "1");
        }
    }
    std::fs::write(sys.join("disksize"), "128M").expect("zram disksize");
    let _zram = Zram;
    let tmp = TempDir::new("zram");
    let dev = std::fs::read_to_string(sys.join("dev")).expect("dev");
    let (major, minor) = dev.trim().split_once(':').expect("MAJ:MIN");
    let target = Target {
        path: "/dev/zram0".into(),
        name: "zram0".into(),
        major: major.parse().expect("major"),
        minor: minor.parse().expect("minor"),
    };
    check_target(
        &tmp,
        &target,
        true,
        &[],
        &["--rw=randrw", "--bs=4k", "--size=100M", "--number_ios=2000"],
    );
    let t = read_trace(&tmp.0.join("events.bst"));
    assert!(t
        .header
        .tool_version
        .unwrap_or_default()
        .contains("zram0=bio"));
}

#[test]
fn record_a_partition_gives_offsets_relative_to_the_partition() {
    let Some(_lock) = setup("record_partition") else {
        return;
    };
    let tmp = TempDir::new("part");
    let dev = LoopDev::new(&tmp.0, 128, true);
    let part = format!("{}p1", dev.path);
    if !Path::new(&part).exists() {
        eprintln!("SKIPPED record_partition: the kernel made no {part} (loop partition scanning unavailable)");
        return;
    }
    let truth = TextCapture::start(dev.kernel_dev(), false);
    let out = tmp.0.join("p1.bst");
    let rec = Recorder::start(&["-d", &part, "-o", out.to_str().expect("utf8")], &tmp.0);
    let filename = format!("--filename={part}");
    let fio_counts = fio(&[
        "--name=p",
        &filename,
        "--ioengine=psync",
        "--rw=randrw",
        "--bs=4k",
        "--size=32M",
        "--number_ios=1000",
    ]);
    // I/O to the whole disk outside the partition must not appear.
    let disk = format!("--filename={}", dev.path);
    fio(&[
        "--name=d",
        &disk,
        "--ioengine=psync",
        "--rw=read",
        "--bs=4k",
        "--size=512k",
    ]);
    rec.signal("TERM");
    let (ok, _, err) = rec.wait();
    assert!(ok, "{err}");
    let (truth_reqs, _) = truth.finish();
    let start_bytes = PART_START_SECTORS * 512;
    let in_part: Vec<_> = truth_reqs
        .iter()
        .filter(|r| r.0 >= start_bytes)
        .map(|&(off, len, op)| (off - start_bytes, len, op))
        .collect();
    let t = read_trace(&out);
    assert_eq!(t.header.devices[0].name, format!("{}p1", dev.name));
    assert_eq!(counts(&requests(&t)), fio_counts);
    assert_eq!(multiset(requests(&t)), multiset(in_part));
    assert!(t.events.iter().all(|e| e.end_bytes() <= 127 << 20));
}

#[test]
fn record_sampling_keeps_a_hash_subset_and_says_so_in_the_header() {
    let Some(_lock) = setup("record_sampling") else {
        return;
    };
    let tmp = TempDir::new("sample");
    let dev = LoopDev::new(&tmp.0, 256, false);
    let full_out = tmp.0.join("full.bst");
    let half_out = tmp.0.join("half.bst");
    let full = Recorder::start(
        &["-d", &dev.path, "-o", full_out.to_str().expect("utf8")],
        &tmp.0,
    );
    let half = Recorder::start(
        &[
            "-d",
            &dev.path,
            "--sample-rate",
            "0.25",
            "-o",
            half_out.to_str().expect("utf8"),
        ],
        &tmp.0,
    );
    let filename = format!("--filename={}", dev.path);
    fio(&[
        "--name=s",
        &filename,
        "--ioengine=psync",
        "--rw=randread",
        "--bs=4k",
        "--size=200M",
        "--number_ios=4000",
    ]);
    full.signal("INT");
    half.signal("INT");
    assert!(full.wait().0 && half.wait().0);
    let full = read_trace(&full_out);
    let half = read_trace(&half_out);
    let sampling = half
        .header
        .sampling
        .expect("sampling recorded in the header");
    assert!((sampling.rate() - 0.25).abs() < 1e-6);
    assert!(full.header.sampling.is_none());
    let expected: Vec<_> = full
        .events
        .iter()
        .filter(|e| {
            let block = e.offset_bytes / sampling.block_bytes;
            analyzer_core::hash::mix64(analyzer_core::hash::block_key(e.device, block))
                % sampling.modulus
                < sampling.threshold
        })
        .map(|e| (e.offset_bytes, e.len_bytes, e.op))
        .collect();
    assert_eq!(requests(&half), expected);
    let n = half.events.len() as f64;
    assert!(
        n > 0.15 * 4000.0 && n < 0.35 * 4000.0,
        "{n} of 4000 kept at rate 0.25"
    );
}

#[test]
fn record_sigterm_and_sigint_leave_a_complete_file_and_no_instance() {
    let Some(_lock) = setup("record_signals") else {
        return;
    };
    let tmp = TempDir::new("signals");
    let dev = LoopDev::new(&tmp.0, 64, false);
    let filename = format!("--filename={}", dev.path);
    for sig in ["TERM", "INT"] {
        let out = tmp.0.join(format!("{sig}.bst"));
        let rec = Recorder::start(
            &["-d", &dev.path, "-o", out.to_str().expect("utf8")],
            &tmp.0,
        );
        let pid = rec.pid();
        assert!(instance_exists(pid));
        let (r, w, _) = fio(&[
            "--name=g",
            &filename,
            "--ioengine=psync",
            "--rw=randrw",
            "--bs=4k",
            "--size=32M",
            "--number_ios=500",
        ]);
        rec.signal(sig);
        let (ok, _, err) = rec.wait();
        assert!(ok, "{err}");
        assert!(err.contains(&format!("SIG{sig} was received")), "{err}");
        assert!(!instance_exists(pid), "instance left behind after SIG{sig}");
        let t = read_trace(&out);
        assert!(t.ended && t.truncated_tail_bytes == 0);
        assert_eq!(t.events.len() as u64, r + w);
    }
}

#[test]
fn record_sigkill_leaves_a_readable_file_and_the_next_start_cleans_up() {
    let Some(_lock) = setup("record_sigkill") else {
        return;
    };
    let tmp = TempDir::new("sigkill");
    let dev = LoopDev::new(&tmp.0, 64, false);
    let out = tmp.0.join("killed.bst");
    let rec = Recorder::start(
        &["-d", &dev.path, "-o", out.to_str().expect("utf8")],
        &tmp.0,
    );
    let pid = rec.pid();
    let filename = format!("--filename={}", dev.path);
    let (r, w, _) = fio(&[
        "--name=k",
        &filename,
        "--ioengine=psync",
        "--rw=randwrite",
        "--bs=4k",
        "--size=32M",
        "--number_ios=2000",
    ]);
    // Wait (bounded) until the once-a-second flush has written every request fio made.
    let deadline = Instant::now() + Duration::from_secs(30);
    while read_trace(&out).events.len() < (r + w) as usize {
        assert!(
            Instant::now() < deadline,
            "the flushed file never held all {} requests",
            r + w
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    rec.signal("KILL");
    let (ok, _, _) = rec.wait();
    assert!(!ok);
    assert!(
        instance_exists(pid),
        "a SIGKILLed collector cannot remove its instance"
    );
    let t = read_trace(&out);
    assert!(!t.ended, "no end marker after SIGKILL");
    assert_eq!(
        t.events.len() as u64,
        r + w,
        "every flushed request reads back"
    );
    assert!(t.events.iter().all(|e| e.latency_nanos.is_some()));

    // The next start removes the dead collector's instance, and only that one.
    let other = Path::new(TRACING).join(format!("instances/bstest-other-{}", std::process::id()));
    std::fs::create_dir(&other).expect("other tool's instance");
    let out2 = tmp.0.join("next.bst");
    let rec2 = Recorder::start(
        &[
            "-d",
            &dev.path,
            "-t",
            "1",
            "-o",
            out2.to_str().expect("utf8"),
        ],
        &tmp.0,
    );
    let (ok, _, err) = rec2.wait();
    let other_survived = other.exists();
    let _ = std::fs::remove_dir(&other);
    assert!(ok, "{err}");
    assert!(err.contains(&format!("blocksight-rec-{pid}")), "{err}");
    assert!(!instance_exists(pid), "stale instance not removed");
    assert!(other_survived, "another tool's instance was removed");
}

#[test]
fn record_blk_backend_sigkill_is_undone_by_the_next_start() {
    let Some(_lock) = setup("record_blk_sigkill") else {
        return;
    };
    let tmp = TempDir::new("blkkill");
    let dev = LoopDev::new(&tmp.0, 64, false);
    let out = tmp.0.join("blk.bst");
    let clock_before =
        std::fs::read_to_string(Path::new(TRACING).join("trace_clock")).expect("clock");
    let rec = Recorder::start(
        &[
            "-d",
            &dev.path,
            "--backend",
            "blk",
            "-o",
            out.to_str().expect("utf8"),
        ],
        &tmp.0,
    );
    rec.signal("KILL");
    assert!(!rec.wait().0);
    let tracer =
        std::fs::read_to_string(Path::new(TRACING).join("current_tracer")).expect("tracer");
    assert_eq!(
        tracer.trim(),
        "blk",
        "a SIGKILLed collector cannot restore the tracer"
    );
    // Any next start (here the events backend) restores what the dead one changed.
    let rec = Recorder::start(
        &[
            "-d",
            &dev.path,
            "-t",
            "1",
            "-o",
            tmp.0.join("next.bst").to_str().expect("utf8"),
        ],
        &tmp.0,
    );
    let (ok, _, err) = rec.wait();
    assert!(ok, "{err}");
    assert!(err.contains("killed collector"), "{err}");
    let tracer =
        std::fs::read_to_string(Path::new(TRACING).join("current_tracer")).expect("tracer");
    assert_eq!(tracer.trim(), "nop");
    let enabled =
        std::fs::read_to_string(format!("/sys/block/{}/trace/enable", dev.name)).expect("enable");
    assert_eq!(enabled.trim(), "0");
    let clock_after =
        std::fs::read_to_string(Path::new(TRACING).join("trace_clock")).expect("clock");
    assert_eq!(clock_after, clock_before);
}

#[test]
fn record_dropped_events_are_counted_and_reported_with_the_fix() {
    let Some(_lock) = setup("record_dropped") else {
        return;
    };
    let tmp = TempDir::new("dropped");
    let dev = LoopDev::new(&tmp.0, 256, false);
    let out = tmp.0.join("dropped.bst");
    let rec = Recorder::start(
        &[
            "-d",
            &dev.path,
            "--buffer-kb",
            "64",
            "-o",
            out.to_str().expect("utf8"),
        ],
        &tmp.0,
    );
    // A stopped collector cannot read: 5000 requests (10,000 events) overflow 64 KiB per CPU.
    rec.signal("STOP");
    let filename = format!("--filename={}", dev.path);
    let (r, w, _) = fio(&[
        "--name=o",
        &filename,
        "--ioengine=psync",
        "--rw=randread",
        "--bs=4k",
        "--size=200M",
        "--number_ios=5000",
    ]);
    rec.signal("CONT");
    rec.signal("INT");
    let (ok, _, err) = rec.wait();
    assert!(ok, "{err}");
    let t = read_trace(&out);
    assert!(t.header.dropped_events > 0, "nothing dropped?\n{err}");
    assert!(err.contains("--buffer-kb"), "{err}");
    assert!((t.events.len() as u64) < r + w);
    // What was kept is still real: every event is a 4 KiB read.
    assert!(t
        .events
        .iter()
        .all(|e| e.op == Op::Read && e.len_bytes == 4096));
}

#[test]
fn record_stops_cleanly_when_the_loop_device_is_detached() {
    let Some(_lock) = setup("record_detach") else {
        return;
    };
    let tmp = TempDir::new("detach");
    let mut dev = LoopDev::new(&tmp.0, 64, false);
    let out = tmp.0.join("detach.bst");
    let rec = Recorder::start(
        &["-d", &dev.path, "-o", out.to_str().expect("utf8")],
        &tmp.0,
    );
    let pid = rec.pid();
    let filename = format!("--filename={}", dev.path);
    let (r, w, _) = fio(&[
        "--name=x",
        &filename,
        "--ioengine=psync",
        "--rw=randread",
        "--bs=4k",
        "--size=32M",
        "--number_ios=300",
    ]);
    dev.detach();
    // No signal: the recorder notices by itself.
    let (ok, _, err) = rec.wait();
    assert!(ok, "{err}");
    assert!(
        err.contains("gone away") || err.contains("was removed"),
        "{err}"
    );
    assert!(!instance_exists(pid));
    let t = read_trace(&out);
    assert!(t.ended);
    assert_eq!(t.events.len() as u64, r + w);
}

#[test]
fn record_full_output_filesystem_stops_and_keeps_the_flushed_part() {
    let Some(_lock) = setup("record_disk_full") else {
        return;
    };
    let tmp = TempDir::new("full2");
    let dev = LoopDev::new(&tmp.0, 256, false);
    let small = tmp.0.join("small");
    std::fs::create_dir(&small).expect("mkdir");
    run(Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&small));
    let out = small.join("full.bst");
    let rec = Recorder::start(
        &["-d", &dev.path, "-o", out.to_str().expect("utf8")],
        &tmp.0,
    );
    let pid = rec.pid();
    let filename = format!("--filename={}", dev.path);
    // Far more than 256 KiB of trace over 30 s: the recorder must hit ENOSPC and stop by itself.
    // The rate is capped so that one second's chunk (a few tens of KiB) fits the file system:
    // unthrottled, the very first chunk can exceed 256 KiB and nothing is flushed before ENOSPC.
    let mut load = Command::new("fio")
        .args([
            "--name=f",
            &filename,
            "--ioengine=psync",
            "--direct=1",
            "--rw=randwrite",
            "--bs=4k",
            "--size=200M",
            "--rate_iops=3000",
        ])
        .args(["--time_based", "--runtime=30", "--randseed=3"])
        .stdout(Stdio::null())
        .spawn()
        .expect("fio");
    let (ok, _, err) = rec.wait();
    let _ = load.kill();
    let _ = load.wait();
    let t = read_trace(&out);
    let _ = Command::new("umount").arg(&small).status();
    assert!(!ok, "a full disk is an error");
    assert!(
        err.contains("output filesystem is full") && err.contains("keeps the"),
        "{err}"
    );
    assert!(!instance_exists(pid));
    assert!(!t.events.is_empty(), "the flushed part reads back\n{err}");
    assert_eq!(
        t.truncated_tail_bytes, 0,
        "the file was cut back to whole chunks"
    );
    assert!(t
        .events
        .iter()
        .all(|e| e.op == Op::Write && e.len_bytes == 4096));
}

#[test]
fn record_stops_at_max_size_with_a_complete_file() {
    let Some(_lock) = setup("record_max_size") else {
        return;
    };
    let tmp = TempDir::new("maxsize");
    let dev = LoopDev::new(&tmp.0, 256, false);
    let out = tmp.0.join("capped.bst");
    let rec = Recorder::start(
        &[
            "-d",
            &dev.path,
            "--max-size",
            "64KiB",
            "-o",
            out.to_str().expect("utf8"),
        ],
        &tmp.0,
    );
    let filename = format!("--filename={}", dev.path);
    let mut load = Command::new("fio")
        .args([
            "--name=m",
            &filename,
            "--ioengine=psync",
            "--direct=1",
            "--rw=randwrite",
        ])
        .args([
            "--bs=4k",
            "--size=200M",
            "--time_based",
            "--runtime=60",
            "--randseed=5",
        ])
        .stdout(Stdio::null())
        .spawn()
        .expect("fio");
    let (ok, _, err) = rec.wait();
    let _ = load.kill();
    let _ = load.wait();
    assert!(ok, "{err}");
    assert!(err.contains("reached --max-size"), "{err}");
    let t = read_trace(&out);
    assert!(t.ended && t.truncated_tail_bytes == 0);
    let size = std::fs::metadata(&out).expect("size").len();
    assert!(size >= 64 << 10, "{size}");
    assert!(!t.events.is_empty());
}

/// The live status line appears when stderr is a terminal (a pty from `script`), not otherwise.
#[test]
fn record_shows_a_status_line_on_a_terminal() {
    let Some(_lock) = setup("record_status_line") else {
        return;
    };
    if !have("script") {
        eprintln!("SKIPPED record_status_line: needs script(1) from util-linux");
        return;
    }
    let tmp = TempDir::new("tty");
    let dev = LoopDev::new(&tmp.0, 64, false);
    let out = tmp.0.join("tty.bst");
    let cmd = format!(
        "{} record -d {} -t 2.5 -o {}",
        blocksight_bin().display(),
        dev.path,
        out.display()
    );
    let tty = run(Command::new("script").args(["-qec", &cmd, "/dev/null"]));
    assert!(tty.contains("\x1b[Krecording 00:00:0"), "{tty}");
    assert!(
        tty.contains("events/s") && tty.contains("dropped 0") && tty.contains("file "),
        "{tty}"
    );
    let piped = Command::new(blocksight_bin())
        .args(["record", "-d", &dev.path, "-t", "1.5", "-o"])
        .arg(&out)
        .output()
        .expect("run");
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("events/s"));
}

#[test]
fn record_errors_say_what_to_do() {
    let Some(_lock) = setup("record_errors") else {
        return;
    };
    let tmp = TempDir::new("errors");
    let bin = blocksight_bin();
    let out = Command::new(&bin)
        .args(["record", "-d", "/dev/no-such-disk", "-t", "1"])
        .current_dir(&tmp.0)
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&bin)
        .args(["record", "-d", "nosuchdisk", "-t", "1"])
        .current_dir(&tmp.0)
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("lsblk"));
    let dev = LoopDev::new(&tmp.0, 16, false);
    let out = Command::new(&bin)
        .args([
            "record",
            "-d",
            &dev.path,
            "-t",
            "1",
            "-o",
            "/proc/no/such/dir/x.bst",
        ])
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("cannot write the output file") && err.contains("-o"),
        "{err}"
    );
    let out = Command::new(&bin)
        .args(["record", "-d", &dev.path, "--sample-rate", "2"])
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sample-rate"));
    if have("setpriv") {
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin)
            .args(["record", "-d", &dev.path, "-t", "1"])
            .current_dir("/")
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("needs root") && err.contains("sudo"),
            "{err}"
        );
    }
    // Without -o: a named file in the current directory, its name printed.
    let out = Command::new(&bin)
        .args(["record", "-d", &dev.name, "-t", "1"])
        .current_dir(&tmp.0)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let name = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        name.starts_with("blocksight-") && name.ends_with(".bst"),
        "{name}"
    );
    assert!(read_trace(&tmp.0.join(&name)).ended);
}

#[test]
fn issue_13_record_refuses_limits_and_devices_that_record_nothing() {
    let Some(_lock) = setup("issue_13_record_flags") else {
        return;
    };
    let tmp = TempDir::new("flags");
    let bin = blocksight_bin();
    let dev = LoopDev::new(&tmp.0, 16, false);
    let out_path = tmp.0.join("x.bst");
    let record = |args: &[&str]| {
        Command::new(&bin)
            .arg("record")
            .args(args)
            .arg("-o")
            .arg(&out_path)
            .current_dir(&tmp.0)
            .output()
            .expect("run")
    };
    // Before: both were accepted, wrote an empty trace and exited 0.
    for (args, needle) in [
        (&["-d", dev.path.as_str(), "-t", "0s"][..], "--duration 0s"),
        (
            &["-d", dev.path.as_str(), "--max-size", "0"][..],
            "--max-size 0",
        ),
    ] {
        let out = record(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(needle),
            "{args:?}: {err}"
        );
        assert!(!out_path.exists(), "{args:?} left a file");
    }
    // An unbound loop device (size 0) was recorded silently.
    let free = run(Command::new("losetup").arg("-f")).trim().to_string();
    if Path::new(&free).exists() {
        let out = record(&["-d", &free, "-t", "1s"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("size 0") && err.contains("losetup"),
            "{err}"
        );
    }
    // The same device named twice (by path and by name) is listed once.
    let out = record(&["-d", &dev.path, "-d", &dev.name, "-t", "1s"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("named more than once"));
    let t = read_trace(&out_path);
    assert_eq!(t.header.devices.len(), 1, "{:?}", t.header.devices);
}

/// Events whose latency window holds the issue of a later request to the same sector in the
/// same direction: the signature of a completion given to the wrong request (the chain of
/// issue 13). The tracker gives a completion to the newest request issued before it, so a
/// correct recording has none.
fn chained_latencies(t: &Trace) -> Vec<IoEvent> {
    let mut by_key: BTreeMap<(u32, u64, Op), Vec<u64>> = BTreeMap::new();
    for e in &t.events {
        by_key
            .entry((e.device, e.offset_bytes, e.op))
            .or_default()
            .push(e.time_nanos);
    }
    t.events
        .iter()
        .filter(|e| {
            let Some(lat) = e.latency_nanos else {
                return false;
            };
            let end = e.time_nanos.saturating_add(lat);
            by_key[&(e.device, e.offset_bytes, e.op)]
                .iter()
                .any(|&t| t > e.time_nanos && t < end)
        })
        .copied()
        .collect()
}

#[test]
fn issue_13_blk_backend_started_under_load_never_chains_completions() {
    let Some(_lock) = setup("issue_13_blk_startup") else {
        return;
    };
    let tmp = TempDir::new("blkstart");
    let dev = LoopDev::new(&tmp.0, 64, false);
    // The race needs requests in flight when tracing starts: fio runs first, the recorder
    // starts under it. Seen in 2 of 6 recordings before the fix; 8 here.
    for round in 0..8 {
        let mut fio = Command::new("fio")
            .args([
                "--name=bg",
                &format!("--filename={}", dev.path),
                "--rw=randrw",
                "--bs=4k",
                "--direct=1",
                "--ioengine=libaio",
                "--iodepth=16",
                "--time_based",
                "--runtime=4",
                "--size=64M",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start fio");
        // Wait until fio's requests are flowing (its first completed I/O moves the disk's
        // stat counters), without sleeping a fixed time.
        let stat = format!("/sys/class/block/{}/stat", dev.name);
        let ios = || -> u64 {
            std::fs::read_to_string(&stat)
                .ok()
                .and_then(|s| {
                    let f: Vec<u64> = s
                        .split_whitespace()
                        .filter_map(|v| v.parse().ok())
                        .collect();
                    Some(f.first()? + f.get(4)?)
                })
                .unwrap_or(0)
        };
        let before = ios();
        while ios() < before + 1000 {
            std::thread::yield_now();
        }
        let out_path = tmp.0.join(format!("r{round}.bst"));
        let out = Command::new(blocksight_bin())
            .args([
                "record",
                "--backend",
                "blk",
                "-d",
                &dev.path,
                "-t",
                "2s",
                "-o",
            ])
            .arg(&out_path)
            .output()
            .expect("record");
        let _ = fio.wait();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let t = read_trace(&out_path);
        assert!(
            t.events.len() > 1000,
            "round {round}: {} events",
            t.events.len()
        );
        let chained = chained_latencies(&t);
        assert!(
            chained.is_empty(),
            "round {round}: {} of {} requests got a later request's completion, first {:?}; \
             the recorder said:\n{}",
            chained.len(),
            t.events.len(),
            &chained[..chained.len().min(3)],
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
