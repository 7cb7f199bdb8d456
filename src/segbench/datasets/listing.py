"""A CSV file that lists a dataset's frames (Painting Vision's frames.csv, EasyPortrait's meta.csv),
parsed strictly: every problem is a SegbenchError naming the file and the line.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SegbenchError
from ..io.fileio import read_bounded
from ..io.limits import LIMITS
from ..io.oserrors import file_error, file_problem


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
    meta: dict[str, str] = field(default_factory=dict)  # the row's other columns (Frame.meta)


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


def read_text(path: Path, needed_by: str) -> str:
    """The listing file's text (UTF-8, a byte-order mark dropped), at most LIMITS.max_text_bytes."""
    try:
        return read_bounded(path, LIMITS.max_text_bytes).decode("utf-8-sig")
    except FileNotFoundError as exc:
        raise SegbenchError(f"{file_problem(exc, path)} ({needed_by})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise file_error(exc, path) from None


def parse_rows(text: str, source: str) -> list[tuple[int, list[str]]]:
    """(line number, fields) for every non-blank row, the header first; `source` names the file."""
    reader = csv.reader(text.splitlines(keepends=True), strict=True)
    rows: list[tuple[int, list[str]]] = []
    try:
        for fields in reader:
            if fields:  # a blank line carries nothing
                rows.append((reader.line_num, fields))
    except csv.Error as exc:
        raise SegbenchError(f"{source}: line {reader.line_num}: malformed CSV ({exc})") from None
    return rows


def read_listing(
    path: Path,
    columns: Columns,
    splits: Sequence[str],
    needed_by: str,
    check_header: Callable[[tuple[str, ...]], str | None],
) -> list[ListedFrame]:
    """The frames the CSV file at `path` names, in file order (see listed_frames)."""
    return listed_frames(str(path), parse_rows(read_text(path, needed_by), str(path)), columns, splits, check_header)


def listed_frames(
    source: str,
    rows: list[tuple[int, list[str]]],
    columns: Columns,
    splits: Sequence[str],
    check_header: Callable[[tuple[str, ...]], str | None],
    frame_id_of: Callable[[str], str] = lambda value: value,
    split_of: Callable[[dict[str, str]], str] | None = None,
    structural: Sequence[str] = (),
) -> list[ListedFrame]:
    """The frames the parsed rows of a listing name, in file order.

    `check_header` says what is wrong with a header (None when it is fine); `frame_id_of` turns
    the frame-id column's value into the frame id; `split_of`, when given, derives the split from
    a row's values by column name (raising ValueError saying what is wrong) instead of reading
    `columns.split`. A row's columns other than the frame id, group, split and `structural` ones
    (those `split_of` reads) are its metadata (ListedFrame.meta; an unnamed column, such as a
    pandas index, is not). Raises SegbenchError naming `source` and the line for a wrong header, a wrong
    number of columns, an empty, unsafe or duplicate frame id, an empty group or split, a group,
    split or metadata value with surrounding white space, or a split not in `splits`.
    """
    if not rows:
        raise SegbenchError(f"{source}: empty file; expected the header {check_header(())}")
    line, header = rows[0]
    problem = check_header(tuple(header))
    if problem:
        raise SegbenchError(f"{source}: line {line}: header is '{','.join(header)}', expected {problem}")
    allowed = list(splits)
    skipped = {columns.frame_id, columns.group, columns.split, *structural}
    first_line: dict[str, int] = {}
    listed: list[ListedFrame] = []
    for line, fields in rows[1:]:
        where = f"{source}: line {line}"
        if len(fields) != len(header):
            raise SegbenchError(f"{where}: {len(fields)} columns, expected {len(header)} ({','.join(header)})")
        values = dict(zip(header, fields))
        frame_id = frame_id_of(values[columns.frame_id])
        reason = unsafe_stem_reason(frame_id)
        if reason == "is empty":
            raise SegbenchError(f"{where}: {columns.frame_id} is empty")
        if reason:
            raise SegbenchError(f"{where}: {columns.frame_id} {frame_id!r} {reason}; it must be a safe file name stem")
        if frame_id in first_line:
            raise SegbenchError(
                f"{where}: duplicate {columns.frame_id} {frame_id!r} (first listed at line {first_line[frame_id]})"
            )
        if split_of is None:
            split = values[columns.split]
        else:
            try:
                split = split_of(values)
            except ValueError as exc:
                raise SegbenchError(f"{where}: {exc} (frame {frame_id!r})") from None
        group = values[columns.group]
        meta = {name: value for name, value in values.items() if name and name not in skipped}
        # Metadata as strictly as the group and split: 'lit ' would make a slice of its own beside 'lit'.
        for name, value in ((columns.group, group), (columns.split, split), *meta.items()):
            if not value and name in (columns.group, columns.split):
                raise SegbenchError(f"{where}: {name} is empty (frame {frame_id!r})")
            if value != value.strip():
                raise SegbenchError(f"{where}: {name} {value!r} has leading or trailing white space (frame {frame_id!r})")
        if split not in allowed:
            raise SegbenchError(f"{where}: {columns.split} {split!r} is not one of {allowed} (frame {frame_id!r})")
        first_line[frame_id] = line
        listed.append(ListedFrame(line, frame_id, group, split, meta))
    return listed
