"""The things on and in front of a Painting Vision wall, drawn into its material map: windows,
fixtures (sockets, switches, radiators, pipes), pictures and obstacles (doors, furniture, ladders).
"""

from __future__ import annotations

import numpy as np
from PIL import ImageDraw

from .painting_vision_layout import MATERIAL_ID, Box, Layout

PLACEMENT_TRIES = 20


def draw_windows(draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout) -> list[Box]:
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


def draw_fixtures(
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


def draw_pictures(
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


def draw_obstacles(draw: ImageDraw.ImageDraw, rng: np.random.Generator, layout: Layout, occupied: list[Box]) -> None:
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
