"""Predictions from strangers: a folder or an archive (zip, tar, tar.gz) of masks, read safely.

A participant's predictions are checked before any pixel is decoded and without extracting
anything to disk:

- the entries: only regular files, named exactly as the dataset format names the frames'
  predictions (Frame.prediction), in no folder the naming does not use; symbolic links, hard
  links (a file with more than one name may be the ground truth under another name), devices,
  pipes, nested folders, absolute names and `..` are refused, each named;
- for an archive also the count, each entry's and the total uncompressed size, and the
  compression ratio (a zip or tar bomb), before reading a member; every zip member's CRC is
  checked as it is read;
- each mask's PNG header: an 8-bit single-channel PNG (greyscale or palette) at the ground
  truth's size, or at a size the protocol resizes from (same aspect ratio; any size for a
  benchmark with an evaluation size) no larger than LIMITS.max_rescale times the ground truth
  (or the evaluation size) on each side.

The limits are the settings in `LIMITS` (docs/security.md). Archives are files, so their
checkpoint_sha256 is the SHA-256 of the archive's bytes.
"""

from __future__ import annotations

import os
import stat
import tarfile
import threading
import zipfile
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

import numpy as np

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.archives import ARCHIVE_SUFFIXES, LIMITS, bad_name, is_archive, member_checks, ratio_problem, refuse
from ..io.maskio import decode_mask, png_header

UPLOAD_META = "dataset_id.txt"  # an upload's record of the dataset it was made for (uploads.py)


def folders_of(names: Iterable[str]) -> set[str]:
    """Every folder the naming rule uses ('drive/a.png' -> {'drive'})."""
    return {str(parent) for n in names for parent in PurePosixPath(n).parents if str(parent) != "."}


class Predictions(ABC):
    """A validated set of prediction masks: `read(frame)` gives a frame's PNG bytes."""

    source: Path

    def __init__(self, source: Path, frames: Sequence[Frame], exact: bool) -> None:
        self.source = Path(source)
        self.expected = {f.prediction: f for f in frames}
        if len(self.expected) != len(frames):
            raise SegbenchError(f"{self.source}: two evaluated frames share a prediction name")
        self.exact = exact

    def where(self, frame: Frame) -> str:
        return f"{self.source}/{frame.prediction}"

    def check_listing(self, present: set[str], kinds: list[str]) -> None:
        """Refuse entries of the wrong kind, and missing (and, when exact, extra) predictions."""
        problems = sorted(kinds)
        problems += [
            f"missing prediction for frame {f.frame_id}: {self.source}/{name}"
            for name, f in sorted(self.expected.items())
            if name not in present
        ]
        if self.exact:
            problems += [
                f"extra file not matching any evaluated frame: {self.source}/{name}"
                for name in sorted(present - set(self.expected))
            ]
        refuse(self.source, "predictions do not match the evaluated frames", problems)

    @abstractmethod
    def read(self, frame: Frame) -> bytes:
        """The frame's mask bytes (at most LIMITS.max_mask_bytes + 1 of them)."""

    def close(self) -> None:
        """Release the archive (a folder holds nothing open)."""

    def __enter__(self) -> Predictions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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

    def __init__(self, source: Path, frames: Sequence[Frame], exact: bool) -> None:
        super().__init__(source, frames, exact)
        if not self.source.is_dir() or self.source.is_symlink():
            raise SegbenchError(f"{self.source}: predictions folder not found (or not a real folder)")
        self.check_listing(*(self.scan() if exact else self.look_up()))

    def look_up(self) -> tuple[set[str], list[str]]:
        """The expected entries that exist, and the kind problems of those (nothing else is listed)."""
        present: set[str] = set()
        kinds: list[str] = []
        for name in self.expected:
            try:
                info = os.lstat(self.source / name)
            except (FileNotFoundError, NotADirectoryError):
                continue
            present.add(name)
            problem = kind_problem(info.st_mode, info.st_nlink)
            if problem is not None:
                kinds.append(f"{self.source}/{name}: refused: {problem}")
        return present, kinds

    def scan(self) -> tuple[set[str], list[str]]:
        """Every entry of the tree (links not followed, only the naming's folders entered)."""
        allowed = folders_of(self.expected)
        present: set[str] = set()
        kinds: list[str] = []
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
                        kinds.append(f"{self.source}/{name}: refused: {problem}")
                    if problem is None or name in self.expected:  # a refused stranger is not also "extra"
                        present.add(name)
        return present, kinds

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


