"""Metrics as short pure functions of confusion matrices (rows: ground truth, columns: prediction).

A report's matrix is K x (K + 1): its last column counts the pixels where no class was predicted
(a void prediction, labels.NO_CLASS). Such a pixel is in its ground-truth class's area and in no
predicted class's area: a false negative, a false positive nowhere, wrong for the accuracies.
Every metric reads the matrix through `true_positives`, `ground_truth_area` and
`predicted_area`, so a square K x K matrix (no such column) reads the same.

Undefined values are NaN here and become `null` in JSON. No I/O.
"""

from __future__ import annotations

import numpy as np


def safe_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def true_positives(cm: np.ndarray) -> np.ndarray:
    """(..., K) the diagonal of (a stack of) K x (K + 1) or K x K matrices."""
    return np.diagonal(cm, axis1=-2, axis2=-1)


def ground_truth_area(cm: np.ndarray) -> np.ndarray:
    """(..., K) pixels of each ground-truth class, those predicted as no class included."""
    return cm.sum(axis=-1)


def predicted_area(cm: np.ndarray) -> np.ndarray:
    """(..., K) pixels predicted as each class (the no-class column is no class's)."""
    return cm.sum(axis=-2)[..., : cm.shape[-2]]


def iou(cm: np.ndarray) -> np.ndarray:
    """Per-class TP / (TP + FP + FN); NaN for a class with an empty union."""
    tp = true_positives(cm)
    return safe_ratio(tp, ground_truth_area(cm) + predicted_area(cm) - tp)


def precision(cm: np.ndarray, c: int) -> float:
    """TP / (TP + FP) for class c; NaN when nothing was predicted as c."""
    return float(safe_ratio(cm[c, c], predicted_area(cm)[c]))


def recall(cm: np.ndarray, c: int) -> float:
    """TP / (TP + FN) for class c; NaN when c has no ground-truth pixel."""
    return float(safe_ratio(cm[c, c], ground_truth_area(cm)[c]))


def pixel_accuracy(cm: np.ndarray) -> float:
    """Correct pixels / evaluated pixels (a pixel predicted as no class is one, and wrong)."""
    return float(safe_ratio(true_positives(cm).sum(), cm.sum()))




def class_mean(values: np.ndarray, cm: np.ndarray, rule: str, evaluated: np.ndarray) -> float:
    """The mean of per-class `values` (NaN = undefined) over the `evaluated` classes, by one rule.

    - present_in_ground_truth: over classes with at least one ground-truth pixel (NaN if none);
    - all_classes: the plain mean, NaN as soon as one value is undefined;
    - nan_skipping: the mean of the defined values (numpy nanmean), NaN if none is defined;
    - empty_union_as_zero: an undefined value counts as 0.0.
    """
    chosen = values[evaluated]
    if rule == "present_in_ground_truth":
        chosen = chosen[ground_truth_area(cm)[evaluated] > 0]
        return float(chosen.mean()) if chosen.size else float("nan")
    if rule == "all_classes":
        return float(chosen.mean())
    if rule == "nan_skipping":
        defined = chosen[~np.isnan(chosen)]
        return float(defined.mean()) if defined.size else float("nan")
    if rule == "empty_union_as_zero":
        return float(np.nan_to_num(chosen, nan=0.0).mean())
    raise ValueError(f"unknown mean rule {rule!r}")


def mean_iou(cm: np.ndarray, rule: str, evaluated: np.ndarray) -> float:
    """The mean of the per-class IoUs of the `evaluated` classes (see class_mean for the rules)."""
    return class_mean(iou(cm), cm, rule, evaluated)


def class_accuracy(cm: np.ndarray) -> np.ndarray:
    """Per-class TP / (TP + FN), i.e. recall; NaN for a class with no ground-truth pixel."""
    return safe_ratio(true_positives(cm), ground_truth_area(cm))


