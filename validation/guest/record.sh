#!/bin/sh
# `blocksight record` on bio-based devices of a real kernel: dm-cache (which splits bios at its
# cache blocks), md RAID 5 (at its chunks) and bcache. The recorder (its own tracefs instance,
# binary ring buffer) runs beside the suite's text trace of the same bios (the global instance,
# block_bio_queue and block_bio_complete); the host compares the two (validation/README.md,
# `record`). The blocksight binary travels at the end of this script (validation/run.sh with
# BLOCKSIGHT_BIN=...). Each workload's recording is written to the out disk as CSV
# (`blocksight export --to csv`) between `# RECORDED <name>` and `# END RECORDED <name>`.
# (validation/run.sh prepends common.sh: lab.sh copies one script into the guest.)
B=/tmp/blocksight
sed '1,/^__BINARY__$/d' /guest.sh | base64 -d | gunzip > $B && chmod +x $B
$B --version || { echo "### NO BLOCKSIGHT BINARY"; }
# rec NAME DEVICE SECONDS fio-args...: records DEVICE with blocksight and the text trace while
# one fio job runs, then files both.
rec() {
  n=$1 dev=$2 rt=$3; shift 3
  # Without udev, /dev/mapper names are device nodes, not links to dm-N: take the node's numbers.
  set -- $(stat -L -c '%t %T' $dev) "$@"
  maj=$((0x$1)) min=$((0x$2)); shift 2
  begin "$n" dev=$maj,$min device=$dev fio="$*"
  EVENTS="block_bio_queue block_bio_complete" trace_on "dev == $(devt $maj $min)"
  # bcache0's bios get no block_bio_complete: bcache's request end stands for it (BCACHE=1).
  E=$T/events/bcache/bcache_request_end
  if [ -n "$BCACHE" ]; then
    echo "orig_major == $maj && orig_minor == $min" > $E/filter; echo 1 > $E/enable
  fi
  $B record -d $dev -o /tmp/$n.bst > /tmp/rec.$n.txt 2>&1 &
  pid=$!
  sleep 2
  fiorun "$n" $dev $rt "$@"
  sleep 1
  kill -INT $pid; wait $pid; echo "### record exit $? $n"; tail -5 /tmp/rec.$n.txt
  EVENTS="block_bio_queue block_bio_complete" trace_off "$n"
  [ -n "$BCACHE" ] && { echo 0 > $E/enable; echo 0 > $E/filter; }
  end "$n"
  { echo "# RECORDED $n"; $B export /tmp/$n.bst --to csv -o -; echo "# END RECORDED $n"; } >> /tmp/out.txt
  rm -f /tmp/$n.bst
}
OSZ=$(blockdev --getsz /dev/vde)
# dm-cache, 32 KiB blocks, write-through: 64 KiB reads at 16 KiB alignment (half of them cross a
# block), then a 4 KiB random mix.
dd if=/dev/zero of=/dev/nullb0 bs=1M count=16 2>/dev/null
dmsetup create cmeta --table "0 32768 linear /dev/nullb0 0"
dmsetup create cdata --table "0 131072 linear /dev/nullb0 32768"
dmsetup create cached --table "0 $OSZ cache /dev/mapper/cmeta /dev/mapper/cdata /dev/vde 64 1 writethrough smq 0"
rec rec-dmc-wt32k-read64k-a16k /dev/mapper/cached 4 --rw=randread --bs=64k --blockalign=16k --iodepth=4 --size=256m
# (Uniform: under a steep skew two bios to one sector are often in flight at once, and which
# completion is whose is ambiguous; the recorder and the text import resolve it differently.)
rec rec-dmc-wt32k-randrw-4k /dev/mapper/cached 4 --rw=randrw --rwmixread=70 --bs=4k --iodepth=8 --size=256m
dmsetup remove cached; dmsetup remove cdata cmeta
# md RAID 5 over four disks, 64 KiB chunks: 96 KiB writes (each crosses a chunk).
mdadm --create /dev/md0 --level=5 --raid-devices=4 --chunk=64 --assume-clean --run /dev/vda /dev/vdb /dev/vdc /dev/vdd > /tmp/mdadm.txt 2>&1 || cat /tmp/mdadm.txt
rec rec-md5-c64-write96k /dev/md0 4 --rw=write --bs=96k --iodepth=4 --size=96m
mdadm --stop /dev/md0 > /dev/null 2>&1
# bcache, write-back, 64 KiB buckets: a 4 KiB random mix (bcache0's bios have no
# block_bio_complete: they end remapped to the backing device).
dmsetup create cdata --table "0 262144 linear /dev/nullb0 32768"
make-bcache --wipe-bcache --bucket 64k --block 512 -B /dev/vde -C /dev/mapper/cdata > /tmp/mk.txt 2>&1 || cat /tmp/mk.txt
echo /dev/mapper/cdata > /sys/fs/bcache/register
echo /dev/vde > /sys/fs/bcache/register
i=0; while [ ! -e /sys/block/bcache0/bcache/cache ] && [ $i -lt 10 ]; do sleep 1; i=$((i+1)); done
echo writeback > /sys/block/bcache0/bcache/cache_mode
echo "### bcache_request_end format"; cat /sys/kernel/tracing/events/bcache/bcache_request_end/format
BCACHE=1 rec rec-bc-wb-randrw-4k /dev/bcache0 4 --rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:1.2 --iodepth=8 --size=256m
cat /tmp/out.txt > "$OUT_DISK"; sync
exit 0
