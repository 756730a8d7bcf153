#!/usr/bin/env bash
# Scale runs of the miss-ratio-curve engines (too long for criterion), with peak RSS:
#   exact LRU MRC over 100M requests (target <= 15 s), SHARDS R=0.001 over 1B requests
#   (target <= 30 s, bounded memory), and the generator alone for reference. The exact run is
#   done for a 1M-item universe (footprint ~3.4M lines) and the default 8M (~17M lines).
# Usage: scripts/bench-mrc.sh [REPEATS]   (default 3; prints each run's time and peak RSS)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
cargo build --release -q -p analyzer-core --example mrc_scale
bin="${CARGO_TARGET_DIR:-target}/release/examples/mrc_scale"
run() {
  for _ in $(seq "$repeats"); do
    /usr/bin/time -v "$bin" "$@" 2> >(grep -E "Maximum resident|Elapsed" | sed 's/^\s*/    /' >&2)
  done
}
run gen 100000000
run exact 100000000 1048576
run exact 100000000
run gen 1000000000
run shards-rate:0.001 1000000000
run shards-size:65536 1000000000
