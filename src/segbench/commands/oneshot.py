"""The specification's one-shot command: audit, evaluate a checkpoint, a baseline and the floor,
print a comparison table and write the submission record(s).

    python3 benchmark.py --data data --checkpoint artifacts/best.pt --baseline segformer-ade \\
        --split test --dataset-manifest data_manifest.json --emit-submission submission.json
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core.headline import headline_report
from ..core.model_spec import ModelSpec
from ..errors import AuditFailed, SegbenchError
from ..io.fileio import write_json
from ..io.heap import bound_retention
from ..io.oserrors import EXIT_READER_GONE, file_problem, output_reader_gone
from ..protocols.definitions import load_benchmark
from ..stages.submission import write_records
from ..steps.audit import run_audit
from ..steps.dataset_identity import dataset_manifest
from ..steps.frames import frames_of_split
from ..steps.inference import infer
from ..steps.metrics import metrics_document
from ..steps.model_identity import model_identity, model_space
from ..steps.results import results
from ..steps.scoring import check_predictions, score_floor, score_model
from ..steps.submission import built_record, inference_record
from ..steps.uncertainty import manifest_groups, uncertainty_document
from ..workflow.config import load_config
from ..io.overlap import overlaps, refuse_overlaps
from .arguments import Help, Parser, benchmark_names, input_path, named_paths, output_path, positive_int
from .modelpath import checkpoint_kind, model_name


@contextmanager
def timed(step: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    print(f"[{time.perf_counter() - start:6.1f} s] {step}", file=sys.stderr)


def inference_block(args: argparse.Namespace) -> dict[str, Any]:
    """The model's `inference:` config block from the mode options (checked by ModelSpec)."""
    block: dict[str, Any] = {"mode": args.inference_mode}
    for key, value in (("crop", args.crop), ("stride", args.window_stride), ("scales", args.scales)):
        if value is not None:
            block[key] = value
    if args.flip:
        block["flip"] = True
    return block


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="benchmark.py", description=__doc__, formatter_class=Help,
                                epilog="The flags' convention, shared with `segbench`: docs/cli.md")
    p.add_argument("--data", type=input_path, required=True, help="dataset folder")
    evaluated = p.add_mutually_exclusive_group(required=True)
    evaluated.add_argument("--checkpoint", type=input_path,
                           help="the model: .pt, TorchScript (.ts), ONNX (.onnx), a Hugging Face folder; or, as the "
                                "specification allows, a folder or archive of masks")
    evaluated.add_argument("--predictions", type=input_path,
                           help="a folder or archive (.zip, .tar, .tar.gz) of masks named for the frames, with "
                                "--label-space: --checkpoint PATH --checkpoint-kind predictions")
    p.add_argument("--checkpoint-kind", choices=["checkpoint", "torchscript", "onnx", "hf", "hf-segformer", "predictions"],
                   help="how --checkpoint is read (default: from its path)")
    p.add_argument("--team", help="who submits the checkpoint, written in its record (a results table names the row "
                                  "TEAM/MODEL)")
    p.add_argument("--label-space", help="the checkpoint's label space (default: as the checkpoint declares)")
    p.add_argument("--baseline", action="append", default=[], help="baseline name from the config (repeatable)")
    p.add_argument("--split", default=None, help="split to evaluate (default: the benchmark's, 'test')")
    p.add_argument("--dataset-manifest", type=input_path, help="refuse to evaluate unless the bytes match this manifest")
    p.add_argument("--emit-submission", "--out", type=output_path,
                   help="submission record of the checkpoint; baselines' beside it (default: in the work folder)")
    p.add_argument("--benchmark", default="painting-vision", choices=benchmark_names(),
                   help="benchmark name (config/benchmarks/NAME.yaml)")
    p.add_argument("--config", type=input_path, default=Path("config/config.yaml"),
                   help="where baselines and the bootstrap's resamples and seed are defined")
    p.add_argument("--inference-size", type=positive_int, help="long side at inference (default: the benchmark's)")
    p.add_argument("--inference-mode", choices=["whole", "slide", "multi-scale"], default="whole",
                   help="how the frames go through the model (docs/models.md)")
    p.add_argument("--crop", type=positive_int, nargs=2, metavar=("H", "W"), help="slide: window size")
    p.add_argument("--window-stride", type=positive_int, nargs=2, metavar=("H", "W"), help="slide: step between windows")
    p.add_argument("--scales", type=float, nargs="+", help="multi-scale: factors of the inference size")
    p.add_argument("--flip", action="store_true", help="multi-scale: also the mirror image, left/right classes swapped")
    p.add_argument("--batch-size", type=positive_int, default=4, help="frames per forward pass")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="where the model runs (auto: cuda when available)")
    p.add_argument("--work-dir", type=output_path, default=Path("build/benchmark"), help="predictions, counts and audit reports")
    return p


