"""Blocksight from Python: the engine's jobs over block-I/O traces.

Every function takes a trace as a path, a list of paths (merged by time, as the CLI merges
them; Parquet files and partitioned datasets included), or column batches: an iterable of
pyarrow ``RecordBatch``/``Table``, pandas ``DataFrame`` or dicts of numpy arrays with the
columns ``time_nanos``, ``offset_bytes``, ``len_bytes``, ``op`` and optionally ``device``,
``latency_nanos``, ``pid`` (docs/parquet.md). Keyword options are the CLI's flags in
snake_case (``cache_size="10%"``, ``policy="arc"``); ``request=`` passes a job's request whole.

Results are the CLI's ``--json`` output as plain dicts; :func:`points`, :func:`time_bins`,
:func:`runs` and :func:`device_table` turn the tabular parts into pandas DataFrames. The work is done by the same Rust
job layer as the CLI and the web app (``blocksight._native``).
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from . import _native

__version__ = _native.__version__

__all__ = [
    "stat",
    "analyze",
    "simulate",
    "mrc",
    "predict",
    "merge",
    "points",
    "time_bins",
    "runs",
    "device_table",
    "devices",
]

Source = Union[str, os.PathLike, Sequence[Union[str, os.PathLike]], Iterable[Any], Callable[[], Iterable[Any]]]


def _is_paths(source: Any) -> bool:
    if isinstance(source, (str, os.PathLike)):
        return True
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, os.PathLike)) for s in source):
        return True
    return False


def _column(batch: Any, name: str):
    """A column of a batch as a numpy array, or None when the batch has no such column."""
    import numpy as np

    if isinstance(batch, dict):
        if name not in batch or batch[name] is None:
            return None
        return np.asarray(batch[name])
    names = getattr(batch, "column_names", None)  # pyarrow RecordBatch / Table
    if names is not None:
        if name not in names:
            return None
        col = batch.column(name)
        return np.asarray(col.to_numpy(zero_copy_only=False)) if hasattr(col, "to_numpy") else np.asarray(col)
    columns = getattr(batch, "columns", None)  # pandas DataFrame
    if columns is not None:
        if name not in columns:
            return None
        return batch[name].to_numpy()
    raise TypeError(f"a batch is a pyarrow RecordBatch or Table, a pandas DataFrame or a dict of arrays, not {type(batch).__name__}")


def _codes(values):
    """Distinct values (as strings) and each row's index into them: the engine parses names."""
    import numpy as np

    uniques, inverse = np.unique(values.astype(str), return_inverse=True)
    return [str(u) for u in uniques], inverse


def _nullable(array, dtype):
    """Values and validity of a column that may hold nulls (NaN or None)."""
    import numpy as np

    if array is None:
        return None, None
    if array.dtype.kind == "f":
        valid = ~np.isnan(array)
    elif array.dtype.kind == "O":
        valid = np.array([v is not None and v == v for v in array], dtype=bool)
    else:
        return array.astype(dtype).tobytes(), None
    filled = np.where(valid, array, 0).astype(dtype)
    return filled.tobytes(), valid.astype(np.uint8).tobytes()


def _pack(batch: Any) -> dict:
    """One batch in the packed form `_native.run` reads (little-endian fixed-width columns)."""
    import numpy as np

    need = {}
    for name in ("time_nanos", "offset_bytes", "len_bytes", "op"):
        col = _column(batch, name)
        if col is None:
            raise ValueError(f"a batch needs the column {name}")
        need[name] = col
    ops, op_codes = _codes(need["op"])
    packed = {
        "time_nanos": need["time_nanos"].astype("<u8").tobytes(),
        "offset_bytes": need["offset_bytes"].astype("<u8").tobytes(),
        "len_bytes": need["len_bytes"].astype("<u4").tobytes(),
        "op": op_codes.astype(np.uint8).tobytes(),
        "op_names": ops,
    }
    device = _column(batch, "device")
    if device is not None:
        names, codes = _codes(device)
        packed["device"] = codes.astype("<u4").tobytes()
        packed["device_names"] = names
    packed["latency_nanos"], packed["latency_valid"] = _nullable(_column(batch, "latency_nanos"), "<u8")
    packed["pid"], packed["pid_valid"] = _nullable(_column(batch, "pid"), "<u4")
    return packed


def _batches_factory(source: Any) -> Callable[[], Iterable[dict]]:
    """A callable giving a fresh iterable of packed batches per pass. A one-shot iterator is
    read into memory once (a job with two passes reads the trace twice)."""
    if callable(source):
        return lambda: (_pack(b) for b in source())
    if hasattr(source, "column_names") or hasattr(source, "columns") or isinstance(source, dict):
        source = [source]
    if iter(source) is source:
        source = list(source)
    return lambda: (_pack(b) for b in source)


