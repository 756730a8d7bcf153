#!/usr/bin/env bash
# Builds the web app for release into dist/ with Trunk (the UI and the engine worker, both
# wasm32), for `blocksight report`/`serve` and the browser tests. Idempotent; needs what
# scripts/setup.sh installs (trunk, wasm-bindgen-cli, the wasm32 route, tests/e2e's npm packages
# for binaryen's wasm-opt). Prints the bundle's sizes at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"
# shellcheck source=env.sh
. "$here/env.sh"

# wasm-opt from the npm `binaryen` package (Debian's binaryen 108 rejects reference types).
if [ -x "$root/tests/e2e/node_modules/.bin/wasm-opt" ]; then
  export PATH="$root/tests/e2e/node_modules/.bin:$PATH"
fi
if ! wasm-opt --version 2>/dev/null | grep -q "version_132"; then
  echo "build-web: wasm-opt 132 not found; run scripts/setup.sh (installs tests/e2e's npm packages)" >&2
  exit 1
fi

# Trunk runs offline (it would otherwise try GitHub for tools), which makes cargo offline too.
wasm_cargo fetch --quiet
# Trunk calls cargo itself; on the Debian route it must be Debian's cargo with build-std.
wasm_env trunk build --release --offline --config Trunk.toml "$@"

gz() { gzip -9 -c "$1" | wc -c; }
total=0
for f in dist/web-app_bg.wasm dist/web-app.js dist/worker_bg.wasm dist/worker.js; do
  n=$(gz "$f"); total=$((total + n))
  printf 'build-web: %-22s %9d bytes, %8d gzipped\n' "${f#dist/}" "$(wc -c <"$f")" "$n"
done
printf 'build-web: wasm + JS gzipped total %d bytes\n' "$total"
