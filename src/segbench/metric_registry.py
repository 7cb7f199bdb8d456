"""The metric registry: every metric function a benchmark definition may name (`fn`), with its
options, its outputs and its description.

Everything that lists metrics is derived from this one table: the benchmark schema's metric
entries (workflow/schemas/metric.schema.json, written by tools/build_metric_schema.py), the null
report of a report that does not apply, the scalar metrics the bootstrap resamples, the per-class
tables and the figures. Formulas and the peers' conventions: docs/metrics.md. Pure computation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import metrics
from .labels import LabelSpace


def json_number(value: float) -> float | None:
    """NaN (undefined) becomes None, i.e. `null` in JSON."""
    return None if math.isnan(value) else float(value)


@dataclass(frozen=True)
class MetricSpec:
    """One metric of a report, as the benchmark YAML names it: its key, `fn` and options."""

    key: str
    fn: str
    options: dict[str, Any]


@dataclass(frozen=True)
class ReportView:
    """What one report's metrics are computed from: its confusion matrix in the report's space,
    the classes it evaluates and, computed on first use, its per-frame stack."""

    space: LabelSpace
    evaluated: np.ndarray  # (K,) bool
    cm: np.ndarray  # (K, K)
    per_frame: Callable[[], np.ndarray]  # () -> (frames, K, K)
    band_tallies: Callable[[], np.ndarray | None]  # () -> (3, K), see confusion.BandCounts.tallies; None: not counted

    def classes(self, names: Sequence[str]) -> np.ndarray:
        """A boolean mask over the space's classes."""
        return np.isin(np.arange(self.space.size), [self.space.id_of(n) for n in names])

    def boundary_iou(self) -> np.ndarray:
        """Per-class boundary IoU; all undefined when the counts hold no bands."""
        tallies = self.band_tallies()
        return np.full(self.space.size, np.nan) if tallies is None else metrics.boundary_iou(tallies)

    def by_class(self, values: np.ndarray) -> dict[str, float | None]:
        return {c.name: json_number(values[c.id]) for c in self.space.classes if self.evaluated[c.id]}


Outputs = dict[str, Any]


