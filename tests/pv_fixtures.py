"""Small Painting Vision datasets built on disk for tests."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
from PIL import Image

# 16 x 20 label holding every class of the taxonomy (ten 8 x 4 blocks).
ALL_CLASSES = np.repeat(np.repeat(np.array([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], dtype=np.uint8), 8, 0), 4, 1)


def noise_image(frame_id: str, height: int, width: int) -> np.ndarray:
    """Deterministic random RGB pixels, different for every frame_id (so average hashes differ)."""
    rng = np.random.default_rng(zlib.crc32(frame_id.encode()))
    return rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)


def write_png(path: Path, array: np.ndarray) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path, format="PNG")
    return path


def write_jpg(path: Path, array: np.ndarray) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path, format="JPEG", quality=95)
    return path


def write_csv(data_dir: Path, rows: Iterable[tuple[str, str, str]], header: str = "frame_id,wall_id,split") -> Path:
    path = data_dir / "frames.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + "".join(f"{f},{w},{s}\n" for f, w, s in rows))
    return path


def make_dataset(
    tmp_path: Path,
    frames: Iterable[tuple[str, str, str, np.ndarray]],
    image_ext: str = "png",
    images: Mapping[str, np.ndarray] | None = None,
    name: str = "data",
) -> Path:
    """Write <tmp_path>/<name>/{frames.csv, images/, labels/} and return the data folder.

    `frames`: (frame_id, wall_id, split, label array). Images are noise of the label's size
    unless `images` gives one for the frame_id.
    """
    data_dir = tmp_path / name
    rows = []
    for frame_id, wall_id, split, label in frames:
        rows.append((frame_id, wall_id, split))
        image = (images or {}).get(frame_id)
        if image is None:
            image = noise_image(frame_id, *label.shape[:2])
        writer = write_jpg if image_ext == "jpg" else write_png
        writer(data_dir / "images" / f"{frame_id}.{image_ext}", image)
        write_png(data_dir / "labels" / f"{frame_id}.png", label)
    (data_dir / "images").mkdir(parents=True, exist_ok=True)
    (data_dir / "labels").mkdir(parents=True, exist_ok=True)
    write_csv(data_dir, rows)
    return data_dir


def clean_frames() -> list[tuple[str, str, str, np.ndarray]]:
    """A valid dataset: two walls per split, every class present in every split."""
    return [
        ("a1", "wA", "train", ALL_CLASSES),
        ("a2", "wA", "train", ALL_CLASSES),
        ("b1", "wB", "train", ALL_CLASSES),
        ("c1", "wC", "val", ALL_CLASSES),
        ("d1", "wD", "test", ALL_CLASSES),
        ("e1", "wE", "test", ALL_CLASSES),
    ]
