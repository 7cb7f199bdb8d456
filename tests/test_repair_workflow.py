"""`dvc repro` after one prediction PNG is deleted: the damaged shard's jobs and the jobs after
them re-run, and dvc.lock pins the whole tree again, byte for byte the one before.

A copy of the repository as a clone holds it, restored by a plain `dvc pull` (the results are not
in the remote), narrowed to Painting Vision with two models (`best`, `best-onnx`: 2 shards each)
so that the first run takes a couple of minutes.
"""

from __future__ import annotations

import pytest
import yaml

from workflow_helpers import executed_jobs, run, tracked_copy

pytestmark = pytest.mark.workflow
MODELS = ["best", "best-onnx"]


def results_pin(repo) -> dict:
    lock = yaml.safe_load((repo / "dvc.lock").read_text())
    (out,) = [o for o in lock["stages"]["workflow"]["outs"] if o["path"] == "results"]
    return out


def test_a_deleted_prediction_re_runs_its_shard_and_the_tree_is_pinned_whole_again(tmp_path):
    repo = tracked_copy(tmp_path / "repo")
    config_path = repo / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["benchmarks"] = {"painting-vision": dict(config["benchmarks"]["painting-vision"], models=MODELS)}
    config["models"] = {m: config["models"][m] for m in MODELS}
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    run(repo, "dvc", "pull")  # every input of the stage, from the in-repo remote
    run(repo, "dvc", "repro")
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
    # metric), overlays; the tables. No identity job, nothing of best-onnx's shards or the floor.
    assert executed_jobs(output) == {
        "infer": 1, "score": 1, "metrics": 1, "submission": 1, "uncertainty": 1, "slices": 1,
        "figures": 1, "overlays": 1, "plot_data": 1,
        "leaderboard": 1, "all": 1}
    assert masks[0].is_file()
    assert results_pin(repo) == pinned  # the same tree: 104 files, the same digest
    assert "up to date" in run(repo, "dvc", "status").stdout