def evaluate_model(args: argparse.Namespace, benchmark: Any, frames: list, spec: ModelSpec, identity: Any,
                   space: Any, folder: Path, dataset_id: str) -> dict[str, Any]:
    if spec.kind != "predictions":
        predictions = folder / "predictions"
        with timed(f"inference: {spec.name}"):
            infer(benchmark, frames, spec, predictions, args.batch_size, args.device, progress=True)
    else:
        predictions = spec.path
    with timed(f"scoring: {spec.name}"):
        score_model(benchmark, frames, spec.name, spec.kind, space, predictions, folder / "counts.parquet",
                    frames[0].split, dataset_id, identity.checkpoint_sha256, progress=True)
        return metrics_document(benchmark, [folder / "counts.parquet"])


def model_folder(name: str, checkpoint_sha256: str) -> str:
    """A model's folder in the work folder: its name and the start of its checkpoint_sha256, so the
    outputs of two models never share one (best.pt and its export best.onnx, two files best.pt)."""
    return f"{name}-{checkpoint_sha256[:12]}"


def refuse_duplicate_names(specs: list[ModelSpec]) -> None:
    """The checkpoint, the baselines and the floor are told apart by name in the records and the table."""
    seen = {"floor"}
    for spec in specs:
        if spec.name in seen:
            raise SegbenchError(f"two of the models evaluated are named '{spec.name}' (the checkpoint's file name, a "
                                "--baseline given twice, or 'floor', the floor's): the records and the table could "
                                "not tell them apart")
        seen.add(spec.name)


def record_targets(args: argparse.Namespace, specs: list[ModelSpec], folders: dict[str, Path]) -> dict[str, Path]:
    """Where each model's submission record goes: the checkpoint's at --emit-submission, each
    baseline's beside it (STEM.NAME.SUFFIX), or each in its folder of the work folder."""
    if args.emit_submission is None:
        return {spec.name: folders[spec.name] / "submission.json" for spec in specs}
    emit = args.emit_submission
    return {spec.name: emit if i == 0 else emit.with_name(f"{emit.stem}.{spec.name}{emit.suffix}")
            for i, spec in enumerate(specs)}


def refuse_outputs_on_inputs(args: argparse.Namespace, baselines: list[ModelSpec], work: Path,
                             outputs: list[tuple[str, Path]]) -> None:
    """No record and no file of the work folder onto or inside an input: the arguments' own, the
    baselines' paths, and what is written under the work folder (audit reports, the floor's
    folder, the results, and `outputs`: each model's folder and record, once they are known)
    checked one by one, so an input kept elsewhere in the work folder is fine."""
    inputs, named = named_paths(parser(), args)
    inputs += [(f"baseline '{spec.name}'", spec.path) for spec in baselines if spec.path is not None]
    named += [("--work-dir", work / name) for name in ("audit.json", "audit.txt", "floor", *RESULTS)]
    refuse_overlaps(inputs, named + outputs)


RESULTS = ("results.csv", "results.md", "results.json", "results.html", "tables")  # under the work folder


