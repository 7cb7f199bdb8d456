"""A copy of this repository as a fresh clone holds it, for runs that must not touch the checkout.

Used by the end-to-end tests (through tests/workflow_helpers.py) and by
benchmarks/workflow_scale.py.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tracked_copy(target: Path) -> Path:
    """A new git repository at `target` holding the repository's files (tracked and not ignored)
    as a clone would: no data, no results, no virtual environment."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, files.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    git = ["git", "-c", "user.name=segbench-copy", "-c", "user.email=copy@segbench.invalid"]
    subprocess.run(["git", "init", "-q"], cwd=target, check=True)
    subprocess.run(["git", "add", "-A"], cwd=target, check=True)
    subprocess.run([*git, "commit", "-qm", "copy"], cwd=target, check=True)
    return target
