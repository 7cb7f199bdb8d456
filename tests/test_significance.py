"""core/significance: ties with the entry above and the "beats the floor" verdict, by the paired
interval excluding 0, and never with fewer than five units."""

import itertools
import math

import numpy as np
import pytest

from segbench.core.benchmark import ReportSpec
from segbench.core.headline import PairedDifference, paired_difference, stack_data
from segbench.core.labels import LabelSpace
from segbench.core.metric_registry import MetricSpec
from segbench.core.significance import MIN_UNITS, NO, WITHIN_NOISE, YES, floor_verdict, mark_ties, significant

SPACE = LabelSpace.from_table({"name": "two", "version": "1", "classes": [{"id": 0, "name": "a"}, {"id": 1, "name": "b"}]})
REPORT = ReportSpec("r", SPACE, (MetricSpec("aAcc", "pixel_accuracy", {}),), None, (), ())


def submission(correct: list[int]):
    """One frame per unit; `correct[i]` of unit i's 100 pixels right (the headline: pixel accuracy)."""
    frames = [f"f{i}" for i in range(len(correct))]
    stack = np.array([[[c, 100 - c], [0, 0]] for c in correct], dtype=np.int64)
    return stack_data(REPORT, "drive", frames, {f: f"d{i}" for i, f in enumerate(frames)}, stack)


def paired(difference, low, high, units=6):
    return PairedDifference(difference, None, low, high, units, "drive")


@pytest.mark.parametrize(("difference", "low", "high", "expected"), [
    (0.05, 0.01, 0.09, YES),
    (-0.05, -0.09, -0.01, NO),
    (0.05, -0.01, 0.09, WITHIN_NOISE),   # the interval includes 0
    (-0.05, -0.09, 0.01, WITHIN_NOISE),
    (0.05, 0.0, 0.09, WITHIN_NOISE),     # touching 0 is including it
    (-0.01, 0.01, 0.09, WITHIN_NOISE),   # an interval above 0 around a point below it: no call
    (None, None, None, WITHIN_NOISE),    # undefined
])
def test_the_floor_verdict(difference, low, high, expected):
    assert floor_verdict(paired(difference, low, high)) == expected


def test_with_fewer_than_five_units_no_interval_is_significant():
    assert MIN_UNITS == 5
    assert floor_verdict(paired(0.5, 0.4, 0.6, units=4)) == "too few units (4 drive units) for an interval"
    assert not significant(paired(0.5, 0.4, 0.6, units=4))
    assert significant(paired(0.5, 0.4, 0.6, units=5))


def test_the_distinct_resamples_of_n_units():
    # docs/metrics.md: a resample is a multiset of n of the n units, C(2n - 1, n) of them
    for n, count in [(2, 3), (3, 10), (4, 35), (5, 126)]:
        assert len(set(itertools.combinations_with_replacement(range(n), n))) == count == math.comb(2 * n - 1, n)


def test_ties_with_the_entry_above():
    ranked = [
        submission([80, 80, 80, 80, 80, 80]),  # 0.80
        submission([70, 72, 70, 72, 70, 72]),  # 0.71: every unit 8 or 10 below: not tied
        submission([72, 70, 72, 70, 70, 70]),  # 0.7067: +2 / -2 per unit around it: tied
        submission([60, 60, 60, 60, 60, 60]),  # 0.60: every unit 10 or 12 below: not tied
        submission([60, 60, 60, 60, 60, 60]),  # the same: difference 0 on every resample, tied
    ]
    assert mark_ties(ranked, 1000, 0) == [False, False, True, False, True]
    third = paired_difference(ranked[1], ranked[2], 1000, 0)
    assert third.low < 0 < third.high and third.difference == pytest.approx(0.71 - 424 / 600)


def test_with_few_units_every_entry_is_tied_with_the_one_above():
    ranked = [submission([90, 90, 90, 90]), submission([10, 10, 10, 10])]
    assert mark_ties(ranked, 200, 0) == [False, True]
    assert mark_ties(ranked[:1], 200, 0) == [False]
