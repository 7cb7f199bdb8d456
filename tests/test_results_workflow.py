"""End-to-end: the shared run of the embedded default (conftest.embedded_run, which no test
changes), and everything this run must have produced for people to look at:
plots, overlays, intervals, the HTML leaderboard (in a real headless browser), the Snakemake
report and the DVC plots."""

from __future__ import annotations

import html
import json
import os
import re
import sys

import pytest
import yaml
from PIL import Image

from browser import chromium, console_errors, probe
from workflow_helpers import run

from segbench.stages import overlays, plots

pytestmark = pytest.mark.workflow
RESULTS = "results/painting-vision/test"
MODELS = ("best", "segformer-ade", "best-onnx", "deeplab-pv")


@pytest.fixture(scope="module")
def repo(embedded_run):
    return embedded_run.repo


@pytest.fixture(scope="module")
def config(repo) -> dict:
    return yaml.safe_load((repo / "config" / "config.yaml").read_text())


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
        assert {p.name for p in folder.glob("*.png")} == set(expected)
        for name, kind in expected.items():
            path = folder / name
            assert path.stat().st_size > 5000, path
            assert size(path) == plots.pixel_size(kind), path


def test_overlays_of_the_worst_and_best_frames(repo, config):
    per_kind = config["plots"]["overlay_frames"]
    for model in MODELS:
        folder = repo / RESULTS / model / "overlays"
        assert sorted(p.name for p in folder.glob("*.png")) == sorted(
            f"{kind}-{rank}.png" for kind in ("best", "worst") for rank in range(1, per_kind + 1))
        for path in folder.glob("*.png"):
            assert size(path) == overlays.pixel_size() and path.stat().st_size > 20000
        chosen = json.loads((folder / "frames.json").read_text())["frames"]
        assert [c["kind"] for c in chosen] == ["worst"] * per_kind + ["best"] * per_kind
        worst, best = chosen[0], chosen[-1]
        assert worst["miou"] <= best["miou"]
        assert worst["wall_id"] == worst["frame_id"].split("_")[0]


def test_intervals_beside_the_records(repo, config):
    board = json.loads((repo / "results" / "leaderboard.json").read_text())
    (group,) = [g for g in board["groups"] if g["benchmark"] == "painting-vision"]
    rows = {r["model"]: r for r in group["rows"]}
    for model in (*MODELS, "floor"):
        document = json.loads((repo / RESULTS / model / "uncertainty.json").read_text())
        assert document["resamples"] == config["bootstrap"]["resamples"] and document["seed"] == config["bootstrap"]["seed"]
        assert document["group_key"] == "wall_id"
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


def test_slices_of_the_embedded_default(repo):
    # Painting Vision's test walls: w07 lit from the left, w08, w09, w12 from the right.
    document = json.loads((repo / RESULTS / "best" / "slices.json").read_text())
    left, right = document["slicings"]["lighting"]["slices"]
    assert (left["slice"], left["frames"], left["units"]) == ("lit_from_left", 4, 1)
    assert left["interval_note"].startswith("1 wall_id unit: too few to resample")
    assert left["intervals"]["shared_metrics.mIoU"]["low"] is None
    assert (right["slice"], right["frames"], right["units"], right["interval_note"]) == ("lit_from_right", 12, 3, None)
    miou = right["intervals"]["shared_metrics.mIoU"]
    assert miou["low"] <= right["results"]["shared_metrics"]["mIoU"] == miou["value"] <= miou["high"]
    assert right["comparisons"]["baseline"]["against"] == "segformer-ade"
    # IDD's two test drives are one per part: values, no intervals
    idd = json.loads((repo / "results/idd20k-icvgip2020/test/idd-best/slices.json").read_text())
    assert [(s["slice"], s["units"]) for s in idd["slicings"]["part"]["slices"]] == [("I", 1), ("II", 1)]
    board = json.loads((repo / "results" / "leaderboard.json").read_text())
    (group,) = [g for g in board["groups"] if g["benchmark"] == "painting-vision"]
    best = next(r for r in group["rows"] if r["model"] == "best")
    assert best["slices"] == document["slicings"]
    assert any(line.startswith("painting-vision,test,best,lighting,lit_from_right,12,3,shared_metrics,mIoU,,")
               for line in (repo / "results" / "tables" / "slices.csv").read_text().splitlines())
    assert 'class="slice-selector"' in (repo / "results" / "leaderboard.html").read_text()


