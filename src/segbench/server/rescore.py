"""`segbench server rescore`: the host corrected a phase's hidden labels (edited them, `dvc add`,
wrote the new manifest). The new manifest is compared with the phase's, frame by frame, by label
SHA-256 (core.label_changes); the data on disk is verified against it; the floor (and the
baseline) are counted again on the changed and added frames only; then, in one transaction, the
phase moves to the new dataset_id, the old dataset is recorded as superseded (its board stays
readable as it was: server/versions.py), every stored submission of the old dataset gets a
re-score queued on the new one, which a worker counts on those frames alone (server/recount.py),
and a submission not yet scored moves to the new dataset, to be scored on the new data only.

Nothing is written to the database unless all of it is: a failure before the transaction leaves
only content-addressed objects in the store, so the command can be run again; once it succeeded,
running it again says the phase is on that dataset already."""

from __future__ import annotations

import json
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select, update

from ..core.label_changes import LabelChanges, label_changes
from ..errors import SegbenchError
from ..protocols.definitions import load_benchmark
from ..records.provenance import read_manifest
from ..steps.scoring import rescore_floor, rescore_model
from . import board_cache
from .deployment import CODE_VERSION, Deployment, connected
from .hidden import HiddenSplit, open_hidden
from .intake import check
from .models import INCOMPLETE, QUEUED, SCORED, SCORING, Phase, Submission, SupersededDataset
from .parts import part_frames
from .recount import not_predicted, unchanged_counts
from .scoring import BASELINE, reference_columns, score_upload
from .store import keep


@dataclass(frozen=True)
class Rescore:
    benchmark: str
    phase: str
    old_dataset_id: str
    new_dataset_id: str
    changes: LabelChanges
    queued: int  # re-scores queued, one per stored submission of the old dataset
    moved: int  # submissions not yet scored when the data changed: to be scored on the new data only

    def describe(self) -> str:
        return (f"phase {self.phase} of {self.benchmark}: dataset {self.old_dataset_id} superseded by "
                f"{self.new_dataset_id} ({self.changes.describe()}); {self.queued} submission(s) queued for "
                f"re-scoring on {len(self.changes.recounted)} frame(s) each; {self.moved} not yet scored, to be "
                "scored on the new data")


def find_phase(deployment: Deployment, benchmark: str, name: str) -> Phase:
    with deployment.sessions() as session:
        phase = session.scalar(select(Phase).where(Phase.benchmark == benchmark, Phase.name == name))
        if phase is None:
            names = session.scalars(select(Phase.name).where(Phase.benchmark == benchmark).order_by(Phase.name)).all()
            raise SegbenchError(f"--phase: no phase {name!r} of benchmark {benchmark} (its phases: {list(names)})")
        return phase


def old_manifest(deployment: Deployment, phase: Phase, folder: Path) -> tuple[dict, str]:
    """(the phase's current manifest, its SHA-256 in the store): the copy kept when it was added,
    else (a phase added before schema 0004) the file it was added with, if it still holds it."""
    definition = load_benchmark(phase.benchmark)
    if phase.manifest_sha256 is not None:
        path = deployment.store.fetch(phase.manifest_sha256, folder / "old-manifest.json")
        sha = phase.manifest_sha256
    else:
        path = Path(phase.manifest_path)
        sha = keep(deployment.store, path) if path.is_file() else ""
    document = read_manifest(path, id_prefix=definition.id_prefix, group_key=definition.group_key)
    if document["dataset_id"] != phase.dataset_id:
        raise SegbenchError(f"{path}: the phase's manifest now says dataset {document['dataset_id']}, but the phase is "
                            f"on {phase.dataset_id}; put the manifest it was added with back there")
    return document, sha


def rescored_floor(deployment: Deployment, phase: Phase, hidden: HiddenSplit, changes: LabelChanges, folder: Path):
    path = folder / "floor.parquet"
    reused, _ = unchanged_counts(deployment.store, phase.floor_counts_sha256, set(changes.changed))
    counts = rescore_floor(hidden.benchmark, hidden.frames, reused, path, hidden.split)
    return keep(deployment.store, path), counts


def rescored_baseline(deployment: Deployment, phase: Phase, hidden: HiddenSplit, changes: LabelChanges,
                      baseline: Path | None, folder: Path):
    """((stored counts' SHA-256, counts), the upload's SHA-256) of the baseline on the new data,
    or None without one: the upload given now scored whole, else the kept one on the changed frames."""
    if baseline is not None:
        check(hidden, baseline, str(baseline))
        return score_upload(deployment.store, hidden, baseline, BASELINE, folder), keep(deployment.store, baseline)
    if phase.baseline_counts_sha256 is None:
        return None
    if phase.baseline_upload_sha256 is None:
        raise SegbenchError(f"phase {phase.name} of {phase.benchmark}: its baseline upload was not kept (the phase was "
                            "added before schema 0004): give it again with --baseline FILE")
    upload = deployment.store.fetch(phase.baseline_upload_sha256, folder / "baseline.zip")
    reused, scored = unchanged_counts(deployment.store, phase.baseline_counts_sha256, set(changes.changed))
    missing = not_predicted(hidden, scored, upload)
    if missing:
        raise SegbenchError(f"--baseline: the phase's baseline upload has no mask for {len(missing)} added frame(s) "
                            f"({', '.join(missing[:10])}): give a baseline of the corrected split with --baseline FILE")
    path = folder / f"{BASELINE}.parquet"
    counts = rescore_model(hidden.benchmark, hidden.frames, reused, BASELINE, "predictions",
                           hidden.benchmark.ground_truth, upload, path, hidden.split)
    return (keep(deployment.store, path), counts), phase.baseline_upload_sha256


