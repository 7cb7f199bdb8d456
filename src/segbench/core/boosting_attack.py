"""Blum & Hardt's boosting attack (ICML 2015, section 5) replayed against a public board, adapted
to per-frame mixes of two honest prediction sets (benchmarks/ladder_attack.py, docs/server.md).

A board answers each submission with a Release: the public score it shows for the team after
that submission, and whether the submission is a new best. The attacker, exactly:

1. submits the two honest sets A and B; the reference is the one whose released public score is
   higher (A on a tie), its released score the threshold;
2. submits `mixes` random mixes: each takes every frame's counts from A or from B, one fair coin
   per frame (numpy default_rng(seed): the public frames' coins, then the private frames'), the
   frames of both parts drawn alike, since the attacker cannot tell them apart;
3. keeps each mix whose released score went up: above the threshold (Blum & Hardt's attack on
   Kaggle's board: keep what scores better than the baseline) or, with `keep_new_best`, the
   mixes the board released as a new best (their attack on the Ladder, whose score moves only
   then: examples/attacks.jl of their Ladder.jl keeps the submissions that lowered the Ladder's
   loss);
4. submits the majority vote: per frame, the source (A or B) that more than half of the kept
   mixes took, else the reference's source (no kept mix: the reference itself).

Its public gain is the final submission's exact public headline minus the reference's, its
private gain the same on the private part, each with the standard error of that paired
difference over the part's units; the gap (public minus private gain) has the standard error
sqrt(public_se^2 + private_se^2), the two parts being independent units. An attack that fits
the public part shows a gap of several such errors.

Pure computation, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from .bootstrap import report_data
from .headline import UnitData, paired_difference, point
from .ladder import Standing, ladder_step


@dataclass(frozen=True)
class Release:
    score: float | None  # the team's public score on the board after the submission
    new_best: bool


Board = Callable[[UnitData], Release]


def naive_board() -> Board:
    """A board that releases every submission's exact public headline, as most hosted boards do;
    a new best is one above every earlier score."""
    best: list[float] = []

    def release(public: UnitData) -> Release:
        value = point(public)
        if math.isnan(value):
            return Release(None, False)
        new_best = not best or value > best[0]
        if new_best:
            best[:] = [value]
        return Release(value, new_best)

    return release


def ladder_board(resamples: int, seed: int) -> Board:
    """One team's Ladder (core/ladder.py): the team's public score after each submission."""
    standing: list[Standing | None] = [None]

    def release(public: UnitData) -> Release:
        decision, standing[0] = ladder_step(standing[0], public, resamples, seed)
        return Release(decision.score, decision.released)

    return release


def mix(a: UnitData, b: UnitData, from_b: np.ndarray) -> UnitData:
    """Each frame's counts from `b` where `from_b`, else from `a` (the same frames and units)."""
    stack = np.where(from_b[:, None, None], b.data.per_frame, a.data.per_frame)
    return replace(a, data=report_data(a.data.report, stack, None, a.data.frame_group, len(a.units)))


@dataclass(frozen=True)
class Part:
    """One part (public or private) of both honest sets: their headline data on the same frames."""

    a: UnitData
    b: UnitData


@dataclass(frozen=True)
class AttackResult:
    mixes: int
    kept: int
    reference: str  # 'A' or 'B'
    public_gain: float
    public_se: float
    private_gain: float
    private_se: float

    @property
    def gap(self) -> float:
        return self.public_gain - self.private_gain

    @property
    def gap_se(self) -> float:
        return math.hypot(self.public_se, self.private_se)


def boosting_attack(board: Board, public: Part, private: Part, mixes: int, seed: int, resamples: int,
                    se_seed: int, keep_new_best: bool = False) -> AttackResult:
    released_a, released_b = board(public.a).score, board(public.b).score
    reference_is_b = released_b is not None and (released_a is None or released_b > released_a)
    threshold = released_b if reference_is_b else released_a
    rng = np.random.default_rng(seed)
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    for _ in range(mixes):
        public_choice = rng.random(len(public.a.frame_ids)) < 0.5
        private_choice = rng.random(len(private.a.frame_ids)) < 0.5
        release = board(mix(public.a, public.b, public_choice))
        went_up = release.new_best if keep_new_best else (
            release.score is not None and threshold is not None and release.score > threshold)
        if went_up:
            kept.append((public_choice, private_choice))

    def final(part: Part, index: int) -> tuple[UnitData, UnitData]:
        """The majority vote on the part's frames, and the reference there."""
        votes_b = np.sum([choice[index] for choice in kept], axis=0) if kept else np.zeros(len(part.a.frame_ids))
        votes_other = len(kept) - votes_b if reference_is_b else votes_b
        other = votes_other * 2 > len(kept)
        return mix(part.a, part.b, ~other if reference_is_b else other), (part.b if reference_is_b else part.a)

    gains = []
    for index, part in enumerate((public, private)):
        chosen, reference = final(part, index)
        paired = paired_difference(chosen, reference, resamples, se_seed)
        gains += [point(chosen) - point(reference), paired.standard_error or 0.0]
    return AttackResult(mixes, len(kept), "B" if reference_is_b else "A", *gains)
