"""End-to-end: one run of the default workflow in a temporary copy, then everything this run must
have produced for people to look at: plots, overlays, intervals, the HTML leaderboard (in a real
headless browser), the Snakemake report and the DVC plots."""

from __future__ import annotations

import json
import os
import sys

import pytest
import yaml
from PIL import Image

from browser import chromium, console_errors, probe
from test_workflow import only_benchmark, run, tracked_copy

from segbench import overlays, plots

pytestmark = pytest.mark.workflow
RESAMPLES = 200
RESULTS = "results/painting-vision/test"
MODELS = ("best", "segformer-ade", "best-onnx", "deeplab-pv")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    repo = only_benchmark(tracked_copy(tmp_path_factory.mktemp("results-repo")))
    config_path = repo / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["bootstrap"] = {"resamples": RESAMPLES, "seed": 3}
    config["plots"] = {"overlay_frames": 1}
    config["shard_size"] = 16  # fewer jobs: this module is about what comes after scoring
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    run(repo, "snakemake", "--cores", "2")
    return repo


def size(path):
    with Image.open(path) as image:
        assert image.format == "PNG"
        return image.size


def test_plots_exist_with_their_sizes(repo):
    for model in MODELS:
        folder = repo / RESULTS / model / "plots"
        expected = {
            "iou-shared_metrics.png": "iou", "iou-paint_state_metrics.png": "iou",
            "confusion-ground-truth.png": "confusion", "confusion-shared_metrics.png": "confusion",
            "confusion-paint_state_metrics.png": "confusion",
            "fraction-paint_state_metrics.painted_coverage_mae.png": "fraction",
        }
        for name, kind in expected.items():
            path = folder / name
            assert path.stat().st_size > 5000, path
            assert size(path) == plots.pixel_size(kind), path


def test_overlays_of_the_worst_and_best_frames(repo):
    for model in MODELS:
        folder = repo / RESULTS / model / "overlays"
        assert sorted(p.name for p in folder.glob("*.png")) == ["best-1.png", "worst-1.png"]  # overlay_frames: 1
        for path in folder.glob("*.png"):
            assert size(path) == overlays.pixel_size() and path.stat().st_size > 20000
        chosen = json.loads((folder / "frames.json").read_text())["frames"]
        worst, best = chosen
        assert worst["kind"] == "worst" and best["kind"] == "best" and worst["miou"] <= best["miou"]
        assert worst["wall_id"] == worst["frame_id"].split("_")[0]


def test_intervals_beside_the_records(repo):
    board = json.loads((repo / "results" / "leaderboard.json").read_text())
    (group,) = board["groups"]
    rows = {r["model"]: r for r in group["rows"]}
    for model in (*MODELS, "floor"):
        document = json.loads((repo / RESULTS / model / "uncertainty.json").read_text())
        assert document["resamples"] == RESAMPLES and document["seed"] == 3 and document["group_key"] == "wall_id"
        miou = document["intervals"]["shared_metrics.mIoU"]
        assert miou["low"] <= miou["value"] <= miou["high"]
        assert rows[model]["shared_metrics.mIoU"] == pytest.approx(miou["value"])
        assert rows[model]["shared_metrics.mIoU.ci_low"] == miou["low"]
    best = json.loads((repo / RESULTS / "best" / "uncertainty.json").read_text())
    assert best["comparisons"]["baseline"]["against"] == "segformer-ade"
    assert best["comparisons"]["floor"]["metrics"]["shared_metrics.mIoU"]["excludes_zero"] is True
    assert rows["best"]["vs_floor.excludes_zero"] is True
    baseline = json.loads((repo / RESULTS / "segformer-ade" / "uncertainty.json").read_text())
    assert baseline["comparisons"]["baseline"] is None
    # The submission record keeps the spec's fields only.
    record = json.loads((repo / RESULTS / "best" / "submission.json").read_text())
    assert "uncertainty" not in record and not any("ci_" in key for key in json.dumps(record).split('"'))
    assert "[" in (repo / "results" / "leaderboard.md").read_text()
    assert "shared_metrics.mIoU.ci_low" in (repo / "results" / "leaderboard.csv").read_text().splitlines()[0]


