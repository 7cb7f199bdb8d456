"""The workflow's target lists (segbench.workflow.targets), from a plan of one benchmark with a
checkpoint baseline, a second checkpoint and a folder of masks made elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from pv_fixtures import ALL_CLASSES, make_dataset
from segbench.workflow.paths import ResultPaths
from segbench.workflow.plan import Plan
from segbench.workflow.targets import Targets

PV = "painting-vision"


@pytest.fixture
def targets(tmp_path: Path) -> Targets:
    frames = [(f"w{w}_f{f}", f"w{w}", "test", ALL_CLASSES) for w in range(3) for f in range(4)]  # 12 frames
    data = make_dataset(tmp_path, frames)
    models = {
        "base": {"kind": "checkpoint", "path": "artifacts/base.pt", "label_space": "painting-vision-10", "role": "baseline"},
        "other": {"kind": "checkpoint", "path": "artifacts/other.pt", "label_space": "painting-vision-10"},
        "masks": {"kind": "predictions", "path": "elsewhere/masks", "label_space": "painting-vision-10"},
    }
    config = {"benchmarks": {PV: {"data": str(data), "splits": ["test"], "models": list(models)}},
              "models": models, "shard_size": 8, "max_shards": 100}
    return Targets(Plan(config), ResultPaths("res"), 2, "metrics.json")  # 12 frames: 2 shards


def test_counts_baseline_and_floor_of_a_model(targets: Targets):
    counts = [f"res/{PV}/test/other/counts/shard-{s}.parquet" for s in (0, 1)]
    assert targets.counts(PV, "test", "other") == counts
    assert targets.baseline(PV) == "base"
    assert targets.baseline_counts(PV, "test", "other") == [c.replace("/other/", "/base/") for c in counts]
    assert targets.baseline_counts(PV, "test", "base") == [] and targets.baseline_counts(PV, "test", "floor") == []
    assert targets.floor_counts(PV, "test", "other") == [c.replace("/other/", "/floor/") for c in counts]
    assert targets.floor_counts(PV, "test", "floor") == []


def test_the_masks_of_a_predictions_folder_are_its_own_files(targets: Targets):
    assert not targets.made_elsewhere("other") and targets.made_elsewhere("masks")
    assert targets.masks(PV, "test", "other") == [f"res/{PV}/test/other/predictions/shard-{s}" for s in (0, 1)]
    assert targets.masks(PV, "test", "other", ["1"]) == [f"res/{PV}/test/other/predictions/shard-1"]
    assert targets.masks(PV, "test", "masks") == targets.masks(PV, "test", "masks", ["1"]) == ["elsewhere/masks"]


def test_the_figures_of_one_model(targets: Targets):
    at = f"res/{PV}/test/other/plots"
    reports = ["shared_metrics", "paint_state_metrics"]
    assert targets.figures(PV, "test", "other") == (
        [f"{at}/iou-{r}.{x}" for r in reports for x in ("png", "csv")]
        + [f"{at}/confusion-{s}.{x}" for s in ["ground-truth", *reports] for x in ("png", "csv")]
        + [f"{at}/fraction-paint_state_metrics.painted_coverage_mae.png"])
    assert targets.plot_data_files("iou") == [f"res/{PV}/test/{m}/plots/iou-{r}.csv" for m in ("base", "other", "masks")
                                              for r in reports]
    assert targets.plot_data_files("confusion")[:3] == [f"res/{PV}/test/base/plots/confusion-{s}.csv"
                                                        for s in ["ground-truth", *reports]]


def test_what_the_results_table_and_the_default_target_gather(targets: Targets):
    models = ("base", "other", "masks")
    inputs = targets.leaderboard_inputs()
    assert inputs["submissions"] == [f"res/{PV}/test/{m}/submission.json" for m in models]
    assert inputs["metrics"] == [f"res/{PV}/test/{m}/metrics.json" for m in models]
    assert inputs["floors"] == [f"res/{PV}/test/floor/metrics.json"]  # once, however many models
    assert inputs["uncertainty"] == [f"res/{PV}/test/{m}/uncertainty.json" for m in (*models, "floor")]
    assert inputs["slices"] == [f"res/{PV}/test/{m}/slices.json" for m in models]
    assert targets.leaderboard_outputs() == ["res/leaderboard.csv", "res/leaderboard.md", "res/leaderboard.json",
                                             "metrics.json"]
    outputs = targets.plot_outputs()
    assert outputs[-3:] == ["res/plots/iou.csv", "res/plots/confusion.csv", "res/leaderboard.html"]
    assert outputs[:-3] == ([f"res/{PV}/test/{m}/plots" for m in models]
                            + [f"res/{PV}/test/{m}/overlays/{k}-{i}.png" for m in models for k in ("worst", "best")
                               for i in (1, 2)])
