"""Metrics as short pure functions of confusion matrices (rows: ground truth, columns: prediction).

A report's matrix is K x (K + 1): its last column counts the pixels where no class was predicted
(a void prediction, labels.NO_CLASS). Such a pixel is in its ground-truth class's area and in no
predicted class's area: a false negative, a false positive nowhere, wrong for the accuracies.
Every metric reads the matrix through `true_positives`, `ground_truth_area` and
`predicted_area`, so a square K x K matrix (no such column) reads the same.

Every function takes one matrix or a stack of them (..., K, K + 1), as the bootstrap evaluates
all its resamples at once; a scalar metric of one matrix is a float. The means and sums over a
varying choice of values (row_means, row_sums) add each row's chosen values exactly as numpy
reduces that row's values alone, so a stack gives bit for bit each matrix's own value.

Undefined values are NaN here and become `null` in JSON. No I/O.
"""

from __future__ import annotations

import numpy as np

from .repeated_mean import repeated_means


def safe_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def scalar(value: np.ndarray) -> float | np.ndarray:
    """A float for one matrix's value (a 0-d array), the array for a stack's."""
    return float(value) if np.ndim(value) == 0 else value


def rows_of(stack: np.ndarray) -> int:
    """How many rows (...) a (..., n) array holds (n may be 0)."""
    return int(np.prod(stack.shape[:-1], dtype=np.int64))


def chosen_rows(values: np.ndarray, chosen: np.ndarray, reduce) -> np.ndarray:
    """reduce(the chosen values of each row), NaN for a row choosing none; `values` and `chosen`
    (..., n), the result (...). Rows choosing the same entries are gathered into one C-contiguous
    block, whose rows numpy reduces (pairwise) exactly as each row's chosen values alone."""
    values = np.asarray(values, dtype=np.float64)
    flat_values = values.reshape(rows_of(values), values.shape[-1])
    flat_chosen = np.broadcast_to(chosen, values.shape).reshape(flat_values.shape)
    out = np.full(len(flat_values), np.nan)
    if not flat_chosen.any():
        return out.reshape(values.shape[:-1])
    if (flat_chosen == flat_chosen[0]).all():  # the common case: every row chooses alike, one block
        columns = np.flatnonzero(flat_chosen[0])
        return reduce(np.ascontiguousarray(flat_values[:, columns]), axis=1).reshape(values.shape[:-1])
    packed = np.ascontiguousarray(np.packbits(flat_chosen, axis=1))  # each row's pattern as bytes, to group rows by
    _, first, which = np.unique(packed.view(np.dtype((np.void, packed.shape[1]))).ravel(), return_index=True,
                                return_inverse=True)
    for index, row in enumerate(first):
        columns = np.flatnonzero(flat_chosen[row])
        if columns.size:
            rows = np.flatnonzero(which == index)
            out[rows] = reduce(np.ascontiguousarray(flat_values[np.ix_(rows, columns)]), axis=1)
    return out.reshape(values.shape[:-1])


