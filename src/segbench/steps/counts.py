"""Stored shard counts, read and merged: what every step after scoring starts from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark
from ..core.confusion import FrameCounts
from ..core.labels import LabelSpace
from ..errors import SegbenchError
from ..records.countsio import read_counts
from ..records.identity import space_named


def merge_counts(benchmark: Benchmark, paths: Sequence[Path],
                 same_dataset: bool = True) -> tuple[FrameCounts, dict[str, Any], LabelSpace]:
    """Read and merge shard counts; they must agree on benchmark, split and model, and on the
    dataset unless `same_dataset` is False (the caller names the dataset from a frame index: a
    shard whose frames did not change keeps the dataset_id it was scored under)."""
    parts = [read_counts(p) for p in paths]
    if not parts:
        raise SegbenchError("no counts files given")
    first = parts[0][1]
    keys = ("benchmark", "split", "dataset_id", "model") if same_dataset else ("benchmark", "split", "model")
    for path, (_, meta) in zip(paths, parts):
        for key in keys:
            if meta.get(key) != first.get(key):
                raise SegbenchError(f"{path}: {key} is {meta.get(key)!r} but {paths[0]} has {first.get(key)!r}; "
                                    "not mergeable")
    if first["benchmark"] != benchmark.name:
        raise SegbenchError(f"{paths[0]}: counts are for benchmark '{first['benchmark']}', not '{benchmark.name}'")
    try:
        counts = FrameCounts.merge([c for c, _ in parts])
    except ValueError as exc:
        raise SegbenchError(f"cannot merge {[str(p) for p in paths]}: {exc}") from None
    recorded = first["model"]["label_space"]
    return counts, first, space_named(benchmark, recorded["name"], recorded["classes"])


def counts_split(path: Path) -> str:
    """The split a counts file was scored on."""
    return read_counts(path)[1]["split"]
