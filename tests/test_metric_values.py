"""What each declared metric function computes from a report's view (core/metric_values.py), on a
hand-made 3-class view: frame 1 has a 2 px / b 1 px, all right; frame 2 has a 2 px, one of them
predicted b; class c appears nowhere."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.core.labels import LabelClass, LabelSpace
from segbench.core.metric_registry import MetricSpec
from segbench.core.metric_values import ReportView, json_number, values
from segbench.errors import SegbenchError

SPACE = LabelSpace("abc", tuple(LabelClass(i, n, (0, 0, 0)) for i, n in enumerate("abc")))
PER_FRAME = np.array([
    [[2, 0, 0], [0, 1, 0], [0, 0, 0]],
    [[1, 1, 0], [0, 0, 0], [0, 0, 0]],
])  # rows ground truth, columns prediction
CM = PER_FRAME.sum(axis=0)  # [[3, 1, 0], [0, 1, 0], [0, 0, 0]]


def view(evaluated=(True, True, True), cm=CM) -> ReportView:
    return ReportView(SPACE, np.array(evaluated), cm, lambda: PER_FRAME, lambda: None)


def test_json_number():
    assert json_number(float("nan")) is None
    assert json_number(np.float64(0.5)) == 0.5 and type(json_number(np.float64(0.5))) is float


def test_per_class_values_skip_unevaluated_classes_and_write_undefined_as_none():
    iou = MetricSpec("iou", "iou_by_class", {})
    # a: 3 / (4 + 3 - 3); b: 1 / (1 + 2 - 1); c: 0 / 0
    assert values(iou, view()) == {"iou": {"a": 0.75, "b": 0.5, "c": None}}
    assert values(iou, view((True, False, False))) == {"iou": {"a": 0.75}}


def test_scalar_values():
    assert values(MetricSpec("mIoU", "mean_iou", {"mean": "present_in_ground_truth"}), view()) == {"mIoU": 0.625}
    assert values(MetricSpec("p", "precision", {"class": "b"}), view()) == {"p": 0.5}  # 1 of 2 predicted b
    assert values(MetricSpec("r", "recall", {"class": "a"}), view()) == {"r": 0.75}  # 3 of 4 a pixels
    assert values(MetricSpec("aAcc", "pixel_accuracy", {}), view()) == {"aAcc": 0.8}  # 4 of 5
    empty = view(cm=np.zeros((3, 3), dtype=np.int64))
    assert values(MetricSpec("mIoU", "mean_iou", {"mean": "present_in_ground_truth"}), empty) == {"mIoU": None}


def test_a_function_with_a_count_option_gives_its_frame_count_beside_it():
    spec = MetricSpec("mae", "fraction_mae", {"numerator": ["b"], "denominator": ["a", "b"], "frames_key": "frames"})
    # frame 1: b is 1/3 of a+b in both; frame 2: 0 in the ground truth, 1/2 predicted
    assert values(spec, view()) == {"mae": 0.25, "frames": 2}


def test_without_counted_bands_every_boundary_value_is_undefined():
    assert values(MetricSpec("biou", "boundary_iou_by_class", {}), view()) == {"biou": {"a": None, "b": None, "c": None}}
    assert values(MetricSpec("mBIoU", "mean_boundary_iou", {"mean": "present_in_ground_truth"}), view()) == {"mBIoU": None}


def test_classes_mask():
    assert view().classes(["a", "c"]).tolist() == [True, False, True]
    with pytest.raises(SegbenchError, match=r"^label space 'abc' has no class 'd' \(classes: \['a', 'b', 'c'\]\)$"):
        view().classes(["d"])