class ArchivePredictions(Predictions):
    """Masks inside a zip or tar (optionally gzip/bz2/xz) archive, read member by member in memory."""

    def __init__(self, source: Path, frames: Sequence[Frame], exact: bool) -> None:
        super().__init__(source, frames, exact)
        if not self.source.is_file() or self.source.is_symlink():
            raise SegbenchError(f"{self.source}: predictions archive not found (or not a regular file)")
        self.lock = threading.Lock()  # archive members share one file position
        self.meta_member: object | None = None
        try:
            self.archive: zipfile.ZipFile | tarfile.TarFile = (
                zipfile.ZipFile(self.source) if zipfile.is_zipfile(self.source) else tarfile.open(self.source, "r:*")
            )
        except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as exc:
            raise SegbenchError(f"{self.source}: not a readable zip or tar archive ({exc})") from None
        try:
            self.members = self.index()
        except BaseException:
            self.archive.close()
            raise

    def entries(self) -> Iterable[tuple[str, object, str | None, int, int]]:
        """(name, member, kind problem or None or 'folder', uncompressed, compressed) per entry."""
        if isinstance(self.archive, zipfile.ZipFile):
            for info in self.archive.infolist():
                mode = info.external_attr >> 16
                if info.is_dir():
                    problem = "folder"
                elif stat.S_ISLNK(mode):
                    problem = "a symbolic link"
                elif info.flag_bits & 0x1:
                    problem = "an encrypted entry"
                else:
                    problem = None
                yield info.filename, info, problem, info.file_size, info.compress_size
            return
        try:
            for member in self.archive:
                if member.isdir():
                    problem = "folder"
                elif member.issym():
                    problem = "a symbolic link"
                elif member.islnk():
                    problem = "a hard link"
                elif not member.isreg():
                    problem = "not a regular file (a device, pipe or socket)"
                else:
                    problem = None
                yield member.name, member, problem, member.size, 0
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise SegbenchError(f"{self.source}: damaged tar archive ({exc})") from None

    def index(self) -> dict[str, object]:
        allowed = folders_of(self.expected)
        members: dict[str, object] = {}
        checked: list[tuple[str, str | None, int]] = []
        for count, (name, member, problem, size, packed) in enumerate(self.entries(), start=1):
            if count > LIMITS.max_entries:
                raise SegbenchError(f"{self.source}: more than {LIMITS.max_entries} entries; refused")
            problem = bad_name(name) or problem
            if problem == "folder":
                problem = None if name.rstrip("/") in allowed else "a nested folder"
                checked.append((name, problem, 0))
                continue
            if problem is None and PurePosixPath(name).parent.as_posix() not in allowed | {"."}:
                problem = "in a nested folder"
            if problem is None and name in members:
                problem = "a second entry of the same name"
            problem = problem or ratio_problem(size, packed)
            checked.append((name, problem, size))
            if name == UPLOAD_META:
                self.meta_member = member
            else:
                members.setdefault(name, member)
        member_checks(
            self.source, checked, self.source.stat().st_size, LIMITS.max_mask_bytes, LIMITS.max_total_bytes
        )
        self.check_listing(set(members), [])
        return members

    def read(self, frame: Frame) -> bytes:
        return self.read_member(self.members[frame.prediction], self.where(frame))

    def metadata(self) -> str | None:
        """The dataset_id an upload states in its UPLOAD_META, or None without one."""
        if self.meta_member is None:
            return None
        text = self.read_member(self.meta_member, f"{self.source}/{UPLOAD_META}")
        try:
            return text.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise SegbenchError(f"{self.source}/{UPLOAD_META}: not UTF-8 text") from None

    def read_member(self, member: object, where: str) -> bytes:
        with self.lock:
            try:
                if isinstance(self.archive, zipfile.ZipFile):
                    with self.archive.open(member) as stream:  # type: ignore[arg-type]
                        data = stream.read(LIMITS.max_mask_bytes + 1)
                else:
                    stream = self.archive.extractfile(member)  # type: ignore[arg-type]
                    data = stream.read(LIMITS.max_mask_bytes + 1) if stream is not None else b""
            except (zipfile.BadZipFile, tarfile.TarError, zlib.error, OSError, EOFError, ValueError) as exc:
                raise SegbenchError(f"{where}: damaged archive member ({exc})") from None
        if len(data) > LIMITS.max_mask_bytes:
            raise SegbenchError(f"{where}: more than the limit of {LIMITS.max_mask_bytes} bytes")
        return data

    def close(self) -> None:
        self.archive.close()


