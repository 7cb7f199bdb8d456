"""A phase's comparability triples as its boards read them: the current hidden data (verified on
disk), and each dataset a label correction superseded (server/rescore.py), read from its
manifest kept in the store with its floor's numbers as they were, since its data on disk is gone.
Each has its own frames, units and public/private parts, so no board mixes two."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path

from sqlalchemy import select

from ..errors import SegbenchError
from ..protocols.definitions import load_benchmark
from ..stages.uploads import manifest_frames
from .deployment import Deployment
from .hidden import HiddenSplit
from .models import Phase, SupersededDataset
from .parts import PRIVATE, PUBLIC, part_frames
from .store import Store, object_key


@dataclass(frozen=True)
class DatasetVersion:
    dataset_id: str
    hidden: HiddenSplit  # a superseded one lists its frames (and units) without their files
    parts: dict[str, tuple[str, ...]]
    floor_results: dict[str, str | None]  # part -> the floor's metrics document (JSON)
    superseded_by: str | None = None
    superseded_at: datetime | None = None


@lru_cache(maxsize=64)
def superseded_split(store: Store, benchmark: str, split: str, data: str, manifest_sha256: str,
                     dataset_id: str) -> HiddenSplit:
    """A superseded dataset's split from its manifest in the store (immutable: cached)."""
    definition = load_benchmark(benchmark)
    with tempfile.TemporaryDirectory(prefix="segbench-manifest-") as folder:
        listed, stated = manifest_frames(definition, store.fetch(manifest_sha256, Path(folder) / "manifest.json"),
                                         split)
    if stated != dataset_id:
        raise SegbenchError(f"{store.url}: manifest {manifest_sha256} is of dataset {stated}, not {dataset_id}")
    return HiddenSplit(definition, split, Path(data), Path(f"{store.url}/{object_key(manifest_sha256)}"), dataset_id,
                       tuple(listed), ())


def current_version(deployment: Deployment, phase: Phase) -> DatasetVersion:
    return DatasetVersion(phase.dataset_id, deployment.hidden(phase), deployment.parts(phase),
                          {PUBLIC: phase.floor_results, PRIVATE: phase.floor_private_results})


def phase_versions(deployment: Deployment, phase: Phase) -> dict[str, DatasetVersion]:
    """dataset_id -> its version, the current one first, then the superseded ones, newest first."""
    with deployment.sessions() as session:
        rows = session.scalars(select(SupersededDataset).where(SupersededDataset.phase_id == phase.id)
                               .order_by(SupersededDataset.superseded_at.desc(), SupersededDataset.id.desc())).all()
    out = {phase.dataset_id: current_version(deployment, phase)}
    for row in rows:
        hidden = superseded_split(deployment.store, phase.benchmark, phase.split, phase.data_dir, row.manifest_sha256,
                                  row.dataset_id)
        out[row.dataset_id] = DatasetVersion(row.dataset_id, hidden,
                                             part_frames(hidden, deployment.secret, phase.private_fraction),
                                             {PUBLIC: row.floor_results, PRIVATE: row.floor_private_results},
                                             row.superseded_by, row.superseded_at)
    return out


def changed_since(deployment: Deployment, phase_id: int, dataset_id: str) -> set[str]:
    """The frames whose labels changed in any correction from `dataset_id` to the phase's current
    dataset (a re-score still pending when the next correction came is moved on to it)."""
    with deployment.sessions() as session:
        rows = {r.dataset_id: r for r in session.scalars(select(SupersededDataset)
                                                         .where(SupersededDataset.phase_id == phase_id))}
    if dataset_id not in rows:
        raise SegbenchError(f"dataset {dataset_id} of phase {phase_id} was never superseded")
    changed: set[str] = set()
    while dataset_id in rows:
        changed |= set(json.loads(rows[dataset_id].changes)["changed"])
        dataset_id = rows[dataset_id].superseded_by
    return changed
