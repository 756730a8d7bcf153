#!/usr/bin/env bash
# The main job on the bundled real sample trace (a PostgreSQL pgbench run recorded on this kind
# of machine, tests/data/sample/): prints the summary and analysis in the terminal and writes the
# self-contained HTML report, then says where it is. Installs what is missing first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"
"$here/setup.sh" --web
# shellcheck source=env.sh
. "$here/env.sh"

sample=${1:-tests/data/sample/pgbench.bst}
out=${2:-out/blocksight-sample-report.html}

echo "== building blocksight (release)" >&2
cargo build --release --quiet -p collector
echo "== building the web app (release)" >&2
"$here/build-web.sh" >&2
bin="$root/target/release/blocksight"

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
