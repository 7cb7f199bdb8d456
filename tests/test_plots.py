"""Figures and overlays from small synthetic counts: sizes, determinism, the numbers behind them."""

from __future__ import annotations

import numpy as np
import pytest
from counts_fixtures import counts, floored
from PIL import Image

from segbench.core.bootstrap import Subject
from segbench.protocols.definitions import known_benchmarks, load_benchmark
from segbench.stages import overlays, plots

PV = load_benchmark("painting-vision")
TEN = PV.ground_truth
ADE = PV.space("ade20k")


def subjects():
    return {"model": Subject("m", counts(), TEN), "baseline": None, "floor": Subject("floor", counts(floored()), TEN)}


def png_size(path):
    with Image.open(path) as image:
        assert image.format == "PNG"
        return image.size


def test_iou_rows_and_bars(tmp_path):
    report = PV.reports[0]
    rows = plots.iou_rows(PV, report, subjects())
    model = {r["class"]: r["iou"] for r in rows if r["role"] == "model"}
    floor = {r["class"]: r["iou"] for r in rows if r["role"] == "floor"}
    # Tier 1 matrix of FRAMES, checked by hand in test_bootstrap: other 120/(130+55)...
    assert model["wall"] == pytest.approx(185 / (215 + 185 - 185), abs=1e-6)
    assert floor["wall"] == 0.0 and floor["window"] == 0.0
    path = tmp_path / "iou.png"
    plots.render_iou(report, rows, "title", path)
    assert path.stat().st_size > 1000 and png_size(path) == plots.pixel_size("iou")


def test_figures_are_deterministic(tmp_path):
    report = PV.reports[0]
    rows = plots.iou_rows(PV, report, subjects())
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    plots.render_iou(report, rows, "title", a)
    plots.render_iou(report, rows, "title", b)
    assert a.read_bytes() == b.read_bytes()


def test_confusion_in_each_space(tmp_path):
    subject = subjects()["model"]
    for space in (TEN, PV.reports[0].space):
        confusion = plots.confusion_in(PV, space, subject)
        assert confusion.rows == confusion.cols == space.names
        normalised = plots.row_normalised(confusion.matrix)
        present = confusion.matrix.sum(axis=1) > 0
        assert np.allclose(normalised[present].sum(axis=1), 1.0)
        path = tmp_path / f"{space.name}.png"
        plots.render_confusion(confusion, "t", path)
        assert png_size(path) == plots.pixel_size("confusion")
    tier1 = plots.confusion_in(PV, PV.reports[0].space, subject)
    assert tier1.matrix.tolist() == [[120, 0, 10], [30, 185, 0], [25, 0, 55]]
    rows = plots.confusion_rows(tier1)
    assert {"actual": "wall", "predicted": "other", "pixels": 30, "fraction": round(30 / 215, 6)} in rows


def test_confusion_shows_the_pixels_predicted_as_no_class_when_there_are_any():
    tier1 = PV.reports[0].space
    voided = counts([("w1_a", "w1", {(1, 255): 6, (1, 1): 2, (8, 8): 4, (255, 255): 3})])
    confusion = plots.confusion_in(PV, tier1, Subject("m", voided, TEN))
    assert confusion.cols == [*tier1.names, plots.NO_CLASS_COLUMN]
    assert confusion.matrix.tolist() == [[0, 0, 0, 0], [0, 2, 0, 6], [0, 0, 4, 0]]
    assert {"actual": "wall", "predicted": plots.NO_CLASS_COLUMN, "pixels": 6, "fraction": 0.75} \
        in plots.confusion_rows(confusion)


def test_confusion_of_a_model_in_another_space_shows_its_own_classes():
    # An ADE20K model cannot be mapped into the 10-class ground truth: its own classes are the columns.
    ade_counts = counts([("w1_a", "w1", {(1, 0): 10, (8, 8): 5, (0, 3): 7})])
    confusion = plots.confusion_in(PV, TEN, Subject("ade", ade_counts, ADE))
    assert confusion.rows == TEN.names and confusion.cols == [ADE.names[i] for i in (0, 3, 8)]
    assert confusion.matrix[1, 0] == 10


def test_fraction_points_match_the_metric(tmp_path):
    report = PV.reports[1]
    spec = next(m for m in report.metrics if m.fn == "fraction_mae")
    ids, gt, pred = plots.fraction_points(PV, report, spec, subjects()["model"])
    assert ids == ["w1_a", "w1_b", "w2_a", "w3_a", "w3_b"]
    assert gt[0] == pytest.approx(0.0) and pred[0] == pytest.approx(10 / 60)
    assert gt[2] == pytest.approx(1.0) and pred[2] == pytest.approx(1.0)  # 30 painted, 30 lost to other
    from segbench.core.evaluation import evaluate

    mae = evaluate(PV, counts(), TEN)["paint_state_metrics"]["painted_coverage_mae"]
    assert float(np.abs(pred - gt).mean()) == pytest.approx(mae)
    assert plots.fraction_points(PV, report, spec, Subject("ade", counts(), ADE)) is None  # not applicable
    path = tmp_path / "f.png"
    plots.render_fraction({"model": ("m", gt, pred)}, spec, "t", path)
    assert png_size(path) == plots.pixel_size("fraction")


