"""Scoring on the server, with the CLI's code: an upload's per-frame counts (steps.scoring, the
same Parquet as `segbench score`, kept once in the store by their SHA-256), and per part of the
phase (public, private) its metrics document (as `segbench metrics`) and its bootstrap over the
part's units with paired comparisons against the phase's baseline and floor (core.bootstrap, as
`segbench uncertainty`): a part's numbers are the same counts summed over its frames. The floor
and the baseline are scored once, when the host adds the phase, and their values on each part's
resamples computed once per worker process for every upload that is paired with them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.bootstrap import Replicated, Subject, bootstrap_document, replicated
from ..core.confusion import FrameCounts
from ..datasets.base import Frame
from ..steps.metrics import document
from ..stages.truth import LabelReader, read_truth
from ..steps.scoring import score_floor, score_model
from .hidden import HiddenSplit
from .models import Phase
from .settings import Settings
from .store import Store, keep, stored_counts

FLOOR, BASELINE = "floor", "baseline"


def score_upload(store: Store, hidden: HiddenSplit, upload: Path, name: str, folder: Path,
                 frames: Sequence[Frame] | None = None, labels: LabelReader = read_truth) -> tuple[str, FrameCounts]:
    """(stored counts' SHA-256, counts) of an upload in the ground truth's space, on the split's
    frames (or on `frames` of it), its labels read by `labels` (a worker's are kept: Deployment.labels)."""
    benchmark, space = hidden.benchmark, hidden.benchmark.ground_truth
    path = folder / f"{name}.parquet"
    counts = score_model(benchmark, hidden.frames if frames is None else frames, name, "predictions", space, upload,
                         path, hidden.split, labels=labels)
    return keep(store, path), counts


def score_phase_floor(store: Store, hidden: HiddenSplit, folder: Path) -> tuple[str, FrameCounts]:
    path = folder / "floor.parquet"
    counts = score_floor(hidden.benchmark, hidden.frames, path, hidden.split)
    return keep(store, path), counts


def reference_columns(hidden: HiddenSplit, parts: dict[str, tuple[str, ...]], floor: tuple[str, FrameCounts],
                      baseline: tuple[str, FrameCounts] | None) -> dict[str, Any]:
    """A phase's columns of its floor and baseline ((stored counts' SHA-256, counts) each): the
    floor's metrics on each part, the baseline's on the public one."""
    (floor_sha, floor_counts), private = floor, parts.get("private")
    columns = {"floor_counts_sha256": floor_sha,
               "floor_results": as_json(part_document(hidden, floor_counts, parts["public"], FLOOR, FLOOR)),
               "floor_private_results": None if private is None else as_json(
                   part_document(hidden, floor_counts, private, FLOOR, FLOOR)),
               "baseline_counts_sha256": None, "baseline_results": None}
    if baseline is not None:
        columns.update(baseline_counts_sha256=baseline[0], baseline_results=as_json(
            part_document(hidden, baseline[1], parts["public"], BASELINE, "predictions")))
    return columns


def part_document(hidden: HiddenSplit, counts: FrameCounts, frames: tuple[str, ...], name: str,
                  kind: str) -> dict[str, Any]:
    """The metrics document of `counts` over one part's frames."""
    benchmark = hidden.benchmark
    return document(benchmark, counts.subset(frames), benchmark.ground_truth, hidden.split, name, kind)


def references(phase: Phase) -> dict[str, str | None]:
    """role -> the stored counts' SHA-256 of the phase's baseline (None when the host gave none) and floor."""
    return {BASELINE: phase.baseline_counts_sha256, FLOOR: phase.floor_counts_sha256}


def part_uncertainty(store: Store, hidden: HiddenSplit, counts: FrameCounts, frames: tuple[str, ...], name: str,
                     others: dict[str, str | None], settings: Settings) -> dict[str, Any]:
    """The bootstrap of `counts` over one part's units, paired with the references (role -> their
    stored counts' SHA-256, or None) on the same frames."""
    benchmark = hidden.benchmark
    subject = replicated(benchmark, Subject(name, counts.subset(frames), benchmark.ground_truth), hidden.groups,
                         settings.resamples, settings.seed)
    return bootstrap_document(benchmark, subject, {
        role: None if sha256 is None else reference_replicated(store, hidden, sha256, role, frames, settings.resamples,
                                                               settings.seed)
        for role, sha256 in others.items()})


@lru_cache(maxsize=16)
def reference_replicated(store: Store, hidden: HiddenSplit, counts_sha256: str, name: str, frames: tuple[str, ...],
                         resamples: int, seed: int) -> Replicated:
    """A reference's values on one part's resamples, the same for every upload of its phase: keyed
    by what determines them (its stored counts, immutable under their SHA-256; the split, whose key
    holds the dataset_id; the part's frames; the bootstrap's settings), so new data, a re-counted
    reference or another division is a new key and nothing kept goes stale."""
    counts = stored_counts(store, counts_sha256).subset(frames)
    return replicated(hidden.benchmark, Subject(name, counts, hidden.benchmark.ground_truth), hidden.groups,
                      resamples, seed)


def as_json(document: dict[str, Any]) -> str:
    return json.dumps(document, sort_keys=True)
