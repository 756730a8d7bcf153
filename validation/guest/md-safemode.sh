#!/bin/sh
# md safe mode (tests/data/lab-safemode): the superblock writes md makes when an array turns
# clean after its writes pause and dirty before the next write. Bursts of writes separated by
# pauses longer than safe_mode_delay's 200-400 ms, and a control with short pauses; no
# bitmap, except the smb- jobs (an internal bitmap of 1 MiB chunks, whose first page md writes
# before the superblock at each mark). md0's bios are traced with their completions (block_bio_complete), so that a replay
# knows when the writes ended.
T=/sys/kernel/tracing
up() { cut -d' ' -f1 /proc/uptime; }
trace_on() { echo 0 > $T/tracing_on; echo > $T/trace; echo 131072 > $T/buffer_size_kb
  for e in block_bio_queue block_bio_complete block_rq_complete; do echo 1 > $T/events/block/$e/enable; done
  echo 1 > $T/tracing_on; }
trace_off() {
  echo 0 > $T/tracing_on
  echo "### overruns $1: $(cat $T/per_cpu/cpu*/stats | grep -E '^overrun' | tr '\n' ' ')"
  { echo "# PHASE $1"; for b in /sys/block/*; do echo "# DEV $(cat $b/dev | tr : ,) $(basename $b)"; done
    cat $T/trace; } >> /tmp/out.txt; }
run() { # name level ndev bitmap fio-args...
  n=$1 lvl=$2 nd=$3 bm=$4; shift 4
  devs=""; for d in vda vdb vdc vdd; do [ $nd -gt 0 ] && devs="$devs /dev/$d"; nd=$((nd-1)); done
  for d in $devs; do dd if=/dev/zero of=$d bs=1M count=4 2>/dev/null; done
  chunk="--chunk=64"; [ $lvl = 1 ] && chunk=""
  mdadm --create /dev/md0 --level=$lvl --raid-devices=$(echo $devs | wc -w) $chunk --assume-clean --run \
    --metadata=1.2 $bm $devs > /tmp/mdadm.txt 2>&1
  cat /tmp/mdadm.txt
  cat /sys/block/md0/md/safe_mode_delay /sys/block/md0/md/array_state
  sleep 3   # the array is clean before the job
  [ "$bm" = --bitmap=none ] || sleep 17   # the bits mdadm sets at creation are cleared first
  cat /sys/block/md0/md/array_state
  trace_on
  echo "### $n start $(up)"
  fio --name=$n --filename=/dev/md0 --direct=1 --ioengine=libaio --randrepeat=1 --randseed=42 \
      --group_reporting "$@" > /tmp/fio.txt 2>&1
  echo "### $n fio-end $(up)"
  sleep 3   # the clean mark after the last write
  echo "### $n end $(up)"
  cat /sys/block/md0/md/array_state
  trace_off $n
  grep -E "IOPS|issued" /tmp/fio.txt
  mdadm --stop /dev/md0
}
N=--bitmap=none B="--bitmap=internal --bitmap-chunk=1M"
run sm-r1-burst700 1 2 "$N" --rw=randwrite --bs=4k --iodepth=1 --thinktime=700000 --thinktime_blocks=20 --runtime=8 --time_based
run sm-r5-burst700 5 4 "$N" --rw=randwrite --bs=4k --iodepth=1 --thinktime=700000 --thinktime_blocks=20 --runtime=8 --time_based
run sm-r6-burst1s-qd4 6 4 "$N" --rw=randwrite --bs=8k --iodepth=4 --thinktime=1000000 --thinktime_blocks=40 --runtime=8 --time_based
run sm-r10-burst600-rw 10 4 "$N" --rw=randrw --rwmixread=50 --bs=8k --iodepth=2 --thinktime=600000 --thinktime_blocks=30 --runtime=8 --time_based
run sm-r5-burst100 5 4 "$N" --rw=randwrite --bs=4k --iodepth=1 --thinktime=100000 --thinktime_blocks=10 --runtime=8 --time_based
run smb-r1-burst700 1 2 "$B" --rw=randwrite --bs=4k --iodepth=1 --thinktime=700000 --thinktime_blocks=20 --runtime=8 --time_based
run smb-r5-burst700 5 4 "$B" --rw=randwrite --bs=4k --iodepth=1 --thinktime=700000 --thinktime_blocks=20 --runtime=8 --time_based
cat /tmp/out.txt > "$OUT_DISK"; sync