def open_predictions(source: Path, frames: Sequence[Frame], exact: bool = True) -> Predictions:
    """The predictions of `frames` in a folder or archive, their listing checked.

    `exact`: the listing must hold these frames' masks and nothing else (the whole split);
    otherwise only these frames' entries are checked (one shard of a split checked exactly before).
    """
    source = Path(source)
    if is_archive(source):
        return ArchivePredictions(source, frames, exact)
    if source.is_file():
        raise SegbenchError(
            f"{source}: a predictions file must be an archive ({', '.join(ARCHIVE_SUFFIXES)}); "
            "a predictions folder must be a folder"
        )
    return FolderPredictions(source, frames, exact)


def check_prediction_header(
    data: bytes, where: str, gt_size: tuple[int, int], evaluation_size: tuple[int, int] | None
) -> None:
    """Refuse a mask whose PNG header is not 8-bit single channel or whose size the protocol does
    not resize from, before decoding it. Sizes are (width, height)."""
    header = png_header(data, where)
    if not header.single_channel_8bit:
        raise SegbenchError(
            f"{where}: prediction is a {header.describe()} PNG; a prediction must be an 8-bit single-channel "
            "PNG (greyscale, or palette read as its indices) holding class ids, not a colour rendering"
        )
    if header.size == gt_size:
        return
    reference = evaluation_size or gt_size
    bound = (LIMITS.max_rescale * max(reference[0], gt_size[0]), LIMITS.max_rescale * max(reference[1], gt_size[1]))
    if evaluation_size is None and not same_aspect(header.size, gt_size):
        raise SegbenchError(
            f"{where}: prediction is {header.width}x{header.height} but the ground truth is "
            f"{gt_size[0]}x{gt_size[1]}: not the same aspect ratio, so it cannot be resized to it"
        )
    if header.width > bound[0] or header.height > bound[1] or 0 in header.size:
        raise SegbenchError(
            f"{where}: prediction is {header.width}x{header.height}; the largest accepted for a ground truth of "
            f"{gt_size[0]}x{gt_size[1]} is {bound[0]}x{bound[1]} (at most {LIMITS.max_rescale}x each side)"
        )


def same_aspect(size: tuple[int, int], target: tuple[int, int]) -> bool:
    """Whether `size` is `target` scaled uniformly, up to rounding of one side."""
    (w, h), (tw, th) = size, target
    return round(w * th / tw) == h or round(h * tw / th) == w


def read_prediction(
    predictions: Predictions, frame: Frame, gt_shape: tuple[int, int], evaluation_size: tuple[int, int] | None
) -> np.ndarray:
    """A frame's predicted mask of class ids, its header checked against the ground truth's
    (height, width) `gt_shape` before it is decoded."""
    data = predictions.read(frame)
    where = predictions.where(frame)
    check_prediction_header(data, where, (gt_shape[1], gt_shape[0]), evaluation_size)
    return decode_mask(data, where, role="prediction")
