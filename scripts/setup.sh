#!/usr/bin/env bash
# Installs what Blocksight's build and tests need, idempotently: a second run does nothing.
#
#   scripts/setup.sh          everything (host toolchain checks, wasm32 route, trunk,
#                             wasm-bindgen-cli, Chromium, fio, Node packages for the browser tests)
#   scripts/setup.sh --web    only what building the web app needs (scripts/build-web.sh)
#   scripts/setup.sh --host   only what building the blocksight binary needs (the main job,
#                             scripts/run-sample.sh: cargo and a C compiler; the web app is the
#                             prebuilt bundle in collector/web/)
#
# The wasm32 route: a rustup toolchain with the wasm32-unknown-unknown target when one is
# installed; otherwise Debian's rustc-web packages with cargo's build-std (rustup cannot download
# targets on machines without general internet). scripts/env.sh picks the same route at build time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
mode=${1:-all}

log() { printf 'setup: %s\n' "$*" >&2; }

export PATH="$HOME/.cargo/bin:$PATH"
command -v cargo >/dev/null || { log "cargo is not installed: install Rust (https://rustup.rs) first"; exit 1; }

# --- Debian packages -------------------------------------------------------------------------
apt_missing=()
need_deb() { for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || apt_missing+=("$p"); done; }

have_rustup_wasm=false
if command -v rustup >/dev/null && rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'; then
  have_rustup_wasm=true
fi

if [ "$mode" = --host ]; then
  # xz2 builds liblzma's bundled C source: a C compiler is all the host build needs beyond cargo.
  if ! command -v cc >/dev/null; then
    if command -v dpkg-query >/dev/null && [ "$(id -u)" -eq 0 ]; then
      log "installing Debian packages: gcc libc6-dev"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev >/dev/null
    else
      log "no C compiler (cc): install gcc"
      exit 1
    fi
  fi
  log "ready"
  exit 0
fi

if command -v dpkg-query >/dev/null; then
  if ! $have_rustup_wasm; then
    need_deb rustc-web cargo-web rust-web-src rust-web-llvm lld-22 rust-web-clippy rustfmt-web
  fi
  if [ "$mode" = all ]; then
    need_deb chromium chromium-driver fio blktrace zstd xz-utils util-linux
    # Node.js may come from Debian (nodejs + npm) or from NodeSource (nodejs, npm included).
    command -v node >/dev/null || need_deb nodejs
    command -v npm >/dev/null || need_deb npm
    # The Python bindings' tests: an interpreter with venv and pip.
    command -v python3 >/dev/null || need_deb python3
    python3 -c 'import venv, ensurepip' 2>/dev/null || need_deb python3-venv
  fi
  if [ ${#apt_missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
      log "missing Debian packages: ${apt_missing[*]} (run as root, or: sudo apt-get install ${apt_missing[*]})"
      exit 1
    fi
    log "installing Debian packages: ${apt_missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >/dev/null
  fi
elif ! $have_rustup_wasm; then
  log "no wasm32-unknown-unknown target: run 'rustup target add wasm32-unknown-unknown'"
  exit 1
fi

# --- Cargo-installed tools -------------------------------------------------------------------
# Versions are pinned: wasm-bindgen-cli must equal the wasm-bindgen in Cargo.lock.
trunk_version=0.22.1
wbg_version=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/"/,"",$3); print $3; exit}' "$root/Cargo.lock" 2>/dev/null || true)
[ -n "$wbg_version" ] || wbg_version=0.2.130

if ! trunk --version 2>/dev/null | grep -q "$trunk_version"; then
  # Trunk 0.22 needs rustc >= 1.96.1: use a nightly toolchain when the default is older.
  toolchain=""
  if ! rustc --version | awk '{split($2,v,"."); exit !(v[1]>1 || v[2]>96 || (v[2]==96 && v[3]+0>=1))}'; then
    if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then toolchain="+nightly"; fi
  fi
  log "installing trunk $trunk_version (about 13 minutes on 2 cores)"
  cargo $toolchain install trunk --version "$trunk_version" --locked --quiet
fi

if ! wasm-bindgen --version 2>/dev/null | grep -q "$wbg_version"; then
  log "installing wasm-bindgen-cli $wbg_version (about 6 minutes on 2 cores)"
  # Not --locked: a locked dependency version is not served by the registry mirror here.
  cargo install wasm-bindgen-cli --version "$wbg_version" --quiet --force
fi

# --- Node packages (browser tests and wasm-opt) -------------------------------------------------
if [ -f "$root/tests/e2e/package.json" ] && command -v npm >/dev/null; then
  if [ ! -d "$root/tests/e2e/node_modules" ] || [ "$root/tests/e2e/package-lock.json" -nt "$root/tests/e2e/node_modules" ]; then
    log "installing Node packages for tests/e2e"
    (cd "$root/tests/e2e" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
    touch "$root/tests/e2e/node_modules"
  fi
fi

# --- Python venv for the bindings' tests (python/requirements-dev.txt, pinned) ------------------
if [ "$mode" = all ]; then
  venv=${BLOCKSIGHT_VENV:-$HOME/.cache/blocksight/venv}
  req="$root/python/requirements-dev.txt"
  if [ ! -x "$venv/bin/python" ] || [ "$req" -nt "$venv/.requirements" ]; then
    log "installing the Python test environment in $venv (maturin, pytest, numpy, pandas, pyarrow, duckdb, dask)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
    cp "$req" "$venv/.requirements"
  fi
fi

# --- Fetch crates for offline wasm builds (trunk --offline makes cargo offline) ---------------
# shellcheck source=env.sh
. "$here/env.sh"
wasm_cargo fetch --quiet >/dev/null 2>&1 || wasm_cargo fetch
# And every platform's (an offline wasm32 build still asks for the host-only crates in the lock
# file, such as prefetch-index).
cargo fetch --quiet >/dev/null 2>&1 || cargo fetch
log "ready"
