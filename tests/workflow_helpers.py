"""What the end-to-end modules share: a copy of the repository, running a command in it with this
environment's tools, the copy's config narrowed, and reading what a run did."""

from __future__ import annotations

import csv
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from job_counts import executed_jobs, executed_wildcards, planned_job_table  # noqa: E402,F401  (re-exported)
from repo_copy import copy_env, tracked_copy  # noqa: E402,F401  (re-exported for the end-to-end modules)

# Painting Vision with the embedded checkpoint and its baseline (conftest.narrow_run).
NARROW_CONFIG = Path(__file__).resolve().parent / "configs" / "pv-two-models.yaml"
# The narrow configuration's model that the runs of a mechanism (SLURM, S3, faults) keep: the
# mechanism treats every model's jobs alike, and the SegFormer baseline's cost the most.
MECHANISM_MODELS = ["best"]


def use_config(repo: Path, config: Path) -> Path:
    """Make `config` the copy's config/config.yaml (what a plain `snakemake` there reads)."""
    shutil.copyfile(config, repo / "config" / "config.yaml")
    return repo


def only_benchmark(repo: Path, name: str = "painting-vision", models: list[str] | None = None) -> Path:
    """Restrict the copy's config to one benchmark and its models, or these of them (for tests of
    mechanisms)."""
    config_path = repo / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["benchmarks"] = {name: config["benchmarks"][name]}
    if models is not None:
        config["benchmarks"][name]["models"] = models
    config["models"] = {m: config["models"][m] for m in config["benchmarks"][name]["models"]}
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    return repo


def run(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = copy_env(repo)
    done = subprocess.run(list(args), cwd=repo, env=env, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}")
    return done


def default_sigint() -> None:
    """For `preexec_fn` of a child a test interrupts: SIGINT's default action, also when this
    process was started with SIGINT ignored (a background job of a non-interactive shell, whose
    children inherit that; Python then never raises KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def label_of_a_test_frame(repo: Path) -> Path:
    """The label file of the first frame of the test split."""
    rows = csv.DictReader((repo / "data" / "frames.csv").read_text().splitlines())  # any extra columns too
    frame_id = next(row["frame_id"] for row in rows if row["split"] == "test")
    return repo / "data" / "labels" / f"{frame_id}.png"


def pv_models(repo: Path) -> list[str]:
    """The Painting Vision models the copy's config lists."""
    return yaml.safe_load((repo / "config" / "config.yaml").read_text())["benchmarks"]["painting-vision"]["models"]


def narrow_copy_for_a_mechanism(target: Path) -> Path:
    """A fresh copy at `target` with the narrow configuration, its MECHANISM_MODELS alone."""
    return only_benchmark(use_config(tracked_copy(target), NARROW_CONFIG), models=MECHANISM_MODELS)


def pv_records(repo: Path) -> list[Path]:
    """The Painting Vision test split's records of the copy's models (metrics.json, submission.json)
    and of the floor (metrics.json), relative to the copy."""
    evaluated = Path("results") / "painting-vision" / "test"
    return sorted([evaluated / "floor" / "metrics.json"] + [
        evaluated / model / name for model in pv_models(repo) for name in ("metrics.json", "submission.json")])


def local_rules() -> set[str]:
    """The rules Snakemake runs in its own process under a cluster executor, read from the rule
    files: those that say `localrule: True`, those with no command (`all`), and a `use rule` of
    either."""
    local, parent = set(), {}
    for source in [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]:
        for block in re.split(r"^(?=(?:rule|checkpoint|use rule) )", source.read_text(), flags=re.M)[1:]:
            body = block.split("\n\n\n", 1)[0]
            used = re.match(r"use rule (\w+) as (\w+)", body)
            if used:
                parent[used.group(2)] = used.group(1)
            elif re.search(r"^    localrule: True", body, re.M) or not re.search(r"^    (shell|run):", body, re.M):
                local.add(re.match(r"(?:rule|checkpoint) (\w+):", body).group(1))
    return local | {name for name, used in parent.items() if used in local}
