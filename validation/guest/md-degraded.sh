#!/bin/sh
# Degraded md RAID 5 (4 × 256 MiB, 64 KiB chunk, no bitmap, member vdb failed and removed):
# md0's bios and each member's stat before/after, for the model's degraded member I/O.
T=/sys/kernel/tracing
st() { for d in vda vdb vdc vdd; do echo "### STAT-$1 $2 $d $(cat /sys/block/$d/stat)"; done; }
mdadm --create /dev/md0 --level=5 --raid-devices=4 --chunk=64 --assume-clean --run --metadata=1.2 \
  --bitmap=none /dev/vda /dev/vdb /dev/vdc /dev/vdd > /tmp/mdadm.txt 2>&1 || cat /tmp/mdadm.txt
mdadm /dev/md0 --fail /dev/vdb; mdadm /dev/md0 --remove /dev/vdb
sleep 1
for job in "randwrite4k-z12 --rw=randwrite --bs=4k --random_distribution=zipf:1.2 --iodepth=4" \
           "randrw70-4k --rw=randrw --rwmixread=70 --bs=4k --iodepth=4" \
           "randread16k --rw=randread --bs=16k --iodepth=4" \
           "seqwrite96k --rw=write --bs=96k --iodepth=2"; do
  set -- $job; name=$1; shift
  echo 0 > $T/tracing_on; echo > $T/trace; echo 65536 > $T/buffer_size_kb
  echo 1 > $T/events/block/block_bio_queue/enable; echo 1 > $T/tracing_on
  st BEFORE $name
  fio --name=$name --filename=/dev/md0 --runtime=8 --time_based --direct=1 --ioengine=libaio \
    --randrepeat=1 --size=700M "$@" > /dev/null 2>&1
  sync; sleep 1
  echo 0 > $T/tracing_on
  st AFTER $name
  echo "### overruns $name: $(cat $T/per_cpu/cpu*/stats | grep -E '^overrun' | tr '\n' ' ')"
  { echo "# PHASE $name"; for b in md0; do echo "# DEV $(cat /sys/block/$b/dev | tr : ,) $b"; done
    grep ' 9,0 ' $T/trace; } >> /tmp/out.txt
done
mdadm --stop /dev/md0
cat /tmp/out.txt > "$OUT_DISK"; sync
