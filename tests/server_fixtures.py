"""A hosted evaluation as real processes, for the server's end-to-end tests: the CLI's commands
in subprocesses on this checkout's source (a deployment's set-up commands in the test's own
process, through the same entry point), a server (uvicorn) on a free localhost port and its
workers, on SQLite or on a fresh database of the PostgreSQL that $SEGBENCH_TEST_POSTGRES names
(tools/postgres-cluster up; under CI=true a missing one fails the test), an upload made from the
embedded Painting Vision test split, and an HTTP caller."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy
from PIL import Image

from segbench.commands import cli
from segbench.datasets import dataset_format
from segbench.protocols.definitions import load_benchmark
from segbench.server.launch import start_server

ROOT = Path(__file__).resolve().parents[1]
DATA, MANIFEST = ROOT / "data", ROOT / "data_manifest.json"
BENCHMARK, PHASE, SPLIT = "painting-vision", "test", "test"


def phases_text(quota_total: str = "100", benchmark: str = BENCHMARK) -> str:
    """A phases file of one phase `test` of `benchmark`, always open, of `quota_total` uploads per
    team ("null": no limit)."""
    return f"""benchmark: {benchmark}
phases:
  - name: {PHASE}
    split: {SPLIT}
    quota_per_day: null
    quota_total: {quota_total}
    selection: 1
    show_scores: true
    private_fraction: 0.5
