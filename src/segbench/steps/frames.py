"""Which frames a step works on: a split of the dataset, or of the frame index the workflow's
dataset_identity job wrote, and one shard of it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.benchmark import Benchmark
from ..core.model_spec import by_shard
from ..datasets import read_dataset, select_split
from ..datasets.base import Frame
from ..errors import SegbenchError
from ..records.frameindex import index_frames, read_index


def frames_of_split(benchmark: Benchmark, data: Path, split: str, index: Path | None = None) -> list[Frame]:
    """The split's frames, sorted by frame id: from the frame index when given (read once by the
    workflow), else from the dataset's own listing."""
    return split_and_dataset(benchmark, data, split, index)[0]


def split_and_dataset(benchmark: Benchmark, data: Path, split: str,
                      index: Path | None = None) -> tuple[list[Frame], str | None]:
    """frames_of_split's frames, with the dataset_id the frame index records (None without one)."""
    benchmark.check_split(split)
    if index is None:
        return select_split(read_dataset(benchmark, data), split), None
    document = read_index(index, benchmark.name)
    return select_split(index_frames(document, data), split), document["dataset_id"]


def shard(frames: Sequence[Frame], shards: int | None, index: int | None) -> list[Frame]:
    """The frames of shard `index` of `shards` (by a stable hash of the frame id); all frames if index is None."""
    if index is None:
        return list(frames)
    if shards is None or shards < 1:
        raise SegbenchError("--shard needs --shards N (the split's shard count, at least 1)")
    if not 0 <= index < shards:
        raise SegbenchError(f"shard {index} does not exist: the split is cut into {shards} shard(s)")
    return by_shard(frames, lambda f: f.frame_id, shards).get(index, [])
