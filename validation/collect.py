#!/usr/bin/env python3
"""Files a lab run's workloads as small stored lab outputs.

    validation/collect.py OUT_DIR/out.txt DEST_DIR [--blocksight PATH] [--only NAME...]

For every `# WORKLOAD name k=v ...` block of the guest's dump (validation/guest/common.sh) it
writes DEST_DIR/<name>/:
  bios.bst   the bios the stacked device (dm-cache, bcache or md) was asked to serve, as
             `blocksight import --format tracefs --action Q` reads them from its
             block_bio_queue lines
  lab.json   the workload's parameters, the kernel's counters and, for md, what md sent to
             each member (bios, sectors; from the members' block_bio_queue lines) and the
             members' /sys/block/*/stat differences
"""
import json
import os
import re
import subprocess
import sys
import tempfile

LINE = re.compile(r"^\s*(?P<task>.+?)\s+\[(?P<cpu>\d+)\]\s+\S*\s*(?P<ts>\d+\.\d+): (?P<ev>block_bio_queue|block_bio_complete): "
                  r"(?P<maj>\d+),(?P<min>\d+) (?P<rwbs>\S+) (?P<sector>\d+) \+ (?P<len>\d+)")
REQ_END = re.compile(r"^(?P<pre>.*?\d+\.\d+: )bcache_request_end: \d+,\d+ (?P<rwbs>\S+) \d+ \+ "
                     r"(?P<len>\d+) \(from (?P<omaj>\d+),(?P<omin>\d+) @ (?P<osector>\d+)\)")
STAT_FIELDS = ["reads", "reads_merged", "sectors_read", "read_ms", "writes", "writes_merged",
               "sectors_written", "write_ms", "in_flight", "io_ms", "weighted_ms"]


def parse_params(text):
    """k=v pairs; a value may be quoted with double quotes."""
    out = {}
    for m in re.finditer(r'(\w+)=("([^"]*)"|\S*)', text):
        v = m.group(3) if m.group(3) is not None else m.group(2)
        out[m.group(1)] = int(v) if re.fullmatch(r"-?\d+", v) else v
    return out


def workloads(path):
    cur = None
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("# WORKLOAD "):
                rest = line[len("# WORKLOAD "):]
                name, _, params = rest.partition(" ")
                cur = {"name": name, "params": parse_params(params), "devs": {}, "trace": [],
                       "counters": [], "overruns": None}
            elif cur is None:
                continue
            elif line.startswith("# DEV "):
                parts = line.split()
                cur["devs"][parts[2]] = parts[3:]
            elif line.startswith("# OVERRUNS "):
                cur["overruns"] = int(line.split()[2])
            elif line.startswith("# COUNTER "):
                cur["counters"].append(line[len("# COUNTER "):])
            elif line.startswith("# END "):
                yield cur
                cur = None
            elif "block_bio_queue:" in line or "block_bio_complete:" in line:
                cur["trace"].append(line)
            elif "bcache_request_end:" in line:
                # bcache0's own bios get no block_bio_complete (ALLOCTRACE runs, guest/bcache.sh):
                # its request end is their completion, filed as one for the importer as it is. A
                # bio whose iterator was consumed (writes: `+ 0`) is reported at its end sector;
                # the importer matches bios by end sector (docs/formats.md, tracefs).
                m = REQ_END.match(line)
                if m:
                    dev, sector = f"{m['omaj']},{m['omin']}", int(m["osector"])
                    cur["trace"].append(
                        f"{m['pre']}block_bio_complete: {dev} {m['rwbs']} {sector} + {m['len']} [0]")
            elif "bcache_bypass_congested:" in line or "bcache_bypass_sequential:" in line:
                # bcache's own bypass decisions (check_should_bypass), one line per bio.
                ev = re.search(r"bcache_bypass_(\w+):", line).group(1)
                cur.setdefault("bypass_events", {}).setdefault(ev, 0)
                cur["bypass_events"][ev] += 1
            elif "bcache_alloc_fail:" in line:
                cur.setdefault("alloc_fail", []).append(line)
            elif "bcache_journal_write:" in line or "bcache_gc_start:" in line \
                    or "bcache_gc_end:" in line:
                ev = re.search(r"(bcache_\w+):", line).group(1)
                cur.setdefault("bcache_events", {}).setdefault(ev, 0)
                cur["bcache_events"][ev] += 1
            elif "tracing_mark_write: blocksight-created" in line:
                m = re.search(r"(\d+\.\d+): tracing_mark_write", line)
                if m:
                    cur["created_ts"] = float(m.group(1))
            elif "tracing_mark_write: blocksight-attached" in line:
                # bcache: when the backing device was attached (the kernel log's clock, the
                # trace's): its writeback rate updates run every 5 s from then.
                m = re.search(r"blocksight-attached (\d+\.\d+)", line)
                if m:
                    cur["attached_ts"] = float(m.group(1))
            elif "tracing_mark_write: blocksight-create-returned" in line:
                m = re.search(r"(\d+\.\d+): tracing_mark_write", line)
                if m:
                    cur["returned_ts"] = float(m.group(1))


