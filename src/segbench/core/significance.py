"""When a difference of headlines counts: ties on a ranked board and the "beats the floor"
verdict, by one rule on the paired bootstrap interval over the independent units.

A difference is significant when its 95% paired interval excludes 0, and only with at least
MIN_UNITS units: with n units a resample is a multiset of n of them, so there are only
C(2n - 1, n) distinct resamples (n = 2: 3, n = 3: 10, n = 4: 35, n = 5: 126), and the few
extreme ones carry the 2.5% tails; below 5 units an interval says little more than the units'
own range (docs/metrics.md, "Ties and the floor"). Pure computation, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from .headline import PairedDifference, UnitData, paired_difference

MIN_UNITS = 5

YES = "yes"
NO = "no"
WITHIN_NOISE = "within noise"


def too_few_units(units: int, unit: str) -> str:
    return f"too few units ({units} {unit} units) for an interval"


def significant(paired: PairedDifference) -> bool:
    """Whether the interval excludes 0, with enough units for an interval to mean it."""
    if paired.units < MIN_UNITS or paired.low is None or paired.high is None:
        return False
    return paired.low > 0 or paired.high < 0


def floor_verdict(paired: PairedDifference) -> str:
    """Model minus floor: 'yes' above with an interval excluding 0, 'no' below with one, else
    'within noise'; with fewer than MIN_UNITS units, too_few_units()."""
    if paired.units < MIN_UNITS:
        return too_few_units(paired.units, paired.unit)
    if significant(paired) and paired.difference is not None:
        if paired.difference > 0 and paired.low > 0:
            return YES
        if paired.difference < 0 and paired.high < 0:
            return NO
    return WITHIN_NOISE


def tied(above: UnitData, entry: UnitData, resamples: int, seed: int) -> bool:
    """Whether a board's entry is tied with the entry above it: their paired interval includes 0
    (or cannot exclude it)."""
    return not significant(paired_difference(above, entry, resamples, seed))


def mark_ties(ranked: Sequence[UnitData], resamples: int, seed: int) -> list[bool]:
    """For each entry of a board (best first), whether it is tied with the entry above. The first
    entry is tied with nothing."""
    return [False] + [tied(above, entry, resamples, seed) for above, entry in zip(ranked, ranked[1:])]
