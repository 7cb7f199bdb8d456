"""The metric registry: every metric function a benchmark definition may name (`fn`), with its
options, its outputs and its description.

Everything that lists metrics is derived from this one table: the benchmark schema's metric
entries (workflow/schemas/metric.schema.json, written by tools/build_metric_schema.py), the null
report of a report that does not apply, the scalar metrics the bootstrap resamples, the per-class
tables and the figures. Formulas and the peers' conventions: docs/metrics.md.

It declares; it computes nothing (segbench.core.metric_values holds each function's computation): a
step that needs to know which metrics exist, such as loading a benchmark definition or planning
which boundary bands to count, does not depend on the metric code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any



# Which classes a mean runs over, and which classes a per-image mean counts (docs/metrics.md).
MEAN_RULES = ("present_in_ground_truth", "all_classes", "nan_skipping", "empty_union_as_zero")
PER_FRAME_CLASSES = ("ground_truth", "ground_truth_or_prediction")


@dataclass(frozen=True)
class MetricSpec:
    """One metric of a report, as the benchmark YAML names it: its key, `fn` and options."""

    key: str
    fn: str
    options: dict[str, Any]


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


MEAN = {"enum": list(MEAN_RULES), "description": "which classes the mean runs over (docs/metrics.md)"}
CLASS = {"type": "string", "description": "a class of the report's label space"}
CLASS_LIST = {"type": "array", "items": {"type": "string"}, "minItems": 1}

FUNCTIONS = (
    MetricFunction("mean_iou", "mean over classes of TP / (TP + FP + FN), by the mean rule", {"mean": MEAN}, ("mean",)),
    MetricFunction("iou_by_class", "per class TP / (TP + FP + FN); null for an empty union", per_class=True),
    MetricFunction("precision", "TP / (TP + FP) of one class; null when it is never predicted",
                   {"class": CLASS}, ("class",)),
    MetricFunction("recall", "TP / (TP + FN) of one class; null when it has no ground-truth pixel",
                   {"class": CLASS}, ("class",)),
    MetricFunction("pixel_accuracy", "aAcc: correct pixels / evaluated pixels"),
    MetricFunction("mean_accuracy", "mAcc: mean over classes of TP / (TP + FN), by the mean rule",
                   {"mean": MEAN}, ("mean",)),
    MetricFunction("dice_by_class", "per class Dice (F1) 2 TP / (2 TP + FP + FN); null for an empty union",
                   per_class=True),
    MetricFunction("mean_dice", "mDice: mean over classes of the Dice, by the mean rule", {"mean": MEAN}, ("mean",)),
    MetricFunction("frequency_weighted_iou", "fwIoU: sum over classes of (ground-truth pixel share) x IoU"),
    MetricFunction(
        "per_image_mean_iou",
        "mean over frames of each frame's mean IoU over the classes present in its ground truth "
        "(classes: ground_truth) or in its ground truth or prediction (classes: ground_truth_or_prediction)",
        {"classes": {"enum": list(PER_FRAME_CLASSES)}}, ("classes",), per_frame=True),
    MetricFunction(
        "boundary_iou_by_class",
        "per class boundary IoU (Cheng et al. 2021): |Gb ∩ Pb| / |Gb ∪ Pb| over the ground-truth and predicted "
        "bands of width d (the benchmark's scoring.boundary); null when both bands are empty",
        per_class=True, bands=True),
    MetricFunction("mean_boundary_iou", "mean over classes of the boundary IoU, by the mean rule",
                   {"mean": MEAN}, ("mean",), bands=True),
    MetricFunction(
        "fraction_mae",
        "mean over frames of |predicted - ground-truth| share of the numerator classes in the denominator classes",
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
        "title": "One metric of a benchmark report; generated from segbench.core.metric_registry by tools/build_metric_schema.py",
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
