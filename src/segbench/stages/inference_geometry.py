"""The protocol's sizes for a frame, from file headers alone (segbench.stages.inference):

1. The frame's image size, and the ground truth's (the label file), which is the size every
   prediction is written at.
2. The RGB frame is resized so that its LONG side equals the inference size, aspect kept: short
   side = round(short * size / long), halves rounded up, at least 1.
3. When the benchmark pads (`inference/pad_to_stride`, the default), it is padded bottom/right
   to a multiple of the model's stride; otherwise (EasyPortrait) the model sees exactly the
   resized image, whatever its size.

Batching: frames whose padded input shape is identical are batched together, up to batch_size,
in frame order within each shape; every frame is thus computed at exactly its own padded shape,
whatever else is in the shard.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.limits import LIMITS
from ..io.maskio import image_size


@dataclass(frozen=True)
class Geometry:
    """Sizes (height, width) along one frame's way through the model."""

    source: tuple[int, int]  # the image as stored
    input: tuple[int, int]  # resized: long side = inference size
    padded: tuple[int, int]  # the input padded bottom/right to the stride
    target: tuple[int, int]  # the ground truth, where the prediction is written


def resized_size(height: int, width: int, size: int) -> tuple[int, int]:
    """(height, width) with the long side equal to `size`, aspect kept, the short side rounded half up."""
    long, short = max(height, width), min(height, width)
    scaled = max(1, (2 * short * size + long) // (2 * long))  # round(short * size / long), halves up
    return (size, scaled) if height >= width else (scaled, size)


def padded_size(height: int, width: int, stride: int, square: bool = False) -> tuple[int, int]:
    """(height, width) rounded up to the stride; `square`: both sides from the long one."""
    if square:
        height = width = max(height, width)
    return (math.ceil(height / stride) * stride, math.ceil(width / stride) * stride)


def frame_geometry(frame: Frame, inference_size: int, stride: int, square: bool = False) -> Geometry:
    """Sizes of one frame; `stride` 1 means no padding; `square` pads both sides to the long one.
    An inference size above LIMITS.max_inference_size is refused before anything is decoded."""
    if inference_size > LIMITS.max_inference_size:
        raise SegbenchError(f"inference size {inference_size} is above the limit of {LIMITS.max_inference_size} "
                            "(the long side a frame is resized to for the model)")
    width, height = image_size(frame.image)
    # The ground truth's size; an unlabelled frame (to be exported) keeps its image's.
    target_width, target_height = image_size(frame.label) if frame.labelled else (width, height)
    resized = resized_size(height, width, inference_size)
    return Geometry((height, width), resized, padded_size(*resized, stride, square), (target_height, target_width))


def make_batches(geometries: Sequence[Geometry], batch_size: int) -> list[list[int]]:
    """Frame indices grouped by padded shape, in frame order within a shape, at most batch_size each."""
    open_groups: dict[tuple[int, int], list[int]] = {}
    batches: list[list[int]] = []
    for index, geometry in enumerate(geometries):
        group = open_groups.setdefault(geometry.padded, [])
        group.append(index)
        if len(group) == batch_size:
            batches.append(group)
            open_groups[geometry.padded] = []
    batches.extend(group for group in open_groups.values() if group)
    return batches
