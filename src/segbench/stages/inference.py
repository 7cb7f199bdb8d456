"""Run a model over frames and write one prediction mask per frame, by the protocol's rules.

For each frame:

1. Sizes come from file headers: the frame's image, and the ground truth's (the label file),
   which is the size every prediction is written at.
2. The RGB frame (float32, 0..255) is resized so that its LONG side equals the inference size,
   aspect kept: short side = round(short * size / long), halves rounded up, at least 1.
   Bilinear, align_corners=False; antialiased when the image shrinks, not when it grows (a frame
   already at the size is not resampled at all).
3. When the benchmark pads (`inference/pad_to_stride`, the default), it is padded bottom/right
   to a multiple of the model's stride with the model's per-channel mean, so that the padding
   normalises to exactly 0 inside the adapter; otherwise (EasyPortrait) the model sees exactly
   the resized image, whatever its size.
4. The logits (any resolution with the input's aspect) are resized bilinearly
   (align_corners=False, no antialias) to the padded input size, the padding is cropped away,
   the rest is resized bilinearly to the ground-truth size and the argmax over classes (first
   maximum on ties) is written as a single-channel uint8 PNG at `<out_dir>/<frame.prediction>`,
   the dataset format's naming rule (`<frame_id>.png`, or IDD's
   `<drive>/<img_id>_gtFine_labellevel3Ids.png`), which scoring reads.

This is the `whole` inference mode; `slide` and `multi-scale` (segbench.stages.inference_modes) reuse
its steps per window or per scale.

Both logit resizes are separable bilinear resizes: `bilinear` computes any window of the output
as two small matrix products (torch, on the model's device: CUDA); on the CPU the same values
come from the compiled kernels of `inference_kernels` (two weights per output value, one fused
multiply-add, as the matrix products accumulate them), fused with the argmax row by row, so a
150-class model at phone-photo ground-truth size never needs a (C, H, W) tensor at that size.

Batching: frames whose padded input shape is identical are batched together, up to
batch_size, in frame order within each shape; every frame is thus computed at exactly its own
padded shape, whatever else is in the shard. (Kernels may still round differently for different
batch sizes on some backends; the tests check byte-identical masks on CPU.)

Overlap: the calling thread only runs the model. A loader thread decodes and resizes the next
PREFETCH batches (its torch operations single-threaded, so the model keeps its intra-op threads
to itself), and finisher threads turn the logits of the previous FINISH_AHEAD batches into masks
and write the PNGs (compiled kernels and Pillow's encoder, which release the GIL). On CUDA the
input batch is decoded into pinned memory and copied without blocking, the masks are made on
the GPU, and only the uint8 masks come back, in one non-blocking copy per batch into pinned
memory. Each PNG is written atomically (temp + rename); if anything fails, every output path of
the run is removed, so an interrupted run never looks complete.
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

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.fileio import partial_path
from ..io.maskio import image_size, read_rgb, write_mask
from ..models.base import SegmentationModel
from . import inference_kernels as kernels

MAX_CLASSES = 255  # predicted ids are 0..254 in a uint8 mask; 255 is void
PREFETCH = 2  # batches decoded ahead of the model
LOAD_THREADS = 1  # threads decoding and resizing them on CPU (PREFETCH when the model runs elsewhere)
FINISH_AHEAD = 1  # batches whose masks are made and written while the model runs the next
FINISH_THREADS = 2  # threads making masks and writing PNGs
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


def padded_size(height: int, width: int, stride: int, square: bool = False) -> tuple[int, int]:
    """(height, width) rounded up to the stride; `square`: both sides from the long one."""
    if square:
        height = width = max(height, width)
    return (math.ceil(height / stride) * stride, math.ceil(width / stride) * stride)


def frame_geometry(frame: Frame, inference_size: int, stride: int, square: bool = False) -> Geometry:
    """Sizes of one frame; `stride` 1 means no padding; `square` pads both sides to the long one."""
    width, height = image_size(frame.image)
    # The ground truth's size; an unlabelled frame (to be exported) keeps its image's.
    target_width, target_height = image_size(frame.label) if frame.labelled else (width, height)
    resized = resized_size(height, width, inference_size)
    return Geometry((height, width), resized, padded_size(*resized, stride, square), (target_height, target_width))


def load_input(frame: Frame, geometry: Geometry) -> torch.Tensor:
    """The frame as float32 (3, h, w) RGB in 0..255 at the geometry's input size."""
    rgb = read_rgb(frame.image)
    _check_decoded(frame, rgb, geometry)
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


