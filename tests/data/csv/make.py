#!/usr/bin/env python3
"""Writes the generic CSV fixtures:
- semicolon_us.csv: a user-style export from some storage tool (semicolons, a header line,
  microsecond times, offsets and lengths in 512-byte sectors, numeric op codes 0/1, latency
  in microseconds), read with the mapping in semicolon_us.columns;
- export_header.csv: the layout Blocksight's own CSV export writes, read with no mapping.
Deterministic (fixed seed); each has a few malformed lines."""
import random
random.seed(5)
t = 0
rows = ["ts_us;op;lba;sectors;disk;lat_us"]
for i in range(30):
    t += random.randint(10, 5000)
    rows.append(f"{t};{random.choice([0, 1, 1])};{random.randint(0, 1 << 20)};"
                f"{random.choice([8, 16, 256])};{random.choice(['sda', 'sdb'])};"
                f"{random.randint(50, 9000)}.{random.randint(0, 999):03d}")
rows.insert(7, "123;2;100;8;sda;1")       # op 2 is not mapped
rows.insert(12, "124;0;100;8")            # too few fields
with open("semicolon_us.csv", "w") as f:
    f.write("\n".join(rows) + "\n")
with open("semicolon_us.columns", "w") as f:
    f.write("time=0,op=1,offset=2,len=3,device=4,latency=5,time_unit=us,latency_unit=us,"
            "offset_unit=sector,len_unit=sector,delimiter=;,op_read=0,op_write=1\n")
t = 0
rows = ["time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid"]
for i in range(24):
    t += random.randint(1000, 900000)
    op = random.choice(["read", "write", "write", "discard", "flush"])
    dev = random.choice(['"8,0"', "nvme0n1", "vdb"])
    off, ln = (0, 0) if op == "flush" else (random.randint(0, 1 << 24) * 4096, random.choice([4096, 65536]))
    lat = random.choice(["", str(random.randint(1000, 5000000))])
    pid = random.choice(["", str(random.randint(1, 40000))])
    rows.append(f"{t},{dev},{off},{ln},{op},{lat},{pid}")
rows.insert(5, "17,vdb,4096,4096,erase,,")          # unknown op
rows.insert(9, "18,\"8,0,4096,4096,read,,")          # unterminated quote
with open("export_header.csv", "w") as f:
    f.write("\n".join(rows) + "\n")
