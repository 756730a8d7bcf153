#!/usr/bin/env bash
# Runs every check and test Blocksight has, installing what is missing first (scripts/setup.sh).
# Every step runs even when an earlier one fails; the last line is `N passed, N failed`, counting
# each test and each check step (format, lints, builds). Exit status 0 only when nothing failed.
#
# Logs of each step go to target/test-logs/.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"

"$here/setup.sh" || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
# shellcheck source=env.sh
. "$here/env.sh"

logs="$root/target/test-logs"
mkdir -p "$logs"
passed=0
failed=0
failed_steps=()

# Adds the counts a test runner printed to the totals. Understands cargo's and
# wasm-bindgen-test-runner's `test result:` lines, node's `# pass` / `# fail` and pytest's
# `N passed` / `N failed` summary.
count_tests() {
  local log=$1 p f
  p=$(awk '/^test result: /{for(i=1;i<=NF;i++) if($i ~ /^passed;?$/) s+=$(i-1)} /^# pass [0-9]+/{s+=$3} / in [0-9.]+s/ && /^(=+ )?[0-9]+ (passed|failed|errors?|skipped|deselected|warnings?)/{for(i=1;i<=NF;i++) if($i ~ /^passed,?$/) s+=$(i-1)} END{print s+0}' "$log")
  f=$(awk '/^test result: /{for(i=1;i<=NF;i++) if($i ~ /^failed;?$/) s+=$(i-1)} /^# fail [0-9]+/{s+=$3} / in [0-9.]+s/ && /^(=+ )?[0-9]+ (passed|failed|errors?|skipped|deselected|warnings?)/{for(i=1;i<=NF;i++) if($i ~ /^(failed|errors?),?$/) s+=$(i-1)} END{print s+0}' "$log")
  passed=$((passed + p))
  failed=$((failed + f))
}

# step NAME KIND CMD...: KIND is `check` (counts as one pass or fail) or `tests` (counts the tests
# the runner reports, plus one failure if the runner failed without reporting a failing test).
step() {
  local name=$1 kind=$2; shift 2
  local log="$logs/$name.log" start=$SECONDS
  printf '== %-22s ' "$name"
  if "$@" >"$log" 2>&1; then
    printf 'ok    (%ds)\n' $((SECONDS - start))
    if [ "$kind" = check ]; then passed=$((passed + 1)); else count_tests "$log"; fi
  else
    printf 'FAIL  (%ds, log: %s)\n' $((SECONDS - start)) "${log#"$root"/}"
    failed_steps+=("$name")
    if [ "$kind" = check ]; then
      failed=$((failed + 1))
    else
      local before=$failed
      count_tests "$log"
      [ "$failed" -gt "$before" ] || failed=$((failed + 1))
    fi
    # The first errors (a compiler's, a full disk, a killed process) often scroll out of the tail.
    if grep -q -E '^error|No space left|Killed|SIGKILL|out of memory' "$log"; then
      echo "    first errors:"
      grep -m 12 -E -A 4 '^error|No space left|Killed|SIGKILL|out of memory' "$log" | cut -c1-300 | sed 's/^/      /'
      echo "    last lines:"
    fi
    # A failing Rust test's name and panic message are far above the tail.
    if grep -q -E '^---- .* stdout ----$' "$log"; then
      echo "    failing tests:"
      grep -E -A 6 '^---- .* stdout ----$' "$log" | head -n 60 | cut -c1-300 | sed 's/^/      /'
      echo "    last lines:"
    fi
    tail -n 30 "$log" | sed 's/^/    /'
    df -h "$root" 2>/dev/null | tail -n 1 | awk '{print "    disk: " $4 " free of " $2 " (" $5 " used)"}'
  fi
}

export CHROMEDRIVER=/usr/bin/chromedriver
export WASM_BINDGEN_TEST_TIMEOUT=120
# chromedriver's port-binding budget (default 5 s): see .cargo/config.toml.
export WASM_BINDGEN_TEST_DRIVER_TIMEOUT=60

step fmt            check cargo fmt --all -- --check
step sans-io        check "$here/check-sans-io.sh"
# The checked-in web bundle (collector/web/, embedded by report and serve) is stamped with the
# sources it came from; after the trunk build below, the fresh build must equal it.
step web-bundle-stamp check "$here/check-web-bundle.sh"
step clippy-host    check cargo clippy --workspace --exclude web-app --all-targets --quiet -- -D warnings
step clippy-wasm-core check wasm_cargo clippy -p analyzer-core --lib --test wasm --quiet -- -D warnings
step clippy-wasm-web  check wasm_cargo clippy -p web-app --all-targets --quiet -- -D warnings
# Integration tests run the blocksight binary: build it first (see tests/src/lib.rs).
step test-host      tests bash -c "cargo build --quiet --workspace --exclude web-app --bins && cargo test --workspace --exclude web-app --no-fail-fast"
# The engine's wasm tests (tests/wasm.rs) run in headless Chromium: same bytes in, same answers
# out as on the host. The lib's own unit tests are host-only (they use proptest).
# The MRC accuracy tests (SHARDS and MiniSim against exact answers on 1.2M-request traces) take
# minutes in a debug build, so debug builds skip them; run them here in release.
step test-mrc-accuracy tests bash -c "cargo build --release --quiet -p collector && cargo test --release -p blocksight-tests --test mrc"
# The Python bindings: build the wheel (release), install it in the venv, run pytest (the
# tests compare with the release CLI built by the step before).
step test-python    tests bash -c "scripts/test-python.sh"
step test-wasm-core tests wasm_cargo test --release -p analyzer-core --test wasm
step test-wasm-web  tests wasm_cargo test -p web-app
rm -rf "${TMPDIR:-/tmp}"/org.chromium.Chromium.scoped_dir.* 2>/dev/null
step trunk-build    check "$here/build-web.sh"
step web-bundle-same check "$here/check-web-bundle.sh" --compare dist
if [ -f tests/e2e/package.json ]; then
  # The browser tests drive the debug blocksight built by the test-host step (report, serve),
  # on the fresh trunk build in dist/ (BLOCKSIGHT_WEB_DIR), not the embedded bundle.
  step e2e-browser  tests bash -c "cd tests/e2e && BLOCKSIGHT_WEB_DIR=\"$root/dist\" BLOCKSIGHT_BIN=\"${CARGO_TARGET_DIR:-$root/target}/debug/blocksight\" node --test"
  rm -rf "${TMPDIR:-/tmp}"/org.chromium.Chromium.scoped_dir.* 2>/dev/null
fi

echo
if [ ${#failed_steps[@]} -gt 0 ]; then
  echo "failed steps: ${failed_steps[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
