#!/bin/bash
# Records the fio iolog fixtures with Debian's fio 3.33 (`write_iolog=`), which writes iolog
# version 3 (a millisecond timestamp first on every line):
# - two_files.v3.iolog: one job doing random reads/writes with fsyncs over two files (two
#   devices in Blocksight's model);
# - trim.v3.iolog: a random-trim job (discards).
# fio 3.33 cannot write version 2 any more, so two_files.v2.iolog is derived from the v3 log by
# dropping the timestamp column and changing the header: exactly the layout fio wrote before
# version 3 (fio 3.30 and older; fio's iolog.c, `iolog_ver2`). No root needed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
truncate -s 16M a.img b.img
fio --name=a --filename=a.img:b.img --file_service_type=random --rw=randrw --bs=4k --size=8M \
    --number_ios=24 --randseed=1 --fsync=7 --write_iolog=a.log >/dev/null
# fio may report a failed punch-hole on a regular file; the log is still complete.
fio --name=t --filename=a.img --rw=randtrim --bs=8k --size=4M --number_ios=3 --randseed=3 \
    --write_iolog=t.log >/dev/null || true
grep -q " trim " t.log
cp a.log "$here/two_files.v3.iolog"
cp t.log "$here/trim.v3.iolog"
{
    echo "fio version 2 iolog"
    grep -v '^fio version' a.log | cut -d' ' -f2-
} > "$here/two_files.v2.iolog"
echo "wrote $(wc -l < "$here/two_files.v3.iolog") v3 lines"
