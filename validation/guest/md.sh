#!/bin/sh
# md RAID validation workloads over vda..vdd (256 MiB each): a fresh array per workload
# (--assume-clean: no resync), the bios md0 was asked to serve and the bios md sent to each
# member (block_bio_queue), and each member's /sys/block/*/stat before and after.
# (validation/run.sh prepends common.sh: lab.sh copies one script into the guest.)
set -- $(majmin vda); VMAJ=$1
# mdw NAME LEVEL NDISKS CHUNK_KIB STRIPE_CACHE fio-args...
mdw() {
  n=$1 level=$2 nd=$3 chunk=$4 sc=$5; shift 5
  disks=""; for d in vda vdb vdc vdd; do [ $(echo $disks | wc -w) -lt $nd ] && disks="$disks /dev/$d"; done
  for d in $disks; do dd if=/dev/zero of=$d bs=1M count=4 2>/dev/null; done
  layout=""; [ "$level" = 10 ] && layout="--layout=n2"; copt="--chunk=$chunk"; [ "$level" = 1 ] && copt=""
  mdadm --create /dev/md0 --level=$level --raid-devices=$nd $copt $layout --assume-clean --run \
    --metadata=1.2 $disks > /dev/null 2>&1 || echo "### MDADM FAILED $n"
  [ -e /sys/block/md0/md/stripe_cache_size ] && echo $sc > /sys/block/md0/md/stripe_cache_size
  set -- $(majmin md0) "$@"; maj=$1 min=$2; shift 2
  off=$(cat /sys/block/vda/md/dev-vda/offset 2>/dev/null || cat /sys/block/md0/md/dev-vda/offset)
  begin "$n" product=md level=$level disks=$nd chunk_bytes=$((chunk * 1024)) stripe_cache=$(cat /sys/block/md0/md/stripe_cache_size 2>/dev/null || echo 0) group_thread_cnt=$(cat /sys/block/md0/md/group_thread_cnt 2>/dev/null || echo 0) data_offset_sectors=$off md_bytes=$(( $(blockdev --getsz /dev/md0) * 512 )) dev=$maj,$min members="$disks" fio="$*"
  for d in $disks; do counter before $(basename $d) $(cat /sys/block/$(basename $d)/stat); done
  trace_on "dev == $(devt $maj $min) || (dev >= $(devt $VMAJ 0) && dev < $(devt $VMAJ 64))"
  fiorun "$n" /dev/md0 ${RT:-10} "$@"
  sync; sleep 1
  trace_off "$n"
  for d in $disks; do counter after $(basename $d) $(cat /sys/block/$(basename $d)/stat); done
  end "$n"
  mdadm --stop /dev/md0 > /dev/null 2>&1
  for d in $disks; do mdadm --zero-superblock $d > /dev/null 2>&1; done
}
mdw md5-c64-randwrite4k         5 4  64  256 --rw=randwrite --bs=4k --iodepth=4
mdw md5-c64-randrw70-z099       5 4  64  256 --rw=randrw --rwmixread=70 --bs=4k --random_distribution=zipf:0.99 --iodepth=8
mdw md5-c512-seqwrite1m         5 4 512  256 --rw=write --bs=1m --iodepth=4
mdw md5-c64-randwrite16k-sc4096 5 4  64 4096 --rw=randwrite --bs=16k --iodepth=8
mdw md5-c64-randwrite4k-z12     5 4  64  256 --rw=randwrite --bs=4k --random_distribution=zipf:1.2 --iodepth=8
mdw md5-c32-3d-randrw50-8k      5 3  32  256 --rw=randrw --rwmixread=50 --bs=8k --iodepth=8
mdw md6-c64-randwrite4k         6 4  64  256 --rw=randwrite --bs=4k --iodepth=4
mdw md6-c128-seqwrite256k       6 4 128  256 --rw=write --bs=256k --iodepth=4
mdw md10-c64-randrw50-8k       10 4  64    0 --rw=randrw --rwmixread=50 --bs=8k --iodepth=8
mdw md1-2d-randrw70-4k          1 2  64    0 --rw=randrw --rwmixread=70 --bs=4k --iodepth=8
cat /tmp/out.txt > "$OUT_DISK"; sync
