"""A phase of the hosted evaluation: which split a benchmark's teams submit against, when, how
often, and what they see (config/phases/<benchmark>.yaml, loaded by protocols/phases.py).

Pure data: the server enforces the quotas and dates; this module only says what they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..errors import SegbenchError


@dataclass(frozen=True)
class Phase:
    """One phase.

    - `start`, `end`: aware datetimes in UTC, or None for no bound; the phase is open on the
      half-open interval [start, end).
    - `quota_per_day`: accepted uploads per team per UTC calendar day; `quota_total`: per team over
      the phase; None: no limit. A refused upload consumes neither.
    - `selection`: how many of its scored submissions a team may select for the private ranking.
      Where a team selects none, its selection is its last `selection` submissions whose public
      score the Ladder released (the default 1: its current public best, the entry the public
      board shows for it); its private-board entry is its selected submission with the highest
      private headline.
    - `show_scores`: whether a team sees its public-part scores (and the public board its
      numbers) while the phase runs; false: only that each submission was scored. Private-part
      numbers are never shown before the host's reveal, whatever this says.
    - `private_fraction`: the share of the split's independent units (walls, drives, users) in
      the private part, in [0, 1) (core/public_private.py says which units).
    """

    name: str
    benchmark: str
    split: str
    start: datetime | None
    end: datetime | None
    quota_per_day: int | None
    quota_total: int | None
    selection: int
    show_scores: bool
    private_fraction: float

    def is_open(self, now: datetime) -> bool:
        """Whether uploads are accepted at `now` (an aware datetime): start <= now < end."""
        if now.tzinfo is None or now.utcoffset() is None:
            raise SegbenchError(f"phase '{self.name}': is_open needs a time with its time zone, got {now.isoformat()}")
        return (self.start is None or self.start <= now) and (self.end is None or now < self.end)
