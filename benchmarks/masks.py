"""Synthetic mask pairs for the scoring benchmarks: drawn shapes, not noise.

Ground truth: a background class and ~40 filled ellipses, rectangles and polygons of classes
0..classes-1, plus a few void (255) shapes covering a few percent of the frame. Prediction: the
same shapes drawn again with a jitter of a few pixels, some of them with a wrong class, no void.
Files are written once into a cache folder and reused (the name says size, count and seed); larger
frame counts are real copies of a pool of pairs (copied_frames), never hard links, which the
predictions intake refuses.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent))
from copies import copy_file, single_file  # noqa: E402

VOID = 255


def draw(draw_on: ImageDraw.ImageDraw, kind: str, box: list[int], value: int, rng: np.random.Generator) -> None:
    if kind == "ellipse":
        draw_on.ellipse(box, fill=value)
    elif kind == "rectangle":
        draw_on.rectangle(box, fill=value)
    else:
        x0, y0, x1, y1 = box
        points = [(int(rng.integers(x0, x1 + 1)), int(rng.integers(y0, y1 + 1))) for _ in range(5)]
        draw_on.polygon(points, fill=value)


def mask_pair(rng: np.random.Generator, width: int, height: int, classes: int) -> tuple[Image.Image, Image.Image]:
    background = int(rng.integers(0, classes))
    gt, pred = Image.new("L", (width, height), background), Image.new("L", (width, height), background)
    gt_draw, pred_draw = ImageDraw.Draw(gt), ImageDraw.Draw(pred)
    scale = width / 1280
    for index in range(44):
        void = index % 11 == 10  # 4 of 44 shapes are void, small ones
        size = rng.integers(10, 120 if void else 420, 2) * scale
        x0, y0 = int(rng.integers(0, width)), int(rng.integers(0, height))
        box = [x0, y0, x0 + int(size[0]), y0 + int(size[1])]
        kind = str(rng.choice(["ellipse", "rectangle", "polygon"]))
        value = VOID if void else int(rng.integers(0, classes))
        state = rng.bit_generator.state
        draw(gt_draw, kind, box, value, rng)
        if void:
            continue
        shift = rng.integers(-6, 7, 2) * scale
        predicted = value if rng.random() < 0.8 else int(rng.integers(0, classes))
        rng.bit_generator.state = state  # the same polygon points, shifted
        draw(pred_draw, kind, [box[0] + int(shift[0]), box[1] + int(shift[1]), box[2] + int(shift[0]), box[3] + int(shift[1])], predicted, rng)
    return gt, pred


def mask_pairs(folder: Path, pairs: int, width: int, height: int, classes: int = 27, seed: int = 0) -> list[tuple[Path, Path]]:
    """`pairs` (ground truth, prediction) PNG paths under `folder`, drawn on first use.

    A cached file with other names (hard links left by an older version of these benchmarks) is
    drawn again under a fresh inode, so no benchmark ever feeds the intake a linked file.
    """
    root = folder / f"{width}x{height}-{classes}c-seed{seed}"
    paths = [(root / "gt" / f"{i:05d}.png", root / "pred" / f"{i:05d}.png") for i in range(pairs)]
    missing = [i for i, (g, p) in enumerate(paths) if not (single_file(g) and single_file(p))]
    if missing:
        (root / "gt").mkdir(parents=True, exist_ok=True)
        (root / "pred").mkdir(parents=True, exist_ok=True)
        for i in missing:
            gt, pred = mask_pair(np.random.default_rng([seed, i]), width, height, classes)
            for image, path in zip((gt, pred), paths[i]):
                path.unlink(missing_ok=True)  # saving over a linked name would write through the link
                image.save(path)
    return paths


def copied_frames(pool: list[tuple[Path, Path]], frames: int, folder: Path) -> list[tuple[Path, Path]]:
    """`frames` distinct files copying the pool's pairs in turn, made once and reused."""
    root = folder / f"copied-{frames}-from-{len(pool)}-{pool[0][0].parent.parent.name}"
    paths = [(root / "gt" / f"{i:06d}.png", root / "pred" / f"{i:06d}.png") for i in range(frames)]
    for side in ("gt", "pred"):
        (root / side).mkdir(parents=True, exist_ok=True)
    for i, pair in enumerate(paths):
        for target, source in zip(pair, pool[i % len(pool)]):
            if not (single_file(target) and target.stat().st_size == source.stat().st_size):
                target.unlink(missing_ok=True)
                copy_file(source, target)
    return paths
