#!/bin/sh
# Remakes the native-format fixtures from the tracefs fixture (a real fio run on a loop device,
# see ../tracefs/README.md). Run from anywhere after building blocksight; BLOCKSIGHT overrides
# the binary. The expected outputs beside them are refreshed by UPDATE_EXPECT=1 cargo test
# -p blocksight-tests --test native.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${BLOCKSIGHT:-$here/../../../target/debug/blocksight}
src=$here/../tracefs/fio_loop.trace
cd "$here"
"$bin" import -q "$src" -o 0001_fio_loop.bst --compress none --chunk-events 16
# LZ4 only pays on bigger chunks: the two-CPU blktrace fixture in one chunk.
"$bin" import -q ../blktrace/mixed -o 0002_blktrace_lz4.bst --compress lz4
# A recording cut off mid-write: the first 300 bytes (inside the second events chunk).
head -c 300 0001_fio_loop.bst > 0003_cut.bst
# A flipped bit in the payload of the first events chunk: its CRC no longer matches.
python3 - <<'PY'
data = bytearray(open("0001_fio_loop.bst", "rb").read())
# File header (12) + header chunk frame (20) + its payload; then the first events chunk frame.
header_len = int.from_bytes(data[12 + 8:12 + 12], "little")
first_events = 12 + 20 + header_len
data[first_events + 20 + 5] ^= 0x10
open("0004_bad_crc.bst", "wb").write(data)
PY
ls -l 000*.bst
