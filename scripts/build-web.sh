#!/usr/bin/env bash
# Builds the web app for release into dist/ with Trunk (the UI and the engine worker, both
# wasm32), for `blocksight report`/`serve` and the browser tests. Idempotent; needs what
# scripts/setup.sh installs (trunk, wasm-bindgen-cli, the wasm32 route, tests/e2e's npm packages
# for binaryen's wasm-opt). Prints the bundle's sizes at the end.
#
#   scripts/build-web.sh                  # into dist/ (what `BLOCKSIGHT_WEB_DIR=dist` and the e2e tests use)
#   scripts/build-web.sh --update-bundle  # and copy it into collector/web/, the bundle the
#                                         # blocksight binary embeds, with a new stamp (STAMP)
#   scripts/build-web.sh --toolchain      # print the toolchain line the stamp records
# Other arguments go to trunk.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"
# shellcheck source=env.sh
. "$here/env.sh"

update=0
args=()
for a in "$@"; do
  case "$a" in
    --update-bundle) update=1 ;;
    --toolchain) toolchain_only=1 ;;
    *) args+=("$a") ;;
  esac
done

# The tools that make the bundle's bytes; a different one gives other bytes from the same sources.
toolchain() {
  printf 'toolchain %s; trunk %s; wasm-bindgen %s; wasm-opt %s; route %s\n' \
    "$(wasm_env rustc -V 2>/dev/null || echo '?')" \
    "$(trunk --version 2>/dev/null | cut -d' ' -f2 || echo '?')" \
    "$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2 || echo '?')" \
    "$(wasm-opt --version 2>/dev/null | sed 's/.*version_\([0-9]*\).*/\1/' || echo '?')" \
    "$BLOCKSIGHT_WASM_ROUTE"
}

# wasm-opt from the npm `binaryen` package (Debian's binaryen 108 rejects reference types).
if [ -x "$root/tests/e2e/node_modules/.bin/wasm-opt" ]; then
  export PATH="$root/tests/e2e/node_modules/.bin:$PATH"
fi
if [ "${toolchain_only:-0}" = 1 ]; then
  toolchain | cut -d' ' -f2-
  exit 0
fi
if ! wasm-opt --version 2>/dev/null | grep -q "version_132"; then
  echo "build-web: wasm-opt 132 not found; run scripts/setup.sh (installs tests/e2e's npm packages)" >&2
  exit 1
fi

# Trunk runs offline (it would otherwise try GitHub for tools), which makes cargo offline too.
wasm_cargo fetch --quiet
# Trunk calls cargo itself; on the Debian route it must be Debian's cargo with build-std.
wasm_env trunk build --release --offline --config Trunk.toml ${args[@]+"${args[@]}"}

gz() { gzip -9 -c "$1" | wc -c; }
total=0
for f in dist/web-app_bg.wasm dist/web-app.js dist/worker_bg.wasm dist/worker.js; do
  n=$(gz "$f"); total=$((total + n))
  printf 'build-web: %-22s %9d bytes, %8d gzipped\n' "${f#dist/}" "$(wc -c <"$f")" "$n"
done
printf 'build-web: wasm + JS gzipped total %d bytes\n' "$total"

if [ "$update" = 1 ]; then
  # collector/web/ is exactly dist/ plus the stamp: stale files of an older build go.
  find collector/web -maxdepth 1 -type f ! -name STAMP -delete 2>/dev/null || true
  mkdir -p collector/web
  cp dist/* collector/web/
  {
    echo "# The sources collector/web/ was built from: written by scripts/build-web.sh --update-bundle,"
    echo "# checked by scripts/check-web-bundle.sh (the sha256 of each file, then of these lines)."
    toolchain
    "$here/check-web-bundle.sh" --manifest
  } >collector/web/STAMP
  printf 'build-web: updated collector/web/ (%d bytes); commit it\n' "$(cat collector/web/* | wc -c)"
fi
