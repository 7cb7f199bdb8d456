"""Blum & Hardt's boosting attack (ICML 2015, section 5) replayed against a public board, adapted
to per-frame mixes of two honest prediction sets (benchmarks/ladder_attack.py, docs/server.md).

The attacker sees the split's frames (sorted ids), not which are public; a submission is the
choice, per frame, of B's prediction (True) or A's, and the board answers each with a Release:
the public score it shows for the team after it, and whether it is a new best. `play` is the
attacker, exactly:

1. submits the two honest sets A (no frame from B) and B; the reference is the one whose
   released public score is higher (A on a tie), its released score the threshold;
2. submits `mixes` random mixes: each takes every frame from A or from B, one fair coin per
   frame (numpy default_rng(seed).random(frames) < 0.5, one draw per mix);
3. keeps each mix whose released score went up: above the threshold (Blum & Hardt's attack on
   Kaggle's board: keep what scores better than the baseline) or, with `keep_new_best`, the
   mixes the board released as a new best (their attack on the Ladder, whose score moves only
   then: examples/attacks.jl of their Ladder.jl keeps the submissions that lowered the Ladder's
   loss);
4. its final submission is the majority vote: per frame, the source (A or B) that more than half
   of the kept mixes took, else the reference's source (no kept mix: the reference itself).

`on_board` makes the engine's boards (a function of a submission's public headline data)
answer such choices, so `boosting_attack` replays the whole attack in the engine; a server's
API answers them as uploads (benchmarks/ladder_attack.py --server).

`measure` gives the public gain (the final submission's exact public headline minus the
reference's), the private gain (the same on the private part), each with the standard error of
that paired difference over the part's units; the gap (public minus private gain) has the
standard error sqrt(public_se^2 + private_se^2), the two parts being independent units. An
attack that fits the public part shows a gap of several such errors.

Pure computation, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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


def ladder_board() -> Board:
    """One team's Ladder (core/ladder.py): the team's public score after each submission."""
    standing: list[Standing | None] = [None]

    def release(public: UnitData) -> Release:
        decision, standing[0] = ladder_step(standing[0], public)
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

    def mixed(self, frame_ids: Sequence[str], from_b: np.ndarray) -> UnitData:
        """The part of the submission that takes B's frames where `from_b` (over `frame_ids`)."""
        index = {frame: i for i, frame in enumerate(frame_ids)}
        return mix(self.a, self.b, from_b[[index[frame] for frame in self.a.frame_ids]])

    def source(self, is_b: bool) -> UnitData:
        return self.b if is_b else self.a


Submit = Callable[[np.ndarray], Release]


def on_board(board: Board, public: Part, frame_ids: Sequence[str]) -> Submit:
    """An engine board answering a choice over `frame_ids` by the public part of that mix."""
    return lambda from_b: board(public.mixed(frame_ids, from_b))


@dataclass(frozen=True)
class Play:
    """What the attacker did: how many mixes it kept, its reference and its final submission."""

    mixes: int
    kept: int
    reference_is_b: bool
    final: np.ndarray  # the final submission's choice of B per frame


def play(submit: Submit, frames: int, mixes: int, seed: int, keep_new_best: bool = False) -> Play:
    released_a, released_b = submit(np.zeros(frames, dtype=bool)).score, submit(np.ones(frames, dtype=bool)).score
    reference_is_b = released_b is not None and (released_a is None or released_b > released_a)
    threshold = released_b if reference_is_b else released_a
    rng = np.random.default_rng(seed)
    kept: list[np.ndarray] = []
    for _ in range(mixes):
        choice = rng.random(frames) < 0.5
        release = submit(choice)
        went_up = release.new_best if keep_new_best else (
            release.score is not None and threshold is not None and release.score > threshold)
        if went_up:
            kept.append(choice)
    votes_b = np.sum(kept, axis=0) if kept else np.zeros(frames, dtype=np.int64)
    votes_other = len(kept) - votes_b if reference_is_b else votes_b
    other = votes_other * 2 > len(kept)
    return Play(mixes, len(kept), reference_is_b, ~other if reference_is_b else other)


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


def measure(played: Play, public: tuple[UnitData, UnitData], private: tuple[UnitData, UnitData], resamples: int,
            se_seed: int) -> AttackResult:
    """The attack's gains from (final submission, reference) on each part."""
    gains = []
    for chosen, reference in (public, private):
        paired = paired_difference(chosen, reference, resamples, se_seed)
        gains += [point(chosen) - point(reference), paired.standard_error or 0.0]
    return AttackResult(played.mixes, played.kept, "B" if played.reference_is_b else "A", *gains)


def boosting_attack(board: Board, public: Part, private: Part, mixes: int, seed: int, resamples: int,
                    se_seed: int, keep_new_best: bool = False) -> AttackResult:
    """The whole attack in the engine: `play` against `board`, then `measure`."""
    frame_ids = sorted(public.a.frame_ids + private.a.frame_ids)
    played = play(on_board(board, public, frame_ids), len(frame_ids), mixes, seed, keep_new_best)
    return measure(played, *((part.mixed(frame_ids, played.final), part.source(played.reference_is_b))
                             for part in (public, private)), resamples, se_seed)
