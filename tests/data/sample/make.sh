#!/usr/bin/env bash
# Records the bundled sample trace: a real PostgreSQL 15 pgbench (TPC-B-like) run on an ext4
# file system on a loop device, traced with the kernel's block_rq_issue/block_rq_complete events
# in a private tracefs instance. PostgreSQL runs in a memory cgroup capped at 256 MiB so that its
# reads reach the device rather than the page cache, as on a server whose database is larger
# than RAM.
#
# Needs root, Debian's postgresql (15) and tracefs. Writes pgbench.tracefs.txt.zst next to this
# script; `blocksight import` turns it into pgbench.bst (see README.md here).
#
#   usage: make.sh [SCALE] [SECONDS] [CLIENTS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scale=${1:-60}
seconds=${2:-40}
clients=${3:-8}
work=$(mktemp -d /tmp/bs-sample.XXXXXX)
img=$work/disk.img
mnt=$work/mnt
tracing=/sys/kernel/tracing
inst=$tracing/instances/bs-sample-$$
cg=/sys/fs/cgroup/memory/bs-sample-$$
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
port=5499
loop=""
reader=""

cleanup() {
  set +e
  [ -n "$reader" ] && kill "$reader" 2>/dev/null && wait "$reader" 2>/dev/null
  if [ -d "$inst" ]; then
    echo 0 > "$inst/tracing_on"
    echo 0 > "$inst/events/block/enable"
    rmdir "$inst"
  fi
  if [ -f "$mnt/pgdata/postmaster.pid" ]; then
    su postgres -c "$pgbin/pg_ctl -D $mnt/pgdata -m immediate stop" >/dev/null 2>&1
  fi
  mountpoint -q "$mnt" && umount "$mnt"
  [ -n "$loop" ] && losetup -d "$loop"
  [ -d "$cg" ] && rmdir "$cg"
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

[ "$(id -u)" -eq 0 ] || { echo "make.sh: needs root (loop devices, tracefs)"; exit 1; }
mountpoint -q "$tracing" || mount -t tracefs nodev "$tracing"

truncate -s 4G "$img"
loop=$(losetup -f --show "$img")
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
mkdir -p "$mnt"
mount -o noatime "$loop" "$mnt"
mkdir -p "$mnt/pgdata"
chown postgres: "$mnt/pgdata"
chmod 777 "$work"
su postgres -c "$pgbin/initdb -D $mnt/pgdata -A trust" >/dev/null
mkdir -p "$cg"
echo $((256 << 20)) > "$cg/memory.limit_in_bytes"
sh -c "echo \$\$ > $cg/cgroup.procs; exec su postgres -c \"$pgbin/pg_ctl -D $mnt/pgdata -l $work/pg.log -w \
  -o '-p $port -k $work -c shared_buffers=32MB -c max_wal_size=256MB -c checkpoint_timeout=30s -c synchronous_commit=on' start\"" >/dev/null

su postgres -c "$pgbin/pgbench -h $work -p $port -i -q -s $scale postgres" >/dev/null 2>&1
sync
echo 3 > /proc/sys/vm/drop_caches

major=$((0x$(stat -c %t "$loop")))
minor=$((0x$(stat -c %T "$loop")))
mkdir "$inst"
echo 16384 > "$inst/buffer_size_kb"
for ev in block_rq_issue block_rq_complete; do
  echo "dev == $(( (major << 20) | minor ))" > "$inst/events/block/$ev/filter"
  echo 1 > "$inst/events/block/$ev/enable"
done
out=$work/trace.txt
cat "$inst/trace_pipe" > "$out" &
reader=$!
echo 1 > "$inst/tracing_on"
su postgres -c "$pgbin/pgbench -h $work -p $port -c $clients -j 2 -T $seconds -P 10 postgres" > "$work/pgbench.out" 2>&1
sync
sleep 2
echo 0 > "$inst/tracing_on"
sleep 1
kill "$reader"; wait "$reader" 2>/dev/null || true
reader=""
dropped=$(grep -h overrun "$inst"/per_cpu/cpu*/stats | awk '{s+=$2} END {print s+0}')
zstd -q -19 -f "$out" -o "$here/pgbench.tracefs.txt.zst"
cp "$work/pgbench.out" "$here/pgbench.out.txt"
echo "device loop $major:$minor, $(wc -l < "$out") lines, ring-buffer overruns: $dropped"
