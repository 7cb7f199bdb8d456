"""A CSV file that lists a dataset's frames (Painting Vision's frames.csv, EasyPortrait's meta.csv),
parsed strictly: every problem is a SegbenchError naming the file and the line.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import SegbenchError


@dataclass(frozen=True)
class Columns:
    """Which columns hold the frame id, its group and its split."""

    frame_id: str
    group: str
    split: str


@dataclass(frozen=True)
class ListedFrame:
    line: int
    frame_id: str
    group: str
    split: str


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


def read_rows(path: Path, needed_by: str) -> list[tuple[int, list[str]]]:
    """(line number, fields) for every non-blank row, the header first."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise SegbenchError(f"{path}: file not found ({needed_by})") from None
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
    return rows


def read_listing(
    path: Path,
    columns: Columns,
    splits: Sequence[str],
    needed_by: str,
    check_header: Callable[[tuple[str, ...]], str | None],
    frame_id_of: Callable[[str], str] = lambda value: value,
) -> list[ListedFrame]:
    """The frames a listing names, in file order.

    `check_header` says what is wrong with a header (None when it is fine); `frame_id_of` turns
    the frame-id column's value into the frame id. Raises SegbenchError naming the file and line
    for a wrong header, a wrong number of columns, an empty, unsafe or duplicate frame id, an
    empty group or split, a value with surrounding white space, or a split not in `splits`.
    """
    rows = read_rows(path, needed_by)
    if not rows:
        raise SegbenchError(f"{path}: empty file; expected the header {check_header(())}")
    line, header = rows[0]
    problem = check_header(tuple(header))
    if problem:
        raise SegbenchError(f"{path}: line {line}: header is '{','.join(header)}', expected {problem}")
    position = {name: header.index(name) for name in (columns.frame_id, columns.group, columns.split)}
    allowed = list(splits)
    first_line: dict[str, int] = {}
    listed: list[ListedFrame] = []
    for line, fields in rows[1:]:
        where = f"{path}: line {line}"
        if len(fields) != len(header):
            raise SegbenchError(f"{where}: {len(fields)} columns, expected {len(header)} ({','.join(header)})")
        frame_id = frame_id_of(fields[position[columns.frame_id]])
        group, split = fields[position[columns.group]], fields[position[columns.split]]
        reason = unsafe_stem_reason(frame_id)
        if reason == "is empty":
            raise SegbenchError(f"{where}: {columns.frame_id} is empty")
        if reason:
            raise SegbenchError(f"{where}: {columns.frame_id} {frame_id!r} {reason}; it must be a safe file name stem")
        if frame_id in first_line:
            raise SegbenchError(
                f"{where}: duplicate {columns.frame_id} {frame_id!r} (first listed at line {first_line[frame_id]})"
            )
        for name, value in ((columns.group, group), (columns.split, split)):
            if not value:
                raise SegbenchError(f"{where}: {name} is empty (frame {frame_id!r})")
            if value != value.strip():
                raise SegbenchError(f"{where}: {name} {value!r} has leading or trailing white space (frame {frame_id!r})")
        if split not in allowed:
            raise SegbenchError(f"{where}: {columns.split} {split!r} is not one of {allowed} (frame {frame_id!r})")
        first_line[frame_id] = line
        listed.append(ListedFrame(line, frame_id, group, split))
    return listed
