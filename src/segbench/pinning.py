"""Restoring DVC-pinned inputs (datasets, checkpoints) that are missing from the working tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .errors import SegbenchError


def dvc_file(path: Path) -> Path:
    return path.with_name(path.name + ".dvc")


def restore(path: Path) -> bool:
    """`dvc pull` the pinned `path` if it is missing; True when it had to be pulled.

    An existing path is left alone (a modified working copy is the user's, not ours to reset).
    """
    if path.exists():
        return False
    pin = dvc_file(path)
    if not pin.is_file():
        raise SegbenchError(
            f"'{path}' is missing and not pinned: there is no {pin}. Restore the .dvc file from git "
            f"(`git checkout -- {pin}`), or track the input with `dvc add {path}` and `dvc push`."
        )
    command = [sys.executable, "-m", "dvc", "pull", "--quiet", str(pin)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 or not path.exists():
        detail = (done.stderr or done.stdout).strip().splitlines()[-8:]
        raise SegbenchError(
            f"could not restore '{path}' with `dvc pull {pin}`: the DVC remote could not be reached or does not "
            f"hold these bytes. Check the remote with `dvc remote list` and `dvc status -c {pin}`; "
            f"if the bytes were never pushed, run `dvc push {pin}` where they exist.\n  dvc said: "
            + "\n  ".join(detail or ["(nothing)"])
        )
    return True
