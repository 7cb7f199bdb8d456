"""Scoring on the server, with the CLI's code: an upload's per-frame counts (steps.scoring, the
same Parquet as `segbench score`, kept once in the store by their SHA-256), and per part of the
phase (public, private) its metrics document (as `segbench metrics`) and its bootstrap over the
part's units with paired comparisons against the phase's baseline and floor (core.bootstrap, as
`segbench uncertainty`): a part's numbers are the same counts summed over its frames. The floor
and the baseline are scored once, when the host adds the phase."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.bootstrap import Resampled, Subject, bootstrap, resampled
from ..core.confusion import FrameCounts
from ..datasets.base import Frame
from ..records.countsio import read_counts
from ..steps.metrics import document
from ..steps.scoring import score_floor, score_model
from .hidden import HiddenSplit
from .models import Phase
from .settings import Settings
from .store import Store, keep

FLOOR, BASELINE = "floor", "baseline"


def score_upload(store: Store, hidden: HiddenSplit, upload: Path, name: str, folder: Path,
                 frames: Sequence[Frame] | None = None) -> tuple[str, FrameCounts]:
    """(stored counts' SHA-256, counts) of an upload in the ground truth's space, on the split's
    frames (or on `frames` of it)."""
    benchmark, space = hidden.benchmark, hidden.benchmark.ground_truth
    path = folder / f"{name}.parquet"
    counts = score_model(benchmark, hidden.frames if frames is None else frames, name, "predictions", space, upload,
                         path, hidden.split)
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


def references(store: Store, hidden: HiddenSplit, phase: Phase, frames: tuple[str, ...],
               settings: Settings) -> dict[str, Resampled | None]:
    """The phase's baseline (None when the host gave none) and floor over one part's frames,
    resampled as each submission's bootstrap is."""
    baseline = phase.baseline_counts_sha256
    return {BASELINE: None if baseline is None else reference(store, hidden, baseline, BASELINE, frames,
                                                              settings.resamples, settings.seed),
            FLOOR: reference(store, hidden, phase.floor_counts_sha256, FLOOR, frames, settings.resamples,
                             settings.seed)}


@lru_cache(maxsize=64)
def reference(store: Store, hidden: HiddenSplit, sha256: str, name: str, frames: tuple[str, ...], resamples: int,
              seed: int) -> Resampled:
    """A reference's stored counts over `frames`, resampled once per process (counts are immutable
    under their SHA-256, and every submission of the part is compared on the same draws)."""
    with tempfile.TemporaryDirectory(prefix="segbench-counts-") as folder:
        counts, _ = read_counts(store.fetch(sha256, Path(folder) / f"{name}.parquet"))
    subject = Subject(name, counts.subset(frames), hidden.benchmark.ground_truth)
    return resampled(hidden.benchmark, subject, hidden.groups, resamples, seed)


def part_uncertainty(hidden: HiddenSplit, phase: Phase, store: Store, counts: FrameCounts, frames: tuple[str, ...],
                     name: str, settings: Settings) -> dict[str, Any]:
    """The bootstrap of `counts` over one part's units, paired with the references on the same frames."""
    subject = Subject(name, counts.subset(frames), hidden.benchmark.ground_truth)
    return bootstrap(hidden.benchmark, subject, hidden.groups, settings.resamples, settings.seed,
                     references(store, hidden, phase, frames, settings))


def as_json(document: dict[str, Any]) -> str:
    return json.dumps(document, sort_keys=True)