"""


PHASES = phases_text()  # the tests' phase: a quota no test reaches
# Fast settings for the tests: a short lease and poll, a small bootstrap.
WORKER_OPTIONS = ("--lease-seconds", "3", "--poll-seconds", "0.2", "--resamples", "50")


BACKENDS = ("sqlite", "postgresql")


def postgres_url() -> str:
    """$SEGBENCH_TEST_POSTGRES; without it the test is skipped, or failed under CI=true (.ci/run
    starts PostgreSQL, so a missing one is a CI fault)."""
    url = os.environ.get("SEGBENCH_TEST_POSTGRES")
    if url:
        return url
    problem = "no PostgreSQL: set SEGBENCH_TEST_POSTGRES=$(tools/postgres-cluster up)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {problem}", pytrace=False)
    pytest.skip(problem)


def fresh_postgres_database() -> str:
    """The URL of a new, empty database on the test PostgreSQL (one per deployment)."""
    url = sqlalchemy.engine.make_url(postgres_url())
    name = f"segbench_{os.getpid()}_{time.monotonic_ns()}"
    admin = sqlalchemy.create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sqlalchemy.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


def database_url(backend: str, folder: Path) -> str:
    return f"sqlite:///{folder / 'server.db'}" if backend == "sqlite" else fresh_postgres_database()


def environment() -> dict[str, str]:
    """This checkout's source first, then the caller's PYTHONPATH (packages installed beside the venv)."""
    path = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1"}


def segbench(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "segbench", *args], env=environment(), capture_output=True,
                          text=True, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"segbench {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def as_process(*args: str) -> str:
    """The standard output of `segbench ARGS` in a process of its own (failing the test if it fails)."""
    return segbench(*args).stdout


def segbench_here(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`segbench ARGS` run in this process, as `segbench` runs it in its own: the same command-line
    entry, its exit status and what it printed, without an interpreter start and its imports
    (about 0.8 s each)."""
    done = subprocess.CompletedProcess(["segbench", *args], *cli.captured(list(args)))
    if check and done.returncode != 0:
        raise AssertionError(f"segbench {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def in_process(*args: str) -> str:
    """The standard output of `segbench ARGS` run in this process (failing the test if it fails)."""
    return segbench_here(*args).stdout


def start(*args: str, log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "segbench", *args], env=environment(), stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def kill_while_scoring(worker: subprocess.Popen, scoring: Callable[[], bool], timeout: float = 120) -> None:
    """SIGKILL a worker's process group while a claim of its is in progress, as `scoring()` reads it
    from the database. Seen once, the worker is stopped (SIGSTOP: it can finish nothing) and, after
    a moment for a commit already sent to land, read again: killed if the claim still shows,
    else let go on. A kill right after a look could land after the claim's end."""
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline and worker.poll() is None, "no claim of the worker's was seen in progress"
        if scoring():
            os.killpg(worker.pid, signal.SIGSTOP)
            time.sleep(0.2)
            if scoring():
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait()
                return
            os.killpg(worker.pid, signal.SIGCONT)
        time.sleep(0.02)


def split_frames(manifest_path: Path = MANIFEST) -> tuple[list[dict], str]:
    manifest = json.loads(manifest_path.read_text())
    return [f for f in manifest["frames"] if f["split"] == SPLIT], manifest["dataset_id"]


def make_upload(path: Path, blank_rows: float = 1 / 3, dataset_id: str | None = None,
                extra: dict[str, bytes] | None = None, skip: int = 0, data: Path = DATA,
                manifest: Path = MANIFEST, benchmark: str = BENCHMARK) -> Path:
    """An upload of the test split (of `data`, as `manifest` lists it): each frame's ground truth
    with its top `blank_rows` set to 0, named as `benchmark`'s format names a prediction,
    `dataset_id.txt` (the manifest's unless given), minus the first `skip` frames, plus `extra`
    members."""
    frames, stated = split_frames(manifest)
    member = dataset_format(load_benchmark(benchmark).dataset_format).prediction_name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as upload:
        for frame in frames[skip:]:
            mask = np.array(Image.open(data / frame["label"]["path"]))
            mask[: int(mask.shape[0] * blank_rows)] = 0
            buffer = io.BytesIO()
            Image.fromarray(mask).save(buffer, format="PNG")
            upload.writestr(member(frame["frame_id"]), buffer.getvalue())
        upload.writestr("dataset_id.txt", (dataset_id or stated) + "\n")
        for name, data in (extra or {}).items():
            upload.writestr(name, data)
    return path


def call(url: str, token: str | None = None, body: bytes | None = None, method: str | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict]:
    """(status, JSON body) of one request."""
    request = urllib.request.Request(url, data=body, method=method or ("POST" if body is not None else "GET"),
                                     headers={**({"Authorization": f"Bearer {token}"} if token else {}),
                                              **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


class Deployment:
    """`segbench server init` in `folder` (SQLite or a fresh PostgreSQL database, local store), the
    embedded Painting Vision test split as phase `test` (or the split of `data` as `manifest` lists
    it; with the `baseline` upload, if given), two teams; then a server, and workers on demand.
    The set-up commands run through `command`: in this process, or, where the set-up itself is
    under test (test_server), `as_process`."""

    def __init__(self, folder: Path, server_options: tuple[str, ...] = (), baseline: Path | None = None,
                 backend: str = "sqlite", phases_file: str = PHASES, phase_names: tuple[str, ...] = (PHASE,),
                 data: Path = DATA, manifest: Path = MANIFEST, command=in_process):
        self.folder, self.backend = folder, backend
        self.db = database_url(backend, folder)
        self.engine = sqlalchemy.create_engine(self.db, poolclass=sqlalchemy.pool.NullPool)
        self.store = folder / "store"
        init = command("server", "init", "--db", self.db, "--store", str(self.store))
        self.host_token = next(line.split(": ", 1)[1] for line in init.splitlines() if line.startswith("host token: "))
        phases = folder / f"{BENCHMARK}.yaml"
        phases.write_text(phases_file)
        for name in phase_names:
            command("server", "add-phase", "--db", self.db, "--benchmark", BENCHMARK, "--phase", name, "--data",
                    str(data), "--dataset-manifest", str(manifest), "--phases", str(phases),
                    *(("--baseline", str(baseline)) if baseline is not None else ()))
        self.tokens = {}
        for team in ("alpha", "beta"):
            line = command("server", "add-team", team, "--db", self.db).strip()
            assert line.startswith(f"token for {team}: ")
            self.tokens[team] = line.split(": ", 1)[1]
        self.processes: list[subprocess.Popen] = []
        self.server, self.url = self.start_server(*server_options)
        self.port = int(self.url.rsplit(":", 1)[1])

    def start_server(self, *options: str, **popen) -> tuple[subprocess.Popen, str]:
        """One more `segbench server run` of the deployment, on a port of its own; its URL."""
        process, url = start_server(self.db, *options, log=self.folder / f"server-{len(self.processes)}.log",
                                    env=popen.pop("env", environment()), start_new_session=True, **popen)
        self.processes.append(process)
        return process, url

    def spawn(self, *args: str) -> subprocess.Popen:
        process = start(*args, log=self.folder / f"{args[1]}-{len(self.processes)}.log")
        self.processes.append(process)
        return process

    def worker(self, *options: str) -> subprocess.Popen:
        return self.spawn("server", "worker", "--db", self.db, *WORKER_OPTIONS, *options)

    def api(self, path: str, team: str | None = None, **kwargs) -> tuple[int, dict]:
        token = self.tokens[team] if team in self.tokens else team
        return call(f"{self.url}/api/v1{path}", token, **kwargs)

    def upload(self, team: str, data: bytes, method: str = "m", phase: str = PHASE) -> tuple[int, dict]:
        return self.api(f"/benchmarks/{BENCHMARK}/phases/{phase}/submissions?method={method}", team, body=data,
                        headers={"Content-Type": "application/zip"})

    def wait_for(self, team: str, submission_id: str, statuses=("scored", "failed"), timeout: float = 120) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status, view = self.api(f"/submissions/{submission_id}", team)
            assert status == 200, view
            if view["status"] in statuses:
                return view
            time.sleep(0.1)
        raise AssertionError(f"submission {submission_id} still {view['status']}")

    def sql(self, query: str, **parameters) -> list[tuple]:
        """The rows of one statement on the deployment's database (committed)."""
        with self.engine.begin() as connection:
            result = connection.execute(sqlalchemy.text(query), parameters)
            return [tuple(row) for row in result] if result.returns_rows else []

    def rows(self, table: str) -> int:
        return self.sql(f"SELECT count(*) FROM {table}")[0][0]

    def stored_objects(self) -> list[str]:
        return sorted(p.name for p in self.store.rglob("*") if p.is_file())

    def close(self) -> None:
        for process in reversed(self.processes):
            stop(process)
        self.engine.dispose()
        if self.backend == "postgresql":  # the deployment's own database goes with it
            url = sqlalchemy.engine.make_url(self.db)
            admin = sqlalchemy.create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
            with admin.connect() as connection:
                connection.execute(sqlalchemy.text(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)'))
            admin.dispose()
