"""Hand-computed metric cases on the Painting Vision definition (values derived in comments)."""

import math

import numpy as np
import pytest

from segbench.core import metrics
from segbench.core.confusion import FrameCounts, joint_histogram
from segbench.core.evaluation import evaluate
from segbench.protocols.definitions import load_benchmark

PV = load_benchmark("painting-vision")
V = 255

# Frame A: 7 decided pixels and one void; frame B: all void (contributes nothing).
GT_A = np.array([[1, 2, 8, 0], [V, 2, 8, 4]], np.uint8)
PRED_A = np.array([[1, 1, 8, 8], [8, 2, 0, 4]], np.uint8)
GT_B = np.array([[V, V]], np.uint8)
PRED_B = np.array([[2, 8]], np.uint8)


def counts(*pairs):
    return FrameCounts.from_histograms([f"f{i}" for i in range(len(pairs))], [joint_histogram(g, p) for g, p in pairs])


def test_tier1_by_hand():
    # Tier 1 confusion (rows gt other/wall/window): other [1,0,1], wall [0,3,0], window [1,0,1]
    shared = evaluate(PV, counts((GT_A, PRED_A), (GT_B, PRED_B)), PV.ground_truth)["shared_metrics"]
    assert shared["iou"] == {"other": pytest.approx(1 / 3, abs=0), "wall": 1.0, "window": pytest.approx(1 / 3, abs=0)}
    assert shared["mIoU"] == (1 / 3 + 1.0 + 1 / 3) / 3
    assert shared["window_precision"] == 0.5
    assert shared["window_recall"] == 0.5


def test_tier2_by_hand():
    # Ten-class IoU of the classes present in GT: 0 -> 0, 1 -> 1/2, 2 -> 1/2, 4 -> 1, 8 -> 1/3.
    # Painted coverage, frame A only: gt 2/3, pred 1/3 -> MAE 1/3 over 1 frame.
    paint = evaluate(PV, counts((GT_A, PRED_A), (GT_B, PRED_B)), PV.ground_truth)["paint_state_metrics"]
    assert paint["mIoU_full_10class"] == pytest.approx((0 + 0.5 + 0.5 + 1 + 1 / 3) / 5, rel=1e-15)
    assert paint["painted_coverage_mae"] == pytest.approx(1 / 3, rel=1e-15)
    assert paint["painted_coverage_frames"] == 1


def test_floor_by_hand():
    # All-other: tier-1 GT counts other 2, wall 3, window 2 -> IoU other 2/7, wall 0, window 0.
    floor_pred = np.zeros_like(GT_A)
    shared = evaluate(PV, counts((GT_A, floor_pred)), PV.ground_truth)["shared_metrics"]
    assert shared["iou"] == {"other": 2 / 7, "wall": 0.0, "window": 0.0}
    assert shared["mIoU"] == pytest.approx(2 / 21, rel=1e-15)
    assert shared["window_precision"] is None  # no window predicted: undefined, never 0 or 1
    assert shared["window_recall"] == 0.0


def test_all_void_split_is_null_everywhere():
    result = evaluate(PV, counts((GT_B, PRED_B)), PV.ground_truth)
    shared = result["shared_metrics"]
    for per_class in ("iou", "dice", "boundary_iou"):
        assert shared.pop(per_class) == {"other": None, "wall": None, "window": None}
    assert shared == dict.fromkeys(shared, None) and "mIoU" in shared and "mIoU_per_image" in shared
    paint = result["paint_state_metrics"]
    assert paint.pop("painted_coverage_frames") == 0
    for per_class in ("dice", "boundary_iou"):
        assert paint.pop(per_class) == dict.fromkeys(PV.space("painting-vision-10").names, None)
    assert paint == dict.fromkeys(paint, None) and "painted_coverage_mae" in paint


def test_class_absent_from_gt_but_predicted_is_zero_and_not_averaged():
    gt = np.array([[1, 1]], np.uint8)  # only wall
    pred = np.array([[1, 8]], np.uint8)  # a false window
    shared = evaluate(PV, counts((gt, pred)), PV.ground_truth)["shared_metrics"]
    assert shared["iou"] == {"other": None, "wall": 0.5, "window": 0.0}
    assert shared["mIoU"] == 0.5  # only wall is present in the ground truth
    assert shared["window_precision"] == 0.0
    assert shared["window_recall"] is None


