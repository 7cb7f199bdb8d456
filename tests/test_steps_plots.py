"""The plots step (segbench.steps.plots): every figure of one evaluation written in one pass, under
the names core.figures gives the workflow; and the tables `dvc plots` reads gathered from the
per-evaluation CSVs."""

import csv

from counts_fixtures import write_shard
from PIL import Image

from segbench.core.figures import figure_files
from segbench.protocols.definitions import load_benchmark
from segbench.stages import plots
from segbench.steps.plots import figures, plot_data

PV = load_benchmark("painting-vision")


def test_one_pass_writes_every_figure_the_workflow_lists(tmp_path):
    # frame a: 6 wall_unpainted pixels right, 2 wall_painted taken for wall_unpainted; frame b: 4 other right
    model = [write_shard(tmp_path, "m0", ["a"], [(0, 1, 1, 6), (0, 2, 1, 2)]),
             write_shard(tmp_path, "m1", ["b"], [(0, 0, 0, 4)])]
    floor = [write_shard(tmp_path, "f0", ["a", "b"], [(0, 1, 0, 6), (0, 2, 0, 2), (1, 0, 0, 4)], model="floor")]
    written = figures(PV, model, [], floor, tmp_path / "plots")
    assert [p.name for p in written] == figure_files(PV)
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == sorted(figure_files(PV))
    assert figure_files(PV) == [
        "iou-shared_metrics.png", "iou-shared_metrics.csv", "iou-paint_state_metrics.png", "iou-paint_state_metrics.csv",
        "confusion-ground-truth.png", "confusion-ground-truth.csv", "confusion-shared_metrics.png",
        "confusion-shared_metrics.csv", "confusion-paint_state_metrics.png", "confusion-paint_state_metrics.csv",
        "fraction-paint_state_metrics.painted_coverage_mae.png"]
    for path in written:
        if path.suffix == ".png":
            with Image.open(path) as image:
                assert image.size == plots.pixel_size(path.name.split("-")[0]), path
    with open(tmp_path / "plots" / "confusion-ground-truth.csv", newline="") as handle:
        cells = {(r["actual"], r["predicted"]): (int(r["pixels"]), float(r["fraction"])) for r in csv.DictReader(handle)
                 if r["pixels"] != "0"}
    assert cells == {("other", "other"): (4, 1.0), ("wall_unpainted", "wall_unpainted"): (6, 1.0),
                     ("wall_painted", "wall_unpainted"): (2, 1.0)}
    with open(tmp_path / "plots" / "iou-paint_state_metrics.csv", newline="") as handle:
        iou = {(r["role"], r["class"]): r["iou"] for r in csv.DictReader(handle)}
    # unpainted: 6 right of 6 true and 8 predicted; painted: never predicted; the floor predicts other only
    assert float(iou["model", "wall_unpainted"]) == 0.75 and float(iou["model", "wall_painted"]) == 0.0
    assert float(iou["floor", "wall_unpainted"]) == 0.0


def test_plot_data_keeps_the_models_iou_rows_and_every_confusion_row(tmp_path):
    (tmp_path / "a_iou.csv").write_text("series,role,iou\na/wall,model,0.5\na/wall,floor,0.1\n")
    (tmp_path / "b_iou.csv").write_text("series,role,iou\nb/wall,baseline,0.4\nb/wall,model,0.75\n")
    (tmp_path / "a_cm.csv").write_text("matrix,gt,pred,fraction\na,wall,wall,1.0\n")
    (tmp_path / "b_cm.csv").write_text("matrix,gt,pred,fraction\nb,wall,floor,0.25\nb,wall,wall,0.75\n")
    plot_data([tmp_path / "a_iou.csv", tmp_path / "b_iou.csv"], [tmp_path / "a_cm.csv", tmp_path / "b_cm.csv"],
              tmp_path / "out" / "iou.csv", tmp_path / "out" / "confusion.csv")
    assert (tmp_path / "out" / "iou.csv").read_text() == "series,role,iou\na/wall,model,0.5\nb/wall,model,0.75\n"
    assert (tmp_path / "out" / "confusion.csv").read_text() == (
        "matrix,gt,pred,fraction\na,wall,wall,1.0\nb,wall,floor,0.25\nb,wall,wall,0.75\n")