def interpolation_matrix(n_in: int, n_out: int, start: int, stop: int, device: torch.device) -> torch.Tensor:
    """Rows start..stop-1 of the (n_out, n_in) matrix of 1-D linear resizing, align_corners=False.

    Output i reads source (i + 0.5) * n_in / n_out - 0.5, clamped to the edges, as
    F.interpolate(mode="bilinear", align_corners=False) without antialias does.
    """
    dst = torch.arange(start, stop, dtype=torch.float64, device=device)
    src = ((dst + 0.5) * (n_in / n_out) - 0.5).clamp(min=0.0)
    low = src.floor().long().clamp(max=n_in - 1)
    high = (low + 1).clamp(max=n_in - 1)
    frac = (src - low).to(torch.float32)
    matrix = torch.zeros((stop - start, n_in), dtype=torch.float32, device=device)
    rows = torch.arange(stop - start, device=device)
    matrix.index_put_((rows, low), 1 - frac, accumulate=True)
    matrix.index_put_((rows, high), frac, accumulate=True)
    return matrix


def bilinear(
    x: torch.Tensor, out_size: tuple[int, int], rows: tuple[int, int] | None = None, cols: tuple[int, int] | None = None
) -> torch.Tensor:
    """Rows rows[0]..rows[1]-1 and columns cols[0]..cols[1]-1 of x (C, h, w) resized to out_size.

    Bilinear resizing is separable, so any window of the output is two small matrix products
    (rows, then columns): the sampling of F.interpolate(mode="bilinear", align_corners=False).
    """
    rows = rows or (0, out_size[0])
    cols = cols or (0, out_size[1])
    vertical = interpolation_matrix(x.shape[1], out_size[0], *rows, x.device).to(x.dtype)
    horizontal = interpolation_matrix(x.shape[2], out_size[1], *cols, x.device).to(x.dtype)
    return torch.matmul(torch.matmul(vertical, x), horizontal.T)


def logits_to_mask(logits: torch.Tensor, geometry: Geometry) -> np.ndarray:
    """(C, h', w') logits of one padded input -> (H, W) uint8 argmax at the ground-truth size."""
    if logits.device.type == "cpu":
        return mask_from_array(logits.float().numpy(), geometry)
    return device_mask(logits, geometry).cpu().numpy()


def mask_from_array(logits: np.ndarray, geometry: Geometry) -> np.ndarray:
    """logits_to_mask of float32 (C, h', w') logits in memory, with the compiled kernels of
    `inference_kernels` (no torch: it releases the GIL, so it runs in helper threads)."""
    height, width = geometry.input
    if tuple(logits.shape[1:]) == geometry.padded:
        cropped = logits[:, :height, :width]
    else:
        cropped = kernels.resize(logits, geometry.padded, (0, height), (0, width))
    if tuple(geometry.target) == (height, width):
        return kernels.argmax(cropped)
    return kernels.resize_argmax(cropped, geometry.target)


def device_mask(logits: torch.Tensor, geometry: Geometry) -> torch.Tensor:
    """logits_to_mask with torch operations on the logits' device: an (H, W) uint8 tensor there."""
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
    return mask


def check_logits(logits: torch.Tensor, model: SegmentationModel, batch: torch.Tensor) -> None:
    n, _, height, width = batch.shape
    expected = f"({n}, {model.label_space.size}, h, w)"
    if logits.ndim != 4 or logits.shape[0] != n or logits.shape[1] != model.label_space.size:
        raise SegbenchError(
            f"{model.source}: the model returned logits of shape {tuple(logits.shape)}, expected {expected}"
        )
    h, w = logits.shape[2:]
    if abs(h - height * w / width) > 1:
        raise SegbenchError(f"{model.source}: logits {h}x{w} (h x w) do not keep the input's aspect {height}x{width}")


