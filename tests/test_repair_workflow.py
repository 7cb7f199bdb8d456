"""`dvc repro` after one prediction PNG is deleted: the damaged shard's jobs and the jobs after
them re-run, and dvc.lock pins the whole tree again, byte for byte the one before.

A copy of the narrow run (conftest.narrow_run: Painting Vision, `best` and its baseline
`segformer-ade`, 2 shards each, the default target made), the pinned inputs its configuration
does not use restored by a plain `dvc pull` (dvc.yaml's stage depends on every pin). The first
`dvc repro` runs the stage, which finds the workflow done, and pins the tree; then one of best's
masks is deleted.
"""

from __future__ import annotations

import pytest
import yaml

from workflow_helpers import executed_jobs, run

pytestmark = pytest.mark.workflow


def results_pin(repo) -> dict:
    lock = yaml.safe_load((repo / "dvc.lock").read_text())
    (out,) = [o for o in lock["stages"]["workflow"]["outs"] if o["path"] == "results"]
    return out


def test_a_deleted_prediction_re_runs_its_shard_and_the_tree_is_pinned_whole_again(tmp_path, narrow_run):
    repo = narrow_run.copy_to(tmp_path / "repo")
    run(repo, "dvc", "pull")  # every input of the stage, from the in-repo remote
    first = run(repo, "dvc", "repro")
    assert "Nothing to be done" in first.stdout + first.stderr  # the stage ran; the workflow was done
    pinned = results_pin(repo)
    shard = repo / "results/painting-vision/test/best/predictions/shard-0"
    masks = sorted(shard.glob("*.png"))
    # no pull record (restores are kept under .snakemake); each directory() output holds Snakemake's marker
    assert pinned["nfiles"] == 104 and len(masks) == 8

    masks[0].unlink()
    repro = run(repo, "dvc", "repro")
    output = repro.stdout + repro.stderr
    assert f"{masks[0].relative_to(repo)}: deleted since dvc.lock recorded it" in output
    # the shard's inference and scoring, then what reads best's counts: its metrics, record,
    # intervals, slices, figures (IoU per report: 2; confusion per space: 3; one fraction
    # metric), overlays; the tables. No identity job, nothing of segformer-ade's shards or the floor.
    assert executed_jobs(output) == {
        "infer": 1, "score": 1, "metrics": 1, "submission": 1, "uncertainty": 1, "slices": 1,
        "figures": 1, "overlays": 1, "plot_data": 1,
        "leaderboard": 1, "all": 1}
    assert masks[0].is_file()
    assert results_pin(repo) == pinned  # the same tree: 104 files, the same digest
    assert "up to date" in run(repo, "dvc", "status").stdout
