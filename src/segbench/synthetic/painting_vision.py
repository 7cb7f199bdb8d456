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

import colorsys
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from . import empty_output_folder

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
PLACEMENT_TRIES = 20
SPLIT_STREAM, WALL_STREAM = 0, 1  # independent random streams under one seed

# Materials refine the classes: the renderer gives each its own colour and texture.
MATERIAL_CLASS = {
    "plaster": 1,
    "paint": 2,
    "patchy_paint": 3,
    "ceiling": 4,
    "floor": 5,
    "skirting": 6,
    "socket": 7,
    "fixture_detail": 7,
    "radiator": 7,
    "radiator_gap": 7,
    "pipe": 7,
    "window_frame": 8,
    "glass": 8,
    "ladder": 9,
    "furniture": 9,
    "furniture_shade": 9,
    "door": 9,
    "door_panel": 9,
    "door_handle": 9,
    "picture_frame": 0,
    "picture": 0,
}
MATERIALS = tuple(MATERIAL_CLASS)
MATERIAL_ID = {name: index for index, name in enumerate(MATERIALS)}
CLASS_OF_MATERIAL = np.array([MATERIAL_CLASS[name] for name in MATERIALS], dtype=np.uint8)
# Relative strength of the blotchy texture: plaster is uneven, fresh paint smooth, pictures busy.
TEXTURE_STRENGTH = np.array(
    [
        {"plaster": 0.07, "patchy_paint": 0.05, "floor": 0.12, "glass": 0.08, "picture": 0.35}.get(name, 0.03)
        for name in MATERIALS
    ],
    dtype=np.float32,
)
# The unit circle from math.cos/sin rather than numpy's SIMD loops, whose last bits vary by CPU.
BLOB_CORNERS = 14
UNIT_CIRCLE = tuple(
    (math.cos(2 * math.pi * k / BLOB_CORNERS), math.sin(2 * math.pi * k / BLOB_CORNERS)) for k in range(BLOB_CORNERS)
)

Box = tuple[float, float, float, float]  # x0, y0, x1, y1


@dataclass(frozen=True)
class Layout:
    """Where the room's bands lie in a scene; their edges slope a little, as in perspective."""

    width: int
    height: int
    ceiling: tuple[float, float]  # y of the ceiling edge at the left and at the right border
    floor: tuple[float, float]  # y of the floor edge at the left and at the right border
    skirting_height: float

    def ceiling_y(self, x: float) -> float:
        return self.ceiling[0] + (self.ceiling[1] - self.ceiling[0]) * x / self.width

    def floor_y(self, x: float) -> float:
        return self.floor[0] + (self.floor[1] - self.floor[0]) * x / self.width

    def wall_bottom_y(self, x: float) -> float:
        return self.floor_y(x) - self.skirting_height

    @property
    def wall_top(self) -> float:
        """The lowest point of the ceiling edge: below it the wall spans the whole width."""
        return max(self.ceiling)

    @property
    def wall_bottom(self) -> float:
        """The highest point of the skirting's top edge."""
        return min(self.floor) - self.skirting_height


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


# --- one wall: scene, rendering, frames ---------------------------------------------------------


def _wall_frames(rng: np.random.Generator, count: int) -> tuple[list[tuple[Image.Image, Image.Image]], str]:
    """(RGB image, 'L' label) for each frame of one wall: crops of one scene at different scales;
    and the wall's lighting, read off its rendered scene (lit_from_left or lit_from_right: the
    brighter half), the metadata column that frames.csv carries for slices."""
    frame_width, frame_height = FRAME_SIZES[rng.integers(len(FRAME_SIZES))]
    scene_size = (round(frame_width * SCENE_SCALE), round(frame_height * SCENE_SCALE))
    material, void = _draw_scene(rng, *scene_size)
    label = np.where(void, VOID, CLASS_OF_MATERIAL[material]).astype(np.uint8)
    scene = _to_uint8(_render(rng, material))
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
        frames.append((Image.fromarray(_to_uint8(image)), scene_label.resize(size, Image.Resampling.NEAREST, box=box)))
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


