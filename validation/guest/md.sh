#!/bin/sh
# md RAID validation workloads over vda..vdd (256 MiB each): a fresh array per workload
# (--assume-clean: no resync), the bios md0 was asked to serve and the bios md sent to each
# member (block_bio_queue), and each member's /sys/block/*/stat before and after.
# (validation/run.sh prepends common.sh: lab.sh copies one script into the guest.)
set -- $(majmin vda); VMAJ=$1
# mdw NAME LEVEL NDISKS CHUNK_KIB STRIPE_CACHE fio-args...; LEVEL 10 is md's default near-2
# layout, 10f2 / 10o2 / 10n3 (and so on) RAID 10 with that --layout. ONLY=name,name runs just
# those workloads.
mdw() {
  n=$1 level=$2 nd=$3 chunk=$4 sc=$5; shift 5
  if [ -n "$ONLY" ]; then case ",$ONLY," in *",$n,"*) ;; *) return 0;; esac; fi
  r10=""; case $level in 10?*) r10=${level#10}; level=10;; 10) r10=n2;; esac
  disks=""; for d in vda vdb vdc vdd vde vdf vdg vdh; do [ $(echo $disks | wc -w) -lt $nd ] && disks="$disks /dev/$d"; done
  for d in $disks; do dd if=/dev/zero of=$d bs=1M count=4 2>/dev/null; done
  layout=""; [ "$level" = 10 ] && layout="--layout=$r10"; copt="--chunk=$chunk"; [ "$level" = 1 ] && copt=""
  mdadm --create /dev/md0 --level=$level --raid-devices=$nd $copt $layout --assume-clean --run \
    --metadata=1.2 $disks > /dev/null 2>&1 || echo "### MDADM FAILED $n"
  [ -e /sys/block/md0/md/stripe_cache_size ] && echo $sc > /sys/block/md0/md/stripe_cache_size
  set -- $(majmin md0) "$@"; maj=$1 min=$2; shift 2
  off=$(cat /sys/block/vda/md/dev-vda/offset 2>/dev/null || cat /sys/block/md0/md/dev-vda/offset)
  begin "$n" product=md level=$level ${r10:+raid10_layout=$r10 }disks=$nd chunk_bytes=$((chunk * 1024)) stripe_cache=$(cat /sys/block/md0/md/stripe_cache_size 2>/dev/null || echo 0) group_thread_cnt=$(cat /sys/block/md0/md/group_thread_cnt 2>/dev/null || echo 0) data_offset_sectors=$off md_bytes=$(( $(blockdev --getsz /dev/md0) * 512 )) dev=$maj,$min members="$disks" fio="$*"
  for d in $disks; do counter before $(basename $d) $(cat /sys/block/$(basename $d)/stat); done
  trace_on "dev == $(devt $maj $min) || (dev >= $(devt $VMAJ 0) && dev < $(devt $VMAJ 128))"
  fiorun "$n" /dev/md0 ${RT:-8} "$@"
  sync; sleep 1
  trace_off "$n"
  for d in $disks; do counter after $(basename $d) $(cat /sys/block/$(basename $d)/stat); done
  # RAID 5/6: the stripe heads md holds now (its slab's objects; stripe_cache_size is the least
  # it keeps, and it grows the cache when a head is wanted and none is free).
  sh=$(awk '$1 == "raid5-md0" {print $2 "/" $3}' /proc/slabinfo 2>/dev/null)
  [ -n "$sh" ] && counter stripe_heads_active_total=$sh
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
# Added after the model's RAID 10 layouts and first run only to check it (nothing was tuned on
# them): RAID 10 far, offset, three copies and an odd number of members, a three-way RAID 1,
# RAID 0, RAID 6 and RAID 5 mixes, partial-stripe and unaligned writes, large reads.
mdw md10f2-c64-randrw50-8k    10f2 4  64    0 --rw=randrw --rwmixread=50 --bs=8k --iodepth=8
mdw md10o2-c64-randrw70-16k   10o2 4  64    0 --rw=randrw --rwmixread=70 --bs=16k --iodepth=8
mdw md10f2-c64-seqrw-256k     10f2 4  64    0 --rw=rw --rwmixread=60 --bs=256k --iodepth=4
mdw md10n2-3d-c64-randrw60-4k 10n2 3  64    0 --rw=randrw --rwmixread=60 --bs=4k --iodepth=8
mdw md10n3-c32-randrw50-12k   10n3 4  32    0 --rw=randrw --rwmixread=50 --bs=12k --iodepth=8
mdw md10f3-3d-c64-randwrite8k 10f3 3  64    0 --rw=randwrite --bs=8k --iodepth=8
mdw md1-3d-randrw50-8k         1 3  64    0 --rw=randrw --rwmixread=50 --bs=8k --iodepth=8
mdw md0-3d-c32-randrw50-12k    0 3  32    0 --rw=randrw --rwmixread=50 --bs=12k --iodepth=8
mdw md6-c64-randrw60-16k-z099  6 4  64  256 --rw=randrw --rwmixread=60 --bs=16k --random_distribution=zipf:0.99 --iodepth=8
mdw md5-c128-randwrite64k      5 4 128  256 --rw=randwrite --bs=64k --iodepth=8
mdw md5-c64-seqwrite96k        5 4  64  256 --rw=write --bs=96k --iodepth=4
mdw md5-c64-randrw50-6k-sc512  5 4  64  512 --rw=randrw --rwmixread=50 --bs=6k --blockalign=2k --iodepth=16
mdw md5-c64-randread64k-3d     5 3  64  256 --rw=randread --bs=64k --blockalign=4k --iodepth=8
# Six members (run with DISKS=256M,256M,256M,256M,256M,256M; checked only): RAID 5 and 6 with
# five and four data disks, where a small write's read-modify-write needs fewer reads than a
# reconstruct-write, and a RAID 10 near-2 over six.
# (Guarded: in the default disk set vde is the 1 GiB disk and vdf the dump's out disk.)
if [ -b /dev/vdf ] && [ "$(blockdev --getsize64 /dev/vde)" -lt 1073741824 ] \
   && [ "$(blockdev --getsize64 /dev/vdf)" -lt 1073741824 ]; then
mdw md5-6d-c64-randwrite4k      5 6  64  256 --rw=randwrite --bs=4k --iodepth=8
mdw md5-6d-c128-randrw60-16k    5 6 128  256 --rw=randrw --rwmixread=60 --bs=16k --random_distribution=zipf:0.99 --iodepth=8
mdw md6-6d-c64-randwrite8k      6 6  64  256 --rw=randwrite --bs=8k --iodepth=8
mdw md6-6d-c64-seqwrite512k     6 6  64  512 --rw=write --bs=512k --iodepth=4
mdw md10-6d-c64-randrw50-4k    10 6  64    0 --rw=randrw --rwmixread=50 --bs=4k --iodepth=8
fi
# Five and eight members (run M4 with DISKS=256M x 8, ONLY=these; checked only, made after the
# model learned md's write without reads): small rewrites under zipf skews, where a page's old
# data and parity are often still cached, over RAID 5 and 6 of five and eight members, chunks
# 32-256 KiB, a smaller stripe cache. (Guarded: vdh must be a member-sized disk.)
if [ -b /dev/vdh ] && [ "$(blockdev --getsize64 /dev/vdh)" -lt 1073741824 ]; then
mdw md5-8d-c64-randwrite4k-z12        5 8  64  256 --rw=randwrite --bs=4k --random_distribution=zipf:1.2 --iodepth=8
mdw md5-8d-c256-randrw70-8k-z099      5 8 256  256 --rw=randrw --rwmixread=70 --bs=8k --random_distribution=zipf:0.99 --iodepth=8
mdw md6-8d-c64-randrw50-4k-z11        6 8  64  256 --rw=randrw --rwmixread=50 --bs=4k --random_distribution=zipf:1.1 --iodepth=8
mdw md5-8d-c64-randwrite16k-sc128-z099 5 8 64  128 --rw=randwrite --bs=16k --random_distribution=zipf:0.99 --iodepth=16
mdw md5-5d-c32-randrw40-12k-z12       5 5  32  256 --rw=randrw --rwmixread=40 --bs=12k --random_distribution=zipf:1.2 --iodepth=8
mdw md6-5d-c64-randwrite8k-z099       6 5  64  256 --rw=randwrite --bs=8k --random_distribution=zipf:0.99 --iodepth=8
fi
# Replays of the bundled real trace (tests/data/sample: PostgreSQL pgbench on a 4 GiB loop
# device), its first 60,000 reads and writes in order and as fast as they go (its flushes left
# out), made with `blocksight export --to fio` (validation/README.md, run R):
#   REPLAY=/tmp/pgbench-60k.iolog DISKS=3G,3G,3G,3G,5G validation/run.sh SUITE OUT
# (GUEST_ENV='REPLAY_TAG=-fsync' files them as NAME-fsync: run R2, the same log with its flushes.)
if [ -s /tmp/replay.log ]; then
mdw md5-c64-pgbench60k$REPLAY_TAG          5 4  64  256 --read_iolog=/tmp/replay.log --iodepth=8
mdw md6-c128-pgbench60k$REPLAY_TAG         6 4 128  256 --read_iolog=/tmp/replay.log --iodepth=8
mdw md10-c64-pgbench60k$REPLAY_TAG        10 4  64    0 --read_iolog=/tmp/replay.log --iodepth=8
# Eight members (run R3: DISKS=1G x 8), where a small write takes read-modify-write.
if [ -b /dev/vdh ]; then
mdw md5-8d-c64-pgbench60k$REPLAY_TAG      5 8  64  256 --read_iolog=/tmp/replay.log --iodepth=8
mdw md6-8d-c256-pgbench60k$REPLAY_TAG     6 8 256  256 --read_iolog=/tmp/replay.log --iodepth=8
fi
fi
cat /tmp/out.txt > "$OUT_DISK"; sync
