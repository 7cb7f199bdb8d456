"""Small EasyPortrait datasets built on disk for tests, laid out as each release ships:

    1.0  images/<split>/*.jpg, annotations/<split>/*.png, annotations/meta.zip (member meta.csv)
    2.0  the same folders, meta.zip beside them

with noise images and hand-made masks; and the downloads themselves (download_zips), zipped as
the public README's "Structure" shows them."""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

import numpy as np
from PIL import Image

FACE = np.array(  # 6 x 6, every class once at least
    [
        [0, 0, 1, 1, 0, 0],
        [0, 1, 2, 2, 1, 0],
        [1, 3, 2, 2, 4, 1],
        [1, 5, 2, 2, 6, 1],
        [1, 2, 7, 8, 2, 1],
        [1, 1, 1, 1, 1, 1],
    ],
    dtype=np.uint8,
)
COLUMNS = {
    "1.0": ("attachment_id", "user_id", "data_hash", "width", "height", "brightness", "train", "test", "valid"),
    "2.0": ("image_name", "user_id", "height", "width", "set", "brightness"),
}
META_ZIP = {"1.0": Path("annotations/meta.zip"), "2.0": Path("meta.zip")}
FLAG_OF = {"train": "train", "test": "test", "valid": "val"}
# A clean download's rows (name, user_id, split): four users, each in one split.
CLEAN = [("a1", "u1", "train"), ("a2", "u1", "train"), ("b1", "u2", "val"), ("c1", "u3", "test"), ("d1", "u4", "test")]


def meta_text(rows, version: str = "1.0", columns=None) -> str:
    """The meta CSV of rows (name, user, split) in the release's columns (or `columns`)."""
    columns = columns or COLUMNS[version]
    lines = [",".join(columns)]
    for name, user, split in rows:
        values = {"attachment_id": name, "image_name": name, "user_id": user, "data_hash": "ab12", "width": "6",
                  "height": "6", "brightness": "0.5", "set": split,
                  **{flag: str(split == folder) for flag, folder in FLAG_OF.items()}}
        lines.append(",".join(values.get(c, "") for c in columns))
    return "\n".join(lines) + "\n"


def write_zip(path: Path, members: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return path


def write_files(data: Path, split: str, stem: str, mask: np.ndarray = FACE) -> None:
    rng = np.random.default_rng(zlib.crc32(stem.encode()))
    for folder, array, ext in (("images", rng.integers(0, 256, (*mask.shape, 3), dtype=np.uint8), "jpg"),
                               ("annotations", mask, "png")):
        path = data / folder / split / f"{stem}.{ext}"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(array).save(path)


def make_ep(tmp_path: Path, rows, version: str = "1.0", meta: str = "zip", masks=None, columns=None,
            top: str | None = None) -> Path:
    """The dataset folder (the download unpacked into tmp_path/ep, or into tmp_path/ep/<top>).

    rows: (name, user_id, split); meta "zip" as shipped, "csv" extracted beside where the zip was.
    """
    data = tmp_path / "ep"
    root = data / top if top else data
    for name, _user, split in rows:
        stem = name.removesuffix(".jpg")
        write_files(root, split, stem, (masks or {}).get(stem, FACE))
    text = meta_text(rows, version, columns)
    if meta == "zip":
        write_zip(root / META_ZIP[version], {"meta.csv": text})
    else:
        path = root / META_ZIP[version].with_suffix(".csv")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return data


def download_zips(tmp_path: Path, rows, version: str = "1.0") -> list[Path]:
    """The release's downloads in tmp_path, members as the README's "Structure" lists them (no top folder):

        images.zip        train/<name>.jpg, val/..., test/...
        annotations.zip   train/<name>.png, ...; 1.0 also meta.zip (member meta.csv)
        meta.zip          2.0 only: the meta file is a download of its own (member meta.csv)
    """
    tree = make_ep(tmp_path / "tree", rows, version)
    downloads = []
    for folder in (tree / "images", tree / "annotations"):
        downloads.append(tmp_path / f"{folder.name}.zip")
        with zipfile.ZipFile(downloads[-1], "w") as archive:
            for path in sorted(folder.rglob("*")):
                archive.write(path, path.relative_to(folder).as_posix())
    if version == "2.0":
        downloads.append((tree / "meta.zip").rename(tmp_path / "meta.zip"))
    return downloads