def _run(kind: str, source: Source, options: dict, *, format: Optional[str] = None, slice: Optional[tuple] = None) -> dict:
    opts = {k: v for k, v in options.items() if v is not None and v is not False}
    text = json.dumps(opts)
    s, k = slice if slice is not None else (None, None)
    if _is_paths(source):
        paths = [os.fspath(source)] if isinstance(source, (str, os.PathLike)) else [os.fspath(p) for p in source]
        out = _native.run(kind, text, paths=paths, format=format, slice=s, slices=k)
    else:
        out = _native.run(kind, text, batches=_batches_factory(source), slice=s, slices=k)
    return json.loads(out)


def stat(source: Source, *, format: Optional[str] = None, window: Optional[str] = None, **options: Any) -> dict:
    """Counts, bytes, footprint, duration, sizes, sequential share: ``blocksight stat --json``."""
    return _run("stat", source, dict(window=window, **options), format=format)


def analyze(
    source: Source,
    *,
    line_size: Optional[str] = None,
    exact_mrc: bool = False,
    exact_blocks: Optional[int] = None,
    per_device: bool = False,
    top: Optional[int] = None,
    format: Optional[str] = None,
    window: Optional[str] = None,
    **options: Any,
) -> dict:
    """Workload analysis and hot data with the cache size to buy: ``blocksight analyze --json``.
    ``per_device=True`` adds the per-device table (``--per-device``; its first ``top`` rows, 20 by
    default, the rest added up in ``others``): :func:`device_table` makes it a DataFrame."""
    if top is not None and not per_device:
        raise ValueError("top: needs per_device=True (as --top needs --per-device)")
    return _run(
        "analyze",
        source,
        dict(
            line_size=line_size,
            exact_mrc=exact_mrc,
            exact_blocks=exact_blocks,
            per_device=per_device,
            top=top,
            window=window,
            **options,
        ),
        format=format,
    )


def simulate(
    source: Source,
    *,
    cache_size: Optional[str] = None,
    policy: Optional[str] = None,
    mode: Optional[str] = None,
    preset: Optional[str] = None,
    admission: Optional[str] = None,
    line_size: Optional[str] = None,
    warmup: Optional[str] = None,
    time_bins: Optional[int] = None,
    window: Optional[str] = None,
    format: Optional[str] = None,
    request: Optional[dict] = None,
    **options: Any,
) -> dict:
    """An SSD cache (or a grid: ``policy="lru,arc"``, ``cache_size="1%,10%"``) over the trace:
    ``blocksight simulate --json`` (``runs[]``, one per cell). With ``preset="dm-cache"`` or
    ``"bcache"`` (also named ``"dm-cache-smq"``, ``"bcache-kernel"``), the kernel's own cache
    model instead, as ``simulate --preset ... --json`` prints it (``model``, ``request``,
    ``footprint`` for a size given as a percentage, ``result``, ``assumptions``); the generic approximations are
    ``"dm-cache-approx"`` and ``"bcache-approx"``. Its settings are the CLI's flags in
    snake_case (``seq_cutoff``, ``bucket_size``, ``qd``, ``cache_write_latency``,
    ``writeback_percent``, ``idle_after``, ``attached_before``,
    ``congested_read_threshold_us``, ``congested_write_threshold_us``, ``cache_read_latency``,
    ``origin_size``,
    ``created_before``, ``bio_latency``, ``migration_time``; ``line_size`` is dm-cache's block
    size)."""
    return _run(
        "simulate",
        source,
        dict(
            cache_size=cache_size,
            policy=policy,
            mode=mode,
            preset=preset,
            admission=admission,
            line_size=line_size,
            warmup=warmup,
            time_bins=time_bins,
            window=window,
            request=request,
            **options,
        ),
        format=format,
    )


def mrc(
    source: Source,
    *,
    policy: str = "lru",
    method: Optional[str] = None,
    sizes: Optional[str] = None,
    line_size: Optional[str] = None,
    rate: Optional[float] = None,
    window: Optional[str] = None,
    format: Optional[str] = None,
    request: Optional[dict] = None,
    **options: Any,
) -> dict:
    """Miss-ratio curve over many sizes in one pass: ``blocksight mrc --json``."""
    return _run(
        "mrc",
        source,
        dict(policy=policy, method=method, sizes=sizes, line_size=line_size, rate=rate, window=window, request=request, **options),
        format=format,
    )


