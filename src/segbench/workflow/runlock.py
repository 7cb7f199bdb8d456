"""Whether Snakemake's lock on a folder belongs to a live run, told by the kernel.

Snakemake locks a working directory with plain files (.snakemake/locks/*.lock) that a run killed
with `kill -9` leaves behind; the next `snakemake` then refuses to start, and `snakemake --unlock`
cannot tell a dead run's lock from a live one's. So every `snakemake` of this workflow also holds
a POSIX record lock on one file (`RUN_LOCK`) for as long as it lives: shared while it runs, and
exclusive only for the moment of claiming the folder. The kernel releases a dead process's record
locks, `kill -9` included, so a folder whose run lock can be taken exclusively has no live run of
the workflow, and the Snakemake lock files in it are a killed run's: they are removed, and the
killed jobs' files are re-made (the profile's rerun-incomplete). While any run lives, nothing is
removed and Snakemake's own lock check decides.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO

RUN_LOCK = "segbench-run.lock"
_held: list[IO[str]] = []  # the open run-lock file: closing it would release the lock


def claim_folder(state: Path) -> list[Path]:
    """Hold the run lock of Snakemake's state folder `state` (.snakemake) for the life of this
    process; returns the stale Snakemake lock files it removed (none while another run lives)."""
    state.mkdir(parents=True, exist_ok=True)
    handle = open(state / RUN_LOCK, "a+")  # read and write: a shared and an exclusive lock
    _held.append(handle)
    try:
        fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):  # another run holds it (shared): its lock files are live
        fcntl.lockf(handle, fcntl.LOCK_SH)  # waits only while another run is claiming the folder
        return []
    except OSError:  # a file system without record locks: nothing is known, so nothing is removed
        return []
    stale = sorted((state / "locks").glob("*.lock"))
    for path in stale:
        path.unlink()
    fcntl.lockf(handle, fcntl.LOCK_SH)  # a record lock converts in place: never released in between
    return stale
