"""core/ladder: a hand-worked sequence of submissions with the released values, and each rule
on its own: the step (the jackknife standard error, Blum & Hardt's s/sqrt(n) for a mean of
per-unit values), the comparison with the released score, the first score, the rounding, too
few units, a standard error of 0, an undefined headline, replay and the default selection."""

import math

import numpy as np
import pytest

from segbench.core.benchmark import ReportSpec
from segbench.core.headline import stack_data
from segbench.core.labels import LabelSpace
from segbench.core.ladder import (
    FIRST,
    NEW_BEST,
    UNDEFINED,
    WITHIN_NOISE,
    LadderDecision,
    Standing,
    decimals_of,
    default_selection,
    jackknife_error,
    ladder_step,
    left_out,
    replay,
)
from segbench.core.metric_registry import MetricSpec
from segbench.errors import SegbenchError

SPACE = LabelSpace.from_table({"name": "two", "version": "1", "classes": [{"id": 0, "name": "a"}, {"id": 1, "name": "b"}]})
# The headline is the pixel accuracy: with 100 pixels per unit, the mean of the units' accuracies.
REPORT = ReportSpec("r", SPACE, (MetricSpec("aAcc", "pixel_accuracy", {}),), None, (), ())


def submission(correct: list[int], pixels: list[int] | None = None):
    """One frame per unit w0, w1, ...; `correct[i]` of unit i's `pixels[i]` (default 100) right."""
    pixels = pixels or [100] * len(correct)
    frames = [f"f{i}" for i in range(len(correct))]
    stack = np.array([[[c, p - c], [0, 0]] for c, p in zip(correct, pixels)], dtype=np.int64)
    return stack_data(REPORT, "wall_id", frames, {f: f"w{i}" for i, f in enumerate(frames)}, stack)


def by_hand_se(new: list[int], old: list[int] | None) -> float:
    """Blum & Hardt's step: the sample standard deviation (ddof 1) of the units' (paired
    differences of) accuracies over sqrt(n)."""
    values = np.array(new) / 100 - (0 if old is None else np.array(old) / 100)
    return float(values.std(ddof=1) / math.sqrt(len(new)))


# The hand-worked sequence (docs/server.md): six walls. SE: the sample standard deviation of the
# units' (differences of) accuracies over sqrt(6); d: the exact score minus the larger of the
# released score and the best's exact one.
SEQUENCE = [
    [50, 70, 50, 70, 50, 70],  # 0.6; SE sqrt(6 * 0.1^2 / 5) / sqrt(6) = 0.0447: released 0.60 (2 decimals)
    [53, 69, 50, 70, 50, 70],  # d = 0.60333 - 0.60 = +0.0033, SE 0.0056: within noise, the board keeps 0.60
    [52, 73, 52, 73, 52, 72],  # vs #1: d = 0.62333 - 0.60 = +0.0233, SE 0.0021: released, rounded to 0.623
    [53, 74, 52, 73, 52, 71],  # vs #3: d = 0.625 - 0.62333 = +0.0017, SE 0.0031: within noise, the board keeps 0.623
    [57, 79, 57, 79, 57, 77],  # vs #3: d = 0.67667 - 0.62333 = +0.0533, SE 0.0021: released, rounded to 0.677
]
BESTS = [None, 0, 0, 2, 2]  # the best each submission is compared with


def test_the_hand_worked_sequence():
    decisions = replay([submission(c) for c in SEQUENCE])
    assert [(d.released, d.score, d.decimals, d.note) for d in decisions] == [
        (True, 0.6, 2, FIRST),
        (False, 0.6, 2, WITHIN_NOISE),
        (True, 0.623, 3, NEW_BEST),
        (False, 0.623, 3, WITHIN_NOISE),
        (True, 0.677, 3, NEW_BEST),
    ]
    assert [d.value for d in decisions] == pytest.approx([360 / 600, 362 / 600, 374 / 600, 375 / 600, 406 / 600])
    assert [d.difference for d in decisions[1:]] == pytest.approx(
        [2 / 600, 14 / 600, 1 / 600, 32 / 600])
    assert all(d.units == 6 for d in decisions)


def test_the_standard_errors_are_blum_and_hardts_step():
    decisions = replay([submission(c) for c in SEQUENCE])
    for decision, new, best in zip(decisions, SEQUENCE, BESTS):
        assert decision.standard_error == pytest.approx(by_hand_se(new, None if best is None else SEQUENCE[best]))
    assert [d.standard_error for d in decisions] == pytest.approx([0.04472, 0.005578, 0.002108, 0.003073, 0.002108],
                                                                  abs=2e-6)