def test_not_applicable_keeps_the_size(tmp_path):
    path = tmp_path / "na.png"
    plots.render_not_applicable("confusion", "t", "why", path)
    assert png_size(path) == plots.pixel_size("confusion")


def test_worst_and_best_frames():
    subject = subjects()["model"]
    report = overlays.ranking_report(PV, subject)
    assert report.key == "shared_metrics"
    scores = overlays.frame_scores(PV, report, subject)
    by_id = {s.frame_id: s for s in scores}
    assert by_id["w2_a"].miou == pytest.approx((40 / 70 + 30 / 60) / 2)  # other: 40/(40+30); wall 30/60
    worst, best = overlays.pick(scores, 2)
    ordered = sorted(scores, key=lambda s: s.miou)
    assert [s.frame_id for s in worst] == [s.frame_id for s in ordered[:2]]
    assert [s.frame_id for s in best] == [s.frame_id for s in ordered[::-1][:2]]


def test_overlay_panels_and_void(tmp_path):
    subject = subjects()["model"]
    report = PV.reports[0]
    gt = np.zeros((60, 80), np.uint8)
    gt[:, 40:] = 2  # wall_painted
    gt[:10] = 255  # void
    pred = gt.copy()
    pred[gt == 255] = 0
    pred[30:, :20] = 8  # window where there is other
    image = np.full((120, 160, 3), 200, np.uint8)  # at twice the label's size
    frame_panels = overlays.panels(PV, report, subject, image, gt, pred)
    assert [title.split(" ")[0] for title, _ in frame_panels] == ["image", "ground", "prediction", "error"]
    _, gt_rgb = frame_panels[1]
    _, error = frame_panels[3]
    assert gt_rgb.shape == (60, 80, 3)
    void_colours = {tuple(c) for c in gt_rgb[:10].reshape(-1, 3)}
    assert void_colours == {tuple(overlays.HATCH[0]), tuple(overlays.HATCH[1])}  # hatched, not a class colour
    assert tuple(gt_rgb[20, 60]) == TEN.classes[2].color
    assert tuple(error[40, 5]) == tuple(overlays.WRONG) and tuple(error[40, 60]) != tuple(overlays.WRONG)
    path = tmp_path / "overlay.png"
    score = overlays.frame_scores(PV, report, subject)[0]
    text = overlays.caption("worst", 1, subject, score, report, "w1")
    assert score.frame_id in text and f"{score.miou:.3f}" in text
    overlays.render(frame_panels, text, overlays.legend_of(PV, gt), path)
    assert png_size(path) == overlays.pixel_size() and path.stat().st_size > 1000


@pytest.mark.parametrize("name", known_benchmarks())
def test_every_benchmark_gets_its_figures_and_intervals(name, tmp_path):
    """Nothing here is Painting-Vision-specific: reports, spaces, group key come from the definition."""
    from segbench.core.bootstrap import bootstrap
    from segbench.core.confusion import FrameCounts

    benchmark = load_benchmark(name)
    space = benchmark.ground_truth
    rng = np.random.default_rng(0)
    histograms = []
    for _ in range(6):
        hist = np.zeros((256, 256), np.int64)
        cells = (rng.choice(space.allowed_values(), 40), rng.choice(np.arange(space.size), 40))
        np.add.at(hist, cells, rng.integers(1, 100, 40))
        histograms.append(hist)
    ids = [f"f{i}" for i in range(6)]
    subject = Subject("m", FrameCounts.from_histograms(ids, histograms), space)
    document = bootstrap(benchmark, subject, {f: f"g{i % 3}" for i, f in enumerate(ids)}, 20, 0, {"floor": subject})
    assert document["group_key"] == benchmark.group_key and document["groups"] == 3
    assert all(v["difference"] == 0 for v in document["comparisons"]["floor"]["metrics"].values()
               if v["difference"] is not None)
    for report in benchmark.reports:
        assert plots.iou_rows(benchmark, report, {"model": subject})
        confusion = plots.confusion_in(benchmark, report.space, subject)
        assert confusion.matrix.shape == (report.space.size, report.space.size)
    path = tmp_path / "gt.png"
    plots.render_confusion(plots.confusion_in(benchmark, space, subject), "t", path)
    assert png_size(path) == plots.pixel_size("confusion")
    for report, spec in plots.fraction_specs(benchmark):
        assert plots.fraction_points(benchmark, report, spec, subject) is not None
    assert overlays.frame_scores(benchmark, overlays.ranking_report(benchmark, subject), subject)
