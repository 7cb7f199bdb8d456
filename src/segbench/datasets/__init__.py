"""Dataset readers, one per on-disk format, all yielding the same Frame records."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SegbenchError
from .base import Frame

if TYPE_CHECKING:
    from ..definitions import Benchmark


def read_dataset(benchmark: Benchmark, data: Path) -> list[Frame]:
    """Every frame of the dataset at `data`, sorted by frame id, read by the benchmark's format."""
    if benchmark.dataset_format == "painting-vision":
        from .painting_vision import read_frames

        return read_frames(data, benchmark.splits)
    raise SegbenchError(f"benchmark '{benchmark.name}': no reader for dataset format '{benchmark.dataset_format}'")


def select_split(frames: Sequence[Frame], split: str) -> list[Frame]:
    return [f for f in frames if f.split == split]
