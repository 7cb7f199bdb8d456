"""The hosted evaluation's speed (docs/performance.md, "Hosted evaluation"), on the embedded
Painting Vision test split, with the library's own server and worker code:

1. a worker's time per upload (claim, fetch from the store, score, bootstrap, write) against the
   time to decode that upload's masks and their labels (segbench's decoder, all cores: what the
   scorer cannot avoid); target <= 1.2 x;
2. uploads accepted per second through the HTTP intake (a `segbench server run` process, CONCURRENCY
   clients, distinct uploads so none is a replay);
3. the leaderboard API's p95 latency with 1,000 entries (1,000 teams' scored submissions, copies
   of one scored row) under 50 concurrent readers, once the first read built the board (a
   server keeps it until what it shows changes: server/board_cache.py); target <= 50 ms.

    PYTHONPATH=src .venv/bin/python benchmarks/server_speed.py [--uploads 20] [--intake 60] [--reads 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sqlalchemy import select

from segbench.server.launch import start_server

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "benchmarks")]

from server_fixtures import (BENCHMARK, DATA, MANIFEST, PHASE, call, environment,  # noqa: E402
                             make_upload, phases_text, split_frames)
from timing import machine  # noqa: E402

from segbench.io.fileio import sha256_file  # noqa: E402
from segbench.io.maskio import decode_mask  # noqa: E402
from segbench.server import host, ledger  # noqa: E402
from segbench.server.deployment import CODE_VERSION, connect  # noqa: E402
from segbench.server.models import Phase, Submission, Team  # noqa: E402
from segbench.server.settings import Settings  # noqa: E402
from segbench.server.worker import work_once  # noqa: E402

CONCURRENCY, READERS = 8, 50


def deployment_in(folder: Path) -> str:
    folder.mkdir()
    db = f"sqlite:///{folder / 'server.db'}"
    host.init(db, str(folder / "store"))
    (folder / f"{BENCHMARK}.yaml").write_text(phases_text("null"))
    host.add_phase(db, BENCHMARK, PHASE, DATA, MANIFEST, phases=folder / f"{BENCHMARK}.yaml")
    return db


def decode_seconds(upload: Path, threads: ThreadPoolExecutor) -> float:
    """Decoding the upload's masks and their labels, all cores."""
    frames = {f["frame_id"]: DATA / f["label"]["path"] for f in split_frames()[0]}
    with zipfile.ZipFile(upload) as archive:
        masks = [archive.read(f"{frame}.png") for frame in frames]
    labels = [path.read_bytes() for path in frames.values()]
    start = time.perf_counter()
    list(threads.map(lambda item: decode_mask(item, "x"), masks + labels))
    return time.perf_counter() - start


def worker_speed(folder: Path, uploads: int, resamples: int) -> bool:
    """Prints the figures; returns whether the target is met."""
    db = deployment_in(folder / "worker")
    deployment = connect(db, Settings(resamples=resamples))
    host.add_team(db, "speed")
    upload = make_upload(folder / "upload.zip")
    with deployment.sessions() as session:
        team, phase = session.scalar(select(Team)), session.scalar(select(Phase))
    sha = sha256_file(upload)
    for i in range(uploads + 1):  # the first warms up (the hidden split verified once per process)
        with deployment.sessions() as session:
            ledger.accept(session, team, phase, sha, upload.stat().st_size, f"m{i}", "", CODE_VERSION,
                          lambda: deployment.store.put(upload, sha))
    work_once(deployment)
    workers, decodes = [], []
    with ThreadPoolExecutor(len(os.sched_getaffinity(0))) as threads:
        decode_seconds(upload, threads)
        for _ in range(uploads):
            start = time.perf_counter()
            assert work_once(deployment) is not None
            workers.append(time.perf_counter() - start)
            decodes.append(decode_seconds(upload, threads))
    w, d = statistics.median(workers), statistics.median(decodes)
    print(f"worker, {resamples} resamples: {w * 1000:.1f} ms per upload (median of {uploads}); decoding its "
          f"{len(split_frames()[0])} masks and labels: {d * 1000:.2f} ms; ratio {w / d:.1f} x")
    return w / d <= 1.2


def serve(db: str, folder: Path, *options: str) -> tuple[subprocess.Popen, str]:
    return start_server(db, *options, log=folder / "server.log", env=environment())


