"""The small training loop the embedded defaults' models are made with (CPU, seeded).

Frames are resized as at test time (long side = the benchmark's inference size), then random
crops (optionally centred on a pixel of a class drawn uniformly among those present, so small
classes are seen as often as large ones; optionally flipped, with left/right classes swapped)
train a network with AdamW and a one-cycle schedule, the loss taken at the logits' resolution.
With the defaults this is exactly the loop tools/build_embedded_default.py uses for Painting
Vision.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

from ..datasets.base import Frame

IMAGENET = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}
IGNORE = 255

Pair = tuple[np.ndarray, np.ndarray]  # (H, W, 3) uint8 image, (H, W) uint8 raw label


@dataclass(frozen=True)
class Crops:
    """How training crops are drawn."""

    size: int = 256
    batch: int = 8
    # Half the crops are flipped horizontally, their classes sent through this table (class index
    # -> the class a flip turns it into, LabelSpace.mirrored_ids; by default every class stays).
    # None: no flips.
    flip: np.ndarray | None = field(default_factory=lambda: np.arange(256))
    # Centre each crop on a pixel of a class drawn uniformly among those the frame holds.
    balanced: bool = False


def load_pairs(frames: Sequence[Frame], long_side: int) -> list[Pair]:
    """Frames resized so their long side is `long_side`, as at test time (labels by NEAREST)."""
    pairs = []
    for frame in frames:
        image, label = Image.open(frame.image).convert("RGB"), Image.open(frame.label)
        scale = long_side / max(image.size)
        size = (round(image.width * scale), round(image.height * scale))
        pairs.append(
            (
                np.asarray(image.resize(size, Image.Resampling.BILINEAR)),
                np.asarray(label.resize(size, Image.Resampling.NEAREST)),
            )
        )
    return pairs


def class_pixels(label: np.ndarray, lut: np.ndarray) -> list[np.ndarray]:
    """The flat pixel indices of each class a label holds (for crops centred on a class)."""
    classes = lut[label].ravel()
    order = np.argsort(classes, kind="stable")
    values, starts = np.unique(classes[order], return_index=True)
    groups = np.split(order, starts[1:])
    return [group for value, group in zip(values, groups) if value != IGNORE]


def _corner(rng: np.random.Generator, shape: tuple[int, int], pixels: list[np.ndarray] | None, size: int) -> tuple[int, int]:
    height, width = shape
    if pixels is None:
        return int(rng.integers(0, height - size + 1)), int(rng.integers(0, width - size + 1))
    group = pixels[rng.integers(len(pixels))]
    y, x = divmod(int(group[rng.integers(len(group))]), width)
    return int(np.clip(y - size // 2, 0, height - size)), int(np.clip(x - size // 2, 0, width - size))


def batches(pairs: Sequence[Pair], lut: np.ndarray, steps: int, crops: Crops, rng: np.random.Generator) -> Iterator:
    """Random crops of the training frames, raw labels through `lut` (class index or IGNORE)."""
    pixels = [class_pixels(label, lut) for _, label in pairs] if crops.balanced else None
    mirror = None if crops.flip is None else np.append(crops.flip, IGNORE).astype(lut.dtype)  # last: IGNORE stays
    for _ in range(steps):
        images, labels = [], []
        for _ in range(crops.batch):
            index = rng.integers(len(pairs))
            image, label = pairs[index]
            y, x = _corner(rng, label.shape, None if pixels is None else pixels[index], crops.size)
            img, lab = image[y : y + crops.size, x : x + crops.size], lut[label[y : y + crops.size, x : x + crops.size]]
            if mirror is not None and rng.random() < 0.5:
                classes = np.where(lab == IGNORE, len(mirror) - 1, lab.astype(np.int64))
                img, lab = img[:, ::-1], mirror[classes][:, ::-1]
            images.append(np.ascontiguousarray(img))
            labels.append(np.ascontiguousarray(lab))
        yield (
            torch.from_numpy(np.stack(images)).permute(0, 3, 1, 2).float(),
            torch.from_numpy(np.stack(labels)).long(),
        )


def normalise(images: torch.Tensor) -> torch.Tensor:
    mean = torch.tensor(IMAGENET["mean"]).view(1, 3, 1, 1) * 255
    std = torch.tensor(IMAGENET["std"]).view(1, 3, 1, 1) * 255
    return (images - mean) / std


def class_lut(size: int) -> np.ndarray:
    """Raw value -> class index for a mask whose values are the class ids 0..size-1 (else IGNORE)."""
    lut = np.full(256, IGNORE, dtype=np.uint8)
    lut[:size] = np.arange(size)
    return lut


def train(
    model: torch.nn.Module,
    forward: Callable[[torch.Tensor], torch.Tensor],
    pairs: Sequence[Pair],
    lut: np.ndarray,
    steps: int,
    seed: int,
    name: str,
    crops: Crops = Crops(),
    learning_rate: float = 3e-3,
) -> None:
    """Train `model` in place; `forward` maps normalised images to logits."""
    rng = np.random.default_rng(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=learning_rate, total_steps=steps, pct_start=0.1)
    model.train()
    start = time.perf_counter()
    for step, (images, labels) in enumerate(batches(pairs, lut, steps, crops, rng)):
        logits = forward(normalise(images))
        # The loss is taken at the logits' resolution (SegFormer's is 1/4): far cheaper on a CPU.
        targets = F.interpolate(labels[:, None].float(), size=logits.shape[-2:], mode="nearest")[:, 0].long()
        loss = F.cross_entropy(logits, targets, ignore_index=IGNORE)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if step % 50 == 0 or step == steps - 1:
            print(f"  {name} step {step:4d}/{steps} loss {loss.item():.3f} ({time.perf_counter() - start:.0f} s)")
    model.eval()
