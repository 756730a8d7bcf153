"""The measurements behind scripts/bench-fleet.sh (see there)."""

import json
import os
import shutil
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq

import blocksight
import blocksight.dask as bd
from dask.distributed import Client, LocalCluster

trace, out = sys.argv[1], sys.argv[2]
cli = os.environ["BLOCKSIGHT_BIN"]


def sh(*args):
    return subprocess.run([cli, *map(str, args)], check=True, capture_output=True, text=True).stdout


stat = json.loads(sh("stat", trace, "--json"))
requests = stat["events"]
print(f"trace: {trace}: {requests:,} requests, footprint {stat['footprint_bytes'] / 2**30:.2f} GiB")

# (1) Hash slices against the exact run: an LRU write-back cache of 10% of the footprint.
t = time.time()
exact = blocksight.simulate(trace, cache_size="10%", policy="lru", mode="wb")
exact_secs = time.time() - t
run = exact["runs"][0]["result"]
size = run["capacity_bytes"]
want = run["whole"]["ratios"]["line_hit_ratio"]
print(f"exact: cache {size / 2**30:.2f} GiB, line hit ratio {want:.5f} ({exact_secs:.1f} s, two passes)")
for k in (2, 4, 8, 16):
    t = time.time()
    parts = [blocksight._run("simulate", trace, dict(cache_size=str(size // k), policy="lru", mode="wb"), slice=(i, k)) for i in range(k)]
    merged = blocksight.merge("simulate", parts, "hash", k)
    got = merged["runs"][0]["result"]["whole"]["ratios"]["line_hit_ratio"]
    print(f"k={k:2d}: line hit ratio {got:.5f}, error {abs(got - want):.5f} ({time.time() - t:.1f} s for the k slices in one process)")

# (2) The fleet job on 1 and 2 worker processes: the trace spread over 24 volumes.
ds = os.path.join(out, "fleet-ds")
if not os.path.isdir(ds):
    whole = os.path.join(out, "big.parquet")
    sh("export", trace, "--to", "parquet", "-o", whole)
    table = pq.read_table(whole)
    vol = (table.column("offset_bytes").to_numpy() >> 30) % 24
    names = pa.array([f"vol{v:02d}" for v in vol])
    table = table.set_column(table.column_names.index("device"), "device", names)
    spread = os.path.join(out, "spread.parquet")
    pq.write_table(table, spread)
    del table
    sh("export", spread, "--to", "parquet", "--partition-by", "device", "-o", ds)
    os.remove(whole)
    os.remove(spread)
for workers in (1, 2):
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    t = time.time()
    df = bd.fleet(ds, client, target_hit_ratio=0.3)
    secs = time.time() - t
    client.close()
    cluster.close()
    total = int(df["requests"].sum())
    print(f"fleet on {workers} worker(s): {len(df)} volumes, {total:,} requests in {secs:.1f} s: {total / secs / 1e6:.2f} M requests/s (analyze + simulate each); total cache for 30% hits {df.attrs['total_cache_for_target_bytes'] / 2**30:.2f} GiB")
