#!/bin/sh
# bcache validation workloads: a fresh cache set per workload. Backing device = the 1 GiB virtio
# disk vde; cache device = a dm-linear slice of null_blk (CACHE_MIB MiB), made with make-bcache's
# defaults written out (64 KiB buckets: 6.1 refuses a cache of fewer than 513 buckets, "nbuckets is too small"; 512 B blocks). cache_mode and sequential_cutoff are set per
# workload; the congestion thresholds are set to 0 (the lab README: under TCG the emulated cache is
# slower than bcache's congestion thresholds, so it would bypass as "congested") unless CONGEST=1
# or CDELAY=MS keep the kernel's defaults (CDELAY also delays the cache device's reads), readahead stays 0,
# writeback_percent 10 (defaults). Records the bios bcache0 was asked to serve (block_bio_queue on
# bcache0), bcache's own per-bio tracepoints (bcache_read / bcache_write / bypass_sequential, for
# diagnosis; collect.py ignores them), stats_total/* (read after the 13.6 s accounting timer
# has folded the counters in) and the cache and backing devices' /sys/block/*/stat differences.
# With ALLOCTRACE=1 the cache device (dm-0) and the backing device (vde) are traced too, with
# bio completions, and so are bcache0's request ends (bcache_request_end: bcache0's own bios get
# no block_bio_complete) and the allocator (bcache_alloc_fail, bcache_alloc_invalidate,
# bcache_journal_write, bcache_gc_start); ONLY=name,name runs just those workloads; SCHEDTRACE=1
# (diagnosis only) adds the allocator thread's sched_wakeup and sched_switch events.
# Disks: lab.sh's default. (validation/run.sh prepends common.sh: lab.sh copies one script.)
BUCKET=64k
# No block_bio_complete for bcache0: its bios end remapped to the backing device (a run with the
# event enabled recorded none for bcache0). With ALLOCTRACE=1 bcache's own request end
# (`bcache_request_end`, which names bcache0 and the bio's bcache0 sector) stands for it;
# collect.py files it as the completion. Without it the model inserts misses at once (or, with
# `simulate --qd`, after the task's next qd bios).
# bcstat DEV: reads sectors_read writes sectors_written of /sys/block/DEV/stat
bcstat() { awk '{print $1, $3, $5, $7}' /sys/block/$1/stat; }
# bc NAME MODE CUTOFF_BYTES CACHE_MIB fio-args...   (J2 = a second fio job's args, optional;
# P2 = a second fio phase's args, optional; RT = seconds per phase, default 12; IDLE = seconds
# without a bio after the counters, then dirty data and backing writes again, optional)
bc() {
  n=$1 mode=$2 cutoff=$3 cmib=$4; shift 4
  if [ -n "$ONLY" ] && ! echo ",$ONLY," | grep -q ",$n,"; then unset J2 P2 RT IDLE BK; return; fi
  # CONGEST=1: the kernel's default congestion thresholds stay; the run is filed as NAME-cg.
  [ -n "$CONGEST" ] && n="$n-cg"
  # CDELAY=MS: the cache device's reads are delayed MS ms (dm-delay over null_blk, writes not
  # delayed), so that bcache's congestion accounting sees slow reads; filed as NAME-cgdMS.
  [ -n "$CDELAY" ] && n="$n-cgd$CDELAY"
  dd if=/dev/zero of=/dev/vde bs=1M count=4 2>/dev/null
  dd if=/dev/zero of=/dev/nullb0 bs=1M count=4 2>/dev/null
  if [ -n "$CDELAY" ]; then
    dmsetup create cdata --table "0 $((cmib * 2048)) delay /dev/nullb0 0 $CDELAY /dev/nullb0 0 0"
  else
    dmsetup create cdata --table "0 $((cmib * 2048)) linear /dev/nullb0 0"
  fi
  dmsetup mknodes
  # BK=KIB before a workload: its bucket size (default $BUCKET).
  bk=${BK:-${BUCKET%k}}
  make-bcache --wipe-bcache --bucket ${bk}k --block 512 -B /dev/vde -C /dev/mapper/cdata > /tmp/mk.txt 2>&1 || { echo "### MAKE-BCACHE FAILED $n"; cat /tmp/mk.txt; }
  echo /dev/mapper/cdata > /sys/fs/bcache/register
  echo /dev/vde > /sys/fs/bcache/register
  i=0; while [ ! -e /sys/block/bcache0/bcache/cache_mode ] && [ $i -lt 10 ]; do sleep 1; i=$((i+1)); done
  # Registration may complete asynchronously (CONFIG_BCACHE_ASYNC_REGISTRATION): wait for the set.
  i=0; while [ -z "$(ls /sys/fs/bcache | grep -- -)" ] && [ $i -lt 15 ]; do sleep 1; i=$((i+1)); done
  cset=$(ls /sys/fs/bcache | grep -- -)
  i=0; while [ ! -e /sys/block/bcache0/bcache/cache ] && [ $i -lt 5 ]; do sleep 1; i=$((i+1)); done
  [ -e /sys/block/bcache0/bcache/cache ] || echo $cset > /sys/block/bcache0/bcache/attach
  [ -e /sys/block/bcache0/bcache/cache ] || { echo "### NOT ATTACHED $n ($cset)"; cat /tmp/mk.txt; ls /sys/fs/bcache; dmesg | grep -i bcache | tail; }
  # When the backing device was attached (its writeback timer, every 5 s, starts then), in the
  # kernel log's clock, which is the trace's ("local"): filed as a trace marker below.
  attached=$(dmesg | grep 'Caching .* as bcache0 on set' | tail -1 | sed 's/^\[ *\([0-9.]*\)\].*/\1/')
  S=/sys/block/bcache0/bcache
  echo "$mode" > $S/cache_mode
  echo "$cutoff" > $S/sequential_cutoff
  if [ -z "$CONGEST" ] && [ -z "$CDELAY" ]; then
    echo 0 > /sys/fs/bcache/$cset/congested_read_threshold_us
    echo 0 > /sys/fs/bcache/$cset/congested_write_threshold_us
  fi
  crt=$(cat /sys/fs/bcache/$cset/congested_read_threshold_us)
  cwt=$(cat /sys/fs/bcache/$cset/congested_write_threshold_us)
  set -- $(majmin bcache0) "$@"
  maj=$1 min=$2; shift 2
  nb=$(cat /sys/fs/bcache/$cset/cache0/nbuckets 2>/dev/null)
  begin "$n" product=bcache mode=$mode sequential_cutoff=$cutoff cache_bytes=$((cmib << 20)) \
    bucket_bytes=$(( bk * 1024 )) nbuckets=$nb backing_bytes=$(( $(blockdev --getsz /dev/bcache0) * 512 )) \
    writeback_percent=$(cat $S/writeback_percent) readahead_cache_policy=$(cat $S/readahead_cache_policy 2>/dev/null) congested_read_threshold_us=$crt congested_write_threshold_us=$cwt \
    cache_read_delay_ms=${CDELAY:-0} dev=$maj,$min fio="$*" job2="$J2" phase2="$P2"
  b0=$(bcstat vde) c0=$(bcstat dm-0)
  filt="dev == $(devt $maj $min)"
  BCEV="bcache_read bcache_write bcache_bypass_sequential bcache_bypass_congested bcache_invalidate bcache_gc_end"
  if [ -n "$ALLOCTRACE" ]; then
    # Also the cache device's (dm-0) and the backing device's (vde) bios with completions,
    # bcache0's request ends (its bios' completions), and the allocator's events.
    set -- $(majmin dm-0) "$@"; filt="$filt || dev == $(devt $1 $2)"; shift 2
    set -- $(majmin vde) "$@"; filt="$filt || dev == $(devt $1 $2)"; shift 2
    BCEV="$BCEV bcache_request_end bcache_alloc_fail bcache_alloc_invalidate bcache_journal_write bcache_gc_start"
    EVENTS="block_bio_queue block_bio_complete"
  fi
  trace_on "$filt"
  for ev in $BCEV; do
    echo 1 > $T/events/bcache/$ev/enable 2>/dev/null; done
  if [ -n "$SCHEDTRACE" ]; then
    # When the allocator thread is woken and when it gets (and leaves) a CPU.
    echo 'comm == "bcache_allocato"' > $T/events/sched/sched_wakeup/filter
    echo 'prev_comm == "bcache_allocato" || next_comm == "bcache_allocato"' > $T/events/sched/sched_switch/filter
    echo 1 > $T/events/sched/sched_wakeup/enable; echo 1 > $T/events/sched/sched_switch/enable
  fi
  [ -n "$attached" ] && echo "blocksight-attached $attached" > $T/trace_marker
  rt=${RT:-12}
  fiorun "$n" /dev/bcache0 $rt "$@" ${J2:+--name=$n-b --filename=/dev/bcache0 --runtime=$rt --time_based --direct=1 --ioengine=libaio --randrepeat=1 --randseed=7 $J2}
  [ -n "$P2" ] && { w=$n; fiorun "$n-2" /dev/bcache0 $rt $P2; n=$w; }  # fiorun sets n
  t_end=$(cut -d' ' -f1 /proc/uptime)
  sleep 1
  trace_off "$n"
  for ev in $BCEV; do
    echo 0 > $T/events/bcache/$ev/enable 2>/dev/null; done
  if [ -n "$SCHEDTRACE" ]; then
    echo 0 > $T/events/sched/sched_wakeup/enable; echo 0 > $T/events/sched/sched_switch/enable
  fi
  unset EVENTS
  # stats_total is folded in from the per-device collector by a timer every 300/22 s (13.6 s:
  # stats.c's accounting_delay); wait one whole period, so the last bios are in (a job shorter
  # than the first period, as every fio job here, was in after 6 s; a replay is not).
  sleep 14
  counter hits=$(cat $S/stats_total/cache_hits) misses=$(cat $S/stats_total/cache_misses) \
    bypass_hits=$(cat $S/stats_total/cache_bypass_hits) bypass_misses=$(cat $S/stats_total/cache_bypass_misses) \
    miss_collisions=$(cat $S/stats_total/cache_miss_collisions) \
    bypassed=$(cat $S/stats_total/bypassed) dirty_data=$(cat $S/dirty_data) \
    cache_available_percent=$(cat /sys/fs/bcache/$cset/cache_available_percent)
  # When the counters were read, in seconds after the last bio's fio job ended (the model's
  # --idle-after), and the writeback rate then (writeback_rate: bytes per second, human).
  counter counters_after_s=$(awk -v e=$t_end '{printf "%.2f", $1 - e}' /proc/uptime) \
    writeback_rate=$(cat $S/writeback_rate)
  set -- $b0 $(bcstat vde); counter backing_reads=$(($5 - $1)) backing_sectors_read=$(($6 - $2)) backing_writes=$(($7 - $3)) backing_sectors_written=$(($8 - $4))
  set -- $c0 $(bcstat dm-0); counter cachedev_reads=$(($5 - $1)) cachedev_sectors_read=$(($6 - $2)) cachedev_writes=$(($7 - $3)) cachedev_sectors_written=$(($8 - $4))
  if [ -n "$IDLE" ]; then
    # No bio for IDLE more seconds: background writeback goes on (at the maximum rate after
    # about 30 s idle); then dirty data and the backing device's writes again.
    sleep "$IDLE"
    counter idle_dirty_data=$(cat $S/dirty_data) idle_writeback_rate=$(cat $S/writeback_rate) \
      idle_counters_after_s=$(awk -v e=$t_end '{printf "%.2f", $1 - e}' /proc/uptime)
    set -- $b0 $(bcstat vde); counter idle_backing_writes=$(($7 - $3)) idle_backing_sectors_written=$(($8 - $4))
  fi
  end "$n"
  echo 1 > $S/stop
  echo 1 > /sys/fs/bcache/$cset/stop
  i=0; while { [ -e /sys/block/bcache0 ] || [ -e /sys/fs/bcache/$cset ]; } && [ $i -lt 20 ]; do sleep 1; i=$((i+1)); done
  sleep 1
  dmsetup remove cdata || { sleep 2; dmsetup remove cdata; }
  unset J2 P2 RT IDLE BK
}
M=4194304
bc bc-wb-128m-z099-rw60        writeback    $M 128 --rw=randrw --rwmixread=60 --bs=4k --random_distribution=zipf:0.99 --iodepth=8
bc bc-wt-128m-z099-rw60        writethrough $M 128 --rw=randrw --rwmixread=60 --bs=4k --random_distribution=zipf:0.99 --iodepth=8
bc bc-wa-128m-z12-rw70         writearound  $M 128 --rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=8
bc bc-wb-64m-z12-rw70-co0      writeback    0   64 --rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=8
bc bc-wt-64m-uniform128m-r4k   writethrough $M  64 --rw=randread --bs=4k --size=128m --iodepth=8
bc bc-wb-128m-seqread96m-co0   writeback    0  128 --rw=read --bs=64k --size=96m --iodepth=4
bc bc-wb-128m-seqread96m       writeback    $M 128 --rw=read --bs=64k --size=96m --iodepth=4
RT=8 P2="--rw=randread --bs=4k --size=96m --iodepth=8" \
bc bc-wt-128m-seqwrite96m-read writethrough $M 128 --rw=write --bs=64k --size=96m --iodepth=4
RT=8 P2="--rw=randread --bs=4k --size=96m --iodepth=8" \
bc bc-wt-128m-seqwrite96m-read-co0 writethrough 0 128 --rw=write --bs=64k --size=96m --iodepth=4
J2="--rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=8 --offset=256m --size=768m" \
bc bc-wa-64m-mix               writearound  $M  64 --rw=read --bs=64k --size=64m --iodepth=4
J2="--rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=8 --offset=256m --size=768m" \
bc bc-wb-64m-mix-co0           writeback    0   64 --rw=read --bs=64k --size=64m --iodepth=4
J2="--rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=8 --offset=256m --size=768m" \
bc bc-wb-128m-mix              writeback    $M 128 --rw=rw --rwmixread=50 --bs=64k --size=64m --iodepth=4
# Background writeback (added with the writeback model): more dirty data than writeback_percent
# of the cache, 30 s of writes, then 45 s without a bio.
RT=30 IDLE=45 \
bc bc-wb-64m-randwrite192m-idle writeback $M  64 --rw=randwrite --bs=4k --size=192m --iodepth=8
RT=30 IDLE=45 \
bc bc-wb-128m-z12-rw30-idle    writeback    $M 128 --rw=randrw --rwmixread=30 --bs=4k --random_distribution=zipf:1.2 --iodepth=8
RT=20 IDLE=45 \
bc bc-wb-64m-seqwrite-co0-idle writeback    0   64 --rw=write --bs=64k --size=256m --iodepth=4
# Run B2, added last and only checked (run with ALLOCTRACE=1, so bcache0's request ends give
# the completions; nothing was tuned on it): 8 KiB and 16 KiB requests, a read-heavy
# write-around mix, a 1 MiB sequential cutoff under a mix of streams and random I/O, a deep
# queue and mixed request sizes.
bc bc-wb-128m-z11-rw50-8k       writeback    $M 128 --rw=randrw --rwmixread=50 --bs=8k --random_distribution=zipf:1.1 --iodepth=8
bc bc-wt-64m-hotset-r16k        writethrough $M  64 --rw=randread --bs=16k --random_distribution=zoned:85/8:15/92 --iodepth=8
bc bc-wa-128m-z099-rw80         writearound  $M 128 --rw=randrw --rwmixread=80 --bs=4k --random_distribution=zipf:0.99 --iodepth=8
J2="--rw=randrw --rwmixread=60 --bs=4k --random_distribution=zipf:1.1 --iodepth=8 --offset=256m --size=768m" \
bc bc-wb-128m-cut1m-mix         writeback  1048576 128 --rw=read --bs=128k --size=192m --iodepth=2
bc bc-wb-64m-z12-rw70-qd32      writeback    $M  64 --rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=32
bc bc-wt-128m-z11-bssplit       writethrough $M 128 --rw=randrw --rwmixread=65 --bssplit=4k/50:16k/30:64k/20 --random_distribution=zipf:1.1 --iodepth=8
# Run B3 (ALLOCTRACE=1, checked only): bcache's default 512 KiB buckets, which need a cache of
# more than 256 MiB (513 buckets), here 384 and 512 MiB of null_blk over the 1 GiB backing disk.
BK=512 bc bc-wb-512m-b512k-z099-rw60 writeback    $M 512 --rw=randrw --rwmixread=60 --bs=4k --random_distribution=zipf:0.99 --iodepth=8
BK=512 bc bc-wt-512m-b512k-uniform-r4k writethrough $M 512 --rw=randread --bs=4k --iodepth=8
BK=512 bc bc-wa-384m-b512k-z12-rw70 writearound  $M 384 --rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=8
# Replays of the bundled real trace (tests/data/sample: PostgreSQL pgbench on a 4 GiB loop
# device), its first 60,000 reads and writes in order and as fast as they go (its flushes left
# out), made with `blocksight export --to fio` (validation/README.md, run R):
#   REPLAY=/tmp/pgbench-60k.iolog DISKS=3G,3G,3G,3G,5G validation/run.sh SUITE OUT
# (GUEST_ENV='REPLAY_TAG=-fsync' files them as NAME-fsync: run R2, the same log with its flushes.)
if [ -s /tmp/replay.log ]; then
bc bc-wb-128m-pgbench60k$REPLAY_TAG        writeback    $M 128 --read_iolog=/tmp/replay.log --iodepth=8
bc bc-wt-64m-pgbench60k$REPLAY_TAG         writethrough $M  64 --read_iolog=/tmp/replay.log --iodepth=8
BK=512 bc bc-wb-512m-b512k-pgbench60k$REPLAY_TAG writeback $M 512 --read_iolog=/tmp/replay.log --iodepth=8
fi
cat /tmp/out.txt > "$OUT_DISK"; sync
