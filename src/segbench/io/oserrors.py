"""One wording for an OS error met on a file: what stands at the path instead of the file
expected, or what keeps the file from being read or written. Every reader and writer words its
OSError (and a file that is not UTF-8 text) here, so an error on a given file reads the same
whichever step met it: `PATH: data manifest not found`, `PATH: cannot write: read-only file system`."""

from __future__ import annotations

import errno
import os
import select
import sys
from pathlib import Path
from typing import Literal

from ..errors import SegbenchError

# What stands at the path instead of the file a reader expected: the message after "PATH: ".
# {what} is the file's role ("file", "data manifest"); {blocker} says which part of the path is a
# file where a folder should be.
NOT_THE_FILE: dict[int, str] = {
    errno.ENOENT: "{what} not found",
    errno.ENOTDIR: "{what} not found: {blocker}",
    errno.EISDIR: "is a folder, expected a file",
}

# What keeps a file from being read or written: "PATH: cannot read: ..." or "... cannot write: ...".
# Any other errno gives the system's own words (its strerror, in lower case).
CANNOT: dict[int, str] = {
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ELOOP: "a loop of symbolic links",
    errno.ENAMETOOLONG: "the path, or a name in it, is too long",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "over the disk quota",
    errno.EROFS: "read-only file system",
    errno.EISDIR: "it is a folder",
    errno.ENOENT: "its folder is missing",
    errno.ENOTDIR: "{blocker}",  # making the file's folders
    errno.EEXIST: "{blocker}",  # making the file's folders: a file has a folder's name
}

# The errno an exception stands for where it carries none (a library may raise FileNotFoundError bare).
ERRNO_OF_TYPE: dict[type[OSError], int] = {
    FileNotFoundError: errno.ENOENT,
    IsADirectoryError: errno.EISDIR,
    NotADirectoryError: errno.ENOTDIR,
    PermissionError: errno.EACCES,
    FileExistsError: errno.EEXIST,
}


def errno_of(exc: OSError) -> int | None:
    return exc.errno if exc.errno is not None else ERRNO_OF_TYPE.get(type(exc))


def from_the_file_system(exc: BaseException) -> bool:
    """Whether `exc` is the file system's refusal, not a decoder's complaint: Pillow raises
    OSErrors without an errno for a damaged file."""
    return isinstance(exc, OSError) and errno_of(exc) is not None


NO_BLOCKER_FOUND = "a part of the path is not a folder"


def blocker(path: Path) -> str:
    """Which part of `path` is a file where a folder should be (the first from the root)."""
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return f"{parent} is a file, not a folder"
    return NO_BLOCKER_FOUND


Doing = Literal["read", "write", "access"]


def file_problem(exc: OSError | UnicodeDecodeError, path: Path | str | None = None, what: str = "file",
                 doing: Doing = "read") -> str:
    """The message for `exc` met on `path` (the exception's own file name when None): `doing` is
    "read", "write", or "access" where the caller cannot tell (a command's last resort)."""
    if path is None:
        path = getattr(exc, "filename", None)
    where = f"{path}: " if path is not None else ""
    if isinstance(exc, UnicodeDecodeError):
        return f"{where}not UTF-8 text ({exc.reason} at byte {exc.start})"
    code = errno_of(exc)
    if doing != "write" and code in NOT_THE_FILE:
        template = NOT_THE_FILE[code]
    elif code in CANNOT:
        template = f"cannot {doing}: {CANNOT[code]}"
    else:
        reason = exc.strerror or str(exc) or type(exc).__name__
        return f"{where}cannot {doing}: {reason[:1].lower()}{reason[1:]}"
    found = blocker(Path(path)) if "{blocker}" in template and path is not None else NO_BLOCKER_FOUND
    return where + template.format(what=what, blocker=found)


def file_error(exc: OSError | UnicodeDecodeError, path: Path | str | None = None, what: str = "file",
               doing: Doing = "read") -> SegbenchError:
    """file_problem's message as the error to raise (`raise file_error(exc, path) from None`)."""
    return SegbenchError(file_problem(exc, path, what, doing))


EXIT_READER_GONE = 128 + 13  # a shell's status for a process that SIGPIPE ended: a command's, then


def output_reader_gone(exc: BaseException) -> bool:
    """Whether `exc` is the standard output's reader having gone (`segbench submissions | head`):
    a broken pipe, and stdout's pipe is the broken one (poll reports an error on its write end).
    Then the rest of the output goes nowhere, so that the interpreter's last flush is quiet too."""
    if not isinstance(exc, BrokenPipeError):
        return False
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        gone = any(events & select.POLLERR for _, events in poll.poll(0))
    except (OSError, ValueError):  # no stdout to ask (closed, or not a file)
        return False
    if gone:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return gone