def quantiles(xs):
    """Median and quartiles of `xs` (µs, rounded), or None."""
    if not xs:
        return None
    xs = sorted(xs)
    q = lambda f: round(xs[min(len(xs) - 1, int(f * len(xs)))], 1)
    return {"n": len(xs), "p25": q(0.25), "median": q(0.5), "p75": q(0.75)}


def cache_device(lines, bucket_sectors, read_threshold_us=0, write_threshold_us=0):
    """What bcache asked of its cache device (ALLOCTRACE runs): its metadata writes (REQ_META:
    prio/gen buckets, whole buckets; journal entries, with a flush/FUA), their latencies
    (block_bio_queue to block_bio_complete, µs) and the allocator's refill time: from each prio
    write's queueing to the completion of the journal write that follows it (`bch_prio_write`
    writes the gens, then journals them, before the invalidated buckets can be used)."""
    inflight, done = {}, []
    for m in lines:
        key = (m["rwbs"][:1], int(m["sector"]))
        ts = float(m["ts"]) * 1e6
        if m["ev"] == "block_bio_queue":
            inflight.setdefault(key, []).append((ts, int(m["len"])))
        elif key in inflight and inflight[key]:
            q, n = inflight[key].pop(0)
            done.append((q, ts, m["rwbs"], n))
    done.sort()
    # Metadata writes are REQ_SYNC|REQ_META ("WSM"; a journal write's flush and FUA are
    # dropped before dm-0 sees them, null_blk having no write cache): prio/gen writes are whole
    # buckets, journal entries are smaller. Btree node writes are REQ_META too but are not
    # whole buckets (a node is at most 256 KiB, one bucket here being 64 KiB: they can be;
    # bcache_btree_write is not traced, so a whole-bucket btree write would count as prio).
    meta = [d for d in done if "W" in d[2] and "M" in d[2]]
    prio = [d for d in meta if d[3] == bucket_sectors]
    journal = [d for d in meta if d[3] < bucket_sectors]
    data = [d for d in done if "W" in d[2] and "M" not in d[2]]
    reads = [d for d in done if "R" in d[2]]
    refill = []
    for q, _, _, _ in prio:
        after = [c for (jq, c, _, _) in journal if jq >= q]
        if after:
            refill.append(min(after) - q)
    return {"prio_writes": len(prio), "journal_writes": len(journal), "data_writes": len(data),
            "prio_write_us": quantiles([c - q for q, c, _, _ in prio]),
            "journal_write_us": quantiles([c - q for q, c, _, _ in journal]),
            "data_write_us": quantiles([c - q for q, c, _, _ in data]),
            "refill_us": quantiles(refill),
            "data_reads": len(reads), "data_read_us": quantiles([c - q for q, c, _, _ in reads]),
            # What bcache's congestion accounting (bch_bbio_count_io_errors) compares with its
            # thresholds: local_clock_us() is nanoseconds >> 10, so a threshold of T "us" is
            # T * 1.024 µs. Every cache-device bio is counted here, metadata included (the
            # kernel counts data and btree bios, not journal or prio writes).
            "reads_over_threshold": sum(1 for q, c, _, _ in reads
                                        if read_threshold_us and c - q > read_threshold_us * 1.024),
            "writes_over_threshold": sum(1 for q, c, r, _ in done if "W" in r and write_threshold_us
                                         and c - q > write_threshold_us * 1.024)}


