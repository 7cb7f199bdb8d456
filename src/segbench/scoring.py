"""Scoring: read ground-truth and predicted masks, and count (gt, pred) pairs per frame.

I/O only: the counting itself is confusion.joint_histogram; no metric is computed here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image

from .confusion import FrameCounts, constant_prediction, invalid_values, joint_histogram, value_histogram
from .datasets.base import Frame
from .errors import SegbenchError
from .labels import LabelSpace
from .maskio import read_mask


def prediction_path(predictions: Path, frame: Frame) -> Path:
    return predictions / f"{frame.frame_id}.png"


def check_prediction_folder(predictions: Path, frames: Sequence[Frame]) -> None:
    """A predictions folder must hold exactly one mask per evaluated frame: name what is not."""
    if not predictions.is_dir():
        raise SegbenchError(f"{predictions}: predictions folder not found")
    expected = {prediction_path(predictions, f) for f in frames}
    present = {p for p in predictions.rglob("*.png")}
    missing = sorted(expected - present)
    extra = sorted(present - expected)
    lines = [f"missing prediction for frame {p.relative_to(predictions).with_suffix('')}: {p}" for p in missing]
    lines += [f"extra file not matching any evaluated frame: {p}" for p in extra]
    if lines:
        more = f"\n  ... and {len(lines) - 20} more" if len(lines) > 20 else ""
        raise SegbenchError(f"{predictions}: predictions do not match the evaluated frames:\n  " + "\n  ".join(lines[:20]) + more)


def same_aspect(size: tuple[int, int], target: tuple[int, int]) -> bool:
    """Whether `size` is `target` scaled uniformly, up to rounding of one side."""
    (w, h), (tw, th) = size, target
    return round(w * th / tw) == h or round(h * tw / th) == w


def fit_prediction(pred: np.ndarray, gt_shape: tuple[int, int], path: Path) -> np.ndarray:
    """Resize a mask made at another size to the ground truth's, by Pillow's NEAREST (pixel centres)."""
    if pred.shape == gt_shape:
        return pred
    size, target = (pred.shape[1], pred.shape[0]), (gt_shape[1], gt_shape[0])
    if not same_aspect(size, target):
        raise SegbenchError(
            f"{path}: prediction is {size[0]}x{size[1]} but the ground truth is {target[0]}x{target[1]}: "
            "not the same aspect ratio, so it cannot be resized to it"
        )
    return np.asarray(Image.fromarray(pred).resize(target, Image.Resampling.NEAREST))


def frame_histogram(frame: Frame, predictions: Path, gt_space: LabelSpace, pred_space: LabelSpace) -> np.ndarray:
    gt = read_mask(frame.label)
    path = prediction_path(predictions, frame)
    pred = fit_prediction(read_mask(path), gt.shape, path)
    hist = joint_histogram(gt, pred)
    bad_gt, bad_pred = invalid_values(hist, gt_space.raw_lut(), pred_space.raw_lut())
    if bad_gt:
        raise SegbenchError(f"{frame.label}: frame {frame.frame_id}: label values {bad_gt} are outside '{gt_space.name}'")
    if bad_pred:
        raise SegbenchError(
            f"{path}: frame {frame.frame_id}: predicted values {bad_pred} are outside the model's label space "
            f"'{pred_space.name}' (0..{pred_space.size - 1})"
        )
    return hist


def workers() -> int:
    return len(os.sched_getaffinity(0))


def score_predictions(frames: Sequence[Frame], predictions: Path, gt_space: LabelSpace, pred_space: LabelSpace) -> FrameCounts:
    """Per-frame counts of predicted masks against the ground truth, frames decoded in parallel."""
    with ThreadPoolExecutor(workers()) as pool:
        histograms = list(pool.map(lambda f: frame_histogram(f, predictions, gt_space, pred_space), frames))
    return FrameCounts.from_histograms([f.frame_id for f in frames], histograms)


def score_constant(frames: Sequence[Frame], value: int, gt_space: LabelSpace) -> FrameCounts:
    """Per-frame counts of a predictor that outputs `value` everywhere (the floor), from GT alone."""

    def histogram(frame: Frame) -> np.ndarray:
        hist = constant_prediction(value_histogram(read_mask(frame.label)), value)
        bad, _ = invalid_values(hist, gt_space.raw_lut(), gt_space.raw_lut())
        if bad:
            raise SegbenchError(f"{frame.label}: frame {frame.frame_id}: label values {bad} are outside '{gt_space.name}'")
        return hist

    with ThreadPoolExecutor(workers()) as pool:
        histograms = list(pool.map(histogram, frames))
    return FrameCounts.from_histograms([f.frame_id for f in frames], histograms)