def predict(
    source: Source,
    *,
    layout: Optional[str] = None,
    disks: Optional[int] = None,
    disk: Optional[str] = None,
    chunk: Optional[str] = None,
    groups: Optional[int] = None,
    failed: Optional[Union[Sequence[int], str]] = None,
    array: Optional[Union[str, os.PathLike]] = None,
    qd: Optional[int] = None,
    replay: bool = False,
    speed: Optional[float] = None,
    curve: bool = False,
    md_members: bool = False,
    controller: Optional[str] = None,
    cache_size: Optional[str] = None,
    preset: Optional[str] = None,
    policy: Optional[str] = None,
    mode: Optional[str] = None,
    window: Optional[str] = None,
    format: Optional[str] = None,
    request: Optional[dict] = None,
    **options: Any,
) -> dict:
    """IOPS, MB/s and latency of a RAID layout replaying the trace, with and without an SSD
    cache: ``blocksight predict IN --json``; the layout's ``groups`` (RAID 50/60, a controller's
    RAID 10) and ``failed`` disks (``[0, 4]`` or ``"0,4"``: degraded mode; ``rebuilding=True``:
    Linux md rebuilds them beside the load, ``md_sync_speed_min``/``max`` in KiB/s), or ``array=FILE``, an
    array description (``--array``); the cache tier's ``cache_disk`` and ``cache_disks``; the
    controller (``controller="perc-h730"``,
    ``controller_cache``, ``read_ahead``, ``max_iops``, ``max_mbps``, ``parity_rate``) and md's
    settings (``stripe_cache_size``, ``group_thread_cnt``, ``raid10_layout``, ``md_bitmap``,
    ``md_safe_mode_delay``, ``md_stripe_cost``, ``md_page_cost``) as the CLI's flags (others
    through ``request=``;
    ``sample="1024/N"`` replays only slices of the trace, the Array view's estimate). With
    ``md_members=True``, what Linux md sends each member instead (``predict --md-members
    --json``: ``layout`` raid0/1/10/5/6, ``disks``, ``chunk``, ``qd``, ``stripe_cache_size``,
    ``group_thread_cnt``, ``raid10_layout`` n2/f2/o2/..., ``safe_mode_delay_nanos``)."""
    return _run(
        "predict",
        source,
        dict(
            layout=layout,
            disks=disks,
            disk=disk,
            chunk=chunk,
            groups=groups,
            failed=list(failed) if failed is not None and not isinstance(failed, str) else failed,
            array=os.fspath(array) if array is not None else None,
            qd=qd,
            replay=replay,
            speed=speed,
            curve=curve,
            md_members=md_members,
            controller=controller,
            cache_size=cache_size,
            preset=preset,
            policy=policy,
            mode=mode,
            window=window,
            request=request,
            **options,
        ),
        format=format,
    )


def merge(kind: str, parts: Sequence[dict], split: str, slices: Optional[int] = None) -> dict:
    """Combines partial results of ``stat``, ``simulate`` or ``mrc``, or the heat maps of
    ``analyze`` results (kind ``"heatmaps"``; parts are ``analyze`` results or their
    ``["heatmaps"]``), with ``analyzer_core::merge``: ``split`` is ``"device"``, ``"time"`` or
    ``"hash"`` (with ``slices``)."""
    return json.loads(_native.merge(kind, [json.dumps(p) for p in parts], split, slices))


def points(result: dict, *, requests: bool = False):
    """An MRC result's points (``mrc`` or one of ``simulate``'s ``curves``) as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(result["request_points" if requests else "points"])


def time_bins(run: dict):
    """A simulation run's time bins (``simulate(...)["runs"][i]``) as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(run["result"]["bins"])


def runs(result: dict):
    """A simulate result's cells, one row each: policy, size, hit ratios, back-end I/O."""
    import pandas as pd

    rows = []
    for r in result["runs"]:
        whole = r["result"]["whole"]
        row = {"policy": r["policy"], "size": json.dumps(r["size"]), "capacity_bytes": r["result"]["capacity_bytes"]}
        row.update(whole["ratios"])
        row.update({f"backend_{k}": v for k, v in whole["counts"]["backend"].items()})
        rows.append(row)
    return pd.DataFrame(rows)


def device_table(result: dict, *, others: bool = True):
    """The per-device table of ``analyze(..., per_device=True)`` (``blocksight analyze
    --per-device --json``'s ``per_device``) as a DataFrame, one row per device in the engine's
    order (by the back-end I/Os a cache of the recommended size would save), with the JSON's
    columns. With ``others``, the devices past ``top`` follow as one last row whose
    ``device_name`` is ``"others"``, ``device`` null and ``devices`` their number (1 on the
    other rows)."""
    import pandas as pd

    table = result.get("per_device")
    if table is None:
        raise ValueError("the result has no per-device table: call analyze(..., per_device=True)")
    rows = [dict(r, devices=1) for r in table["rows"]]
    if others and table.get("others") is not None:
        rows.append(dict(table["others"], device=None, device_name="others"))
    df = pd.DataFrame(rows)
    if "device" in df.columns:
        df["device"] = df["device"].astype("Int64")
    return df


def devices(dataset: Union[str, os.PathLike]):
    """The volumes of a dataset partitioned by device (``export --to parquet --partition-by
    device``): a DataFrame of device name and directory."""
    import pandas as pd

    rows = []
    for entry in sorted(os.listdir(dataset)):
        name = _native.partition_name(entry)
        if name is not None:
            rows.append({"device": name, "path": os.path.join(os.fspath(dataset), entry)})
    return pd.DataFrame(rows, columns=["device", "path"])
