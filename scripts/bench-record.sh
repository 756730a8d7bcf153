#!/bin/bash
# Overhead benchmark for `blocksight record` (issue 3). Needs root, fio and losetup.
#
# On a fast device (a loop device over a file in /dev/shm, i.e. RAM) it measures, for each mode:
#   none    fio alone
#   events  while `blocksight record --backend events` runs
#   blk     while `blocksight record --backend blk` runs
#   text    while `cat` drains the text trace_pipe of an instance with the same two events (the
#           kernel formats text in the reader's context, so cat's CPU time is a lower bound for any
#           text-reading collector; the binary reader's CPU includes decoding and writing the file)
# and reports fio's IOPS, fio's own CPU time per I/O (the tracepoints run in the submitting and
# completing context, so this shows the kernel-side cost of tracing even when the IOPS are noisy),
# the collector's CPU time per million requests and dropped events.
# Two loads: unthrottled (the most IOPS fio reaches) and throttled to fixed rates (--rates).
#
# Usage: scripts/bench-record.sh [--runtime SECS] [--repeats N] [--rates "100000 200000"]
#        [--modes "none events blk text"] [--bin PATH] [--device DEV] [--jobs N]
# --device benchmarks an existing block device instead (random reads only, nothing is written);
# for example a zram device (`echo 1G > /sys/block/zram0/disksize`), which reaches far more IOPS
# than a loop device and is bio-based, so it exercises the bio-level events. --jobs runs N fio
# jobs (psync) instead of one libaio job with iodepth 16.
# Output: one line per run, then a summary per mode (median and min..max over the repeats).
# The machine is shared and small: run it when idle and read the spread, not one number.
set -euo pipefail
runtime=10
repeats=3
rates="100000 200000"
modes="none events blk text"
bin=""
device=""
jobs=""
while [ $# -gt 0 ]; do
    case "$1" in
        --runtime) runtime=$2; shift 2 ;;
        --repeats) repeats=$2; shift 2 ;;
        --rates) rates=$2; shift 2 ;;
        --modes) modes=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --device) device=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "bench-record.sh needs root (tracefs, losetup)" >&2; exit 1; }
command -v fio >/dev/null || { echo "needs fio (apt-get install fio)" >&2; exit 1; }
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$bin" ]; then
    (cd "$here" && cargo build --release -q -p collector)
    bin="${CARGO_TARGET_DIR:-$here/target}/release/blocksight"
fi
tracing=/sys/kernel/tracing
[ -d "$tracing/instances" ] || mount -t tracefs nodev "$tracing"

work=$(mktemp -d /dev/shm/bs-bench.XXXXXX)
loop=""
rec_pid=""
cat_pids=()
inst=""
cleanup() {
    [ -n "$rec_pid" ] && kill -INT "$rec_pid" 2>/dev/null && wait "$rec_pid" 2>/dev/null || true
    for p in "${cat_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -n "$inst" ] && [ -d "$inst" ]; then
        echo 0 > "$inst/events/enable" || true
        rmdir "$inst" || true
    fi
    [ -n "$loop" ] && losetup -d "$loop" || true
    rm -rf "$work"
}
trap cleanup EXIT
if [ -n "$device" ]; then
    target=$device
    desc="$device (existing device, random reads)"
else
    truncate -s 1G "$work/disk.img"
    # Fill it so reads hit real pages rather than holes.
    dd if=/dev/zero of="$work/disk.img" bs=1M count=1024 conv=notrunc status=none
    loop=$(losetup -f --show "$work/disk.img")
    target=$loop
    desc="$loop (RAM-backed loop device)"
