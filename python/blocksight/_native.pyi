from typing import Any, Callable, Iterable, Optional, Sequence

__version__: str

def run(
    kind: str,
    options: str,
    paths: Optional[Sequence[str]] = ...,
    batches: Optional[Callable[[], Iterable[dict[str, Any]]]] = ...,
    format: Optional[str] = ...,
    slice: Optional[int] = ...,
    slices: Optional[int] = ...,
) -> str: ...
def merge(kind: str, parts: Sequence[str], split: str, slices: Optional[int] = ...) -> str: ...
def partition_name(segment: str) -> Optional[str]: ...
def parse_size(text: str) -> int: ...
