"""The secondary measures (aAcc, mAcc, Dice, fwIoU, per-image mIoU) by hand and against
torchmetrics where its semantics agree; the record's fields from a definition."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from segbench.core import metrics
from segbench.core.confusion import FrameCounts, joint_histogram
from segbench.core.evaluation import evaluate, record_results
from segbench.errors import SegbenchError
from segbench.io.schemas import validate
from segbench.protocols.definitions import benchmark_path, load_benchmark, parse_benchmark, read_yaml

PV = load_benchmark("painting-vision")
V = 255
EVERY3 = np.ones(3, bool)

# Frame A in the 10-class raw values (Tier 1: 0/4 other, 1/2 wall, 8 window), one void pixel.
# Tier-1 confusion (rows GT other/wall/window): other [1,0,1], wall [0,3,0], window [1,0,1].
GT_A = np.array([[1, 2, 8, 0], [V, 2, 8, 4]], np.uint8)
PRED_A = np.array([[1, 1, 8, 8], [8, 2, 0, 4]], np.uint8)
# Frame C: only wall in the ground truth, one false window.
GT_C = np.array([[1, 1]], np.uint8)
PRED_C = np.array([[1, 8]], np.uint8)
# Frame B: all void.
GT_B = np.array([[V, V, V]], np.uint8)
PRED_B = np.array([[2, 8, 0]], np.uint8)


def counts(*pairs):
    return FrameCounts.from_histograms([f"f{i}" for i in range(len(pairs))], [joint_histogram(g, p) for g, p in pairs])


def test_frame_a_by_hand():
    shared = evaluate(PV, counts((GT_A, PRED_A)), PV.ground_truth)["shared_metrics"]
    assert shared["aAcc"] == 5 / 7
    assert shared["mAcc"] == pytest.approx((1 / 2 + 1 + 1 / 2) / 3, rel=1e-15)
    assert shared["dice"] == {"other": 0.5, "wall": 1.0, "window": 0.5}  # 2*1/(2+2), 6/6, 2*1/(2+2)
    assert shared["mDice"] == pytest.approx(2 / 3, rel=1e-15)
    # supports 2, 3, 2 of 7; IoUs 1/3, 1, 1/3 -> 2/21 + 9/21 + 2/21
    assert shared["fwIoU"] == pytest.approx(13 / 21, rel=1e-15)
    assert shared["mIoU_per_image"] == shared["mIoU_per_image_gt_or_pred"] == pytest.approx(5 / 9, rel=1e-15)


def test_per_image_variants_differ_on_a_class_predicted_but_absent():
    # Frame C: wall IoU 1/2, window IoU 0 (predicted, absent from the GT).
    # GT classes only: frame A 5/9, frame C 1/2; GT or prediction: 5/9 and (1/2 + 0)/2 = 1/4.
    # The all-void frame B counts in neither. Dataset-level: the window row/column gains a FP.
    shared = evaluate(PV, counts((GT_A, PRED_A), (GT_B, PRED_B), (GT_C, PRED_C)), PV.ground_truth)["shared_metrics"]
    assert shared["mIoU_per_image"] == pytest.approx((5 / 9 + 1 / 2) / 2, rel=1e-15)
    assert shared["mIoU_per_image_gt_or_pred"] == pytest.approx((5 / 9 + 1 / 4) / 2, rel=1e-15)
    # Totals: other [1,0,1], wall [0,4,1], window [1,0,1] -> aAcc 6/9; accuracies 1/2, 4/5, 1/2.
    assert shared["aAcc"] == pytest.approx(6 / 9, rel=1e-15)
    assert shared["mAcc"] == pytest.approx((1 / 2 + 4 / 5 + 1 / 2) / 3, rel=1e-15)
    # Dice: other 2/4, wall 8/9, window 2/5.
    assert shared["dice"] == pytest.approx({"other": 0.5, "wall": 8 / 9, "window": 2 / 5}, rel=1e-15)


def test_empty_class_is_undefined_and_skipped():
    cm = np.array([[2, 0, 0], [1, 1, 0], [0, 0, 0]])  # class 2 absent from both sides
    assert metrics.dice(cm)[:2].tolist() == [4 / 5, 2 / 3] and math.isnan(metrics.dice(cm)[2])
    assert metrics.class_accuracy(cm)[:2].tolist() == [1.0, 0.5] and math.isnan(metrics.class_accuracy(cm)[2])
    assert metrics.class_mean(metrics.dice(cm), cm, "nan_skipping", EVERY3) == (4 / 5 + 2 / 3) / 2
    assert metrics.class_mean(metrics.dice(cm), cm, "empty_union_as_zero", EVERY3) == (4 / 5 + 2 / 3) / 3
    assert math.isnan(metrics.class_mean(metrics.dice(cm), cm, "all_classes", EVERY3))
    # fwIoU: supports 2 and 2 of 4 -> (2/3 + 1/2) / 2; the empty class weighs nothing.
    assert metrics.frequency_weighted_iou(cm, EVERY3) == pytest.approx((2 / 3 + 1 / 2) / 2, rel=1e-15)
    assert math.isnan(metrics.frequency_weighted_iou(np.zeros((3, 3), np.int64), EVERY3))


def test_excluded_classes_are_left_out_of_every_mean():
    cm = np.array([[3, 1, 0], [0, 2, 2], [0, 0, 0]])  # class 2 is excluded (like IDD's misc column)
    evaluated = np.array([True, True, False])
    assert metrics.class_mean(metrics.class_accuracy(cm), cm, "all_classes", evaluated) == (3 / 4 + 2 / 4) / 2
    # fwIoU over the evaluated rows: IoU0 3/4, IoU1 2/5, supports 4 and 4.
    assert metrics.frequency_weighted_iou(cm, evaluated) == pytest.approx((3 / 4 + 2 / 5) / 2, rel=1e-15)
    stack = cm[None]
    assert metrics.per_image_mean_iou(stack, "ground_truth_or_prediction", evaluated) == pytest.approx((3 / 4 + 2 / 5) / 2)


def test_per_frame_values_skip_frames_without_classes():
    stack = np.zeros((2, 2, 2), np.int64)
    stack[0] = [[2, 2], [0, 0]]  # class 0 in GT (IoU 1/2); class 1 only predicted (IoU 0)
    values = metrics.per_frame_mean_iou(stack, "ground_truth", np.ones(2, bool))
    assert values[0] == 0.5 and math.isnan(values[1])
    assert metrics.per_frame_mean_iou(stack, "ground_truth_or_prediction", np.ones(2, bool))[0] == 0.25
    assert math.isnan(metrics.per_image_mean_iou(stack[1:], "ground_truth", np.ones(2, bool)))


# --- torchmetrics, where its conventions agree ---------------------------------------------


def random_frames(seed: int, classes: int, frames: int, void: bool):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(frames):
        h, w = rng.integers(5, 12, size=2)  # odd sizes too
        gt = rng.integers(0, classes, size=(h, w)).astype(np.uint8)
        pred = np.where(rng.random((h, w)) < 0.6, gt, rng.integers(0, classes, size=(h, w))).astype(np.uint8)
        if void:
            gt[rng.random((h, w)) < 0.1] = V
        out.append((gt, pred))
    return out


def confusion(pairs, classes):
    total = sum(joint_histogram(g, p) for g, p in pairs)
    return total[:classes, :classes]


def flat(pairs):
    import torch

    gt = np.concatenate([g.ravel() for g, _ in pairs]).astype(np.int64)
    pred = np.concatenate([p.ravel() for _, p in pairs]).astype(np.int64)
    return torch.from_numpy(pred), torch.from_numpy(gt)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dataset_level_measures_agree_with_torchmetrics(seed):
    tm = pytest.importorskip("torchmetrics.classification")
    k = 5
    pairs = random_frames(seed, k, 4, void=True)
    cm = confusion(pairs, k)
    every = np.ones(k, bool)
    preds, target = flat(pairs)

    def tm_value(metric):
        return metric(num_classes=k, ignore_index=V, **kwargs)(preds, target)

    kwargs = {"average": "micro"}
    assert tm_value(tm.MulticlassAccuracy).item() == pytest.approx(metrics.pixel_accuracy(cm), abs=1e-6)
    kwargs = {"average": "macro"}  # every class is in the GT here: both skip nothing
    assert tm_value(tm.MulticlassAccuracy).item() == pytest.approx(
        metrics.class_mean(metrics.class_accuracy(cm), cm, "nan_skipping", every), abs=1e-6)
    assert tm_value(tm.MulticlassF1Score).item() == pytest.approx(
        metrics.class_mean(metrics.dice(cm), cm, "nan_skipping", every), abs=1e-6)
    kwargs = {"average": "none"}
    assert tm_value(tm.MulticlassF1Score).numpy() == pytest.approx(metrics.dice(cm), abs=1e-6)
    kwargs = {"average": "weighted"}  # IoU weighted by support: the frequency-weighted IoU
    assert tm_value(tm.MulticlassJaccardIndex).item() == pytest.approx(
        metrics.frequency_weighted_iou(cm, every), abs=1e-6)


def test_where_torchmetrics_differs_a_predicted_class_absent_from_the_ground_truth():
    tm = pytest.importorskip("torchmetrics.classification")
    # Class 2 is predicted once and never in the GT: its accuracy is undefined here (skipped,
    # as mmseg's nanmean), 0 for torchmetrics' macro accuracy; its Dice is 0 for both.
    pairs = [(np.array([[0, 0, 1, 1]], np.uint8), np.array([[0, 2, 1, 1]], np.uint8))]
    cm = confusion(pairs, 3)
    preds, target = flat(pairs)
    ours = metrics.class_mean(metrics.class_accuracy(cm), cm, "nan_skipping", EVERY3)
    theirs = tm.MulticlassAccuracy(num_classes=3, average="macro")(preds, target).item()
    assert ours == (1 / 2 + 1) / 2 and theirs == pytest.approx((1 / 2 + 1 + 0) / 3)
    dice = metrics.class_mean(metrics.dice(cm), cm, "nan_skipping", EVERY3)
    assert dice == pytest.approx((2 / 3 + 1 + 0) / 3) and tm.MulticlassF1Score(
        num_classes=3, average="macro")(preds, target).item() == pytest.approx(dice)


def test_per_image_variant_agrees_with_torchmetrics_per_sample_mean_iou():
    pytest.importorskip("torchmetrics")
    import torch
    from torchmetrics.functional.segmentation import mean_iou
    from torchmetrics.segmentation import MeanIoU

    k = 4
    pairs = random_frames(5, k, 6, void=False)  # torchmetrics' segmentation metrics know no void
    stack = np.stack([confusion([p], k) for p in pairs])
    every = np.ones(k, bool)
    per_sample = [mean_iou(torch.from_numpy(p.astype(np.int64)), torch.from_numpy(g.astype(np.int64)), num_classes=k,
                           input_format="index").item() for g, p in pairs]
    assert np.mean(per_sample) == pytest.approx(metrics.per_image_mean_iou(stack, "ground_truth_or_prediction", every),
                                                abs=1e-6)
    # Its MeanIoU module pools (frame, class) pairs instead: a mean of means only when every
    # frame holds as many classes. Computed here from our own per-frame IoUs.
    metric = MeanIoU(num_classes=k, input_format="index")
    for g, p in pairs:
        metric.update(torch.from_numpy(p.astype(np.int64))[None], torch.from_numpy(g.astype(np.int64))[None])
    ious = [metrics.iou(cm) for cm in stack]
    pooled = np.nanmean(np.concatenate(ious))
    assert metric.compute().item() == pytest.approx(pooled, abs=1e-6)


# --- the registry and what is derived from it ------------------------------------------------


def definition_with(change):
    doc = copy.deepcopy(read_yaml(benchmark_path("painting-vision")))
    change(doc)
    return doc


@pytest.mark.parametrize("entry, message", [
    ({"key": "x", "fn": "mean_f1"}, "reports/0/metrics/0/fn"),
    ({"key": "x", "fn": "dice_by_class", "mean": "nan_skipping"}, "Additional properties"),
    ({"key": "x", "fn": "mean_dice"}, "'mean' is a required property"),
    ({"key": "x", "fn": "per_image_mean_iou", "classes": "prediction"}, "reports/0/metrics/0/classes"),
])
def test_schema_refuses_unknown_functions_and_options(entry, message):
    doc = definition_with(lambda d: d["reports"][0]["metrics"].insert(0, entry))
    with pytest.raises(SegbenchError, match=message):
        validate(doc, "benchmark", "pv.yaml")


def test_record_defaults_to_the_headline_and_results_keep_everything():
    def drop_records(doc):
        for report in doc["reports"]:
            report.pop("record")

    doc = definition_with(drop_records)
    validate(doc, "benchmark", "pv.yaml")
    benchmark = parse_benchmark(doc, benchmark_path("painting-vision"))
    results = evaluate(benchmark, counts((GT_A, PRED_A)), benchmark.ground_truth)
    assert record_results(benchmark, results) == {"shared_metrics": {"mIoU": results["shared_metrics"]["mIoU"]}}
    assert len(results["shared_metrics"]) == 13
    # The shipped definition keeps the specification's fields, in the specification's order.
    shipped = record_results(PV, evaluate(PV, counts((GT_A, PRED_A)), PV.ground_truth))
    assert list(shipped["shared_metrics"]) == ["mIoU", "iou", "window_precision", "window_recall"]
    assert list(shipped["paint_state_metrics"]) == ["painted_coverage_mae", "painted_coverage_frames", "mIoU_full_10class"]


def test_record_naming_an_unknown_metric_is_refused():
    doc = definition_with(lambda d: d["reports"][0].__setitem__("record", ["mIoU", "bIoU"]))
    with pytest.raises(SegbenchError, match="reports/0/record: 'bIoU' is not one of its metrics"):
        parse_benchmark(doc, benchmark_path("painting-vision"))