def row_means(values: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """The mean of each row's chosen values (NaN: none chosen), as numpy's mean of them alone."""
    return chosen_rows(values, chosen, np.mean)


def row_sums(values: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """The sum of each row's chosen values (NaN: none chosen), as numpy's sum of them alone."""
    return chosen_rows(values, chosen, np.sum)


def true_positives(cm: np.ndarray) -> np.ndarray:
    """(..., K) the diagonal of (a stack of) K x (K + 1) or K x K matrices."""
    return np.diagonal(cm, axis1=-2, axis2=-1)


def counted(cm: np.ndarray, subscripts: str) -> np.ndarray:
    """A sum of counts over the matrices' rows or columns ("...ij->...i" or "...ij->...j"):
    int64 counts by einsum (exact in any order, in their own type; numpy's reduction over an
    axis of 3 to 30 entries is about four times slower), anything else by numpy's sum, which
    widens small integers and adds floats in its own order."""
    cm = np.asarray(cm)
    if cm.dtype == np.int64:
        return np.einsum(subscripts, cm)
    return cm.sum(axis=-1 if subscripts.endswith("i") else -2)


def ground_truth_area(cm: np.ndarray) -> np.ndarray:
    """(..., K) pixels of each ground-truth class, those predicted as no class included."""
    return counted(cm, "...ij->...i")


def predicted_area(cm: np.ndarray) -> np.ndarray:
    """(..., K) pixels predicted as each class (the no-class column is no class's)."""
    return counted(cm, "...ij->...j")[..., : cm.shape[-2]]


def iou(cm: np.ndarray) -> np.ndarray:
    """Per-class TP / (TP + FP + FN); NaN for a class with an empty union."""
    tp = true_positives(cm)
    return safe_ratio(tp, ground_truth_area(cm) + predicted_area(cm) - tp)


def precision(cm: np.ndarray, c: int) -> float | np.ndarray:
    """TP / (TP + FP) for class c; NaN when nothing was predicted as c."""
    return scalar(safe_ratio(cm[..., c, c], predicted_area(cm)[..., c]))


def recall(cm: np.ndarray, c: int) -> float | np.ndarray:
    """TP / (TP + FN) for class c; NaN when c has no ground-truth pixel."""
    return scalar(safe_ratio(cm[..., c, c], ground_truth_area(cm)[..., c]))


def pixel_accuracy(cm: np.ndarray) -> float | np.ndarray:
    """Correct pixels / evaluated pixels (a pixel predicted as no class is one, and wrong)."""
    return scalar(safe_ratio(true_positives(cm).sum(axis=-1), cm.sum(axis=(-2, -1))))


def class_mean(values: np.ndarray, cm: np.ndarray, rule: str, evaluated: np.ndarray) -> float | np.ndarray:
    """The mean of per-class `values` (NaN = undefined) over the `evaluated` classes, by one rule.

    - present_in_ground_truth: over classes with at least one ground-truth pixel (NaN if none);
    - all_classes: the plain mean, NaN as soon as one value is undefined;
    - nan_skipping: the mean of the defined values (numpy nanmean), NaN if none is defined;
    - empty_union_as_zero: an undefined value counts as 0.0.
    """
    chosen = values[..., evaluated]
    if rule == "present_in_ground_truth":
        return scalar(row_means(chosen, ground_truth_area(cm)[..., evaluated] > 0))
    if rule == "all_classes":
        return scalar(row_means(chosen, True))
    if rule == "nan_skipping":
        return scalar(row_means(chosen, ~np.isnan(chosen)))
    if rule == "empty_union_as_zero":
        return scalar(row_means(np.nan_to_num(chosen, nan=0.0), True))
    raise ValueError(f"unknown mean rule {rule!r}")


def mean_iou(cm: np.ndarray, rule: str, evaluated: np.ndarray) -> float | np.ndarray:
    """The mean of the per-class IoUs of the `evaluated` classes (see class_mean for the rules)."""
    return class_mean(iou(cm), cm, rule, evaluated)


def class_accuracy(cm: np.ndarray) -> np.ndarray:
    """Per-class TP / (TP + FN), i.e. recall; NaN for a class with no ground-truth pixel."""
    return safe_ratio(true_positives(cm), ground_truth_area(cm))


def dice(cm: np.ndarray) -> np.ndarray:
    """Per-class 2 TP / (2 TP + FP + FN) (F1); NaN for a class with an empty union."""
    return safe_ratio(2 * true_positives(cm), ground_truth_area(cm) + predicted_area(cm))


def frequency_weighted_iou(cm: np.ndarray, evaluated: np.ndarray) -> float | np.ndarray:
    """Sum over the evaluated classes of (ground-truth share) x IoU; classes without ground-truth
    pixels weigh 0. NaN when the evaluated classes have no ground-truth pixel."""
    support = ground_truth_area(cm)[..., evaluated]
    share = safe_ratio(support, support.sum(axis=-1, keepdims=True))
    return scalar(row_sums(share * iou(cm)[..., evaluated], support > 0))


def boundary_iou(tallies: np.ndarray) -> np.ndarray:
    """Per-class |Gb ∩ Pb| / |Gb ∪ Pb| from (3, K) band tallies (|Gb|, |Pb|, |Gb ∩ Pb|, see
    confusion.BandCounts.tallies); NaN where both bands are empty."""
    gt_band, predicted_band, both = tallies[..., 0, :], tallies[..., 1, :], tallies[..., 2, :]
    return safe_ratio(both, gt_band + predicted_band - both)


def frame_mean(values: np.ndarray, weights: np.ndarray) -> float | np.ndarray:
    """The mean of per-frame `values` (frames,) over the frames where they are defined (NaN: not),
    each frame counted `weights` (..., frames) times (a bootstrap resample draws a unit's frames
    as often as it draws the unit); NaN over no frame. Each row is exactly numpy's mean of its
    frames' values repeated in frame order (core/repeated_mean.py)."""
    defined = ~np.isnan(values)
    drawn = np.asarray(weights)
    drawn = drawn if defined.all() else np.compress(defined, drawn, axis=-1)  # C order, as the means read it
    means = repeated_means(values[defined], drawn.reshape(rows_of(drawn), drawn.shape[-1]))
    return scalar(means.reshape(drawn.shape[:-1]))


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


def once_each(per_frame: np.ndarray) -> np.ndarray:
    """The weights of every frame counted once."""
    return np.ones(len(per_frame), dtype=np.int64)


def per_image_mean_iou(per_frame: np.ndarray, classes: str, evaluated: np.ndarray,
                       weights: np.ndarray | None = None) -> float | np.ndarray:
    """The mean over frames of per_frame_mean_iou, over the frames where it is defined; each frame
    counted `weights` times (frame_mean; default once)."""
    values = per_frame_mean_iou(per_frame, classes, evaluated)
    return frame_mean(values, once_each(per_frame) if weights is None else weights)


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


def fraction_mae(per_frame: np.ndarray, numerator: np.ndarray, denominator: np.ndarray,
                 weights: np.ndarray | None = None) -> tuple[float | np.ndarray, int | np.ndarray]:
    """Mean absolute error of a per-frame class fraction (class_fractions), and the number of
    frames it covers; NaN over no frame. Each frame counted `weights` times (frame_mean; default once)."""
    covered, gt_frac, pred_frac = class_fractions(per_frame, numerator, denominator)
    drawn = np.compress(covered, once_each(per_frame) if weights is None else np.asarray(weights), axis=-1)
    frames = drawn.sum(axis=-1)
    return frame_mean(np.abs(pred_frac - gt_frac), drawn), int(frames) if np.ndim(frames) == 0 else frames
