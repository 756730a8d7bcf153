#!/usr/bin/env bash
# The checked-in web bundle (collector/web/: the `trunk build --release` output that `blocksight
# report` and `serve` embed) must come from the current sources.
#
#   scripts/check-web-bundle.sh                  # the stamp matches the sources (fast, no toolchain)
#   scripts/check-web-bundle.sh --compare DIR    # and DIR (a fresh trunk build) equals the bundle
#   scripts/check-web-bundle.sh --manifest       # print the stamp the current sources would get
#
# The stamp (collector/web/STAMP) holds the sha256 of every file the bundle is built from, one
# line each, and the sha256 of those lines. The set, `SOURCES` below, is what Trunk's build reads
# from the repository: the web app and the engine crates (manifests and sources), the page
# (index.html), Trunk's config, the workspace manifest (the wasm-release profile, dependency
# versions), Cargo.lock, .cargo/config.toml and this build's script (wasm-opt's flags). Tests,
# benches and docs are not in it: they do not reach the bundle. scripts/build-web.sh
# --update-bundle rebuilds the bundle and rewrites the stamp.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"

SOURCES=(Cargo.toml Cargo.lock .cargo/config.toml Trunk.toml index.html scripts/build-web.sh
  web-app/Cargo.toml web-app/style.css web-app/src analyzer-core/Cargo.toml analyzer-core/src)
bundle=collector/web
stamp=$bundle/STAMP

# One `sha256  path` line per source file, sorted by path (C locale, so every machine agrees).
file_hashes() {
  find "${SOURCES[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
}

manifest() {
  local files total
  files=$(file_hashes)
  total=$(printf '%s\n' "$files" | sha256sum | cut -d' ' -f1)
  echo "sources-sha256 $total"
  printf '%s\n' "$files"
}

case "${1:-}" in
  --manifest) manifest; exit 0 ;;
  --compare) [ $# -eq 2 ] || { echo "usage: $0 [--compare DIR | --manifest]" >&2; exit 2; } ;;
  "") ;;
  *) echo "usage: $0 [--compare DIR | --manifest]" >&2; exit 2 ;;
esac

if [ ! -f "$stamp" ]; then
  echo "check-web-bundle: $stamp is missing; run scripts/build-web.sh --update-bundle" >&2
  exit 1
fi
want=$(grep -v '^#' "$stamp" | grep -v '^toolchain ' || true)
have=$(manifest)
if [ "$want" != "$have" ]; then
  echo "check-web-bundle: collector/web/ was built from other sources than these; rebuild it with" >&2
  echo "  scripts/build-web.sh --update-bundle   (and commit collector/web/)" >&2
  echo "files that differ (< stamp, > now):" >&2
  diff <(printf '%s\n' "$want") <(printf '%s\n' "$have") | grep '^[<>]' >&2 || true
  exit 1
fi
echo "check-web-bundle: the stamp matches the sources ($(echo "$have" | head -1 | cut -d' ' -f2 | cut -c1-16)…)"

if [ "${1:-}" = --compare ]; then
  dir=$2
  bad=0
  for f in "$bundle"/*; do
    name=$(basename "$f")
    [ "$name" = STAMP ] && continue
    if ! cmp -s "$f" "$dir/$name"; then
      echo "check-web-bundle: $dir/$name differs from $f" >&2
      bad=1
    fi
  done
  for f in "$dir"/*; do
    [ -f "$f" ] || continue
    [ -f "$bundle/$(basename "$f")" ] || { echo "check-web-bundle: $f is not in the bundle" >&2; bad=1; }
  done
  if [ $bad -ne 0 ]; then
    echo "check-web-bundle: the fresh build differs from the checked-in bundle." >&2
    echo "  stamped toolchain: $(grep '^toolchain ' "$stamp" | cut -d' ' -f2-)" >&2
    echo "  this toolchain:    $("$here/build-web.sh" --toolchain)" >&2
    exit 1
  fi
  echo "check-web-bundle: a fresh build in $dir equals the checked-in bundle, byte for byte"
fi
