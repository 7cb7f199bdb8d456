"""The materials of a Painting Vision scene (each refining a class) and the room's layout: where
the ceiling, wall and floor bands of a scene lie.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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


def random_layout(rng: np.random.Generator, width: int, height: int) -> Layout:
    return Layout(
        width=width,
        height=height,
        ceiling=tuple(rng.uniform(0.08, 0.18, 2) * height),
        floor=tuple(rng.uniform(0.80, 0.90, 2) * height),
        skirting_height=rng.uniform(0.025, 0.04) * height,
    )
