#!/bin/bash
# Regenerates the real blktrace fixtures in tests/data/blktrace (see README.md there).
#
# For each workload: a loop device over a 64 MiB file in /tmp, the kernel's ftrace `blk` tracer in
# binary mode (options/bin=1, options/context-info=0, so each per-CPU trace_pipe carries bare
# `struct blk_io_trace` records exactly as blktrace writes them), fio running the workload with
# JSON output, then the per-CPU buffers drained without blocking into NAME.blktrace.CPU, and
# Debian's blkparse run over them into NAME.blkparse.txt.
#
# Needs root, fio and blkparse (Debian package blktrace). The blk tracer cannot run in a tracefs
# instance, so this uses the top-level tracer: it refuses to run when that is busy and restores
# every setting it touches, on every exit path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tracing=/sys/kernel/tracing
[ -f "$tracing/current_tracer" ] || mount -t tracefs nodev "$tracing"
if [ "$(cat "$tracing/current_tracer")" != nop ]; then
    echo "make.sh: the top-level tracer is in use ($(cat "$tracing/current_tracer")); try later" >&2
    exit 1
fi
work=$(mktemp -d /tmp/blocksight-blktrace.XXXXXX)
loop=""
old_bin=$(cat "$tracing/options/bin")
old_ctx=$(cat "$tracing/options/context-info")
old_on=$(cat "$tracing/tracing_on")
cleanup() {
    if [ -n "$loop" ]; then
        echo 0 > "/sys/block/$(basename "$loop")/trace/enable" 2>/dev/null || true
        losetup -d "$loop" || true
    fi
    echo nop > "$tracing/current_tracer" || true
    echo "$old_bin" > "$tracing/options/bin" || true
    echo "$old_ctx" > "$tracing/options/context-info" || true
    echo "$old_on" > "$tracing/tracing_on" || true
    rm -rf "$work"
}
trap cleanup EXIT

cpus=$(ls -d "$tracing"/per_cpu/cpu* | wc -l)

# record NAME FIO-ARGS...: one fixture.
record() {
    local name=$1
    shift
    truncate -s 64M "$work/disk.img"
    loop=$(losetup -f --show "$work/disk.img")
    local dev
    dev=$(basename "$loop")
    udevadm settle 2>/dev/null || true
    echo blk > "$tracing/current_tracer"
    echo 1 > "$tracing/options/bin"
    echo 0 > "$tracing/options/context-info"
    echo > "$tracing/trace"
    echo 1 > "$tracing/tracing_on"
    echo 1 > "/sys/block/$dev/trace/enable"
    fio --filename="$loop" --direct=1 --output-format=json --output="$work/$name.fio.json" "$@"
    echo 0 > "/sys/block/$dev/trace/enable"
    rm -f "$here/$name".blktrace.*
    for ((c = 0; c < cpus; c++)); do
        if grep -q '^overrun: [1-9]' "$tracing/per_cpu/cpu$c/stats"; then
            echo "make.sh: ring buffer overrun on cpu $c; records were lost" >&2
            exit 1
        fi
        # Non-blocking reads drain what the tracer holds and stop at EAGAIN.
        dd if="$tracing/per_cpu/cpu$c/trace_pipe" of="$here/$name.blktrace.$c" \
            iflag=nonblock bs=64k status=none 2>/dev/null || true
    done
    echo nop > "$tracing/current_tracer"
    losetup -d "$loop"
    loop=""
    # fio's JSON names the temporary loop device and the time of the run: keep only what the
    # tests compare (per-job I/O counts and bytes) plus the fio version, so reruns diff cleanly.
    python3 - "$work/$name.fio.json" "$here/$name.fio.json" <<'PY'
import json, sys
src = json.load(open(sys.argv[1]))
keep = {"fio version": src["fio version"], "jobs": []}
for job in src["jobs"]:
    j = {"jobname": job["jobname"]}
    for ddir in ("read", "write", "trim"):
        j[ddir] = {k: job[ddir][k] for k in ("total_ios", "io_bytes")}
    j["sync"] = {"total_ios": job["sync"]["total_ios"]}
    keep["jobs"].append(j)
json.dump(keep, open(sys.argv[2], "w"), indent=1, sort_keys=True)
open(sys.argv[2], "a").write("\n")
PY
    (cd "$here" && blkparse -i "$name" > "$name.blkparse.txt")
    echo "$name: $(cat "$here/$name".blktrace.* | wc -c) bytes of records"
}

record randread4k --name=randread4k --ioengine=psync --rw=randread --bs=4k --size=64M \
    --number_ios=300 --randseed=1
record seqwrite64k --name=seqwrite64k --ioengine=psync --rw=write --bs=64k --size=8M \
    --fsync=32
record mixed --ioengine=libaio --iodepth=8 --randseed=3 \
    --name=randrw --rw=randrw --rwmixread=70 --bsrange=4k-64k --size=64M --number_ios=300 \
    --name=trim --stonewall --rw=randtrim --bs=64k --size=64M --number_ios=16 --iodepth=1