def _draw_scene(rng: np.random.Generator, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """(material map, void mask) of one wall, drawn back to front."""
    canvas = Image.new("L", (width, height), MATERIAL_ID["plaster"])
    draw = ImageDraw.Draw(canvas)
    layout = _random_layout(rng, width, height)
    work_front = _draw_paint(draw, rng, layout)
    _draw_patchy_paint(draw, rng, layout, work_front)
    _draw_room_bands(draw, layout)
    occupied = _draw_windows(draw, rng, layout)
    occupied += _draw_fixtures(draw, rng, layout, occupied)
    occupied += _draw_pictures(draw, rng, layout, occupied)
    _draw_obstacles(draw, rng, layout, occupied)
    material = np.array(canvas)
    return material, _void_mask(rng, material)


def _random_layout(rng: np.random.Generator, width: int, height: int) -> Layout:
    return Layout(
        width=width,
        height=height,
        ceiling=tuple(rng.uniform(0.08, 0.18, 2) * height),
        floor=tuple(rng.uniform(0.80, 0.90, 2) * height),
        skirting_height=rng.uniform(0.025, 0.04) * height,
    )


# --- drawing: wall paint ------------------------------------------------------------------------


def _draw_paint(draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout) -> float:
    """Vertical roller strokes from one side, plus cut-in bands; returns the x of the work front."""
    width, height = layout.width, layout.height
    roller = rng.uniform(0.05, 0.08) * width
    stride = 0.9 * roller  # neighbouring strokes overlap a little
    strokes = max(2, math.ceil(rng.uniform(0.25, 0.7) * width / stride))
    from_right = rng.random() < 0.5
    paint = MATERIAL_ID["paint"]
    for index in range(strokes):
        at_front = index >= strokes - 2  # the last strokes stop short: a ragged, unfinished edge
        bottom = rng.uniform(0.3, 0.85) * height if at_front and rng.random() < 0.7 else height
        polygon = _stroke_polygon(rng, index * stride, index * stride + roller, bottom, roller)
        draw.polygon(_mirrored(polygon, width) if from_right else polygon, fill=paint)
    if rng.random() < 0.5:  # painters cut in along the ceiling before rolling
        edge_y = layout.wall_top + rng.uniform(0.02, 0.05) * height
        draw.polygon([(0, 0), (width, 0)] + _jagged_line(rng, (width, edge_y), (0, edge_y), 16, 5), fill=paint)
    if rng.random() < 0.3:  # ... and above the skirting
        edge_y = layout.wall_bottom - rng.uniform(0.02, 0.05) * height
        draw.polygon(
            _jagged_line(rng, (0, edge_y), (width, edge_y), 16, 5) + [(width, height), (0, height)], fill=paint
        )
    front = strokes * stride + 0.1 * roller
    return width - front if from_right else front


def _stroke_polygon(
    rng: np.random.Generator, left: float, right: float, bottom: float, roller: float
) -> list[tuple[float, float]]:
    """One roller stroke from the top of the scene down to `bottom`, with wobbly sides and a ragged end."""
    side_wobble, end_wobble = 0.06 * roller, 0.15 * roller
    return (
        _jagged_line(rng, (left, 0), (left, bottom), 18, side_wobble)
        + _jagged_line(rng, (left, bottom), (right, bottom), 10, end_wobble)[1:-1]
        + _jagged_line(rng, (right, bottom), (right, 0), 18, side_wobble)
    )


def _draw_patchy_paint(draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout, work_front: float) -> None:
    """Thin-coat patches whose paint state is uncertain: one on the work front, up to two elsewhere."""
    height = layout.height
    centres_x = [work_front] + list(rng.uniform(0.1, 0.9, rng.integers(0, 3)) * layout.width)
    for centre_x in centres_x:
        centre_y = rng.uniform(layout.wall_top + 0.1 * height, layout.wall_bottom - 0.1 * height)
        radius_x = rng.uniform(0.025, 0.06) * layout.width
        radius_y = radius_x * rng.uniform(1.5, 3.0)  # roller patches run vertically
        draw.polygon(_blob(rng, centre_x, centre_y, radius_x, radius_y), fill=MATERIAL_ID["patchy_paint"])


def _draw_room_bands(draw: ImageDraw.ImageDraw, layout: Layout) -> None:
    width, height = layout.width, layout.height
    (ceiling_left, ceiling_right), (floor_left, floor_right) = layout.ceiling, layout.floor
    skirting = layout.skirting_height
    draw.polygon([(0, 0), (width, 0), (width, ceiling_right), (0, ceiling_left)], fill=MATERIAL_ID["ceiling"])
    draw.polygon(
        [(0, floor_left - skirting), (width, floor_right - skirting), (width, height), (0, height)],
        fill=MATERIAL_ID["skirting"],
    )
    draw.polygon([(0, floor_left), (width, floor_right), (width, height), (0, height)], fill=MATERIAL_ID["floor"])


# --- drawing: things on the wall ----------------------------------------------------------------


def _draw_windows(draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout) -> list[Box]:
    """One or two framed windows, each in its own half of the wall so they never overlap."""
    width, height = layout.width, layout.height
    count = 2 if rng.random() < 0.35 else 1
    slot = width / count
    boxes = []
    for index in range(count):
        window_width = rng.uniform(0.16, 0.26) * width
        window_height = rng.uniform(0.28, 0.4) * height
        x0 = index * slot + rng.uniform(0.05 * slot, 0.95 * slot - window_width)
        top_min = layout.wall_top + 0.04 * height
        y0 = rng.uniform(top_min, max(top_min, 0.62 * height - window_height))
        boxes.append(_draw_window(draw, rng, (x0, y0, x0 + window_width, y0 + window_height)))
    return boxes


def _draw_window(draw: ImageDraw.ImageDraw, rng: np.random.Generator, box: Box) -> Box:
    """A framed window with a mullion, maybe a transom, and a sill; returns the box it covers."""
    x0, y0, x1, y1 = box
    frame = rng.uniform(0.05, 0.08) * (x1 - x0)
    draw.rectangle(box, fill=MATERIAL_ID["window_frame"])
    draw.rectangle((x0 + frame, y0 + frame, x1 - frame, y1 - frame), fill=MATERIAL_ID["glass"])
    middle = (x0 + x1) / 2
    draw.rectangle((middle - frame / 3, y0, middle + frame / 3, y1), fill=MATERIAL_ID["window_frame"])
    if rng.random() < 0.5:  # a transom
        transom = y0 + (y1 - y0) / 3
        draw.rectangle((x0, transom - frame / 3, x1, transom + frame / 3), fill=MATERIAL_ID["window_frame"])
    sill = (x0 - frame, y1, x1 + frame, y1 + frame)
    draw.rectangle(sill, fill=MATERIAL_ID["window_frame"])
    return (sill[0], y0, sill[2], sill[3])


def _draw_fixtures(
    draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout, windows: list[Box]
) -> list[Box]:
    """A radiator under a window (with its pipe), a riser pipe, sockets and a switch; returns their boxes."""
    boxes = []
    radiator = _draw_radiator(draw, rng, layout, windows[0]) if rng.random() < 0.75 else None
    if radiator:
        boxes.append(radiator)
        pipe_x = radiator[0] + 0.1 * (radiator[2] - radiator[0])
        _draw_pipe(draw, rng, pipe_x, radiator[3], layout.floor_y(pipe_x))
    if rng.random() < 0.35:
        riser_x = rng.uniform(0.03, 0.97) * layout.width
        _draw_pipe(draw, rng, riser_x, layout.ceiling_y(riser_x), layout.floor_y(riser_x))
    for _ in range(rng.integers(1, 4)):
        boxes.append(_draw_socket(draw, rng, layout, switch=False))
    if rng.random() < 0.6:
        boxes.append(_draw_socket(draw, rng, layout, switch=True))
    return boxes


def _draw_radiator(draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout, window: Box) -> Box | None:
    """A finned radiator between the window sill and the skirting, or None where it does not fit."""
    x0, _, x1, sill = window
    radiator_width = (x1 - x0) * rng.uniform(0.7, 1.0)
    left = (x0 + x1 - radiator_width) / 2
    top = sill + rng.uniform(0.05, 0.08) * layout.height
    bottom = layout.wall_bottom - rng.uniform(0.03, 0.05) * layout.height
    if bottom - top < 0.06 * layout.height:
        return None
    box = (left, top, left + radiator_width, bottom)
    draw.rectangle(box, fill=MATERIAL_ID["radiator"])
    fin = rng.uniform(9, 14)
    for fin_x in np.arange(left + fin, left + radiator_width - fin / 2, fin):
        draw.line([(fin_x, top + 3), (fin_x, bottom - 3)], fill=MATERIAL_ID["radiator_gap"], width=2)
    return box


def _draw_pipe(draw: ImageDraw.ImageDraw, rng: np.random.Generator, x: float, top: float, bottom: float) -> None:
    draw.line([(x, top), (x, bottom)], fill=MATERIAL_ID["pipe"], width=int(rng.integers(5, 10)))


def _draw_socket(draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout, switch: bool) -> Box:
    """A wall socket just above the skirting, or a light switch at hand height."""
    side = rng.uniform(0.022, 0.03) * layout.width
    x0 = rng.uniform(0.03, 0.95) * layout.width
    if switch:
        y0 = rng.uniform(0.5, 0.58) * layout.height
    else:
        y0 = layout.wall_bottom_y(x0) - rng.uniform(0.04, 0.1) * layout.height - side
    box = (x0, y0, x0 + side, y0 + side)
    draw.rectangle(box, fill=MATERIAL_ID["socket"])
    detail = MATERIAL_ID["fixture_detail"]
    if switch:  # the rocker
        draw.rectangle((x0 + side * 0.3, y0 + side * 0.2, x0 + side * 0.7, y0 + side * 0.8), fill=detail)
    else:  # the two pin holes
        for hole_x in (x0 + side * 0.33, x0 + side * 0.67):
            draw.ellipse((hole_x - side * 0.08, y0 + side * 0.42, hole_x + side * 0.08, y0 + side * 0.58), fill=detail)
    return box


def _draw_pictures(
    draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout, occupied: list[Box]
) -> list[Box]:
    """One or two framed pictures or posters ('other') on free wall; returns their boxes."""
    boxes = []
    for _ in range(1 if rng.random() < 0.6 else 2):
        picture_width = rng.uniform(0.08, 0.18) * layout.width
        picture_height = picture_width * rng.uniform(0.7, 1.4)
        y_range = (layout.wall_top + 0.05 * layout.height, 0.65 * layout.height - picture_height)
        box = _free_box(rng, layout, (picture_width, picture_height), y_range, occupied + boxes)
        if box is None:
            continue
        x0, y0, x1, y1 = box
        border = rng.uniform(0.04, 0.1) * picture_width
        draw.rectangle(box, fill=MATERIAL_ID["picture_frame"])
        draw.rectangle((x0 + border, y0 + border, x1 - border, y1 - border), fill=MATERIAL_ID["picture"])
        boxes.append(box)
    return boxes


def _free_box(
    rng: np.random.Generator,
    layout: Layout,
    size: tuple[float, float],
    y_range: tuple[float, float],
    occupied: list[Box],
) -> Box | None:
    """A box of `size` with its top in `y_range` that keeps clear of `occupied`, or None."""
    box_width, box_height = size
    margin = 0.02 * layout.width
    y_low, y_high = y_range[0], max(y_range)
    for _ in range(PLACEMENT_TRIES):
        x0 = rng.uniform(margin, layout.width - box_width - margin)
        y0 = rng.uniform(y_low, y_high)
        box = (x0, y0, x0 + box_width, y0 + box_height)
        if not any(_overlap(box, other, margin) for other in occupied):
            return box
    return None


def _overlap(a: Box, b: Box, margin: float) -> bool:
    return a[0] < b[2] + margin and b[0] < a[2] + margin and a[1] < b[3] + margin and b[1] < a[3] + margin


# --- drawing: obstacles in front of the wall ----------------------------------------------------


def _draw_obstacles(draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout, occupied: list[Box]) -> None:
    """One or two of door, furniture and ladder; a ladder stands in when none of them fits."""
    drawers = {"door": _draw_door, "furniture": _draw_furniture, "ladder": _draw_ladder}
    kinds = rng.permutation(list(drawers))[: rng.integers(1, 3)]
    drawn = [drawers[str(kind)](draw, rng, layout, occupied) for kind in kinds]
    if not any(drawn):
        _draw_ladder(draw, rng, layout, occupied)


def _draw_door(draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout, occupied: list[Box]) -> bool:
    """A panelled door in its casing, standing on the floor, clear of windows and pictures."""
    door_width = rng.uniform(0.13, 0.17) * layout.width
    door_height = rng.uniform(0.72, 0.8) * (min(layout.floor) - layout.wall_top)
    top = min(layout.floor) - door_height
    box = _free_box(rng, layout, (door_width, door_height), (top, top), occupied)
    if box is None:
        return False
    x0, y0, x1, _ = box
    y1 = layout.floor_y((x0 + x1) / 2) + 0.01 * layout.height
    casing = 0.08 * door_width
    draw.rectangle((x0, y0, x1, y1), fill=MATERIAL_ID["door_panel"])
    draw.rectangle((x0 + casing, y0 + casing, x1 - casing, y1), fill=MATERIAL_ID["door"])
    panel_left, panel_right = x0 + 3 * casing, x1 - 3 * casing
    panel_rows = int(rng.integers(2, 4))
    row_height = (y1 - y0 - 2 * casing) / panel_rows
    for row in range(panel_rows):
        row_top = y0 + 2 * casing + row * row_height
        draw.rectangle(
            (panel_left, row_top + casing, panel_right, row_top + row_height - casing), fill=MATERIAL_ID["door_panel"]
        )
    handle_y = y0 + 0.55 * (y1 - y0)
    draw.rectangle((x1 - 3 * casing, handle_y, x1 - 1.5 * casing, handle_y + casing), fill=MATERIAL_ID["door_handle"])
    occupied.append((x0, y0, x1, y1))
    return True


def _draw_furniture(draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout, occupied: list[Box]) -> bool:
    """A cabinet on legs standing on the floor in front of the wall (it may hide part of it)."""
    width, height = layout.width, layout.height
    cabinet_width = rng.uniform(0.2, 0.35) * width
    cabinet_height = rng.uniform(0.15, 0.28) * height
    x0 = rng.uniform(0.02, 0.98) * width - cabinet_width / 2
    x1 = x0 + cabinet_width
    feet = layout.floor_y(x0 + cabinet_width / 2) + rng.uniform(0.03, 0.07) * height
    legs = 0.03 * height
    y0, y1 = feet - legs - cabinet_height, feet - legs
    shade = MATERIAL_ID["furniture_shade"]
    for leg_x in (x0 + 0.05 * cabinet_width, x1 - 0.08 * cabinet_width):
        draw.rectangle((leg_x, y1, leg_x + 0.03 * cabinet_width, feet), fill=shade)
    draw.rectangle((x0, y0, x1, y1), fill=MATERIAL_ID["furniture"])
    draw.rectangle((x0, y0, x1, y0 + 0.12 * cabinet_height), fill=shade)  # the top, seen from above
    cabinet_doors = int(rng.integers(2, 4))
    for seam in range(1, cabinet_doors):  # gaps between cabinet doors
        seam_x = x0 + seam * cabinet_width / cabinet_doors
        draw.line([(seam_x, y0 + 0.2 * cabinet_height), (seam_x, y1 - 4)], fill=shade, width=3)
    occupied.append((x0, y0, x1, feet))
    return True


def _draw_ladder(draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout, occupied: list[Box]) -> bool:
    """A step ladder seen from the front: two converging rails and rungs, the wall showing through."""
    width, height = layout.width, layout.height
    centre = rng.uniform(0.1, 0.9) * width
    feet = layout.floor_y(centre) + rng.uniform(0.02, 0.07) * height
    top = rng.uniform(0.25, 0.45) * height
    half_foot = rng.uniform(0.06, 0.09) * width
    half_top = half_foot * 0.6
    rail = int(rng.integers(6, 11))
    ladder = MATERIAL_ID["ladder"]
    draw.line([(centre - half_foot, feet), (centre - half_top, top)], fill=ladder, width=rail)
    draw.line([(centre + half_foot, feet), (centre + half_top, top)], fill=ladder, width=rail)
    for rung_y in np.arange(top + 0.08 * height, feet - 0.04 * height, 0.08 * height):
        half = half_top + (half_foot - half_top) * (rung_y - top) / (feet - top)
        draw.line([(centre - half, rung_y), (centre + half, rung_y)], fill=ladder, width=rail - 1)
    draw.rectangle((centre - half_top - rail / 2, top - 0.02 * height, centre + half_top + rail / 2, top), fill=ladder)
    occupied.append((centre - half_foot, top, centre + half_foot, feet))
    return True


# --- void ---------------------------------------------------------------------------------------


def _void_mask(rng: np.random.Generator, material: np.ndarray) -> np.ndarray:
    """Ambiguous pixels: 2-4 px bands along some painted/unpainted edges, and a few small blobs."""
    painted, unpainted = material == MATERIAL_ID["paint"], material == MATERIAL_ID["plaster"]
    reach = int(rng.integers(1, 3))  # each side of the edge: a band 2*reach wide
    edge = (painted & _dilate(unpainted, reach)) | (unpainted & _dilate(painted, reach))
    edge &= _random_cells(rng, material.shape, cell=48, keep=0.5)
    blobs = Image.new("1", (material.shape[1], material.shape[0]), 0)
    draw = ImageDraw.Draw(blobs)
    for _ in range(rng.integers(3, 7)):
        x, y = rng.uniform(0, material.shape[1]), rng.uniform(0, material.shape[0])
        radius = rng.uniform(3, 7)
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=1)
    return edge | np.array(blobs, dtype=bool)


