"""The harness's steps, each one function: the CLI subcommands, the one-shot command and hence
the workflow's rules all call these, so no step is written twice."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import audit as audit_module
from . import provenance
from .confusion import FrameCounts
from .countsio import read_counts, write_counts
from .datasets import dataset_layout, read_dataset, require_images, require_labels, select_split
from .datasets.base import Frame
from .definitions import Benchmark
from .errors import SegbenchError
from .evaluation import band_plan, evaluate
from .labels import LabelSpace
from .intake import UPLOAD_META, ArchivePredictions, open_predictions
from .scoring import score_constant, score_predictions
from .spec import ModelSpec, shard_count  # defined there so that plan.py need not import this module
from .fileio import atomic_write_text
from .submission import ModelIdentity, build_record, dumps, validate_record


def frames_of_split(benchmark: Benchmark, data: Path, split: str) -> list[Frame]:
    benchmark.check_split(split)
    return select_split(read_dataset(benchmark, data), split)


def shard(frames: Sequence[Frame], shard_size: int, index: int | None) -> list[Frame]:
    """Frames of one fixed-size shard of the split (sorted by frame id); all frames if index is None."""
    if index is None:
        return list(frames)
    count = shard_count(len(frames), shard_size)
    if not 0 <= index < count:
        raise SegbenchError(f"shard {index} does not exist: {len(frames)} frames make {count} shards of {shard_size}")
    return list(frames[index * shard_size : (index + 1) * shard_size])


def dataset_manifest(benchmark: Benchmark, data: Path, manifest: Path | None) -> dict[str, Any]:
    """The manifest of the bytes on disk; with `manifest`, verified against it (refused on mismatch)."""
    frames = read_dataset(benchmark, data)
    layout = dataset_layout(benchmark, data)
    if manifest is None:
        return provenance.build_manifest(
            data, frames, id_prefix=benchmark.id_prefix, group_key=benchmark.group_key, layout=layout
        )
    expected = provenance.read_manifest(manifest, id_prefix=benchmark.id_prefix, group_key=benchmark.group_key)
    provenance.verify_manifest(
        expected, data, frames, id_prefix=benchmark.id_prefix, group_key=benchmark.group_key, manifest_path=manifest,
        layout=layout,
    )
    return expected


def run_audit(
    benchmark: Benchmark, data: Path, splits: Sequence[str], json_path: Path, text_path: Path
) -> audit_module.AuditReport:
    """Audit the dataset, write both reports, and raise AuditFailed (naming them) on any error."""
    report = audit_module.audit_dataset(data, benchmark, splits)
    report.write(json_path, text_path)
    report.raise_if_failed(json_path)
    return report


def model_space(spec: ModelSpec, benchmark: Benchmark) -> LabelSpace:
    """The label space a model predicts in (imports torch: only steps that need a model call it)."""
    from .models import output_space

    return output_space(spec.kind, spec.path, benchmark, spec.label_space)


def model_identity(spec: ModelSpec, benchmark: Benchmark) -> ModelIdentity:
    space = model_space(spec, benchmark)
    return ModelIdentity(spec.name, spec.kind, space.name, provenance.checkpoint_sha256(spec.path))


def infer(
    benchmark: Benchmark, frames: Sequence[Frame], spec: ModelSpec, out_dir: Path, batch_size: int, device: str, progress: bool
) -> None:
    """Predicted masks for `frames` in `out_dir`, at ground-truth size, in the model's label space."""
    from .inference_modes import predict
    from .models import load_model

    if spec.kind == "predictions":
        raise SegbenchError(f"model '{spec.name}' is a predictions folder: it has no inference step")
    require_images(frames)
    model = load_model(spec.kind, spec.path, benchmark, spec.label_space, device,
                       normalization=spec.normalization, stride=spec.stride)
    predict(
        model,
        frames,
        out_dir,
        spec.inference_size or benchmark.inference_size,
        spec.inference,
        batch_size,
        progress,
        pad_to_stride=benchmark.pad_to_stride,
    )


def inference_record(spec: ModelSpec, benchmark: Benchmark) -> tuple[int | None, dict[str, Any] | None]:
    """(inference_size, inference block) of a model's submission record; (None, None) for predictions."""
    if spec.kind == "predictions":
        return None, None
    size = spec.inference_size or benchmark.inference_size
    return size, spec.inference.record(size)


