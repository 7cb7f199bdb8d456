"""The subjects a comparison reads from stored counts: the model, its baseline and the floor."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.benchmark import Benchmark
from ..core.bootstrap import Subject
from .counts import merge_counts


def read_subject(benchmark: Benchmark, paths: Sequence[Path], name: str | None = None) -> Subject | None:
    """Merged shard counts as a bootstrap/plot subject; None when no paths are given."""
    if not paths:
        return None
    # The dataset is named and checked where the metrics are (steps/metrics.py, with the frame
    # index); a shard whose frames did not change keeps the dataset_id it was scored under.
    counts, meta, space = merge_counts(benchmark, paths, same_dataset=False)
    return Subject(name or meta["model"]["name"], counts, space)


def comparison_subjects(benchmark: Benchmark, counts: Sequence[Path], baseline: Sequence[Path],
                        floor: Sequence[Path]) -> dict[str, Subject | None]:
    return {"model": read_subject(benchmark, counts), "baseline": read_subject(benchmark, baseline),
            "floor": read_subject(benchmark, floor)}
