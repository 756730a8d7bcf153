#!/usr/bin/env python3
"""Writes financial_sample.spc: a UMass/SPC style trace written from the SPC Trace File Format
Specification 1.0.1 (ASU,LBA,Size,Opcode,Timestamp[,...]; LBA in 512-byte sectors, Size in
bytes, Opcode r/w, Timestamp seconds since the trace start). No UMass data is redistributed.
Deterministic (fixed seed). Some lines carry an extra optional field (ignored); a few are
malformed and must be skipped with reasons naming the line."""
import random
random.seed(1)
t = 0.0
lines = []
for i in range(36):
    t += random.uniform(0.0001, 0.05)
    asu = random.choice([0, 0, 1, 2])
    lba = random.randint(0, 1 << 24)
    size = random.choice([512, 1024, 4096, 8192, 16384])
    op = random.choice(["r", "w", "W", "R"])
    extra = ",0" if i % 7 == 0 else ""
    lines.append(f"{asu},{lba},{size},{op},{t:.6f}{extra}")
lines.insert(4, "0,20941264,8192,x,0.551706")    # bad opcode
lines.insert(9, "0,20941264,8192,w")             # no timestamp
lines.insert(14, "0,lba,8192,w,0.6")             # bad LBA
with open("financial_sample.spc", "w") as f:
    f.write("\n".join(lines) + "\n")