def test_the_jackknife_of_a_ratio_headline():
    # unequal units: the accuracy is a ratio of sums, no mean of the units' accuracies; its
    # jackknife from the leave-one-out ratios written out
    correct, pixels = [30, 80, 45, 90, 10], [50, 100, 60, 150, 40]
    data = submission(correct, pixels)
    loo = [(sum(correct) - c) / (sum(pixels) - p) for c, p in zip(correct, pixels)]
    assert left_out(data) == pytest.approx(loo)
    n = len(loo)
    expected = math.sqrt((n - 1) / n * sum((v - sum(loo) / n) ** 2 for v in loo))
    assert jackknife_error(left_out(data), n) == pytest.approx(expected)
    assert jackknife_error(np.array([0.5, np.nan]), 2) is None


def test_the_released_value_is_rounded_at_the_standard_errors_leading_digit():
    assert [decimals_of(se) for se in (0.0395, 0.0019, 0.01, 0.0999, 0.1, 2.5, 0.0, None)] == [2, 3, 2, 2, 1, 0, None, None]


def test_a_standard_error_of_zero_releases_the_exact_score():
    # every unit 5 pixels better: every resample differs by exactly 0.05
    first, second = replay([submission([50, 60, 70, 80, 90]), submission([55, 65, 75, 85, 95])])
    assert (first.score, first.decimals) == (0.7, 2)
    assert second == LadderDecision(True, 0.75, None, 0.75, pytest.approx(0.05), 0.0, 5, NEW_BEST)


def test_with_fewer_than_five_units_the_board_keeps_the_first_score():
    decisions = replay([submission([50, 70, 50, 70]), submission([90, 90, 90, 90])])
    assert (decisions[0].released, decisions[0].score, decisions[0].note) == (True, 0.6, FIRST)
    assert (decisions[1].released, decisions[1].score, decisions[1].decimals) == (False, 0.6, decisions[0].decimals)
    assert decisions[1].note == "too few units (4 wall_id units) for an interval"
    assert decisions[1].difference == pytest.approx(0.3)


def test_one_unit_first_score_is_exact():
    (only,) = replay([submission([37])])  # no unit to leave out: no standard error, nothing rounded
    assert only == LadderDecision(True, 0.37, None, 0.37, None, None, 1, FIRST)


def test_an_undefined_headline_releases_nothing():
    empty = stack_data(REPORT, "wall_id", ["f0", "f1"], {"f0": "w0", "f1": "w1"}, np.zeros((2, 2, 2), dtype=np.int64))
    assert ladder_step(None, empty) == (LadderDecision(False, None, None, None, None, None, 2, UNDEFINED), None)
    standing = Standing(submission([50, 70]), 0.6, 2)
    assert ladder_step(standing, empty) == (LadderDecision(False, 0.6, 2, None, None, None, 2, UNDEFINED), standing)


def test_a_new_score_must_beat_both_the_released_score_and_the_bests_exact_one():
    # Blum & Hardt compare with the released R_{t-1}; a release rounded to its own step may sit
    # above or below the best's exact score (0.6 in both standings here), and both bounds hold
    above = Standing(submission(SEQUENCE[0]), 0.63, 2)  # #3: +0.0233 on the exact best (SE 0.0021), -0.0067 on 0.63
    decision, after = ladder_step(above, submission(SEQUENCE[2]))
    assert (decision.released, decision.score, decision.decimals, decision.note) == (False, 0.63, 2, WITHIN_NOISE)
    assert decision.difference == pytest.approx(374 / 600 - 0.63)
    assert after == above
    below = Standing(submission(SEQUENCE[0]), 0.59, 2)  # #2: +0.0133 on 0.59 but +0.0033 on the exact best (SE 0.0056)
    decision, after = ladder_step(below, submission(SEQUENCE[1]))
    assert (decision.released, decision.score, decision.decimals, decision.note) == (False, 0.59, 2, WITHIN_NOISE)
    assert decision.difference == pytest.approx(2 / 600)
    # the best itself again: SE 0 and its exact score above the released 0.59; nothing released
    decision, _ = ladder_step(below, submission(SEQUENCE[0]))
    assert (decision.released, decision.score, decision.difference, decision.standard_error) == (False, 0.59, 0.0, 0.0)


def test_a_standing_rebuilt_from_the_stored_best_decides_as_the_cached_one():
    # what a server does: keep the best submission and its released score, rebuild the rest
    subs = [submission(c) for c in SEQUENCE]
    standing, best, decisions = None, None, []
    for new in subs:
        decision, standing = ladder_step(standing, new)
        decisions.append(decision)
        best = new if decision.released else best
        standing = Standing(best, decision.score, decision.decimals)
    assert decisions == replay(subs)


def test_deterministic():
    subs = [submission(c) for c in SEQUENCE]
    assert replay(subs) == replay(subs)


def test_a_submission_on_other_frames_is_refused():
    with pytest.raises(SegbenchError, match="over different frames"):
        replay([submission([50] * 6), submission([50] * 7)])


def test_the_default_selection_is_the_last_released_submissions():
    decisions = replay([submission(c) for c in SEQUENCE])
    assert default_selection(decisions, 1) == [4]
    assert default_selection(decisions, 2) == [2, 4]
    assert default_selection(decisions, 5) == [0, 2, 4]
    assert default_selection([], 1) == []