def uncertainties(benchmark: Any, folders: dict[str, Path], baselines: list[ModelSpec], groups: dict[str, str],
                  bootstrap: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each model's bootstrap document (paired with the first baseline, if any, and the floor) and
    the floor's, as the workflow's uncertainty step makes them, of the headline alone: what the
    verdict and the table need, at a fraction of every metric's cost (the workflow has them all).
    `folders`: each model's folder and the floor's, holding its counts."""
    headline_only = replace(benchmark, reports=(headline_report(benchmark),))
    counts = {name: [folder / "counts.parquet"] for name, folder in folders.items()}
    baseline = baselines[0].name if baselines else None
    documents = {name: uncertainty_document(headline_only, counts[name], [] if name == baseline or baseline is None
                                            else counts[baseline], counts["floor"], groups,
                                            bootstrap["resamples"], bootstrap["seed"])
                 for name in folders if name != "floor"}
    documents["floor"] = uncertainty_document(headline_only, counts["floor"], [], [], groups,
                                              bootstrap["resamples"], bootstrap["seed"])
    return {name: {**document, "benchmark": benchmark.name} for name, document in documents.items()}


def run(args: argparse.Namespace) -> None:
    benchmark = load_benchmark(args.benchmark)
    split = args.split or benchmark.default_split
    benchmark.check_split(split)
    config = load_config(args.config)
    baselines = [ModelSpec.from_config(config, name) for name in args.baseline]
    source = args.checkpoint if args.checkpoint is not None else args.predictions
    kind = "predictions" if args.predictions is not None else args.checkpoint_kind or checkpoint_kind(source)
    block = inference_block(args)
    model = ModelSpec.from_entry(model_name(source), {
        "kind": kind, "path": str(source), "label_space": args.label_space,
        "inference_size": args.inference_size,
        **({} if kind == "predictions" and block == {"mode": "whole"} else {"inference": block}),
    })
    work = args.work_dir / benchmark.name / split
    specs = [model, *baselines]
    refuse_duplicate_names(specs)
    refuse_outputs_on_inputs(args, baselines, work, [])  # before anything is read

    with timed("dataset identity"):
        manifest = dataset_manifest(benchmark, args.data, args.dataset_manifest)
    print(f"dataset_id: {manifest['dataset_id']}" + (" (verified against the manifest)" if args.dataset_manifest else ""))
    frames = frames_of_split(benchmark, args.data, split)
    for spec in specs:  # refused before anything is written; before hashing, which covers only checked files
        if spec.kind == "predictions":
            check_predictions(benchmark, spec.path, frames, model_space(spec, benchmark), manifest["dataset_id"])
    identities = {spec.name: model_identity(spec, benchmark) for spec in specs}
    folders = {spec.name: work / model_folder(spec.name, identities[spec.name][0].checkpoint_sha256) for spec in specs}
    targets = record_targets(args, specs, folders)
    refuse_outputs_on_inputs(args, baselines, work, [("--work-dir", folder) for folder in folders.values()]
                             + [(f"record of '{name}'", path) for name, path in targets.items()])
    with timed("audit"):
        report = run_audit(benchmark, args.data, [split], work / "audit.json", work / "audit.txt")
    print(f"audit passed with {len(report.warnings)} warning(s): {work / 'audit.txt'}")

    with timed("floor"):
        score_floor(benchmark, frames, work / "floor" / "counts.parquet", split, manifest["dataset_id"], progress=True)
        floor = metrics_document(benchmark, [work / "floor" / "counts.parquet"])
    documents = {spec.name: evaluate_model(args, benchmark, frames, spec, *identities[spec.name], folders[spec.name],
                                           manifest["dataset_id"]) for spec in specs}
    folders["floor"] = work / "floor"

    with timed("bootstrap"):
        bootstraps = uncertainties(benchmark, folders, baselines, manifest_groups(benchmark, manifest),
                                   config["bootstrap"])
    records = {spec.name: built_record(benchmark, documents[spec.name], floor, manifest["dataset_id"],
                                       identities[spec.name][0], inference_record(spec, benchmark),
                                       bootstraps[spec.name], args.team if spec is model else None)
               for spec in specs}
    documents["floor"] = floor
    write_records({targets[name]: record for name, record in records.items()}, benchmark)  # all or none
    for name, target in targets.items():
        print(f"submission record ({name}): {target}")
    for name in documents:  # the files the results table reads, as the workflow's steps write them
        write_json(folders[name] / "metrics.json", documents[name])
        write_json(folders[name] / "uncertainty.json", bootstraps[name])
    markdown = results(list(targets.values()), [folders["floor"] / "metrics.json"],
                       [folders[name] / "metrics.json" for name in records],
                       [folders[name] / "uncertainty.json" for name in documents], work / "results", work / "tables", None)
    print("\n" + markdown)
    print(f"every metric, per report and per class: {work / 'tables'}/ and {work / 'results.html'}")
    for name, record in records.items():
        if record["pixels_predicted_void"]:
            print(f"\nWARNING: {name}: {record['pixels_predicted_void']:,} of {record['pixels_evaluated']:,} evaluated "
                  f"pixels predicted as void in '{record['model']['label_space']}': no class, counted as misses.")
    losers = [name for name, record in records.items() if record["floor"]["verdict"] != "yes"]
    if losers:
        print(f"\nWARNING: {', '.join(losers)}: not shown to beat the floor (" +
              "; ".join(f"{name}: {records[name]['floor']['verdict']}" for name in losers) + ")")


def previous_records(args: argparse.Namespace) -> list[Path]:
    """Records a failed run leaves from an earlier run (it never removes them): said in the error;
    an input at a record's path (refused as the record's target) is no record."""
    if args.emit_submission is None:
        return []
    folder = args.emit_submission.parent
    stem, suffix = args.emit_submission.stem, args.emit_submission.suffix
    inputs = named_paths(parser(), args)[0]
    return sorted(p for p in {*folder.glob(f"{stem}{suffix}"), *folder.glob(f"{stem}.*{suffix}")}
                  if p.is_file() and not overlaps(inputs, [("", p)]))


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    before = previous_records(args)
    bound_retention()  # several models in one process: what each stage frees goes back (io/heap.py)
    try:
        run(args)
        return 0
    except AuditFailed as exc:
        message = f"audit failed, nothing evaluated: {exc}"
        code = 1
    except SegbenchError as exc:
        message = f"error: {exc}"
        code = 1
    except KeyboardInterrupt:
        message = "interrupted; no submission record was written"
        code = 130
    except OSError as exc:  # the file system refused (read-only, full, permissions) outside a named write
        if output_reader_gone(exc):
            return EXIT_READER_GONE  # quiet, as a Unix tool is when `| head` has read enough
        message = f"error: {file_problem(exc, doing='access')}"
        code = 1
    if before:
        message += f"\n(records of an earlier run left unchanged: {', '.join(map(str, before))})"
    print(f"benchmark.py: {message}", file=sys.stderr)
    return code
