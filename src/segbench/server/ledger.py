"""The submissions' life in the database: accepted with the quota checked in the same
transaction, claimed by a worker under a lease, finished only by the lease's holder.

- accept: the team's row is locked first (an UPDATE: PostgreSQL's row lock, SQLite's one write
  lock), so a team's concurrent uploads are counted against its quota one after the other, and
  the row appears with the count that allowed it or not at all.
- claim: PostgreSQL `SELECT ... FOR UPDATE SKIP LOCKED` (workers never wait on each other's
  rows); SQLite one conditional UPDATE (a single writer at a time, so the condition holds when it
  writes). Either way a queued submission, or one whose lease expired (its worker died), gets a
  fresh claim id; only that claim may finish it.
- finish/fail: an UPDATE guarded by the claim id, so a worker whose lease was taken over writes
  nothing (the result is written once, by the last claim). Finishing takes the team's lock first,
  then decides the Ladder against the team's released best in the same transaction, so a team's
  results are laddered one after the other in the order they are written (`ladder_position`).
- select: a team's choice for the private ranking, under the team's lock, at most the phase's
  `selection` per dataset, only before the phase's end and its reveal, never on a superseded dataset.
- re-scores (server/rescore.py) are submissions of their own on the corrected dataset, with the
  original's submission time: they take no quota and are no replay; a team's submissions on a
  dataset are claimed one after the other while one of its re-scores is pending there, in the
  order they were submitted, so its Ladder decides them in that order whatever the workers do.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, exists, func, or_, select, update
from sqlalchemy.orm import Session, aliased, joinedload

from ..errors import SegbenchError
from . import board_cache
from .models import FAILED, INCOMPLETE, QUEUED, SCORED, SCORING, Phase, Submission, Team, aware, utcnow


class QuotaExhausted(SegbenchError):
    """The team has used the phase's quota."""


class PhaseClosed(SegbenchError):
    """The phase takes no uploads now (before its start or from its end)."""


class NoSuchSubmission(SegbenchError):
    """No submission of this id is the team's."""


class SelectionRefused(SegbenchError):
    """The submission cannot be selected now (not scored, or the selection is full)."""


class Replayed(SegbenchError):
    """The team sent these bytes, under this method name, to this phase within the replay window."""


class DataCorrected(SegbenchError):
    """The phase's hidden data was corrected while the upload was checked against the earlier data."""


# A request replayed (by an attacker who captured it, or a client retrying blindly) carries the
# same bytes and method: within this window it is refused and names the submission it repeats.
REPLAY_WINDOW = timedelta(hours=1)


def refusal(session: Session, team: Team, phase: Phase, now: datetime, upload_sha256: str,
            method: str) -> SegbenchError | None:
    """Why the team may not submit this upload to the phase at `now` (naive UTC), or None: the
    phase's dates, a replay, its quota over the phase and over the UTC day (core.phase.Phase's rules)."""
    definition = phase.definition()
    if not definition.is_open(aware(now)):
        return PhaseClosed(f"phase '{phase.name}' is closed (open from {definition.start} until {definition.end})")
    repeated = session.scalar(select(Submission.id).where(
        Submission.team_id == team.id, Submission.phase_id == phase.id, Submission.upload_sha256 == upload_sha256,
        Submission.method == method, Submission.created_at >= now - REPLAY_WINDOW, Submission.rescore_of.is_(None))
        .limit(1))
    if repeated is not None:
        return Replayed(f"upload.zip: the same upload (SHA-256 {upload_sha256}) under the same method was accepted "
                        f"as submission {repeated} less than {REPLAY_WINDOW} ago; a replay is not accepted again")

    def accepted_since(since: datetime | None) -> int:
        query = select(func.count()).select_from(Submission).where(
            Submission.team_id == team.id, Submission.phase_id == phase.id, Submission.rescore_of.is_(None))
        if since is not None:
            query = query.where(Submission.created_at >= since)
        return session.scalar(query)

    if phase.quota_total is not None and accepted_since(None) >= phase.quota_total:
        return QuotaExhausted(f"quota: {phase.quota_total} submissions in all for phase '{phase.name}', all used")
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if phase.quota_per_day is not None and accepted_since(day) >= phase.quota_per_day:
        return QuotaExhausted(f"quota: {phase.quota_per_day} submissions a day (UTC) for phase '{phase.name}', all "
                              f"used today; the next day starts at {(day + timedelta(days=1)).isoformat()}Z")
    return None


