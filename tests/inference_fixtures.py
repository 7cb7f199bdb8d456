"""What the inference tests share: a fake model whose logits are a function of its input,
frames written from arrays, and the cases of logits made into a mask."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from PIL import Image

from segbench.datasets.base import Frame
from segbench.models.base import Normalization, SegmentationModel, space_from_names
from segbench.stages.inference_geometry import Geometry

# (logits' h, w; the frame's geometry): the four ways logits become a mask (inference_resize).
LOGITS_TO_MASK_CASES = [
    ((24, 32), Geometry((40, 60), (40, 60), (48, 64), (97, 143))),  # upsample, crop, upsample
    ((48, 32), Geometry((90, 60), (90, 60), (96, 64), (90, 60))),  # upsample, crop; at the ground truth
    ((48, 64), Geometry((50, 70), (48, 64), (48, 64), (35, 49))),  # full size; shrink to the ground truth
    ((48, 64), Geometry((45, 64), (45, 64), (48, 64), (45, 64))),  # full size; crop only
]


class FakeModel(SegmentationModel):
    """Logits computed by `fn` from the normalised batch; records every batch it is given."""

    kind = "fake"

    def __init__(self, classes: int, stride: int, fn, mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0)):
        self.source = Path("fake-model")
        self.label_space = space_from_names("fake", [f"c{i}" for i in range(classes)], "test")
        self.stride = stride
        self.device = torch.device("cpu")
        self.normalization = Normalization(tuple(mean), tuple(std))
        self.fn = fn
        self.inputs: list[torch.Tensor] = []

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        self.inputs.append(images.clone())
        return self.fn(self.normalization.apply(images))


def write_frame(root: Path, frame_id: str, rgb: np.ndarray, label_hw: tuple[int, int] | None = None) -> Frame:
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labels").mkdir(parents=True, exist_ok=True)
    image = root / "images" / f"{frame_id}.png"
    label = root / "labels" / f"{frame_id}.png"
    Image.fromarray(rgb).save(image)
    Image.fromarray(np.zeros(label_hw or rgb.shape[:2], dtype=np.uint8)).save(label)
    return Frame(frame_id, "wall-1", "test", image, label)


def random_rgb(height: int, width: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(height, width, 3), dtype=np.uint8)


def read_png(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        assert image.mode == "L"
        return np.asarray(image)


def png_bytes(paths: list[Path]) -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in paths}
