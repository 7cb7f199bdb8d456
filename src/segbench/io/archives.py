"""Archives from strangers (predictions zips and tars, .pt and TorchScript zips): the limits and
the checks made before a member is read, and the CRC of every zip member.

The limits are settings (`segbench.io.limits`, docs/security.md); a file over one is refused naming
the member.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

from ..errors import SegbenchError
from .limits import LIMITS
from .problems import Problems

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")
# The kinds of problem an archive's listing has (segbench.io.problems).
REFUSED_ENTRY = "refused entries"
ENTRY_TOO_LARGE = "entries over the size limit"
ARCHIVE_OVER_LIMITS = "the archive over its limits"


def is_archive(path: Path) -> bool:
    return Path(path).name.lower().endswith(ARCHIVE_SUFFIXES)


def bad_name(name: str) -> str | None:
    """Why an entry name is refused (absolute, `..`, backslash, empty part), or None."""
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "an absolute name"
    if "\\" in name:
        return "a name with a backslash"
    parts = name.rstrip("/").split("/")
    if ".." in parts:
        return "a name with '..'"
    if any(p in ("", ".") for p in parts):
        return "a name with an empty or '.' part"
    return None


def ratio_problem(size: int, packed: int) -> str | None:
    """Why a member that `packed` compressed bytes expand to `size` is refused (a bomb), or None."""
    if packed and size > LIMITS.max_ratio * packed:
        return f"compresses {size} bytes into {packed}, a ratio above the limit of {LIMITS.max_ratio}"
    return None


def member_checks(
    source: Path, entries: list[tuple[str, str | None, int]], archive_bytes: int, max_entry: int, max_total: int,
    problems: Problems,
) -> bool:
    """Add to `problems` each entry (name, problem, uncompressed size) refused or over the limit
    on an entry, and the archive's totals over theirs; whether the archive as a whole is over a
    limit (then no member may be read)."""
    for name, problem, _ in entries:
        if problem:
            problems.add(REFUSED_ENTRY, f"{source}: {name}: refused: {problem}")
    for name, _, size in entries:
        if size > max_entry:
            problems.add(ENTRY_TOO_LARGE, f"{source}: {name}: {size} bytes uncompressed, more than the limit of {max_entry}")
    total = sum(size for _, _, size in entries)
    over = [f"{source}: {total} bytes uncompressed in all, more than the limit of {max_total}"] if total > max_total else []
    if total > LIMITS.max_ratio * max(archive_bytes, 1):
        over.append(f"{source}: {total} bytes uncompressed from {archive_bytes} bytes, a ratio above the limit of "
                    f"{LIMITS.max_ratio} (an archive bomb?)")
    for message in over:
        problems.add(ARCHIVE_OVER_LIMITS, message)
    return bool(over)


def check_zip(source: Path, archive: zipfile.ZipFile) -> None:
    """Refuse a model zip whose members break the limits (names, ratio, sizes), then check every
    member's CRC-32 by reading it through (a bounded block at a time)."""
    entries = []
    for info in archive.infolist():
        problem = bad_name(info.filename) or ratio_problem(info.file_size, info.compress_size)
        entries.append((info.filename, problem, info.file_size))
    limit = LIMITS.max_model_bytes
    problems = Problems()
    member_checks(source, entries, Path(source).stat().st_size, limit, limit, problems)
    problems.refuse(source, "archive refused")
    for info in archive.infolist():
        try:
            with archive.open(info) as stream:
                while stream.read(1 << 20):
                    pass
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError) as exc:
            raise SegbenchError(f"{source}: member {info.filename} is damaged ({exc})") from None


def verify_model_zip(path: Path) -> None:
    """A .pt (torch.save) or TorchScript file that is a zip: its limits and every member's CRC,
    before torch reads it (torch does not check the CRCs). Other files are left to torch."""
    if not zipfile.is_zipfile(path):
        return
    try:
        with zipfile.ZipFile(path) as archive:
            check_zip(Path(path), archive)
    except zipfile.BadZipFile as exc:
        raise SegbenchError(f"{path}: damaged zip archive ({exc})") from None
