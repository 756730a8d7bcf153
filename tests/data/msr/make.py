#!/usr/bin/env python3
"""Writes hm_0_sample.csv: an MSR Cambridge style trace written from the published column
definitions (SNIA IOTTA trace set 388: Timestamp,Hostname,DiskNumber,Type,Offset,Size,
ResponseTime; Windows FILETIME timestamps and response times in 100 ns ticks; bytes).
No real MSR data is redistributed. Deterministic (fixed seed). Includes malformed lines that
the decoder must skip with reasons naming the line."""
import random
random.seed(388)
t = 128166372003061629  # 2007-02-22 (the MSR traces' week), in FILETIME ticks
lines = []
for i in range(36):
    t += random.randint(1000, 400000)
    host, disk = random.choice([("hm", 0), ("hm", 0), ("hm", 1), ("src1", 2)])
    kind = random.choice(["Read", "Write", "Write"])
    offset = random.randint(0, 1 << 22) * 512
    size = random.choice([512, 4096, 4096, 8192, 65536])
    resp = random.randint(200, 90000)
    lines.append(f"{t},{host},{disk},{kind},{offset},{size},{resp}")
# Malformed records, each for a different reason.
lines.insert(5, f"{t},hm,0,Erase,4096,4096,100")          # unknown Type
lines.insert(11, f"{t},hm,0,Read,4096")                   # too few fields
lines.insert(17, f"notatime,hm,0,Read,4096,4096,100")     # bad timestamp
lines.insert(23, f"{t},hm,0,Write,-4096,4096,100")        # negative offset
with open("hm_0_sample.csv", "w") as f:
    f.write("\n".join(lines) + "\n")