def dice(cm: np.ndarray) -> np.ndarray:
    """Per-class 2 TP / (2 TP + FP + FN) (F1); NaN for a class with an empty union."""
    return safe_ratio(2 * true_positives(cm), ground_truth_area(cm) + predicted_area(cm))


def frequency_weighted_iou(cm: np.ndarray, evaluated: np.ndarray) -> float:
    """Sum over the evaluated classes of (ground-truth share) x IoU; classes without ground-truth
    pixels weigh 0. NaN when the evaluated classes have no ground-truth pixel."""
    support = ground_truth_area(cm)[evaluated]
    total = support.sum()
    if total == 0:
        return float("nan")
    present = support > 0
    return float((support[present] / total * iou(cm)[evaluated][present]).sum())


def boundary_iou(tallies: np.ndarray) -> np.ndarray:
    """Per-class |Gb ∩ Pb| / |Gb ∪ Pb| from (3, K) band tallies (|Gb|, |Pb|, |Gb ∩ Pb|, see
    confusion.BandCounts.tallies); NaN where both bands are empty."""
    return safe_ratio(tallies[2], tallies[0] + tallies[1] - tallies[2])




def per_frame_mean_iou(per_frame: np.ndarray, classes: str, evaluated: np.ndarray) -> np.ndarray:
    """(frames,) each frame's mean IoU over the evaluated classes present in its ground truth
    ("ground_truth") or in its ground truth or prediction ("ground_truth_or_prediction");
    NaN for a frame with no such class."""
    tp = true_positives(per_frame)[:, evaluated].astype(np.float64)
    gt = ground_truth_area(per_frame)[:, evaluated]
    union = gt + predicted_area(per_frame)[:, evaluated] - tp
    if classes == "ground_truth":
        counted = gt > 0
    elif classes == "ground_truth_or_prediction":
        counted = union > 0
    else:
        raise ValueError(f"unknown per-frame classes {classes!r}")
    ious = np.divide(tp, union, out=np.zeros_like(tp), where=counted)
    return safe_ratio(ious.sum(axis=1), counted.sum(axis=1))


def per_image_mean_iou(per_frame: np.ndarray, classes: str, evaluated: np.ndarray) -> float:
    """The mean over frames of per_frame_mean_iou, over the frames where it is defined."""
    values = per_frame_mean_iou(per_frame, classes, evaluated)
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else float("nan")


def class_fractions(
    per_frame: np.ndarray, numerator: np.ndarray, denominator: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(covered, gt_frac, pred_frac) of a per-frame class fraction (e.g. painted coverage).

    `covered` (frames,) bool: the frames whose ground truth holds a `denominator` pixel; for
    them gt_frac = |GT in numerator| / |GT in denominator| and pred_frac = |P in numerator| /
    |P in denominator| over the frame's non-void pixels (a pixel predicted as no class is in
    neither), 0 when the model predicts no `denominator` pixel. `per_frame` is (frames, K, K + 1)
    or (frames, K, K); `numerator` and `denominator` are boolean masks over the K classes.
    """
    gt, pred = ground_truth_area(per_frame), predicted_area(per_frame)
    gt_den = gt[:, denominator].sum(axis=1)
    covered = gt_den > 0
    gt_frac = gt[covered][:, numerator].sum(axis=1) / gt_den[covered]
    pred_frac = np.nan_to_num(safe_ratio(pred[covered][:, numerator].sum(axis=1), pred[covered][:, denominator].sum(axis=1)))
    return covered, gt_frac, pred_frac


def fraction_mae(per_frame: np.ndarray, numerator: np.ndarray, denominator: np.ndarray) -> tuple[float, int]:
    """Mean absolute error of a per-frame class fraction (class_fractions), and the number of
    frames it covers; NaN over no frame."""
    covered, gt_frac, pred_frac = class_fractions(per_frame, numerator, denominator)
    if not covered.any():
        return float("nan"), 0
    return float(np.abs(pred_frac - gt_frac).mean()), int(covered.sum())
