"""Bootstrap intervals over the benchmark's independent units, with paired comparisons against
the baseline and the floor, from stored counts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark
from ..core.bootstrap import bootstrap
from ..io.fileio import write_json
from ..records.frameindex import index_groups, read_index
from .comparison import comparison_subjects
from .counts import counts_split


def manifest_groups(benchmark: Benchmark, manifest: dict[str, Any]) -> dict[str, str]:
    """frame_id -> group id (wall, drive, user) from a dataset manifest document."""
    return {f["frame_id"]: f[benchmark.group_key] for f in manifest["frames"]}


def uncertainty_document(benchmark: Benchmark, counts: Sequence[Path], baseline: Sequence[Path],
                         floor: Sequence[Path], groups: dict[str, str], resamples: int, seed: int) -> dict[str, Any]:
    """The model's bootstrap document (intervals, paired comparisons with the baseline and the floor)."""
    subjects = comparison_subjects(benchmark, counts, baseline, floor)
    others = {"baseline": subjects["baseline"], "floor": subjects["floor"]}
    document = bootstrap(benchmark, subjects["model"], groups, resamples, seed, others)
    return {"benchmark": benchmark.name, "split": counts_split(counts[0]), **document}


def uncertainty(benchmark: Benchmark, counts: Sequence[Path], baseline: Sequence[Path], floor: Sequence[Path],
                index: Path, resamples: int, seed: int, out: Path) -> dict[str, Any]:
    """The model's bootstrap document over the groups the frame index (`index`) gives each frame, written to `out`."""
    groups = index_groups(read_index(index, benchmark.name))
    document = uncertainty_document(benchmark, counts, baseline, floor, groups, resamples, seed)
    write_json(out, document)
    return document
