"""Bootstrap intervals over the benchmark's independent units, with paired comparisons against
the baseline and the floor, from stored counts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark
from ..core.bootstrap import bootstrap
from ..io.fileio import read_json, write_json
from .comparison import comparison_subjects
from .counts import counts_split


def read_groups(benchmark: Benchmark, manifest: Path) -> dict[str, str]:
    """frame_id -> group id (wall, drive, user) from the dataset manifest."""
    return {f["frame_id"]: f[benchmark.group_key] for f in read_json(manifest)["frames"]}


def uncertainty(benchmark: Benchmark, counts: Sequence[Path], baseline: Sequence[Path], floor: Sequence[Path],
                manifest: Path, resamples: int, seed: int, out: Path) -> dict[str, Any]:
    subjects = comparison_subjects(benchmark, counts, baseline, floor)
    others = {"baseline": subjects["baseline"], "floor": subjects["floor"]}
    document = bootstrap(benchmark, subjects["model"], read_groups(benchmark, manifest), resamples, seed, others)
    document = {"benchmark": benchmark.name, "split": counts_split(counts[0]), **document}
    write_json(out, document)
    return document
