"""A benchmark's reports computed from confusion counts: label-space reduction, then metrics.

Pure computation: the benchmark definition says which metrics, in which label space, under
which rules; this module only composes lookup tables and the registry's functions
(metric_registry.py).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ..errors import SegbenchError
from .benchmark import Benchmark, ReportSpec, applies
from .confusion import FrameCounts
from .labels import INVALID, NO_CLASS, LabelSpace
from .metric_registry import function
from .metric_values import ReportView, values


def check_counts(benchmark: Benchmark, counts: FrameCounts, model_space: LabelSpace) -> None:
    """Refuse counts holding values outside the ground-truth or the model's label space."""
    problems = []
    for side, raw, space in (("ground truth", counts.gt, benchmark.ground_truth), ("prediction", counts.pred, model_space)):
        bad = space.raw_lut()[raw] == INVALID
        for index in np.unique(counts.frame[bad]):
            found = sorted({int(v) for v in raw[bad & (counts.frame == index)]})
            problems.append(f"frame {counts.frame_ids[index]}: {side} holds values {found} outside '{space.name}'")
    if problems:
        raise SegbenchError("invalid values in the confusion counts:\n  " + "\n  ".join(problems[:20]))


def void_predictions(benchmark: Benchmark, counts: FrameCounts, model_space: LabelSpace) -> np.ndarray:
    """(frames,) int64: per frame, the pixels of a labelled ground truth whose predicted value is
    void in `model_space` (no class predicted: counted as misses, labels.NO_CLASS)."""
    hit = (benchmark.ground_truth.raw_lut()[counts.gt] >= 0) & (model_space.prediction_lut()[counts.pred] == NO_CLASS)
    out = np.zeros(len(counts.frame_ids), np.int64)
    np.add.at(out, counts.frame[hit], counts.count[hit])
    return out


def report_matrix(benchmark: Benchmark, report: ReportSpec, model_space: LabelSpace, counts: FrameCounts, per_frame: bool = False) -> np.ndarray:
    """The K x (K + 1) confusion matrix (or per-frame stack) of `counts` in the report's label
    space: rows the ground truth's classes, columns the predicted classes and, last, no class
    predicted (a void prediction, metrics.py)."""
    size = report.space.size
    rows = benchmark.raw_lut(benchmark.ground_truth, report.space)
    cols = benchmark.prediction_columns(model_space, report.space)
    if per_frame:
        return counts.reduced_per_frame(rows, cols, size, size + 1)
    return counts.reduced(rows, cols, size, size + 1)


def report_view(benchmark: Benchmark, report: ReportSpec, model_space: LabelSpace, counts: FrameCounts) -> ReportView:
    """The report's matrix of `counts`; its per-frame stack and its band tallies are computed once,
    on first use (a report's boundary metrics read the tallies each)."""

    @cache
    def per_frame() -> np.ndarray:
        return report_matrix(benchmark, report, model_space, counts, per_frame=True)

    @cache
    def band_tallies() -> np.ndarray | None:
        tallies = report_band_tallies(benchmark, report, model_space, counts)
        return None if tallies is None else tallies.sum(axis=0)

    return ReportView(report.space, report.evaluated(), report_matrix(benchmark, report, model_space, counts), per_frame,
                      band_tallies)


def report_band_tallies(
    benchmark: Benchmark, report: ReportSpec, model_space: LabelSpace, counts: FrameCounts
) -> np.ndarray | None:
    """(frames, 3, K) boundary-band tallies of `counts` in the report's space; None for counts
    made without any band (e.g. from histograms alone), whose boundary metrics are undefined."""
    if not counts.bands.spaces:
        return None
    rows = benchmark.raw_lut(benchmark.ground_truth, report.space)
    cols = benchmark.prediction_columns(model_space, report.space)
    try:
        return counts.bands.tallies(report.space.name, rows, cols, report.space.size, len(counts.frame_ids))
    except KeyError:
        raise SegbenchError(
            f"report '{report.key}' has a boundary metric but the counts hold no boundary bands in "
            f"'{report.space.name}' (they hold {list(counts.bands.spaces)}): score again with this definition"
        ) from None


def report_values(report: ReportSpec, view: ReportView) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for spec in report.metrics:
        results.update(values(spec, view))
    return results


def null_report(report: ReportSpec) -> dict[str, Any]:
    """Every output of the report as null: the report does not apply to the model."""
    return {key: None for spec in report.metrics for key in function(spec).outputs(spec)}


def evaluate(benchmark: Benchmark, counts: FrameCounts, model_space: LabelSpace) -> dict[str, dict[str, Any]]:
    """Every report of the benchmark for a model whose predictions are in `model_space`."""
    check_counts(benchmark, counts, model_space)
    if not any(applies(report, benchmark, model_space) for report in benchmark.reports):
        raise SegbenchError(
            f"benchmark '{benchmark.name}': predictions in label space '{model_space.name}' map into none of its "
            f"reports ({', '.join(f'{r.key}: {r.space.name}' for r in benchmark.reports)})"
        )
    results: dict[str, dict[str, Any]] = {}
    for report in benchmark.reports:
        if not applies(report, benchmark, model_space):
            results[report.key] = null_report(report)
            continue
        results[report.key] = report_values(report, report_view(benchmark, report, model_space, counts))
    return results


def record_results(benchmark: Benchmark, results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The outputs each report selects for the submission record's spec fields (`record`);
    reports that select none are left out."""
    selected = {}
    for report in benchmark.reports:
        keys = [key for spec in report.metrics if spec.key in report.record for key in function(spec).outputs(spec)]
        if keys:
            selected[report.key] = {key: results[report.key][key] for key in keys}
    return selected


def headline(benchmark: Benchmark, results: dict[str, dict[str, Any]]) -> float | None:
    """The value the floor comparison is made on (e.g. shared_metrics.mIoU)."""
    report_key, metric_key = benchmark.floor_compare_on
    return results[report_key][metric_key]


def beats(value: float | None, floor_value: float | None) -> bool | None:
    """Whether a model beats the floor; None when either side is undefined."""
    if value is None or floor_value is None:
        return None
    return value > floor_value
