"""Reader for the EasyPortrait on-disk format.

    <data>/images/<split>/<image_name>.jpg        RGB portrait
    <data>/annotations/<split>/<image_name>.png   single-channel uint8 mask, ids 0..8 (255 ignored)
    <data>/meta.csv                               the 2.0 meta columns:
                                                  image_name,user_id,height,width,set,brightness

meta.csv lists the frames: frame_id = image_name (the file stem; a trailing ".jpg" is accepted
and dropped), group_id = user_id (users must not cross splits), split = set. The columns may come
in any order and extra columns (e.g. a pandas index) are allowed. Like the other readers this
one never opens images or masks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import SegbenchError
from .base import Frame
from .format import DatasetFormat
from .listing import Columns, read_listing

META_CSV = "meta.csv"
IMAGES_DIR = "images"
LABELS_DIR = "annotations"
META_COLUMNS = ("image_name", "user_id", "height", "width", "set", "brightness")
COLUMNS = Columns(frame_id="image_name", group="user_id", split="set")
IMAGE_SUFFIX = ".jpg"
LABEL_SUFFIX = ".png"


def _check_header(header: tuple[str, ...]) -> str | None:
    missing = [c for c in META_COLUMNS if c not in header]
    return f"the columns {','.join(META_COLUMNS)} (missing: {','.join(missing)})" if missing else None


def _frame_id(image_name: str) -> str:
    return image_name.removesuffix(IMAGE_SUFFIX)


def _image(data_dir: Path, split: str, frame_id: str) -> Path:
    return data_dir / IMAGES_DIR / split / f"{frame_id}{IMAGE_SUFFIX}"


def _label(data_dir: Path, split: str, frame_id: str) -> Path:
    return data_dir / LABELS_DIR / split / f"{frame_id}{LABEL_SUFFIX}"


def read_frames(data_dir: Path, splits: Sequence[str]) -> list[Frame]:
    """Every image meta.csv lists, sorted by frame_id."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise SegbenchError(f"{data_dir}: data folder not found")
    listed = read_listing(
        data_dir / META_CSV, COLUMNS, splits, f"every EasyPortrait dataset needs {META_CSV}", _check_header, _frame_id
    )
    frames = [
        Frame(
            frame_id=row.frame_id,
            group_id=row.group,
            split=row.split,
            image=_image(data_dir, row.split, row.frame_id),
            label=_label(data_dir, row.split, row.frame_id),
        )
        for row in listed
    ]
    return sorted(frames, key=lambda f: f.frame_id)


def frame_image_candidates(data_dir: Path, frame: Frame) -> list[Path]:
    return [_image(Path(data_dir), frame.split, frame.frame_id)]


def list_unlisted_files(data_dir: Path, frames: Sequence[Frame]) -> list[Path]:
    """Entries of images/ and annotations/ (and of their split folders) that belong to no listed frame."""
    data_dir = Path(data_dir)
    owned = {p for f in frames for p in (f.image, f.label)}
    split_dirs = {p.parent for p in owned}
    unlisted: list[Path] = []
    for sub in (IMAGES_DIR, LABELS_DIR):
        folder = data_dir / sub
        if not folder.is_dir():
            continue
        for entry in folder.iterdir():
            if entry not in split_dirs:
                unlisted.append(entry)
            else:
                unlisted.extend(p for p in entry.iterdir() if p not in owned)
    return sorted(unlisted)


def index_files(data_dir: Path, labels: Sequence[Path]) -> list[Path]:
    return [Path(data_dir) / META_CSV]


FORMAT = DatasetFormat(
    name="easyportrait",
    listing=META_CSV,
    read_frames=read_frames,
    image_candidates=frame_image_candidates,
    list_unlisted_files=list_unlisted_files,
    index_files=index_files,
)
