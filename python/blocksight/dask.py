"""Fleet jobs on a Dask cluster: Blocksight's per-volume jobs mapped over the volumes of a
partitioned Parquet dataset (``blocksight export --to parquet --partition-by device``), and one
volume too large for one worker spread over k workers by spatial hash slices.

Use a ``dask.distributed.Client`` you have (a scheduler address in real use, a
``LocalCluster`` in tests). Workers need ``blocksight`` installed and the dataset at the same
path (a shared file system). Blocksight's jobs hold the GIL, so start workers with one thread
each and as many processes as cores (``dask worker ADDRESS --nworkers N --nthreads 1``).

Nothing here computes: each task calls the engine's jobs (:func:`blocksight.analyze`,
:func:`blocksight.simulate`) and the partial results of hash slices are combined by the
engine's one merge function (:func:`blocksight.merge`).
"""

from __future__ import annotations

import os
from typing import Any, Optional

import blocksight

from . import _native

__all__ = ["volume_row", "fleet", "simulate_sliced", "mrc_sliced"]


def _cache_for(points: list, target_hit_ratio: float) -> Optional[int]:
    """The smallest size on an MRC whose hit ratio reaches the target, or None."""
    for p in points:
        if p["hit_ratio"] >= target_hit_ratio:
            return int(p["size_bytes"])
    return None


def volume_row(device: str, path: str, target_hit_ratio: float = 0.5, policy: str = "lru", mode: Optional[str] = None) -> dict:
    """One volume's row: its footprint, hot data (90% of I/O), the recommended cache size, the
    hit ratio a ``policy`` cache of that size reaches and the back-end I/O it saves, and the
    cache it needs for ``target_hit_ratio`` (from the analysis's LRU curve)."""
    a = blocksight.analyze(path)
    hot = a["hot"]["all"]
    hot90 = next((h["bytes"] for h in hot["hot_sizes"] if h["io_fraction"] == 0.9), None)
    rec = (a["cache_sizing"].get("recommendation") or {}).get("recommended")
    row: dict[str, Any] = {
        "device": device,
        "requests": a["summary"]["events"],
        "footprint_bytes": hot["footprint_bytes"],
        "hot90_bytes": hot90,
        "recommended_cache_bytes": rec["size_bytes"] if rec else None,
        "hit_ratio": None,
        "backend_ops_saved": None,
        "backend_ops_reduction": None,
    }
    if rec and rec["size_bytes"] > 0:
        s = blocksight.simulate(path, cache_size=f"{rec['size_bytes']}", policy=policy, mode=mode)
        whole = s["runs"][0]["result"]["whole"]
        c = whole["counts"]
        front = c["read"]["requests"] + c["write"]["requests"]
        back = c["backend"]["read_ops"] + c["backend"]["write_ops"]
        row["hit_ratio"] = whole["ratios"]["line_hit_ratio"]
        row["backend_ops_saved"] = front - back
        row["backend_ops_reduction"] = whole["ratios"]["backend_ops_reduction"]
    need = _cache_for(a["cache_sizing"]["points"], target_hit_ratio)
    row["cache_for_target_bytes"] = need
    row["target_reachable"] = need is not None
    return row


def fleet(dataset: str, client, *, target_hit_ratio: float = 0.5, policy: str = "lru", mode: Optional[str] = None):
    """Maps :func:`volume_row` over every ``device=NAME`` volume of ``dataset`` on the Dask
    ``client`` and gathers one pandas DataFrame, one row per volume (sorted by device).
    ``df.attrs["total_cache_for_target_bytes"]`` is the fleet's total cache to buy for
    ``target_hit_ratio`` (volumes that cannot reach it count with their whole footprint, and
    ``df.attrs["unreachable"]`` lists them)."""
    import pandas as pd

    vols = blocksight.devices(dataset)
    futures = client.map(
        volume_row,
        list(vols["device"]),
        list(vols["path"]),
        target_hit_ratio=target_hit_ratio,
        policy=policy,
        mode=mode,
        pure=False,
    )
    rows = client.gather(futures)
    df = pd.DataFrame(rows).sort_values("device").reset_index(drop=True)
    need = df["cache_for_target_bytes"].where(df["target_reachable"], df["footprint_bytes"])
    df.attrs["target_hit_ratio"] = target_hit_ratio
    df.attrs["total_cache_for_target_bytes"] = int(need.fillna(0).sum())
    df.attrs["unreachable"] = list(df.loc[~df["target_reachable"], "device"])
    return df


def _slice_job(kind: str, source: Any, slice: int, slices: int, options: dict) -> dict:
    return blocksight._run(kind, source, options, slice=(slice, slices))


def _sliced_size(cache_size: str, slices: int) -> str:
    # A share of the footprint applies to each slice's own footprint (about 1/k of the whole);
    # a size in bytes is divided among the slices.
    if cache_size.strip().endswith("%"):
        return cache_size
    return str(_native.parse_size(cache_size) // slices)


def simulate_sliced(path: str, client, *, slices: int, cache_size: str, **options: Any) -> dict:
    """One cache over a volume too large for one worker: worker i of k simulates only the
    requests whose 1 MiB extent hashes into slice i (``mix64(block_key)``), with a cache of
    size/k; the partial counts are added by the engine's merge (an estimate of the whole; the
    error is stated in docs/python.md). Every worker reads the whole trace, simulating 1/k."""
    size = _sliced_size(cache_size, slices)
    opts = dict(options, cache_size=size)
    futures = [client.submit(_slice_job, "simulate", path, i, slices, opts, pure=False) for i in range(slices)]
    parts = client.gather(futures)
    return blocksight.merge("simulate", parts, "hash", slices)


def mrc_sliced(path: str, client, *, slices: int, **options: Any) -> dict:
    """A miss-ratio curve of a volume from k hash slices, merged by the SHARDS rule."""
    futures = [client.submit(_slice_job, "mrc", path, i, slices, options, pure=False) for i in range(slices)]
    parts = client.gather(futures)
    return blocksight.merge("mrc", parts, "hash", slices)
