"""Predictions in a folder: only regular files, named as the frames' predictions, in the folders
the naming uses; links, devices, pipes and nested folders refused, each named."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.limits import LIMITS
from ..io.problems import Problems
from .predictions import Predictions, folders_of


def kind_problem(mode: int, nlink: int) -> str | None:
    """Why a folder entry of this lstat mode is not a plain prediction file, or None."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a nested folder"
    if not stat.S_ISREG(mode):
        return "not a regular file (a device, pipe or socket)"
    if nlink > 1:
        return f"a hard link ({nlink} names: it may be another file under this name)"
    return None


class FolderPredictions(Predictions):
    """Masks in a folder; with `exact` the whole tree is listed first, else the frames' entries."""

    def __init__(self, source: Path, frames: Sequence[Frame], exact: bool, problems: Problems | None = None) -> None:
        super().__init__(source, frames, exact, problems)
        if not self.source.is_dir() or self.source.is_symlink():
            raise SegbenchError(f"{self.source}: predictions folder not found (or not a real folder)")
        self.check_listing(self.scan() if exact else self.look_up())

    def look_up(self) -> set[str]:
        """The expected entries that exist, the wrong kinds among them refused (nothing else is listed)."""
        present: set[str] = set()
        for name in sorted(self.expected):
            try:
                info = os.lstat(self.source / name)
            except (FileNotFoundError, NotADirectoryError):
                continue
            present.add(name)
            problem = kind_problem(info.st_mode, info.st_nlink)
            if problem is not None:
                self.refuse_entry(name, f"{self.source}/{name}: refused: {problem}")
        return present

    def scan(self) -> set[str]:
        """Every entry of the tree (links not followed, only the naming's folders entered), the
        wrong kinds refused, in the order of their names."""
        allowed = folders_of(self.expected)
        present: set[str] = set()
        refused: list[tuple[str, str]] = []
        pending = [""]
        while pending:
            folder = pending.pop()
            with os.scandir(self.source / folder) as entries:
                for entry in entries:
                    name = f"{folder}/{entry.name}" if folder else entry.name
                    info = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(info.st_mode) and name in allowed:
                        pending.append(name)
                        continue
                    problem = kind_problem(info.st_mode, info.st_nlink)
                    if problem is not None:
                        refused.append((name, f"{self.source}/{name}: refused: {problem}"))
                    if problem is None or name in self.expected:  # a refused stranger is not also "extra"
                        present.add(name)
        for name, message in sorted(refused):
            self.refuse_entry(name, message)
        return present

    def size(self, frame: Frame) -> int:
        return os.lstat(self.source / frame.prediction).st_size

    def read(self, frame: Frame) -> bytes:
        """The mask's bytes, opened without following a link and checked again once open."""
        where = self.where(frame)
        for parent in PurePosixPath(frame.prediction).parents:
            if str(parent) != "." and (self.source / parent).is_symlink():
                raise SegbenchError(f"{self.source}/{parent}: refused: a symbolic link")
        try:
            fd = os.open(self.source / frame.prediction, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            raise SegbenchError(f"{where}: missing prediction for frame {frame.frame_id}") from None
        except OSError as exc:
            problem = "a symbolic link" if (self.source / frame.prediction).is_symlink() else exc.strerror
            raise SegbenchError(f"{where}: refused: {problem}") from None
        with os.fdopen(fd, "rb") as stream:
            info = os.fstat(fd)
            problem = kind_problem(info.st_mode, info.st_nlink)
            if problem is not None:
                raise SegbenchError(f"{where}: refused: {problem}")
            if info.st_size > LIMITS.max_mask_bytes:
                raise SegbenchError(f"{where}: {info.st_size} bytes, more than the limit of {LIMITS.max_mask_bytes}")
            return stream.read(LIMITS.max_mask_bytes + 1)
