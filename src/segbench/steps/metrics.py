"""Metrics as a step: every report of the benchmark from the merged shard counts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..definitions import Benchmark
from ..evaluation import evaluate
from .counts import merge_counts


def metrics_document(benchmark: Benchmark, paths: Sequence[Path]) -> dict[str, Any]:
    """All reports of the benchmark for the merged counts, with what they were computed from."""
    counts, meta, space = merge_counts(benchmark, paths)
    results = evaluate(benchmark, counts, space)
    gt_lut = benchmark.ground_truth.raw_lut()
    evaluated = int(counts.count[gt_lut[counts.gt] >= 0].sum())
    return {
        "benchmark": benchmark.name,
        "split": meta["split"],
        "model": meta["model"]["name"],
        "kind": meta["model"]["kind"],
        "label_space": space.name,
        "frames": len(counts.frame_ids),
        "pixels_evaluated": evaluated,
        "results": results,
    }