def test_painted_coverage_edge_cases():
    # f0: GT all painted, model predicts no decided wall -> pred_frac 0, error 1.
    # f1: GT unpainted only, model half painted -> |1/2 - 0| = 1/2.
    # f2: GT has no decided wall (uncertain + window) -> not covered.
    # f3: prediction on void pixels does not count: pred_frac over non-void = 1/1.
    gt = [np.array([[2, 2]], np.uint8), np.array([[1, 1]], np.uint8), np.array([[3, 8]], np.uint8),
          np.array([[2, V]], np.uint8)]
    pred = [np.array([[0, 3]], np.uint8), np.array([[1, 2]], np.uint8), np.array([[2, 2]], np.uint8),
            np.array([[2, 1]], np.uint8)]
    paint = evaluate(PV, counts(*zip(gt, pred)), PV.ground_truth)["paint_state_metrics"]
    assert paint["painted_coverage_frames"] == 3
    assert paint["painted_coverage_mae"] == pytest.approx((1 + 0.5 + 0) / 3, rel=1e-15)


def test_baseline_space_gets_null_tier2_and_tier1_by_name():
    ade = PV.space("ade20k")
    wall, windowpane, floor = ade.id_of("wall"), ade.id_of("windowpane"), ade.id_of("floor")
    gt = np.array([[1, 2, 8, 5]], np.uint8)
    pred = np.array([[wall, floor, windowpane, floor]], np.uint8)
    result = evaluate(PV, counts((gt, pred)), ade)
    assert result["shared_metrics"]["iou"] == {"other": 0.5, "wall": 0.5, "window": 1.0}
    paint = result["paint_state_metrics"]
    assert list(paint)[:3] == ["painted_coverage_mae", "painted_coverage_frames", "mIoU_full_10class"]
    assert paint == dict.fromkeys(paint, None)  # the null report: every output of every metric


def test_mean_rules_differ_exactly_where_a_class_is_empty():
    cm = np.array([[2, 0, 0], [1, 1, 0], [0, 0, 0]])  # class 2 absent from both sides
    ious = metrics.iou(cm)
    assert ious[0] == 2 / 3 and ious[1] == 0.5 and math.isnan(ious[2])
    every = np.ones(3, bool)
    assert metrics.mean_iou(cm, "present_in_ground_truth", every) == (2 / 3 + 0.5) / 2
    assert metrics.mean_iou(cm, "nan_skipping", every) == (2 / 3 + 0.5) / 2
    assert metrics.mean_iou(cm, "empty_union_as_zero", every) == (2 / 3 + 0.5 + 0) / 3
    assert math.isnan(metrics.mean_iou(cm, "all_classes", every))
    full = np.array([[2, 1], [0, 3]])
    values = {metrics.mean_iou(full, rule, np.ones(2, bool)) for rule in
              ("present_in_ground_truth", "nan_skipping", "empty_union_as_zero", "all_classes")}
    assert values == {(2 / 3 + 3 / 4) / 2}


def test_perfect_prediction_on_an_odd_size_frame():
    gt = np.arange(15, dtype=np.uint8).reshape(3, 5) % 3  # odd size, classes 0..2
    pred = gt.copy()
    shared = evaluate(PV, counts((gt, pred)), PV.ground_truth)["shared_metrics"]
    assert shared["mIoU"] == 1.0 and shared["window_precision"] is None


