"""The submission record of one (model, split) as a step: built, schema-checked, written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark
from ..core.model_spec import ModelSpec
from ..errors import SegbenchError
from ..io.fileio import atomic_write_text
from ..records.identity import ModelIdentity
from ..stages.submission import build_record, dumps, validate_record


def inference_record(spec: ModelSpec, benchmark: Benchmark) -> tuple[int | None, dict[str, Any] | None]:
    """(inference_size, inference block) of a model's submission record; (None, None) for predictions."""
    if spec.kind == "predictions":
        return None, None
    size = spec.inference_size or benchmark.inference_size
    return size, spec.inference.record(size)


def submission(
    benchmark: Benchmark,
    metrics: dict[str, Any],
    floor_metrics: dict[str, Any],
    dataset_id: str,
    identity: ModelIdentity,
    inference: tuple[int | None, dict[str, Any] | None],
    out: Path,
) -> dict[str, Any]:
    """Build, validate and write the submission record of one (model, split)."""
    record = submission_record(benchmark, metrics, floor_metrics, dataset_id, identity, inference, out)
    atomic_write_text(out, dumps(record))
    return record


def submission_record(
    benchmark: Benchmark,
    metrics: dict[str, Any],
    floor_metrics: dict[str, Any],
    dataset_id: str,
    identity: ModelIdentity,
    inference: tuple[int | None, dict[str, Any] | None],
    out: Path,
) -> dict[str, Any]:
    """The submission record of one (model, split), validated against the schemas (as `out`);
    `inference` is (inference_size, inference block), as `inference_record` gives them."""
    if floor_metrics["split"] != metrics["split"] or floor_metrics["frames"] != metrics["frames"]:
        raise SegbenchError("the floor and the model were scored on different frames; refusing to compare them")
    record = build_record(
        benchmark,
        dataset_id,
        metrics["split"],
        identity,
        metrics["results"],
        floor_metrics["results"],
        *inference,
        metrics["frames"],
        metrics["pixels_evaluated"],
        metrics["pixels_predicted_void"],
    )
    validate_record(record, benchmark, out)
    return record
