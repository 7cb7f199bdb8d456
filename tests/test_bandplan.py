"""Which boundary bands the scoring pass counts for a model (core/bandplan.py), on the Painting
Vision definition: its tier-1 report (any model) and its 10-class report (10-class models only)
both hold boundary metrics."""

from __future__ import annotations

import dataclasses

import pytest

from segbench.core.bandplan import band_plan
from segbench.core.boundary import MAX_LABELS
from segbench.core.labels import DROP, INVALID, LabelClass, LabelSpace
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark, load_label_space

# painting-vision-10's raw values 0..9 read into tier 1 (other 0, wall 1, window 2): the three
# walls (1, 2, 3) are wall, 8 is window, the rest other; 255 is void, 10..254 are not labels.
TIER1_OF_PV10 = [0, 1, 1, 1, 0, 0, 0, 0, 2, 0]


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("painting-vision")


def expected_lut(classes: list[int]) -> list[int]:
    return classes + [INVALID] * (255 - len(classes)) + [DROP]


def test_a_ten_class_model_counts_both_report_spaces(benchmark):
    plan = band_plan(benchmark, load_label_space("painting-vision-10"))
    assert plan.spaces == ("painting-vision-tier1", "painting-vision-10")
    assert [lut.tolist()[:256] for lut in plan.gt_luts] == [expected_lut(TIER1_OF_PV10), expected_lut(list(range(10)))]
    assert [lut.tolist()[:10] for lut in plan.pred_luts] == [TIER1_OF_PV10, list(range(10))]
    assert (plan.ratio, plan.pixels) == (0.02, None)


def test_a_tier1_model_counts_the_tier1_space_only(benchmark):
    plan = band_plan(benchmark, load_label_space("painting-vision-tier1"))
    assert plan.spaces == ("painting-vision-tier1",)
    assert plan.gt_luts[0].tolist()[:256] == expected_lut(TIER1_OF_PV10)
    assert plan.pred_luts[0].tolist()[:3] == [0, 1, 2]


def test_no_boundary_metric_or_no_band_width_plans_nothing(benchmark):
    pv10 = load_label_space("painting-vision-10")
    no_bands = tuple(
        dataclasses.replace(r, metrics=tuple(m for m in r.metrics if "boundary" not in m.fn)) for r in benchmark.reports
    )
    assert band_plan(dataclasses.replace(benchmark, reports=no_bands), pv10) is None
    assert band_plan(dataclasses.replace(benchmark, boundary=None), pv10) is None


def test_a_report_space_too_large_for_the_band_kernel_is_refused(benchmark):
    big = LabelSpace("painting-vision-tier1", tuple(LabelClass(i, f"c{i}", (0, 0, 0)) for i in range(MAX_LABELS + 1)))
    spaces = {**benchmark.spaces, "painting-vision-tier1": big}
    with pytest.raises(SegbenchError, match=f"^label space 'painting-vision-tier1': boundary bands handle at most {MAX_LABELS} classes$"):
        band_plan(dataclasses.replace(benchmark, spaces=spaces), load_label_space("painting-vision-10"))