fi
majmin=$(cat "/sys/class/block/$(basename "$(readlink -f "$target")")/dev")
kdev=$(( (${majmin%%:*} << 20) | ${majmin##*:} ))
echo "device $desc, runtime ${runtime}s, repeats $repeats, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# Prints "iops fio_cpu_us_per_io" from fio's JSON.
run_fio() {
    local rate=$1
    local extra=()
    local engine=(--ioengine=libaio --iodepth=16)
    if [ -n "$jobs" ]; then
        engine=(--ioengine=psync --numjobs="$jobs" --group_reporting)
        # fio's rate_iops is per job.
        [ "$rate" != max ] && extra=(--rate_iops=$(( rate / jobs )))
    else
        [ "$rate" != max ] && extra=(--rate_iops="$rate")
    fi
    fio --name=bench --filename="$target" --direct=1 "${engine[@]}" --rw=randread \
        --bs=4k --time_based --runtime="$runtime" --randseed=1 "${extra[@]}" --output-format=json \
        | python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; ios=max(j["read"]["total_ios"],1)
print(round(j["read"]["iops"]), "%.2f" % ((j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] * 1e3 / ios))'
}

# Runs one measurement; prints "mode rate iops fio_us_per_io cpu_per_million dropped".
measure() {
    local mode=$1 rate=$2 iops cpu="-" dropped="-"
    case "$mode" in
        none)
            iops=$(run_fio "$rate")
            ;;
        events|blk)
            "$bin" record -d "$target" --backend "$mode" -o "$work/out.bst" 2> "$work/rec.err" &
            rec_pid=$!
            until grep -q "blocksight: recording" "$work/rec.err" 2>/dev/null; do
                kill -0 "$rec_pid" 2>/dev/null || { cat "$work/rec.err" >&2; exit 1; }
                sleep 0.05
            done
            iops=$(run_fio "$rate")
            kill -INT "$rec_pid"; wait "$rec_pid" || true; rec_pid=""
            # "collector CPU time 1.23 s (45.6 ms per million requests)" and "dropped N events".
            cpu=$(sed -n 's/.*collector CPU time .* (\(.*\) per million requests).*/\1/p' "$work/rec.err" | tr -d ' ')
            dropped=$(sed -n 's/.*; dropped \([0-9,]*\) events.*/\1/p' "$work/rec.err" | tr -d ',')
            ;;
        text)
            inst="$tracing/instances/bs-bench-text-$$"
            mkdir "$inst"
            echo 4096 > "$inst/buffer_size_kb"
            for ev in block_rq_issue block_rq_complete; do
                echo "dev == $kdev" > "$inst/events/block/$ev/filter"
                echo 1 > "$inst/events/block/$ev/enable"
            done
            cat_pids=()
            for c in "$inst"/per_cpu/cpu*; do
                cat "$c/trace_pipe" > /dev/null & cat_pids+=($!)
            done
            iops=$(run_fio "$rate")
            echo 0 > "$inst/events/enable"
            local ticks=0 events
            for p in "${cat_pids[@]}"; do
                # utime + stime in clock ticks.
                ticks=$(( ticks + $(awk '{print $14 + $15}' "/proc/$p/stat") ))
                kill "$p" 2>/dev/null || true
            done
            wait "${cat_pids[@]}" 2>/dev/null || true
            cat_pids=()
            dropped=0
            for c in "$inst"/per_cpu/cpu*; do
                dropped=$(( dropped + $(awk -F: '/^overrun|^dropped events/ {s += $2} END {print s + 0}' "$c/stats") ))
            done
            rmdir "$inst"; inst=""
            events=$(( ${iops% *} * runtime * 2 ))
            cpu=$(python3 -c "print(f'{$ticks / $(getconf CLK_TCK) * 1e3 * 2e6 / max($events, 1):.0f}ms')")
            ;;
    esac
    echo "$mode $rate $iops $cpu $dropped"
}

results="$work/results"
: > "$results"
printf "%-7s %-8s %9s %12s %14s %9s\n" mode rate iops "fio µs/io" "cpu/1M req" dropped
for ((r = 1; r <= repeats; r++)); do
    for rate in max $rates; do
        for mode in $modes; do
            line=$(measure "$mode" "$rate")
            echo "$line" >> "$results"
            # shellcheck disable=SC2086
            printf "%-7s %-8s %9s %12s %14s %9s\n" $line
        done
    done
done

echo
echo "summary: median (min..max) over $repeats runs; IOPS cost relative to 'none' at the same rate"
python3 - "$results" <<'EOF'
import sys, statistics, collections, re
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    mode, rate, iops, fio_us, cpu, dropped = line.split()
    rows[(rate, mode)].append((int(iops), cpu, dropped, float(fio_us)))
def ms(v):
    m = re.match(r"([0-9.]+)(µs|ms|s)$", v)
    if not m: return None
    return float(m.group(1)) * {"µs": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
for (rate, mode), vals in sorted(rows.items()):
    iops = [v[0] for v in vals]
    base = rows.get((rate, "none"))
    cost = ""
    if base and mode != "none":
        b = statistics.median(v[0] for v in base)
        cost = f" cost {100 * (1 - statistics.median(iops) / b):+.1f}%"
    cpus = [c for c in (ms(v[1]) for v in vals) if c is not None]
    cpu = f" cpu/1M {statistics.median(cpus):.0f} ms ({min(cpus):.0f}..{max(cpus):.0f})" if cpus else ""
    fio_us = [v[3] for v in vals]
    fio = f" fio {statistics.median(fio_us):.2f} µs/io ({min(fio_us):.2f}..{max(fio_us):.2f})"
    drops = [v[2] for v in vals if v[2] != "-"]
    drop = f" dropped {','.join(drops)}" if drops else ""
    print(f"{mode:7} rate {rate:7} iops {statistics.median(iops):>8.0f} ({min(iops)}..{max(iops)}){cost}{fio}{cpu}{drop}")
EOF
