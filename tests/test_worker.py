"""Workers against real processes: a worker killed with kill -9 while it scores loses its lease,
and another worker scores the submission once."""

from __future__ import annotations

import os
import signal
import sqlite3
import time

import pytest
from server_fixtures import BENCHMARK, PHASE, Deployment, make_upload


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    deployment = Deployment(tmp_path_factory.mktemp("server"))
    yield deployment
    deployment.close()


def lease(deployment: Deployment, submission_id: str) -> tuple[str, str | None, int]:
    with sqlite3.connect(deployment.db.removeprefix("sqlite:///")) as db:
        return db.execute("SELECT status, lease_owner, attempts FROM submissions WHERE id = ?",
                          (submission_id,)).fetchone()


def test_a_worker_killed_while_scoring_leaves_the_submission_to_another(served, tmp_path):
    status, accepted = served.upload("alpha", make_upload(tmp_path / "upload.zip").read_bytes())
    assert status == 201
    first = served.worker()
    deadline = time.monotonic() + 120
    while lease(served, accepted["id"])[0] != "scoring":
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.02)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    dead_owner = lease(served, accepted["id"])[1]
    assert lease(served, accepted["id"]) == ("scoring", dead_owner, 1)

    served.worker()
    view = served.wait_for("alpha", accepted["id"])
    status_, owner, attempts = lease(served, accepted["id"])
    assert (view["status"], status_, attempts) == ("scored", "scored", 2) and owner != dead_owner
    entries = served.api(f"/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard")[1]["groups"][0]["entries"]
    assert [e["team"] for e in entries] == ["alpha", None]
