"""Fixtures shared by the test modules."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class EmbeddedRun:
    """A copy of the repository after one run of the whole embedded default, and a snapshot of
    what that run produced (the results table, metrics.json and every submission record), taken
    before any test changes the copy."""

    repo: Path
    snapshot: Path

    def outputs(self) -> list[Path]:
        """The snapshot's files, relative to it."""
        return sorted(p.relative_to(self.snapshot) for p in self.snapshot.rglob("*") if p.is_file())


@pytest.fixture(scope="session")
def embedded_run(tmp_path_factory) -> EmbeddedRun:
    """The one local run of the whole embedded default that the end-to-end modules share."""
    from workflow_helpers import run, tracked_copy

    repo = tracked_copy(tmp_path_factory.mktemp("repo"))
    assert not (repo / "data").exists()  # restored by the workflow's pull rule, from the in-repo remote
    run(repo, "snakemake", "--cores", "2")
    snapshot = tmp_path_factory.mktemp("snapshot")
    results = repo / "results"
    kept = [p for p in results.glob("leaderboard.*")] + list(results.rglob("submission.json")) + [repo / "metrics.json"]
    for path in kept:
        target = snapshot / path.relative_to(repo)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return EmbeddedRun(repo, snapshot)
