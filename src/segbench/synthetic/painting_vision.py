"""A procedural, offline generator of a small dataset in the Painting Vision on-disk format.

    <out>/images/<frame_id>.jpg   RGB frame (JPEG, quality 92)
    <out>/labels/<frame_id>.png   'L' PNG: class ids 0..9, 255 = void
    <out>/frames.csv              frame_id,wall_id,split,lighting (split by wall; lighting per wall)

Each wall is one drawn room-wall scene. The scene is drawn as a material map (a finer label map,
so that parts of one class, such as window frame and glass, can look different), the image is
rendered from it, and the frames of the wall are crops of the scene at different scales. Every
random draw comes from a numpy Generator seeded by (seed, stream, wall), and every resampling is
Pillow's, so a build is byte-identical on every run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from . import empty_output_folder
from .painting_vision_layout import CLASS_OF_MATERIAL, Box
from .painting_vision_render import render, to_uint8
from .painting_vision_scene import draw_scene

FRAME_SIZES = ((640, 480), (480, 640), (560, 420), (512, 384))  # (width, height)
SCENE_SCALE = 1.5  # a scene is this much larger than its frames; frames are crops of it
FRAMES_CSV_HEADER = "frame_id,wall_id,split,lighting"  # lighting: a metadata column (slices)
SPLITS = ("train", "val", "test")
VAL_SHARE, TEST_SHARE = 2 / 14, 4 / 14  # 8/2/4 walls out of 14
VOID = 255
# Fixed explicitly so the bytes never depend on Pillow's defaults; 4:2:0 is what cameras write.
JPEG_OPTIONS = {"quality": 92, "subsampling": 2, "optimize": False}
WINDOW_CLASS = 8
MIN_WINDOW_FRACTION = 0.01  # a frame must show at least this much window (see _frame_boxes)
CROP_TRIES = 20
SPLIT_STREAM, WALL_STREAM = 0, 1  # independent random streams under one seed


def build_dataset(out_dir: Path, seed: int = 0, walls: int = 14, frames_per_wall: int = 4) -> list[dict]:
    """Write the dataset; return the frames.csv rows as dicts (frame_id, wall_id, split, lighting).

    `out_dir` must be absent or empty, so that no stale frame outlives a rebuild.
    """
    out_dir = empty_output_folder(out_dir)
    if frames_per_wall < 1:
        raise ValueError(f"frames_per_wall must be at least 1, got {frames_per_wall}")
    splits = _wall_splits(seed, walls)
    wall_ids = [f"w{index + 1:0{max(2, len(str(walls)))}d}" for index in range(walls)]
    for sub in ("images", "labels"):
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    rows = []
    for index, (wall_id, split) in enumerate(zip(wall_ids, splits)):
        rng = np.random.default_rng([seed, WALL_STREAM, index])
        frames, lighting = _wall_frames(rng, frames_per_wall)
        for frame_number, (image, label) in enumerate(frames, start=1):
            frame_id = f"{wall_id}_f{frame_number:0{len(str(frames_per_wall))}d}"
            image.save(out_dir / "images" / f"{frame_id}.jpg", format="JPEG", **JPEG_OPTIONS)
            label.save(out_dir / "labels" / f"{frame_id}.png", format="PNG")
            rows.append({"frame_id": frame_id, "wall_id": wall_id, "split": split, "lighting": lighting})
    rows.sort(key=lambda row: row["frame_id"])
    lines = [FRAMES_CSV_HEADER] + [",".join(row.values()) for row in rows]
    (out_dir / "frames.csv").write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
    return rows


def split_counts(walls: int) -> tuple[int, int, int]:
    """(train, val, test) wall counts in the 8/2/4 proportion, with at least one val and one test wall."""
    if walls < 3:
        raise ValueError(f"need at least 3 walls (one per split), got {walls}")
    val = max(1, round(walls * VAL_SHARE))
    test = max(1, round(walls * TEST_SHARE))
    return walls - val - test, val, test


def _wall_splits(seed: int, walls: int) -> list[str]:
    """The split of each wall, in wall order; which walls go where depends on the seed."""
    ordered = [split for split, count in zip(SPLITS, split_counts(walls)) for _ in range(count)]
    order = np.random.default_rng([seed, SPLIT_STREAM]).permutation(walls)
    return [ordered[position] for position in order]


def _wall_frames(rng: np.random.Generator, count: int) -> tuple[list[tuple[Image.Image, Image.Image]], str]:
    """(RGB image, 'L' label) for each frame of one wall: crops of one scene at different scales;
    and the wall's lighting, read off its rendered scene (lit_from_left or lit_from_right: the
    brighter half), the metadata column that frames.csv carries for slices."""
    frame_width, frame_height = FRAME_SIZES[rng.integers(len(FRAME_SIZES))]
    scene_size = (round(frame_width * SCENE_SCALE), round(frame_height * SCENE_SCALE))
    material, void = draw_scene(rng, *scene_size)
    label = np.where(void, VOID, CLASS_OF_MATERIAL[material]).astype(np.uint8)
    scene = to_uint8(render(rng, material))
    scene_image = Image.fromarray(scene)
    half = scene.shape[1] // 2
    lighting = "lit_from_left" if scene[:, :half].mean() > scene[:, -half:].mean() else "lit_from_right"
    scene_label = Image.fromarray(label)
    sensor_noise = rng.uniform(1.5, 4.0)
    size = (frame_width, frame_height)
    frames = []
    for box in _frame_boxes(rng, label, count):
        image = np.asarray(scene_image.resize(size, Image.Resampling.BICUBIC, box=box), dtype=np.float32)
        image = image + rng.normal(0.0, sensor_noise, image.shape)
        frames.append((Image.fromarray(to_uint8(image)), scene_label.resize(size, Image.Resampling.NEAREST, box=box)))
    return frames, lighting


def _frame_boxes(rng: np.random.Generator, label: np.ndarray, count: int) -> list[Box]:
    """Crop boxes of the scene, same aspect as the frame, each showing some window.

    Windows are a reported class of their own, so every frame keeps one in view; a box that
    finds none in CROP_TRIES draws falls back to the whole scene, which holds every window.
    """
    height, width = label.shape
    boxes = []
    for _ in range(count):
        box: Box = (0, 0, width, height)
        for _ in range(CROP_TRIES):
            scale = rng.uniform(1 / SCENE_SCALE, 1.0)
            crop_width, crop_height = round(width * scale), round(height * scale)
            x0, y0 = int(rng.integers(width - crop_width + 1)), int(rng.integers(height - crop_height + 1))
            crop = label[y0 : y0 + crop_height, x0 : x0 + crop_width]
            if np.mean(crop == WINDOW_CLASS) >= MIN_WINDOW_FRACTION:
                box = (x0, y0, x0 + crop_width, y0 + crop_height)
                break
        boxes.append(box)
    return boxes
