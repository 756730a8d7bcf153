#!/usr/bin/env bash
# The cache simulator beside libCacheSim on the same block stream: LRU, ARC, S3-FIFO and SIEVE at
# 1% and 10% of the footprint, on the real sample (tests/data/sample/pgbench.bst) and on a
# synthetic stream of at least 50M line accesses (mrc::synth, written as .bst). For each run it
# prints both simulators' line accesses per CPU second, the ratio, and both hit counts (which
# must be equal: the script fails otherwise).
#
# libCacheSim runs through its PyPI bindings (libcachesim 0.3.5, the version that made
# tests/data/cache's fixtures) in a venv, reading the stream from libCacheSim's oracleGeneral
# binary format (its fastest reader) with `process_trace` (C++ end to end). Blocksight runs the
# release `blocksight simulate` on the .bst, end to end (process start, decode, simulation,
# JSON); the cache size is passed in bytes so that no footprint pass is needed. CPU time is
# user + system (the machine is shared; wall time would measure the neighbours); a small trace's
# blocksight run is repeated (REPEAT, default enough runs for 3 M line accesses) and the time
# divided, since GNU time counts hundredths of a second.
#
# Usage: scripts/bench-cache.sh [SYNTH_LINE_ACCESSES]   (SKIP_SAMPLE=1 skips the real sample)
#   (default 50000000; 0 skips the synthetic
# stream). TRACES="FILE ..." also runs each trace file in any format blocksight reads (imported
# to .bst first; for example the ARC paper's P6, `arc/P6.lis.zst` of github.com/moka-rs/cache-trace,
# about 1.6 M line accesses of 4 KiB). Work files go to ${BENCH_DIR:-/tmp/blocksight-bench-cache}; the venv to
# ${LCS_VENV:-/tmp/lcs}. BLOCKSIGHT=PATH runs another blocksight binary; BASELINE=PATH also runs
# an older build beside it (its acc/s in an extra column, "before"). POLICIES="lru arc" narrows
# the policies.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
synth_accesses=${1:-50000000}
work=${BENCH_DIR:-/tmp/blocksight-bench-cache}
venv=${LCS_VENV:-/tmp/lcs}
target=${CARGO_TARGET_DIR:-$root/target}
mkdir -p "$work"

if ! "$venv/bin/python" -c 'import libcachesim' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q libcachesim==0.3.5
fi
cargo build --release -q -p collector
cargo build --release -q -p analyzer-core --example cache_stream
bs=${BLOCKSIGHT:-$target/release/blocksight}
stream="$target/release/examples/cache_stream"

echo "== $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores; libcachesim $("$venv/bin/python" -c 'import libcachesim as l; print(l.__version__)')"

cpu_of() { # CPU seconds (user + sys) of a command, from GNU time, per run of $reps runs
  # (GNU time counts in hundredths of a second: a small trace's run is repeated so that the
  # total is long enough to measure; the children's times include every run's)
  /usr/bin/time -f '%U %S' -o "$work/time" bash -c 'n=$1; shift; for _ in $(seq "$n"); do "$@" >"$OUT"; done' _ "$reps" "$@"
  awk -v r="$reps" '{ print ($1 + $2) / r }' "$work/time"
}
export OUT="$work/out"

lcs_run() { # trace policy capacity -> "hits cpu_seconds"
  "$venv/bin/python" - "$@" <<'EOF'
import sys, time, libcachesim as lcs
path, policy, cap, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cls = {"lru": lcs.LRU, "arc": lcs.ARC, "s3fifo": lcs.S3FIFO, "sieve": lcs.Sieve}[policy]
reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
cache = cls(cap)
t = time.process_time()
miss_ratio, _ = cache.process_trace(reader)
cpu = time.process_time() - t
print(n - round(miss_ratio * n), cpu)
EOF
}

bench() { # name bst oracle line_accesses footprint
  local name=$1 bst=$2 oracle=$3 n=$4 footprint=$5
  # Runs of blocksight per cell: at least about 3 M line accesses in all (REPEAT overrides).
  reps=${REPEAT:-$(((3000000 + n - 1) / n))}
  echo "-- $name: $n line accesses of 4 KiB, footprint $footprint lines (blocksight: CPU per run of $reps)"
  printf '%-7s %5s %10s %14s %14s %8s %12s %12s %14s\n' policy size lines "ours acc/s" "lcs acc/s" ratio "ours hits" "lcs hits" "${BASELINE:+before acc/s}"
  for policy in ${POLICIES:-lru arc s3fifo sieve}; do
    for pct in 1 10; do
      local cap=$(((footprint * pct + 99) / 100))
      local ours_cpu ours_hits lcs_hits lcs_cpu
      ours_cpu=$(cpu_of "$bs" simulate "$bst" --policy "$policy" --cache-size "$((cap * 4096))" --line-size 4k --json)
      ours_hits=$("$venv/bin/python" -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["runs"][0]["result"] if "runs" in d else d["result"]; c=r["whole"]["counts"]; print(c["read"]["line_hits"]+c["write"]["line_hits"])' "$work/out")
      read -r lcs_hits lcs_cpu < <(lcs_run "$oracle" "$policy" "$cap" "$n")
      local base_cpu=0
      if [ -n "${BASELINE:-}" ]; then
        base_cpu=$(cpu_of "$BASELINE" simulate "$bst" --policy "$policy" --cache-size "$((cap * 4096))" --line-size 4k --json)
      fi
      awk -v p="$policy" -v s="$pct%" -v c="$cap" -v n="$n" -v oc="$ours_cpu" -v lc="$lcs_cpu" -v oh="$ours_hits" -v lh="$lcs_hits" -v bc="$base_cpu" 'BEGIN {
        oc = oc < 0.0001 ? 0.0001 : oc; lc = lc < 0.001 ? 0.001 : lc;
        before = bc > 0 ? sprintf("%12.2f M", n / bc / 1e6) : "";
        printf "%-7s %5s %10d %12.2f M %12.2f M %7.1fx %12d %12d %14s%s\n", p, s, c, n / oc / 1e6, n / lc / 1e6, lc / oc, oh, lh, before, (oh == lh ? "" : "  HIT COUNTS DIFFER") }'
      if [ "$ours_hits" != "$lcs_hits" ]; then failed=1; fi
    done
  done
}

failed=0
if [ -z "${SKIP_SAMPLE:-}" ]; then
  read -r n fp _ < <("$stream" from-bst tests/data/sample/pgbench.bst "$work/pgbench.oracleGeneral" 4096)
  bench "real sample pgbench.bst" tests/data/sample/pgbench.bst "$work/pgbench.oracleGeneral" "$n" "$fp"
fi
for trace in ${TRACES:-}; do
  name=$(basename "$trace")
  "$bs" import -q "$trace" -o "$work/$name.bst"
  read -r n fp _ < <("$stream" from-bst "$work/$name.bst" "$work/$name.oracleGeneral" 4096)
  bench "real trace $name" "$work/$name.bst" "$work/$name.oracleGeneral" "$n" "$fp"
done
if [ "$synth_accesses" -gt 0 ]; then
  if [ ! -s "$work/synth-$synth_accesses.meta" ]; then
    "$stream" synth "$synth_accesses" "$work/synth-$synth_accesses.bst" "$work/synth-$synth_accesses.oracleGeneral" >"$work/synth-$synth_accesses.meta"
  fi
  read -r n fp _ <"$work/synth-$synth_accesses.meta"
  bench "synthetic (mrc::synth)" "$work/synth-$synth_accesses.bst" "$work/synth-$synth_accesses.oracleGeneral" "$n" "$fp"
fi
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$failed"
