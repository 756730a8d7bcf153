#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for SECONDS each and prints its exec count. Corpora
# (fuzz/corpus/TARGET) are seeded with the small fixtures under tests/data. Crashes are saved in
# fuzz/artifacts/TARGET and reported; the script goes on with the next target and exits non-zero
# at the end if any target failed.
# Needs: a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# FUZZ_TARGET_DIR overrides the build directory (default fuzz/target).
set -uo pipefail
secs=${1:?usage: scripts/fuzz-all.sh SECONDS [TARGET...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"
target_dir=${FUZZ_TARGET_DIR:-$root/fuzz/target}
if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo +nightly fuzz list); fi
# `cargo fuzz run` builds what it runs; building everything first keeps compile time out of the
# fuzzing time and stops early on a build error.
if [ $# -gt 0 ]; then
  for t in "${targets[@]}"; do cargo +nightly fuzz build -O --target-dir "$target_dir" "$t" || exit 1; done
else
  cargo +nightly fuzz build -O --target-dir "$target_dir" || exit 1
fi
failed=0
for t in "${targets[@]}"; do
  corpus=corpus/$t
  mkdir -p "$corpus"
  find "$root/tests/data" -type f -size -64k ! -name '*.expected' ! -name '*.md' ! -name '*.sh' \
    ! -name '*.py' ! -name '*.json' -print0 |
    while IFS= read -r -d '' f; do cp -n "$f" "$corpus/seed-$(basename "$f")"; done
  log=$(mktemp)
  cargo +nightly fuzz run -O --target-dir "$target_dir" "$t" "$corpus" -- \
    -max_total_time="$secs" -max_len=65536 -print_final_stats=1 >"$log" 2>&1
  status=$?
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  if [ $status -eq 0 ]; then
    printf '%-22s %12s execs in %ss\n' "$t" "${execs:-?}" "$secs"
  else
    failed=1
    printf '%-22s %12s execs, FAILED (exit %s); log %s, artifacts in fuzz/artifacts/%s\n' \
      "$t" "${execs:-?}" "$status" "$log" "$t"
    grep -m3 -E "panicked|ERROR: libFuzzer" "$log" | sed 's/^/    /'
    continue
  fi
  rm -f "$log"
done
exit $failed
