"""A worker: claims a submission under a lease, scores its upload with the CLI's scorer
(steps.scoring: per-frame counts, stored once as Parquet in the store by their SHA-256), computes
every metric from them per part of the phase (public, private) as `segbench metrics` does
(steps.metrics.document), and writes the result if its lease still holds, with the public
board's Ladder decided against the team's released best in the same transaction. The lease is renewed while it scores; a worker that dies stops renewing
it, and once it expires another worker claims the submission and scores it again."""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy.exc import OperationalError
from threadpoolctl import ThreadpoolController

from ..core.headline import UnitData, headline_data
from ..core.ladder import Standing, ladder_step

from ..errors import SegbenchError
from . import ledger
from .deployment import Deployment
from .hidden import HiddenSplit
from .intake import UPLOAD_NAME
from .models import Submission
from .parts import PRIVATE, PUBLIC, stored_headline
from .recount import NotPredicted, recount
from .scoring import as_json, part_document, part_uncertainty, references

# Where each part's metrics and bootstrap are written.
COLUMNS = {PUBLIC: ("results", "uncertainty"), PRIVATE: ("private_results", "private_uncertainty")}

GAVE_UP = "the server's workers stopped {} times while scoring this upload; it is not scored again"
HIDDEN_DATA_PROBLEM = ("the server could not score this upload against its hidden data (a problem on the "
                       "host's side, reported to the host); it may be scored again")


def score_submission(deployment: Deployment, hidden: HiddenSplit, submission: Submission,
                     folder: Path) -> tuple[dict[str, Any], UnitData]:
    """(the result's columns: stored counts' SHA-256, each part's metrics and bootstrap documents;
    the public part's headline data, for the Ladder) of a submission's upload, scored once (a
    re-score: only its changed frames, server/recount.py)."""
    store = deployment.store
    counts_sha, counts = recount(deployment, hidden, submission, folder)
    others = references(submission.phase)
    result: dict[str, Any] = {"counts_sha256": counts_sha}
    for part, frames in deployment.parts(submission.phase).items():
        results, bootstrap = COLUMNS[part]
        result[results] = as_json(part_document(hidden, counts, frames, submission.id, "predictions"))
        result[bootstrap] = as_json(part_uncertainty(store, hidden, counts, frames, submission.id, others,
                                                     deployment.settings))
    public = headline_data(hidden.benchmark, counts, hidden.benchmark.ground_truth, hidden.groups,
                           deployment.parts(submission.phase)[PUBLIC])
    return result, public


def ladder_columns(deployment: Deployment, hidden: HiddenSplit, public: UnitData,
                   best: Submission | None) -> dict[str, Any]:
    """The Ladder's decision on a submission (its public part's headline data) against the team's
    released best, rebuilt from the best's stored counts and released score."""
    standing = None if best is None else Standing(
        stored_headline(deployment.store, hidden, best.counts_sha256, public.frame_ids), best.public_score,
        best.public_decimals)
    decision, _ = ladder_step(standing, public)
    return {"released": decision.released, "public_score": decision.score, "public_decimals": decision.decimals,
            "ladder_note": decision.note}


def team_message(error: SegbenchError, hidden: HiddenSplit, folder: Path) -> str:
    """What the team may read of a scoring error: its own upload's problems, never a word about
    the hidden data (a label file's path or values)."""
    text = str(error)
    if str(hidden.data) in text or str(hidden.data.resolve()) in text:
        return HIDDEN_DATA_PROBLEM
    return text.replace(str(folder / UPLOAD_NAME), UPLOAD_NAME)


class Heartbeat:
    """Renews a lease every third of its time, in a thread, while the work goes on."""

    def __init__(self, deployment: Deployment, submission_id: str, owner: str):
        self.deployment, self.submission_id, self.owner = deployment, submission_id, owner
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.beat, daemon=True)

    def beat(self) -> None:
        lease = self.deployment.settings.lease_seconds
        while not self.stop.wait(lease / 3):
            with self.deployment.sessions() as session:
                if not ledger.renew(session, self.submission_id, self.owner, lease):
                    return

    def __enter__(self) -> Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stop.set()
        self.thread.join()


@cache
def one_blas_thread() -> None:
    """This process's BLAS on one thread, from the first call on: the bootstrap's products are
    small, (resamples x units) @ (units x cells), and the scoring threads use every core. A
    second BLAS thread spins on a core for a while after each product, and again whenever its
    limit is raised back, taking the core from what runs next (docs/performance.md)."""
    ThreadpoolController().limit(limits=1, user_api="blas")


def work_once(deployment: Deployment) -> str | None:
    """Claim and score one submission; returns its id, or None when nothing was claimable. The
    worker's process runs its BLAS on one thread from then on (one_blas_thread)."""
    one_blas_thread()
    with deployment.sessions() as session:
        claimed = ledger.claim(session, deployment.settings.lease_seconds)
        if claimed is None:
            return None
        submission, owner = claimed
        phase = submission.phase
        if submission.attempts > deployment.settings.max_attempts:  # every earlier claim's worker died on it
            ledger.fail(session, submission.id, owner, GAVE_UP.format(submission.attempts - 1))
            return submission.id
    hidden = deployment.hidden(phase)
    with tempfile.TemporaryDirectory(prefix="segbench-worker-") as folder, Heartbeat(deployment, submission.id, owner):
        try:
            result, public = score_submission(deployment, hidden, submission, Path(folder))
        except NotPredicted as exc:
            with deployment.sessions() as session:
                ledger.incomplete(session, submission.id, owner, exc.counts_sha256, exc.frames_json, str(exc))
            return submission.id
        except SegbenchError as exc:
            print(f"segbench worker: submission {submission.id}: {exc}", file=sys.stderr)
            with deployment.sessions() as session:
                ledger.fail(session, submission.id, owner, team_message(exc, hidden, Path(folder)))
            return submission.id
    with deployment.sessions() as session:
        if not ledger.finish(session, submission.id, owner, **result,
                             decide=lambda best: ladder_columns(deployment, hidden, public, best)):
            print(f"segbench worker: submission {submission.id}: lease lost; its result is another claim's",
                  file=sys.stderr)
    return submission.id


def run_worker(deployment: Deployment, once: bool = False) -> int:
    """Score submissions until stopped (or, with `once`, until none is claimable); returns how many."""
    done = 0
    while True:
        try:
            worked = work_once(deployment) is not None
        except OperationalError as exc:  # the database restarting: its lease, if any, runs out and is claimed again
            print(f"segbench worker: database unavailable ({exc.__class__.__name__}); retrying", file=sys.stderr,
                  flush=True)
            worked = False
        if worked:
            done += 1
            continue
        if once:
            return done
        time.sleep(deployment.settings.poll_seconds)
