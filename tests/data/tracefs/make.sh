#!/bin/bash
# Records tests/data/tracefs/fio_loop.trace: real block_rq_issue/block_rq_complete lines from
# tracefs while fio runs a small mixed workload (random reads and writes, a few trims and
# flushes) against a loop device. Needs root and fio. Uses its own tracefs instance, filtered
# to the loop device, so other tracing on the machine is untouched; cleans up on every path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
tracing=/sys/kernel/tracing
[ -d "$tracing/instances" ] || mount -t tracefs nodev "$tracing"
inst="$tracing/instances/blocksight-fixture-$$"
loop=""
cleanup() {
    if [ -d "$inst" ]; then
        echo 0 > "$inst/events/block/block_rq_issue/enable" || true
        echo 0 > "$inst/events/block/block_rq_complete/enable" || true
        rmdir "$inst" || true
    fi
    [ -n "$loop" ] && losetup -d "$loop" || true
    rm -rf "$work"
}
trap cleanup EXIT
truncate -s 64M "$work/disk.img"
loop=$(losetup -f --show "$work/disk.img")
majmin=$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ')
major=${majmin%%:*}; minor=${majmin##*:}
dev=$(( (major << 20) | minor ))
mkdir "$inst"
for ev in block_rq_issue block_rq_complete; do
    echo "dev == $dev" > "$inst/events/block/$ev/filter"
    echo 1 > "$inst/events/block/$ev/enable"
done
fio --name=mixed --filename="$loop" --direct=1 --ioengine=psync --rw=randrw --bs=4k \
    --size=8M --number_ios=40 --randseed=42 --fsync=10 >/dev/null
fio --name=seq --filename="$loop" --direct=1 --ioengine=psync --rw=write --bs=64k \
    --offset=16M --size=256k >/dev/null
fio --name=trim --filename="$loop" --direct=1 --ioengine=psync --rw=randtrim --bs=8k \
    --size=4M --number_ios=4 --randseed=7 >/dev/null
sleep 0.5
echo 0 > "$inst/events/block/block_rq_issue/enable"
echo 0 > "$inst/events/block/block_rq_complete/enable"
# The ring buffer's "trace" file has a comment header; keep it (the decoder skips it).
cat "$inst/trace" > "$here/fio_loop.trace"
echo "recorded $(grep -c block_rq "$here/fio_loop.trace") lines on $loop ($majmin)"