@dataclass(frozen=True)
class MetricFunction:
    """One `fn` of the benchmark YAML.

    `options` is the JSON Schema of each option (all listed in `required` must be given);
    `per_class` marks a {class: value} output (not resampled, shown in the per-class tables);
    `per_frame` marks a function that needs the per-frame stack; `bands` one that needs the
    boundary bands counted in its report's space when scoring; `count_option` names an option
    whose value is the key of a second output (a count of frames); `figure` names the figure
    drawn for it, if any."""

    name: str
    description: str
    compute: Callable[[dict[str, Any], ReportView], float | np.ndarray | tuple[float, int]]
    options: dict[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    per_class: bool = False
    per_frame: bool = False
    bands: bool = False
    count_option: str | None = None
    figure: str | None = None

    def outputs(self, spec: MetricSpec) -> tuple[str, ...]:
        """The keys this metric writes into its report's results."""
        return (spec.key,) if self.count_option is None else (spec.key, spec.options[self.count_option])

    def values(self, spec: MetricSpec, view: ReportView) -> Outputs:
        result = self.compute(spec.options, view)
        if self.per_class:
            return {spec.key: view.by_class(result)}
        if self.count_option is not None:
            value, count = result
            return {spec.key: json_number(value), spec.options[self.count_option]: count}
        return {spec.key: json_number(result)}


MEAN = {"enum": list(metrics.MEAN_RULES), "description": "which classes the mean runs over (docs/metrics.md)"}
CLASS = {"type": "string", "description": "a class of the report's label space"}
CLASS_LIST = {"type": "array", "items": {"type": "string"}, "minItems": 1}

FUNCTIONS = (
    MetricFunction(
        "mean_iou", "mean over classes of TP / (TP + FP + FN), by the mean rule",
        lambda o, v: metrics.mean_iou(v.cm, o["mean"], v.evaluated), {"mean": MEAN}, ("mean",)),
    MetricFunction(
        "iou_by_class", "per class TP / (TP + FP + FN); null for an empty union",
        lambda o, v: metrics.iou(v.cm), per_class=True),
    MetricFunction(
        "precision", "TP / (TP + FP) of one class; null when it is never predicted",
        lambda o, v: metrics.precision(v.cm, v.space.id_of(o["class"])), {"class": CLASS}, ("class",)),
    MetricFunction(
        "recall", "TP / (TP + FN) of one class; null when it has no ground-truth pixel",
        lambda o, v: metrics.recall(v.cm, v.space.id_of(o["class"])), {"class": CLASS}, ("class",)),
    MetricFunction(
        "pixel_accuracy", "aAcc: correct pixels / evaluated pixels",
        lambda o, v: metrics.pixel_accuracy(v.cm)),
    MetricFunction(
        "mean_accuracy", "mAcc: mean over classes of TP / (TP + FN), by the mean rule",
        lambda o, v: metrics.class_mean(metrics.class_accuracy(v.cm), v.cm, o["mean"], v.evaluated),
        {"mean": MEAN}, ("mean",)),
    MetricFunction(
        "dice_by_class", "per class Dice (F1) 2 TP / (2 TP + FP + FN); null for an empty union",
        lambda o, v: metrics.dice(v.cm), per_class=True),
    MetricFunction(
        "mean_dice", "mDice: mean over classes of the Dice, by the mean rule",
        lambda o, v: metrics.class_mean(metrics.dice(v.cm), v.cm, o["mean"], v.evaluated), {"mean": MEAN}, ("mean",)),
    MetricFunction(
        "frequency_weighted_iou", "fwIoU: sum over classes of (ground-truth pixel share) x IoU",
        lambda o, v: metrics.frequency_weighted_iou(v.cm, v.evaluated)),
    MetricFunction(
        "per_image_mean_iou",
        "mean over frames of each frame's mean IoU over the classes present in its ground truth "
        "(classes: ground_truth) or in its ground truth or prediction (classes: ground_truth_or_prediction)",
        lambda o, v: metrics.per_image_mean_iou(v.per_frame(), o["classes"], v.evaluated),
        {"classes": {"enum": list(metrics.PER_FRAME_CLASSES)}}, ("classes",), per_frame=True),
    MetricFunction(
        "boundary_iou_by_class",
        "per class boundary IoU (Cheng et al. 2021): |Gb ∩ Pb| / |Gb ∪ Pb| over the ground-truth and predicted "
        "bands of width d (the benchmark's scoring.boundary); null when both bands are empty",
        lambda o, v: v.boundary_iou(), per_class=True, bands=True),
    MetricFunction(
        "mean_boundary_iou", "mean over classes of the boundary IoU, by the mean rule",
        lambda o, v: metrics.class_mean(v.boundary_iou(), v.cm, o["mean"], v.evaluated),
        {"mean": MEAN}, ("mean",), bands=True),
    MetricFunction(
        "fraction_mae",
        "mean over frames of |predicted - ground-truth| share of the numerator classes in the denominator classes",
        lambda o, v: metrics.fraction_mae(v.per_frame(), v.classes(o["numerator"]), v.classes(o["denominator"])),
        {"numerator": CLASS_LIST, "denominator": CLASS_LIST,
         "frames_key": {"type": "string", "description": "the key of the number of frames it covers"}},
        ("numerator", "denominator", "frames_key"), per_frame=True, count_option="frames_key", figure="fraction"),
)
REGISTRY: dict[str, MetricFunction] = {f.name: f for f in FUNCTIONS}


def function(spec: MetricSpec) -> MetricFunction:
    return REGISTRY[spec.fn]


def with_figure(reports: Sequence[Any], figure: str) -> list[tuple[Any, MetricSpec]]:
    """(report, metric) pairs whose function draws `figure`."""
    return [(r, m) for r in reports for m in r.metrics if REGISTRY[m.fn].figure == figure]


KEY_PATTERN = "^[A-Za-z0-9_]+$"


def schema() -> dict[str, Any]:
    """The JSON Schema of one metric entry of a report (workflow/schemas/metric.schema.json)."""
    common = {"key": {"type": "string", "pattern": KEY_PATTERN}, "fn": {"enum": list(REGISTRY)}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "One metric of a benchmark report; generated from segbench.metric_registry by tools/build_metric_schema.py",
        "type": "object",
        "required": ["key", "fn"],
        "properties": common,
        "allOf": [
            {
                "if": {"properties": {"fn": {"const": f.name}}},
                "then": {
                    "description": f.description,
                    "required": list(f.required),
                    "properties": {**common, **f.options},
                    "additionalProperties": False,
                },
            }
            for f in FUNCTIONS
        ],
    }
