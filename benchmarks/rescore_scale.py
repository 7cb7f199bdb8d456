"""A label correction at scale (docs/performance.md, "Re-scoring after a label correction"), with the
server's own code: SUBMISSIONS stored submissions of a FRAMES-frame Painting Vision phase
(generated), one label corrected, `segbench server rescore`, then the workers:

1. the incremental re-score (what the server does): masks decoded (target: one per submission),
   wall time and each worker's peak RSS, with one worker and with two;
2. re-scoring everything (each stored upload scored whole on the corrected data, the same
   workers' code), with one worker and with two, measured on WHOLE of the submissions and scaled
   to all of them (each is scored alone, so the time is linear): the wall time the incremental
   re-score saves. Both re-aggregate every metric and interval from the counts, with RESAMPLES
   bootstrap resamples (the bootstrap's cost is the same both ways).

The data: FRAMES frames of 32 x 24 pixels in walls of FRAMES_PER_WALL (the test split), each label
random rectangles of the ten classes; SUBMISSIONS distinct uploads, 10 per team: DISTINCT base
uploads (each label with a random tenth of its pixels changed), upload i being base i % DISTINCT
with one more frame's mask changed by a pixel (frame i // DISTINCT), so no two are the same bytes.
The stored submissions are made as a worker stores them (counts by the scorer: each base scored
whole once, the one frame that differs scored from upload i; kept in the store, the row scored)
without going through the HTTP intake, which this does not measure. Workers are processes
(`segbench server worker --once`'s loop, run_worker) on one SQLite deployment. The uploads scored
whole are checked to give the rows of their incremental re-score (counts compared without the
metadata, which names each submission). Each run's line ends with the 1-minute load average.

    PYTHONPATH=src .venv/bin/python benchmarks/rescore_scale.py [--submissions 1000] [--frames 2000]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import secrets
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from PIL import Image
from sqlalchemy import select, update

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "benchmarks")]

from server_fixtures import BENCHMARK, PHASE, SPLIT, phases_text  # noqa: E402
from timing import machine  # noqa: E402

import segbench.stages.scoring as stage_scoring  # noqa: E402
import segbench.stages.truth as stage_truth  # noqa: E402
from segbench.core.confusion import FrameCounts  # noqa: E402
from segbench.io.maskio import read_mask  # noqa: E402
from segbench.protocols.definitions import load_benchmark  # noqa: E402
from segbench.records.countsio import write_counts  # noqa: E402
from segbench.server import host, ledger  # noqa: E402
from segbench.server.deployment import CODE_VERSION, connect  # noqa: E402
from segbench.server.models import QUEUED, SCORED, Phase, Submission, Team  # noqa: E402
from segbench.server.settings import Settings  # noqa: E402
from segbench.server.store import keep  # noqa: E402
from segbench.server.worker import run_worker  # noqa: E402
from segbench.steps.dataset_identity import write_identity  # noqa: E402
from segbench.steps.scoring import score_model  # noqa: E402
from segbench.stages.uploads import png  # noqa: E402

WIDTH, HEIGHT = 32, 24
PER_TEAM = 10
WHOLE = "-whole"  # the method of a stored upload queued again to be scored whole


def generated_split(folder: Path, frames: int, per_wall: int, rng: np.random.Generator) -> list[str]:
    """A Painting Vision dataset of `frames` test frames; returns their ids."""
    (folder / "images").mkdir(parents=True)
    (folder / "labels").mkdir()
    ids = [f"w{i // per_wall:04d}_f{i % per_wall}" for i in range(frames)]
    for frame_id in ids:
        label = np.full((HEIGHT, WIDTH), rng.integers(0, 10), np.uint8)
        for _ in range(3):
            x, y = rng.integers(0, WIDTH - 4), rng.integers(0, HEIGHT - 4)
            label[y:y + rng.integers(4, HEIGHT), x:x + rng.integers(4, WIDTH)] = rng.integers(0, 10)
        Image.fromarray(label).save(folder / "labels" / f"{frame_id}.png")
        Image.fromarray(rng.integers(0, 256, (HEIGHT, WIDTH, 3), np.uint8)).save(folder / "images" / f"{frame_id}.png")
    (folder / "frames.csv").write_text("frame_id,wall_id,split\n" + "".join(
        f"{f},{f.split('_')[0]},{SPLIT}\n" for f in ids))
    return ids


def base_masks(data: Path, ids: list[str], rng: np.random.Generator) -> list[np.ndarray]:
    """One model's masks: each frame's label with a random tenth of its pixels set to a random class."""
    masks = []
    for frame_id in ids:
        mask = np.array(Image.open(data / "labels" / f"{frame_id}.png"))
        wrong = rng.random(mask.shape) < 0.1
        mask[wrong] = rng.integers(0, 10, int(wrong.sum()))
        masks.append(mask)
    return masks


def nudged(mask: np.ndarray) -> np.ndarray:
    """A mask with its first pixel's class moved by one: another upload's mask of the same frame."""
    other = mask.copy()
    other[0, 0] = (other[0, 0] + 1) % 10
    return other


def written_upload(path: Path, ids: list[str], masks: list[bytes], dataset_id: str) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for frame_id, data in zip(ids, masks):
            archive.writestr(f"{frame_id}.png", data)
        archive.writestr("dataset_id.txt", dataset_id + "\n")
    return path


def stored_submissions(db: str, data: Path, ids: list[str], dataset_id: str, submissions: int, distinct: int,
                       folder: Path, rng: np.random.Generator) -> None:
    """`submissions` scored submissions of as many distinct uploads, as a worker leaves them: upload
    i is base upload i % distinct (each scored whole once) with the mask of frame (i // distinct)
    nudged, its counts the base's with that one frame scored from upload i (a frame's counts are
    its mask's alone: the counts a whole scoring of upload i gives), kept per submission (named by
    its id, as the worker names them)."""
    if submissions > distinct * len(ids):
        raise SystemExit(f"at most {distinct * len(ids)} distinct uploads of {distinct} bases; raise --distinct")
    deployment = connect(db)
    benchmark = load_benchmark(BENCHMARK)
    with deployment.sessions() as session:
        hidden = deployment.hidden(session.scalar(select(Phase)))
    order = [f.frame_id for f in hidden.frames]
    frames = {f.frame_id: f for f in hidden.frames}
    bases = [base_masks(data, ids, rng) for _ in range(distinct)]
    encoded = [[png(mask) for mask in masks] for masks in bases]
    base_counts = [score_model(benchmark, hidden.frames, "u", "predictions", benchmark.ground_truth,
                               written_upload(folder / "base.zip", ids, masks, dataset_id), folder / "u.parquet", SPLIT)
                   for masks in encoded]
    for t in range((submissions + PER_TEAM - 1) // PER_TEAM):
        host.add_team(db, f"team{t:04d}")
    uploads: set[str] = set()
    with deployment.sessions() as session:
        teams, phase = session.scalars(select(Team).order_by(Team.name)).all(), session.scalar(select(Phase))
        for i in range(submissions):
            k, position = i % distinct, i // distinct
            masks = list(encoded[k])
            masks[position] = png(nudged(bases[k][position]))
            upload = written_upload(folder / "upload.zip", ids, masks, dataset_id)
            one = score_model(benchmark, [frames[ids[position]]], "u", "predictions", benchmark.ground_truth, upload,
                              folder / "u.parquet", SPLIT)
            rest = base_counts[k].subset([f for f in order if f != ids[position]])
            sha = keep(deployment.store, upload)
            uploads.add(sha)
            submission = ledger.accept(session, teams[i // PER_TEAM], phase, sha, upload.stat().st_size,
                                       f"m{i}", "", CODE_VERSION, lambda: None)
            path = folder / "stored.parquet"
            write_counts(path, FrameCounts.merge([rest, one]).subset(order),
                         {"benchmark": BENCHMARK, "split": SPLIT, "dataset_id": None,
                          "model": {"name": submission.id, "kind": "predictions", "checkpoint_sha256": None,
                                    "label_space": {"name": benchmark.ground_truth.name,
                                                    "classes": benchmark.ground_truth.names}}})
            session.execute(update(Submission).where(Submission.id == submission.id)
                            .values(status=SCORED, counts_sha256=keep(deployment.store, path), ladder_position=0))
        session.commit()
    if len(uploads) != submissions:
        raise SystemExit(f"{submissions} submissions but {len(uploads)} distinct uploads")


def counted_worker(db: str, settings: Settings, results) -> None:
    """A worker process until nothing is claimable: (masks decoded, labels read, peak RSS in MiB)."""
    # A session of its own, as a worker a service manager starts has: the kernel's autogroup
    # scheduling shares one session's CPU time among all its processes, however many they are.
    os.setsid()
    decoded, labels = [0], [0]
    read_prediction = stage_scoring.read_prediction

    def prediction(*args):
        decoded[0] += 1
        return read_prediction(*args)

    def label(path):
        labels[0] += 1
        return read_mask(path)

    stage_scoring.read_prediction, stage_truth.read_mask = prediction, label
    run_worker(connect(db, settings), once=True)
    results.put((decoded[0], labels[0], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def run_workers(db: str, settings: Settings, count: int) -> tuple[float, int, int, list[float]]:
    """(wall seconds, masks decoded, labels read, each worker's peak RSS in MiB) of `count` workers."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    start = time.perf_counter()
    workers = [context.Process(target=counted_worker, args=(db, settings, results)) for _ in range(count)]
    for worker in workers:
        worker.start()
    found = [results.get() for _ in workers]
    for worker in workers:
        worker.join()
        if worker.exitcode != 0:
            raise SystemExit(f"a worker exited {worker.exitcode}")
    return time.perf_counter() - start, sum(f[0] for f in found), sum(f[1] for f in found), [f[2] for f in found]


def requeue(db: str, dataset_id: str, plain: bool) -> int:
    """Queue the submissions on `dataset_id` again as they were queued (re-scores, or plain uploads)."""
    deployment = connect(db)
    with deployment.sessions() as session:
        chosen = Submission.rescore_of.is_(None) if plain else Submission.rescore_of.is_not(None)
        done = session.execute(update(Submission).where(Submission.dataset_id == dataset_id, chosen).values(
            status=QUEUED, attempts=0, lease_owner=None, lease_expires=None, counts_sha256=None, results=None,
            uncertainty=None, private_results=None, private_uncertainty=None, ladder_position=None, released=None,
            public_score=None, public_decimals=None, ladder_note=None, not_predicted=None, error=None,
            scored_at=None)).rowcount
        session.commit()
    return done


def queue_everything(db: str, dataset_id: str, count: int) -> None:
    """The first `count` stored uploads again as plain submissions on the corrected data: scored whole."""
    deployment = connect(db)
    with deployment.sessions() as session:
        originals = session.scalars(select(Submission).where(Submission.rescore_of.is_not(None))
                                    .order_by(Submission.created_at, Submission.id).limit(count)).all()
        for original in originals:
            session.add(Submission(id=secrets.token_hex(16), team_id=original.team_id, phase_id=original.phase_id,
                                   status=QUEUED, method=original.method + WHOLE, description="",
                                   upload_sha256=original.upload_sha256, upload_bytes=original.upload_bytes,
                                   dataset_id=dataset_id, created_at=original.created_at, attempts=0,
                                   code_version=CODE_VERSION))
        session.commit()


def same_rows(store, first: str, second: str, folder: Path) -> bool:
    """Whether two stored counts files hold the same rows (their metadata names each submission)."""
    tables = [pq.read_table(store.fetch(sha, folder / f"{n}.parquet")).replace_schema_metadata(None)
              for n, sha in enumerate((first, second))]
    return tables[0].equals(tables[1])


def matching_whole(db: str, folder: Path) -> tuple[int, int]:
    """(how many of the uploads scored whole have the rows of their incremental re-score, how many were)."""
    deployment = connect(db)
    with deployment.sessions() as session:
        rows = session.scalars(select(Submission).where(Submission.status == SCORED)).all()
    rescored = {s.method: s.counts_sha256 for s in rows if s.rescore_of is not None}
    whole = [s for s in rows if s.method.endswith(WHOLE)]
    return sum(same_rows(deployment.store, s.counts_sha256, rescored[s.method.removesuffix(WHOLE)], folder)
               for s in whole), len(whole)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--frames-per-wall", type=int, default=10)
    parser.add_argument("--distinct", type=int, default=10, help="distinct uploads the submissions cycle through")
    parser.add_argument("--resamples", type=int, default=2,
                        help="the workers' bootstrap resamples (the server's default is 1000: the bootstrap's cost "
                             "grows with resamples x frames and is the same both ways, so it is kept small here)")
    parser.add_argument("--whole", type=int, default=100,
                        help="submissions scored whole for the comparison (the time scaled to all of them)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    settings = Settings(resamples=args.resamples, poll_seconds=0.05)
    with tempfile.TemporaryDirectory(prefix="segbench-rescore-scale-") as name:
        folder = Path(name)
        data, manifest = folder / "hidden", folder / "manifest.json"
        ids = generated_split(data, args.frames, args.frames_per_wall, rng)
        benchmark = load_benchmark(BENCHMARK)
        old_id = write_identity(benchmark, data, None, manifest, None, None)["dataset_id"]
        db = f"sqlite:///{folder / 'server.db'}"
        host.init(db, str(folder / "store"))
        (folder / f"{BENCHMARK}.yaml").write_text(phases_text("null"))
        host.add_phase(db, BENCHMARK, PHASE, data, manifest, phases=folder / f"{BENCHMARK}.yaml")
        start = time.perf_counter()
        stored_submissions(db, data, ids, old_id, args.submissions, args.distinct, folder, rng)
        print(f"machine: {machine()}")
        print(f"setup: {args.submissions} stored submissions of {args.frames} frames ({args.frames // args.frames_per_wall}"
              f" walls), {args.submissions} distinct uploads from {args.distinct} bases, made in "
              f"{time.perf_counter() - start:.1f} s; "
              f"{args.resamples} resamples")

        corrected = ids[len(ids) // 2]
        label = data / "labels" / f"{corrected}.png"
        mask = np.array(Image.open(label))
        mask[:6, :6] = 8  # a missing window drawn in
        Image.fromarray(mask).save(label)
        new_manifest = folder / "corrected.json"
        new_id = write_identity(benchmark, data, None, new_manifest, None, None)["dataset_id"]
        start = time.perf_counter()
        done = host.rescore(db, BENCHMARK, PHASE, new_manifest)
        print(f"rescore command: {done.changes.describe()}, {done.queued} re-scores queued in "
              f"{time.perf_counter() - start:.1f} s")

        figures, decoded = {}, {}
        for workers in (1, 2):
            if workers == 2:
                requeue(db, new_id, plain=False)
            seconds, masks, labels, rss = run_workers(db, settings, workers)
            figures["incremental", workers], decoded[workers] = seconds, masks
            print(f"incremental, {workers} worker(s): {seconds:.1f} s ({1000 * seconds / args.submissions:.0f} ms per "
                  f"submission), {masks} masks decoded, {labels} labels read, peak RSS "
                  f"{' / '.join(f'{r:.0f}' for r in rss)} MiB, load {os.getloadavg()[0]:.1f}")
        whole = min(args.whole, args.submissions)
        queue_everything(db, new_id, whole)
        for workers in (1, 2):
            if workers == 2:
                requeue(db, new_id, plain=True)
            seconds, masks, labels, rss = run_workers(db, settings, workers)
            figures["whole", workers] = seconds * args.submissions / whole
            print(f"everything, {workers} worker(s): {seconds:.1f} s for {whole} submissions "
                  f"({1000 * seconds / whole:.0f} ms each; {figures['whole', workers]:.1f} s for all "
                  f"{args.submissions}), {masks} masks decoded, {labels} labels read, peak RSS "
                  f"{' / '.join(f'{r:.0f}' for r in rss)} MiB, load {os.getloadavg()[0]:.1f}")
        for workers in (1, 2):
            print(f"{workers} worker(s): incremental {figures['incremental', workers]:.1f} s against everything "
                  f"{figures['whole', workers]:.1f} s: {figures['whole', workers] / figures['incremental', workers]:.1f}"
                  " x faster")
        same, compared = matching_whole(db, folder)
        print(f"counts of the {compared} scored whole: the rows of their incremental re-score in {same}")
        met = all(d == args.submissions for d in decoded.values())
        print(f"target masks decoded = {args.submissions} (one per submission): {'met' if met else 'MISSED'}")


if __name__ == "__main__":
    main()
