#!/usr/bin/env python3
"""Reference hit counts from libCacheSim (PyPI `libcachesim` 0.3.5, the Python bindings of
libCacheSim) for the cache-policy agreement test in tests/tests/simulate.rs.

Writes two block sequences (one key per line) and, for each policy and capacity (in objects of
size 1, i.e. cache lines), the hit count libCacheSim reports:

    python3 -m venv /tmp/lcs && /tmp/lcs/bin/pip install libcachesim==0.3.5
    /tmp/lcs/bin/python tests/data/cache/make_libcachesim_reference.py

The sequences are generated deterministically (Python's `random` with fixed seeds): a Zipf-like
hot set mixed with sequential scans and uniform noise, which exercises ghost hits, scans and
frequency. Belady gets `next_access_vtime` computed here, as libCacheSim's oracle readers do.
"""
import os
import random

import libcachesim as lcs

HERE = os.path.dirname(os.path.abspath(__file__))
POLICIES = {
    "lru": lcs.LRU, "fifo": lcs.FIFO, "clock": lcs.Clock, "lfu": lcs.LFU, "slru": lcs.SLRU,
    "2q": lcs.TwoQ, "arc": lcs.ARC, "lirs": lcs.LIRS, "sieve": lcs.Sieve, "s3fifo": lcs.S3FIFO,
    "belady": lcs.Belady,
}


def sequence(seed, n, keys, hot):
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) ** 0.9 for i in range(hot)]
    out = []
    scan_pos = None
    while len(out) < n:
        r = rng.random()
        if scan_pos is not None:
            out.append(scan_pos)
            scan_pos += 1
            if rng.random() < 0.02:
                scan_pos = None
        elif r < 0.75:
            out.append(rng.choices(range(hot), weights)[0] * 7 + 3)
        elif r < 0.77:
            scan_pos = rng.randrange(keys)
        else:
            out.append(rng.randrange(keys))
    return out


def next_access(seq):
    nxt = [0] * len(seq)
    last = {}
    for i in range(len(seq) - 1, -1, -1):
        nxt[i] = last.get(seq[i], 2**63 - 1)
        last[seq[i]] = i
    return nxt


def hits(policy, cap, seq, nxt):
    cache = POLICIES[policy](cap)
    h = 0
    for i, k in enumerate(seq):
        req = lcs.Request()
        req.obj_id = k
        req.obj_size = 1
        req.clock_time = i
        req.next_access_vtime = nxt[i]
        h += bool(cache.get(req))
    return h


def main():
    traces = {
        "small": (sequence(1, 5_000, 3_000, 400), [20, 50, 100, 200, 500]),
        "medium": (sequence(2, 100_000, 60_000, 8_000), [100, 500, 1_000, 2_000, 5_000, 10_000]),
    }
    for name, (seq, caps) in traces.items():
        with open(os.path.join(HERE, f"lcs_{name}.keys"), "w") as f:
            f.write("\n".join(map(str, seq)) + "\n")
        nxt = next_access(seq)
        with open(os.path.join(HERE, f"lcs_{name}.hits"), "w") as f:
            f.write(f"# libcachesim {getattr(lcs, '__version__', '0.3.5')}: policy capacity_lines hits (of {len(seq)} requests)\n")
            for policy in POLICIES:
                for cap in caps:
                    f.write(f"{policy} {cap} {hits(policy, cap, seq, nxt)}\n")


if __name__ == "__main__":
    main()
