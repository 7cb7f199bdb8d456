"""Files segbench writes and reads: atomic output (every file appears complete or not at all),
JSON documents, a file's SHA-256."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import SegbenchError
from .oserrors import file_error, file_problem

BLOCK = 1 << 20  # 1 MiB: how much of a file is hashed at a time


def partial_path(path: Path) -> Path:
    """Where `path` is written before it is renamed into place."""
    return path.with_name(path.name + ".partial")


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it into place only if the block succeeds."""
    path = Path(path)
    partial = partial_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        yield partial
        partial.replace(path)
    except OSError as exc:
        raise file_error(exc, path, doing="write") from None
    finally:
        discard(partial)


def discard(path: Path) -> None:
    """Remove a partial file if it is there; a folder that cannot be written has none to remove."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` (UTF-8, '\\n' line ends) to `path` atomically."""
    with atomic_path(path) as partial:
        partial.write_text(text, encoding="utf-8", newline="\n")


def atomic_write_texts(texts: Mapping[Path, str]) -> None:
    """Write several files as one set: all are written beside their targets first, then renamed
    into place, the files they replace kept aside until every rename succeeded, so a failure
    leaves each target as it was."""
    partials = {Path(path): partial_path(Path(path)) for path in texts}
    placed: list[tuple[Path, Path | None]] = []  # (target, the earlier file kept aside or None)
    try:
        for path, partial in partials.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(texts[path], encoding="utf-8", newline="\n")
        for path, partial in partials.items():
            earlier = path.with_name(path.name + ".earlier") if path.is_file() else None
            if earlier is not None:
                path.replace(earlier)
            try:
                partial.replace(path)
            except OSError:
                if earlier is not None:
                    earlier.replace(path)
                raise
            placed.append((path, earlier))
    except OSError as exc:
        for path, earlier in reversed(placed):
            if earlier is not None:
                earlier.replace(path)
            else:
                discard(path)
        placed.clear()
        where = exc.filename or next(iter(partials))
        raise SegbenchError(f"{file_problem(exc, where, doing='write')}; none of {sorted(map(str, texts))} was written") from None
    finally:
        for partial in partials.values():
            discard(partial)
        for _, earlier in placed:
            if earlier is not None:
                discard(earlier)


def write_text(path: Path, text: str) -> None:
    atomic_write_text(path, text)


def write_json(path: Path, document: Any) -> None:
    """Write `document` as indented UTF-8 JSON with a trailing newline, atomically."""
    atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def read_bounded(path: Path, limit: int) -> bytes:
    """A file's bytes, refused (naming it) when it holds more than `limit`: read no further than
    that, so a huge file (or a device that never ends) costs no more memory. OSErrors are the
    caller's to word (with the role of the file: oserrors.file_error)."""
    with open(path, "rb") as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise SegbenchError(f"{path}: more than the limit of {limit} bytes")
    return data


def read_json(path: Path, what: str = "file") -> Any:
    """A JSON document; `what` names it in the errors (e.g. "frame index (written by ...)")."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise file_error(exc, path, what) from None
    except json.JSONDecodeError as exc:
        raise SegbenchError(f"{path}: not JSON ({exc})") from None


def read_json_fields(path: Path, fields: Sequence[str]) -> dict[str, Any]:
    """A JSON object that must have `fields`; the missing ones are named."""
    document = read_json(path)
    if not isinstance(document, dict):
        raise SegbenchError(f"{path}: expected a JSON object, got {type(document).__name__}")
    missing = [f for f in fields if f not in document]
    if missing:
        raise SegbenchError(f"{path}: missing field(s) {missing}")
    return document


def write_csv_rows(path: Path, rows: list[dict]) -> None:
    """Rows as CSV, the columns in order of first appearance; None is written as an empty cell."""
    out = io.StringIO()
    names = list(dict.fromkeys(k for row in rows for k in row))
    writer = csv.DictWriter(out, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if row.get(k) is None else row.get(k) for k in names} for row in rows)
    atomic_write_text(path, out.getvalue())


def sha256_file(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes, read in blocks of BLOCK bytes."""
    path = Path(path)
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            while block := stream.read(BLOCK):
                digest.update(block)
    except OSError as exc:
        raise file_error(exc, path) from None
    return digest.hexdigest()


def md5_file(path: Path) -> str:
    """MD5 (hex) of a file's bytes, as DVC 3 hashes a file (its pins, its listings of a tree)."""
    digest = hashlib.md5(usedforsecurity=False)
    with Path(path).open("rb") as stream:
        while block := stream.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()
