"""The cluster executor plugins live outside the default import path (Makefile, CLUSTER_PLUGINS):
Snakemake imports every executor plugin it finds at each start, which costs a local run about a
second per `snakemake` call (and SLURM's one asks `scontrol` for its help text). A cluster run puts
them on the path (tools/repo_copy.copy_env, docs/cluster.md)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from workflow_helpers import ROOT, copy_env

EXECUTORS = ("slurm", "kubernetes")


def executor_options(env: dict[str, str]) -> set[str]:
    """The cluster executors whose options `snakemake --help` offers in `env`."""
    done = subprocess.run(["snakemake", "--help"], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return {name for name in EXECUTORS if re.search(rf"^\s+--{name}-", done.stdout, re.M)}


def test_a_local_run_does_not_load_the_cluster_executors():
    env = {k: v for k, v in copy_env(ROOT).items() if k != "PYTHONPATH"}
    assert executor_options(env) == set()


def test_a_cluster_run_finds_them_where_make_setup_installs_them():
    env = copy_env(ROOT, executor="kubernetes")
    assert executor_options(env) == set(EXECUTORS)
    plugins = Path(env["PYTHONPATH"].split(os.pathsep)[0])
    assert plugins.name == "cluster-plugins"
    pinned = {line.split("==")[0].replace("-", "_")
              for line in (ROOT / "envs" / "cluster-plugins.lock").read_text().splitlines() if line}
    assert pinned == {p.name.split("-")[0] for p in plugins.glob("*.dist-info")}
