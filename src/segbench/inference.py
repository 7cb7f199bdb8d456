"""Run a model over frames and write one prediction mask per frame, by the protocol's rules.

For each frame:

1. Sizes come from file headers: the frame's image, and the ground truth's (the label file),
   which is the size every prediction is written at.
2. The RGB frame (float32, 0..255) is resized so that its LONG side equals the inference size,
   aspect kept: short side = round(short * size / long), halves rounded up, at least 1.
   Bilinear, align_corners=False; antialiased when the image shrinks, not when it grows (a frame
   already at the size is not resampled at all).
3. It is padded bottom/right to a multiple of the model's stride with the model's per-channel
   mean, so that the padding normalises to exactly 0 inside the adapter.
4. The logits (any resolution with the input's aspect) are resized bilinearly
   (align_corners=False, no antialias) to the padded input size, the padding is cropped away,
   the rest is resized bilinearly to the ground-truth size and the argmax over classes (first
   maximum on ties) is written as a single-channel uint8 PNG, `<out_dir>/<frame_id>.png`.

Both logit resizes use `bilinear`, which follows torch.nn.functional.interpolate's
align_corners=False sampling but computes any window of the output, so a 150-class model at
phone-photo ground-truth size is resolved band by band instead of as one multi-GB tensor.

Batching: frames whose padded input shape is identical are batched together, up to
batch_size, in frame order within each shape; every frame is thus computed at exactly its own
padded shape, whatever else is in the shard. (Kernels may still round differently for different
batch sizes on some backends; the tests check byte-identical masks on CPU.)

Decoding/resizing runs one or two batches ahead in background threads and PNGs are written in
background threads; on CUDA the input batch is pinned and copied without blocking. Each PNG is
written atomically (temp + rename); if anything fails, every output path of the run is
removed, so an interrupted run never looks complete.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from .datasets.base import Frame
from .errors import SegbenchError
from .maskio import image_size, read_rgb, write_mask
from .models.base import SegmentationModel

MAX_CLASSES = 255  # predicted ids are 0..254 in a uint8 mask; 255 is void
PREFETCH = 2  # batches decoded ahead of the model
MAX_PENDING_WRITES = 32
BAND_ELEMENTS = 1 << 24  # float32 elements per band when resizing logits to the ground truth


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


def padded_size(height: int, width: int, stride: int) -> tuple[int, int]:
    return (math.ceil(height / stride) * stride, math.ceil(width / stride) * stride)


def frame_geometry(frame: Frame, inference_size: int, stride: int) -> Geometry:
    width, height = image_size(frame.image)
    target_width, target_height = image_size(frame.label)
    resized = resized_size(height, width, inference_size)
    return Geometry((height, width), resized, padded_size(*resized, stride), (target_height, target_width))


def load_input(frame: Frame, geometry: Geometry) -> torch.Tensor:
    """The frame as float32 (3, h, w) RGB in 0..255 at the geometry's input size."""
    rgb = read_rgb(frame.image)
    if rgb.shape[:2] != geometry.source:
        raise SegbenchError(f"{frame.image}: decoded size {rgb.shape[1]}x{rgb.shape[0]} differs from its header")
    image = torch.from_numpy(rgb.astype(np.float32)).permute(2, 0, 1)  # astype copies: PIL's array is read-only
    if geometry.input == geometry.source:
        return image
    shrinking = geometry.input[0] < geometry.source[0] or geometry.input[1] < geometry.source[1]
    resized = F.interpolate(image[None], size=geometry.input, mode="bilinear", align_corners=False, antialias=shrinking)
    return resized[0]


def collate(
    images: Sequence[torch.Tensor], padded: tuple[int, int], pad_value: Sequence[float], pin: bool
) -> torch.Tensor:
    """(N, 3, H, W) batch: each image top-left, the rest filled with `pad_value` per channel."""
    batch = torch.empty((len(images), 3, *padded), dtype=torch.float32, pin_memory=pin)
    batch.copy_(torch.tensor(pad_value, dtype=torch.float32).view(1, 3, 1, 1).expand_as(batch))
    for i, image in enumerate(images):
        batch[i, :, : image.shape[1], : image.shape[2]] = image
    return batch


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


