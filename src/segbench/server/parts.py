"""A phase's public and private parts on the server: its hidden split's frames divided by the
keyed hash of their unit (core.public_private, the host secret kept in the settings table), the
headline of stored counts over one part (for the Ladder and the ties), and the floor verdict
read from a part's bootstrap document."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..core.headline import PairedDifference, UnitData, headline_data
from ..core.public_private import divide_frames
from ..core.significance import floor_verdict, tied
from .hidden import HiddenSplit
from .store import Store, stored_counts

PUBLIC, PRIVATE = "public", "private"


def part_frames(hidden: HiddenSplit, secret: bytes, fraction: float) -> dict[str, tuple[str, ...]]:
    """part -> its sorted frame ids; the private part is absent when the phase has none."""
    return dict(divided(hidden, secret, fraction))


@lru_cache(maxsize=256)
def divided(hidden: HiddenSplit, secret: bytes, fraction: float) -> dict[str, tuple[str, ...]]:
    """part_frames' cache: a worker asks for every upload, and the division is a keyed hash per unit."""
    parts = divide_frames(hidden.groups, secret, fraction)
    out = {PUBLIC: tuple(sorted(parts.public_frames))}
    if parts.private_frames:
        out[PRIVATE] = tuple(sorted(parts.private_frames))
    return out


def stored_headline(store: Store, hidden: HiddenSplit, counts_sha256: str, frames: tuple[str, ...]) -> UnitData:
    """The headline data of a submission's stored counts over `frames`."""
    return cached_headline(store, hidden, counts_sha256, frames)


@lru_cache(maxsize=4096)
def cached_headline(store: Store, hidden: HiddenSplit, counts_sha256: str, frames: tuple[str, ...]) -> UnitData:
    """stored_headline's cache (counts are immutable under their SHA-256, so it never goes stale;
    a split is keyed by its name, HiddenSplit.key, whether on disk or superseded)."""
    return headline_data(hidden.benchmark, stored_counts(store, counts_sha256), hidden.benchmark.ground_truth,
                         hidden.groups, frames)


def verdict_against_floor(bootstrap: dict[str, Any], key: str, unit: str) -> str:
    """core.significance.floor_verdict of the paired comparison with the floor in a part's
    bootstrap document (the worker's, over that part's units)."""
    found = ((bootstrap["comparisons"].get("floor") or {}).get("metrics") or {}).get(key) or {}
    paired = PairedDifference(found.get("difference"), None, found.get("low"), found.get("high"), bootstrap["groups"],
                              unit)
    return floor_verdict(paired)


def ties(store: Store, hidden: HiddenSplit, counts_sha256s: tuple[str, ...], frames: tuple[str, ...], resamples: int,
         seed: int) -> tuple[bool, ...]:
    """core.significance.mark_ties of a ranked board's entries (their stored counts, best first)
    over one part's frames: whether each is tied with the entry above. Each pair is decided once
    per process (a new entry moves only the pairs around it)."""
    pairs = zip(counts_sha256s, counts_sha256s[1:])
    return (False,) * bool(counts_sha256s) + tuple(cached_tie(store, hidden, above, entry, frames, resamples, seed)
                                                   for above, entry in pairs)


@lru_cache(maxsize=16384)
def cached_tie(store: Store, hidden: HiddenSplit, above: str, entry: str, frames: tuple[str, ...], resamples: int,
               seed: int) -> bool:
    return tied(cached_headline(store, hidden, above, frames), cached_headline(store, hidden, entry, frames),
                resamples, seed)
