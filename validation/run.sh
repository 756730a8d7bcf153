#!/usr/bin/env bash
# Runs one validation guest script in the real-kernel lab and files its workloads.
#   validation/run.sh dmcache|md|bcache|record [OUT_DIR]
# Needs /work/shared/lab (LAB_SH overrides) set up once with `lab.sh setup` (as root).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
suite=${1:?usage: validation/run.sh dmcache|md|bcache [OUT_DIR]}
out=${2:-$here/out/$suite}
lab=${LAB_SH:-/work/shared/lab/lab.sh}
guest=$(mktemp /tmp/blocksight-guest.XXXXXX.sh)
trap 'rm -f "$guest"' EXIT
# GUEST_ENV (for example 'FIXED=1 MIGTRACE=1') is set in the guest before the suite runs.
# REPLAY=FILE (an fio iolog, `blocksight export --to fio`) travels at the end of the script
# (gzipped, base64) and is unpacked in the guest to /tmp/replay.log, which the suites' replay
# workloads read with `fio --read_iolog`.
{ echo '#!/bin/sh'; [ -z "${GUEST_ENV:-}" ] || echo "export ${GUEST_ENV}"
  cat "$here/guest/common.sh" "$here/guest/$suite.sh"
  if [ -n "${REPLAY:-}" ]; then echo 'exit 0'; echo '__PAYLOAD__'; gzip -9c "$REPLAY" | base64; fi
  # BLOCKSIGHT_BIN=FILE (the record suite): the blocksight binary, without its debug info.
  if [ -n "${BLOCKSIGHT_BIN:-}" ]; then
    echo 'exit 0'; echo '__BINARY__'
    objcopy --strip-debug "$BLOCKSIGHT_BIN" "$guest.bin" && gzip -6c "$guest.bin" | base64
    rm -f "$guest.bin"
  fi
} > "$guest"
# DISKS overrides the guest's disks (md workloads of more than four members need more).
disks=${DISKS:-256M,256M,256M,256M,1G}
nice -n 19 "$lab" run "$guest" "$out" "$disks"
grep -E '^### (overruns|COUNTER|MODPROBE)' "$out/console.log" || true
