"""The plots step (segbench.steps.plots): the report or metric it is asked for looked up first and
named when missing, and the tables `dvc plots` reads gathered from the per-model CSVs."""

import pytest

from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.steps.plots import plot_data, plot_fraction, plot_iou

PV = load_benchmark("painting-vision")


def test_an_unknown_report_or_fraction_metric_is_named(tmp_path):
    never = [tmp_path / "never-read.parquet"]  # refused before any counts are read
    with pytest.raises(SegbenchError, match=r"^benchmark 'painting-vision' has no report 'nope'$"):
        plot_iou(PV, "nope", never, [], [], tmp_path / "i.png", tmp_path / "i.csv")
    with pytest.raises(SegbenchError, match=r"^benchmark 'painting-vision' has no fraction_mae metric "
                                            r"'shared_metrics\.mIoU'$"):
        plot_fraction(PV, "shared_metrics.mIoU", never, [], [], tmp_path / "f.png")
    assert list(tmp_path.iterdir()) == []


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
