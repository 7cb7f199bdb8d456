"""core/ladder: a hand-worked sequence of submissions with the released values, and each rule
on its own: the first score, the rounding, too few units, a standard error of 0, an undefined
headline, a rounded score not above the released one, replay and the default selection."""

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
    ladder_step,
    replay,
)
from segbench.core.metric_registry import MetricSpec
from segbench.errors import SegbenchError

SPACE = LabelSpace.from_table({"name": "two", "version": "1", "classes": [{"id": 0, "name": "a"}, {"id": 1, "name": "b"}]})
# The headline is the pixel accuracy: with 100 pixels per unit, the mean of the units' accuracies.
REPORT = ReportSpec("r", SPACE, (MetricSpec("aAcc", "pixel_accuracy", {}),), None, (), ())
RESAMPLES, SEED = 1000, 0


def submission(correct: list[int]):
    """One frame per unit w0, w1, ...; `correct[i]` of unit i's 100 pixels right."""
    frames = [f"f{i}" for i in range(len(correct))]
    stack = np.array([[[c, 100 - c], [0, 0]] for c in correct], dtype=np.int64)
    return stack_data(REPORT, "wall_id", frames, {f: f"w{i}" for i, f in enumerate(frames)}, stack)


def independent_se(new: list[int], old: list[int] | None) -> float:
    """The standard error from the documented draws, with the accuracy as a sum of counts."""
    draws = np.random.default_rng(SEED).integers(0, len(new), size=(RESAMPLES, len(new)))
    values = np.array(new)[draws].sum(axis=1) / (100 * len(new))
    if old is not None:
        values -= np.array(old)[draws].sum(axis=1) / (100 * len(new))
    return float(values.std(ddof=1))


# The hand-worked sequence (docs/server.md): six walls. Approximate standard errors by hand are
# the population standard deviation of the units' (differences of) accuracies over sqrt(6).
SEQUENCE = [
    [50, 70, 50, 70, 50, 70],  # 0.6; SE ~ 0.1 / sqrt(6) = 0.041: released 0.60 (2 decimals)
    [53, 69, 50, 70, 50, 70],  # +0.0033 vs 0.6, SE ~ 0.0051: within noise, the board keeps 0.60
    [52, 73, 52, 73, 52, 72],  # +0.0233 vs 0.6, SE ~ 0.0019: released 0.6233 rounded to 0.623
    [53, 74, 52, 73, 52, 71],  # +0.0017 vs 0.6233, SE ~ 0.0028: within noise, the board keeps 0.623
    [57, 79, 57, 79, 57, 77],  # +0.0533 vs 0.6233, SE ~ 0.0019: released 0.6767 rounded to 0.677
]
BESTS = [None, 0, 0, 2, 2]  # the best each submission is compared with


def test_the_hand_worked_sequence():
    decisions = replay([submission(c) for c in SEQUENCE], RESAMPLES, SEED)
    assert [(d.released, d.score, d.decimals, d.note) for d in decisions] == [
        (True, 0.6, 2, FIRST),
        (False, 0.6, 2, WITHIN_NOISE),
        (True, 0.623, 3, NEW_BEST),
        (False, 0.623, 3, WITHIN_NOISE),
        (True, 0.677, 3, NEW_BEST),
    ]
    assert [d.value for d in decisions] == pytest.approx([360 / 600, 362 / 600, 374 / 600, 375 / 600, 406 / 600])
    assert [d.difference for d in decisions[1:]] == pytest.approx([2 / 600, 14 / 600, 1 / 600, 32 / 600])
    assert all(d.units == 6 for d in decisions)


def test_the_standard_errors_are_those_of_the_documented_draws_and_near_the_hand_values():
    decisions = replay([submission(c) for c in SEQUENCE], RESAMPLES, SEED)
    for decision, new, best in zip(decisions, SEQUENCE, BESTS):
        assert decision.standard_error == pytest.approx(independent_se(new, None if best is None else SEQUENCE[best]))
    by_hand = [0.1 / 6**0.5, 0.0051, 0.0019, 0.0028, 0.0019]
    assert [d.standard_error for d in decisions] == pytest.approx(by_hand, rel=0.06)


def test_the_released_value_is_rounded_at_the_standard_errors_leading_digit():
    assert [decimals_of(se) for se in (0.0395, 0.0019, 0.01, 0.0999, 0.1, 2.5, 0.0, None)] == [2, 3, 2, 2, 1, 0, None, None]


def test_a_standard_error_of_zero_releases_the_exact_score():
    # every unit 5 pixels better: every resample differs by exactly 0.05
    first, second = replay([submission([50, 60, 70, 80, 90]), submission([55, 65, 75, 85, 95])], RESAMPLES, SEED)
    assert (first.score, first.decimals) == (0.7, 2)
    assert second == LadderDecision(True, 0.75, None, 0.75, pytest.approx(0.05), 0.0, 5, NEW_BEST)


def test_with_fewer_than_five_units_the_board_keeps_the_first_score():
    decisions = replay([submission([50, 70, 50, 70]), submission([90, 90, 90, 90])], RESAMPLES, SEED)
    assert (decisions[0].released, decisions[0].score, decisions[0].note) == (True, 0.6, FIRST)
    assert (decisions[1].released, decisions[1].score, decisions[1].decimals) == (False, 0.6, decisions[0].decimals)
    assert decisions[1].note == "too few units (4 wall_id units) for an interval"
    assert decisions[1].difference == pytest.approx(0.3)


def test_one_unit_first_score_is_exact():
    (only,) = replay([submission([37])], RESAMPLES, SEED)
    assert only == LadderDecision(True, 0.37, None, 0.37, None, 0.0, 1, FIRST)


def test_an_undefined_headline_releases_nothing():
    empty = stack_data(REPORT, "wall_id", ["f0", "f1"], {"f0": "w0", "f1": "w1"}, np.zeros((2, 2, 2), dtype=np.int64))
    assert ladder_step(None, empty, RESAMPLES, SEED) == LadderDecision(False, None, None, None, None, None, 2, UNDEFINED)
    standing = Standing(submission([50, 70]), 0.6, 2)
    assert ladder_step(standing, empty, RESAMPLES, SEED) == LadderDecision(False, 0.6, 2, None, None, None, 2, UNDEFINED)


def test_a_rounded_score_not_above_the_released_one_is_kept():
    # the difference (+0.0233) exceeds its SE (0.0019), but 0.623 is below a released 0.63
    standing = Standing(submission(SEQUENCE[0]), 0.63, 2)
    decision = ladder_step(standing, submission(SEQUENCE[2]), RESAMPLES, SEED)
    assert (decision.released, decision.score, decision.decimals, decision.note) == (False, 0.63, 2, WITHIN_NOISE)


def test_deterministic():
    subs = [submission(c) for c in SEQUENCE]
    assert replay(subs, RESAMPLES, SEED) == replay(subs, RESAMPLES, SEED)


def test_a_submission_on_other_frames_is_refused():
    with pytest.raises(SegbenchError, match="over different frames"):
        replay([submission([50] * 6), submission([50] * 7)], RESAMPLES, SEED)


def test_the_default_selection_is_the_last_released_submissions():
    decisions = replay([submission(c) for c in SEQUENCE], RESAMPLES, SEED)
    assert default_selection(decisions, 1) == [4]
    assert default_selection(decisions, 2) == [2, 4]
    assert default_selection(decisions, 5) == [0, 2, 4]
    assert default_selection([], 1) == []
