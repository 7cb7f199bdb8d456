"""Scoring: read ground-truth and predicted masks, and count (gt, pred) pairs per frame.

I/O only: the counting itself is cellcount.joint_cells (equal to confusion.joint_histogram's
non-zero cells) or, with boundary bands, the bands' one pass (boundary.BandPlan.frame_counts),
which counts every pixel and so gives the same cells; no metric is computed here. Frames are decoded and counted in threads (the PNG
decoder and the counting kernel release the GIL); each frame keeps only its non-zero cells, so
memory does not grow with a frame's size or with a 256 x 256 table per frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..core.boundary import BandPlan
from ..core.cellcount import joint_cells
from ..core.confusion import BandCounts, FrameCounts, constant_prediction, histogram_cells, invalid_values, value_histogram
from ..core.labels import LabelSpace
from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.parallel import each_in_threads
from ..io.problems import Problem, Problems
from ..records.intake import OUTSIDE_SPACE, open_predictions, read_prediction
from ..records.predictions import REFUSED, Predictions
from .truth import LabelReader, evaluated_truth, read_truth, resize_nearest


def fit_prediction(pred: np.ndarray, gt_shape: tuple[int, int]) -> np.ndarray:
    """Resize a mask made at another size to the ground truth's, by Pillow's NEAREST (pixel centres).
    Which sizes are accepted is the intake's header check (intake.check_prediction_header)."""
    return resize_nearest(pred, (gt_shape[1], gt_shape[0]))


def evaluated_masks(
    gt: np.ndarray, pred: np.ndarray, evaluation_size: tuple[int, int] | None
) -> tuple[np.ndarray, np.ndarray]:
    """The two masks at the size they are compared at: the ground truth's (evaluated_truth), the
    prediction resized to it when its size differs."""
    gt = evaluated_truth(gt, evaluation_size)
    return gt, fit_prediction(pred, gt.shape)


def frame_cells(
    frame: Frame,
    predictions: Predictions,
    gt_space: LabelSpace,
    pred_space: LabelSpace,
    luts: tuple[np.ndarray, np.ndarray],
    evaluation_size: tuple[int, int] | None = None,
    bands: BandPlan | None = None,
    labels: LabelReader = read_truth,
) -> tuple[tuple[np.ndarray, np.ndarray], list[tuple[np.ndarray, np.ndarray]]]:
    """A frame's non-zero joint-histogram cells (joint_cells), its raw values checked against the
    spaces' raw lookup tables `luts` (ground truth, prediction), and, in the same pass over the
    decoded masks, its boundary-band cells in each space of `bands`; its ground truth from `labels`."""
    path = predictions.where(frame)
    truth = labels(frame, evaluation_size, bands)
    gt = truth.mask
    pred = fit_prediction(read_prediction(predictions, frame, truth.stored_shape, evaluation_size), gt.shape)
    # With bands, their pass counts every pixel: the joint cells come from it.
    cells, in_bands = bands.frame_counts(gt, pred, truth.bands) if bands is not None else (joint_cells(gt, pred), [])
    bad_gt, bad_pred = invalid_values(cells[0], *luts)
    if bad_gt:
        raise SegbenchError(f"{frame.label}: frame {frame.frame_id}: label values {bad_gt} are outside '{gt_space.name}'")
    if bad_pred:
        raise Problem(
            OUTSIDE_SPACE,
            f"{path}: frame {frame.frame_id}: predicted values {bad_pred} are outside the model's label space "
            f"'{pred_space.name}' (0..{pred_space.size - 1})"
        )
    return cells, in_bands


def score_predictions(
    frames: Sequence[Frame],
    predictions: Path,
    gt_space: LabelSpace,
    pred_space: LabelSpace,
    evaluation_size: tuple[int, int] | None = None,
    bands: BandPlan | None = None,
    progress: bool = False,
    labels: LabelReader = read_truth,
) -> FrameCounts:
    """Per-frame counts of predicted masks against the ground truth, frames decoded in parallel.

    `evaluation_size` is the benchmark's (Benchmark.evaluation_size): (width, height) or None.
    `predictions` is a folder or an archive (intake.open_predictions checks these frames' entries).
    `bands`: the boundary bands to count beside the cells (None: none). `labels`: how the ground
    truth is read (a long-lived scorer keeps it: truth.KeptLabels).
    Every problem of the masks (the listing's, each frame's) is refused in one error, after every
    frame is read; a ground truth's stops the scoring at once. `progress`: a bar on stderr.
    """
    problems = Problems()
    with open_predictions(predictions, frames, exact=False, problems=problems) as masks:
        per_frame = counted_frames(frames, masks, gt_space, pred_space, evaluation_size, bands, problems, progress,
                                   labels)
    problems.refuse(predictions, REFUSED)
    return counts_of(frames, per_frame, bands)


def counted_frames(
    frames: Sequence[Frame],
    masks: Predictions,
    gt_space: LabelSpace,
    pred_space: LabelSpace,
    evaluation_size: tuple[int, int] | None,
    bands: BandPlan | None,
    problems: Problems,
    progress: bool = False,
    labels: LabelReader = read_truth,
) -> list:
    """Each frame's cells and bands (frame_cells), decoded in parallel, in frame order; a frame the
    listing did not find is skipped (its problem is the listing's) and each mask's own problem is
    added to `problems` (its place None). The one pass over the masks of every scoring path, and of
    a refused listing's check (steps.scoring.check_predictions), so one refusal lists both."""
    luts = gt_space.raw_lut(), pred_space.raw_lut()

    def cells_or_problem(frame: Frame) -> tuple | Problem | None:
        if not masks.listed(frame):
            return None  # its listing's problem is gathered
        try:
            return frame_cells(frame, masks, gt_space, pred_space, luts, evaluation_size, bands, labels)
        except Problem as problem:
            return problem

    per_frame = each_in_threads(cells_or_problem, frames, "scoring", progress)
    for outcome in per_frame:
        if isinstance(outcome, Problem):
            problems.add_problem(outcome)
    return [None if isinstance(outcome, Problem) else outcome for outcome in per_frame]


def counts_of(frames: Sequence[Frame], per_frame: Sequence[tuple], bands: BandPlan | None) -> FrameCounts:
    band_counts = BandCounts.from_cells(bands.spaces, [b for _, b in per_frame]) if bands is not None else None
    return FrameCounts.from_cells([f.frame_id for f in frames], [c for c, _ in per_frame], band_counts)


def score_constant(
    frames: Sequence[Frame], value: int, gt_space: LabelSpace, evaluation_size: tuple[int, int] | None = None,
    bands: BandPlan | None = None, progress: bool = False,
) -> FrameCounts:
    """Per-frame counts of a predictor that outputs `value` everywhere (the floor), from GT alone;
    `progress`: a bar on stderr."""

    lut = gt_space.raw_lut()

    def cells(frame: Frame) -> tuple[tuple[np.ndarray, np.ndarray], list[tuple[np.ndarray, np.ndarray]]]:
        gt = read_truth(frame, evaluation_size).mask
        frame_cells = histogram_cells(constant_prediction(value_histogram(gt), value))
        bad, _ = invalid_values(frame_cells[0], lut, lut)
        if bad:
            raise SegbenchError(f"{frame.label}: frame {frame.frame_id}: label values {bad} are outside '{gt_space.name}'")
        # The constant map's band is the border strip: only the bands need the map itself.
        return frame_cells, (bands.frame_cells(gt, np.full_like(gt, value)) if bands is not None else [])

    per_frame = each_in_threads(cells, frames, "floor", progress)
    return counts_of(frames, per_frame, bands)
