"""A copy of this repository as a fresh clone holds it, for runs that must not touch the checkout.

Used by the end-to-end tests (through tests/workflow_helpers.py) and by the workflow benchmarks
in benchmarks/.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CLUSTER_PLUGINS = BIN.parent / "cluster-plugins"  # make setup's --target folder


def copy_env(repo: Path, executor: str | None = None) -> dict[str, str]:
    """The environment of a command run in the copy at `repo`: this environment's tools first, and
    segbench's default root the copy.

    `executor` ("slurm", "kubernetes"): the run uses that cluster executor, so the cluster plugins
    (installed outside the import path, see the Makefile) are put on it. Then, unless it is SLURM,
    SLURM_CONF is an empty file: Snakemake imports every executor plugin at each start, and the
    SLURM one asks `scontrol show config` for its help text, which blocks about 9 s wherever SLURM
    is installed but its controller is down.
    """
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", SEGBENCH_ROOT=str(repo))
    if executor is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CLUSTER_PLUGINS), os.environ.get("PYTHONPATH")]))
        if executor != "slurm":
            env["SLURM_CONF"] = os.devnull
    return env


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
