"""Predictions in an archive (zip, tar, tar.gz), read without extracting anything: the member
count, each member's and the total uncompressed size and the compression ratio checked before a
member is read, every zip member's CRC as it is read."""

from __future__ import annotations

import stat
import tarfile
import threading
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.archives import bad_name, member_checks, ratio_problem
from ..io.limits import LIMITS
from ..io.problems import Problems
from .predictions import REFUSED, Predictions, folders_of

UPLOAD_META = "dataset_id.txt"  # an upload's record of the dataset it was made for (uploads.py)
STATED_DATASET = f"the dataset the upload was made for ({UPLOAD_META})"  # its kind of problem (io.problems)


class ArchivePredictions(Predictions):
    """Masks inside a zip or tar (optionally gzip/bz2/xz) archive, read member by member in memory."""

    def __init__(self, source: Path, frames: Sequence[Frame], exact: bool, problems: Problems | None = None) -> None:
        super().__init__(source, frames, exact, problems)
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
        """The members to read by name; an entry refused or over its limit is a problem, never
        read, and an archive over its limits as a whole is refused at once, nothing read. Unless
        `exact`, only the frames' entries (and UPLOAD_META) are checked and counted in the totals."""
        allowed = folders_of(self.expected)
        members: dict[str, object] = {}
        checked: list[tuple[str, str | None, int]] = []
        for count, (name, member, problem, size, packed) in enumerate(self.entries(), start=1):
            if count > LIMITS.max_entries:
                raise SegbenchError(f"{self.source}: more than {LIMITS.max_entries} entries; refused")
            if not self.exact and name not in self.expected and name != UPLOAD_META:
                continue  # never read: as in a folder, only these frames' entries are looked at
            problem = bad_name(name) or problem
            if problem == "folder":
                problem = None if name.rstrip("/") in allowed else "a nested folder"
                checked.append((name, problem, 0))
                continue
            if problem is None and "/" in name and name.rpartition("/")[0] not in allowed:
                problem = "in a nested folder"
            if problem is None and name in members:
                problem = "a second entry of the same name"
            problem = problem or ratio_problem(size, packed)
            checked.append((name, problem, size))
            if problem is not None or size > LIMITS.max_mask_bytes:
                self.unreadable.add(name)
            if name == UPLOAD_META:
                self.meta_member = None if name in self.unreadable else member
            elif problem is None or name in self.expected:  # a refused stranger is not also "extra"
                members.setdefault(name, member)
        if member_checks(self.source, checked, self.source.stat().st_size, LIMITS.max_mask_bytes,
                         LIMITS.max_total_bytes, self.problems):
            self.problems.refuse(self.source, REFUSED)
        self.check_listing(set(members))
        return members

    def read(self, frame: Frame) -> bytes:
        return self.read_member(self.members[frame.prediction], self.where(frame))

    def size(self, frame: Frame) -> int:
        member = self.members[frame.prediction]
        return member.file_size if isinstance(member, zipfile.ZipInfo) else member.size  # type: ignore[attr-defined]

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
