"""A procedural, offline generator of a small dataset in the IDD20K on-disk format.

    <out>/leftImg8bit/<split>/<drive>/<img_id>_leftImg8bit.jpg|.png   the image (drives alternate
                                                                      Part II .jpg and Part I .png)
    <out>/gtFine/<split>/<drive>/<img_id>_gtFine_polygons.json        the annotation: the objects
                                                                      of the scene in drawing order

Each frame is a street scene drawn as polygons with float coordinates, named by the dataset's own
label names: sky, buildings, a bridge, trees, barriers, poles with signs and lights, the road with
parking, sidewalk, curb and rail track, vehicles (one of them a "cargroup"), people and a rider on
a motorcycle, and void objects drawn over the rest (ego vehicle, license plates, out of roi), plus
one deleted object and one two-point polygon that must not be drawn. Every level-3 class is in
every frame. The image is rendered from the same polygons in the same order (each object in its
label's colour, jittered), so its edges are the annotation's. Frames are 1920x1080 or 1280x720.

The level-3 masks are then drawn from the JSON by segbench.protocols.idd.masks, exactly as a user would.
Every random draw comes from a numpy Generator seeded by (seed, drive, frame); a build is
byte-identical on every run with the same Pillow.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from ..protocols.idd.masks import POLYGONS_SUFFIX, write_masks
from ..protocols.idd.table import load_table
from . import empty_output_folder

SIZES = ((1920, 1080), (1280, 720))  # (width, height); the frames of a drive alternate
# (drive, split): six drives, split by drive.
DRIVES = (("101", "train"), ("102", "train"), ("103", "train"), ("104", "val"), ("105", "test"), ("106", "test"))
FRAMES_PER_DRIVE = 2
JPEG_OPTIONS = {"quality": 85, "subsampling": 2, "optimize": False}
DECIMALS = 2  # polygon coordinates are floats with two decimals, as in the real annotations

Point = tuple[float, float]


@dataclass(frozen=True)
class SceneObject:
    label: str
    polygon: list[Point]
    deleted: bool = False


class Scene:
    """Objects in drawing order, in pixel coordinates of a width x height frame.

    Shapes are given in unit coordinates (u across, v down); a mirrored scene (traffic on the
    other side of the road) flips u, so that drives look different.
    """

    def __init__(self, rng: np.random.Generator, width: int, height: int, mirrored: bool) -> None:
        self.rng, self.width, self.height, self.mirrored = rng, width, height, mirrored
        self.objects: list[SceneObject] = []

    def add(self, label: str, polygon: list[Point], deleted: bool = False) -> None:
        w, h = self.width, self.height
        points = []
        for u, v in polygon:
            u = min(max(1.0 - u if self.mirrored else u, 0.0), 1.0)
            points.append((round(u * w, DECIMALS), round(min(max(v, 0.0), 1.0) * h, DECIMALS)))
        self.objects.append(SceneObject(label, points, deleted))

    def box(self, label: str, u0: float, v0: float, u1: float, v1: float) -> None:
        self.add(label, [(u0, v0), (u1, v0), (u1, v1), (u0, v1)])

    def jitter(self, value: float, spread: float) -> float:
        return float(value + self.rng.uniform(-spread, spread))


def _background(scene: Scene, horizon: float) -> None:
    """Sky, the far objects on the horizon, and the road surface with its borders."""
    j = scene.jitter
    scene.box("sky", 0, 0, 1, horizon)
    scene.add("fallback background", [(0.40, 0.02), (0.55, 0.03), (0.52, 0.10), (0.41, 0.09)])
    scene.box("building", 0.00, j(0.15, 0.12), 0.16, horizon)
    scene.box("building", 0.58, j(0.18, 0.12), 0.70, horizon)
    scene.add("bridge", [(0.16, horizon - 0.16), (0.40, horizon - 0.18), (0.40, horizon - 0.10), (0.16, horizon - 0.08)])
    scene.box("tunnel", 0.22, horizon - 0.08, 0.32, horizon)
    for u in (0.42, 0.78):
        cx, cy, r = j(u, 0.02), horizon - 0.12, j(0.06, 0.01)
        corners = [2 * math.pi * k / 10 for k in range(10)]  # math, not numpy: the same bits on every CPU
        scene.add("vegetation", [(cx + r * math.cos(a), cy + 1.6 * r * math.sin(a)) for a in corners])
    scene.box("wall", 0.86, horizon - 0.10, 1.00, horizon + 0.02)
    # The road: a trapezoid from the horizon to the bottom, with patches and borders.
    scene.add("road", [(0.38, horizon), (0.62, horizon), (1.0, 1.0), (0.0, 1.0)])
    scene.add("parking", [(0.62, horizon + 0.05), (0.70, horizon + 0.05), (0.80, horizon + 0.20), (0.68, horizon + 0.20)])
    scene.add("drivable fallback", [(0.30, 0.80), (0.42, 0.80), (0.40, 0.90), (0.26, 0.90)])
    scene.add("sidewalk", [(0.0, horizon + 0.02), (0.34, horizon + 0.02), (0.08, 0.78), (0.0, 0.78)])
    scene.add("curb", [(0.34, horizon + 0.02), (0.37, horizon + 0.02), (0.11, 0.80), (0.07, 0.80)])
    scene.add("rail track", [(0.80, horizon + 0.10), (0.94, horizon + 0.10), (1.0, horizon + 0.22), (0.86, horizon + 0.22)])
    scene.add("non-drivable fallback", [(0.86, horizon + 0.24), (1.0, horizon + 0.24), (1.0, horizon + 0.34), (0.9, horizon + 0.34)])


def _barriers(scene: Scene, horizon: float) -> None:
    """Fence, guard rail, a billboard, poles with a sign and a light, a bollard (obs-str-bar)."""
    j = scene.jitter
    scene.box("fence", 0.70, horizon - 0.06, 0.86, horizon + 0.01)
    scene.add("guard rail", [(0.62, horizon + 0.00), (0.75, horizon + 0.02), (0.75, horizon + 0.05), (0.62, horizon + 0.03)])
    scene.box("billboard", 0.02, j(0.22, 0.02), 0.13, 0.33)
    scene.box("pole", 0.065, 0.33, 0.075, horizon + 0.06)
    pole = j(0.47, 0.01)
    scene.box("polegroup", pole, 0.12, pole + 0.012, horizon + 0.02)
    scene.add("traffic sign", [(pole - 0.03, 0.14), (pole + 0.04, 0.14), (pole + 0.005, 0.22)])
    scene.box("traffic light", pole + 0.013, 0.24, pole + 0.035, 0.33)
    scene.box("obs-str-bar-fallback", 0.90, horizon + 0.36, 0.93, horizon + 0.46)


def _vehicle(scene: Scene, label: str, u: float, v: float, width: float, height: float, plate: bool) -> None:
    """A vehicle as a body with a cabin; a license plate (void) drawn over it when `plate`."""
    scene.add(label, [(u, v), (u + width, v), (u + width, v - 0.6 * height), (u + 0.8 * width, v - height),
                      (u + 0.2 * width, v - height), (u, v - 0.6 * height)])
    if plate:
        scene.box("license plate", u + 0.4 * width, v - 0.18 * height, u + 0.6 * width, v - 0.06 * height)


def _person(scene: Scene, label: str, u: float, v: float, size: float) -> None:
    """A standing figure: legs, body and head, feet at (u, v)."""
    scene.add(label, [(u - 0.3 * size, v), (u + 0.3 * size, v), (u + 0.35 * size, v - 0.7 * size),
                      (u + 0.15 * size, v - 0.8 * size), (u + 0.15 * size, v - size), (u - 0.15 * size, v - size),
                      (u - 0.15 * size, v - 0.8 * size), (u - 0.35 * size, v - 0.7 * size)])


def _road_users(scene: Scene) -> None:
    """Vehicles and people, each in its own place on the road; some overlap on purpose."""
    j, rng = scene.jitter, scene.rng
    fallback = str(rng.choice(["caravan", "trailer", "train", "vehicle fallback"]))
    # A deleted object and a two-point polygon: neither may be drawn.
    scene.add("bus", [(0.0, 0.5), (1.0, 0.5), (1.0, 1.0), (0.0, 1.0)], deleted=True)
    scene.add("truck", [(0.1, 0.1), (0.9, 0.9)])
    _vehicle(scene, "bus", j(0.40, 0.02), 0.66, j(0.2, 0.08), j(0.2, 0.08), plate=False)  # near or far
    _vehicle(scene, "truck", j(0.56, 0.02), 0.64, 0.10, 0.13, plate=False)
    _vehicle(scene, fallback, j(0.20, 0.02), 0.66, 0.10, 0.10, plate=False)
    _vehicle(scene, "car", j(0.12, 0.02), 0.90, 0.16, 0.14, plate=True)
    _vehicle(scene, "cargroup", j(0.66, 0.02), 0.84, 0.18, 0.12, plate=False)  # drawn as car
    _vehicle(scene, "autorickshaw", j(0.47, 0.02), 0.86, 0.09, 0.13, plate=True)
    _vehicle(scene, "motorcycle", j(0.86, 0.01), 0.76, 0.06, 0.08, plate=False)
    _person(scene, "rider", 0.89, 0.70, 0.10)  # over the motorcycle
    _vehicle(scene, "bicycle", j(0.34, 0.01), 0.70, 0.05, 0.07, plate=False)
    _person(scene, "person", j(0.05, 0.01), 0.72, 0.14)
    _person(scene, "animal", j(0.30, 0.01), 0.95, 0.06)


def _void(scene: Scene) -> None:
    """Void labels drawn last: they overwrite what lies beneath."""
    scene.add("ego vehicle", [(0.0, 0.96), (0.3, 0.94), (0.7, 0.94), (1.0, 0.96), (1.0, 1.0), (0.0, 1.0)])
    scene.add("out of roi", [(0.96, 0.0), (1.0, 0.0), (1.0, 0.08)])


def draw_scene(rng: np.random.Generator, width: int, height: int, mirrored: bool) -> Scene:
    scene = Scene(rng, width, height, mirrored)
    horizon = scene.jitter(0.45, 0.1)
    _background(scene, horizon)
    _barriers(scene, horizon)
    _road_users(scene)
    _void(scene)
    return scene


def annotation(scene: Scene) -> dict:
    """The polygon JSON of a scene, with the fields of the real files."""
    return {
        "imgHeight": scene.height,
        "imgWidth": scene.width,
        "objects": [
            {"date": "01-Jan-2020 00:00:00", "deleted": int(obj.deleted), "id": index, "label": obj.label,
             "polygon": [[x, y] for x, y in obj.polygon], "user": "segbench-synthetic", "verified": 1}
            for index, obj in enumerate(scene.objects)
        ],
    }


def render(scene: Scene, textured: bool) -> Image.Image:
    """The RGB frame: each drawn object in its label's colour (jittered), over the previous ones.

    `textured` adds soft shading (for JPEG frames); flat colours keep a PNG frame small.
    """
    table = load_table()
    colour = {label.name: np.array(label.color, dtype=np.float64) for label in table.labels}
    colour["cargroup"] = colour["car"]
    image = Image.new("RGB", (scene.width, scene.height), (0, 0, 0))
    draw = ImageDraw.Draw(image)
    for obj in scene.objects:
        if obj.deleted or len(obj.polygon) < 3:
            continue
        jittered = np.clip(colour[obj.label] + scene.rng.uniform(-12, 12, 3), 0, 255)
        draw.polygon(obj.polygon, fill=tuple(int(c) for c in jittered))
    if not textured:
        return image
    pixels = np.asarray(image, dtype=np.float32)
    small = scene.rng.normal(0, 1, (scene.height // 60 + 2, scene.width // 60 + 2)).astype(np.float32)
    shade = np.array(Image.fromarray(small).resize((scene.width, scene.height), Image.Resampling.BICUBIC))
    return Image.fromarray(np.clip(pixels * (1 + 0.06 * shade[..., None]), 0, 255).astype(np.uint8))


def build_dataset(out_dir: Path, seed: int = 0) -> list[dict]:
    """Write the dataset and its level-3 masks; return one row per frame (frame_id, drive, split).

    `out_dir` must be absent or empty, so that no stale frame outlives a rebuild.
    """
    out_dir = empty_output_folder(out_dir)
    rows = []
    for drive_index, (drive, split) in enumerate(DRIVES):
        png = drive_index % 2 == 1  # Part I frames are PNG, Part II frames JPEG
        for number in range(FRAMES_PER_DRIVE):
            rng = np.random.default_rng([seed, drive_index, number])
            width, height = SIZES[(drive_index + number) % len(SIZES)]
            scene = draw_scene(rng, width, height, mirrored=bool(rng.random() < 0.5))
            img_id = f"{int(drive) * 1000 + number:06d}"
            gt = out_dir / "gtFine" / split / drive / f"{img_id}{POLYGONS_SUFFIX}"
            gt.parent.mkdir(parents=True, exist_ok=True)
            gt.write_text(json.dumps(annotation(scene), indent=1) + "\n", encoding="utf-8")
            image = out_dir / "leftImg8bit" / split / drive / f"{img_id}_leftImg8bit.{'png' if png else 'jpg'}"
            image.parent.mkdir(parents=True, exist_ok=True)
            if png:
                render(scene, textured=False).save(image, format="PNG")
            else:
                render(scene, textured=True).save(image, format="JPEG", **JPEG_OPTIONS)
            rows.append({"frame_id": f"{drive}/{img_id}", "drive": drive, "split": split})
    write_masks(out_dir)
    return rows