def rescore(db_url: str, benchmark: str, phase_name: str, manifest: Path, baseline: Path | None = None) -> Rescore:
    """Move phase `phase_name` to the corrected data `manifest` describes (the phase's data folder,
    corrected in place) and queue the re-score of every stored submission of the old data."""
    with connected(db_url) as deployment:
        phase = find_phase(deployment, benchmark, phase_name)
        definition = load_benchmark(benchmark)
        new = read_manifest(manifest, id_prefix=definition.id_prefix, group_key=definition.group_key)
        new_id = new["dataset_id"]
        if new_id == phase.dataset_id:
            raise SegbenchError(f"{manifest}: dataset_id {new_id} is the one phase {phase.name} is on already: no "
                                "label, frame or file changed, nothing to re-score")
        with deployment.sessions() as session:
            if session.scalar(select(SupersededDataset.id).where(SupersededDataset.phase_id == phase.id,
                                                                 SupersededDataset.dataset_id == new_id)) is not None:
                raise SegbenchError(f"{manifest}: dataset_id {new_id} is one phase {phase.name} was on before a "
                                    "correction; a correction makes new data (change the labels again)")
        with tempfile.TemporaryDirectory(prefix="segbench-rescore-") as name:
            folder = Path(name)
            old, old_sha = old_manifest(deployment, phase, folder)
            changes = label_changes(old["frames"], new["frames"], phase.split)
            hidden = open_hidden(benchmark, phase.split, Path(phase.data_dir), manifest.resolve())
            parts = part_frames(hidden, deployment.secret, phase.private_fraction)
            floor = rescored_floor(deployment, phase, hidden, changes, folder)
            scored_baseline = rescored_baseline(deployment, phase, hidden, changes, baseline, folder)
            columns = reference_columns(hidden, parts, floor, None if scored_baseline is None else scored_baseline[0])
            new_sha = keep(deployment.store, hidden.manifest)
        return switch(deployment, phase, hidden, changes, old_sha, new_sha,
                      None if scored_baseline is None else scored_baseline[1], columns)


def switch(deployment: Deployment, phase: Phase, hidden: HiddenSplit, changes: LabelChanges, old_sha: str,
           new_sha: str, baseline_upload: str | None, columns: dict) -> Rescore:
    """The one transaction: the phase on the new data, the old dataset superseded, the re-scores queued."""
    with deployment.sessions() as session:
        moved = session.execute(update(Phase).where(Phase.id == phase.id, Phase.dataset_id == phase.dataset_id)
                                .values(dataset_id=hidden.dataset_id, manifest_path=str(hidden.manifest),
                                        manifest_sha256=new_sha, baseline_upload_sha256=baseline_upload, **columns))
        if moved.rowcount != 1:
            session.rollback()
            raise SegbenchError(f"phase {phase.name} of {phase.benchmark} left dataset {phase.dataset_id} while this "
                                "correction was prepared (another rescore); run it again")
        # Not yet scored: scored on the new data only (a worker still holding one loses its lease).
        moved = session.execute(update(Submission).where(
            Submission.phase_id == phase.id, Submission.dataset_id == phase.dataset_id,
            Submission.status.in_((QUEUED, SCORING))).values(dataset_id=hidden.dataset_id, status=QUEUED,
                                                              lease_owner=None, lease_expires=None)).rowcount
        session.add(SupersededDataset(
            phase_id=phase.id, dataset_id=phase.dataset_id, manifest_sha256=old_sha,
            floor_counts_sha256=phase.floor_counts_sha256, floor_results=phase.floor_results,
            floor_private_results=phase.floor_private_results, baseline_counts_sha256=phase.baseline_counts_sha256,
            baseline_results=phase.baseline_results, changes=json.dumps(changes.as_dict()),
            superseded_by=hidden.dataset_id))
        board_cache.changed(session, phase.id)  # the board's groups change with the dataset
        originals = session.scalars(select(Submission).where(
            Submission.phase_id == phase.id, Submission.dataset_id == phase.dataset_id,
            Submission.status.in_((SCORED, INCOMPLETE))).order_by(Submission.created_at, Submission.id)).all()
        for original in originals:
            session.add(Submission(
                id=secrets.token_hex(16), team_id=original.team_id, phase_id=phase.id, status=QUEUED,
                method=original.method, description=original.description, upload_sha256=original.upload_sha256,
                upload_bytes=original.upload_bytes, dataset_id=hidden.dataset_id, created_at=original.created_at,
                attempts=0, code_version=CODE_VERSION, rescore_of=original.id, selected=original.selected,
                warnings=original.warnings))
        session.commit()
    return Rescore(phase.benchmark, phase.name, phase.dataset_id, hidden.dataset_id, changes, len(originals), moved)
