#!/usr/bin/env bash
# Builds the Python bindings' wheel (maturin, release), installs it into the test venv and runs
# python/tests with pytest against the release CLI. The venv comes from scripts/setup.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"
# shellcheck source=env.sh
. "$here/env.sh"
py="$BLOCKSIGHT_VENV/bin"
[ -x "$py/maturin" ] || { echo "no Python test venv at $BLOCKSIGHT_VENV: run scripts/setup.sh"; exit 1; }
target=${CARGO_TARGET_DIR:-$root/target}
cargo build --release --quiet -p collector
rm -rf "$target/wheels"
# No auditwheel repair (it needs patchelf): the wheel is for this machine's venv.
"$py/maturin" build --release --quiet --strip --auditwheel skip -m python/Cargo.toml -o "$target/wheels"
"$py/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$target"/wheels/blocksight-*.whl
BLOCKSIGHT_BIN="$target/release/blocksight" "$py/python" -m pytest -q python/tests
