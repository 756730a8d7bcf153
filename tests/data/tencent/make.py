#!/usr/bin/env python3
"""Writes cbs_sample.csv: a Tencent CBS style trace (as published on SNIA IOTTA) written from
the published README: Timestamp,Offset,Size,IOType,VolumeID; Unix seconds; Offset and Size in
512-byte sectors; IOType 0 read, 1 write. No Tencent data is redistributed. Deterministic
(fixed seed); a few malformed lines are included."""
import random
random.seed(27917)
t = 1538323200  # 2018-10-01 00:00 +08:00
lines = []
for i in range(36):
    if random.random() < 0.3:
        t += 1
    vol = random.choice([1063, 1063, 2201, 5])
    off = random.randint(0, 1 << 28)
    size = random.choice([8, 8, 16, 32, 256])
    io = random.choice([0, 1, 1])
    lines.append(f"{t},{off},{size},{io},{vol}")
lines.insert(3, f"{t},12910952,128,2,1063")     # IOType 2
lines.insert(10, f"{t},12910952,128,1")         # no VolumeID
lines.insert(18, f"{t}.5,12910952,128,1,1063")  # fractional seconds
with open("cbs_sample.csv", "w") as f:
    f.write("\n".join(lines) + "\n")
