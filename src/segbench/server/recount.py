"""A submission's counts, on a worker: an upload's whole (server/scoring.score_upload), or for a
re-score (the submissions `segbench server rescore` queues) the stored counts of the submission
it re-scores for every frame whose label did not change, and only the masks of the frames whose
labels changed, or that were added to the split, decoded from the stored upload
(steps.scoring.rescore_model): the counts a full scoring of the upload on the corrected data
would give, at the cost of those frames alone.

An upload made before frames were added has no mask for them (a re-score, or an upload still
queued when the data changed): it cannot be scored on the new data (the intake refuses an upload that lacks a frame's mask, and no protocol scores a missing
prediction), so its re-score keeps the counts of the frames it has and is `incomplete`, naming
the frames not predicted (docs/server.md, "Label corrections")."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from ..core.confusion import FrameCounts
from ..errors import SegbenchError
from ..steps.scoring import rescore_model
from .deployment import Deployment
from .hidden import HiddenSplit
from .intake import UPLOAD_NAME
from .models import Submission
from .scoring import score_upload
from .store import Store, keep, stored_counts
from .versions import changed_since

NOT_PREDICTED = ("not predicted: this upload has no mask for {count} frame(s) added to the hidden split after it "
                 "was made ({frames}); it is not ranked on dataset {dataset_id} (submit an upload of the new split)")


class NotPredicted(SegbenchError):
    """A re-score whose upload lacks masks of frames added to the split: its partial counts."""

    def __init__(self, message: str, frames: list[str], counts_sha256: str):
        super().__init__(message)
        self.frames, self.counts_sha256 = frames, counts_sha256

    @property
    def frames_json(self) -> str:
        return json.dumps(self.frames)


def unchanged_counts(store: Store, counts_sha256: str, changed: set[str]) -> tuple[FrameCounts, set[str]]:
    """(stored counts without the frames whose labels a correction changed, every frame they held)."""
    counts = stored_counts(store, counts_sha256)
    return counts.subset([f for f in counts.frame_ids if f not in changed]), set(counts.frame_ids)


def not_predicted(hidden: HiddenSplit, held: set[str], upload: Path) -> list[str]:
    """The split's frames that have no counts in `held` and no mask in the (zip) upload; the
    archive's listing is read only when some frame is not in `held`."""
    wanted = [f for f in hidden.frames if f.frame_id not in held]
    if not wanted:
        return []
    try:
        with zipfile.ZipFile(upload) as archive:  # the intake accepts a zip alone
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise SegbenchError(f"{upload}: not a readable zip archive ({exc})") from None
    return [f.frame_id for f in wanted if f.prediction not in names]


def recount(deployment: Deployment, hidden: HiddenSplit, submission: Submission,
            folder: Path) -> tuple[str, FrameCounts]:
    """(stored counts' SHA-256, counts) of a submission on the phase's current data: an upload
    counted whole, a re-score on the frames its original has no valid counts of; NotPredicted
    when the upload has no mask for some frame it has no counts of."""
    store = deployment.store
    upload = store.fetch(submission.upload_sha256, folder / UPLOAD_NAME)
    kept, scored = None, set()
    if submission.rescore_of is not None:
        with deployment.sessions() as session:
            original = session.get(Submission, submission.rescore_of)
        changed = changed_since(deployment, original.phase_id, original.dataset_id)
        kept, scored = unchanged_counts(store, original.counts_sha256, changed)
    # A frame the original was scored on has its mask in the upload: only the others are looked for.
    missing = not_predicted(hidden, scored, upload)
    absent = set(missing)
    frames = [f for f in hidden.frames if f.frame_id not in absent]
    if kept is None:
        sha, counts = score_upload(store, hidden, upload, submission.id, folder, frames, deployment.labels)
    else:
        path = folder / f"{submission.id}.parquet"
        counts = rescore_model(hidden.benchmark, frames, kept, submission.id, "predictions",
                               hidden.benchmark.ground_truth, upload, path, hidden.split, deployment.labels)
        sha = keep(store, path)
    if missing:
        shown = ", ".join(missing[:20]) + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
        raise NotPredicted(NOT_PREDICTED.format(count=len(missing), frames=shown, dataset_id=hidden.dataset_id),
                           missing, sha)
    return sha, counts
