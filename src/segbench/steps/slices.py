"""Every metric per slice of the frames' metadata (the benchmark's `slices`, or the config's list
that replaces them), with bootstrap intervals and paired comparisons against the baseline and the
floor, from stored counts and the frame index (which holds each frame's group and metadata)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark, SliceSpec
from ..core.bootstrap import CONFIDENCE
from ..core.slices import MIN_UNITS, slice_results
from ..io.fileio import write_json
from ..records.frameindex import index_groups, read_index
from .comparison import comparison_subjects
from .counts import counts_split


def slices(benchmark: Benchmark, counts: Sequence[Path], baseline: Sequence[Path], floor: Sequence[Path],
           index: Path, resamples: int, seed: int, out: Path,
           slicings: tuple[SliceSpec, ...] | None = None) -> dict[str, Any]:
    """`slicings`: the config's list, in place of the benchmark's own (None: the benchmark's)."""
    if slicings is not None:
        benchmark = dataclasses.replace(benchmark, slices=slicings)
    subjects = comparison_subjects(benchmark, counts, baseline, floor)
    document_of_index = read_index(index, benchmark.name)
    frames = document_of_index["frames"]
    model = subjects["model"]
    document = {
        "benchmark": benchmark.name,
        "split": counts_split(counts[0]),
        "model": model.name,
        "method": "percentile bootstrap over the groups inside each slice (resampled with replacement, counts summed)",
        "group_key": benchmark.group_key,
        "resamples": resamples,
        "seed": seed,
        "confidence": CONFIDENCE,
        "min_units": MIN_UNITS,
        "slicings_from": "benchmark" if slicings is None else "config",
        "slicings": slice_results(
            benchmark, model, {"baseline": subjects["baseline"], "floor": subjects["floor"]},
            index_groups(document_of_index), {e["frame_id"]: e["meta"] for e in frames},
            resamples, seed),
    }
    write_json(out, document)
    return document
