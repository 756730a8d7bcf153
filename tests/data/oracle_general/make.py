#!/usr/bin/env python3
"""Writes sample.oracleGeneral in this folder from the published record layout.

No tool here produces libCacheSim traces, so the file is built from the struct documented in
libCacheSim (traceReader/customizedReader/oracle/oracleGeneralBin.h) and the cacheMon dataset
README: packed, little-endian, 24 bytes per request:

  u32 clock_time (seconds), u64 obj_id, u32 obj_size (bytes), i64 next_access_vtime

next_access_vtime is the (0-based) request number of the next request to the same obj_id, or -1.
The requests model a block trace converted by libCacheSim's traceConv: obj_id is the start
address in 512-byte sectors, obj_size the request size in bytes.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# (clock_time, obj_id, obj_size)
REQUESTS = [
    (0, 2048, 4096),
    (0, 2056, 4096),
    (1, 2048, 4096),
    (1, 9000, 65536),
    (2, 2048, 8192),
    (3, 1 << 40, 4096),
    (5, 9000, 65536),
    (5, 0, 0),
]

out = b""
for i, (t, obj, size) in enumerate(REQUESTS):
    nxt = next((j for j in range(i + 1, len(REQUESTS)) if REQUESTS[j][1] == obj), -1)
    out += struct.pack("<IQIq", t, obj, size, nxt)
assert len(out) == 24 * len(REQUESTS)
with open(os.path.join(HERE, "sample.oracleGeneral"), "wb") as f:
    f.write(out)