def _taps(n_in: int, n_out: int, start: int, stop: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """Source indices and weights of output positions start..stop-1 (align_corners=False)."""
    dst = torch.arange(start, stop, dtype=torch.float64, device=device)
    src = ((dst + 0.5) * (n_in / n_out) - 0.5).clamp(min=0.0)
    low = src.floor().long().clamp(max=n_in - 1)
    high = (low + 1).clamp(max=n_in - 1)
    frac = (src - low).to(torch.float32)
    return low, high, frac


def bilinear(
    x: torch.Tensor, out_size: tuple[int, int], rows: tuple[int, int] | None = None, cols: tuple[int, int] | None = None
) -> torch.Tensor:
    """Rows rows[0]..rows[1]-1 and columns cols[0]..cols[1]-1 of x (C, h, w) resized to out_size.

    The sampling of F.interpolate(mode="bilinear", align_corners=False) without antialias:
    output i reads source (i + 0.5) * in / out - 0.5, clamped to the edges.
    """
    rows = rows or (0, out_size[0])
    cols = cols or (0, out_size[1])
    r_low, r_high, r_frac = _taps(x.shape[1], out_size[0], *rows, x.device)
    c_low, c_high, c_frac = _taps(x.shape[2], out_size[1], *cols, x.device)
    r_frac = r_frac.to(x.dtype)[:, None]
    c_frac = c_frac.to(x.dtype)
    mixed = x.index_select(1, r_low) * (1 - r_frac) + x.index_select(1, r_high) * r_frac
    return mixed.index_select(2, c_low) * (1 - c_frac) + mixed.index_select(2, c_high) * c_frac


def logits_to_mask(logits: torch.Tensor, geometry: Geometry) -> np.ndarray:
    """(C, h', w') logits of one padded input -> (H, W) uint8 argmax at the ground-truth size."""
    logits = logits.float()
    height, width = geometry.input
    if tuple(logits.shape[1:]) == geometry.padded:
        cropped = logits[:, :height, :width]
    else:
        cropped = bilinear(logits, geometry.padded, (0, height), (0, width))
    target_h, target_w = geometry.target
    mask = torch.empty((target_h, target_w), dtype=torch.uint8, device=logits.device)
    band = max(1, BAND_ELEMENTS // (cropped.shape[0] * (target_w + width)))
    for top in range(0, target_h, band):
        bottom = min(target_h, top + band)
        if (target_h, target_w) == (height, width):
            block = cropped[:, top:bottom]
        else:
            block = bilinear(cropped, (target_h, target_w), (top, bottom))
        mask[top:bottom] = block.argmax(dim=0).to(torch.uint8)
    return mask.cpu().numpy()


def _check_logits(logits: torch.Tensor, model: SegmentationModel, batch: torch.Tensor) -> None:
    n, _, height, width = batch.shape
    expected = f"({n}, {model.label_space.size}, h, w)"
    if logits.ndim != 4 or logits.shape[0] != n or logits.shape[1] != model.label_space.size:
        raise SegbenchError(
            f"{model.source}: the model returned logits of shape {tuple(logits.shape)}, expected {expected}"
        )
    h, w = logits.shape[2:]
    if abs(h - height * w / width) > 1:
        raise SegbenchError(f"{model.source}: logits {h}x{w} (h x w) do not keep the input's aspect {height}x{width}")


def _load_batch(
    frames: Sequence[Frame], geometries: Sequence[Geometry], indices: list[int], model: SegmentationModel, pin: bool
):
    with torch.inference_mode():
        images = [load_input(frames[i], geometries[i]) for i in indices]
        return indices, collate(images, geometries[indices[0]].padded, model.pad_value, pin)


def _check_request(model: SegmentationModel, frames: Sequence[Frame], inference_size: int, batch_size: int) -> None:
    if model.label_space.size > MAX_CLASSES:
        raise SegbenchError(
            f"{model.source}: {model.label_space.size} classes do not fit a uint8 mask (at most {MAX_CLASSES})"
        )
    if inference_size < 1 or batch_size < 1:
        raise SegbenchError(f"inference size ({inference_size}) and batch size ({batch_size}) must be positive")
    seen: set[str] = set()
    for frame in frames:
        if frame.frame_id in seen:
            raise SegbenchError(f"frame id '{frame.frame_id}' appears twice; each frame writes <frame_id>.png")
        if not frame.frame_id or Path(frame.frame_id).name != frame.frame_id:
            raise SegbenchError(f"frame id '{frame.frame_id}' is not usable as a file name")
        seen.add(frame.frame_id)


def run_inference(
    model: SegmentationModel,
    frames: Sequence[Frame],
    out_dir: Path,
    inference_size: int,
    batch_size: int = 4,
    progress: bool = True,
) -> list[Path]:
    """Predict every frame and write `<out_dir>/<frame_id>.png`; returns the paths in frame order."""
    frames = list(frames)
    _check_request(model, frames, inference_size, batch_size)
    out_dir = Path(out_dir)
    outputs = [out_dir / f"{frame.frame_id}.png" for frame in frames]
    geometries = [frame_geometry(frame, inference_size, model.stride) for frame in frames]
    batches = deque(make_batches(geometries, batch_size))
    pin = model.device.type == "cuda"
    loads: deque[Future] = deque()
    writes: deque[Future] = deque()
    loader = ThreadPoolExecutor(max_workers=PREFETCH, thread_name_prefix="segbench-load")
    writer = ThreadPoolExecutor(max_workers=2, thread_name_prefix="segbench-write")
    bar = tqdm(total=len(frames), unit="frame", desc=f"inference ({model.kind})", disable=not progress)
    try:
        with torch.inference_mode():
            while batches or loads:
                while batches and len(loads) < PREFETCH:
                    loads.append(loader.submit(_load_batch, frames, geometries, batches.popleft(), model, pin))
                indices, batch = loads.popleft().result()
                batch = batch.to(model.device, non_blocking=pin)
                logits = model.logits(batch)
                _check_logits(logits, model, batch)
                for row, index in enumerate(indices):
                    mask = logits_to_mask(logits[row], geometries[index])
                    writes.append(writer.submit(write_mask, outputs[index], mask))
                    bar.update(1)
                while writes and (writes[0].done() or len(writes) > MAX_PENDING_WRITES):
                    writes.popleft().result()
            while writes:
                writes.popleft().result()
    except BaseException:
        for future in (*loads, *writes):
            future.cancel()
        loader.shutdown(wait=True, cancel_futures=True)
        writer.shutdown(wait=True, cancel_futures=True)
        for path in outputs:
            path.unlink(missing_ok=True)
            path.with_name(path.name + ".partial").unlink(missing_ok=True)
        raise
    finally:
        bar.close()
        loader.shutdown(wait=True)
        writer.shutdown(wait=True)
    return outputs
