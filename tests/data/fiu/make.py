#!/usr/bin/env python3
"""Writes homes_shape.txt: an FIU SRCMap / I/O Deduplication style trace written from the
published field definitions (SNIA IOTTA: "[ts in ns] [pid] [process] [lba] [size in 512 Bytes
blocks] [Write or Read] [major device number] [minor device number] [MD5 per 4096 Bytes]"), one
line per 4 KiB page, the pages of one request sharing its time, process and direction. No real
FIU data is redistributed (the hashes are of the line's own text). Deterministic (fixed seed).
Includes malformed lines that the decoder must skip with reasons naming the line."""
import hashlib
import random

random.seed(2010)
t = 89968195792462  # the FIU README's example time (ns on the traced machine's clock)
procs = [(4215, "nfsd"), (4216, "nfsd"), (20782, "gzip"), (3321, "Web Content"), (77, "kjournald")]
lines = []
lba = 283193184
for i in range(40):
    t += random.randint(20_000, 3_000_000)
    pid, name = random.choice(procs)
    rw = random.choice(["R", "W", "W"])
    minor = random.choice([0, 0, 0, 1])
    if random.random() < 0.5:
        lba += random.choice([8, 16, 64])        # near the last request
    else:
        lba = random.randint(0, 1 << 28) // 8 * 8
    pages = random.choice([1, 1, 2, 4, 8])
    for p in range(pages):
        text = f"{t} {pid} {name} {lba + 8 * p} 8 {rw} 6 {minor}"
        lines.append(f"{text} {hashlib.md5(text.encode()).hexdigest()}")
    lba += 8 * pages
# Malformed lines, each for a different reason.
lines.insert(7, f"{t} 4215 nfsd 1024 8 D 6 0 {'0' * 32}")          # direction neither R nor W
lines.insert(13, f"{t} 4215 nfsd 1024 8")                          # too few fields
lines.insert(21, f"89968x95792462 4215 nfsd 1024 8 R 6 0 {'1' * 32}")  # time not a number
# A line without its hash (read), and one a few ms earlier than the line before (sorted in).
lines.insert(30, f"{t} 77 kjournald 4096 8 W 6 0")
lines.insert(31, f"{t - 3_000_000} 77 kjournald 8192 8 W 6 0 {'2' * 32}")
with open("homes_shape.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
