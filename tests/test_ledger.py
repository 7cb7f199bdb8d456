"""The submissions' life in the database: quota and insert in one transaction, claims under a
lease, results written only by the lease's holder; and the migrations make exactly the tables
the ORM declares. On SQLite, and on PostgreSQL where $SEGBENCH_TEST_POSTGRES names an empty
database to use (tools/postgres-cluster up prints one; under CI=true a missing one fails)."""

from __future__ import annotations

import secrets
import threading
import time
from datetime import timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from server_fixtures import postgres_url
from sqlalchemy import func, select, text, update

from segbench.server import ledger
from segbench.server.accounts import add_team, team_of
from segbench.server.database import engine_for, migrate, sessions
from segbench.server.models import FAILED, SCORED, SCORING, Base, Phase, Submission, Team, utcnow


def emptied(url: str):
    """An engine on the test database, every table of an earlier test dropped."""
    engine = engine_for(url)
    with engine.begin() as connection:
        Base.metadata.drop_all(connection)
        connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    return engine


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    engine = (engine_for(f"sqlite:///{tmp_path / 'server.db'}") if request.param == "sqlite"
              else emptied(postgres_url()))
    migrate(engine)
    factory = sessions(engine)
    with factory() as session:
        add_team(session, "alpha")
        session.add(Phase(benchmark="b", name="test", split="test", data_dir="d", manifest_path="m", dataset_id="x:1",
                          floor_counts_sha256="0" * 64, floor_results="{}", quota_total=3, selection=1,
                          show_scores=True, private_fraction=0.5))
        session.commit()
    return factory


def team_and_phase(session):
    return session.scalar(select(Team)), session.scalar(select(Phase))


def accept(factory, sha: str | None = None, method: str = "m") -> Submission:
    """An accepted upload: distinct bytes (a random SHA-256) unless `sha` is given."""
    with factory() as session:
        team, phase = team_and_phase(session)
        return ledger.accept(session, team, phase, sha or secrets.token_hex(32), 1, method, "", "v", lambda: None)


def test_the_migrations_make_the_tables_the_orm_declares(db):
    with db().bind.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []


def test_migrating_twice_changes_nothing(tmp_path):
    engine = engine_for(f"sqlite:///{tmp_path / 'again.db'}")
    assert migrate(engine) == migrate(engine) == "0005"


def test_the_quota_is_exact_and_a_refusal_inserts_nothing(db):
    stored = []
    for _ in range(3):
        accept(db)
    with db() as session:
        team, phase = team_and_phase(session)
        with pytest.raises(ledger.QuotaExhausted, match="quota: 3 submissions in all for phase 'test', all used"):
            ledger.accept(session, team, phase, "b" * 64, 1, "m", "", "v", lambda: stored.append(1))
        assert session.scalar(select(func.count()).select_from(Submission)) == 3
    assert stored == []  # refused before the upload was stored


