#!/usr/bin/env bash
# The fleet measurements of docs/python.md: on a synthetic trace of 10 M+ requests
# (analyzer-core's make_trace example: OLTP-shaped, Zipf 0.9 over 64 Mi blocks, 15% sequential
# streams), (1) the hash-sliced simulation's error against the exact run for k = 2, 4, 8, 16
# slices, and (2) the Dask fleet job's throughput on 1 and 2 worker processes, over the trace
# spread across 24 volumes. Needs the venv of scripts/setup.sh with the wheel installed
# (scripts/test-python.sh installs it).
#
#   scripts/bench-fleet.sh [MEGABYTES]     (default 90: about 11 M requests)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"
# shellcheck source=env.sh
. "$here/env.sh"
mb=${1:-90}
target=${CARGO_TARGET_DIR:-$root/target}
out="$target/bench-fleet"
mkdir -p "$out"
cargo build --release --quiet -p collector
[ -f "$out/big-$mb.bst" ] || cargo run --release --quiet -p analyzer-core --example make_trace -- "$out/big-$mb.bst" "$mb"
uptime
BLOCKSIGHT_BIN="$target/release/blocksight" nice "$BLOCKSIGHT_VENV/bin/python" "$here/bench_fleet.py" "$out/big-$mb.bst" "$out"
