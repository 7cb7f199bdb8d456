"""How a score the public board released is written: with the digits the Ladder released it with
(core/ladder.py rounds it to the decimal place of its step), on the pages and in `segbench
submissions` alike. Standard library only: the team's client uses it."""

from __future__ import annotations


def released_text(score: float | None, decimals: int | None) -> str:
    """A released public score with the digits the Ladder released it with."""
    if score is None:
        return "—"
    return repr(score) if decimals is None else f"{score:.{max(decimals, 0)}f}"