def accept(session: Session, team: Team, phase: Phase, upload_sha256: str, upload_bytes: int, method: str,
           description: str, code_version: str, stored, warnings: list[str] | None = None) -> Submission:
    """Insert the queued submission, in one transaction with the quota check; `stored()` puts the
    upload in the store inside that transaction (content-addressed, so an upload stored by a
    transaction that then fails is only an unreferenced object, never a visible submission)."""
    now = utcnow()
    session.execute(update(Team).where(Team.id == team.id).values(last_upload_at=now))  # the team's lock
    # The phase's row shared-locked (PostgreSQL; SQLite has one writer): a correction's switch to
    # new data waits for this transaction, or has committed and this upload was checked too early.
    current = session.scalar(select(Phase.dataset_id).where(Phase.id == phase.id).with_for_update(read=True))
    refused = refusal(session, team, phase, now, upload_sha256, method)
    if current != phase.dataset_id:
        refused = DataCorrected(f"upload.zip: phase '{phase.name}' changed to corrected data ({current}) while this "
                                f"upload was checked against {phase.dataset_id}; send it again")
    if refused is not None:
        session.rollback()
        raise refused
    stored()
    submission = Submission(id=secrets.token_hex(16), team_id=team.id, phase_id=phase.id, status=QUEUED,
                            method=method, description=description, upload_sha256=upload_sha256,
                            upload_bytes=upload_bytes, dataset_id=phase.dataset_id, created_at=now, attempts=0,
                            code_version=code_version, warnings=json.dumps(warnings) if warnings else None)
    session.add(submission)
    session.commit()
    return submission


# Made once: a new alias per claim cost SQLAlchemy's adaptation of its columns again, half the claim's time.
PENDING = aliased(Submission, name="pending")


def claimable(now: datetime):
    earlier_rescore = exists().where(
        PENDING.team_id == Submission.team_id, PENDING.phase_id == Submission.phase_id,
        PENDING.dataset_id == Submission.dataset_id, PENDING.rescore_of.is_not(None),
        PENDING.status.in_((QUEUED, SCORING)),
        or_(PENDING.created_at < Submission.created_at,
            and_(PENDING.created_at == Submission.created_at, PENDING.id < Submission.id)))
    return and_(or_(Submission.status == QUEUED, (Submission.status == SCORING) & (Submission.lease_expires < now)),
                ~earlier_rescore)


def claim(session: Session, lease_seconds: float) -> tuple[Submission, str] | None:
    """The oldest claimable submission, leased to a new claim id; None when there is none."""
    now = utcnow()
    owner = secrets.token_hex(16)
    values = {"status": SCORING, "lease_owner": owner, "lease_expires": now + timedelta(seconds=lease_seconds),
              "attempts": Submission.attempts + 1}
    oldest = select(Submission.id).where(claimable(now)).order_by(Submission.created_at, Submission.id).limit(1)
    if session.bind.dialect.name == "postgresql":
        chosen = session.scalar(oldest.with_for_update(skip_locked=True))
        if chosen is None:
            session.rollback()
            return None
        session.execute(update(Submission).where(Submission.id == chosen).values(**values))
    else:
        session.execute(update(Submission).where(Submission.id == oldest.scalar_subquery(), claimable(now))
                        .values(**values).execution_options(synchronize_session=False))
    session.commit()
    claimed = session.scalar(select(Submission).where(Submission.lease_owner == owner)
                             .execution_options(populate_existing=True))  # the row as now, not as last seen
    return None if claimed is None else (claimed, owner)


def renew(session: Session, submission_id: str, owner: str, lease_seconds: float) -> bool:
    """Extend a held lease; False when it is no longer this claim's."""
    done = session.execute(update(Submission).where(Submission.id == submission_id, Submission.lease_owner == owner,
                                                    Submission.status == SCORING)
                           .values(lease_expires=utcnow() + timedelta(seconds=lease_seconds)))
    session.commit()
    return done.rowcount == 1


