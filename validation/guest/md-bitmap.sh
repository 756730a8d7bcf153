#!/bin/sh
# md write-intent bitmap (tests/data/lab-bitmap): bio counts on the members for sparse
# writes (every write far from the last unplug) and busier zipf streams, RAID 1, 5, 6 and 10,
# 1 MiB bitmap chunks.
T=/sys/kernel/tracing
up() { cut -d' ' -f1 /proc/uptime; }
trace_on() { echo 0 > $T/tracing_on; echo > $T/trace; echo 131072 > $T/buffer_size_kb
  for e in block_bio_queue block_rq_complete; do echo 1 > $T/events/block/$e/enable; done
  echo 1 > $T/tracing_on; }
trace_off() {
  echo 0 > $T/tracing_on
  echo "### overruns $1: $(cat $T/per_cpu/cpu*/stats | grep -E '^overrun' | tr '\n' ' ')"
  { echo "# PHASE $1"; for b in /sys/block/*; do echo "# DEV $(cat $b/dev | tr : ,) $(basename $b)"; done
    cat $T/trace; } >> /tmp/out.txt; }
run() { # name level ndev fio-args...
  n=$1 lvl=$2 nd=$3; shift 3
  devs=""; for d in vda vdb vdc vdd; do [ $nd -gt 0 ] && devs="$devs /dev/$d"; nd=$((nd-1)); done
  for d in $devs; do dd if=/dev/zero of=$d bs=1M count=4 2>/dev/null; done
  chunk="--chunk=64"; [ $lvl = 1 ] && chunk=""
  mdadm --create /dev/md0 --level=$lvl --raid-devices=$(echo $devs | wc -w) $chunk --assume-clean --run \
    --metadata=1.2 --bitmap=internal --bitmap-chunk=1M $devs > /tmp/mdadm.txt 2>&1
  cat /tmp/mdadm.txt
  mdadm -E /dev/vda | grep -Ei "offset|bitmap|Data Offset|Super Offset"
  mdadm -X /dev/vda | head -20
  cat /proc/mdstat
  sleep 20   # the bits mdadm sets at creation are cleared by the daemon's passes first
  trace_on
  echo "### $n start $(up)"
  fio --name=$n --filename=/dev/md0 --direct=1 --ioengine=libaio --randrepeat=1 --randseed=42 \
      --group_reporting "$@" > /tmp/fio.txt 2>&1
  echo "### $n fio-end $(up)"
  sleep 22
  echo "### $n end $(up)"
  trace_off $n
  grep -E "IOPS|issued" /tmp/fio.txt
  mdadm -X /dev/vda | grep -i "bitmap\|dirty"
  mdadm --stop /dev/md0
}
run bm-r5-sparse 5 4 --rw=randwrite --bs=4k --iodepth=1 --rate_iops=20 --runtime=12 --time_based
run bm-r5-z12-qd4 5 4 --rw=randwrite --bs=4k --iodepth=4 --random_distribution=zipf:1.2 --runtime=8 --time_based
run bm-r1-sparse 1 2 --rw=randwrite --bs=4k --iodepth=1 --rate_iops=20 --runtime=12 --time_based
run bm-r1-z12-qd4 1 2 --rw=randwrite --bs=4k --iodepth=4 --random_distribution=zipf:1.2 --runtime=8 --time_based
run bm-r10-z099-rw-qd4 10 4 --rw=randrw --rwmixread=50 --bs=8k --iodepth=4 --random_distribution=zipf:0.99 --runtime=8 --time_based
run bm-r6-sparse-16k 6 4 --rw=randwrite --bs=16k --iodepth=1 --rate_iops=25 --runtime=12 --time_based
cat /tmp/out.txt > "$OUT_DISK"; sync
