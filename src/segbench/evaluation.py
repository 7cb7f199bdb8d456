"""A benchmark's reports computed from confusion counts: label-space reduction, then metrics.

Pure computation: the benchmark definition says which metrics, in which label space, under
which rules; this module only composes lookup tables and the functions of metrics.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import metrics
from .confusion import FrameCounts
from .definitions import Benchmark, MetricSpec, ReportSpec
from .errors import SegbenchError
from .labels import INVALID, LabelSpace


def json_number(value: float) -> float | None:
    """NaN (undefined) becomes None, i.e. `null` in JSON."""
    return None if math.isnan(value) else float(value)


def check_counts(benchmark: Benchmark, counts: FrameCounts, model_space: LabelSpace) -> None:
    """Refuse counts holding values outside the ground-truth or the model's label space."""
    problems = []
    for side, values, space in (("ground truth", counts.gt, benchmark.ground_truth), ("prediction", counts.pred, model_space)):
        bad = space.raw_lut()[values] == INVALID
        for index in np.unique(counts.frame[bad]):
            found = sorted({int(v) for v in values[bad & (counts.frame == index)]})
            problems.append(f"frame {counts.frame_ids[index]}: {side} holds values {found} outside '{space.name}'")
    if problems:
        raise SegbenchError("invalid values in the confusion counts:\n  " + "\n  ".join(problems[:20]))


def report_matrix(benchmark: Benchmark, report: ReportSpec, model_space: LabelSpace, counts: FrameCounts, per_frame: bool = False) -> np.ndarray:
    """The confusion matrix (or per-frame stack) of `counts` in the report's label space."""
    size = report.space.size
    rows = benchmark.mapping(benchmark.ground_truth, report.space).apply_to_raw(benchmark.ground_truth.raw_lut())
    cols = benchmark.mapping(model_space, report.space).apply_to_raw(model_space.raw_lut())
    if per_frame:
        return counts.reduced_per_frame(rows, cols, size, size)
    return counts.reduced(rows, cols, size, size)


def applies(report: ReportSpec, benchmark: Benchmark, model_space: LabelSpace) -> bool:
    """A report applies to a model whose space maps into the report's (e.g. a 2-class portrait
    model gets the portrait report only), and, with only_for_model_space, only to that space."""
    if report.only_for_model_space is not None and model_space.names != benchmark.space(report.only_for_model_space).names:
        return False
    return benchmark.reaches(model_space, report.space)


def metric_value(spec: MetricSpec, report: ReportSpec, cm: np.ndarray, per_frame: Any) -> dict[str, Any]:
    space = report.space
    evaluated = np.ones(space.size, dtype=bool)
    evaluated[[space.id_of(n) for n in report.exclude_classes]] = False
    options = spec.options
    if spec.fn == "mean_iou":
        return {spec.key: json_number(metrics.mean_iou(cm, options["mean"], evaluated))}
    if spec.fn == "iou_by_class":
        ious = metrics.iou(cm)
        return {spec.key: {c.name: json_number(ious[c.id]) for c in space.classes if evaluated[c.id]}}
    if spec.fn == "precision":
        return {spec.key: json_number(metrics.precision(cm, space.id_of(options["class"])))}
    if spec.fn == "recall":
        return {spec.key: json_number(metrics.recall(cm, space.id_of(options["class"])))}
    if spec.fn == "pixel_accuracy":
        return {spec.key: json_number(metrics.pixel_accuracy(cm))}
    if spec.fn == "fraction_mae":
        numerator = np.isin(np.arange(space.size), [space.id_of(n) for n in options["numerator"]])
        denominator = np.isin(np.arange(space.size), [space.id_of(n) for n in options["denominator"]])
        mae, frames = metrics.fraction_mae(per_frame(), numerator, denominator)
        return {spec.key: json_number(mae), options["frames_key"]: frames}
    raise SegbenchError(f"unknown metric function '{spec.fn}'")


def null_report(report: ReportSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for spec in report.metrics:
        out[spec.key] = None
        if spec.fn == "fraction_mae":
            out[spec.options["frames_key"]] = None
    return out


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
        cm = report_matrix(benchmark, report, model_space, counts)
        stack: list[np.ndarray] = []

        def per_frame() -> np.ndarray:
            if not stack:
                stack.append(report_matrix(benchmark, report, model_space, counts, per_frame=True))
            return stack[0]

        values: dict[str, Any] = {}
        for spec in report.metrics:
            values.update(metric_value(spec, report, cm, per_frame))
        results[report.key] = values
    return results


def headline(benchmark: Benchmark, results: dict[str, dict[str, Any]]) -> float | None:
    """The value the floor comparison is made on (e.g. shared_metrics.mIoU)."""
    report_key, metric_key = benchmark.floor_compare_on
    return results[report_key][metric_key]


def beats(value: float | None, floor_value: float | None) -> bool | None:
    """Whether a model beats the floor; None when either side is undefined."""
    if value is None or floor_value is None:
        return None
    return value > floor_value
