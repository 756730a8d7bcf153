#!/usr/bin/env python3
"""Writes io_traces_sample.csv: an Alibaba Cloud block trace (2020) style file written from
the published schema (github.com/alibaba/block-traces: device_id,opcode,offset,length,timestamp;
opcode R/W, offset and length in bytes, timestamp in microseconds since the Unix epoch). No
Alibaba data is redistributed. Deterministic (fixed seed); a few malformed lines are included."""
import random
random.seed(2020)
t = 1577808000000000  # 2020-01-01 00:00 +08:00, in microseconds
lines = []
for i in range(36):
    t += random.randint(5, 20000)
    dev = random.choice([0, 17, 17, 419])
    op = random.choice(["R", "W", "W"])
    off = random.randint(0, 1 << 26) * 4096
    length = random.choice([4096, 4096, 8192, 16384, 131072])
    lines.append(f"{dev},{op},{off},{length},{t}")
lines.insert(6, "17,X,4096,4096,1577808000100000")   # bad opcode
lines.insert(12, "17,R,4096,4096")                   # too few fields
lines.insert(20, "17,R,4096,4096,1577808000100000,9") # too many fields
with open("io_traces_sample.csv", "w") as f:
    f.write("\n".join(lines) + "\n")
