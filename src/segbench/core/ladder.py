"""The public board's Ladder: a team's public score moves only when a new submission beats its
released score by more than the noise of the public part.

Blum & Hardt, "The Ladder: A Reliable Leaderboard for Machine Learning Competitions" (ICML
2015). Their Ladder (Algorithm 1) releases a new score only when it beats the previously
released score R_{t-1} by more than the step eta, and then releases the new score rounded to
eta; their parameter-free Ladder (Algorithm 2, Ladder.jl's FreeLadder) takes as the step s/sqrt(n),
s the sample standard deviation (ddof 1) of the per-sample loss differences of the new
submission and the current best (of the submission's own losses for a first one), n the
number of samples. Here, for a headline that is a function of counts summed over frames (mIoU
is no mean of per-frame losses) and frames correlated within a unit:

- the samples are the public units; a unit's "loss" is its jackknife pseudo-value, so the step
  is the jackknife standard error of the paired difference (new minus best, both exact):
  SE = (n - 1) / sqrt(n) * std_ddof1(D_-u), D_-u the difference with unit u left out. For a
  headline that is the mean of per-unit values (pixel accuracy with equal units) the
  pseudo-values are those values, and SE is exactly Blum & Hardt's s/sqrt(n). Leave-one-out
  headlines that are undefined are left out; with fewer than two defined, no SE (None);
  below FLOAT_NOISE, 0. No resampling, so no seed: every decision is a function of the counts;
- the new score is released when its exact headline exceeds by more than SE both the team's
  released score (Blum & Hardt's R_{t-1}) and its best's exact headline: value - max(released,
  best) > SE, with at least significance.MIN_UNITS public units (with fewer no difference is
  significant: the board keeps the first score). Blum & Hardt's released score is exact (or
  rounded to 1/n), so the two bounds are one there; with a released score rounded to its own
  step, the exact bound keeps a resubmitted or barely changed best (SE 0 or tiny, its exact
  score above a rounded-down release) from releasing the best's exact score, and the released
  bound keeps the board from moving by less than the step;
- the released value is the exact headline rounded to the threshold's precision, the decimal
  place of SE's leading digit: decimals = -floor(log10(SE)), Python's round() (0.62333 with SE
  0.0019 is 0.623). Its rounding error is at most SE / 2, so a release is always above the
  score it replaces; unrounded when SE is 0 (the same difference on every unit);
- a team's first submission is released rounded by its own (unpaired) standard error.

replay() recomputes a team's board from its submissions' counts. Pure computation, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .headline import FLOAT_NOISE, UnitData, check_paired, point, replicates
from .significance import MIN_UNITS, too_few_units

FIRST = "first score"
NEW_BEST = "new best"
WITHIN_NOISE = "within noise of your best"
UNDEFINED = "the headline is undefined on the public part"


@dataclass(frozen=True)
class Standing:
    """A team's current best on the public board: its headline data and the score released for
    it; `left_out`, the best's headline with each unit left out, is a cache that ladder_step
    fills (None: computed when needed, e.g. for a standing rebuilt from the stored counts)."""

    best: UnitData
    score: float
    decimals: int | None
    left_out: np.ndarray | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class LadderDecision:
    """What the board does with one submission. The team and the board see `released`, `score`,
    `decimals` and `note`; `value`, `difference` and `standard_error` are exact public-part
    numbers kept to recompute the decision, never served (they would leak what the Ladder hides)."""

    released: bool  # this submission is now the team's best
    score: float | None  # the team's public score after it (None: nothing released yet)
    decimals: int | None  # the decimal places `score` was rounded to (None: unrounded)
    value: float | None  # the submission's exact public headline
    difference: float | None  # value minus the larger of the released score and the best's exact one
    standard_error: float | None  # the step: the paired difference's (a first submission's own)
    units: int
    note: str


def decimals_of(standard_error: float | None) -> int | None:
    """The decimal place of the standard error's leading digit; None for 0 or no estimate."""
    return None if not standard_error else -math.floor(math.log10(standard_error))


def rounded(value: float, decimals: int | None) -> float:
    return value if decimals is None else round(value, decimals)


def left_out(data: UnitData) -> np.ndarray:
    """(units,) the headline with each unit left out in turn, NaN where undefined."""
    units = len(data.units)
    return replicates(data, np.ones((units, units), dtype=np.int64) - np.eye(units, dtype=np.int64))


def jackknife_error(left_out_values: np.ndarray, units: int) -> float | None:
    """The jackknife standard error from the leave-one-out values of a headline (or of a paired
    difference): (n - 1) / sqrt(n) times their standard deviation (ddof 1), which is the
    standard deviation of the pseudo-values over sqrt(n); None with fewer than two defined."""
    defined = left_out_values[~np.isnan(left_out_values)]
    if defined.size < 2:
        return None
    error = (units - 1) / math.sqrt(units) * float(defined.std(ddof=1))
    return 0.0 if error < FLOAT_NOISE else error


def ladder_step(standing: Standing | None, new: UnitData) -> tuple[LadderDecision, Standing | None]:
    """The board's decision on `new`, given the team's standing before it (None: no best yet),
    and the standing after it."""
    units = len(new.units)
    value = point(new)
    kept = (None, None) if standing is None else (standing.score, standing.decimals)
    if math.isnan(value):
        return LadderDecision(False, *kept, None, None, None, units, UNDEFINED), standing
    new_left_out = left_out(new)
    if standing is None:
        se = jackknife_error(new_left_out, units)
        places = decimals_of(se)
        score = rounded(value, places)
        return (LadderDecision(True, score, places, value, None, se, units, FIRST),
                Standing(new, score, places, new_left_out))
    check_paired(new, standing.best)
    best_left_out = left_out(standing.best) if standing.left_out is None else standing.left_out
    se = jackknife_error(new_left_out - best_left_out, units)
    difference = value - max(standing.score, point(standing.best))
    cached = Standing(standing.best, standing.score, standing.decimals, best_left_out)
    if units < MIN_UNITS:
        return LadderDecision(False, *kept, value, difference, se, units, too_few_units(units, new.unit)), cached
    if se is not None and difference > se:
        places = decimals_of(se)
        score = rounded(value, places)
        return (LadderDecision(True, score, places, value, difference, se, units, NEW_BEST),
                Standing(new, score, places, new_left_out))
    return LadderDecision(False, *kept, value, difference, se, units, WITHIN_NOISE), cached


def replay(submissions: Sequence[UnitData]) -> list[LadderDecision]:
    """A team's decisions over its submissions in the order they were scored."""
    standing: Standing | None = None
    decisions = []
    for new in submissions:
        decision, standing = ladder_step(standing, new)
        decisions.append(decision)
    return decisions


def default_selection(decisions: Sequence[LadderDecision], count: int) -> list[int]:
    """Positions (in submission order) of the team's last `count` released submissions: the
    Phase's default selection for the private ranking (its current best and the bests before it)."""
    released = [i for i, decision in enumerate(decisions) if decision.released]
    return released[-count:]
