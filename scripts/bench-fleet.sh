#!/usr/bin/env bash
# The fleet measurements of docs/python.md: on a synthetic trace of 10 M+ requests
# (analyzer-core's make_trace example: OLTP-shaped, Zipf 0.9 over 64 Mi blocks, 15% sequential
# streams), (1) the hash-sliced simulation's error against the exact run for k = 1, 2, 4, 8, 16
# slices (analyzer-core's hash_slices example: the same slice jobs the Dask tasks run, all in one
# process over one decode), and (2) the Dask fleet job's throughput on 1 and 2 worker
# processes, over the trace spread across 24 volumes. The machine's load is printed beside
# each result (it may be shared). `-1` runs part (1) only (no Python venv needed). Needs the venv of scripts/setup.sh with the wheel installed
# (scripts/test-python.sh installs it).
#
#   scripts/bench-fleet.sh [-1] [MEGABYTES]     (default 130: about 10.5 M requests at 12.4 bytes each)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"
# shellcheck source=env.sh
. "$here/env.sh"
only_slices=0
if [ "${1:-}" = -1 ]; then only_slices=1; shift; fi
mb=${1:-130}
target=${CARGO_TARGET_DIR:-$root/target}
out="$target/bench-fleet"
mkdir -p "$out"
nice -n 10 cargo build --release --quiet -p collector
[ -f "$out/big-$mb.bst" ] || nice -n 10 cargo run --release --quiet -p analyzer-core --example make_trace -- "$out/big-$mb.bst" "$mb"
nice -n 10 cargo build --release --quiet -p analyzer-core --example hash_slices
echo "(1) hash slices against the exact run; $(uptime)"
nice -n 10 "$target/release/examples/hash_slices" "$out/big-$mb.bst" 10
echo "after (1): $(uptime)"
[ "$only_slices" = 1 ] && exit 0
echo "(2) the Dask fleet job; $(uptime)"
BLOCKSIGHT_BIN="$target/release/blocksight" nice -n 10 "$BLOCKSIGHT_VENV/bin/python" "$here/bench_fleet.py" "$out/big-$mb.bst" "$out"