def test_every_metric_in_the_results_the_spec_fields_in_the_record(repo):
    metrics = json.loads((repo / RESULTS / "best" / "metrics.json").read_text())["results"]["shared_metrics"]
    record = json.loads((repo / RESULTS / "best" / "submission.json").read_text())["shared_metrics"]
    assert list(record) == ["mIoU", "iou", "window_precision", "window_recall"]
    assert {k: metrics[k] for k in record} == record
    assert 0 < metrics["mBIoU"] < metrics["mIoU"] <= 1 and metrics["aAcc"] > 0  # boundaries are harder
    long = (repo / "results" / "tables" / "long.csv").read_text().splitlines()
    assert long[0] == "benchmark,split,model,report,metric,class,value,low,high"
    assert any(line.startswith("painting-vision,test,best,shared_metrics,boundary_iou,wall,") for line in long)
    table = (repo / "results" / "tables" / "painting-vision" / "test" / "shared_metrics.md").read_text()
    assert "### `shared_metrics.boundary_iou` by class" in table
    compact = (repo / "results" / "leaderboard.md").read_text()
    assert max(len(line) for line in compact.splitlines()) <= 100 and "aAcc" not in compact


def test_bootstrap_is_reproducible(repo):
    first = (repo / RESULTS / "best" / "uncertainty.json").read_bytes()
    counts = sorted(str(p.relative_to(repo)) for p in (repo / RESULTS / "best" / "counts").glob("*.parquet"))
    run(repo, "segbench", "uncertainty", "--benchmark", "painting-vision", "--counts", *counts,
        "--baseline-counts", *[c.replace("/best/", "/segformer-ade/") for c in counts],
        "--floor-counts", *[c.replace("/best/", "/floor/") for c in counts],
        "--manifest", "results/painting-vision/manifest.json", "--resamples", str(RESAMPLES), "--seed", "3",
        "--out", "again.json")
    assert (repo / "again.json").read_bytes() == first


@pytest.mark.skipif(chromium() is None and not os.environ.get("SEGBENCH_REQUIRE_CHROMIUM"),
                    reason="needs Debian's chromium (apt-get install chromium)")
def test_leaderboard_page_in_a_headless_browser(repo, tmp_path):
    found, stderr = probe(repo / "results" / "leaderboard.html", ["model", "shared_metrics.mIoU"], tmp_path)
    assert found["errors"] == [] and console_errors(stderr) == []
    (table,) = found["tables"]
    assert table["benchmark"] == "painting-vision" and table["split"] == "test"
    board = json.loads((repo / "results" / "leaderboard.json").read_text())
    assert table["initial"] == [r["model"] for r in board["groups"][0]["rows"]]
    assert table["initial"][-1] == "floor"
    ascending, descending = table["clicks"]["model"]
    assert ascending["order"] == sorted(table["initial"]) and descending["order"] == sorted(table["initial"])[::-1]
    by_miou = sorted(board["groups"][0]["rows"], key=lambda r: r["shared_metrics.mIoU"])
    ascending, descending = table["clicks"]["shared_metrics.mIoU"]
    assert ascending["order"] == [r["model"] for r in by_miou]
    assert descending["order"] == [r["model"] for r in by_miou][::-1]


def test_snakemake_report_is_self_contained(repo):
    run(repo, "snakemake", "--report", "results/report.html")
    page = (repo / "results" / "report.html").read_text()
    assert len(page) > 1_000_000
    assert "<script src=" not in page and "<link " not in page
    for name in ("iou-shared_metrics.png", "confusion-ground-truth.png", "worst-1.png", "leaderboard.html"):
        assert name in page
    assert "painting-vision (test)" in page


def test_dvc_plots(repo):
    shown = json.loads(run(repo, "dvc", "plots", "show", "--json").stdout)["data"]
    assert set(shown) == {"per-class IoU", "confusion"}
    values = shown["per-class IoU"][0]["content"]["data"]["values"]
    assert {v["model"] for v in values} == set(MODELS)
    confusion = shown["confusion"][0]["content"]["data"]["values"]
    assert {"actual", "predicted", "fraction", "pixels", "matrix"} <= set(confusion[0])


def test_nothing_to_do_after_the_run(repo):
    out = run(repo, "snakemake", "-n", "--quiet", "rules")
    assert "overlays" not in out.stdout and "uncertainty" not in out.stdout and "plot_" not in out.stdout
    assert sys.executable  # the run used this environment's tools (test_workflow.run puts them on PATH)
