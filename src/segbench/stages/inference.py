"""Run a model over frames and write one prediction mask per frame, by the protocol's rules.

For each frame, its sizes come from file headers and its batch from its padded input shape
(segbench.stages.inference_geometry). The RGB frame (float32, 0..255) is resized to the input
size bilinearly, align_corners=False; antialiased when the image shrinks, not when it grows (a
frame already at the size is not resampled at all); padding, when the benchmark pads, is the
model's per-channel mean, so that it normalises to exactly 0 inside the adapter. The model's
logits become the mask at the ground truth's size (segbench.stages.inference_resize), written as
a single-channel uint8 PNG at `<out_dir>/<frame.prediction>`, the dataset format's naming rule
(`<frame_id>.png`, or IDD's `<drive>/<img_id>_gtFine_labellevel3Ids.png`), which scoring reads.

This is the `whole` inference mode; `slide` and `multi-scale` (segbench.stages.inference_modes) reuse
its steps per window or per scale. (Kernels may round differently for different batch sizes on
some backends; the tests check byte-identical masks on CPU.)

Overlap: the calling thread only runs the model. A loader thread decodes and resizes the next
PREFETCH batches (its torch operations single-threaded, so the model keeps its intra-op threads
to itself), and finisher threads turn the logits of the previous FINISH_AHEAD batches into masks
and write the PNGs (compiled kernels and Pillow's encoder, which release the GIL). On CUDA the
input batch is decoded into pinned memory and copied without blocking, the masks are made on
the GPU, and only the uint8 masks come back, in one non-blocking copy per batch into pinned
memory. Each PNG is written atomically (temp + rename); if anything fails, every output path of
the run is removed, so an interrupted run never looks complete.

A model is a stranger's program: a forward pass that raises is refused naming the model and the
batch's frames (`forward`), and a frame whose logits hold NaN or infinity is refused naming it
(`non_finite`), checked where its mask is made (a finisher thread's one read on CPU; a flag per
frame made on the device and copied back with the masks), so the model's thread does no extra pass.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.fileio import partial_path
from ..io.heap import release_freed_memory
from ..io.maskio import read_rgb, write_mask
from ..models.base import SegmentationModel, check_stride
from . import inference_kernels as kernels
from .inference_geometry import Geometry, frame_geometry, make_batches
from .inference_resize import device_mask, mask_from_array

MAX_CLASSES = 255  # predicted ids are 0..254 in a uint8 mask; 255 is void
PREFETCH = 2  # batches decoded ahead of the model
LOAD_THREADS = 1  # threads decoding and resizing them on CPU (PREFETCH when the model runs elsewhere)
FINISH_AHEAD = 1  # batches whose masks are made and written while the model runs the next
FINISH_THREADS = 2  # threads making masks and writing PNGs


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


def forward(model: SegmentationModel, batch: torch.Tensor, frames: Sequence[Frame]) -> torch.Tensor:
    """The model's logits of a batch of `frames`, their shape checked; a model that fails (a
    TorchScript graph that raises, an ONNX graph that cannot run at this size) is refused naming
    the model and the frames, not with its own traceback."""
    try:
        logits = model.logits(batch)
    except SegbenchError:
        raise
    except Exception as exc:  # a stranger's program: torch.jit, onnxruntime and torch raise their own types
        # The last line says what failed (TorchScript puts its own traceback before it).
        detail = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        shape = "x".join(str(side) for side in batch.shape[2:])
        raise SegbenchError(f"{model.source}: the model failed on frame(s) {', '.join(f.frame_id for f in frames)} "
                            f"(input {shape}): {detail}") from None
    check_logits(logits, model, batch)
    return logits


def non_finite(model: SegmentationModel, frame: Frame) -> SegbenchError:
    """The refusal of a frame whose logits hold NaN or infinity (it would be scored as some class)."""
    return SegbenchError(f"{model.source}: frame {frame.frame_id}: the model's logits hold NaN or infinite values "
                         "(a broken model: its mask would be arbitrary)")


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
    check_stride(model.stride, str(model.source))
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


def _finish_on_cpu(model: SegmentationModel, frame: Frame, logits: np.ndarray, geometry: Geometry, path: Path) -> None:
    """A helper thread's share of one frame: its logits checked finite, its mask from them, the PNG."""
    if not kernels.all_finite(logits):
        raise non_finite(model, frame)
    write_mask(path, mask_from_array(logits, geometry))


def _finish_on_device(
    model: SegmentationModel, frame: Frame, ready: torch.cuda.Event | None, mask: torch.Tensor, finite: torch.Tensor,
    path: Path,
) -> None:
    """Write a mask whose copy to (pinned) host memory, with its logits' finiteness, was queued
    before `ready` was recorded."""
    if ready is not None:
        ready.synchronize()
    if not bool(finite):
        raise non_finite(model, frame)
    write_mask(path, mask.numpy())


def _masks_on_device(
    logits: torch.Tensor, indices: Sequence[int], geometries: Sequence[Geometry], pin: bool
) -> tuple[list[torch.Tensor], torch.Tensor, torch.cuda.Event | None]:
    """The batch's uint8 masks, made on the device and queued for copying to host memory, with
    each frame's flag that its logits are finite.

    Only the masks and the flags cross to the host (one byte a pixel, one a frame): frames with
    one ground-truth size (the usual case) in one copy, into pinned memory without blocking when
    `pin`; the returned event marks their arrival (None: already there). Nothing here waits for
    the device: the finisher that writes a frame's mask reads its flag.
    """
    finite = torch.empty(len(indices), dtype=torch.bool, pin_memory=pin)
    finite.copy_(torch.isfinite(logits).flatten(1).all(dim=1), non_blocking=pin)
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
    return hosts, finite, ready


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
                logits = forward(model, batch, [frames[index] for index in indices])
                if on_cpu:
                    array = logits.float().numpy()  # the finishers use no torch (no second intra-op pool)
                    tasks = [
                        finisher.submit(_finish_on_cpu, model, frames[index], array[row], geometries[index],
                                        outputs[index])
                        for row, index in enumerate(indices)
                    ]
                else:
                    hosts, finite, ready = _masks_on_device(logits, indices, geometries, pin)
                    tasks = [
                        finisher.submit(_finish_on_device, model, frames[index], ready, host, finite[row],
                                        outputs[index])
                        for row, (host, index) in enumerate(zip(hosts, indices))
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
        release_freed_memory()  # the batches', logits' and masks' peak, before the process runs another model
    return outputs
