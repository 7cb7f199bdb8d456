"""Real file copies for the benchmarks' repeated frames: never hard links, which the intake refuses."""

from __future__ import annotations

import os
from pathlib import Path


def single_file(path: Path) -> bool:
    """A regular file with one name: what the predictions intake accepts (a hard link it refuses)."""
    return path.is_file() and path.stat().st_nlink == 1


def copy_file(source: Path, target: Path) -> None:
    """A copy with its own inode; copy_file_range copies inside the kernel, the bytes never pass
    through Python."""
    size = source.stat().st_size
    with open(source, "rb") as src, open(target, "wb") as dst:
        copied = 0
        while copied < size:
            step = os.copy_file_range(src.fileno(), dst.fileno(), size - copied)
            if step == 0:
                raise OSError(f"{source}: the copy stopped at {copied} of {size} bytes")
            copied += step
