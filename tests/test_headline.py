"""core/headline: one submission's headline over chosen frames, per unit, and the paired
difference of two, equal to the full bootstrap's numbers for the same metric and draws."""

import numpy as np
import pytest
from counts_fixtures import FRAMES, PV10, counts, floored

from segbench.core.bootstrap import Subject, bootstrap, point_values, prepare
from segbench.core.headline import headline_data, paired_difference, point, replicates, weights
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark, load_label_space

PV = load_benchmark("painting-vision")
GROUPS = {f: w for f, w, _ in FRAMES}


def test_the_headline_and_its_units():
    data = headline_data(PV, counts(), PV10, GROUPS)
    assert (data.key, data.unit, data.units) == ("shared_metrics.mIoU", "wall_id", ("w1", "w2", "w3"))
    assert data.frame_ids == ("w1_a", "w1_b", "w2_a", "w3_a", "w3_b")
    assert [m.key for m in data.data.report.metrics] == ["mIoU"]
    assert point(data) == point_values(prepare(PV, counts(), PV10, GROUPS)[1])["shared_metrics.mIoU"]


def test_the_headline_of_some_frames_is_that_of_their_counts_alone():
    chosen = ["w3_b", "w1_a", "w3_a"]
    data = headline_data(PV, counts(), PV10, GROUPS, chosen)
    assert (data.units, data.frame_ids) == (("w1", "w3"), ("w1_a", "w3_a", "w3_b"))
    alone = [f for f in FRAMES if f[0] in chosen]
    assert point(data) == point_values(prepare(PV, counts(alone), PV10, GROUPS)[1])["shared_metrics.mIoU"]


def test_the_frame_order_of_the_counts_does_not_matter():
    shuffled = counts(FRAMES[::-1])
    a, b = headline_data(PV, shuffled, PV10, GROUPS), headline_data(PV, counts(), PV10, GROUPS)
    assert a.frame_ids == b.frame_ids
    assert np.array_equal(a.data.per_group, b.data.per_group)


def test_the_paired_difference_is_the_bootstraps():
    model, floor = headline_data(PV, counts(), PV10, GROUPS), headline_data(PV, counts(floored()), PV10, GROUPS)
    paired = paired_difference(model, floor, 200, 7)
    full = bootstrap(PV, Subject("m", counts(), PV10), GROUPS, 200, 7,
                     {"floor": Subject("f", counts(floored()), PV10)})["comparisons"]["floor"]["metrics"]["shared_metrics.mIoU"]
    assert (paired.difference, paired.low, paired.high) == (full["difference"], full["low"], full["high"])
    draws = weights(model, 200, 7)
    assert paired.standard_error == pytest.approx(np.std(replicates(model, draws) - replicates(floor, draws), ddof=1))
    assert (paired.units, paired.unit) == (3, "wall_id")


def test_submissions_over_different_frames_are_not_paired():
    whole = headline_data(PV, counts(), PV10, GROUPS)
    part = headline_data(PV, counts(), PV10, GROUPS, ["w1_a", "w2_a"])
    with pytest.raises(SegbenchError, match=r"^the two submissions' shared_metrics.mIoU are over different frames "
                                            r"\(2 and 5\); no paired comparison$"):
        paired_difference(part, whole, 10, 0)


def test_a_headline_that_does_not_apply_to_the_model_is_refused():
    with pytest.raises(SegbenchError, match="does not apply to a model predicting 'easyportrait-9'"):
        headline_data(PV, counts(), load_label_space("easyportrait-9"), GROUPS)
