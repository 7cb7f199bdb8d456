"""`segbench server run --processes N` (server/processes.py) against real processes: N processes
serve one port; together they never pass a team's rate limit (each counts 1/N of it); SIGTERM to
the supervisor stops them all; one that dies stops the others, and the command fails."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import time
from pathlib import Path

import pytest
from server_fixtures import BENCHMARK, PHASE, Deployment

from segbench.errors import SegbenchError
from segbench.server.host import init, serve
from segbench.server.settings import Settings

BOARD = f"/api/v1/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard"


def children(pid: int) -> set[int]:
    return {int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def get(url: str, path: str, token: str | None = None) -> int:
    """The status of a GET on a connection of its own (the kernel hands it to any process)."""
    connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=60)
    try:
        connection.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


@pytest.fixture
def served(tmp_path):
    deployment = Deployment(tmp_path, ("--processes", "2", "--requests-per-minute", "10"))
    yield deployment
    deployment.close()


def wait_until(condition, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_two_processes_serve_the_port_within_the_rate_limit_and_stop_together(served):
    processes = children(served.server.pid)
    assert len(processes) == 2
    assert [get(served.url, BOARD) for _ in range(20)] == [200] * 20
    # 10 a minute for the team: 5 counted by each process, wherever each connection lands.
    statuses = [get(served.url, "/api/v1/submissions", served.tokens["alpha"]) for _ in range(14)]
    assert set(statuses) <= {200, 429} and 5 <= statuses.count(200) <= 10, statuses
    served.server.send_signal(signal.SIGTERM)
    assert served.server.wait(30) == 0
    assert not any(alive(pid) for pid in processes)


def test_a_process_that_dies_stops_the_others_and_the_command_fails(served):
    first, second = sorted(children(served.server.pid))
    os.kill(first, signal.SIGKILL)
    assert served.server.wait(30) == 1
    assert wait_until(lambda: not alive(second))
    log = (served.folder / "server-0.log").read_text()
    assert f"process {first} stopped (-9); stopping the others" in log
    assert "error: a server process stopped on its own (its error is above); the others were stopped" in log


@pytest.mark.parametrize("processes", [0, 4])
def test_more_processes_than_the_smallest_rate_limit_or_none_are_refused_before_anything_starts(tmp_path, processes):
    # Each process counts 1/N of each limit: with 3 uploads an hour, 4 processes would count none.
    with pytest.raises(SegbenchError, match=rf"^--processes {processes}: from 1 to the smallest rate limit \(3\)$"):
        serve(f"sqlite:///{tmp_path / 'none.db'}", "127.0.0.1", 0, Settings(uploads_per_hour=3), processes)
    assert not (tmp_path / "none.db").exists()


def test_a_port_in_use_is_refused_naming_it(tmp_path):
    db = f"sqlite:///{tmp_path / 'server.db'}"
    init(db, str(tmp_path / "store"))
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(SegbenchError) as refused:
            serve(db, "127.0.0.1", port, Settings(), 1)
    assert str(refused.value) == f"--host 127.0.0.1 --port {port}: cannot listen there (Address already in use)"
