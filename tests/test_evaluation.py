"""A benchmark's reports from counts (segbench.core.evaluation)."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.core.bandplan import band_plan
from segbench.core.confusion import BandCounts, FrameCounts, joint_histogram
from segbench.core.evaluation import evaluate, null_report, report_matrix, void_predictions
from segbench.core.labels import LabelSpace
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark

PV = load_benchmark("painting-vision")


def test_null_report_lists_every_output():
    paint = next(r for r in PV.reports if r.key == "paint_state_metrics")
    report = null_report(paint)
    assert list(report)[:3] == ["painted_coverage_mae", "painted_coverage_frames", "mIoU_full_10class"]
    assert set(report.values()) == {None} and len(report) == len(paint.metrics) + 1


def test_a_model_space_reaching_no_report_is_refused():
    benchmark = load_benchmark("idd20k-icvgip2020")
    level1 = benchmark.space("idd-level1")
    counts = FrameCounts.from_histograms(["f"], [joint_histogram(np.zeros((2, 2), np.uint8), np.zeros((2, 2), np.uint8))])
    results = evaluate(benchmark, counts, level1)  # a level-1 model: the level-1 reports only
    assert results["level3"]["mIoU_nan_skipping"] is None and results["level2"]["mIoU_nan_skipping"] is None
    assert results["level1_corrected"]["mIoU_nan_skipping"] == 1.0
    other = LabelSpace.from_table({"name": "t", "classes": [{"id": 0, "name": "thing"}]})
    with pytest.raises(SegbenchError, match=r"predictions in label space 't' map into none of its reports \(level3: idd-level3-misc"):
        evaluate(benchmark, counts, other)


# One 2x3 frame with every case (255 is void in painting-vision-10):
#   gt   255 255  1      pred 255  1 255
#         1   2   8            1 255  2
# (void, void) and (void, 1) are excluded; (1, 255) and (2, 255) are misses of wall_unpainted and
# wall_painted (no class predicted); (1, 1) is right; (8, 2) predicts wall_painted on a window.
VOID_GT = np.array([[255, 255, 1], [1, 2, 8]], np.uint8)
VOID_PRED = np.array([[255, 1, 255], [1, 255, 2]], np.uint8)


def void_frame_counts() -> FrameCounts:
    ten = PV.space("painting-vision-10")
    plan = band_plan(PV, ten)  # a 2x3 frame lies wholly in every band
    cells, bands = plan.frame_counts(VOID_GT, VOID_PRED)
    return FrameCounts.from_cells(["f"], [cells], BandCounts.from_cells(plan.spaces, [bands]))


def test_a_void_prediction_is_a_miss_in_every_report_and_metric():
    ten = PV.space("painting-vision-10")
    counts = void_frame_counts()
    tier1, paint = PV.reports
    # Columns: the report's classes, then no class predicted.
    np.testing.assert_array_equal(report_matrix(PV, tier1, ten, counts), [[0, 0, 0, 0],  # other
                                                                          [0, 1, 0, 2],  # wall
                                                                          [0, 1, 0, 0]])  # window
    expected_ten = np.zeros((10, 11), np.int64)
    expected_ten[1, 1] = expected_ten[1, 10] = expected_ten[2, 10] = expected_ten[8, 2] = 1
    np.testing.assert_array_equal(report_matrix(PV, paint, ten, counts), expected_ten)
    assert void_predictions(PV, counts, ten).tolist() == [2]

    shared = evaluate(PV, counts, ten)["shared_metrics"]
    # wall: TP 1, ground truth 3 (two of them predicted as no class), predicted 2: 1 / (3 + 2 - 1).
    assert shared["iou"] == {"other": None, "wall": 0.25, "window": 0.0}
    assert shared["mIoU"] == 0.125 and shared["mIoU_per_image"] == 0.125
    assert shared["boundary_iou"] == shared["iou"] and shared["mBIoU"] == 0.125  # every pixel is in the bands
    assert shared["window_precision"] is None and shared["window_recall"] == 0.0
    assert shared["aAcc"] == 0.25 and shared["mAcc"] == 1 / 6  # nan-skipping: (1/3 + 0) / 2
    assert shared["dice"] == {"other": None, "wall": 0.4, "window": 0.0} and shared["mDice"] == 0.2
    assert shared["fwIoU"] == 0.75 * 0.25
    paint_state = evaluate(PV, counts, ten)["paint_state_metrics"]
    # wall_unpainted 1 / (2 + 1 - 1), wall_painted 0 / (1 + 1), window 0 / 1.
    assert paint_state["mIoU_full_10class"] == 1 / 6
    # gt_frac = 1/3 (one painted of three decided-wall pixels); pred_frac = 1/2 (the no-class pixels in neither).
    assert paint_state["painted_coverage_mae"] == pytest.approx(1 / 6, abs=1e-15)
    assert paint_state["painted_coverage_frames"] == 1


def test_a_blank_prediction_scores_zero_in_every_class_present():
    """All 255: every class present in the ground truth has IoU 0, the others none; below the floor."""
    ten = PV.space("painting-vision-10")
    counts = FrameCounts.from_histograms(["f"], [joint_histogram(VOID_GT, np.full_like(VOID_GT, 255))])
    results = evaluate(PV, counts, ten)
    assert results["shared_metrics"]["iou"] == {"other": None, "wall": 0.0, "window": 0.0}
    assert results["shared_metrics"]["mIoU"] == results["shared_metrics"]["aAcc"] == 0.0
    assert results["paint_state_metrics"]["mIoU_full_10class"] == 0.0
    assert results["paint_state_metrics"]["painted_coverage_mae"] == 1 / 3  # predicted 0 of a third
    assert void_predictions(PV, counts, ten).tolist() == [4]


def test_idd_keeps_the_reference_rule_and_a_26_class_model_misses_on_void():
    """IDD's challenge format folds >= 26 into misc (a miss at level 3, dropped at levels 2 and 1, as
    the reference); a 26-class model's (idd-level3) void value is no class: a miss at every level."""
    idd = load_benchmark("idd20k-icvgip2020")
    gt = np.array([[0, 0, 255, 1]], np.uint8)  # road, road, void, drivable fallback
    pred = np.array([[0, 255, 255, 30]], np.uint8)
    counts = FrameCounts.from_histograms(["f"], [joint_histogram(gt, pred)])
    misc = evaluate(idd, counts, idd.space("idd-level3-misc"))
    level3 = evaluate(idd, counts, idd.space("idd-level3"))
    assert misc["level3"] == level3["level3"]
    assert misc["level3"]["iou"]["road"] == 0.5 and misc["level3"]["iou"]["drivable fallback"] == 0.0
    assert misc["level2"]["iou"]["road"] == 1.0  # the misc predictions drop out (the reference's level 2)
    assert level3["level2"]["iou"]["road"] == 0.5  # no class predicted: a miss
    assert void_predictions(idd, counts, idd.space("idd-level3")).tolist() == [2]
    assert void_predictions(idd, counts, idd.space("idd-level3-misc")).tolist() == [0]  # misc is a class there
