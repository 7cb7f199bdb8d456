"""IDD level-3/2/1 reports: hand-derived numbers, and every level against a direct computation
written here from the reference evaluator's lists (not from the label table)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from segbench.core.confusion import FrameCounts, joint_histogram
from segbench.core.evaluation import evaluate
from segbench.protocols.definitions import load_benchmark

# The reference evaluator's lists (evaluation/evaluate_mIoU.py), as docs/protocols records them.
MAPPING_2_TO_3 = [[0], [1], [2], [3], [4], [5], [6, 7], [8, 9], [10, 11, 12], [13, 14], [15, 16], [17, 18, 19],
                  [20, 21], [22, 23], [24], [25]]
MAPPING_1_TO_2 = [[0, 1], [2, 3], [4, 5], [6, 7, 8], [9, 10, 11, 12], [13, 14], [15]]
CORRECTED_LEVEL1_TO_3 = [[0, 1], [2, 3], [4, 5], [6, 7, 8, 9, 10, 11, 12], list(range(13, 22)), [22, 23, 24], [25]]


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("idd20k-icvgip2020")


def reference_matrix(pairs):
    """The reference's 27x27 matrix: every value >= 26 (255 included) is bucket 26, summed over frames."""
    matrix = np.zeros((27, 27), dtype=np.int64)
    for gt, pred in pairs:
        g, p = np.minimum(gt, 26).astype(np.int64), np.minimum(pred, 26).astype(np.int64)
        matrix += np.bincount(27 * g.ravel() + p.ravel(), minlength=729).reshape(27, 27)
    return matrix


def reference_level3(matrix):
    """eval_ious: FN includes the misc column, FP excludes the GT-misc row."""
    ious = []
    for c in range(26):
        tp = matrix[c, c]
        fn = matrix[c, :].sum() - tp
        fp = matrix[:26, c].sum() - tp
        ious.append(tp / (tp + fp + fn) if tp + fp + fn else math.nan)
    return ious


def block_matrix(matrix, groups):
    """higher_level_mat: sum blocks of the matrix over `groups` (row and column 26 never included)."""
    out = np.zeros((len(groups), len(groups)), dtype=np.int64)
    for i, rows in enumerate(groups):
        for j, cols in enumerate(groups):
            out[i, j] = matrix[np.ix_(rows, cols)].sum()
    return out


def generalized_ious(matrix):
    out = []
    for c in range(len(matrix)):
        tp = matrix[c, c]
        denominator = matrix[c, :].sum() + matrix[:, c].sum() - tp
        out.append(tp / denominator if denominator else math.nan)
    return out


def direct_reports(pairs):
    matrix = reference_matrix(pairs)
    level3 = reference_level3(matrix)
    level2 = generalized_ious(block_matrix(matrix, MAPPING_2_TO_3))
    level1_reference = generalized_ious(block_matrix(matrix, MAPPING_1_TO_2))  # the bug: level-2 lists on level 3
    level1_corrected = generalized_ious(block_matrix(matrix, CORRECTED_LEVEL1_TO_3))
    return {"level3": level3, "level2": level2, "level1_reference": level1_reference, "level1_corrected": level1_corrected}


def run(benchmark, pairs, space="idd-level3-misc"):
    counts = FrameCounts.from_histograms([f"d/{i}" for i in range(len(pairs))], [joint_histogram(g, p) for g, p in pairs])
    return evaluate(benchmark, counts, benchmark.space(space))


def as_list(iou_by_class):
    return [math.nan if v is None else v for v in iou_by_class.values()]


def assert_same(values, expected):
    assert len(values) == len(expected)
    for got, want in zip(values, expected):
        assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, abs=1e-12)


def every_class_frame():
    """GT: each level-3 class twice, plus void (255) and GT misc (40); the prediction errs on purpose."""
    gt = np.array([list(range(26)) * 2 + [255, 40]], dtype=np.uint8)
    pred = gt.copy()
    pred[0, 3] = 26  # non-drivable fallback predicted misc: a miss at level 3, dropped at levels 2 and 1
    pred[0, 4] = 5  # person -> rider
    pred[0, 9] = 16  # car -> guard rail
    pred[0, 52] = 7  # GT void predicted bicycle: ignored everywhere
    pred[0, 53] = 255  # GT misc predicted 255: ignored
    return gt, pred