def test_bootstrap_is_reproducible(repo, config, tmp_path):
    first = (repo / RESULTS / "best" / "uncertainty.json").read_bytes()
    counts = sorted(str(p.relative_to(repo)) for p in (repo / RESULTS / "best" / "counts").glob("*.parquet"))
    run(repo, "segbench", "uncertainty", "--benchmark", "painting-vision", "--counts", *counts,
        "--baseline-counts", *[c.replace("/best/", "/segformer-ade/") for c in counts],
        "--floor-counts", *[c.replace("/best/", "/floor/") for c in counts],
        "--frames", "results/painting-vision/frames.json", "--resamples", str(config["bootstrap"]["resamples"]),
        "--seed", str(config["bootstrap"]["seed"]), "--out", str(tmp_path / "again.json"))  # the run stays as it is
    assert (tmp_path / "again.json").read_bytes() == first


@pytest.mark.skipif(chromium() is None and not os.environ.get("SEGBENCH_REQUIRE_CHROMIUM"),
                    reason="needs Debian's chromium (apt-get install chromium)")
def test_leaderboard_page_in_a_headless_browser(repo, tmp_path):
    # Painting Vision's group (the other benchmarks' tables have other headline columns)
    found, stderr = probe(repo / "results" / "leaderboard.html", ["model", "shared_metrics.mIoU"], tmp_path,
                          'table.leaderboard[data-benchmark="painting-vision"]')
    assert found["errors"] == [] and console_errors(stderr) == []
    (table,) = found["tables"]
    assert table["benchmark"] == "painting-vision"
    assert table["split"] == "test"
    board = json.loads((repo / "results" / "leaderboard.json").read_text())
    (group,) = [g for g in board["groups"] if g["benchmark"] == "painting-vision"]
    assert table["initial"] == [r["model"] for r in group["rows"]]
    assert table["initial"][-1] == "floor"
    ascending, descending = table["clicks"]["model"]
    assert ascending["order"] == sorted(table["initial"]) and descending["order"] == sorted(table["initial"])[::-1]
    # by value (models of equal mIoU, e.g. best and its ONNX export, in either order)
    miou = {r["model"]: r["shared_metrics.mIoU"] for r in group["rows"]}
    ascending, descending = table["clicks"]["shared_metrics.mIoU"]
    assert sorted(ascending["order"]) == sorted(descending["order"]) == sorted(miou)
    assert [miou[m] for m in ascending["order"]] == sorted(miou.values())
    assert [miou[m] for m in descending["order"]] == sorted(miou.values(), reverse=True)


def test_snakemake_report_is_self_contained(repo, tmp_path):
    run(repo, "snakemake", "--report", str(tmp_path / "report.html"))  # outside the shared run's results
    page = (tmp_path / "report.html").read_text()
    assert len(page) > 1_000_000
    assert "<script src=" not in page and "<link " not in page
    for name in ("iou-shared_metrics.png", "confusion-ground-truth.png", "worst-1.png", "leaderboard.html"):
        assert name in page
    assert "painting-vision (test)" in page
    # It opens on the results: the landing text (the Snakefile's report: workflow/report/workflow.rst) is the
    # results table a run prints, the rule graph beside it.
    landing = html.unescape(json.loads(re.search(r"var workflow_desc = (.*);\n", page).group(1)))
    assert landing.startswith('<div class="document" id="results">\n<h1 class="title">Results</h1>')
    assert (repo / "results" / "leaderboard.md").read_text().strip() in landing


def test_dvc_plots(repo, config):
    shown = json.loads(run(repo, "dvc", "plots", "show", "--json").stdout)["data"]
    assert set(shown) == {"per-class IoU", "confusion"}
    values = shown["per-class IoU"][0]["content"]["data"]["values"]
    assert {v["model"] for v in values} == {m for b in config["benchmarks"].values() for m in b["models"]}
    confusion = shown["confusion"][0]["content"]["data"]["values"]
    assert {"actual", "predicted", "fraction", "pixels", "matrix"} <= set(confusion[0])


def test_nothing_to_do_after_the_run(repo):
    out = run(repo, "snakemake", "-n", "--quiet", "rules")
    assert "overlays" not in out.stdout and "uncertainty" not in out.stdout and "figures" not in out.stdout
    assert sys.executable  # the run used this environment's tools (workflow_helpers.run puts them on PATH)
