"""`dvc repro` end to end, and `dvc metrics diff` after a data change.

It starts from a copy of the shared run of the embedded default (conftest.embedded_run): the
workflow's results are there, so `dvc repro` re-runs only what its stage's command finds out of
date (`check-results --repair` first, then snakemake) and must reproduce the same metrics.json
byte for byte before the label change is made. The copy sits elsewhere, its files' times kept, as
a moved checkout: the workflow plans nothing there. After the label change `dvc repro` does the
work `snakemake` does for it (tests/test_workflow.py): no inference, the changed shard re-scored for
every model of the benchmark and the floor. The label changed is an EasyPortrait one: that benchmark
has one model, where Painting Vision has four, so its re-scoring is the fewest jobs that show it
(test_workflow.py changes a Painting Vision label, through snakemake).
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from PIL import Image

from workflow_helpers import executed_jobs, planned_job_table, run

pytestmark = pytest.mark.workflow
GIT = ["git", "-c", "user.name=segbench-test", "-c", "user.email=test@segbench.invalid"]


def test_dvc_repro_reproduces_results_and_metrics_diff_shows_a_label_change(tmp_path, embedded_run):
    repo = tmp_path / "repo"
    shutil.copytree(embedded_run.repo, repo, symlinks=True)  # the shared copy stays as it is
    assert planned_job_table(run(repo, "snakemake", "-n", "--quiet", "rules").stdout) == {}  # moved: nothing to do
    run(repo, "dvc", "repro")
    assert (repo / "metrics.json").read_bytes() == (embedded_run.snapshot / "metrics.json").read_bytes()
    assert "up to date" in run(repo, "dvc", "status").stdout
    lock = (repo / "dvc.lock").read_text()
    assert "artifacts/best.pt" in lock and "results" in lock and "md5" in lock
    shown = run(repo, "dvc", "metrics", "show").stdout
    assert "painting-vision.test.best.shared_metrics.mIoU" in shown
    run(repo, *GIT, "add", "-A")
    run(repo, *GIT, "commit", "-qm", "results", "--allow-empty")  # empty when dvc.lock was current

    label = sorted((repo / "data-easyportrait" / "annotations" / "test").glob("*.png"))[0]
    mask = np.array(Image.open(label))
    mask[: mask.shape[0] // 2] = 1  # person, where the floor predicts background
    Image.fromarray(mask).save(label)
    run(repo, "dvc", "add", "--quiet", "data-easyportrait")
    run(repo, "segbench", "manifest", "--benchmark", "easyportrait", "--data", "data-easyportrait", "--out",
        "data-easyportrait_manifest.json")
    status = run(repo, "dvc", "status").stdout
    assert "changed deps" in status and "data-easyportrait" in status
    repro = run(repo, "dvc", "repro")
    jobs = executed_jobs(repro.stdout + repro.stderr)
    assert "infer" not in jobs and jobs["score"] == 1 and jobs["score_floor"] == 1, jobs  # easyportrait-best, floor
    diff = run(repo, "dvc", "metrics", "diff", "--json").stdout
    changed = json.loads(diff)["metrics.json"]
    assert changed["easyportrait.test.easyportrait-best.easyportrait_9.mIoU"]["diff"] != 0
    assert changed["easyportrait.test.floor.easyportrait_9.iou.background"]["diff"] < 0  # half a frame became person
    assert not any(key.startswith(("painting-vision.", "idd20k")) for key in changed), sorted(changed)
