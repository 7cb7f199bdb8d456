"""Scoring as a step: per-frame confusion counts of predicted masks (or of the floor), written
with what they were computed from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.bandplan import band_plan
from ..core.benchmark import Benchmark
from ..core.confusion import FrameCounts
from ..core.labels import LabelSpace
from ..datasets import require_labels
from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.problems import Problems
from ..records.countsio import write_counts
from ..records.intake import open_predictions
from ..records.prediction_archive import STATED_DATASET, UPLOAD_META, ArchivePredictions
from ..records.predictions import REFUSED
from ..stages.scoring import counted_frames, score_constant, score_predictions
from ..stages.truth import LabelReader, read_truth


def score_model(benchmark: Benchmark, frames: Sequence[Frame], name: str, kind: str, space: LabelSpace,
                predictions: Path, out: Path, split: str, dataset_id: str | None = None,
                checkpoint_sha256: str | None = None, progress: bool = False,
                labels: LabelReader = read_truth) -> FrameCounts:
    """Per-frame counts of the masks in `predictions` (in label space `space`), written to `out`
    with the dataset and the model's bytes they are of, where known (the record step checks them);
    `progress`: a bar on stderr; `labels`: how the ground truth is read (stages.truth)."""
    require_labels(frames, "scoring")
    counts = score_predictions(frames, predictions, benchmark.ground_truth, space, benchmark.evaluation_size,
                               band_plan(benchmark, space), progress, labels)
    model = {"name": name, "kind": kind, "checkpoint_sha256": checkpoint_sha256}
    return _write(benchmark, counts, model, space, out, split, dataset_id)


def rescore_model(benchmark: Benchmark, frames: Sequence[Frame], kept: FrameCounts, name: str, kind: str,
                  space: LabelSpace, predictions: Path, out: Path, split: str,
                  labels: LabelReader = read_truth) -> FrameCounts:
    """Per-frame counts of `frames` (in that order) as score_model writes them, the frames `kept`
    holds taken from it as they are and only the others' masks decoded from `predictions` (after a
    label correction: the frames whose labels changed or were added). `kept` must hold no frame
    whose label changed; each of its frames not in `frames` is dropped. `labels`: as score_model's."""
    require_labels(frames, "scoring")
    fresh, reused = recounted(frames, kept)
    decoded = score_predictions(fresh, predictions, benchmark.ground_truth, space, benchmark.evaluation_size,
                                band_plan(benchmark, space), labels=labels)
    counts = FrameCounts.merge([kept.subset(reused), decoded]).subset([f.frame_id for f in frames])
    model = {"name": name, "kind": kind, "checkpoint_sha256": None}
    return _write(benchmark, counts, model, space, out, split, None)


def rescore_floor(benchmark: Benchmark, frames: Sequence[Frame], kept: FrameCounts, out: Path,
                  split: str) -> FrameCounts:
    """The floor's counts of `frames` as score_floor writes them, those `kept` holds reused and
    only the others' labels read (rescore_model's rule)."""
    require_labels(frames, "scoring")
    fresh, reused = recounted(frames, kept)
    space = benchmark.ground_truth
    decoded = score_constant(fresh, benchmark.floor_class, space, benchmark.evaluation_size,
                             band_plan(benchmark, space))
    counts = FrameCounts.merge([kept.subset(reused), decoded]).subset([f.frame_id for f in frames])
    return _write(benchmark, counts, {"name": "floor", "kind": "floor", "checkpoint_sha256": None}, space, out, split,
                  None)


def recounted(frames: Sequence[Frame], kept: FrameCounts) -> tuple[list[Frame], list[str]]:
    """(the frames to count again: those `kept` lacks; the frame ids to take from `kept`)."""
    held = set(kept.frame_ids)
    wanted = {f.frame_id for f in frames}
    return [f for f in frames if f.frame_id not in held], [f for f in kept.frame_ids if f in wanted]


def score_floor(benchmark: Benchmark, frames: Sequence[Frame], out: Path, split: str,
                dataset_id: str | None = None, progress: bool = False) -> FrameCounts:
    """Per-frame counts of the floor: the benchmark's floor class everywhere, from the ground truth
    alone; `progress`: a bar on stderr."""
    require_labels(frames, "scoring")
    space = benchmark.ground_truth
    counts = score_constant(frames, benchmark.floor_class, space, benchmark.evaluation_size,
                            band_plan(benchmark, space), progress)
    return _write(benchmark, counts, {"name": "floor", "kind": "floor", "checkpoint_sha256": None}, space, out, split,
                  dataset_id)


def _write(benchmark: Benchmark, counts: FrameCounts, model: dict, space: LabelSpace, out: Path, split: str,
           dataset_id: str | None) -> FrameCounts:
    model = {**model, "label_space": {"name": space.name, "classes": space.names}}
    write_counts(out, counts, {"benchmark": benchmark.name, "split": split, "dataset_id": dataset_id, "model": model})
    return counts


def check_predictions(benchmark: Benchmark, folder: Path, frames: Sequence[Frame], space: LabelSpace,
                      dataset_id: str | None = None) -> None:
    """For a predictions folder or archive of masks in `space`: exactly one plain mask file per
    evaluated frame, none of them its frame's ground-truth label byte for byte; an upload that
    states the dataset_id it was made for (uploads.UPLOAD_META) must state this one. Nothing is
    decoded when these hold (the scoring decodes each mask once, and refuses every mask's own
    problem in one error); when they do not, every listed mask is checked as the scoring checks it
    (stages.scoring.counted_frames) and its problems are in the same refusal."""
    problems = Problems()
    with open_predictions(folder, frames, exact=True, problems=problems) as masks:
        if isinstance(masks, ArchivePredictions):
            try:
                stated = masks.metadata()
            except SegbenchError as exc:
                problems.add(STATED_DATASET, str(exc))
            else:
                if dataset_id is not None and stated is not None and stated != dataset_id:
                    problems.add(STATED_DATASET, f"{folder}: made for dataset {stated} ({UPLOAD_META}), but the "
                                                 f"data is {dataset_id}")
        masks.check_not_ground_truth()
        if problems:  # refused already: every mask's own problem joins the listing's
            counted_frames([f for f in frames if f.labelled], masks, benchmark.ground_truth, space,
                           benchmark.evaluation_size, None, problems)
    problems.refuse(folder, REFUSED)
