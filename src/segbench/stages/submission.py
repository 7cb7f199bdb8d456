"""Submission records: the specification's fields, plus provenance, validated before writing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.benchmark import Benchmark
from ..core.evaluation import beats, headline, record_results
from ..errors import SegbenchError
from ..io.fileio import atomic_write_text
from ..io.paths import schema_path
from ..io.schemas import validate
from ..records.identity import ModelIdentity


def build_record(
    benchmark: Benchmark,
    dataset_id: str,
    split: str,
    model: ModelIdentity,
    results: dict[str, dict[str, Any]],
    floor_results: dict[str, dict[str, Any]],
    inference_size: int | None,
    inference: dict[str, Any] | None,
    frames: int,
    pixels_evaluated: int,
    pixels_predicted_void: int,
) -> dict[str, Any]:
    """The record, keys in the specification's order, then the protocol's additions; of the
    results, the spec fields each report selects (`record` in the benchmark definition).

    `inference` is the mode block (spec.InferenceMode.record), None for a predictions folder;
    `pixels_predicted_void`: of the pixels evaluated, those predicted as a void value of the
    model's label space (no class: counted as misses, evaluation.void_predictions).
    """
    floor_value = headline(benchmark, floor_results)
    record: dict[str, Any] = {
        "benchmark_version": benchmark.benchmark_version,
        "taxonomy_version": benchmark.taxonomy_version,
        "dataset_id": dataset_id,
        "split": split,
        "checkpoint_sha256": model.checkpoint_sha256,
    }
    record.update(record_results(benchmark, results))
    record.update(
        {
            "benchmark": benchmark.name,
            "model": {"name": model.name, "kind": model.kind, "label_space": model.label_space},
            "inference_size": inference_size,
            "inference": inference,
            "frames": frames,
            "pixels_evaluated": pixels_evaluated,
            "pixels_predicted_void": pixels_predicted_void,
            "floor": {
                "metric": ".".join(benchmark.floor_compare_on),
                "value": floor_value,
                "beaten": beats(headline(benchmark, results), floor_value),
            },
            "tool": {"name": "segbench", "version": __version__},
        }
    )
    return record


def validate_record(record: dict[str, Any], benchmark: Benchmark, source: str | Path) -> None:
    validate(record, "submission", source)
    specific = f"submission-{benchmark.name}"
    if schema_path(specific).is_file():
        validate(record, specific, source)


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def write_record(path: Path, record: dict[str, Any], benchmark: Benchmark) -> None:
    """Validate against the schemas, then write atomically: an invalid record is never written."""
    validate_record(record, benchmark, path)
    atomic_write_text(path, dumps(record))


def read_record(path: Path, benchmark: Benchmark) -> dict[str, Any]:
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        raise SegbenchError(f"{path}: submission record not found") from None
    except json.JSONDecodeError as exc:
        raise SegbenchError(f"{path}: not JSON ({exc})") from None
    validate_record(record, benchmark, path)
    return record
