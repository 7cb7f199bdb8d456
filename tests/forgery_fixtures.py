"""Void forgeries of prediction masks, and mmsegmentation's IoUMetric written out with numpy (histc
counting, independent of segbench's counts): what the tests of void predictions share."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

VOID = 255  # the void value of the Painting Vision and EasyPortrait label spaces


def read(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path))


def void_the_wrong_pixels(frames: Sequence, predictions: Path, out: Path) -> Path:
    """A copy of each frame's prediction whose pixels that disagree with a labelled ground truth
    are set to VOID, named as the frames' predictions."""
    out.mkdir(parents=True, exist_ok=True)
    for frame in frames:
        gt, pred = read(frame.label), read(predictions / frame.prediction)
        Image.fromarray(np.where((pred != gt) & (gt != VOID), VOID, pred).astype(np.uint8)).save(out / frame.prediction)
    return out


def mmseg_areas(pairs: Sequence[tuple[np.ndarray, np.ndarray]], classes: int, lut: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(intersect, union, label) areas summed over (gt, pred) mask pairs as mmseg's
    intersect_and_union counts them: pixels whose ground truth is VOID are dropped; the
    histograms cover 0..classes-1 only, so a predicted value outside it is in the label's area
    and nowhere else. `lut` (256,) maps both masks' raw values first (VOID to VOID)."""
    intersect, union, label = (np.zeros(classes, np.int64) for _ in range(3))
    for gt, pred in pairs:
        if lut is not None:
            gt, pred = lut[gt], lut[pred]
        keep = gt != VOID
        gt, pred = gt[keep].astype(np.int64), pred[keep].astype(np.int64)

        def histc(values: np.ndarray) -> np.ndarray:
            inside = values[(values >= 0) & (values < classes)]
            return np.bincount(inside, minlength=classes)[:classes]

        area_intersect, area_pred, area_label = histc(pred[pred == gt]), histc(pred), histc(gt)
        intersect += area_intersect
        union += area_pred + area_label - area_intersect
        label += area_label
    return intersect, union, label