def load_batch(
    frames: Sequence[Frame], geometries: Sequence[Geometry], indices: Sequence[int], pad_value: Sequence[float],
    pin: bool = False,
) -> torch.Tensor:
    """The (N, 3, H, W) float32 batch of these frames (same padded shape): `collate` of their
    `load_input`, each frame decoded and written into its slot (with its padding) in one pass,
    pinned when `pin`. A frame that needs no resizing goes from uint8 to its slot without torch."""
    padded = geometries[indices[0]].padded
    batch = torch.empty((len(indices), 3, *padded), dtype=torch.float32, pin_memory=pin)
    slots = batch.numpy()
    pad = np.asarray(pad_value, dtype=np.float32)
    for slot, index in enumerate(indices):
        frame, geometry = frames[index], geometries[index]
        if geometry.padded != padded:
            raise ValueError(f"frame {frame.frame_id}: padded shape {geometry.padded}, not the batch's {padded}")
        if geometry.input == geometry.source:
            rgb = read_rgb(frame.image)
            _check_decoded(frame, rgb, geometry)
        else:
            with torch.inference_mode():
                rgb = load_input(frame, geometry).permute(1, 2, 0).numpy()  # (h, w, 3) float32
        kernels.place(rgb, pad, slots[slot])
    return batch


def _check_decoded(frame: Frame, rgb: np.ndarray, geometry: Geometry) -> None:
    if rgb.shape[:2] != geometry.source:
        raise SegbenchError(f"{frame.image}: decoded size {rgb.shape[1]}x{rgb.shape[0]} differs from its header")


def check_request(model: SegmentationModel, frames: Sequence[Frame], inference_size: int, batch_size: int) -> None:
    if model.label_space.size > MAX_CLASSES:
        raise SegbenchError(
            f"{model.source}: {model.label_space.size} classes do not fit a uint8 mask (at most {MAX_CLASSES})"
        )
    if inference_size < 1 or batch_size < 1:
        raise SegbenchError(f"inference size ({inference_size}) and batch size ({batch_size}) must be positive")
    seen: dict[str, str] = {}
    for frame in frames:
        name = Path(frame.prediction)
        if frame.prediction in seen:
            if seen[frame.prediction] == frame.frame_id:
                raise SegbenchError(f"frame id '{frame.frame_id}' appears twice; each frame writes <frame_id>.png")
            raise SegbenchError(
                f"frames '{seen[frame.prediction]}' and '{frame.frame_id}' would both write the prediction {name}"
            )
        if name.is_absolute() or ".." in name.parts or not name.name:
            raise SegbenchError(f"frame '{frame.frame_id}': prediction path {name} is not inside the output folder")
        seen[frame.prediction] = frame.frame_id


def _finish_on_cpu(logits: np.ndarray, geometry: Geometry, path: Path) -> None:
    """A helper thread's share of one frame: its mask from its logits, then the PNG."""
    write_mask(path, mask_from_array(logits, geometry))


def _finish_on_device(ready: torch.cuda.Event | None, mask: torch.Tensor, path: Path) -> None:
    """Write a mask whose copy to (pinned) host memory was queued before `ready` was recorded."""
    if ready is not None:
        ready.synchronize()
    write_mask(path, mask.numpy())


def _masks_on_device(
    logits: torch.Tensor, indices: Sequence[int], geometries: Sequence[Geometry], pin: bool
) -> tuple[list[torch.Tensor], torch.cuda.Event | None]:
    """The batch's uint8 masks, made on the device and queued for copying to host memory.

    Only the masks cross to the host (one byte a pixel): frames with one ground-truth size (the
    usual case) in one copy, into pinned memory without blocking when `pin`; the returned event
    marks their arrival (None: already there).
    """
    masks = [device_mask(logits[row], geometries[index]) for row, index in enumerate(indices)]
    if len({tuple(m.shape) for m in masks}) == 1:
        stacked = torch.stack(masks)
        host = torch.empty(stacked.shape, dtype=torch.uint8, pin_memory=pin)
        host.copy_(stacked, non_blocking=pin)
        hosts = list(host.unbind(0))
    else:
        hosts = [torch.empty(m.shape, dtype=torch.uint8, pin_memory=pin) for m in masks]
        for host, mask in zip(hosts, masks):
            host.copy_(mask, non_blocking=pin)
    ready = None
    if pin:
        ready = torch.cuda.Event()
        ready.record()
    return hosts, ready


_OPENMP = "parallel backend: OpenMP" in torch.__config__.parallel_info()


