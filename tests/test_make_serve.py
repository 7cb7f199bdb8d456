"""`make serve` (tools/serve.py) as a maintainer runs it: every embedded benchmark's test split as
the hidden phase `test`, each demo team's token on a line of its own, how to submit; a team's
upload sent with the token from $SEGBENCH_TOKEN is scored by the worker it started and appears on
the board; Ctrl-C (SIGINT to the terminal's process group) stops every process it started."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from server_fixtures import BENCHMARK, PHASE, ROOT, call, environment, make_upload, segbench_here

from segbench.server.board import UPLOAD

TEAMS = ("demo-a", "demo-b")
LAST_LINE = "segbench server reveal --db "  # the printed instructions end with the reveal command


def read_until(process: subprocess.Popen, last: str, timeout: float = 120) -> list[str]:
    """The process's output lines up to the one containing `last` (the test fails after `timeout`)."""
    lines: list[str] = []

    def read() -> None:
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if last in line:
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    assert not reader.is_alive(), f"no line with {last!r} within {timeout} s; the output:\n" + "\n".join(lines)
    return lines


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def serve(port: int, folder: Path, **output) -> subprocess.Popen:
    """`make serve`'s script, in a session of its own: its group is what a terminal's Ctrl-C signals."""
    return subprocess.Popen([sys.executable, str(ROOT / "tools" / "serve.py"), "--port", str(port), "--dir",
                             str(folder)], cwd=ROOT, env=environment(), text=True, start_new_session=True, **output)


@dataclass
class Served:
    process: subprocess.Popen
    lines: list[str]  # what it printed, up to its last instruction
    url: str  # from its `serving` line
    folder: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("make-serve") / "server"
    process = serve(0, folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        lines = read_until(process, LAST_LINE)
        (serving,) = [line for line in lines if line.startswith("serving ")]
        yield Served(process, lines, re.match(r"serving (http://127\.0\.0\.1:\d+) ", serving).group(1), folder)
    finally:
        if group_alive(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def test_it_prints_every_phase_each_teams_token_and_how_to_submit(served):
    lines = served.lines
    benchmarks = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["benchmarks"]
    expected = []
    for name, entry in benchmarks.items():
        phases = yaml.safe_load((ROOT / "config" / "phases" / f"{name}.yaml").read_text())["phases"]
        split = next(phase["split"] for phase in phases if phase["name"] == PHASE)
        dataset_id = json.loads((ROOT / entry["manifest"]).read_text())["dataset_id"]
        expected.append(f"phase {PHASE} of {name}: split {split}, dataset {dataset_id}")
    assert [line for line in lines if line.startswith("phase ")] == expected
    tokens = [line for line in lines if line.startswith("token for ")]
    assert [re.fullmatch(r"token for ([\w-]+): (sbt_[\w-]{43})", line).group(1) for line in tokens] == list(TEAMS)
    assert f"segbench submit upload.zip --server {served.url} --token {tokens[0].split(': ')[1]} " in "\n".join(lines)
    assert lines[-1].strip() == (f"{LAST_LINE}sqlite:///{served.folder / 'server.db'} --benchmark {BENCHMARK} "
                                 f"--phase {PHASE}")


def test_a_teams_upload_is_scored_by_its_worker_and_ctrl_c_stops_everything(served, tmp_path, monkeypatch):
    process, url = served.process, served.url
    token = next(line for line in served.lines if line.startswith("token for demo-a: ")).split(": ")[1]
    monkeypatch.setenv("SEGBENCH_TOKEN", token)  # the client reads the token from the environment
    submitted = segbench_here("submit", str(make_upload(tmp_path / "upload.zip")), "--server", url, "--benchmark",
                              BENCHMARK, "--phase", PHASE, "--method", "thirds", "--wait")
    assert '"status": "scored"' in submitted.stdout
    status, board = call(f"{url}/api/v1/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard")
    assert status == 200
    assert [(e["team"], e["method"]) for e in board["groups"][0]["entries"] if e["kind"] == UPLOAD] == [
        ("demo-a", "thirds")]

    os.killpg(process.pid, signal.SIGINT)
    assert process.wait(30) == 0
    deadline = time.monotonic() + 15
    while group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not group_alive(process.pid), "a process `make serve` started outlived its Ctrl-C"


def test_a_port_in_use_is_refused_with_the_servers_own_words_and_nothing_left_running(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = serve(port, tmp_path / "server", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = process.communicate(timeout=120)
    assert process.returncode == 1
    assert err.startswith(f"make serve: the server stopped (exit status 1); its output ({tmp_path / 'server'}")
    assert err.rstrip().endswith(f"--host 127.0.0.1 --port {port}: cannot listen there (Address already in use)")
    assert "token for" not in out  # no team is told to submit to a server that is not there
    assert not group_alive(process.pid)
