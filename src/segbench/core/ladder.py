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

Blum & Hardt's own parameter-free Ladder (their Ladder.jl) compares the new loss with the best's
exact loss minus s/sqrt(n), s the standard deviation of the per-sample paired differences, and
releases it unrounded; their fixed-step Ladder rounds to log10(n) decimals. The rounding to the
standard error's digit is this project's: each release tells about as much whatever the number
of units. Every decision is a function of the stored counts, the resamples and the seed:
replay() recomputes a team's board.
Pure computation, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .headline import UnitData, check_paired, point, replicates, spread, weights
from .significance import MIN_UNITS, too_few_units

FIRST = "first score"
NEW_BEST = "new best"
WITHIN_NOISE = "within noise of your best"
UNDEFINED = "the headline is undefined on the public part"


@dataclass(frozen=True)
class Standing:
    """A team's current best on the public board: its headline data and the score released for
    it; `replicates`, the best's headline on each resample, is a cache that ladder_step fills
    (None: computed when needed, e.g. for a standing rebuilt from the stored counts)."""

    best: UnitData
    score: float
    decimals: int | None
    replicates: np.ndarray | None = field(default=None, compare=False, repr=False)


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


def ladder_step(standing: Standing | None, new: UnitData, resamples: int,
                seed: int) -> tuple[LadderDecision, Standing | None]:
    """The board's decision on `new`, given the team's standing before it (None: no best yet),
    and the standing after it."""
    units = len(new.units)
    value = point(new)
    kept = (None, None) if standing is None else (standing.score, standing.decimals)
    if math.isnan(value):
        return LadderDecision(False, *kept, None, None, None, units, UNDEFINED), standing
    draws = weights(new, resamples, seed)
    new_replicates = replicates(new, draws)
    if standing is None:
        se = spread(new_replicates)
        places = decimals_of(se)
        score = rounded(value, places)
        return (LadderDecision(True, score, places, value, None, se, units, FIRST),
                Standing(new, score, places, new_replicates))
    check_paired(new, standing.best)
    best_replicates = replicates(standing.best, draws) if standing.replicates is None else standing.replicates
    difference = value - point(standing.best)
    se = spread(new_replicates - best_replicates)
    cached = Standing(standing.best, standing.score, standing.decimals, best_replicates)
    if units < MIN_UNITS:
        return LadderDecision(False, *kept, value, difference, se, units, too_few_units(units, new.unit)), cached
    places = decimals_of(se)
    score = rounded(value, places)
    if se is not None and difference > se and score > standing.score:
        return (LadderDecision(True, score, places, value, difference, se, units, NEW_BEST),
                Standing(new, score, places, new_replicates))
    return LadderDecision(False, *kept, value, difference, se, units, WITHIN_NOISE), cached


def replay(submissions: Sequence[UnitData], resamples: int, seed: int) -> list[LadderDecision]:
    """A team's decisions over its submissions in the order they were scored."""
    standing: Standing | None = None
    decisions = []
    for new in submissions:
        decision, standing = ladder_step(standing, new, resamples, seed)
        decisions.append(decision)
    return decisions


def default_selection(decisions: Sequence[LadderDecision], count: int) -> list[int]:
    """Positions (in submission order) of the team's last `count` released submissions: the
    Phase's default selection for the private ranking (its current best and the bests before it)."""
    released = [i for i, decision in enumerate(decisions) if decision.released]
    return released[-count:]
