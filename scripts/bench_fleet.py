"""The Dask measurement behind scripts/bench-fleet.sh (see there): the fleet job's throughput
on 1 and 2 worker processes. (The hash slices' error is measured by analyzer-core's
hash_slices example, one decode for every slice.)"""

import json
import os
import shutil
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq

import blocksight.dask as bd
from dask.distributed import Client, LocalCluster

cli = os.environ.get("BLOCKSIGHT_BIN", "blocksight")


def load():
    """The machine's load (1, 5, 15 min), printed beside every number: it is shared."""
    return "load %.2f %.2f %.2f" % os.getloadavg()


def sh(*args):
    return subprocess.run([cli, *map(str, args)], check=True, capture_output=True, text=True).stdout


def main():
    # Dask starts its worker processes by spawning, which re-imports this file: the work must
    # not run at import.
    trace, out = sys.argv[1], sys.argv[2]
    stat = json.loads(sh("stat", trace, "--json"))
    requests = stat["events"]
    print(f"trace: {trace}: {requests:,} requests, footprint {stat['footprint_bytes'] / 2**30:.2f} GiB", flush=True)

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
        print(f"fleet on {workers} worker(s): {len(df)} volumes, {total:,} requests in {secs:.1f} s: {total / secs / 1e6:.3f} M requests/s (analyze + simulate each); total cache for 30% hits {df.attrs['total_cache_for_target_bytes'] / 2**30:.2f} GiB ({load()})", flush=True)


if __name__ == "__main__":
    main()
