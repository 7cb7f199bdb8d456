"""One Painting Vision wall's scene, drawn back to front as a material map: the wall's paint, the
room's bands, the things on it, and the void mask (the pixels a labeller could not decide).
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

from .painting_vision_layout import MATERIAL_ID, Layout, random_layout
from .painting_vision_objects import draw_fixtures, draw_obstacles, draw_pictures, draw_windows

# The unit circle from math.cos/sin rather than numpy's SIMD loops, whose last bits vary by CPU.
BLOB_CORNERS = 14
UNIT_CIRCLE = tuple(
    (math.cos(2 * math.pi * k / BLOB_CORNERS), math.sin(2 * math.pi * k / BLOB_CORNERS)) for k in range(BLOB_CORNERS)
)


def draw_scene(rng: np.random.Generator, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """(material map, void mask) of one wall, drawn back to front."""
    canvas = Image.new("L", (width, height), MATERIAL_ID["plaster"])
    draw = ImageDraw.Draw(canvas)
    layout = random_layout(rng, width, height)
    work_front = _draw_paint(draw, rng, layout)
    _draw_patchy_paint(draw, rng, layout, work_front)
    _draw_room_bands(draw, layout)
    occupied = draw_windows(draw, rng, layout)
    occupied += draw_fixtures(draw, rng, layout, occupied)
    occupied += draw_pictures(draw, rng, layout, occupied)
    draw_obstacles(draw, rng, layout, occupied)
    material = np.array(canvas)
    return material, _void_mask(rng, material)


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