def concurrently(function, count: int, threads: int) -> tuple[list, float]:
    """function(0 .. count-1) on `threads` threads: the results and the seconds they took."""
    with ThreadPoolExecutor(threads) as pool:
        start = time.perf_counter()
        results = list(pool.map(function, range(count)))
        return results, time.perf_counter() - start


def intake_speed(folder: Path, count: int) -> None:
    db = deployment_in(folder / "intake")
    token = host.add_team(db, "speed")
    body = make_upload(folder / "intake.zip").read_bytes()
    server, url = serve(db, folder, "--uploads-per-hour", str(count + 10), "--requests-per-minute", "100000")
    try:
        def one(i: int) -> int:
            return call(f"{url}/api/v1/benchmarks/{BENCHMARK}/phases/{PHASE}/submissions?method=m{i}", token,
                        body=body, headers={"Content-Type": "application/zip"})[0]

        statuses, seconds = concurrently(one, count, CONCURRENCY)
    finally:
        server.terminate()
        server.wait()
    assert statuses == [201] * count, statuses
    print(f"intake: {count} uploads ({len(body)} bytes, {len(split_frames()[0])} masks each) accepted in "
          f"{seconds:.1f} s by {CONCURRENCY} clients: {count / seconds:.1f} uploads/s")


def board_latency(folder: Path, reads: int, entries: int) -> bool:
    """Prints the figures; returns whether the target is met (and every read answered 200)."""
    db = deployment_in(folder / "board")
    deployment = connect(db, Settings(resamples=50))
    host.add_team(db, "seed")
    upload = make_upload(folder / "board.zip")
    sha = sha256_file(upload)
    with deployment.sessions() as session:
        team, phase = session.scalar(select(Team)), session.scalar(select(Phase))
        ledger.accept(session, team, phase, sha, upload.stat().st_size, "seed", "", CODE_VERSION,
                      lambda: deployment.store.put(upload, sha))
    work_once(deployment)
    with deployment.sessions() as session:  # 999 more teams, each with a copy of the scored row
        scored = session.scalar(select(Submission))
        for i in range(entries - 1):
            other = Team(name=f"team{i}", token_hash=secrets.token_hex(32))
            session.add(other)
            session.flush()
            session.add(Submission(**{c.name: getattr(scored, c.name) for c in Submission.__table__.columns
                                      if c.name not in ("id", "team_id", "method")},
                                   id=secrets.token_hex(16), team_id=other.id, method=f"m{i}"))
        session.commit()
    server, url = serve(db, folder, "--requests-per-minute", "1000000")
    board = f"{url}/api/v1/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard"
    try:
        start = time.perf_counter()
        with urllib.request.urlopen(board) as response:  # the first read builds the board
            entries = len(json.loads(response.read())["groups"][0]["entries"])
        first = time.perf_counter() - start

        def read(_: int) -> tuple[float, int]:
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(board) as response:
                    response.read()
                    status = response.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            return time.perf_counter() - start, status

        answers, seconds = concurrently(read, reads, READERS)
    finally:
        server.terminate()
        server.wait()
    latencies = sorted(t for t, _ in answers)  # every answer's, failed or not
    failed = Counter(status for _, status in answers if status != 200)
    p50, p95 = latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.95)]
    print(f"leaderboard: the first read, which builds the board, {first * 1000:.0f} ms")
    print(f"leaderboard: {entries} entries, {READERS} readers, {reads} reads in {seconds:.1f} s "
          f"({reads / seconds:.1f}/s): p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms; "
          f"answers not 200: {dict(failed) or 'none'}")
    return p95 <= 0.050 and not failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=20, help="worker timing: uploads scored")
    parser.add_argument("--resamples", type=int, default=1000, help="the worker's bootstrap (the default setting)")
    parser.add_argument("--intake", type=int, default=60, help="uploads sent through the intake")
    parser.add_argument("--reads", type=int, default=2000, help="leaderboard reads")
    parser.add_argument("--entries", type=int, default=1000, help="the board's entries (teams with a scored upload)")
    args = parser.parse_args()
    print(f"machine: {machine()}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="server-speed-") as folder:
        worker_met = worker_speed(Path(folder), args.uploads, args.resamples)
        intake_speed(Path(folder), args.intake)
        board_met = board_latency(Path(folder), args.reads, args.entries)
    print(f"load average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"target worker <= 1.2 x decode: {'met' if worker_met else 'MISSED'}")
    print(f"target leaderboard p95 <= 50 ms, every answer 200: {'met' if board_met else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
