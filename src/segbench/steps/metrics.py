"""Metrics as a step: every report of the benchmark from the merged shard counts, or straight
from a folder of predicted masks (scored in memory, as the one-shot command does)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark
from ..core.confusion import FrameCounts
from ..core.evaluation import evaluate, void_predictions
from ..core.labels import LabelSpace
from ..datasets.base import Frame
from ..errors import SegbenchError
from ..records.frameindex import read_index
from .counts import merge_counts


def metrics_document(benchmark: Benchmark, paths: Sequence[Path], index: Path | None = None) -> dict[str, Any]:
    """All reports of the benchmark for the merged counts, with what they were computed from.
    With the workflow's frame index (`index`) the counts must hold exactly its frames of their
    split, and the document names the index's dataset_id: a shard is re-scored only when its own
    frames change, so shards scored under an earlier dataset_id are merged with the new ones."""
    counts, meta, space = merge_counts(benchmark, paths, same_dataset=index is None)
    dataset_id = meta.get("dataset_id")
    if index is not None:
        document_ = read_index(index, benchmark.name)
        expected = {e["frame_id"] for e in document_["frames"] if e["split"] == meta["split"]}
        scored = set(counts.frame_ids)
        if scored != expected:
            missing, extra = sorted(expected - scored), sorted(scored - expected)
            raise SegbenchError(f"{index}: the counts do not hold the index's frames of split '{meta['split']}' "
                                f"(missing {missing[:10]}, not in the index {extra[:10]})")
        dataset_id = document_["dataset_id"]
    return document(benchmark, counts, space, meta["split"], meta["model"]["name"], meta["model"]["kind"],
                    dataset_id, meta["model"].get("checkpoint_sha256"))


def predictions_metrics(benchmark: Benchmark, frames: Sequence[Frame], folder: Path, space: LabelSpace,
                        split: str, dataset_id: str) -> dict[str, Any]:
    """All reports of the benchmark for a folder (or archive) of masks in label space `space`,
    checked like any predictions (exactly one mask per frame of the split; an upload stating the
    dataset it was made for must state `dataset_id`, the data's) and scored in memory."""
    from ..core.bandplan import band_plan
    from ..stages.scoring import score_predictions
    from .scoring import check_predictions

    check_predictions(benchmark, folder, frames, space, dataset_id)
    counts = score_predictions(frames, folder, benchmark.ground_truth, space, benchmark.evaluation_size,
                               band_plan(benchmark, space))
    return document(benchmark, counts, space, split, Path(folder).name, "predictions", dataset_id)


def document(benchmark: Benchmark, counts: FrameCounts, space: LabelSpace, split: str, model: str, kind: str,
             dataset_id: str | None = None, checkpoint_sha256: str | None = None) -> dict[str, Any]:
    """The metrics document; `dataset_id` and `checkpoint_sha256` (None where the counts do not
    say) are what `segbench record` checks against the dataset and identity records."""
    gt_lut = benchmark.ground_truth.raw_lut()
    return {
        "benchmark": benchmark.name,
        "split": split,
        "dataset_id": dataset_id,
        "model": model,
        "kind": kind,
        "checkpoint_sha256": checkpoint_sha256,
        "label_space": space.name,
        "frames": len(counts.frame_ids),
        "pixels_evaluated": int(counts.count[gt_lut[counts.gt] >= 0].sum()),
        "pixels_predicted_void": int(void_predictions(benchmark, counts, space).sum()),
        "results": evaluate(benchmark, counts, space),
    }
