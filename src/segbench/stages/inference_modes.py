"""The declared inference modes (spec.InferenceMode) and the one entry point that runs any of them.

    whole        segbench.stages.inference.run_inference: the frame at the inference size, padded to the
                 stride, batched across frames (the protocols' rule; unchanged).
    slide        the frame resized by the same rule (long side = inference size); windows of
                 `crop` (height, width) every `stride` pixels, placed as mmsegmentation's
                 slide_inference places them (the last window of a row or column ends at the
                 edge; a window never exceeds the image, so a frame smaller than the crop is one
                 window of its own size). Each window is padded to the model's stride, its logits
                 resized to the padded window (bilinear, align_corners=False) and cropped; the
                 window logits are summed per pixel and divided by the number of windows
                 covering it, then resized to the ground truth and argmaxed as in `whole`.
    multi-scale  for each scale s the frame is run whole at long side round(s * size) (and, with
                 `flip`, also mirrored: the mirrored view's scores are flipped back and its
                 left/right classes swapped with the label space's mirror table); each view's
                 scores are resized to the ground truth, turned into class probabilities and
                 averaged; the mask is their argmax (first maximum on ties).

Multi-scale averages probabilities, not logits: logits of different views are not on one scale
(a view that is more confident has larger logits and would outvote the others), while
probabilities are each view's calibrated vote; mmsegmentation's aug_test averages softmax
outputs the same way. Models whose output is already a probability-like score map
(`output == "scores"`, the Mask2Former family) are averaged as they are. Slide averages logits,
as mmsegmentation does: the windows are one view of one image, tiled.

Slide and multi-scale run frame by frame on the calling thread (each frame's windows batched
together, up to batch_size); each PNG is written atomically, and on any failure every output of
the run is removed, as in `whole`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from ..core.model_spec import InferenceMode
from ..datasets.base import Frame
from ..io.fileio import partial_path
from ..io.maskio import write_mask
from ..models.base import SegmentationModel
from .inference import check_request, collate, forward, load_input, non_finite, run_inference
from .inference_geometry import Geometry, frame_geometry, padded_size
from .inference_resize import bilinear, mask_from_array


def predict(
    model: SegmentationModel,
    frames: Sequence[Frame],
    out_dir: Path,
    inference_size: int,
    mode: InferenceMode,
    batch_size: int = 4,
    progress: bool = True,
    pad_to_stride: bool = True,
) -> list[Path]:
    """Predict every frame with `mode` and write `<out_dir>/<frame.prediction>`; paths in frame order."""
    if mode.mode == "whole":
        return run_inference(model, frames, out_dir, inference_size, batch_size, progress, pad_to_stride)
    frames = list(frames)
    check_request(model, frames, inference_size, batch_size)
    outputs = [Path(out_dir) / frame.prediction for frame in frames]
    stride = model.stride if pad_to_stride else 1
    try:
        with torch.inference_mode():
            for frame, path in zip(tqdm(frames, unit="frame", desc=f"inference ({model.kind}, {mode.mode})",
                                        disable=not progress), outputs):
                if mode.mode == "slide":
                    mask = slide_mask(model, frame, inference_size, stride, mode, batch_size)
                else:
                    mask = multi_scale_mask(model, frame, inference_size, stride, mode)
                write_mask(path, mask)
    except BaseException:
        for path in outputs:
            path.unlink(missing_ok=True)
            partial_path(path).unlink(missing_ok=True)
        raise
    return outputs


def windows(height: int, width: int, crop: tuple[int, int], stride: tuple[int, int]) -> list[tuple[int, int, int, int]]:
    """(top, bottom, left, right) of every window, rows then columns, as mmsegmentation places them."""
    (crop_h, crop_w), (stride_h, stride_w) = crop, stride
    rows = max(height - crop_h + stride_h - 1, 0) // stride_h + 1
    cols = max(width - crop_w + stride_w - 1, 0) // stride_w + 1
    placed = []
    for r in range(rows):
        for c in range(cols):
            bottom, right = min(r * stride_h + crop_h, height), min(c * stride_w + crop_w, width)
            placed.append((max(bottom - crop_h, 0), bottom, max(right - crop_w, 0), right))
    return placed


def window_logits(model: SegmentationModel, frame: Frame, crops: list[torch.Tensor], stride: int) -> list[torch.Tensor]:
    """Logits (C, h, w) of each (3, h, w) crop of `frame` (all of one size): padded to the stride,
    run as one batch, checked finite, resized to the padded size and cropped."""
    height, width = crops[0].shape[1:]
    padded = padded_size(height, width, stride, model.square)
    batch = collate(crops, padded, model.pad_value, pin=False).to(model.device)
    logits = forward(model, batch, [frame])
    if not bool(torch.isfinite(logits).all()):
        raise non_finite(model, frame)
    return [
        (row[:, :height, :width] if tuple(row.shape[1:]) == padded else bilinear(row, padded, (0, height), (0, width)))
        for row in logits.float()
    ]


def slide_mask(
    model: SegmentationModel, frame: Frame, size: int, stride: int, mode: InferenceMode, batch_size: int
) -> np.ndarray:
    geometry = frame_geometry(frame, size, 1)
    image = load_input(frame, geometry)
    height, width = geometry.input
    total = torch.zeros((model.label_space.size, height, width), dtype=torch.float32, device=model.device)
    count = torch.zeros((1, height, width), dtype=torch.float32, device=model.device)
    placed = windows(height, width, mode.crop, mode.stride)
    for start in range(0, len(placed), batch_size):
        chunk = placed[start : start + batch_size]
        crops = [image[:, top:bottom, left:right] for top, bottom, left, right in chunk]
        for (top, bottom, left, right), logits in zip(chunk, window_logits(model, frame, crops, stride)):
            total[:, top:bottom, left:right] += logits
            count[:, top:bottom, left:right] += 1
    averaged = (total / count).cpu().numpy()
    return mask_from_array(averaged, Geometry(geometry.source, geometry.input, geometry.input, geometry.target))


def unmirrored(scores: torch.Tensor, mirror: torch.Tensor) -> torch.Tensor:
    """Scores (C, h, w) of a mirrored image, flipped back with left and right classes swapped.

    Class c of the image is where the mirrored image shows its mirror class
    (`LabelSpace.mirrored_ids`: left brow <-> right brow, ...), so channel c takes channel mirror(c).
    """
    return scores.flip(-1).index_select(0, mirror)


def multi_scale_mask(model: SegmentationModel, frame: Frame, size: int, stride: int, mode: InferenceMode) -> np.ndarray:
    mirror = torch.from_numpy(model.label_space.mirrored_ids()).to(model.device)
    views = [(scale, mirrored) for scale in mode.scales for mirrored in ((False, True) if mode.flip else (False,))]
    total = None
    for scale, mirrored in views:
        geometry = frame_geometry(frame, max(1, round(scale * size)), stride, model.square)
        image = load_input(frame, geometry)
        [logits] = window_logits(model, frame, [image.flip(-1) if mirrored else image], stride)
        if mirrored:
            logits = unmirrored(logits, mirror)
        scores = logits if geometry.target == geometry.input else bilinear(logits, geometry.target)
        probabilities = scores if model.output == "scores" else scores.softmax(dim=0)
        total = probabilities if total is None else total + probabilities
    return (total / len(views)).argmax(dim=0).to(torch.uint8).cpu().numpy()
