#!/usr/bin/env python3
"""Files a run of guest/md-bitmap.sh for tests/data/lab-bitmap, or of guest/md-safemode.sh
for tests/data/lab-safemode.

    validation/collect_bitmap.py OUT_DIR DEST [--blocksight PATH]

OUT_DIR is lab.sh's output (out.txt, console.log). For every workload it writes DEST/NAME.bst
(the bios md0 was asked to serve, with their completions where the run traced them,
`blocksight import --format tracefs`) and an entry of DEST/kernel.json: the array (level,
members, the array file describing it) and what md sent its members (their block_bio_queue):
reads, writes, and of the writes those to the bitmap (sectors 9-2047: after the 1.2
superblock at sector 8, before the data at 2048) and to the superblock. The bitmap run's
counts stop when fio ended (the daemon clears bits long after); the safe-mode run's (`sm-`,
`smb-` with a bitmap) go on to the end of the phase, 3 s later, so that the clean mark after
the last write is in.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

LINE = re.compile(
    r"^\s*\S+\s+\[\d+\]\s+\S+\s+([\d.]+): block_bio_queue: (\d+),(\d+) (\S+) (\d+) \+ (\d+)"
)
LEVEL = {"bm-r1-": (1, 2), "bm-r5-": (5, 4), "bm-r6-": (6, 4), "bm-r10-": (10, 4),
         "sm-r1-": (1, 2), "sm-r5-": (5, 4), "sm-r6-": (6, 4), "sm-r10-": (10, 4),
         "smb-r1-": (1, 2), "smb-r5-": (5, 4)}
COMPLETE = re.compile(r"^\s*\S+\s+\[\d+\]\s+\S+\s+[\d.]+: block_bio_complete: (\d+),(\d+) ")


def main():
    args = sys.argv[1:]
    blocksight = "target/release/blocksight"
    if "--blocksight" in args:
        i = args.index("--blocksight")
        blocksight = args[i + 1]
        del args[i : i + 2]
    out, dest = Path(args[0]), Path(args[1])
    dest.mkdir(parents=True, exist_ok=True)
    ends = {}
    for line in (out / "console.log").read_text(errors="replace").splitlines():
        m = re.search(r"### (\S+) fio-end ([\d.]+)", line)
        if m:
            ends[m.group(1)] = float(m.group(2))
    phases, cur = {}, None
    for line in (out / "out.txt").read_text(errors="replace").splitlines(keepends=True):
        if line.startswith("# PHASE"):
            cur = line.split()[2]
            phases[cur] = {"devs": {}, "lines": []}
        elif cur is not None:
            m = re.match(r"# DEV (\d+),(\d+) (\S+)", line)
            if m:
                phases[cur]["devs"][(m.group(1), m.group(2))] = m.group(3)
            else:
                phases[cur]["lines"].append(line)
    kernel = {}
    for name, p in phases.items():
        if name not in ends:
            continue
        level, members = next(v for k, v in LEVEL.items() if name.startswith(k))
        counts = dict(member_read_bios=0, member_write_bios=0, bitmap_write_bios=0,
                      superblock_write_bios=0)
        md_lines = []
        cut = ends[name] + 0.05 if name.startswith("bm-") else float("inf")
        for line in p["lines"]:
            c = COMPLETE.match(line)
            if c and p["devs"].get((c.group(1), c.group(2)), "").startswith("md"):
                md_lines.append(line)
                continue
            m = LINE.match(line)
            if not m:
                continue
            dev = p["devs"].get((m.group(2), m.group(3)), "")
            if dev.startswith("md"):
                md_lines.append(line)
                continue
            if not dev.startswith("vd") or float(m.group(1)) > cut:
                continue
            sector, rwbs = int(m.group(5)), m.group(4)
            if "W" in rwbs:
                counts["member_write_bios"] += 1
                if sector == 8:
                    counts["superblock_write_bios"] += 1
                elif sector < 2048:
                    counts["bitmap_write_bios"] += 1
            elif "R" in rwbs:
                counts["member_read_bios"] += 1
        text = dest / f"{name}.md.txt"
        with open(text, "w") as f:
            for (a, b), d in p["devs"].items():
                f.write(f"# DEV {a},{b} {d}\n")
            f.writelines(md_lines)
        subprocess.run([blocksight, "import", "-q", "--format", "tracefs", str(text), "-o",
                        str(dest / f"{name}.bst")], check=True)
        text.unlink()
        kernel[name] = dict(level=level, members=members, array=f"r{level}.json", **counts)
        print(name, kernel[name])
    (dest / "kernel.json").write_text(json.dumps(kernel, indent=1) + "\n")


if __name__ == "__main__":
    main()