def score(
    benchmark: Benchmark, frames: Sequence[Frame], spec: ModelSpec | None, predictions: Path | None, out: Path, split: str
) -> FrameCounts:
    """Per-frame counts of the model's masks (or of the floor when spec is None), written to `out`."""
    require_labels(frames, "scoring")
    if spec is None:
        space: LabelSpace = benchmark.ground_truth
        counts = score_constant(frames, benchmark.floor_class, space, benchmark.evaluation_size,
                                band_plan(benchmark, space))
        model = {"name": "floor", "kind": "floor", "label_space": {"name": space.name, "classes": space.names}}
    else:
        space = model_space(spec, benchmark)
        folder = predictions if predictions is not None else spec.path
        counts = score_predictions(frames, folder, benchmark.ground_truth, space, benchmark.evaluation_size,
                                   band_plan(benchmark, space))
        model = {"name": spec.name, "kind": spec.kind, "label_space": {"name": space.name, "classes": space.names}}
    write_counts(out, counts, {"benchmark": benchmark.name, "split": split, "model": model})
    return counts


def check_predictions(spec: ModelSpec, frames: Sequence[Frame], dataset_id: str | None = None) -> None:
    """For a predictions folder or archive: exactly one plain mask file per evaluated frame; an
    upload that states the dataset_id it was made for (uploads.UPLOAD_META) must state this one."""
    if spec.kind != "predictions":
        return
    with open_predictions(spec.path, frames, exact=True) as masks:
        stated = masks.metadata() if isinstance(masks, ArchivePredictions) else None
    if dataset_id is not None and stated is not None and stated != dataset_id:
        raise SegbenchError(f"{spec.path}: made for dataset {stated} ({UPLOAD_META}), but the data is {dataset_id}")


def counts_space(benchmark: Benchmark, meta: dict[str, Any]) -> LabelSpace:
    """The label space recorded with counts: the benchmark's own when the names agree."""
    recorded = meta["model"]["label_space"]
    for space in benchmark.spaces.values():
        if space.name == recorded["name"] and space.names == recorded["classes"]:
            return space
    return LabelSpace.from_table(
        {"name": recorded["name"], "classes": [{"id": i, "name": n} for i, n in enumerate(recorded["classes"])]}
    )


def merge_counts(benchmark: Benchmark, paths: Sequence[Path]) -> tuple[FrameCounts, dict[str, Any], LabelSpace]:
    """Read and merge shard counts; they must agree on benchmark, split and model."""
    parts = [read_counts(p) for p in paths]
    if not parts:
        raise SegbenchError("no counts files given")
    first = parts[0][1]
    for path, (_, meta) in zip(paths, parts):
        for key in ("benchmark", "split", "model"):
            if meta[key] != first[key]:
                raise SegbenchError(f"{path}: {key} is {meta[key]!r} but {paths[0]} has {first[key]!r}; not mergeable")
    if first["benchmark"] != benchmark.name:
        raise SegbenchError(f"{paths[0]}: counts are for benchmark '{first['benchmark']}', not '{benchmark.name}'")
    try:
        counts = FrameCounts.merge([c for c, _ in parts])
    except ValueError as exc:
        raise SegbenchError(f"cannot merge {[str(p) for p in paths]}: {exc}") from None
    return counts, first, counts_space(benchmark, first)


def metrics_document(benchmark: Benchmark, paths: Sequence[Path]) -> dict[str, Any]:
    """All reports of the benchmark for the merged counts, with what they were computed from."""
    counts, meta, space = merge_counts(benchmark, paths)
    results = evaluate(benchmark, counts, space)
    gt_lut = benchmark.ground_truth.raw_lut()
    evaluated = int(counts.count[gt_lut[counts.gt] >= 0].sum())
    return {
        "benchmark": benchmark.name,
        "split": meta["split"],
        "model": meta["model"]["name"],
        "kind": meta["model"]["kind"],
        "label_space": space.name,
        "frames": len(counts.frame_ids),
        "pixels_evaluated": evaluated,
        "results": results,
    }


def write_json(path: Path, document: Any) -> None:
    atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def write_text(path: Path, text: str) -> None:
    atomic_write_text(path, text)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise SegbenchError(f"{path}: file not found") from None
    except json.JSONDecodeError as exc:
        raise SegbenchError(f"{path}: not JSON ({exc})") from None


def read_json_fields(path: Path, fields: Sequence[str]) -> dict[str, Any]:
    """A JSON object that must have `fields`; the missing ones are named."""
    document = read_json(path)
    if not isinstance(document, dict):
        raise SegbenchError(f"{path}: expected a JSON object, got {type(document).__name__}")
    missing = [f for f in fields if f not in document]
    if missing:
        raise SegbenchError(f"{path}: missing field(s) {missing}")
    return document


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
    )
    validate_record(record, benchmark, out)
    return record