def _single_threaded_torch() -> None:
    """Make a loader thread's torch operations (resizing a frame) run on that thread alone.

    With OpenMP (torch's CPU builds), the intra-op thread count is kept per thread, so this
    leaves the model's pool (the calling thread's) as it is; it also becomes the count that
    threads started later begin with, which run_inference restores when it returns. Without it,
    the loader would start a second pool as large as the model's, competing with it for the
    cores. Other backends keep one pool for the process: nothing is changed there.
    """
    if _OPENMP:
        torch.set_num_threads(1)


def run_inference(
    model: SegmentationModel,
    frames: Sequence[Frame],
    out_dir: Path,
    inference_size: int,
    batch_size: int = 4,
    progress: bool = True,
    pad_to_stride: bool = True,
) -> list[Path]:
    """Predict every frame and write `<out_dir>/<frame.prediction>`; returns the paths in frame order.

    `pad_to_stride` and `inference_size` are the benchmark's (Benchmark.pad_to_stride); without
    padding the model must accept any input size. The calling thread runs the model; loading
    and finishing overlap with it in helper threads (see the module docstring).
    """
    frames = list(frames)
    check_request(model, frames, inference_size, batch_size)
    out_dir = Path(out_dir)
    outputs = [out_dir / frame.prediction for frame in frames]
    stride = model.stride if pad_to_stride else 1
    geometries = [frame_geometry(frame, inference_size, stride, model.square) for frame in frames]
    batches = deque(make_batches(geometries, batch_size))
    on_cpu = model.device.type == "cpu"
    pin = model.device.type == "cuda"
    loads: deque[Future] = deque()
    loading: deque[list[int]] = deque()  # the frames of each batch being loaded
    finishing: deque[list[Future]] = deque()  # per batch, its frames' mask-and-write tasks
    threads = torch.get_num_threads()  # this thread's intra-op pool (the model's)
    loader = ThreadPoolExecutor(
        max_workers=LOAD_THREADS if on_cpu else max(LOAD_THREADS, PREFETCH),
        thread_name_prefix="segbench-load",
        initializer=_single_threaded_torch,
    )
    finisher = ThreadPoolExecutor(max_workers=FINISH_THREADS, thread_name_prefix="segbench-finish")
    bar = tqdm(total=len(frames), unit="frame", desc=f"inference ({model.kind})", disable=not progress)

    def wait_for(tasks: list[Future]) -> None:
        for task in tasks:
            task.result()
        bar.update(len(tasks))

    try:
        with torch.inference_mode():
            while batches or loads:
                while batches and len(loads) < PREFETCH:
                    indices = batches.popleft()
                    loads.append(loader.submit(load_batch, frames, geometries, indices, model.pad_value, pin))
                    loading.append(indices)
                batch = loads.popleft().result()
                indices = loading.popleft()
                batch = batch.to(model.device, non_blocking=pin)
                logits = model.logits(batch)
                check_logits(logits, model, batch)
                if on_cpu:
                    array = logits.float().numpy()  # the finishers use no torch (no second intra-op pool)
                    tasks = [
                        finisher.submit(_finish_on_cpu, array[row], geometries[index], outputs[index])
                        for row, index in enumerate(indices)
                    ]
                else:
                    hosts, ready = _masks_on_device(logits, indices, geometries, pin)
                    tasks = [
                        finisher.submit(_finish_on_device, ready, host, outputs[index])
                        for host, index in zip(hosts, indices)
                    ]
                del logits, batch
                finishing.append(tasks)
                while len(finishing) > FINISH_AHEAD or (finishing and all(t.done() for t in finishing[0])):
                    wait_for(finishing.popleft())
            while finishing:
                wait_for(finishing.popleft())
    except BaseException:
        for future in (*loads, *(t for tasks in finishing for t in tasks)):
            future.cancel()
        loader.shutdown(wait=True, cancel_futures=True)
        finisher.shutdown(wait=True, cancel_futures=True)
        for path in outputs:
            path.unlink(missing_ok=True)
            partial_path(path).unlink(missing_ok=True)
        raise
    finally:
        bar.close()
        loader.shutdown(wait=True)
        finisher.shutdown(wait=True)
        if _OPENMP:
            torch.set_num_threads(threads)  # the default for threads started later (see _single_threaded_torch)
    return outputs
