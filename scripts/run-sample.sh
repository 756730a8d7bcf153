#!/usr/bin/env bash
# The main job on the bundled real sample trace (a PostgreSQL pgbench run recorded on this kind
# of machine, tests/data/sample/): prints the summary and analysis in the terminal and writes the
# self-contained HTML report, then says where it is. Needs only cargo: the web app is the
# prebuilt bundle in collector/web/, built into blocksight (`scripts/setup.sh --host` checks for
# cargo and installs a C compiler when one is missing; no web toolchain is needed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"
"$here/setup.sh" --host
# shellcheck source=env.sh
. "$here/env.sh"

sample=${1:-tests/data/sample/pgbench.bst}
out=${2:-out/blocksight-sample-report.html}

# Without the `parquet` feature: arrow and parquet are over half of a clean release build's
# compile time and the sample needs neither (docs/parquet.md, "Crates"). A later
# `cargo build --release -p collector` adds them back into the same binary path.
echo "== building blocksight (release, without Parquet support, to compile faster)" >&2
cargo build --release --quiet -p collector --no-default-features
if [ ! -f collector/web/STAMP ]; then
  # A tree without the prebuilt bundle: build the web app (needs the web toolchain) and use it.
  echo "== no prebuilt web bundle in collector/web/: building the web app (release)" >&2
  "$here/setup.sh" --web
  "$here/build-web.sh" >&2
  export BLOCKSIGHT_WEB_DIR="$root/dist"
fi
bin="${CARGO_TARGET_DIR:-$root/target}/release/blocksight"

echo "== blocksight stat $sample"
"$bin" stat "$sample"
echo
echo "== blocksight analyze $sample"
"$bin" analyze "$sample"
mkdir -p "$(dirname "$out")"
"$bin" report "$sample" -o "$out"
echo
echo "Report written to $root/$out"
echo "Open it in a browser (it works offline from file://), or run: $bin serve $sample"