def finish(session: Session, submission_id: str, owner: str, counts_sha256: str, results: str, uncertainty: str,
           private_results: str | None = None, private_uncertainty: str | None = None,
           decide: Callable[[Submission | None], dict[str, Any]] | None = None) -> bool:
    """Record the result, if this claim still holds the lease; returns whether it did. `decide`
    gets the team's released best of the phase and dataset (None: none yet) and returns the
    Ladder's columns for this submission (released, public_score, public_decimals, ladder_note)."""
    team_of_submission = select(Submission.team_id).where(Submission.id == submission_id).scalar_subquery()
    session.execute(update(Team).where(Team.id == team_of_submission).values(last_upload_at=Team.last_upload_at))
    held = session.scalar(select(Submission).where(Submission.id == submission_id, Submission.lease_owner == owner,
                                                   Submission.status == SCORING))
    if held is None:
        session.rollback()
        return False
    ladder: dict[str, Any] = {}
    if decide is not None:
        # The team's ladder on this phase and data: counted, and its last released entry read, in
        # SQL (loading every earlier submission with its documents grew with the team's history).
        ladder_of_team = (Submission.team_id == held.team_id, Submission.phase_id == held.phase_id,
                          Submission.dataset_id == held.dataset_id, Submission.ladder_position.is_not(None))
        position = session.scalar(select(func.count()).select_from(Submission).where(*ladder_of_team))
        best = session.scalar(select(Submission).where(*ladder_of_team, Submission.released.is_(True))
                              .order_by(Submission.ladder_position.desc()).limit(1))
        ladder = {**decide(best), "ladder_position": position}
    session.execute(update(Submission).where(Submission.id == submission_id)
                    .values(status=SCORED, counts_sha256=counts_sha256, results=results, uncertainty=uncertainty,
                            private_results=private_results, private_uncertainty=private_uncertainty, error=None,
                            scored_at=utcnow(), lease_expires=None, **ladder))
    board_cache.changed(session, held.phase_id)
    session.commit()
    return True


def incomplete(session: Session, submission_id: str, owner: str, counts_sha256: str, not_predicted: str,
               error: str) -> bool:
    """Record a re-score whose upload has no mask for frames added since (JSON list `not_predicted`):
    its counts of the frames it has are kept, it is ranked on no board of the new data."""
    done = session.execute(update(Submission).where(Submission.id == submission_id, Submission.lease_owner == owner,
                                                    Submission.status == SCORING)
                           .values(status=INCOMPLETE, counts_sha256=counts_sha256, not_predicted=not_predicted,
                                   error=error, scored_at=utcnow(), lease_expires=None))
    if done.rowcount == 1:
        board_cache.changed(session, *session.scalars(select(Submission.phase_id).where(Submission.id == submission_id)))
    session.commit()
    return done.rowcount == 1


def fail(session: Session, submission_id: str, owner: str, error: str) -> bool:
    done = session.execute(update(Submission).where(Submission.id == submission_id, Submission.lease_owner == owner,
                                                    Submission.status == SCORING)
                           .values(status=FAILED, error=error, scored_at=utcnow(), lease_expires=None))
    session.commit()
    return done.rowcount == 1


def select_for_ranking(session: Session, team: Team, submission_id: str, chosen: bool) -> Submission:
    """Select (or, `chosen` false, unselect) the team's scored submission for the private ranking,
    under the team's lock: at most the phase's `selection` selected, before its end and reveal."""
    now = utcnow()
    session.execute(update(Team).where(Team.id == team.id).values(last_upload_at=Team.last_upload_at))  # the lock
    submission = session.scalar(select(Submission).options(joinedload(Submission.phase))
                                .where(Submission.id == submission_id, Submission.team_id == team.id))
    refused: SegbenchError | None = None
    if submission is None:
        refused = NoSuchSubmission(f"no submission {submission_id!r} of team {team.name}")
    elif submission.phase.revealed_at is not None:
        refused = PhaseClosed(f"phase '{submission.phase.name}' is revealed: its selection is closed")
    elif submission.phase.closes_at is not None and now >= submission.phase.closes_at:
        refused = PhaseClosed(f"phase '{submission.phase.name}' has ended: its selection is closed")
    elif submission.dataset_id != submission.phase.dataset_id:
        refused = PhaseClosed(f"submission {submission_id} is on dataset {submission.dataset_id}, superseded by the "
                              f"corrected {submission.phase.dataset_id}: select its re-score instead")
    elif submission.status != SCORED:
        refused = SelectionRefused(f"submission {submission_id} is {submission.status}: only a scored one is selected")
    elif chosen and not submission.selected:
        selected = session.scalar(select(func.count()).select_from(Submission).where(
            Submission.team_id == team.id, Submission.phase_id == submission.phase_id,
            Submission.dataset_id == submission.dataset_id, Submission.selected))
        if selected >= submission.phase.selection:
            refused = SelectionRefused(f"selection: at most {submission.phase.selection} submission(s) of phase "
                                       f"'{submission.phase.name}', all chosen; unselect one first")
    if refused is not None:
        session.rollback()
        raise refused
    submission.selected = chosen
    board_cache.changed(session, submission.phase_id)
    session.commit()
    return submission
