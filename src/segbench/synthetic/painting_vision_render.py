"""A scene's material map rendered as an RGB image: a palette per wall, each material's colour
and texture, smooth lighting.
"""

from __future__ import annotations

import colorsys

import numpy as np
from PIL import Image

from .painting_vision_layout import MATERIAL_ID, MATERIALS

# Relative strength of the blotchy texture: plaster is uneven, fresh paint smooth, pictures busy.
TEXTURE_STRENGTH = np.array(
    [
        {"plaster": 0.07, "patchy_paint": 0.05, "floor": 0.12, "glass": 0.08, "picture": 0.35}.get(name, 0.03)
        for name in MATERIALS
    ],
    dtype=np.float32,
)


def render(rng: np.random.Generator, material: np.ndarray) -> np.ndarray:
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


def to_uint8(image: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)
