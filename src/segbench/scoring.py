"""Scoring: read ground-truth and predicted masks, and count (gt, pred) pairs per frame.

I/O only: the counting itself is cellcount.joint_cells (equal to confusion.joint_histogram's
non-zero cells); no metric is computed here. Frames are decoded and counted in threads (the PNG
decoder and the counting kernel release the GIL); each frame keeps only its non-zero cells, so
memory does not grow with a frame's size or with a 256 x 256 table per frame.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image

from .cellcount import joint_cells
from .confusion import FrameCounts, constant_prediction, histogram_cells, invalid_values, value_histogram
from .datasets.base import Frame
from .errors import SegbenchError
from .labels import LabelSpace
from .maskio import read_mask


def prediction_path(predictions: Path, frame: Frame) -> Path:
    """Where a frame's predicted mask is: the dataset format's naming rule (Frame.prediction)."""
    return predictions / frame.prediction


def check_prediction_folder(predictions: Path, frames: Sequence[Frame]) -> None:
    """A predictions folder must hold exactly one mask per evaluated frame: name what is not.

    A file that matches no evaluated frame is refused too (for every benchmark, although the IDD
    reference ignores extra files): it is almost always a misnamed prediction or the wrong folder.
    """
    if not predictions.is_dir():
        raise SegbenchError(f"{predictions}: predictions folder not found")
    expected = {prediction_path(predictions, f): f for f in frames}
    present = {p for p in predictions.rglob("*.png")}
    missing = sorted(set(expected) - present)
    extra = sorted(present - set(expected))
    lines = [f"missing prediction for frame {expected[p].frame_id}: {p}" for p in missing]
    lines += [f"extra file not matching any evaluated frame: {p}" for p in extra]
    if lines:
        more = f"\n  ... and {len(lines) - 20} more" if len(lines) > 20 else ""
        raise SegbenchError(f"{predictions}: predictions do not match the evaluated frames:\n  " + "\n  ".join(lines[:20]) + more)


def check_predictions_exist(predictions: Path, frames: Sequence[Frame]) -> None:
    """Fail before decoding anything when a frame has no prediction (the IDD reference hangs)."""
    missing = [f for f in frames if not prediction_path(predictions, f).is_file()]
    if missing:
        lines = [f"frame {f.frame_id}: {prediction_path(predictions, f)}" for f in missing[:20]]
        more = f"\n  ... and {len(missing) - 20} more" if len(missing) > 20 else ""
        raise SegbenchError(f"{predictions}: {len(missing)} missing prediction(s):\n  " + "\n  ".join(lines) + more)


def read_prediction(path: Path) -> np.ndarray:
    """A predicted mask of class ids; a colour image is refused with what the protocol wants."""
    return read_mask(path, role="prediction")


def same_aspect(size: tuple[int, int], target: tuple[int, int]) -> bool:
    """Whether `size` is `target` scaled uniformly, up to rounding of one side."""
    (w, h), (tw, th) = size, target
    return round(w * th / tw) == h or round(h * tw / th) == w


def resize_nearest(mask: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """`mask` at (width, height) `size` by Pillow's NEAREST (pixel centres); untouched at that size."""
    if (mask.shape[1], mask.shape[0]) == size:
        return mask
    return np.asarray(Image.fromarray(mask).resize(size, Image.Resampling.NEAREST))


def fit_prediction(pred: np.ndarray, gt_shape: tuple[int, int], path: Path) -> np.ndarray:
    """Resize a mask made at another size to the ground truth's, by Pillow's NEAREST (pixel centres)."""
    size, target = (pred.shape[1], pred.shape[0]), (gt_shape[1], gt_shape[0])
    if size != target and not same_aspect(size, target):
        raise SegbenchError(
            f"{path}: prediction is {size[0]}x{size[1]} but the ground truth is {target[0]}x{target[1]}: "
            "not the same aspect ratio, so it cannot be resized to it"
        )
    return resize_nearest(pred, target)


def evaluated_masks(
    gt: np.ndarray, pred: np.ndarray, evaluation_size: tuple[int, int] | None, path: Path
) -> tuple[np.ndarray, np.ndarray]:
    """The two masks at the size they are compared at.

    With the benchmark's evaluation size (e.g. IDD's 1280x720) each mask is resized to it when its
    size differs, whatever its aspect (as the reference does); without, the prediction is resized
    to the ground truth's size.
    """
    if evaluation_size is None:
        return gt, fit_prediction(pred, gt.shape, path)
    return resize_nearest(gt, evaluation_size), resize_nearest(pred, evaluation_size)


def frame_cells(
    frame: Frame,
    predictions: Path,
    gt_space: LabelSpace,
    pred_space: LabelSpace,
    luts: tuple[np.ndarray, np.ndarray],
    evaluation_size: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A frame's non-zero joint-histogram cells (joint_cells), its raw values checked against the
    spaces' raw lookup tables `luts` (ground truth, prediction)."""
    path = prediction_path(predictions, frame)
    gt, pred = evaluated_masks(read_mask(frame.label), read_prediction(path), evaluation_size, path)
    cells = joint_cells(gt, pred)
    bad_gt, bad_pred = invalid_values(cells[0], *luts)
    if bad_gt:
        raise SegbenchError(f"{frame.label}: frame {frame.frame_id}: label values {bad_gt} are outside '{gt_space.name}'")
    if bad_pred:
        raise SegbenchError(
            f"{path}: frame {frame.frame_id}: predicted values {bad_pred} are outside the model's label space "
            f"'{pred_space.name}' (0..{pred_space.size - 1})"
        )
    return cells


def workers() -> int:
    return len(os.sched_getaffinity(0))


def score_predictions(
    frames: Sequence[Frame],
    predictions: Path,
    gt_space: LabelSpace,
    pred_space: LabelSpace,
    evaluation_size: tuple[int, int] | None = None,
) -> FrameCounts:
    """Per-frame counts of predicted masks against the ground truth, frames decoded in parallel.

    `evaluation_size` is the benchmark's (Benchmark.evaluation_size): (width, height) or None.
    """
    check_predictions_exist(predictions, frames)
    with ThreadPoolExecutor(workers()) as pool:
        luts = gt_space.raw_lut(), pred_space.raw_lut()
        cells = list(pool.map(lambda f: frame_cells(f, predictions, gt_space, pred_space, luts, evaluation_size), frames))
    return FrameCounts.from_cells([f.frame_id for f in frames], cells)


def score_constant(
    frames: Sequence[Frame], value: int, gt_space: LabelSpace, evaluation_size: tuple[int, int] | None = None
) -> FrameCounts:
    """Per-frame counts of a predictor that outputs `value` everywhere (the floor), from GT alone."""

    lut = gt_space.raw_lut()

    def cells(frame: Frame) -> tuple[np.ndarray, np.ndarray]:
        gt = read_mask(frame.label)
        if evaluation_size is not None:
            gt = resize_nearest(gt, evaluation_size)
        frame_cells = histogram_cells(constant_prediction(value_histogram(gt), value))
        bad, _ = invalid_values(frame_cells[0], lut, lut)
        if bad:
            raise SegbenchError(f"{frame.label}: frame {frame.frame_id}: label values {bad} are outside '{gt_space.name}'")
        return frame_cells

    with ThreadPoolExecutor(workers()) as pool:
        per_frame = list(pool.map(cells, frames))
    return FrameCounts.from_cells([f.frame_id for f in frames], per_frame)
