"""The public board's Ladder: a team's public score moves only when a new submission beats its
current best by more than the noise of the public part.

Blum & Hardt, "The Ladder: A Reliable Leaderboard for Machine Learning Competitions" (ICML
2015), Algorithm 2 (the parameter-free Ladder): release a new score only when it beats the
released best by more than the standard error of the two submissions' paired loss difference,
and then rounded. Adapted to a headline that is a function of counts summed over frames (not a
mean of per-sample losses) and to correlated frames:

- the paired difference is the headline of the new submission minus that of the team's current
  best, both exact, over the public units; its standard error is the standard deviation (ddof 1)
  of the same difference over `resamples` bootstrap resamples of the public units (the same
  draws for both, bootstrap.resample_weights with `seed`);
- the new score is released when the difference exceeds one standard error, with at least
  significance.MIN_UNITS public units (with fewer no difference is significant: the board
  keeps the first score), and its rounded value is above the released best (so the board never
  shows a new best below the old one);
- the released value is the exact headline rounded to the decimal place of the standard error's
  leading digit: decimals = -floor(log10(SE)), Python's round() (0.62333 with SE 0.0019 is 0.623);
  unrounded when the standard error is 0 (every resample gives the same difference);
- a team's first submission is released rounded by its own (unpaired) standard error.

Blum & Hardt round to a multiple of 1/n (n samples); rounding to the standard error's digit
gives each release about the same information whatever the number of units. Every decision is a
function of the stored counts, the resamples and the seed: replay() recomputes a team's board.
Pure computation, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .headline import UnitData, check_paired, point, replicates, spread, weights
from .significance import MIN_UNITS, too_few_units

FIRST = "first score"
NEW_BEST = "new best"
WITHIN_NOISE = "within noise of your best"
UNDEFINED = "the headline is undefined on the public part"


@dataclass(frozen=True)
class Standing:
    """A team's current best on the public board: its headline data and the score released for it."""

    best: UnitData
    score: float
    decimals: int | None


@dataclass(frozen=True)
class LadderDecision:
    """What the board does with one submission. The team and the board see `released`, `score`,
    `decimals` and `note`; `value`, `difference` and `standard_error` are exact public-part
    numbers kept to recompute the decision, never served (they would leak what the Ladder hides)."""

    released: bool  # this submission is now the team's best
    score: float | None  # the team's public score after it (None: nothing released yet)
    decimals: int | None  # the decimal places `score` was rounded to (None: unrounded)
    value: float | None  # the submission's exact public headline
    difference: float | None  # value minus the best's exact headline (None for a first submission)
    standard_error: float | None
    units: int
    note: str


def decimals_of(standard_error: float | None) -> int | None:
    """The decimal place of the standard error's leading digit; None for 0 or no estimate."""
    return None if not standard_error else -math.floor(math.log10(standard_error))


def rounded(value: float, decimals: int | None) -> float:
    return value if decimals is None else round(value, decimals)


def first_decision(new: UnitData, value: float, draws: np.ndarray) -> LadderDecision:
    se = spread(replicates(new, draws))
    places = decimals_of(se)
    return LadderDecision(True, rounded(value, places), places, value, None, se, len(new.units), FIRST)


def ladder_step(standing: Standing | None, new: UnitData, resamples: int, seed: int) -> LadderDecision:
    """The board's decision on `new`, given the team's standing before it (None: no best yet)."""
    units = len(new.units)
    value = point(new)
    kept = (None, None) if standing is None else (standing.score, standing.decimals)
    if math.isnan(value):
        return LadderDecision(False, *kept, None, None, None, units, UNDEFINED)
    draws = weights(new, resamples, seed)
    if standing is None:
        return first_decision(new, value, draws)
    check_paired(new, standing.best)
    difference = value - point(standing.best)
    se = spread(replicates(new, draws) - replicates(standing.best, draws))
    if units < MIN_UNITS:
        return LadderDecision(False, *kept, value, difference, se, units, too_few_units(units, new.unit))
    places = decimals_of(se)
    score = rounded(value, places)
    if se is not None and difference > se and score > standing.score:
        return LadderDecision(True, score, places, value, difference, se, units, NEW_BEST)
    return LadderDecision(False, *kept, value, difference, se, units, WITHIN_NOISE)


def next_standing(standing: Standing | None, new: UnitData, decision: LadderDecision) -> Standing | None:
    if not decision.released:
        return standing
    assert decision.score is not None
    return Standing(new, decision.score, decision.decimals)


def replay(submissions: Sequence[UnitData], resamples: int, seed: int) -> list[LadderDecision]:
    """A team's decisions over its submissions in the order they were scored."""
    standing: Standing | None = None
    decisions = []
    for new in submissions:
        decision = ladder_step(standing, new, resamples, seed)
        standing = next_standing(standing, new, decision)
        decisions.append(decision)
    return decisions


def default_selection(decisions: Sequence[LadderDecision], count: int) -> list[int]:
    """Positions (in submission order) of the team's last `count` released submissions: the
    Phase's default selection for the private ranking (its current best and the bests before it)."""
    released = [i for i, decision in enumerate(decisions) if decision.released]
    return released[-count:]
