#!/bin/sh
# Writes trace.vN.lcs (N = 1, 2, 3, 8) from trace.csv with libCacheSim's own converter
# (libcachesim 0.3.5 from PyPI, Util.convert_to_lcs), so the fixtures are the reference tool's
# bytes, not this project's reading of the layout. Needs network access for pip once.
set -eu
cd "$(dirname "$0")"
venv=${LCS_VENV:-/tmp/lcs}
"$venv/bin/python" -c 'import libcachesim' 2>/dev/null || {
  python3 -m venv "$venv" && "$venv/bin/pip" install -q libcachesim==0.3.5
}
"$venv/bin/python" - <<'PY' 2>/dev/null
import libcachesim as l
p = l.ReaderInitParam()
p.time_field, p.obj_id_field, p.obj_size_field, p.op_field, p.tenant_field = 1, 2, 3, 4, 5
p.has_header, p.delimiter, p.obj_id_is_num = True, ",", True
for ver in (1, 2, 3, 8):
    r = l.TraceReader("trace.csv", l.TraceType.CSV_TRACE, p)
    l.Util.convert_to_lcs(r._reader, f"trace.v{ver}.lcs", False, False, ver)
    back = l.TraceReader(f"trace.v{ver}.lcs", l.TraceType.LCS_TRACE)
    print(ver, [(q.clock_time, q.obj_id, q.obj_size, q.op.name) for q in back])
PY
