"""The boards' cache (server/board_cache.py): a board is built once per version of what it
shows; every change a board shows bumps its phase's version in the database, in the change's own
transaction (on SQLite and on PostgreSQL where $SEGBENCH_TEST_POSTGRES names a database: test_ledger's
`db`); and two server processes on one database both serve each change at once, against real
processes."""

from __future__ import annotations

import hashlib
import http.client
import threading
import time
from types import SimpleNamespace

import pytest
from server_fixtures import BENCHMARK, PHASE, Deployment, call, make_upload, segbench_here
from sqlalchemy import select
from test_ledger import accept, db  # noqa: F401  (db: the fixture)
from test_ledger_board import scored

from segbench.server import ledger
from segbench.server.accounts import revoke_team
from segbench.server.board_cache import BoardCache
from segbench.server.models import Phase, Team

BOARD = f"/benchmarks/{BENCHMARK}/phases/{PHASE}"


def phase_at(version: int, phase_id: int = 1):
    return SimpleNamespace(id=phase_id, board_version=version)


def test_a_board_is_built_once_per_version_and_an_older_read_gets_the_newer_board():
    cache, builds = BoardCache(), []

    def build(label: str):
        def made() -> str:
            builds.append(label)
            return label
        return made

    assert cache.get(phase_at(0), "public", build("v0")) == "v0"
    assert cache.get(phase_at(0), "public", build("again")) == "v0"
    assert cache.get(phase_at(0), "private", build("private")) == "private"  # another board of the phase
    assert cache.get(phase_at(0, phase_id=2), "public", build("other phase")) == "other phase"
    assert cache.get(phase_at(1), "public", build("v1")) == "v1"
    assert cache.get(phase_at(0), "public", build("stale")) == "v1"  # a request that read the phase before the change
    assert builds == ["v0", "private", "other phase", "v1"]


def test_the_readers_of_a_stale_board_wait_for_one_build():
    cache, builds, started = BoardCache(), [], threading.Barrier(20)

    def read(_: int) -> str:
        started.wait()
        return cache.get(phase_at(3), "public", lambda: builds.append(1) or time.sleep(0.2) or "built")

    threads = [threading.Thread(target=read, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert builds == [1]


def version(factory) -> int:
    with factory() as session:
        return session.scalar(select(Phase.board_version))


def test_each_change_a_board_shows_bumps_the_version_once(db):  # noqa: F811
    assert version(db) == 0
    (first,) = scored(db, 1)
    assert version(db) == 1
    accept(db)  # queued: on no board
    assert version(db) == 1
    with db() as session:
        team = session.scalar(select(Team))
        ledger.select_for_ranking(session, team, first, True)
    assert version(db) == 2
    with db() as session:
        team = session.scalar(select(Team))
        with pytest.raises(ledger.NoSuchSubmission):  # refused: nothing changed
            ledger.select_for_ranking(session, team, "0" * 32, True)
    assert version(db) == 2
    with db() as session:
        revoke_team(session, "alpha")
    assert version(db) == 3


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory):
    deployment = Deployment(tmp_path_factory.mktemp("two"))
    _, second = deployment.start_server()
    deployment.worker()
    yield deployment, second
    deployment.close()


def teams_on(url: str, board: str = "leaderboard") -> tuple[int, list]:
    """(status, the board's entries' teams, the floor's as None)."""
    status, body = call(f"{url}/api/v1{BOARD}/{board}")
    return status, [e["team"] for g in body.get("groups", []) for e in g["entries"]]


def conditional(url: str, path: str, tag: str | None = None) -> tuple[int, str | None, str | None, bytes]:
    """(status, ETag, Cache-Control, body) of a GET, sending If-None-Match: `tag` when given."""
    address = url.removeprefix("http://")
    connection = http.client.HTTPConnection(address, timeout=60)
    try:
        connection.request("GET", path, headers={} if tag is None else {"If-None-Match": tag})
        response = connection.getresponse()
        return response.status, response.getheader("ETag"), response.getheader("Cache-Control"), response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("path", [f"/api/v1{BOARD}/leaderboard", f"/boards/{BENCHMARK}/{PHASE}"])
def test_a_kept_board_is_revalidated_by_its_bytes_digest_on_either_server(two_servers, path):
    deployment, second = two_servers
    status, tag, cache, body = conditional(deployment.url, path)
    assert status == 200 and cache == "no-cache"
    assert tag == f'"{hashlib.blake2b(body, digest_size=16).hexdigest()}"'
    assert conditional(second, path)[:2] == (200, tag)  # the same bytes built by the other process: the same tag
    for sent in (tag, f"W/{tag}", f'"other", {tag}', "*"):
        assert conditional(second, path, sent) == (304, tag, "no-cache", b"")
    assert conditional(deployment.url, path, '"other"') == (200, tag, "no-cache", body)


@pytest.mark.parametrize("path", [f"/api/v1{BOARD}/private-leaderboard", f"/boards/{BENCHMARK}/{PHASE}/private"])
def test_a_hidden_board_is_refused_whatever_tag_is_sent(two_servers, path):
    deployment, _ = two_servers
    status, tag, _, _ = conditional(deployment.url, path, "*")
    assert (status, tag) == (403, None)


def test_two_server_processes_serve_each_change_at_once(two_servers, tmp_path):
    deployment, second = two_servers
    assert teams_on(deployment.url) == teams_on(second) == (200, [])  # nothing scored yet: kept by both
    for team, rows, expected in (("alpha", 0.1, ["alpha"]), ("beta", 0.5, ["alpha", "beta"])):
        held = conditional(second, f"/api/v1{BOARD}/leaderboard")[1]
        status, accepted = deployment.upload(team, make_upload(tmp_path / f"{team}.zip", blank_rows=rows).read_bytes())
        assert status == 201
        deployment.wait_for(team, accepted["id"])
        # Scored by the worker: both servers' next read shows it (alpha's upload is the better one),
        # also to a client that holds the board before it (its tag is no longer the board's).
        assert teams_on(second) == teams_on(deployment.url) == (200, [*expected, None])
        status, tag, _, _ = conditional(second, f"/api/v1{BOARD}/leaderboard", held)
        assert status == 200 and tag != held
    assert teams_on(second, "private-leaderboard")[0] == 403
    segbench_here("server", "reveal", "--db", deployment.db, "--benchmark", BENCHMARK, "--phase", PHASE)
    assert teams_on(second, "private-leaderboard")[0] == teams_on(deployment.url, "private-leaderboard")[0] == 200
