#!/usr/bin/env python3
"""Writes the vscsi fixtures in this folder from the published record layouts.

No tool here records CloudPhysics vscsi traces, so these files are built from the C structs in
libCacheSim (libCacheSim/traceReader/customizedReader/vscsi.h), little-endian with natural
alignment:

  v1 (32 bytes): u32 sn, u32 len, u32 nSG, u16 cmd, u16 ver, u64 lbn, u64 ts
  v2 (40 bytes): u16 cmd, u16 ver, u32 sn, u32 len, u32 nSG, u64 lbn, u64 ts, u64 rt

ver's high byte is the version; ts is in microseconds, lbn in 512-byte sectors, len in bytes,
cmd the SCSI opcode; rt (v2) the response time in microseconds.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# (ts_us, cmd, lbn, len_bytes, rt_us): reads and writes of several sizes, a re-read, an UNMAP,
# a SYNCHRONIZE CACHE, an INQUIRY (no data: ignored) and a WRITE(16) far into a large disk.
RECORDS = [
    (1_000_000, 0x28, 2048, 4096, 120),
    (1_000_250, 0x2A, 8192, 65536, 480),
    (1_000_900, 0x28, 2048, 4096, 95),
    (1_001_400, 0x12, 0, 36, 10),
    (1_002_000, 0x42, 16384, 1048576, 900),
    (1_002_500, 0x35, 0, 0, 1500),
    (1_003_000, 0x88, 4_000_000_000, 8192, 210),
    (1_003_100, 0x8A, 4_000_000_016, 131072, 730),
]


def v1():
    out = b""
    for sn, (ts, cmd, lbn, length, _rt) in enumerate(RECORDS):
        out += struct.pack("<IIIHHQQ", sn, length, max(1, length // 4096), cmd, 0x0100, lbn, ts)
    return out


def v2():
    out = b""
    for sn, (ts, cmd, lbn, length, rt) in enumerate(RECORDS):
        out += struct.pack("<HHIIIQQQ", cmd, 0x0200, sn, length, max(1, length // 4096), lbn, ts, rt)
    return out


with open(os.path.join(HERE, "sample.vscsi1"), "wb") as f:
    f.write(v1())
with open(os.path.join(HERE, "sample.vscsi2"), "wb") as f:
    f.write(v2())
