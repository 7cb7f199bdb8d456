"""Dataset readers, one per on-disk format, all yielding the same Frame records."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SegbenchError
from .base import Frame
from .format import DatasetFormat

if TYPE_CHECKING:
    from ..definitions import Benchmark

# Format name (a benchmark's dataset/format) -> the reader module that defines its FORMAT.
READERS = {
    "painting-vision": "painting_vision",
    "idd": "idd",
    "easyportrait": "easyportrait",
}


def dataset_format(name: str) -> DatasetFormat:
    if name not in READERS:
        raise SegbenchError(f"no reader for dataset format '{name}' (known: {sorted(READERS)})")
    return import_module(f".{READERS[name]}", __name__).FORMAT


def read_dataset(benchmark: Benchmark, data: Path) -> list[Frame]:
    """Every frame of the dataset at `data`, sorted by frame id, read by the benchmark's format."""
    try:
        reader = dataset_format(benchmark.dataset_format)
    except SegbenchError as exc:
        raise SegbenchError(f"benchmark '{benchmark.name}': {exc}") from None
    return reader.read_frames(Path(data), benchmark.splits)


def select_split(frames: Sequence[Frame], split: str) -> list[Frame]:
    return [f for f in frames if f.split == split]
