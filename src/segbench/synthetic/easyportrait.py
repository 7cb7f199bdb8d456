"""A procedural, offline generator of a small dataset in the EasyPortrait on-disk format, laid
out as either release ships.

    <out>/images/<split>/<name>.jpg          RGB portrait (JPEG)
    <out>/annotations/<split>/<name>.png     'L' mask: 0 background, 1 person, 2 skin,
                                             3/4 left/right brow, 5/6 left/right eye, 7 lips, 8 teeth
    <out>/annotations/meta.zip               1.0 (the default): meta.csv with
                                             attachment_id,user_id,data_hash,width,height,brightness,train,test,valid
    <out>/meta.zip                           2.0: meta.csv with image_name,user_id,height,width,set,brightness

Each user is one drawn person (skin tone, hair, clothes, backdrop) photographed a few times with
another pose, scale and framing; users are split, never images. As in the real masks, person
covers only what no face class takes (hair, neck, clothes), and "left" is the image's left.
The scene is lit from the image's left. Every random draw comes from a numpy Generator seeded by
(seed, user, frame).
"""

from __future__ import annotations

import colorsys
import hashlib
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from . import empty_output_folder

SIZES = ((960, 1280), (1280, 960))  # (width, height): portrait and landscape, as phones shoot
# (user index, split): eight users, split by user.
USERS = ((0, "train"), (1, "train"), (2, "train"), (3, "train"), (4, "train"), (5, "val"), (6, "test"), (7, "test"))
FRAMES_PER_USER = 2
JPEG_OPTIONS = {"quality": 88, "subsampling": 2, "optimize": False}
# Each release's meta file: where the zip goes, its columns, and a frame's value in each column.
META = {
    "1.0": (Path("annotations/meta.zip"),
            ("attachment_id", "user_id", "data_hash", "width", "height", "brightness", "train", "test", "valid")),
    "2.0": (Path("meta.zip"), ("image_name", "user_id", "height", "width", "set", "brightness")),
}
SPLIT_FLAGS = {"train": "train", "test": "test", "valid": "val"}  # 1.0's boolean columns
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # a fixed member date: the same zip bytes on every rebuild
BACKGROUND, PERSON, SKIN, LEFT_BROW, RIGHT_BROW, LEFT_EYE, RIGHT_EYE, LIPS, TEETH = range(9)
ELLIPSE_CORNERS = 36

Point = tuple[float, float]


@dataclass(frozen=True)
class Look:
    """What stays the same across one user's photos."""

    skin: tuple[int, int, int]
    hair: tuple[int, int, int]
    clothes: tuple[int, int, int]
    backdrop: tuple[int, int, int]
    lips: tuple[int, int, int]
    iris: tuple[int, int, int]


def _rgb(hue: float, saturation: float, value: float) -> tuple[int, int, int]:
    return tuple(int(round(c * 255)) for c in colorsys.hsv_to_rgb(hue % 1.0, saturation, value))


def random_look(rng: np.random.Generator) -> Look:
    return Look(
        skin=_rgb(rng.uniform(0.04, 0.09), rng.uniform(0.25, 0.55), rng.uniform(0.45, 0.95)),
        hair=_rgb(rng.uniform(0.02, 0.12), rng.uniform(0.3, 0.8), rng.uniform(0.08, 0.55)),
        clothes=_rgb(rng.random(), rng.uniform(0.3, 0.9), rng.uniform(0.25, 0.9)),
        backdrop=_rgb(rng.random(), rng.uniform(0.05, 0.35), rng.uniform(0.55, 0.95)),
        lips=_rgb(rng.uniform(-0.03, 0.02), rng.uniform(0.45, 0.75), rng.uniform(0.45, 0.8)),
        iris=_rgb(rng.uniform(0.05, 0.6), rng.uniform(0.4, 0.8), rng.uniform(0.2, 0.5)),
    )