def test_level3_hand_derived(benchmark):
    gt, pred = every_class_frame()
    results = run(benchmark, [(gt, pred)])
    iou = results["level3"]["iou"]
    assert list(iou) == benchmark.space("idd-level3-misc").names[:26]  # misc is excluded from the report
    assert iou["non-drivable fallback"] == 0.5  # 1 TP, 1 miss (predicted misc)
    assert iou["person"] == 0.5  # 1 TP, 1 FN
    assert iou["rider"] == pytest.approx(2 / 3)  # 2 TP, 1 FP
    assert iou["car"] == 0.5
    assert iou["guard rail"] == pytest.approx(2 / 3)
    assert iou["bicycle"] == 1.0  # the GT-void pixel predicted bicycle is no FP
    assert results["level3"]["mIoU"] == pytest.approx((21 + 3 * 0.5 + 2 * (2 / 3)) / 26)
    assert results["level3"]["mIoU_nan_skipping"] == results["level3"]["mIoU"]


def test_level2_and_level1_hand_derived(benchmark):
    results = run(benchmark, [every_class_frame()])
    level2 = results["level2"]["iou"]
    assert level2["non-drivable fallback"] == 1.0  # the misc-predicted pixel is dropped, not a miss
    assert level2["person"] == 0.5 and level2["rider"] == pytest.approx(2 / 3)
    assert level2["car-auto"] == pytest.approx(3 / 4)  # 4 GT pixels, one predicted guard rail
    assert level2["fence-guard rail"] == pytest.approx(4 / 5)
    corrected = results["level1_corrected"]["iou"]
    assert corrected["living-things"] == 1.0  # person -> rider stays inside living-things
    assert corrected["vehicles"] == pytest.approx(13 / 14)  # 14 GT pixels, the car predicted guard rail
    assert corrected["road-side-objs"] == pytest.approx(18 / 19)
    reference = results["level1_reference"]["iou"]
    # The reference groups level-3 ids with level-2 lists: car (9) is a "road-side-obj", guard rail
    # (16) is in no group, so the car pixel predicted guard rail simply disappears.
    assert reference["road-side-objs"] == 1.0
    assert reference["sky"] == 1.0  # "sky" holds fence (15) only
    assert results["level1_reference"]["mIoU"] == 1.0


def test_absent_class_makes_reference_mean_null(benchmark):
    gt = np.array([[0, 0, 1, 2, 255, 30]], dtype=np.uint8)
    pred = np.array([[0, 1, 1, 26, 0, 5]], dtype=np.uint8)
    results = run(benchmark, [(gt, pred)])
    level3 = results["level3"]
    assert level3["iou"]["road"] == 0.5 and level3["iou"]["drivable fallback"] == 0.5
    assert level3["iou"]["sidewalk"] == 0.0  # predicted misc: a miss
    assert level3["iou"]["rider"] is None  # predicted only on ignored GT pixels: empty union
    assert level3["mIoU"] is None  # as the reference: NaN as soon as one class is undefined
    assert level3["mIoU_nan_skipping"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_level_equals_the_direct_computation(benchmark, seed):
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(3):
        gt = rng.choice(np.r_[np.arange(26), [26, 30, 254, 255]], size=(9, 11)).astype(np.uint8)
        pred = rng.choice(np.r_[np.arange(26), [26, 255]], size=(9, 11)).astype(np.uint8)
        pairs.append((gt, pred))
    if seed == 2:  # one class absent from GT and prediction
        pairs = [(np.where(g == 7, 0, g).astype(np.uint8), np.where(p == 7, 0, p).astype(np.uint8)) for g, p in pairs]
    results = run(benchmark, pairs)
    for key, expected in direct_reports(pairs).items():
        assert_same(as_list(results[key]["iou"]), expected)
        mean = float(np.mean(expected))
        assert (results[key]["mIoU"] is None) == math.isnan(mean)
        if not math.isnan(mean):
            assert results[key]["mIoU"] == pytest.approx(mean, abs=1e-12)
        assert results[key]["mIoU_nan_skipping"] == pytest.approx(float(np.nanmean(expected)), abs=1e-12)
    if seed == 2:
        assert results["level3"]["mIoU"] is None


def test_a_26_class_model_is_scored_like_the_challenge_format(benchmark):
    """A checkpoint predicts in idd-level3 (it never outputs misc): the same numbers as the same
    masks read in the challenge's submission space."""
    rng = np.random.default_rng(3)
    gt = rng.choice(np.r_[np.arange(26), [255]], size=(12, 12)).astype(np.uint8)
    pred = rng.integers(0, 26, size=(12, 12)).astype(np.uint8)
    assert run(benchmark, [(gt, pred)], "idd-level3") == run(benchmark, [(gt, pred)], "idd-level3-misc")