def rw_of(rwbs):
    if "D" in rwbs:
        return "discard"
    if "W" in rwbs:
        return "write"
    if "R" in rwbs:
        return "read"
    return "other"


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    src, dest = args[0], args[1]
    blocksight = "blocksight"
    only = None
    rest = args[2:]
    while rest:
        a = rest.pop(0)
        if a == "--blocksight":
            blocksight = rest.pop(0)
        elif a == "--only":
            only = set(rest)
            rest = []
    for w in workloads(src):
        if only and w["name"] not in only:
            continue
        p = w["params"]
        dev = p.get("dev", "")
        names = {v[0] if v else "": k for k, v in w["devs"].items()}
        stacked, members, first_ts, cachedev = [], {}, None, []
        cache_dev = next((d for d, v in w["devs"].items() if v and v[0] == "dm-0"), None) \
            if p.get("product") == "bcache" else None
        # md's members are the first `disks` virtio disks (the guest's `members=` list is not
        # quoted in the record, so it is rebuilt here).
        member_names = ["vd" + chr(ord("a") + i) for i in range(int(p.get("disks", 0) or 0))]
        member_devs = {w_dev: n for n, w_dev in names.items() if n in member_names}
        for line in w["trace"]:
            m = LINE.match(line)
            if not m:
                continue
            d = f"{m['maj']},{m['min']}"
            if d == dev:
                stacked.append(line)
                if m["ev"] == "block_bio_queue" and first_ts is None:
                    first_ts = float(m["ts"])
            elif d == cache_dev:
                cachedev.append(m)
            elif d in member_devs and m["ev"] == "block_bio_queue":
                name = member_devs[d]
                c = members.setdefault(name, {"read_bios": 0, "read_sectors": 0,
                                              "write_bios": 0, "write_sectors": 0})
                kind = rw_of(m["rwbs"])
                if m["rwbs"].startswith("F") and int(m["len"]) == 0:
                    # An empty cache flush (md sends every member one per flush), counted
                    # apart from the writes.
                    c["flush_bios"] = c.get("flush_bios", 0) + 1
                elif kind in ("read", "write"):
                    c[kind + "_bios"] += 1
                    c[kind + "_sectors"] += int(m["len"])
        out = os.path.join(dest, w["name"])
        os.makedirs(out, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False) as t:
            t.write("\n".join(stacked) + "\n")
            tmp = t.name
        subprocess.run([blocksight, "import", "--format", "tracefs", "--action", "Q", tmp,
                        "-o", os.path.join(out, "bios.bst")], check=True,
                       stdout=subprocess.DEVNULL)
        os.unlink(tmp)
        counters, before, after = {}, {}, {}
        for c in w["counters"]:
            parts = c.split()
            if parts[0] in ("before", "after"):
                vals = dict(zip(STAT_FIELDS, map(int, parts[2:])))
                (before if parts[0] == "before" else after)[parts[1]] = vals
            else:
                counters.update(parse_params(c))
        if "created_ts" in w and first_ts is not None:
            # Seconds from the cache's creation (its first tick) to the first bio.
            p["created_before_first_bio_s"] = round(first_ts - w["created_ts"], 6)
        if "attached_ts" in w and first_ts is not None:
            p["attached_before_first_bio_s"] = round(first_ts - w["attached_ts"], 6)
        if "returned_ts" in w and first_ts is not None:
            # `dmsetup create` returned (the resume, smq's first tick, lies between the two).
            p["create_returned_before_first_bio_s"] = round(first_ts - w["returned_ts"], 6)
        nbios = sum(1 for line in stacked if "block_bio_queue:" in line)
        rec = {"name": w["name"], "kernel": "6.1.0-57-cloud-amd64 (Debian), QEMU TCG",
               "params": p, "bios": nbios, "trace_overruns": w["overruns"],
               "counters": counters}
        if cachedev:
            rec["cache_device"] = cache_device(
                cachedev, int(p["bucket_bytes"]) // 512,
                int(p.get("congested_read_threshold_us", 0) or 0),
                int(p.get("congested_write_threshold_us", 0) or 0))
        if "alloc_fail" in w or "bcache_events" in w:
            # bcache_alloc_fail: a bucket allocation that found its free lists empty and did
            # not wait (a read-miss insertion, a write-through write: dropped or invalidated).
            rec["allocator"] = dict(w.get("bcache_events", {}),
                                    alloc_fail=len(w.get("alloc_fail", [])))
        if "bypass_events" in w:
            # bcache_bypass_sequential / bcache_bypass_congested tracepoints: bios bypassed
            # for each reason (reads and writes).
            rec["bypass_events"] = dict(sorted(w["bypass_events"].items()))
        if members:
            rec["members_bios"] = dict(sorted(members.items()))
        if before and after:
            rec["members_stat"] = {d: {k: after[d][k] - before[d][k] for k in
                                       ("reads", "sectors_read", "writes", "sectors_written")}
                                   for d in sorted(after) if d in before}
        with open(os.path.join(out, "lab.json"), "w") as f:
            json.dump(rec, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"{w['name']}: {nbios} bios, overruns {w['overruns']}, {counters or ''}")


if __name__ == "__main__":
    main()
