"""Workers against real processes: a worker killed with kill -9 while it scores loses its lease,
and another worker scores the submission once; on SQLite and on PostgreSQL."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace

import pytest
from server_fixtures import BACKENDS, BENCHMARK, PHASE, Deployment, kill_while_scoring, make_upload, stop
from threadpoolctl import threadpool_info, threadpool_limits

from segbench.server import ledger, worker


@pytest.fixture(scope="module", params=BACKENDS)
def served(tmp_path_factory, request):
    deployment = Deployment(tmp_path_factory.mktemp("server"), backend=request.param)
    yield deployment
    deployment.close()


def lease(deployment: Deployment, submission_id: str) -> tuple[str, str | None, int]:
    (row,) = deployment.sql("SELECT status, lease_owner, attempts FROM submissions WHERE id = :id", id=submission_id)
    return row


def test_a_worker_killed_while_scoring_leaves_the_submission_to_another(served, tmp_path):
    status, accepted = served.upload("alpha", make_upload(tmp_path / "upload.zip").read_bytes())
    assert status == 201
    kill_while_scoring(served.worker(), lambda: lease(served, accepted["id"])[0] == "scoring")
    dead_owner = lease(served, accepted["id"])[1]
    assert lease(served, accepted["id"]) == ("scoring", dead_owner, 1)

    second = served.worker()
    view = served.wait_for("alpha", accepted["id"])
    stop(second)  # the module's next test starts with no worker
    status_, owner, attempts = lease(served, accepted["id"])
    assert (view["status"], status_, attempts) == ("scored", "scored", 2) and owner != dead_owner
    entries = served.api(f"/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard")[1]["groups"][0]["entries"]
    assert [e["team"] for e in entries] == ["alpha", None]


def test_a_submission_every_worker_dies_on_is_failed_after_the_last_attempt(served, tmp_path):
    status, accepted = served.upload("beta", make_upload(tmp_path / "upload.zip").read_bytes())
    assert status == 201 and lease(served, accepted["id"])[0] == "queued"  # no worker runs yet
    served.sql("UPDATE submissions SET status = 'scoring', attempts = 3, lease_expires = '2000-01-01 00:00:00' "
               "WHERE id = :id", id=accepted["id"])  # three claims' workers died on it
    served.worker("--max-attempts", "3")
    view = served.wait_for("beta", accepted["id"])
    assert (view["status"], view["error"]) == (
        "failed", "the server's workers stopped 3 times while scoring this upload; it is not scored again")
    assert lease(served, accepted["id"])[2] == 4


def blas_threads() -> list[int]:
    return [library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas"]


def test_a_workers_process_runs_its_blas_on_one_thread_from_its_first_upload(monkeypatch):
    # The bootstrap's small products on one thread, and the limit never raised back: a second
    # BLAS thread spins on the core the next upload's scoring threads need.
    seen = []
    monkeypatch.setattr(ledger, "claim", lambda session, lease: seen.append(blas_threads()))  # nothing claimable
    nothing_queued = SimpleNamespace(sessions=lambda: nullcontext(None), settings=SimpleNamespace(lease_seconds=1.0))
    worker.one_blas_thread.cache_clear()  # as in a new worker process
    with threadpool_limits(limits=None):  # this test's process gets its own limits back at the end
        assert worker.work_once(nothing_queued) is worker.work_once(nothing_queued) is None
        after = blas_threads()
    assert after and seen == [[1] * len(after)] * 2 and after == [1] * len(after)
