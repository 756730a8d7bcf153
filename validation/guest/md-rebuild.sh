#!/bin/sh
# md recovery onto a spare with no other load: which members md reads and how much, what it
# writes (RAID 1, RAID 10 n2, RAID 5, RAID 6 with one and two failed members). Each array is
# created clean without a bitmap, members are failed and removed, spares added, and every
# disk's /sys/block/*/stat is printed before and after `mdadm --wait`. brd devices (ram0, ram1)
# keep no statistics: they serve as members and spares whose counts are not compared.
# Standalone: `lab.sh run validation/guest/md-rebuild.sh OUT`; the console's `### ` and
# `mdadm:` lines are tests/data/lab-rebuild/console.txt, which tests/tests/lab.rs compares.
# Disks: vda..vdd 256 MiB, vde 1 GiB (lab.sh's default).
stat_all() { for d in vda vdb vdc vdd vde ram0 ram1; do echo "### STAT-$1 $2 $d $(cat /sys/block/$d/stat)"; done; }
run() { # name level layout members-to-fail spare devices...
  name=$1 level=$2 layout=$3 fail=$4 spare=$5; shift 5
  n=$#; devs=""; for d in "$@"; do devs="$devs /dev/$d"; done
  copt="--chunk=64"; [ "$level" = 1 ] && copt=""
  mdadm --create /dev/md0 --level=$level $layout --raid-devices=$n $copt --assume-clean --run \
    --metadata=1.2 --bitmap=none $devs > /tmp/mdadm.txt 2>&1 || { echo "### MDADM FAILED $name"; cat /tmp/mdadm.txt; }
  echo "### RUN $name level=$level layout=$layout members=$* fail=$fail spare=$spare"
  echo "### $name component_size_kib $(cat /sys/block/md0/md/component_size) data_offset $(cat /sys/block/md0/md/dev-vda/offset 2>/dev/null)"
  for f in $fail; do mdadm /dev/md0 --fail /dev/$f; mdadm /dev/md0 --remove /dev/$f; done
  sleep 1
  stat_all BEFORE $name
  for s in $spare; do mdadm /dev/md0 --add /dev/$s; done
  sleep 2
  mdadm --wait /dev/md0
  sleep 1
  stat_all AFTER $name
  echo "### $name mdstat $(cat /proc/mdstat | tr '\n' ' ')"
  mdadm --stop /dev/md0 > /dev/null 2>&1
  for d in "$@" $spare; do mdadm --zero-superblock /dev/$d > /dev/null 2>&1; done
}
run raid1-2 1 "" vdb ram0 vda vdb
run raid10n2-4 10 "--layout=n2" vdc ram0 vda vdb vdc vdd
run raid5-4 5 "" vdb ram0 vda vdb vdc vdd
run raid6-5-one 6 "" vdc ram0 vda vdb vdc vdd ram1
run raid6-5-two 6 "" "vdb vdd" "ram0 vde" vda vdb vdc vdd ram1
