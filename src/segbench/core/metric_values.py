"""What each registered metric function computes (segbench.core.metric_registry declares them): one
short function of a report's view per `fn`, from segbench.core.metrics. Pure computation."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import metrics
from .labels import LabelSpace
from .metric_registry import REGISTRY, MetricSpec, function

def json_number(value: float) -> float | None:
    """NaN (undefined) becomes None, i.e. `null` in JSON."""
    return None if math.isnan(value) else float(value)


@dataclass(frozen=True)
class ReportView:
    """What one report's metrics are computed from: its confusion matrix in the report's space
    (or a stack of them: the bootstrap's resamples, each metric then a stack of values), the
    classes it evaluates and, computed on first use, its per-frame stack with how often each frame
    counts in each matrix."""

    space: LabelSpace
    evaluated: np.ndarray  # (K,) bool
    cm: np.ndarray  # (..., K, K + 1)
    per_frame: Callable[[], np.ndarray]  # () -> (frames, K, K + 1), each frame once
    band_tallies: Callable[[], np.ndarray | None]  # () -> (..., 3, K), see confusion.BandCounts.tallies; None: not counted
    frame_weights: np.ndarray | None = None  # (..., frames): how often each frame is in each matrix; None: once

    def classes(self, names: Sequence[str]) -> np.ndarray:
        """A boolean mask over the space's classes."""
        return np.isin(np.arange(self.space.size), [self.space.id_of(n) for n in names])

    def boundary_iou(self) -> np.ndarray:
        """Per-class boundary IoU; all undefined when the counts hold no bands."""
        tallies = self.band_tallies()
        return np.full(self.cm.shape[:-1], np.nan) if tallies is None else metrics.boundary_iou(tallies)

    def by_class(self, values: np.ndarray) -> dict[str, float | None]:
        return {c.name: json_number(values[c.id]) for c in self.space.classes if self.evaluated[c.id]}


Outputs = dict[str, Any]


Compute = Callable[[dict[str, Any], ReportView], Any]
COMPUTE: dict[str, Compute] = {
    "mean_iou": lambda o, v: metrics.mean_iou(v.cm, o["mean"], v.evaluated),
    "iou_by_class": lambda o, v: metrics.iou(v.cm),
    "precision": lambda o, v: metrics.precision(v.cm, v.space.id_of(o["class"])),
    "recall": lambda o, v: metrics.recall(v.cm, v.space.id_of(o["class"])),
    "pixel_accuracy": lambda o, v: metrics.pixel_accuracy(v.cm),
    "mean_accuracy": lambda o, v: metrics.class_mean(metrics.class_accuracy(v.cm), v.cm, o["mean"], v.evaluated),
    "dice_by_class": lambda o, v: metrics.dice(v.cm),
    "mean_dice": lambda o, v: metrics.class_mean(metrics.dice(v.cm), v.cm, o["mean"], v.evaluated),
    "frequency_weighted_iou": lambda o, v: metrics.frequency_weighted_iou(v.cm, v.evaluated),
    "per_image_mean_iou": lambda o, v: metrics.per_image_mean_iou(v.per_frame(), o["classes"], v.evaluated,
                                                                  v.frame_weights),
    "boundary_iou_by_class": lambda o, v: v.boundary_iou(),
    "mean_boundary_iou": lambda o, v: metrics.class_mean(v.boundary_iou(), v.cm, o["mean"], v.evaluated),
    "fraction_mae": lambda o, v: metrics.fraction_mae(v.per_frame(), v.classes(o["numerator"]),
                                                      v.classes(o["denominator"]), v.frame_weights),
}
if set(COMPUTE) != set(REGISTRY):  # one computation per declared function, none other
    raise ImportError(f"metric_values: computations {sorted(COMPUTE)} do not match the registry {sorted(REGISTRY)}")


def scalar_values(spec: MetricSpec, view: ReportView) -> np.ndarray:
    """A scalar metric over a stack view: (...) its values, NaN where undefined (the frame count
    beside a function with a count option left out)."""
    result = COMPUTE[spec.fn](spec.options, view)
    return np.asarray(result[0] if function(spec).count_option is not None else result, dtype=np.float64)


def values(spec: MetricSpec, view: ReportView) -> Outputs:
    """The outputs of one metric of a report: {key: value} ({key: {class: value}} per class; the
    frame count beside it for a function with a count option)."""
    declared = function(spec)
    result = COMPUTE[spec.fn](spec.options, view)
    if declared.per_class:
        return {spec.key: view.by_class(result)}
    if declared.count_option is not None:
        value, count = result
        return {spec.key: json_number(value), spec.options[declared.count_option]: count}
    return {spec.key: json_number(result)}
