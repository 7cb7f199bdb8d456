"""The public and private parts of a hidden split, divided by the benchmark's independent unit
(walls, drives, users: the definition's group_key), so that no unit straddles the two parts.

Which units are private is a keyed hash of the unit's name with the host's secret: each unit's
key is HMAC-SHA256(secret, name as UTF-8), the units are ranked by the key's hex digest
(ascending; then by name, which two distinct names' digests tie on with negligible probability)
and the first round(fraction * n) are private. So the split is stable (the same secret gives
the same parts), balanced (the exact count, whatever the names) and, without the secret,
unpredictable: which frames count on the private board cannot be learnt from the names.
`round` is Python's: half to even (round(2.5) == 2).

Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..errors import SegbenchError


def unit_key(unit: str, secret: bytes) -> str:
    """The hex HMAC-SHA256 of the unit's name under the secret: its rank among the units."""
    return hmac.new(secret, unit.encode("utf-8"), hashlib.sha256).hexdigest()


def private_units(units: Iterable[str], secret: bytes, fraction: float) -> frozenset[str]:
    """The round(fraction * n) units of the n distinct `units` with the smallest keys."""
    if not secret:
        raise SegbenchError("the host secret that chooses the private units is empty")
    if not 0 <= fraction < 1:
        raise SegbenchError(f"private_fraction {fraction} is not in [0, 1)")
    names = sorted(set(units), key=lambda unit: (unit_key(unit, secret), unit))
    count = round(fraction * len(names))
    if names and count == len(names):
        raise SegbenchError(f"private_fraction {fraction} of {len(names)} unit(s) leaves no public unit")
    return frozenset(names[:count])


@dataclass(frozen=True)
class Parts:
    """A split's frames and units, divided: every frame in exactly one part."""

    public_frames: frozenset[str]
    private_frames: frozenset[str]
    public_units: frozenset[str]
    private_units: frozenset[str]


def divide_frames(frame_units: Mapping[str, str], secret: bytes, fraction: float) -> Parts:
    """The frames (frame id -> its unit, as the bootstrap's `groups`) divided by their units."""
    private = private_units(frame_units.values(), secret, fraction)
    return Parts(
        public_frames=frozenset(f for f, unit in frame_units.items() if unit not in private),
        private_frames=frozenset(f for f, unit in frame_units.items() if unit in private),
        public_units=frozenset(frame_units.values()) - private,
        private_units=private,
    )
