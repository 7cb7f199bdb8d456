"""Load and faults against real processes (one deployment per database backend, shared by the
module): 200 uploads from 10 teams at once, every accepted one scored exactly once, every quota
exact, the board what `segbench metrics` says of the same uploads; a server killed with kill -9
in the middle of an upload leaves nothing stored and no quota used; PostgreSQL restarted under
load, the server and the workers carry on without a restart of their own. (A worker killed with
kill -9 while it scores: tests/test_worker.py.)"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy
from server_fixtures import (BACKENDS, BENCHMARK, DATA, PHASE, SPLIT, Deployment, environment, make_upload,
                             segbench_here)

from segbench.protocols.definitions import load_benchmark
from segbench.records.countsio import read_counts
from segbench.server.accounts import add_team
from segbench.server.database import engine_for, sessions
from segbench.server.launch import start_server
from segbench.server.store import FolderStore
from segbench.steps.metrics import document

ROOT = Path(__file__).resolve().parents[1]
TEAMS, ATTEMPTS, QUOTA = 10, 20, 3  # 200 uploads, 30 accepted
VARIANTS = (0.1, 1 / 3, 0.5)  # each upload blanks this share of each frame's top rows
LOAD_PHASES = f"""benchmark: {BENCHMARK}
phases:
  - name: {PHASE}
    split: {SPLIT}
    quota_total: {QUOTA}
    selection: 1
    show_scores: true
    private_fraction: 0.5
"""


@pytest.fixture(scope="module", params=BACKENDS)
def served(tmp_path_factory, request):
    deployment = Deployment(tmp_path_factory.mktemp("server"), ("--uploads-per-hour", "1000"),
                            backend=request.param, phases_file=LOAD_PHASES)
    engine = engine_for(deployment.db)
    with sessions(engine)() as session:  # in process: ten `segbench server add-team` would take a while
        for i in range(TEAMS):
            deployment.tokens[f"team{i}"] = add_team(session, f"team{i}")
    engine.dispose()
    deployment.worker()
    deployment.worker()
    yield deployment
    deployment.close()


@pytest.fixture(scope="module")
def variants(tmp_path_factory) -> list[tuple[bytes, dict]]:
    """Each variant's bytes and what `segbench metrics` says of them."""
    folder = tmp_path_factory.mktemp("variants")
    out = []
    for k, blank in enumerate(VARIANTS):
        upload = make_upload(folder / f"v{k}.zip", blank_rows=blank)
        segbench_here("metrics", "--benchmark", BENCHMARK, "--predictions", str(upload), "--label-space",
                 load_benchmark(BENCHMARK).ground_truth.name, "--data", str(DATA), "--split", SPLIT,
                 "--out", str(folder / f"v{k}.json"))
        out.append((upload.read_bytes(), json.loads((folder / f"v{k}.json").read_text())))
    return out


def host_view(served: Deployment) -> list[dict]:
    status, answer = served.api("/host/submissions", served.host_token)
    assert status == 200, answer
    return answer["submissions"]


def wait_until_settled(served: Deployment, timeout: float = 300) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        found = host_view(served)
        if all(s["status"] in ("scored", "failed") for s in found):
            return found
        assert time.monotonic() < deadline, Counter(s["status"] for s in found)
        time.sleep(0.5)


