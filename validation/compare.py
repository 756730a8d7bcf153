#!/usr/bin/env python3
"""Runs the product models on the stored lab outputs and prints kernel beside model.

    validation/compare.py [LAB_DIR] [--blocksight PATH] [--markdown]

LAB_DIR defaults to tests/data/lab. For every workload folder (bios.bst + lab.json) it runs
the matching model through the CLI, as a user would:
  dm-cache  blocksight simulate --preset dm-cache-smq --cache-size B --line-size B --mode M
            --origin-size B --created-before S bios.bst --json  (S: when dmsetup create returned, else the
            marker before it, before the first bio)
  md        blocksight predict --json ... (member reads and writes)
  bcache    blocksight simulate --preset bcache-kernel --cache-size B --bucket-size B --mode M
            --seq-cutoff B [--cache-write-latency D] bios.bst --json  (D: where the run traced
            the cache device, the mean of its prio and journal writes' median latencies)
and prints the kernel's counters, the model's and the differences against the targets of
docs/validation.md (hit ratios within 2 points, promotions within 15%, member I/O within 10%).
"""
import json
import os
import subprocess
import sys


EXTRA = os.environ.get("COMPARE_EXTRA", "").split()


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
           "--created-before", str(p.get("create_returned_before_first_bio_s",
                                         p.get("created_before_first_bio_s", 0))),
           os.path.join(d, "bios.bst"), "--json", "-q"] + EXTRA
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


def iodepth(fio):
    for a in str(fio).split():
        if a.startswith("--iodepth="):
            return int(a.split("=", 1)[1])
    return 1