def _ellipse(cx: float, cy: float, rx: float, ry: float, tilt: float = 0.0) -> list[Point]:
    points = []
    for k in range(ELLIPSE_CORNERS):
        a = 2 * math.pi * k / ELLIPSE_CORNERS  # math, not numpy: the same bits on every CPU
        x, y = rx * math.cos(a), ry * math.sin(a)
        points.append((cx + x * math.cos(tilt) - y * math.sin(tilt), cy + x * math.sin(tilt) + y * math.cos(tilt)))
    return points


def _brow(cx: float, cy: float, half: float, thick: float, tilt: float) -> list[Point]:
    """An arched band, thicker in the middle."""
    top = [(cx + half * t, cy - thick * (1 - t * t) - 0.25 * half * (1 - t * t) + tilt * half * t) for t in np.linspace(-1, 1, 9)]
    bottom = [(x, y + thick * (0.4 + 0.6 * (1 - ((x - cx) / half) ** 2))) for x, y in reversed(top)]
    return [(float(x), float(y)) for x, y in top + bottom]


def draw_portrait(rng: np.random.Generator, look: Look, width: int, height: int) -> tuple[Image.Image, Image.Image]:
    """(RGB image, 'L' mask) of one photo: the same shapes drawn into both, back to front."""
    image = Image.new("RGB", (width, height), look.backdrop)
    mask = Image.new("L", (width, height), BACKGROUND)
    paint, label = ImageDraw.Draw(image), ImageDraw.Draw(mask)

    def shape(points: list[Point], colour: tuple[int, int, int], value: int) -> None:
        paint.polygon(points, fill=colour)
        label.polygon(points, fill=value)

    scale = min(width, height) * rng.uniform(0.22, 0.30)  # the face's half-height
    cx = width * rng.uniform(0.38, 0.62)
    cy = height * rng.uniform(0.36, 0.46)
    tilt = rng.uniform(-0.12, 0.12)
    rx, ry = 0.72 * scale, scale
    shoulders = cy + 1.45 * scale
    shape([(cx - 2.2 * scale, height), (cx - 1.9 * scale, shoulders), (cx + 1.9 * scale, shoulders), (cx + 2.2 * scale, height)],
          look.clothes, PERSON)
    shape([(cx - 0.35 * scale, cy + 0.6 * scale), (cx + 0.35 * scale, cy + 0.6 * scale),
           (cx + 0.4 * scale, shoulders + 0.1 * scale), (cx - 0.4 * scale, shoulders + 0.1 * scale)],
          tuple(int(c * 0.85) for c in look.skin), PERSON)  # the neck is person, not skin
    shape(_ellipse(cx, cy - 0.18 * scale, 1.05 * rx * rng.uniform(1.0, 1.2), 1.1 * ry, tilt), look.hair, PERSON)
    shape(_ellipse(cx, cy, rx, ry, tilt), look.skin, SKIN)
    shape(_ellipse(cx - 0.98 * rx, cy, 0.12 * scale, 0.22 * scale), look.skin, SKIN)  # ears
    shape(_ellipse(cx + 0.98 * rx, cy, 0.12 * scale, 0.22 * scale), look.skin, SKIN)

    def at(dx: float, dy: float) -> Point:  # a point of the face, turned with it
        return (cx + dx * math.cos(tilt) - dy * math.sin(tilt), cy + dx * math.sin(tilt) + dy * math.cos(tilt))

    brow = tuple(int(c * 0.6) for c in look.hair)
    for side, brow_value, eye_value in ((-1, LEFT_BROW, LEFT_EYE), (1, RIGHT_BROW, RIGHT_EYE)):
        ex, ey = at(side * 0.36 * scale, -0.12 * scale)
        bx, by = at(side * 0.36 * scale, -0.36 * scale)
        shape(_brow(bx, by, 0.2 * scale, 0.06 * scale, tilt), brow, brow_value)
        shape(_ellipse(ex, ey, 0.16 * scale, 0.075 * scale, tilt), (240, 240, 236), eye_value)
        paint.ellipse((ex - 0.06 * scale, ey - 0.06 * scale, ex + 0.06 * scale, ey + 0.06 * scale), fill=look.iris)
    mx, my = at(0.0, 0.5 * scale)
    open_mouth = rng.random() < 0.5
    shape(_ellipse(mx, my, 0.26 * scale, (0.12 if open_mouth else 0.07) * scale, tilt), look.lips, LIPS)
    if open_mouth:
        shape(_ellipse(mx, my - 0.015 * scale, 0.17 * scale, 0.045 * scale, tilt), (228, 218, 192), TEETH)  # ivory
    pixels = np.asarray(image, dtype=np.float32)
    # A key light from the image's left: the left half of the face is lit, the right half in
    # shade, so a small network can tell a left eye from a right one without seeing the whole face.
    strength, reach = rng.uniform(0.15, 0.25), 0.25 * scale
    # math.tanh, not numpy's: numpy's SIMD loops may differ in the last bits from CPU to CPU.
    light = np.array([1 + strength * math.tanh((cx - x) / reach) for x in range(width)], dtype=np.float32)[None, :, None]
    noise = rng.normal(0, 1, (height // 40 + 2, width // 40 + 2)).astype(np.float32)
    shade = np.array(Image.fromarray(noise).resize((width, height), Image.Resampling.BICUBIC))[..., None]
    rendered = np.clip(pixels * light * (1 + 0.04 * shade), 0, 255).astype(np.uint8)
    return Image.fromarray(rendered), mask


def _meta_value(row: dict, column: str) -> str:
    if column in SPLIT_FLAGS:
        return str(row["set"] == SPLIT_FLAGS[column])  # pandas writes booleans as True / False
    return str(row[{"attachment_id": "image_name"}.get(column, column)])


def write_meta(out_dir: Path, rows: list[dict], version: str = "1.0") -> Path:
    """The release's meta.zip (one member, meta.csv) listing `rows`; returns its path."""
    relative, columns = META[version]
    lines = [",".join(columns)] + [",".join(_meta_value(row, c) for c in columns) for row in rows]
    member = zipfile.ZipInfo("meta.csv", date_time=ZIP_DATE)
    member.compress_type = zipfile.ZIP_DEFLATED
    path = Path(out_dir) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, "\n".join(lines) + "\n")
    return path


def build_dataset(out_dir: Path, seed: int = 0, version: str = "1.0") -> list[dict]:
    """Write the dataset with the meta file of release `version`; return its frames' rows as dicts
    (image_name, user_id, height, width, set, brightness, data_hash), sorted by image_name.

    `out_dir` must be absent or empty, so that no stale frame outlives a rebuild.
    """
    if version not in META:
        raise ValueError(f"EasyPortrait release {version!r}: expected one of {sorted(META)}")
    out_dir = empty_output_folder(out_dir)
    rows = []
    for user, split in USERS:
        user_rng = np.random.default_rng([seed, user])
        look = random_look(user_rng)
        user_id = user_rng.bytes(8).hex()
        for number in range(FRAMES_PER_USER):
            rng = np.random.default_rng([seed, user, number + 1])
            width, height = SIZES[(user + number) % len(SIZES)]
            image, mask = draw_portrait(rng, look, width, height)
            name = rng.bytes(8).hex()
            for folder, picture, options in (("images", image, {"format": "JPEG", **JPEG_OPTIONS}),
                                             ("annotations", mask, {"format": "PNG"})):
                path = out_dir / folder / split / f"{name}.{'jpg' if folder == 'images' else 'png'}"
                path.parent.mkdir(parents=True, exist_ok=True)
                picture.save(path, **options)
            brightness = float(np.asarray(image.convert("L"), dtype=np.float64).mean())
            rows.append({"image_name": name, "user_id": user_id, "height": height, "width": width, "set": split,
                         "brightness": f"{brightness:.2f}",
                         "data_hash": hashlib.sha256((out_dir / "images" / split / f"{name}.jpg").read_bytes()).hexdigest()[:16]})
    rows.sort(key=lambda row: row["image_name"])
    write_meta(out_dir, rows, version)
    return rows
