"""Restoring DVC-pinned inputs (datasets, checkpoints) that are missing from the working tree."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import SegbenchError


LOCK = Path(".dvc") / "tmp" / "segbench-pull.lock"


def dvc_file(path: Path) -> Path:
    return path.with_name(path.name + ".dvc")


def restore(paths: Sequence[Path]) -> list[Path]:
    """`dvc pull` those pinned `paths` that are missing, in one call; returns the pulled ones.

    An existing path is left alone (a modified working copy is the user's, not ours to reset).
    """
    missing = [p for p in paths if not p.exists()]
    for path in missing:
        if not dvc_file(path).is_file():
            raise SegbenchError(
                f"'{path}' is missing and not pinned: there is no {dvc_file(path)}. Restore the .dvc file from git "
                f"(`git checkout -- {dvc_file(path)}`), or track the input with `dvc add {path}` and `dvc push`."
            )
    if not missing:
        return []
    pins = [str(dvc_file(p)) for p in missing]
    # DVC refuses to run twice at once in one repository: parallel pulls wait for each other.
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run([sys.executable, "-m", "dvc", "pull", *pins], capture_output=True, text=True)
    still_missing = [p for p in missing if not p.exists()]
    if done.returncode != 0 or still_missing:
        detail = (done.stderr or done.stdout).strip().splitlines()[-8:]
        raise SegbenchError(
            f"could not restore {[str(p) for p in still_missing or missing]} with `dvc pull {' '.join(pins)}`: the DVC "
            "remote could not be reached or does not hold these bytes. Check the remote with `dvc remote list` and "
            f"`dvc status -c {' '.join(pins)}`; if the bytes were never pushed, run `dvc push` where they exist.\n"
            "  dvc said: " + "\n  ".join(detail or ["(nothing)"])
        )
    return missing