def md(bs, d, lab):
    p = lab["params"]
    cmd = [bs, "predict", "--md-members", "--layout", f"raid{p['level']}", "--disks", str(p["disks"]),
           "--chunk", str(p["chunk_bytes"]), "--qd", str(p.get("iodepth") or iodepth(p.get("fio", "")))]
    if p.get("stripe_cache"):
        cmd += ["--stripe-cache-size", str(p["stripe_cache"])]
    if p.get("raid10_layout"):
        cmd += ["--raid10-layout", p["raid10_layout"]]
    cmd += [os.path.join(d, "bios.bst"), "--json", "-q"]
    t = run(cmd)["result"]["total"]
    k = {"read_bios": 0, "read_sectors": 0, "write_bios": 0, "write_sectors": 0}
    for m in lab.get("members_bios", {}).values():
        for key in k:
            k[key] += m[key]
    rows = []
    for what in ("read", "write"):
        rows.append((f"member {what} bios", k[what + "_bios"], t[what + "_bios"],
                     rel(k[what + "_bios"], t[what + "_bios"])))
        rows.append((f"member {what} KiB", k[what + "_sectors"] // 2, t[what + "_bytes"] // 1024,
                     rel(k[what + "_sectors"] // 2, t[what + "_bytes"] // 1024)))
    return rows


def bcache(bs, d, lab):
    p = lab["params"]
    mode = {"writeback": "wb", "writearound": "wa"}.get(p["mode"], "wt")
    cmd = [bs, "simulate", "--preset", "bcache-kernel", "--cache-size", str(p["cache_bytes"]),
           "--bucket-size", str(p["bucket_bytes"]), "--seq-cutoff", str(p["sequential_cutoff"]),
           "--mode", mode, os.path.join(d, "bios.bst"), "--json", "-q"] + EXTRA
    c = lab.get("cache_device") or {}
    prio, journal = (c.get("prio_write_us") or {}).get("median"), (c.get("journal_write_us") or {}).get("median")
    if prio and journal:
        # The measured metadata write latency: the refill (a prio write, then a journal write)
        # lasts the sum of the two medians.
        cmd += ["--cache-write-latency", f"{(prio + journal) / 2:.0f}us"]
    # The run's congestion thresholds (older runs set both to 0 and say so in
    # `congested_thresholds_us`); with them on, the cache device's read latency is the median
    # the run measured on it.
    rt = int(p.get("congested_read_threshold_us", 0) or 0)
    wt = int(p.get("congested_write_threshold_us", 0) or 0)
    cmd += ["--congested-read-threshold-us", str(rt), "--congested-write-threshold-us", str(wt)]
    read = (c.get("data_read_us") or {}).get("median")
    if (rt or wt) and read:
        cmd += ["--cache-read-latency", f"{read:.0f}us"]
    if "attached_before_first_bio_s" in p:
        # When the backing device was attached: the writeback rate's 5 s updates run from then.
        cmd += ["--attached-before", f"{p['attached_before_first_bio_s']}s"]
    k = lab["counters"]
    # Runs that recorded when the counters were read give the model that idle time after the
    # last bio (background writeback runs on meanwhile).
    idle = ["--idle-after", f"{k['counters_after_s']}s"] if "counters_after_s" in k else []
    s = run(cmd + idle)["result"]["stats"]
    # The kernel counts one read more than the trace holds, a miss: the partition scan when
    # bcache0 appears, before tracing starts (tests/tests/lab.rs checks it is exactly one).
    kc = [k["hits"], k["misses"] - 1, k["bypass_hits"], k["bypass_misses"]]
    mc = [s["cache_hits"], s["cache_misses"], s["cache_bypass_hits"], s["cache_bypass_misses"]]
    rows = []
    for what, f in (("cache_hit_ratio %", lambda c: ratio(c[0], c[1])),
                    ("read hit % (bypassed incl.)", lambda c: ratio(c[0] + c[2], c[1] + c[3])),
                    ("read bypass %", lambda c: ratio(c[2] + c[3], c[0] + c[1]))):
        kr, mr = f(kc), f(mc)
        rows.append((what, "-" if kr is None else f"{kr*100:.1f}", "-" if mr is None else f"{mr*100:.1f}",
                     pts(kr, mr)))
    for i, what in enumerate(("hits", "misses", "bypass hits", "bypass misses")):
        rows.append((what, kc[i], mc[i], rel(kc[i], mc[i])))
    if rt or wt:
        kb = (lab.get("bypass_events") or {}).get("congested", 0)
        rows.append(("congested bypasses", kb, s.get("bypassed_congested", 0),
                     rel(kb, s.get("bypassed_congested", 0))))
    rows.append(("miss collisions", k["miss_collisions"], s["cache_miss_collisions"],
                 rel(k["miss_collisions"], s["cache_miss_collisions"])))
    if "allocator" in lab:
        a = lab["allocator"]["alloc_fail"]
        rows.append(("alloc failures", a, s.get("alloc_failures", 0), rel(a, s.get("alloc_failures", 0))))
    kd = hsize(k["dirty_data"])
    rows.append(("dirty data MiB", f"{kd / 2**20:.1f}", f"{s['dirty_bytes'] / 2**20:.1f}",
                 rel(kd, s["dirty_bytes"])))
    if "idle_dirty_data" in k:
        after = run(cmd + ["--idle-after", f"{k['idle_counters_after_s']}s"])["result"]["stats"]
        kd = hsize(k["idle_dirty_data"])
        rows.append((f"dirty data MiB {float(k['idle_counters_after_s']):.0f} s after the last bio",
                     f"{kd / 2**20:.1f}", f"{after['dirty_bytes'] / 2**20:.1f}",
                     rel(kd, after["dirty_bytes"])))
    return rows


def hsize(text):
    """A size as bcache's sysfs prints it (bch_hprint: "8.4M", "512k", "0")."""
    text = str(text).strip()
    units = {"k": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if text and text[-1] in units:
        return float(text[:-1]) * units[text[-1]]
    return float(text)


def main():
    args = sys.argv[1:]
    lab_dir = "tests/data/lab"
    bs = "blocksight"
    markdown = False
    while args:
        a = args.pop(0)
        if a == "--blocksight":
            bs = args.pop(0)
        elif a == "--markdown":
            markdown = True
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
        elif product == "md":
            rows = md(bs, d, lab)
        elif product == "bcache":
            rows = bcache(bs, d, lab)
        else:
            continue
        if os.environ.get("COMPARE_SHORT"):
            print(f"{name:<34}" + "  ".join(f"{r[0].split()[0][:5]} {r[1]}/{r[2]}" for r in rows))
        elif markdown:
            for r in rows:
                print(f"| {name} | {' | '.join(str(x) for x in r)} |")
        else:
            print(name)
            for r in rows:
                print(f"  {r[0]:<14} kernel {str(r[1]):>8}  model {str(r[2]):>8}  diff {r[3]}")


if __name__ == "__main__":
    main()
