"""The ledger's side of the boards (issue 23), on SQLite and on PostgreSQL where
$SEGBENCH_TEST_POSTGRES names a database (test_ledger's `db`): results written concurrently are
laddered one after the other, each against the team's released best before it; the selection is
limited to the phase's in its transaction, raced by 20 requests; and refused when it must be."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update
from test_ledger import accept, db  # noqa: F401  (db: the fixture)

from segbench.server import ledger
from segbench.server.accounts import add_team
from segbench.server.models import Phase, Submission, Team, utcnow


def scored(factory, count: int) -> list[str]:
    """`count` submissions accepted, claimed and finished (each released as the team's best)."""
    ids = [accept(factory, sha=f"{i:064x}").id for i in range(count)]
    with factory() as session:
        owners = [ledger.claim(session, 60) for _ in ids]
    for submission, owner in owners:
        with factory() as session:
            assert ledger.finish(session, submission.id, owner, "c" * 64, "{}", "{}",
                                 decide=lambda best: {"released": True, "public_score": 0.5, "public_decimals": 1,
                                                      "ladder_note": "first score"})
    return ids


def concurrently(count: int, job) -> list:
    outcomes: list = [None] * count

    def one(i: int) -> None:
        try:
            outcomes[i] = job(i)
        except Exception as exc:  # noqa: BLE001  (what each thread met is the test's outcome)
            outcomes[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_results_written_at_once_are_laddered_one_after_the_other(db):  # noqa: F811
    ids = [accept(db, sha=f"{i:064x}").id for i in range(3)]
    with db() as session:
        claims = [ledger.claim(session, 60) for _ in ids]
    seen: dict[str, str | None] = {}

    def finish(i: int) -> bool:
        submission, owner = claims[i]

        def decide(best):
            seen[submission.id] = None if best is None else best.id
            return {"released": True, "public_score": float(i), "public_decimals": None, "ladder_note": "new best"}

        with db() as session:
            return ledger.finish(session, submission.id, owner, "c" * 64, "{}", "{}", decide=decide)

    assert concurrently(3, finish) == [True] * 3
    with db() as session:
        order = session.scalars(select(Submission).order_by(Submission.ladder_position)).all()
    assert [s.ladder_position for s in order] == [0, 1, 2]
    # Each decided against the one laddered just before it (each released a new best).
    assert [seen[s.id] for s in order] == [None, order[0].id, order[1].id]


def test_twenty_concurrent_selections_take_exactly_the_phases_selection(db):  # noqa: F811
    ids = scored(db, 3)
    with db() as session:
        session.execute(update(Phase).values(selection=2))
        session.commit()

    def choose(i: int):
        with db() as session:
            return ledger.select_for_ranking(session, session.scalar(select(Team)), ids[i % 3], True).id

    outcomes = concurrently(20, choose)
    refused = [o for o in outcomes if isinstance(o, Exception)]
    assert all(isinstance(o, ledger.SelectionRefused) for o in refused) and refused
    with db() as session:
        assert session.scalar(select(func.count()).select_from(Submission).where(Submission.selected)) == 2


def test_a_selection_is_refused_when_it_must_be(db):  # noqa: F811
    (done,) = scored(db, 1)
    queued = accept(db, sha="f" * 64).id
    with db() as session:
        team = session.scalar(select(Team))
        with pytest.raises(ledger.SelectionRefused, match=f"submission {queued} is queued"):
            ledger.select_for_ranking(session, team, queued, True)
        add_team(session, "beta")
        beta = session.scalar(select(Team).where(Team.name == "beta"))
        with pytest.raises(ledger.NoSuchSubmission, match=f"no submission '{done}' of team beta"):
            ledger.select_for_ranking(session, beta, done, True)
        session.execute(update(Phase).values(closes_at=utcnow() - timedelta(seconds=1)))
        session.commit()
        with pytest.raises(ledger.PhaseClosed, match="phase 'test' has ended: its selection is closed"):
            ledger.select_for_ranking(session, team, done, True)
        session.execute(update(Phase).values(closes_at=None, revealed_at=utcnow()))
        session.commit()
        with pytest.raises(ledger.PhaseClosed, match="phase 'test' is revealed: its selection is closed"):
            ledger.select_for_ranking(session, team, done, True)
        assert session.scalar(select(func.count()).select_from(Submission).where(Submission.selected)) == 0
