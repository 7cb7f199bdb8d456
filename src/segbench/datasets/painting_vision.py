"""Reader for the Painting Vision on-disk format.

    <data>/images/<frame_id>.jpg|.png   RGB frame
    <data>/labels/<frame_id>.png        single-channel uint8 label
    <data>/frames.csv                   frame_id,wall_id,split

The reader parses frames.csv strictly and builds Frame records (group_id = wall_id). It never
opens images or labels: a missing, extra or broken file is a finding of the audit, not a reason
to stop reading. It only decides which file a frame's image is (the .jpg or the .png that exists).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from ..errors import SegbenchError
from .base import Frame

FRAMES_CSV = "frames.csv"
IMAGES_DIR = "images"
LABELS_DIR = "labels"
HEADER = ("frame_id", "wall_id", "split")
IMAGE_SUFFIXES = (".jpg", ".png")  # the first is the default when neither file exists
LABEL_SUFFIX = ".png"


def unsafe_stem_reason(frame_id: str) -> str | None:
    """Why `frame_id` cannot be a file stem, or None when it can."""
    if not frame_id:
        return "is empty"
    if "/" in frame_id or "\\" in frame_id:
        return "contains a path separator"
    if frame_id.startswith("."):
        return "starts with '.'"
    if any(ch.isspace() or not ch.isprintable() for ch in frame_id):
        return "contains white space or a control character"
    return None


def image_candidates(data_dir: Path, frame_id: str) -> list[Path]:
    """Every path the frame's image may have, in order of preference."""
    return [data_dir / IMAGES_DIR / f"{frame_id}{suffix}" for suffix in IMAGE_SUFFIXES]


def existing_images(data_dir: Path, frame_id: str) -> list[Path]:
    """The candidate image files of a frame that exist (two of them is an audit error)."""
    return [p for p in image_candidates(data_dir, frame_id) if p.is_file()]


def label_path(data_dir: Path, frame_id: str) -> Path:
    return data_dir / LABELS_DIR / f"{frame_id}{LABEL_SUFFIX}"


def _image_path(data_dir: Path, frame_id: str) -> Path:
    found = existing_images(data_dir, frame_id)
    return found[0] if found else image_candidates(data_dir, frame_id)[0]


def _read_rows(path: Path) -> list[tuple[int, list[str]]]:
    """(line number, fields) for every non-blank row after checking the header."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise SegbenchError(f"{path}: file not found (every Painting Vision dataset needs {FRAMES_CSV})") from None
    except UnicodeDecodeError as exc:
        raise SegbenchError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise SegbenchError(f"{path}: cannot read: {exc.strerror}") from None
    reader = csv.reader(text.splitlines(keepends=True), strict=True)
    rows: list[tuple[int, list[str]]] = []
    try:
        for fields in reader:
            if fields:  # a blank line carries nothing
                rows.append((reader.line_num, fields))
    except csv.Error as exc:
        raise SegbenchError(f"{path}: line {reader.line_num}: malformed CSV ({exc})") from None
    if not rows:
        raise SegbenchError(f"{path}: empty file; expected the header '{','.join(HEADER)}'")
    line, header = rows[0]
    if tuple(header) != HEADER:
        raise SegbenchError(f"{path}: line {line}: header is '{','.join(header)}', expected '{','.join(HEADER)}'")
    return rows[1:]


def read_frames(data_dir: Path, splits: Sequence[str]) -> list[Frame]:
    """Every frame listed in <data_dir>/frames.csv, sorted by frame_id.

    Raises SegbenchError naming the file and line for a missing data folder or frames.csv, a
    wrong header, a wrong number of columns, an empty, unsafe or duplicate frame_id, an empty
    wall_id, a value with surrounding white space, or a split not in `splits`.
    """
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise SegbenchError(f"{data_dir}: data folder not found")
    path = data_dir / FRAMES_CSV
    allowed = list(splits)
    first_line: dict[str, int] = {}
    frames: list[Frame] = []
    for line, fields in _read_rows(path):
        where = f"{path}: line {line}"
        if len(fields) != len(HEADER):
            raise SegbenchError(f"{where}: {len(fields)} columns, expected {len(HEADER)} ({','.join(HEADER)})")
        frame_id, wall_id, split = fields
        reason = unsafe_stem_reason(frame_id)
        if reason == "is empty":
            raise SegbenchError(f"{where}: frame_id is empty")
        if reason:
            raise SegbenchError(f"{where}: frame_id {frame_id!r} {reason}; it must be a safe file name stem")
        if frame_id in first_line:
            raise SegbenchError(
                f"{where}: duplicate frame_id {frame_id!r} (first listed at line {first_line[frame_id]})"
            )
        for name, value in (("wall_id", wall_id), ("split", split)):
            if not value:
                raise SegbenchError(f"{where}: {name} is empty (frame {frame_id!r})")
            if value != value.strip():
                raise SegbenchError(
                    f"{where}: {name} {value!r} has leading or trailing white space (frame {frame_id!r})"
                )
        if split not in allowed:
            raise SegbenchError(f"{where}: split {split!r} is not one of {allowed} (frame {frame_id!r})")
        first_line[frame_id] = line
        frames.append(
            Frame(
                frame_id=frame_id,
                group_id=wall_id,
                split=split,
                image=_image_path(data_dir, frame_id),
                label=label_path(data_dir, frame_id),
            )
        )
    return sorted(frames, key=lambda f: f.frame_id)


def list_unlisted_files(data_dir: Path, frames: Sequence[Frame]) -> list[Path]:
    """Entries of images/ and labels/ that belong to no listed frame, sorted.

    A frame owns images/<id>.jpg, images/<id>.png and labels/<id>.png. Anything else there (other
    suffixes, sub-folders, hidden files) is reported: the audit treats it as an error.
    """
    data_dir = Path(data_dir)
    owned: set[Path] = set()
    for frame in frames:
        owned.update(image_candidates(data_dir, frame.frame_id))
        owned.add(label_path(data_dir, frame.frame_id))
    unlisted: list[Path] = []
    for sub in (IMAGES_DIR, LABELS_DIR):
        folder = data_dir / sub
        if folder.is_dir():
            unlisted.extend(p for p in folder.iterdir() if p not in owned)
    return sorted(unlisted)
