"""Type stubs of blocksight: the engine's jobs over block-I/O traces (see __init__.py)."""

import os
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import pandas

__version__: str

Source = Union[
    str,
    os.PathLike[str],
    Sequence[Union[str, os.PathLike[str]]],
    Iterable[Any],
    Callable[[], Iterable[Any]],
]

def stat(source: Source, *, format: Optional[str] = ..., window: Optional[str] = ..., **options: Any) -> dict[str, Any]: ...
def analyze(
    source: Source,
    *,
    line_size: Optional[str] = ...,
    exact_mrc: bool = ...,
    exact_blocks: Optional[int] = ...,
    per_device: bool = ...,
    top: Optional[int] = ...,
    format: Optional[str] = ...,
    window: Optional[str] = ...,
    **options: Any,
) -> dict[str, Any]: ...
def simulate(
    source: Source,
    *,
    cache_size: Optional[str] = ...,
    policy: Optional[str] = ...,
    mode: Optional[str] = ...,
    preset: Optional[str] = ...,
    admission: Optional[str] = ...,
    line_size: Optional[str] = ...,
    warmup: Optional[str] = ...,
    time_bins: Optional[int] = ...,
    window: Optional[str] = ...,
    format: Optional[str] = ...,
    request: Optional[dict[str, Any]] = ...,
    **options: Any,
) -> dict[str, Any]: ...
def mrc(
    source: Source,
    *,
    policy: str = ...,
    method: Optional[str] = ...,
    sizes: Optional[str] = ...,
    line_size: Optional[str] = ...,
    rate: Optional[float] = ...,
    window: Optional[str] = ...,
    format: Optional[str] = ...,
    request: Optional[dict[str, Any]] = ...,
    **options: Any,
) -> dict[str, Any]: ...
def predict(
    source: Source,
    *,
    layout: Optional[str] = ...,
    disks: Optional[int] = ...,
    disk: Optional[str] = ...,
    chunk: Optional[str] = ...,
    groups: Optional[int] = ...,
    failed: Optional[Union[Sequence[int], str]] = ...,
    array: Optional[Union[str, os.PathLike[str]]] = ...,
    qd: Optional[int] = ...,
    replay: bool = ...,
    speed: Optional[float] = ...,
    curve: bool = ...,
    md_members: bool = ...,
    controller: Optional[str] = ...,
    cache_size: Optional[str] = ...,
    preset: Optional[str] = ...,
    policy: Optional[str] = ...,
    mode: Optional[str] = ...,
    window: Optional[str] = ...,
    format: Optional[str] = ...,
    request: Optional[dict[str, Any]] = ...,
    **options: Any,
) -> dict[str, Any]: ...
def merge(kind: str, parts: Sequence[dict[str, Any]], split: str, slices: Optional[int] = ...) -> dict[str, Any]: ...
def points(result: dict[str, Any], *, requests: bool = ...) -> pandas.DataFrame: ...
def time_bins(run: dict[str, Any]) -> pandas.DataFrame: ...
def runs(result: dict[str, Any]) -> pandas.DataFrame: ...
def device_table(result: dict[str, Any], *, others: bool = ...) -> pandas.DataFrame: ...
def devices(dataset: Union[str, os.PathLike[str]]) -> pandas.DataFrame: ...
