#!/usr/bin/env bash
# Native-format decode throughput on the host (criterion, analyzer-core/benches/decode.rs) and
# in wasm32 under Node (analyzer-core/benches/wasm-decode: the same loop and the same synthetic
# trace). Prints MB/s of file bytes and events/s for uncompressed and LZ4 chunks, and (wasm) the
# events/s of decode + stat + analysis, the worker's per-event work while loading.
# Needs: cargo, node, wasm-bindgen (the CLI matching Cargo.lock), a wasm32 route (scripts/env.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/env.sh
source "$root/scripts/env.sh"
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}

echo "== host: cargo bench -p analyzer-core --bench decode"
cargo bench -p analyzer-core --bench decode -- --warm-up-time 2 --measurement-time 5 2>&1 |
  grep -E "bytes/event|^native_decode|time:|thrpt:"

echo "== wasm32 under node $(node --version)"
wasm_target=$target/wasm-decode-bench
(cd analyzer-core/benches/wasm-decode && CARGO_TARGET_DIR=$wasm_target wasm_cargo build --release --quiet)
wasm-bindgen --target nodejs --out-dir "$wasm_target/pkg" \
  "$wasm_target/wasm32-unknown-unknown/release/wasm_decode_bench.wasm"
node analyzer-core/benches/wasm-decode/bench.mjs "$wasm_target/pkg"
