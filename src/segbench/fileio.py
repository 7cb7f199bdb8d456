"""Atomic output: every file segbench writes appears complete or not at all."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import SegbenchError


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
        raise SegbenchError(f"{path}: cannot write: {exc.strerror}") from None
    finally:
        partial.unlink(missing_ok=True)


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` (UTF-8, '\\n' line ends) to `path` atomically."""
    with atomic_path(path) as partial:
        partial.write_text(text, encoding="utf-8", newline="\n")
