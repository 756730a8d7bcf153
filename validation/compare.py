#!/usr/bin/env python3
"""Runs the product models on the stored lab outputs and prints kernel beside model.

    validation/compare.py [LAB_DIR] [--blocksight PATH] [--markdown]

LAB_DIR defaults to tests/data/lab. For every workload folder (bios.bst + lab.json) it runs
the matching model through the CLI, as a user would:
  dm-cache  blocksight simulate --preset dm-cache-smq --cache-size B --line-size B --mode M
            --origin-size B --created-at S bios.bst --json
  md        blocksight predict --json ... (member reads and writes)
  bcache    blocksight simulate --preset bcache-model ...
and prints the kernel's counters, the model's and the differences against the targets of
docs/validation.md (hit ratios within 2 points, promotions within 15%, member I/O within 10%).
"""
import json
import os
import subprocess
import sys


def run(cmd):
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


def ratio(h, m):
    return h / (h + m) if h + m else None


def pts(a, b):
    if a is None or b is None:
        return "-"
    return f"{(b - a) * 100:+.1f}"


def rel(a, b):
    if a == 0:
        return "0" if b == 0 else "inf"
    return f"{(b - a) / a * 100:+.0f}%"


def dmcache(bs, d, lab):
    p = lab["params"]
    cmd = [bs, "simulate", "--preset", "dm-cache-smq", "--cache-size", str(p["cache_bytes"]),
           "--line-size", str(p["block_bytes"]), "--origin-size", str(p["origin_bytes"]),
           "--mode", "wb" if p["mode"] == "writeback" else "wt",
           "--created-before", str(p.get("created_before_first_bio_s", 0)),
           os.path.join(d, "bios.bst"), "--json", "-q"]
    s = run(cmd)["result"]["status"]
    k = lab["counters"]
    rows = []
    for what, kh, km, mh, mm in (("read", k["read_hits"], k["read_misses"], s["read_hits"], s["read_misses"]),
                                 ("write", k["write_hits"], k["write_misses"], s["write_hits"], s["write_misses"])):
        kr, mr = ratio(kh, km), ratio(mh, mm)
        rows.append((f"{what} hit %", "-" if kr is None else f"{kr*100:.1f}",
                     "-" if mr is None else f"{mr*100:.1f}", pts(kr, mr)))
    rows.append(("promotions", k["promotions"], s["promotions"], rel(k["promotions"], s["promotions"])))
    rows.append(("demotions", k["demotions"], s["demotions"], rel(k["demotions"], s["demotions"])))
    return rows


def main():
    args = sys.argv[1:]
    lab_dir = "tests/data/lab"
    bs = "blocksight"
    md = False
    while args:
        a = args.pop(0)
        if a == "--blocksight":
            bs = args.pop(0)
        elif a == "--markdown":
            md = True
        else:
            lab_dir = a
    for name in sorted(os.listdir(lab_dir)):
        d = os.path.join(lab_dir, name)
        f = os.path.join(d, "lab.json")
        if not os.path.isfile(f):
            continue
        with open(f) as fh:
            lab = json.load(fh)
        product = lab["params"].get("product")
        if product == "dm-cache":
            rows = dmcache(bs, d, lab)
        else:
            continue
        if md:
            for r in rows:
                print(f"| {name} | {' | '.join(str(x) for x in r)} |")
        else:
            print(name)
            for r in rows:
                print(f"  {r[0]:<14} kernel {str(r[1]):>8}  model {str(r[2]):>8}  diff {r[3]}")


if __name__ == "__main__":
    main()