def test_200_uploads_from_10_teams_are_each_scored_once_within_exact_quotas(served, variants):
    outcomes: dict[str, list[int]] = {f"team{i}": [] for i in range(TEAMS)}

    def team_sends(team: str) -> None:
        for j in range(ATTEMPTS):  # distinct method names: none is a replay of another
            status, _ = served.upload(team, variants[j % len(VARIANTS)][0], f"v{j % len(VARIANTS)}-{j}")
            outcomes[team].append(status)

    threads = [threading.Thread(target=team_sends, args=(team,)) for team in outcomes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {team: Counter(got) for team, got in outcomes.items()} == {
        team: Counter({201: QUOTA, 429: ATTEMPTS - QUOTA}) for team in outcomes}

    found = wait_until_settled(served)
    assert len(found) == TEAMS * QUOTA
    assert Counter(s["team"] for s in found) == Counter({team: QUOTA for team in outcomes})
    assert {(s["status"], s["attempts"]) for s in found} == {("scored", 1)}  # each scored by one claim
    benchmark = load_benchmark(BENCHMARK)
    for s in found:  # each one's stored counts are the CLI's for the same bytes (no number is served before the reveal)
        expected = variants[int(s["method"][1])][1]
        (sha,), = served.sql("SELECT counts_sha256 FROM submissions WHERE id = :id", id=s["id"])
        counts, _ = read_counts(FolderStore(served.store).path(sha))
        whole = document(benchmark, counts, benchmark.ground_truth, SPLIT, "x", "predictions")
        assert (whole["results"], whole["frames"]) == (expected["results"], expected["frames"])

    (group,) = served.api(f"/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard")[1]["groups"]
    entries = {e["team"]: e for e in group["entries"] if e["kind"] == "upload"}
    assert set(entries) == set(outcomes)
    for team, entry in entries.items():  # the Ladder's released best: its scores only rise
        released = served.sql("SELECT s.public_score FROM submissions s JOIN teams t ON s.team_id = t.id "
                              "WHERE t.name = :team AND s.released", team=team)
        assert entry["headline"]["value"] == max(score for score, in released)


def test_a_server_killed_during_an_upload_leaves_nothing_stored_and_no_quota_used(served, variants, tmp_path):
    """A second server on the same deployment takes half an upload and is killed with kill -9."""
    team = "gamma"
    engine = engine_for(served.db)
    with sessions(engine)() as session:
        served.tokens[team] = add_team(session, team)
    engine.dispose()
    temp = tmp_path / "temp"
    temp.mkdir()
    server, url = start_server(served.db, log=tmp_path / "log", env={**environment(), "TMPDIR": str(temp)},
                               start_new_session=True)
    port = int(url.rsplit(":", 1)[1])
    try:
        before = served.rows("submissions"), served.stored_objects()
        body = variants[0][0]
        connection = socket.create_connection(("127.0.0.1", port), timeout=30)
        connection.sendall((f"POST /api/v1/benchmarks/{BENCHMARK}/phases/{PHASE}/submissions?method=half HTTP/1.1\r\n"
                            f"Host: 127.0.0.1\r\nAuthorization: Bearer {served.tokens[team]}\r\n"
                            f"Content-Type: application/zip\r\nContent-Length: {len(body)}\r\n\r\n").encode()
                           + body[: len(body) // 2])
        deadline = time.monotonic() + 60  # the half is being written to the server's temp file
        while not any(temp.iterdir()):
            assert time.monotonic() < deadline, "the server never started receiving"
            time.sleep(0.05)
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        connection.close()
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
    assert (served.rows("submissions"), served.stored_objects()) == before
    assert [s for s in host_view(served) if s["team"] == team] == []
    for k in range(QUOTA):  # the whole quota is still the team's
        assert served.upload(team, variants[k][0], f"v{k}-after")[0] == 201
    assert served.upload(team, variants[0][0], "v0-over")[0] == 429
    assert {s["status"] for s in wait_until_settled(served) if s["team"] == team} == {"scored"}


@pytest.mark.parametrize("served", ["postgresql"], indirect=True)
def test_postgresql_restarted_under_load_the_server_and_workers_carry_on(served, variants):
    cluster = ROOT / "tools" / "postgres-cluster"
    ours, theirs = (sqlalchemy.engine.make_url(u) for u in (
        subprocess.run([str(cluster), "url"], capture_output=True, text=True).stdout.strip(), served.db))
    if (ours.host, ours.port) != (theirs.host, theirs.port):
        pytest.skip("the test PostgreSQL is not tools/postgres-cluster's, so it cannot be restarted here")
    team = "delta"
    engine = engine_for(served.db)
    with sessions(engine)() as session:
        served.tokens[team] = add_team(session, team)
    engine.dispose()
    pids = [p.pid for p in served.processes]
    reads: list[int] = []
    stop = threading.Event()

    def keep_reading() -> None:  # the load: the board read over and over through the outage
        while not stop.is_set():
            reads.append(served.api(f"/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard")[0])

    readers = [threading.Thread(target=keep_reading) for _ in range(4)]
    for reader in readers:
        reader.start()
    try:
        assert served.upload(team, variants[0][0], "v0-before")[0] == 201
        subprocess.run([str(cluster), "down"], check=True, capture_output=True, timeout=120)
        status, answer = served.upload(team, variants[1][0], "v1-during")
        assert (status, set(answer)) == (503, {"error"})
        subprocess.run([str(cluster), "up"], check=True, capture_output=True, timeout=120)
        deadline = time.monotonic() + 60
        while (status := served.upload(team, variants[1][0], "v1-after")[0]) == 503:
            assert time.monotonic() < deadline
            time.sleep(0.5)
        assert status == 201
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert set(reads) == {200, 503}, Counter(reads)  # served before, refused during, served after
    assert all(p.poll() is None for p in served.processes) and [p.pid for p in served.processes] == pids
    found = [s for s in wait_until_settled(served) if s["team"] == team]
    assert sorted((s["method"], s["status"]) for s in found) == [("v0-before", "scored"), ("v1-after", "scored")]
