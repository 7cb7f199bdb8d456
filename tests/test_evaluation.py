"""A benchmark's reports from counts (segbench.core.evaluation)."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.core.confusion import FrameCounts, joint_histogram
from segbench.core.evaluation import evaluate, null_report
from segbench.core.labels import LabelSpace
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark

PV = load_benchmark("painting-vision")


def test_null_report_lists_every_output():
    paint = next(r for r in PV.reports if r.key == "paint_state_metrics")
    report = null_report(paint)
    assert list(report)[:3] == ["painted_coverage_mae", "painted_coverage_frames", "mIoU_full_10class"]
    assert set(report.values()) == {None} and len(report) == len(paint.metrics) + 1


def test_a_model_space_reaching_no_report_is_refused():
    benchmark = load_benchmark("idd20k-icvgip2020")
    level1 = benchmark.space("idd-level1")
    counts = FrameCounts.from_histograms(["f"], [joint_histogram(np.zeros((2, 2), np.uint8), np.zeros((2, 2), np.uint8))])
    results = evaluate(benchmark, counts, level1)  # a level-1 model: the level-1 reports only
    assert results["level3"]["mIoU_nan_skipping"] is None and results["level2"]["mIoU_nan_skipping"] is None
    assert results["level1_corrected"]["mIoU_nan_skipping"] == 1.0
    other = LabelSpace.from_table({"name": "t", "classes": [{"id": 0, "name": "thing"}]})
    with pytest.raises(SegbenchError, match=r"predictions in label space 't' map into none of its reports \(level3: idd-level3-misc"):
        evaluate(benchmark, counts, other)