def test_the_no_class_column_is_a_false_negative_and_a_false_positive_nowhere():
    # Two classes; the last column: pixels predicted as no class (void).
    cm = np.array([[6, 2, 4],
                   [1, 3, 0]])
    square = cm[:, :2]
    assert metrics.true_positives(cm).tolist() == [6, 3]
    assert metrics.ground_truth_area(cm).tolist() == [12, 4] and metrics.predicted_area(cm).tolist() == [7, 5]
    np.testing.assert_array_equal(metrics.iou(cm), [6 / (12 + 7 - 6), 3 / (4 + 5 - 3)])
    np.testing.assert_array_equal(metrics.dice(cm), [12 / (12 + 7), 6 / (4 + 5)])
    np.testing.assert_array_equal(metrics.class_accuracy(cm), [6 / 12, 3 / 4])
    assert metrics.pixel_accuracy(cm) == 9 / 16 and metrics.precision(cm, 0) == 6 / 7 and metrics.recall(cm, 0) == 0.5
    np.testing.assert_array_equal(metrics.iou(square), [6 / 9, 3 / 6])  # without the column: a square matrix
    stack = np.stack([cm, np.zeros_like(cm)])
    assert metrics.per_frame_mean_iou(stack, "ground_truth", np.ones(2, bool))[0] == (6 / 13 + 3 / 6) / 2
    assert metrics.fraction_mae(stack, np.array([False, True]), np.array([True, True])) == (abs(5 / 12 - 4 / 16), 1)


def test_row_means_and_sums_by_hand_and_undefined_for_a_row_choosing_nothing():
    values = np.array([[1.0, 2.0, 4.0], [5.0, 6.0, 7.0], [1.0, 1.0, 1.0]])
    chosen = np.array([[True, False, True], [False, False, False], [True, True, True]])
    np.testing.assert_array_equal(metrics.row_means(values, chosen), [2.5, np.nan, 1.0])
    np.testing.assert_array_equal(metrics.row_sums(values, chosen), [5.0, np.nan, 3.0])


def test_a_stack_gives_each_rows_own_numpy_mean_bit_for_bit():
    # Rows wide enough (26 classes) that numpy sums pairwise, in blocks of 8: each row's chosen
    # values alone, through numpy's own mean, are the independent computation.
    rng = np.random.default_rng(3)
    values = rng.random((300, 26)) * 10.0 ** rng.integers(-3, 4, (300, 26))
    chosen = rng.random((300, 26)) < rng.choice([0.4, 0.9, 1.0], (300, 1))
    means, sums = metrics.row_means(values, chosen), metrics.row_sums(values, chosen)
    for row, pick, mean, total in zip(values, chosen, means, sums):
        assert (mean, total) == (row[pick].mean(), row[pick].sum()) if pick.any() else np.isnan(mean)


def test_frame_mean_counts_each_frame_as_often_as_drawn():
    values = np.array([0.5, np.nan, 1.0])  # the second frame undefined: skipped
    weights = np.array([[1, 0, 3], [0, 2, 0], [2, 1, 1]])
    np.testing.assert_array_equal(metrics.frame_mean(values, weights), [(0.5 + 3 * 1.0) / 4, np.nan, 2 / 3])
    assert metrics.frame_mean(values, np.ones(3, np.int64)) == 0.75
    rng = np.random.default_rng(4)
    many, drawn = rng.random(40), rng.integers(0, 4, (50, 40))
    for row, mean in zip(drawn, metrics.frame_mean(many, drawn)):
        assert mean == np.repeat(many, row).mean()


def test_the_areas_are_each_rows_and_columns_sum_in_the_counts_type():
    # A 2 x 3 matrix (two classes and the no-class column) by hand: rows 1+2+3, 4+5+6; the
    # predicted area is the first two columns' sums, 1+4 and 2+5.
    cm = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    assert metrics.ground_truth_area(cm).tolist() == [6, 15] and metrics.predicted_area(cm).tolist() == [5, 7]
    # int64 counts near 2^62 stay exact; small integers widen as numpy's sum widens them (200 x 4 > 255).
    big = np.random.default_rng(6).integers(0, 2 ** 58, (40, 4, 5))
    assert metrics.ground_truth_area(big).dtype == np.int64
    np.testing.assert_array_equal(metrics.ground_truth_area(big), big.sum(axis=-1))
    np.testing.assert_array_equal(metrics.predicted_area(big), big.sum(axis=-2)[..., :4])
    assert metrics.ground_truth_area(np.full((2, 3, 4), 200, np.uint8)).tolist() == [[800] * 3] * 2
    floats = big / 7.0
    np.testing.assert_array_equal(metrics.ground_truth_area(floats), floats.sum(axis=-1))
