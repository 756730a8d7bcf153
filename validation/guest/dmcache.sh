#!/bin/sh
# dm-cache (smq) validation workloads: a fresh cache per workload over a 1 GiB origin (vde behind
# dm-delay, 2 ms), cache data and metadata on null_blk. Records the bios the cache device was
# asked to serve and their completions (smq ticks when a tagged bio completes), a trace marker
# when the cache is created (its first tick), and `dmsetup status` afterwards. Disks: lab.sh's default.
# (validation/run.sh prepends common.sh: lab.sh copies one script into the guest.)
OSZ=$(blockdev --getsz /dev/vde)
dmsetup create slow --table "0 $OSZ delay /dev/vde 0 2 /dev/vde 0 2"
# With FIXED=1 every job issues as many I/Os as the stored run's (tests/data/lab/<name>/lab.json
# "bios"; phases: per phase) instead of running for a fixed time: the seed is fixed, so the bios
# are those of the stored run and a rerun measures the kernel's own timing spread. With
# MIGTRACE=1 the origin (dm-delay) and cache data devices are traced too: promotions show as
# whole-block kcopyd reads of the origin and writes of the cache device (diagnosis only).
fixed_ios() {
  case $1 in
    dmc-wb32k-128m-z099-rw60) echo 10341;; dmc-wt32k-128m-z099-rw60) echo 8770;;
    dmc-wb64k-64m-z12-rw70) echo 16545;; dmc-wb256k-128m-z12-r8k) echo 23345;;
    dmc-wb1m-128m-z099-rw50) echo 1779;; dmc-wb32k-64m-uniform-rw60) echo 8100;;
    dmc-wt128k-32m-z12-rw60) echo 3972;; dmc-wb64k-128m-hotset-rw70) echo 23305;;
    dmc-wb32k-64m-phases-rw70) echo 3568;; dmc-wb32k-64m-phases-rw70-2) echo 2594;;
    dmc-wb64k-128m-z12-w64k) echo 626;; dmc-wt64k-256m-z099-r4k) echo 1621;;
    dmc-wt32k-64m-scan-then-z12) echo 2552;; dmc-wt32k-64m-scan-then-z12-2) echo 9328;;
    dmc-wb128k-128m-z11-bssplit) echo 25845;;
  esac
}
# dmc NAME MODE BLOCK_SECTORS CACHE_MIB fio-args...
dmc() {
  n=$1 mode=$2 bs=$3 cmib=$4; shift 4
  # ONLY=name,name,...: run just those workloads.
  if [ -n "$ONLY" ]; then case ",$ONLY," in *",$n,"*) ;; *) return 0;; esac; fi
  dd if=/dev/zero of=/dev/nullb0 bs=1M count=16 2>/dev/null
  dmsetup create cmeta --table "0 32768 linear /dev/nullb0 0"
  dmsetup create cdata --table "0 $((cmib * 2048)) linear /dev/nullb0 32768"
  # smq's first tick runs when the cache resumes: mark it in the trace's clock.
  mark blocksight-created
  dmsetup create cached --table "0 $OSZ cache /dev/mapper/cmeta /dev/mapper/cdata /dev/mapper/slow $bs 1 $mode smq 0"
  # `dmsetup create` loads the table and resumes it: the first tick lies between the markers.
  echo blocksight-create-returned > $T/trace_marker
  dmsetup mknodes
  set -- $(dmsetup info -c -o major,minor --noheadings cached | tr : " ") "$@"
  maj=$1 min=$2; shift 2
  begin "$n" product=dm-cache mode=$mode block_bytes=$((bs * 512)) cache_bytes=$((cmib << 20)) origin_bytes=$((OSZ * 512)) dev=$maj,$min fio="$*" phase2="$P2" fixed=${FIXED:-0} migtrace=${MIGTRACE:-0}
  filter="dev == $(devt $maj $min)"
  if [ "$MIGTRACE" = 1 ]; then
    for d in slow cdata; do
      set -- $(dmsetup info -c -o major,minor --noheadings $d | tr : " ") "$@"
      filter="$filter || dev == $(devt $1 $2)"; shift 2
    done
  fi
  EVENTS="block_bio_queue block_bio_complete" trace_on "$filter" keep
  NIOS=; [ "$FIXED" = 1 ] && NIOS=$(fixed_ios "$n")
  fiorun "$n" /dev/mapper/cached ${RT:-12} "$@"
  [ "$FIXED" = 1 ] && NIOS=$(fixed_ios "$n-2")
  [ -n "$P2" ] && fiorun "$n-2" /dev/mapper/cached ${RT:-12} $P2
  NIOS=
  sleep 1
  EVENTS="block_bio_queue block_bio_complete" trace_off "$n"
  dmsetup status cached | awk '{print "read_hits="$8" read_misses="$9" write_hits="$10" write_misses="$11" demotions="$12" promotions="$13" dirty="$14}' | { read l; counter $l; }
  end "$n"
  dmsetup remove cached; dmsetup remove cdata cmeta
}
dmc dmc-wb32k-128m-z099-rw60   writeback    64 128 --rw=randrw --rwmixread=60 --bs=4k --random_distribution=zipf:0.99 --iodepth=8
dmc dmc-wt32k-128m-z099-rw60   writethrough 64 128 --rw=randrw --rwmixread=60 --bs=4k --random_distribution=zipf:0.99 --iodepth=8
dmc dmc-wb64k-64m-z12-rw70     writeback   128  64 --rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=8
dmc dmc-wb256k-128m-z12-r8k    writeback   512 128 --rw=randread --bs=8k --random_distribution=zipf:1.2 --iodepth=8
dmc dmc-wb1m-128m-z099-rw50    writeback  2048 128 --rw=randrw --rwmixread=50 --bs=16k --random_distribution=zipf:0.99 --iodepth=8
dmc dmc-wb32k-64m-uniform-rw60 writeback    64  64 --rw=randrw --rwmixread=60 --bs=4k --iodepth=8
dmc dmc-wt128k-32m-z12-rw60    writethrough 256 32 --rw=randrw --rwmixread=60 --bs=4k --random_distribution=zipf:1.2 --iodepth=8
dmc dmc-wb64k-128m-hotset-rw70 writeback   128 128 --rw=randrw --rwmixread=70 --bs=4k --random_distribution=zoned:90/5:10/95 --iodepth=8
# Phase change: 6 s on a hot set in the first half of the origin, then 6 s on the second half.
RT=6 P2="--rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=8 --offset=512m --size=512m" \
dmc dmc-wb32k-64m-phases-rw70  writeback    64  64 --rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=8 --offset=0 --size=512m
dmc dmc-wb64k-128m-z12-w64k    writeback   128 128 --rw=randwrite --bs=64k --random_distribution=zipf:1.2 --iodepth=4
dmc dmc-wt64k-256m-z099-r4k    writethrough 128 256 --rw=randread --bs=4k --random_distribution=zipf:0.99 --iodepth=8
# Added later and only checked, never tuned on (docs/validation.md): a write-through hot set
# with 8 KiB bios at depth 4, and write-back 128 KiB blocks under zipf 1.1 at depth 16.
RT=8 dmc dmc-wt64k-128m-hot80-rw70-8k writethrough 128 128 --rw=randrw --rwmixread=70 --bs=8k --random_distribution=zoned:80/10:20/90 --iodepth=4
RT=8 dmc dmc-wb128k-64m-z11-rw80-qd16 writeback 256 64 --rw=randrw --rwmixread=80 --bs=4k --random_distribution=zipf:1.1 --iodepth=16
# Run D2, added after the model's last change and only checked (nothing was tuned on it): large
# blocks, a sequential scan before a hot set, a write-heavy mix, a small cache with low skew,
# a read-only hot set of 16 KiB reads, a deep queue and mixed request sizes.
dmc dmc-wb512k-128m-z12-rw50-16k writeback 1024 128 --rw=randrw --rwmixread=50 --bs=16k --random_distribution=zipf:1.2 --iodepth=8
RT=6 P2="--rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=8" \
dmc dmc-wt32k-64m-scan-then-z12   writethrough 64 64 --rw=read --bs=64k --iodepth=4
dmc dmc-wb64k-256m-z099-rw20      writeback   128 256 --rw=randrw --rwmixread=20 --bs=4k --random_distribution=zipf:0.99 --iodepth=8
dmc dmc-wb32k-32m-z08-rw70        writeback    64  32 --rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:0.8 --iodepth=8
dmc dmc-wt256k-64m-hotset-r16k    writethrough 512 64 --rw=randread --bs=16k --random_distribution=zoned:85/8:15/92 --iodepth=8
dmc dmc-wb64k-128m-z12-rw60-qd32  writeback   128 128 --rw=randrw --rwmixread=60 --bs=4k --random_distribution=zipf:1.2 --iodepth=32
dmc dmc-wb128k-128m-z11-bssplit   writeback   256 128 --rw=randrw --rwmixread=65 --bssplit=4k/50:16k/30:64k/20 --random_distribution=zipf:1.1 --iodepth=8
# Run D3 (checked only): larger caches, 384 and 512 MiB of the 1 GiB origin (more cache blocks
# than hotspot blocks at 16 per hotspot block, so smq halves the hotspot block).
dmc dmc-wb64k-512m-z099-rw70      writeback   128 512 --rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:0.99 --iodepth=8
dmc dmc-wt128k-384m-hot70-rw60    writethrough 256 384 --rw=randrw --rwmixread=60 --bs=8k --random_distribution=zoned:70/20:30/80 --iodepth=8
# Replays of the bundled real trace (tests/data/sample: PostgreSQL pgbench on a 4 GiB loop
# device), its first 60,000 reads and writes in order and as fast as they go (its flushes left
# out), made with `blocksight export --to fio` (validation/README.md, run R):
#   REPLAY=/tmp/pgbench-60k.iolog DISKS=3G,3G,3G,3G,5G validation/run.sh SUITE OUT
# (GUEST_ENV='REPLAY_TAG=-fsync' files them as NAME-fsync: run R2, the same log with its flushes.)
if [ -s /tmp/replay.log ]; then
dmc dmc-wb64k-128m-pgbench60k$REPLAY_TAG   writeback   128 128 --read_iolog=/tmp/replay.log --iodepth=8
dmc dmc-wt32k-64m-pgbench60k$REPLAY_TAG    writethrough 64  64 --read_iolog=/tmp/replay.log --iodepth=8
dmc dmc-wb64k-512m-pgbench60k$REPLAY_TAG   writeback   128 512 --read_iolog=/tmp/replay.log --iodepth=8
fi
dmsetup remove slow
cat /tmp/out.txt > "$OUT_DISK"; sync
