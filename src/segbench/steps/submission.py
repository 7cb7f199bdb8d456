"""The submission record of one (model, split) as a step: built, schema-checked, written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark
from ..core.model_spec import ModelSpec
from ..errors import SegbenchError
from ..io.fileio import read_json_fields
from ..records.identity import ModelIdentity, read_identity
from ..stages.submission import build_record, floor_comparison, write_record


def inference_record(spec: ModelSpec, benchmark: Benchmark) -> tuple[int | None, dict[str, Any] | None]:
    """(inference_size, inference block) of a model's submission record; (None, None) for predictions."""
    if spec.kind == "predictions":
        return None, None
    size = spec.inference_size or benchmark.inference_size
    return size, spec.inference.record(size)


def record_inputs(benchmark: Benchmark, metrics_path: Path, floor_path: Path, identity_path: Path,
                  dataset_path: Path, uncertainty_path: Path
                  ) -> tuple[dict[str, Any], dict[str, Any], str, ModelIdentity, ModelSpec, dict[str, Any]]:
    """What a submission record is made of, read from the files `segbench metrics`, `identify` and
    `manifest --dataset-id-out` and `uncertainty` write: (metrics, floor metrics, dataset_id,
    identity, spec, uncertainty), refused unless they are of one benchmark, label space, split,
    dataset (its dataset_id) and model (its name, kind and checkpoint_sha256): check_agreement."""
    identity, _, spec = read_identity(identity_path, benchmark)
    metrics = read_json_fields(metrics_path, DOCUMENT_FIELDS)
    floor = read_json_fields(floor_path, DOCUMENT_FIELDS)
    dataset_id = read_json_fields(dataset_path, ("dataset_id",))["dataset_id"]
    uncertainty = read_json_fields(uncertainty_path, UNCERTAINTY_FIELDS)
    check_agreement([
        ("benchmark", ("--benchmark", benchmark.name), (metrics_path, metrics["benchmark"]),
         (floor_path, floor["benchmark"])),
        ("dataset_id prefix", ("--benchmark", benchmark.id_prefix), (dataset_path, str(dataset_id).split(":")[0])),
        ("label space", (identity_path, identity.label_space), (metrics_path, metrics["label_space"])),
        ("label space", ("the floor", benchmark.ground_truth.name), (floor_path, floor["label_space"])),
        ("model", (identity_path, f"{identity.name} ({identity.kind})"),
         (metrics_path, f"{metrics['model']} ({metrics['kind']})")),
        ("model", ("the floor", "floor (floor)"), (floor_path, f"{floor['model']} ({floor['kind']})")),
        ("dataset_id", (dataset_path, dataset_id), (metrics_path, metrics.get("dataset_id")),
         (floor_path, floor.get("dataset_id"))),
        ("checkpoint_sha256", (identity_path, identity.checkpoint_sha256),
         (metrics_path, metrics.get("checkpoint_sha256"))),
        ("model", (metrics_path, metrics["model"]), (uncertainty_path, uncertainty["model"])),
        ("split", (metrics_path, metrics["split"]), (floor_path, floor["split"]), (uncertainty_path, uncertainty["split"])),
        ("frames", (metrics_path, metrics["frames"]), (floor_path, floor["frames"]),
         (uncertainty_path, uncertainty["frames"])),
    ])
    benchmark.space(identity.label_space)  # a label space the benchmark's models may predict in
    return metrics, floor, dataset_id, identity, spec, uncertainty


DOCUMENT_FIELDS = ("benchmark", "split", "model", "kind", "label_space", "frames", "results")
UNCERTAINTY_FIELDS = ("benchmark", "split", "model", "frames", "groups", "group_key", "comparisons")


def check_agreement(fields: Sequence[tuple[Any, ...]]) -> None:
    """Each (field, (source, value), ...): every source's value the first one's, or a
    SegbenchError naming both sources, the field and both values (None: the source does not say)."""
    for field, (first, expected), *others in fields:
        for source, value in others:
            if value is None:
                raise SegbenchError(f"{source} does not state the {field} ({first}: {expected!r}; counts scored with "
                                    "--frames INDEX and --identity RECORD do); refusing to write a submission record")
            if value != expected:
                raise SegbenchError(f"{source} and {first} disagree on the {field}: {value!r} and {expected!r}; "
                                    "refusing to write a submission record from them")


def submission(
    benchmark: Benchmark,
    metrics: dict[str, Any],
    floor_metrics: dict[str, Any],
    dataset_id: str,
    identity: ModelIdentity,
    inference: tuple[int | None, dict[str, Any] | None],
    uncertainty: dict[str, Any],
    out: Path,
    team: str | None = None,
) -> dict[str, Any]:
    """Build, validate and write the submission record of one (model, split)."""
    record = built_record(benchmark, metrics, floor_metrics, dataset_id, identity, inference, uncertainty, team)
    write_record(out, record, benchmark)
    return record


def built_record(
    benchmark: Benchmark,
    metrics: dict[str, Any],
    floor_metrics: dict[str, Any],
    dataset_id: str,
    identity: ModelIdentity,
    inference: tuple[int | None, dict[str, Any] | None],
    uncertainty: dict[str, Any],
    team: str | None = None,
) -> dict[str, Any]:
    """The submission record of one (model, split), not yet validated; `inference` is
    (inference_size, inference block), as `inference_record` gives them; `uncertainty` the
    model's bootstrap document, whose paired comparison with the floor decides the record's
    floor verdict."""
    if floor_metrics["split"] != metrics["split"] or floor_metrics["frames"] != metrics["frames"]:
        raise SegbenchError("the floor and the model were scored on different frames; refusing to compare them")
    return build_record(
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
        floor_comparison(uncertainty, ".".join(benchmark.floor_compare_on)),
        team,
    )
