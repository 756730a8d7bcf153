#!/usr/bin/env bash
# Checks analyzer-core's architecture invariant: it is sans-IO. No web crates in its dependency
# tree, and no filesystem, threads or clocks in its source.
set -euo pipefail
cd "$(dirname "$0")/.."
deps=$(cargo tree -p analyzer-core -e normal --prefix none --quiet | awk '{print $1}' | sort -u)
bad=$(echo "$deps" | grep -E '^(wasm-bindgen|web-sys|js-sys|yew|gloo|plotters-canvas|tokio|libc)$' || true)
if [ -n "$bad" ]; then
  echo "analyzer-core depends on crates it must not: $bad"; exit 1
fi
# Two exceptions: job/simulate/threads.rs and job/load/threads.rs, behind the `threads` feature
# (native hosts only), may start threads (ARCHITECTURE.md); they may not touch anything else outside.
src=$(grep -rnE --include='*.rs' 'std::fs|std::thread|Instant::now|SystemTime::now|std::net|std::process|std::env::' analyzer-core/src | grep -vE '^[^:]+:[0-9]+:\s*//' | grep -vE '^analyzer-core/src/job/(simulate|load)/threads\.rs:[0-9]+:.*std::thread::(Builder|JoinHandle)' || true)
if [ -n "$src" ]; then
  echo "analyzer-core source touches the outside world:"; echo "$src"; exit 1
fi
echo "analyzer-core is sans-IO: $(echo "$deps" | wc -l) crates in its tree, none of them web or IO crates"
