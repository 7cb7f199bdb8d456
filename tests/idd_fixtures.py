"""Small IDD datasets built on disk for tests: hand-made polygon JSONs, noise images."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
from PIL import Image


def box(label: str, x0: float, y0: float, x1: float, y1: float, **extra) -> dict:
    return {"label": label, "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], **extra}


def write_polygons(data: Path, split: str, drive: str, img_id: str, objects: list[dict], size=(16, 12)) -> Path:
    path = data / "gtFine" / split / drive / f"{img_id}_gtFine_polygons.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"imgWidth": size[0], "imgHeight": size[1], "objects": objects}))
    return path


def write_image(data: Path, split: str, drive: str, img_id: str, size=(16, 12), ext: str = "png") -> Path:
    path = data / "leftImg8bit" / split / drive / f"{img_id}_leftImg8bit.{ext}"
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(zlib.crc32(f"{drive}/{img_id}".encode()))
    Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(path)
    return path


def scene(variant: int) -> list[dict]:
    """Road below, sky above, a car and a person: classes 0, 4, 9, 25 and void."""
    return [
        box("sky", 0, 0, 15, 5),
        box("road", 0, 6, 15, 11),
        box("car", 2 + variant, 7, 6 + variant, 10),
        box("person", 10, 3, 12, 9),
        box("ego vehicle", 0, 11, 15, 11),
    ]


def make_idd(tmp_path: Path, frames=(("train", "1", "000001"), ("train", "1", "000002"), ("val", "2", "000003"),
                                      ("test", "3", "000004"), ("test", "4", "000005"))) -> Path:
    """An IDD folder with one frame per (split, drive, img_id), masks drawn by segbench.protocols.idd.masks."""
    from segbench.protocols.idd.masks import write_masks

    data = tmp_path / "idd"
    for index, (split, drive, img_id) in enumerate(frames):
        write_polygons(data, split, drive, img_id, scene(index))
        write_image(data, split, drive, img_id)
    write_masks(data)
    return data
