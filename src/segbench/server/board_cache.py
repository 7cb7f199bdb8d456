"""The boards a server process serves, each built once per version of what it shows.

A phase's `board_version` (the phases table) is bumped by `changed`, in the same transaction, by
every write a board of the phase shows: a submission's result (ledger.finish, re-scores
included), a team's selection for the private ranking (ledger.select_for_ranking), the reveal
(host.reveal), a team revoked (accounts.revoke_team). A process keeps each board it built with
the version of the phase row read before the board's rows were, and builds it again when a
request reads a later version: every server process sharing the database rebuilds when, and only
when, what a board shows changed, and never serves a board older than the phase row the request
read. The readers of a stale board wait for one build, not one each.

A board is kept encoded (its JSON or HTML bytes, built once per version) with an entity tag that
is a digest of those bytes: a client that revalidates (If-None-Match) gets 304 from any process
that holds the same bytes, and never for other ones."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from .models import Phase, Submission

Built = TypeVar("Built")


def changed(session: Session, *phase_ids: int) -> None:
    """Mark the phases' boards stale, in the caller's transaction (committed with its change)."""
    if phase_ids:
        session.execute(update(Phase).where(Phase.id.in_(phase_ids)).values(board_version=Phase.board_version + 1))


def team_changed(session: Session, team_id: int) -> None:
    """Mark stale the boards of every phase the team submitted to."""
    changed(session, *session.scalars(select(Submission.phase_id).where(Submission.team_id == team_id).distinct()))


@dataclass(frozen=True)
class Encoded:
    body: bytes
    etag: str  # a quoted digest of `body`


def encoded(body: bytes) -> Encoded:
    return Encoded(body, f'"{hashlib.blake2b(body, digest_size=16).hexdigest()}"')


class Versioned(Protocol):
    """A phase as a request read it: its id and its boards' version (a Phase, or the light row of it)."""

    id: int
    board_version: int


class BoardCache:
    """(phase, key) -> the board built for the latest version seen; `key` names what was built
    from the board (its part and rendering, e.g. ('public', 'json'))."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.builders: dict[Hashable, threading.Lock] = {}
        self.built: dict[Hashable, tuple[int, Any]] = {}

    def kept(self, phase: Versioned, key: Hashable) -> Any:
        """The board kept as of `phase` (a row read by this request), or None when it must be built."""
        found = self.built.get((phase.id, key))
        return found[1] if found is not None and found[0] >= phase.board_version else None

    def get(self, phase: Versioned, key: Hashable, build: Callable[[], Built]) -> Built:
        """The board as of `phase` (a row read by this request): the kept one unless the row's
        version is later, else `build()`, which must read the board's rows after the phase row."""
        board = self.kept(phase, key)
        if board is not None:
            return board
        slot = (phase.id, key)
        with self.lock:
            builder = self.builders.setdefault(slot, threading.Lock())
        with builder:  # one build per stale board; its other readers take that one
            board = self.kept(phase, key)
            if board is None:
                board = build()
                self.built[slot] = (phase.board_version, board)
            return board