def _dilate(mask: np.ndarray, reach: int) -> np.ndarray:
    """`mask` grown by `reach` pixels in every direction (Pillow's MaxFilter is ten times slower)."""
    height, width = mask.shape
    padded = np.pad(mask, reach)
    grown = np.zeros_like(mask)
    for dy in range(2 * reach + 1):
        for dx in range(2 * reach + 1):
            grown |= padded[dy : dy + height, dx : dx + width]
    return grown


def _random_cells(rng: np.random.Generator, shape: tuple[int, int], cell: int, keep: float) -> np.ndarray:
    """A mask of square cells, each kept with probability `keep`: void on some edges, not all."""
    rows, columns = -(-shape[0] // cell), -(-shape[1] // cell)
    cells = rng.random((rows, columns)) < keep
    return np.repeat(np.repeat(cells, cell, axis=0), cell, axis=1)[: shape[0], : shape[1]]


# --- rendering ----------------------------------------------------------------------------------


def _render(rng: np.random.Generator, material: np.ndarray) -> np.ndarray:
    """RGB float image of a material map: wall colours, texture, streaky patches and lighting."""
    height, width = material.shape
    palette = _palette(rng)
    colour = palette[material]
    patchy = material == MATERIAL_ID["patchy_paint"]
    # Thin coat over plaster: vertical streaks mixing paint and plaster colours.
    streaks = _smooth_noise(rng, (height, width), cell=(64, 5))
    paint_share = np.clip(0.5 + 0.6 * streaks[patchy], 0.15, 0.85)[:, None]
    colour[patchy] = paint_share * palette[MATERIAL_ID["paint"]] + (1 - paint_share) * palette[MATERIAL_ID["plaster"]]
    texture = _smooth_noise(rng, (height, width), cell=(48, 48)) + 0.5 * _smooth_noise(
        rng, (height, width), cell=(9, 9)
    )
    colour *= (1 + TEXTURE_STRENGTH[material] * texture)[..., None]
    colour *= _lighting(rng, height, width)[..., None]
    return colour


def _palette(rng: np.random.Generator) -> np.ndarray:
    """An RGB colour per material, drawn afresh for every wall."""
    plaster = rng.uniform(145, 190) + rng.uniform(-6, 8, 3)  # grey, leaning a little warm or cool
    paint = _hsv(rng.random(), rng.uniform(0.3, 0.6), rng.uniform(0.7, 0.95))  # clearly tinted
    white = rng.uniform(215, 240) + rng.uniform(-5, 5, 3)
    wood = _hsv(rng.uniform(0.05, 0.1), rng.uniform(0.4, 0.65), rng.uniform(0.35, 0.65))
    furniture = _hsv(rng.random(), rng.uniform(0.2, 0.7), rng.uniform(0.25, 0.6))
    door = wood if rng.random() < 0.5 else white * 0.97
    colours = {
        "plaster": plaster,
        "paint": paint,
        "patchy_paint": (plaster + paint) / 2,
        "ceiling": white + 8,
        "floor": wood if rng.random() < 0.6 else rng.uniform(90, 140) + rng.uniform(-5, 5, 3),
        "skirting": white if rng.random() < 0.7 else wood * 1.1,
        "socket": white + 5,
        "fixture_detail": white * 0.55,
        "radiator": white,
        "radiator_gap": white * 0.6,
        "pipe": white * 0.95 if rng.random() < 0.6 else np.array([184.0, 115.0, 51.0]),  # copper
        "window_frame": white + 10 if rng.random() < 0.7 else wood,
        "glass": _hsv(rng.uniform(0.53, 0.6), rng.uniform(0.1, 0.35), rng.uniform(0.8, 0.97)),
        "ladder": (
            rng.uniform(160, 200) + rng.uniform(-4, 4, 3)
            if rng.random() < 0.6
            else _hsv(rng.uniform(0.05, 0.12), 0.7, 0.85)
        ),
        "furniture": furniture,
        "furniture_shade": furniture * 0.7,
        "door": door,
        "door_panel": door * 0.85,
        "door_handle": np.array([60.0, 60.0, 60.0]),
        "picture_frame": _hsv(rng.uniform(0.05, 0.15), rng.uniform(0.3, 0.8), rng.uniform(0.1, 0.7)),
        "picture": _hsv(rng.random(), rng.uniform(0.4, 0.9), rng.uniform(0.4, 0.9)),
    }
    return np.array([colours[name] for name in MATERIALS], dtype=np.float32)


def _hsv(hue: float, saturation: float, value: float) -> np.ndarray:
    return np.array(colorsys.hsv_to_rgb(hue, saturation, value)) * 255


def _smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cell: tuple[int, int]) -> np.ndarray:
    """Low-frequency noise, about unit scale: a coarse random grid upsampled bicubically.

    `cell` is the (height, width) of one grid cell; unequal sides give streaks.
    """
    height, width = shape
    grid = rng.standard_normal((height // cell[0] + 2, width // cell[1] + 2)).astype(np.float32)
    return np.array(Image.fromarray(grid).resize((width, height), Image.Resampling.BICUBIC))


def _lighting(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """A multiplicative light field: a linear gradient from a side, darker corners."""
    y = np.linspace(-0.5, 0.5, height, dtype=np.float32)[:, None]
    x = np.linspace(-0.5, 0.5, width, dtype=np.float32)[None, :]
    across, down = rng.uniform(-0.3, 0.3), rng.uniform(-0.2, 0.05)
    vignette = rng.uniform(0.1, 0.35)
    return 1 + across * x + down * y - vignette * (x * x + y * y)


# --- small helpers ------------------------------------------------------------------------------


def _jagged_line(
    rng: np.random.Generator, start: tuple[float, float], end: tuple[float, float], step: float, wobble: float
) -> list[tuple[float, float]]:
    """Points from start to end about `step` apart, the inner ones pushed sideways: a hand-made edge."""
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    count = max(2, int(length // step) + 1)
    offsets = rng.uniform(-wobble, wobble, count)
    offsets[[0, -1]] = 0
    normal_x, normal_y = -(y1 - y0) / length, (x1 - x0) / length
    points = []
    for index, offset in enumerate(offsets):
        t = index / (count - 1)
        points.append((x0 + t * (x1 - x0) + offset * normal_x, y0 + t * (y1 - y0) + offset * normal_y))
    return points


def _blob(
    rng: np.random.Generator, centre_x: float, centre_y: float, radius_x: float, radius_y: float
) -> list[tuple[float, float]]:
    """An irregular closed polygon around a centre."""
    radii = rng.uniform(0.7, 1.2, BLOB_CORNERS)
    return [(centre_x + radius_x * r * cos, centre_y + radius_y * r * sin) for r, (cos, sin) in zip(radii, UNIT_CIRCLE)]


def _mirrored(polygon: list[tuple[float, float]], width: int) -> list[tuple[float, float]]:
    return [(width - x, y) for x, y in polygon]


def _to_uint8(image: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)
