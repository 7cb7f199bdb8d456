"""Submission records: the specification's fields, plus provenance, validated before writing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.benchmark import Benchmark
from ..core.evaluation import beats, headline, record_results
from ..core.headline import PairedDifference
from ..core.significance import floor_verdict
from ..errors import SegbenchError
from ..io.fileio import atomic_write_texts, read_json
from ..io.paths import schema_path
from ..io.schemas import validate
from ..protocols.definitions import load_benchmark
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
    against_floor: PairedDifference,
    team: str | None = None,
) -> dict[str, Any]:
    """The record, keys in the specification's order, then the protocol's additions; of the
    results, the spec fields each report selects (`record` in the benchmark definition).

    `inference` is the mode block (spec.InferenceMode.record), None for a predictions folder;
    `pixels_predicted_void`: of the pixels evaluated, those predicted as a void value of the
    model's label space (no class: counted as misses, evaluation.void_predictions);
    `against_floor`: the headline's paired bootstrap difference against the floor over the
    benchmark's units, which decides the verdict (floor_block); `team`: who submitted it, when said.
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
            "floor": floor_block(benchmark, headline(benchmark, results), floor_value, against_floor),
            **({"team": team} if team else {}),
            "tool": {"name": "segbench", "version": __version__},
        }
    )
    return record


def floor_block(benchmark: Benchmark, value: float | None, floor_value: float | None,
                against_floor: PairedDifference) -> dict[str, Any]:
    """The record's floor: the spec's point comparison (`beaten`: the headline above the floor's
    value), then the paired interval over the units and the verdict that decides "beats the floor"
    (significance.floor_verdict: yes, no, within noise, or too few units for an interval)."""
    return {
        "metric": ".".join(benchmark.floor_compare_on),
        "value": floor_value,
        "beaten": beats(value, floor_value),
        "difference": against_floor.difference,
        "low": against_floor.low,
        "high": against_floor.high,
        "units": against_floor.units,
        "unit": against_floor.unit,
        "verdict": floor_verdict(against_floor),
    }


def floor_comparison(uncertainty: dict[str, Any], key: str) -> PairedDifference:
    """The paired difference of `key` (the headline) against the floor in an uncertainty document
    (steps.uncertainty); refused when the document has no comparison with the floor."""
    found = ((uncertainty.get("comparisons") or {}).get("floor") or {}).get("metrics", {}).get(key)
    if found is None:
        raise SegbenchError(f"the uncertainty document of '{uncertainty.get('model')}' has no paired comparison of "
                            f"{key} with the floor (made with --floor-counts); no floor verdict without it")
    return PairedDifference(found["difference"], None, found["low"], found["high"], uncertainty["groups"],
                            uncertainty["group_key"])


def validate_record(record: dict[str, Any], benchmark: Benchmark, source: str | Path) -> None:
    validate(record, "submission", source)
    specific = f"submission-{benchmark.name}"
    if schema_path(specific).is_file():
        validate(record, specific, source)


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def write_record(path: Path, record: dict[str, Any], benchmark: Benchmark) -> None:
    """Validate against the schemas, then write atomically: an invalid record is never written."""
    write_records({path: record}, benchmark)


def write_records(records: dict[Path, dict[str, Any]], benchmark: Benchmark) -> None:
    """write_record of several records as one set: each validated first, then all written or none."""
    for path, record in records.items():
        validate_record(record, benchmark, path)
    atomic_write_texts({path: dumps(record) for path, record in records.items()})


def read_record(path: Path, benchmark: Benchmark | None = None) -> dict[str, Any]:
    """A submission record, validated against the schemas of `benchmark` (by default the one its
    `benchmark` field names) before anything reads it: write_record's counterpart."""
    record = read_json(path, "submission record")
    if benchmark is None:
        name = record.get("benchmark") if isinstance(record, dict) else None
        if not isinstance(name, str):
            raise SegbenchError(f"{path}: not a submission record (no 'benchmark' field naming its benchmark)")
        benchmark = load_benchmark(name)
    validate_record(record, benchmark, path)
    return record
