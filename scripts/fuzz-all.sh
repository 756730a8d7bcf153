#!/usr/bin/env bash
# Runs the cargo-fuzz targets in fuzz/, resumably and optionally in parallel, and prints one line
# per target: executions this run and in total, coverage (libFuzzer's `cov:` and `ft:`), corpus
# size and the outcome.
#
#   scripts/fuzz-all.sh [-j JOBS] [-e GOAL] [-s SANITIZER] [-l MAXLEN] [-n] SECONDS [TARGET...]
#
# SECONDS   the longest one target runs in this call.
# -j JOBS   targets fuzzed at the same time (default 1). Each is one libFuzzer process under
#           `nice -n 19`, so a shared machine keeps its other work.
# -e GOAL   total executions to reach per target (default: none). Totals are kept across calls
#           in fuzz/stats/TARGET (one line per run: date, execs, cov, ft, corpus, status); a
#           target at its goal is skipped, a call runs only the executions still missing.
#
# -n        build without libFuzzer's comparison tracing (cargo fuzz --no-trace-compares): 2-3x
#           the executions per CPU-second on the text-parsing targets, at the cost of the
#           fuzzer's guidance on compared values; such runs are marked "-ntc" in the stats
#           (their own build directory, fuzz/target-SANITIZER-ntc).
#
# Resuming: each target's corpus (fuzz/corpus/TARGET) is what libFuzzer keeps between runs, so
# a new call starts from the coverage the last one reached; fixtures under tests/data seed it
# once. Crashes are saved in fuzz/artifacts/TARGET and reported; the script goes on with the
# other targets and exits non-zero at the end if any target failed. Logs: fuzz/logs/TARGET.log.
# Needs: a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# FUZZ_TARGET_DIR overrides the build directory (default fuzz/target).
set -uo pipefail
jobs=1
goal=0
sanitizer=address
max_len=65536
ntc=
usage="usage: scripts/fuzz-all.sh [-j JOBS] [-e GOAL] [-s SANITIZER] [-l MAXLEN] [-n] SECONDS [TARGET...]"
while getopts "j:e:s:l:n" opt; do
  case $opt in
    j) jobs=$OPTARG ;;
    e) goal=$OPTARG ;;
    s) sanitizer=$OPTARG ;;
    l) max_len=$OPTARG ;;
    n) ntc=--no-trace-compares ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
case $sanitizer in
  address | none | memory | thread | leak) ;;
  *) echo "fuzz-all: unknown sanitizer '$sanitizer'" >&2; echo "$usage" >&2; exit 2 ;;
esac
shift $((OPTIND - 1))
secs=${1:?$usage}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"
default_dir=$root/fuzz/target
[ "$sanitizer" = address ] || default_dir=$root/fuzz/target-$sanitizer
[ -z "$ntc" ] || default_dir=$root/fuzz/target-$sanitizer-ntc
target_dir=${FUZZ_TARGET_DIR:-$default_dir}
if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo +nightly fuzz list); fi
mkdir -p stats logs
# `cargo fuzz run` builds what it runs; building first keeps compile time out of the fuzzing
# time and stops early on a build error.
for t in "${targets[@]}"; do
  nice -n 19 cargo +nightly fuzz build -O -s "$sanitizer" $ntc --target-dir "$target_dir" "$t" || exit 1
done

total_execs() { awk '{s += $2} END {print s + 0}' "stats/$1" 2>/dev/null || echo 0; }

fuzz_one() {
  local t=$1 corpus=corpus/$1 log=logs/$1.log done_execs runs status execs cov ft units
  done_execs=$(total_execs "$t")
  runs=-1
  if [ "$goal" -gt 0 ]; then
    if [ "$done_execs" -ge "$goal" ]; then
      printf '%-20s %12s %14s  at its goal, skipped\n' "$t" 0 "$done_execs"
      return 0
    fi
    runs=$((goal - done_execs))
  fi
  mkdir -p "$corpus"
  if [ -z "$(ls -A "$corpus")" ]; then
    find "$root/tests/data" -type f -size -64k ! -name '*.expected' ! -name '*.md' ! -name '*.sh' \
      ! -name '*.py' ! -name '*.json' -print0 |
      while IFS= read -r -d '' f; do cp -n "$f" "$corpus/seed-$(basename "$f")"; done
  fi
  nice -n 19 cargo +nightly fuzz run -O -s "$sanitizer" $ntc --target-dir "$target_dir" "$t" "$corpus" -- \
    -max_total_time="$secs" -runs="$runs" -max_len="$max_len" -print_final_stats=1 >"$log" 2>&1
  status=$?
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  # The last status line carries the coverage: "#N  REDUCE cov: C ft: F corp: U/..."
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  units=$(find "$corpus" -type f | wc -l)
  local outcome=ok
  [ $status -eq 0 ] || outcome="FAILED (exit $status)"
  printf '%s %s %s %s %s %s %s\n' "$(date -u +%FT%TZ)" "${execs:-0}" "${cov:-?}" "${ft:-?}" \
    "$units" "${outcome// /_}" "$sanitizer${ntc:+-ntc}" >>"stats/$t"
  printf '%-20s %12s %14s  cov %-6s ft %-7s corpus %-6s %s\n' "$t" "${execs:-?}" \
    "$(total_execs "$t")" "${cov:-?}" "${ft:-?}" "$units" "$outcome"
  if [ $status -ne 0 ]; then
    echo "    log $root/fuzz/$log, artifacts in fuzz/artifacts/$t"
    grep -m3 -E "panicked|ERROR: libFuzzer" "$log" | sed 's/^/    /'
    return 1
  fi
}

printf '%-20s %12s %14s  %s\n' target "execs (run)" "execs (total)" "coverage and outcome"
failed=0
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
exit $failed
