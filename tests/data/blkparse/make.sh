#!/bin/bash
# Records tests/data/blkparse/fio_loop.txt: blkparse's default text output for a small fio
# workload (random reads/writes, fsyncs, trims) on a loop device. Debian's blktrace tool cannot
# open its debugfs relay files on these machines, so the kernel's ftrace `blk` tracer (binary
# option) writes the same struct blk_io_trace records to the per-CPU trace_pipe files, and
# Debian's blkparse turns them into text (after stripping ftrace's per-record prefix). Needs root, fio and blkparse. Cleans up on every path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
tracing=/sys/kernel/tracing
[ -f "$tracing/current_tracer" ] || mount -t tracefs nodev "$tracing"
if [ "$(cat $tracing/current_tracer)" != nop ]; then
    echo "the top-level tracer is in use ($(cat $tracing/current_tracer)); try later" >&2
    exit 1
fi
loop=""
pids=()
cleanup() {
    [ -n "$loop" ] && echo 0 > "/sys/block/$(basename "$loop")/trace/enable" 2>/dev/null || true
    echo 0 > "$tracing/options/bin" || true
    echo nop > "$tracing/current_tracer" || true
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -n "$loop" ] && losetup -d "$loop" || true
    rm -rf "$work"
}
trap cleanup EXIT
truncate -s 64M "$work/disk.img"
loop=$(losetup -f --show "$work/disk.img")
name=$(basename "$loop")
echo blk > "$tracing/current_tracer"
echo 1 > "$tracing/options/bin"
echo 0 > "/sys/block/$name/trace/start_lba" || true
echo 1 > "/sys/block/$name/trace/enable"
cpus=$(ls -d $tracing/per_cpu/cpu* | wc -l)
for ((c = 0; c < cpus; c++)); do
    cat "$tracing/per_cpu/cpu$c/trace_pipe" > "$work/trace.blktrace.$c" &
    pids+=($!)
done
fio --name=mixed --filename="$loop" --direct=1 --ioengine=psync --rw=randrw --bs=4k \
    --size=8M --number_ios=24 --randseed=42 --fsync=8 >/dev/null
fio --name=trim --filename="$loop" --direct=1 --ioengine=psync --rw=randtrim --bs=8k \
    --size=4M --number_ios=3 --randseed=7 >/dev/null
sleep 1
echo 0 > "/sys/block/$name/trace/enable"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()
# ftrace's blk tracer prefixes every struct blk_io_trace with 16 bytes of its own (pid, cpu,
# timestamp); blkparse wants the bare records, so strip the prefix.
for ((c = 0; c < cpus; c++)); do
    python3 - "$work/trace.blktrace.$c" "$work/bare.blktrace.$c" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
out = bytearray()
i = 0
while i + 64 <= len(data):
    rec = data[i + 16:]
    magic, = struct.unpack_from('<I', rec, 0)
    if magic & 0xffffff00 != 0x65617400:
        sys.exit(f"no blk_io_trace magic at byte {i + 16} of {sys.argv[1]}")
    pdu_len, = struct.unpack_from('<H', rec, 46)
    out += rec[:48 + pdu_len]
    i += 16 + 48 + pdu_len
open(sys.argv[2], 'wb').write(out)
PY
done
blkparse -i "$work/bare" > "$here/fio_loop.txt"
echo "wrote $(wc -l < "$here/fio_loop.txt") lines for $loop"