def test_concurrent_uploads_of_one_team_take_exactly_the_quota(db):
    outcomes = []

    def one() -> None:
        try:
            accept(db)
            outcomes.append("accepted")
        except ledger.QuotaExhausted:
            outcomes.append("refused")

    threads = [threading.Thread(target=one) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["accepted"] * 3 + ["refused"] * 17
    with db() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 3


def test_a_day_quota_counts_the_utc_day_only(db):
    with db() as session:
        session.execute(update(Phase).values(quota_total=None, quota_per_day=1))
        session.commit()
    first = accept(db)
    with pytest.raises(ledger.QuotaExhausted, match="1 submissions a day"):
        accept(db)
    midnight = utcnow().replace(hour=0, minute=0, second=0, microsecond=0)
    with db() as session:  # made a second before today began
        session.execute(update(Submission).where(Submission.id == first.id)
                        .values(created_at=midnight - timedelta(seconds=1)))
        session.commit()
    accept(db)


def test_a_replayed_upload_is_refused_within_the_window_and_inserts_nothing(db):
    first = accept(db, "c" * 64)
    with pytest.raises(ledger.Replayed, match=f"SHA-256 {'c' * 64}\\) under the same method was accepted as "
                                              f"submission {first.id} less than 1:00:00 ago"):
        accept(db, "c" * 64)
    with db() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 1
    assert accept(db, "c" * 64, method="other").method == "other"  # the same bytes named as another method
    with db() as session:  # the first made just outside the window
        session.execute(update(Submission).where(Submission.id == first.id)
                        .values(created_at=utcnow() - ledger.REPLAY_WINDOW - timedelta(seconds=1)))
        session.commit()
    accept(db, "c" * 64)


@pytest.mark.parametrize(("opens", "closes"), [(timedelta(hours=1), None), (None, timedelta(0)),
                                               (timedelta(days=-2), timedelta(days=-1))])
def test_a_closed_phase_takes_no_upload(db, opens, closes):
    now = utcnow()
    with db() as session:
        session.execute(update(Phase).values(opens_at=None if opens is None else now + opens,
                                             closes_at=None if closes is None else now + closes))
        session.commit()
    with pytest.raises(ledger.PhaseClosed, match="phase 'test' is closed"):
        accept(db)
    with db() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 0


def test_claims_go_oldest_first_and_each_submission_to_one_claim(db):
    first, second = accept(db), accept(db)
    with db() as session:
        (a, owner_a), (b, owner_b) = ledger.claim(session, 60), ledger.claim(session, 60)
        assert (a.id, b.id) == (first.id, second.id) and owner_a != owner_b
        assert a.status == b.status == SCORING and a.attempts == 1
        assert ledger.claim(session, 60) is None


def test_an_expired_lease_goes_to_another_claim_and_only_the_last_claim_finishes(db):
    submitted = accept(db)
    with db() as session:
        _, dead = ledger.claim(session, 0.05)
        time.sleep(0.1)
        taken, owner = ledger.claim(session, 60)
        assert taken.id == submitted.id and taken.attempts == 2
        assert not ledger.renew(session, submitted.id, dead, 60)
        assert not ledger.finish(session, submitted.id, dead, "c" * 64, "{}", "{}")
        assert ledger.renew(session, submitted.id, owner, 60)
        assert ledger.finish(session, submitted.id, owner, "c" * 64, '{"r": 1}', "{}")
        assert not ledger.finish(session, submitted.id, owner, "d" * 64, "{}", "{}")  # once
        row = session.get(Submission, submitted.id)
        session.refresh(row)
        assert (row.status, row.counts_sha256, row.results) == (SCORED, "c" * 64, '{"r": 1}')


def test_a_held_lease_is_not_claimed(db):
    accept(db)
    with db() as session:
        assert ledger.claim(session, 60) is not None
        assert ledger.claim(session, 60) is None


def test_a_failure_is_recorded_by_its_claim(db):
    submitted = accept(db)
    with db() as session:
        _, owner = ledger.claim(session, 60)
        assert ledger.fail(session, submitted.id, owner, "upload.zip: bad")
        row = session.get(Submission, submitted.id)
        session.refresh(row)
        assert (row.status, row.error) == (FAILED, "upload.zip: bad")


def test_a_team_is_found_by_its_token_only_while_not_revoked(db):
    with db() as session:
        token = add_team(session, "beta")
        assert team_of(session, token).name == "beta"
        assert team_of(session, token + "x") is None
        session.execute(update(Team).where(Team.name == "beta").values(revoked=True))
        session.commit()
        assert team_of(session, token) is None


def rescore_of(factory, original: Submission, dataset_id: str = "x:2", team_id: int | None = None) -> Submission:
    """A queued re-score of `original` on `dataset_id`, as server/rescore.py inserts it."""
    with factory() as session:
        copy = Submission(id=secrets.token_hex(16), team_id=team_id or original.team_id, phase_id=original.phase_id,
                          status="queued", method=original.method, description="", upload_sha256=original.upload_sha256,
                          upload_bytes=1, dataset_id=dataset_id, created_at=original.created_at, attempts=0,
                          rescore_of=original.id)
        session.add(copy)
        session.commit()
        return copy


def test_re_scores_take_no_quota_and_are_no_replay(db):
    first = accept(db, "e" * 64)
    for _ in range(3):
        rescore_of(db, first)
    accept(db, "e" * 64, method="other")
    accept(db)  # three accepted (the quota), the re-scores not counted
    with pytest.raises(ledger.QuotaExhausted):
        accept(db)


def test_an_upload_checked_against_data_corrected_since_is_refused(db):
    with db() as session:
        team, stale = team_and_phase(session)
        session.expunge(stale)  # the intake's view of the phase, before the correction
        session.execute(update(Phase).values(dataset_id="x:2"))
        session.commit()
    with db() as session:
        with pytest.raises(ledger.DataCorrected, match=r"upload.zip: phase 'test' changed to corrected data \(x:2\) "
                                                       r"while this upload was checked against x:1; send it again"):
            ledger.accept(session, team, stale, "f" * 64, 1, "m", "", "v", lambda: None)
        assert session.scalar(select(func.count()).select_from(Submission)) == 0


def test_a_teams_submissions_on_a_dataset_are_claimed_in_order_while_a_re_score_is_pending(db):
    first, second = accept(db), accept(db)
    with db() as session:
        other = session.get(Team, add_team_id(session, "gamma"))
    copies = [rescore_of(db, first), rescore_of(db, second)]
    later = accept(db)  # made during the re-score (on the old dataset in this table: another triple)
    with db() as session:
        session.execute(update(Submission).where(Submission.id.in_([first.id, second.id, later.id]))
                        .values(status=SCORED))
        session.execute(update(Submission).where(Submission.id == later.id).values(dataset_id="x:2", status="queued"))
        session.commit()
    gamma = rescore_of(db, second, team_id=other.id)
    with db() as session:
        claimed, owner = ledger.claim(session, 60)
        assert claimed.id == copies[0].id
        # alpha's second re-score and its later upload wait for the first; gamma's is free
        assert ledger.claim(session, 60)[0].id == gamma.id
        assert ledger.claim(session, 60) is None
        assert ledger.finish(session, copies[0].id, owner, "c" * 64, "{}", "{}")
        assert ledger.claim(session, 60)[0].id == copies[1].id
        assert ledger.claim(session, 60) is None


def add_team_id(session, name: str) -> int:
    add_team(session, name)
    return session.scalar(select(Team.id).where(Team.name == name))


def test_the_selection_counts_per_dataset_and_a_superseded_one_is_closed(db):
    with db() as session:
        session.execute(update(Phase).values(quota_total=None))
        session.commit()
    old = accept(db)
    with db() as session:
        session.execute(update(Submission).values(status=SCORED, selected=True))
        session.execute(update(Phase).values(dataset_id="x:2"))
        session.commit()
    copy = rescore_of(db, old)
    with db() as session:
        team = session.scalar(select(Team))
        session.execute(update(Submission).where(Submission.id == copy.id).values(status=SCORED))
        session.commit()
        assert ledger.select_for_ranking(session, team, copy.id, True).selected  # the old one's selection not counted
        with pytest.raises(ledger.PhaseClosed, match=f"submission {old.id} is on dataset x:1, superseded by the "
                                                     "corrected x:2: select its re-score instead"):
            ledger.select_for_ranking(session, team, old.id, False)
