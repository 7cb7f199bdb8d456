"""`dvc repro` end to end, and `dvc metrics diff` after a data change.

It starts from a copy of the shared run of the embedded default (conftest.embedded_run): the
workflow's results are there, so `dvc repro` re-runs only what its stage's command finds out of
date (`check-results --repair` first, then snakemake) and must reproduce the same metrics.json
byte for byte before the label change is made. The copy sits elsewhere, its files' times kept, as
a moved checkout: the workflow plans nothing there. After the label change `dvc repro` does the
work `snakemake` does for it (tests/test_workflow.py): no inference, one shard re-scored per model.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from PIL import Image

from workflow_helpers import executed_jobs, label_of_a_test_frame, planned_job_table, pv_models, run

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

    label = label_of_a_test_frame(repo)
    mask = np.array(Image.open(label))
    mask[: mask.shape[0] // 2] = 8
    Image.fromarray(mask).save(label)
    run(repo, "dvc", "add", "--quiet", "data")
    run(repo, "segbench", "manifest", "--data", "data", "--out", "data_manifest.json")
    status = run(repo, "dvc", "status").stdout
    assert "changed deps" in status and "data" in status
    repro = run(repo, "dvc", "repro")
    jobs = executed_jobs(repro.stdout + repro.stderr)
    models = len(pv_models(repo))
    assert "infer" not in jobs and jobs["score"] == models and jobs["score_floor"] == 1, jobs
    diff = run(repo, "dvc", "metrics", "diff", "--json").stdout
    changed = json.loads(diff)["metrics.json"]
    assert changed["painting-vision.test.best.shared_metrics.mIoU"]["diff"] != 0
    assert changed["painting-vision.test.floor.shared_metrics.iou.other"]["diff"] < 0  # half a frame became window
