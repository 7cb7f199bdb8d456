"""`segbench`: one subcommand per step, for people and for the workflow's rules.

Thin on purpose: a subcommand parses its arguments and calls its step module (segbench.steps.*),
imported only when that subcommand runs. COMMANDS names each subcommand's module; the workflow
derives a rule's code dependencies from it (segbench.workflow.codedeps), so this module imports nothing
of the package at its top but the errors and the version.

A model is named either as the workflow passes it, `--model-spec JSON` (its config entry as
Snakemake resolved it, with its name), or as a person does, `--model NAME --config FILE`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from types import ModuleType

from .. import __version__
from ..errors import AuditFailed, SegbenchError

DEFAULT_CONFIG = Path("config/config.yaml")


@dataclass(frozen=True)
class Command:
    name: str
    step: str  # the module (below segbench) this subcommand calls
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[ModuleType, argparse.Namespace], None]


def benchmark_of(args: argparse.Namespace):
    from ..protocols.definitions import load_benchmark

    return load_benchmark(args.benchmark)


def model_spec(args: argparse.Namespace, benchmark=None):
    """The model the arguments name: its identity record (--identity, with --model-path where its
    bytes are for this job), --model-spec JSON, or --model NAME from --config."""
    from ..core.model_spec import ModelSpec

    if getattr(args, "identity", None) is not None:
        from ..records.identity import read_identity

        spec = read_identity(args.identity, benchmark)[2]
        return spec if args.model_path is None else spec.with_path(args.model_path)
    if args.model_spec is not None:
        return ModelSpec.from_json(args.model_spec)
    if args.model is None:
        raise SegbenchError("name the model: --model NAME (from --config), --model-spec JSON or --identity RECORD")
    from ..workflow.config import load_config

    return ModelSpec.from_config(load_config(args.config), args.model)


def frames_of(args: argparse.Namespace, benchmark) -> list:
    """The frames of --split (from --frames INDEX when given), or of one --shard of --shards."""
    from ..steps.frames import frames_of_split, shard

    return shard(frames_of_split(benchmark, args.data, args.split, args.frames), args.shards, args.shard)


# --- arguments ---------------------------------------------------------------------------------


def add_benchmark(p: argparse.ArgumentParser) -> None:
    p.add_argument("--benchmark", default="painting-vision", help="benchmark name (config/benchmarks/NAME.yaml)")


def add_frames(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--data", type=Path, required=True, help="dataset folder")
    p.add_argument("--split", required=True)
    p.add_argument("--frames", type=Path, help="frame index (results/<benchmark>/frames.json) instead of listing the dataset")
    p.add_argument("--shard", type=int, default=None, help="shard index (0-based); all frames when omitted")
    p.add_argument("--shards", type=int, default=None, help="the split's shard count (frames go by a hash of their id)")


def add_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="model name in the config")
    p.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="where --model is defined")
    p.add_argument("--model-spec", help="the model's config entry as JSON with its name (as the workflow passes it)")


def args_manifest(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--verify", type=Path, help="refuse unless the bytes on disk match this manifest")
    p.add_argument("--out", type=Path, help="write the manifest here")
    p.add_argument("--dataset-id-out", type=Path, help="write {dataset_id, frames} JSON here")
    p.add_argument("--index-out", type=Path, help="write the frame index (frames, hashes, label sizes) here")


def args_audit(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--split", action="append", default=[], help="a split to be evaluated (must not be empty); repeatable")
    p.add_argument("--json", type=Path, required=True)
    p.add_argument("--text", type=Path, required=True)


def args_identify(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    add_model(p)
    p.add_argument("--out", type=Path, required=True)


def args_infer(p: argparse.ArgumentParser) -> None:
    add_frames(p)
    add_model(p)
    p.add_argument("--identity", type=Path, help="the model's identity record (`segbench identify`): its spec")
    p.add_argument("--model-path", type=Path, help="with --identity: where the model's bytes are (default: its spec's path)")
    p.add_argument("--out", type=Path, required=True, help="folder for the predicted masks")
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def args_score(p: argparse.ArgumentParser) -> None:
    add_frames(p)
    add_model(p)
    p.add_argument("--identity", type=Path, help="the model's identity record (its label space), from `segbench identify`")
    p.add_argument("--label-space", help="the predictions' label space (for a folder of masks named by no config)")
    p.add_argument("--predictions", type=Path, help="folder of masks (default: the model's path, for kind predictions)")
    p.add_argument("--floor", action="store_true", help="score the floor predictor from the ground truth alone")
    p.add_argument("--out", type=Path, required=True, help="counts file (.parquet)")


def args_metrics(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--counts", type=Path, nargs="+", help="shard counts (from `segbench score`)")
    p.add_argument("--predictions", type=Path, help="or a folder (or archive) of masks, scored directly")
    p.add_argument("--label-space", help="with --predictions: the masks' label space")
    p.add_argument("--data", type=Path, help="with --predictions: the dataset folder")
    p.add_argument("--split", help="with --predictions: the split the masks are for (default: the benchmark's)")
    p.add_argument("--out", type=Path, required=True)


def args_submit(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--metrics", type=Path, required=True)
    p.add_argument("--floor-metrics", type=Path, required=True)
    p.add_argument("--identity", type=Path, required=True, help="output of `segbench identify`")
    p.add_argument("--dataset-id", type=Path, required=True, help="output of `segbench manifest --dataset-id-out`")
    p.add_argument("--out", type=Path, required=True)


def args_idd_labels(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, required=True, help="IDD root holding gtFine/<split>/<drive>/*_polygons.json")


def args_pull(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", type=Path, nargs="+")
    p.add_argument("--out", type=Path, required=True, help="marker JSON written when the path is present")


def args_results(p: argparse.ArgumentParser) -> None:
    p.add_argument("--submissions", type=Path, nargs="+", required=True)
    p.add_argument("--floors", type=Path, nargs="+", required=True, help="the floor's metrics.json per split")
    p.add_argument("--metrics", type=Path, nargs="*", default=[],
                   help="the models' metrics.json: every metric of every report, beside the records' spec fields")
    p.add_argument("--uncertainty", type=Path, nargs="*", default=[], help="uncertainty.json of models and floors")
    p.add_argument("--out", type=Path, required=True, help="stem: writes STEM.csv, .md, .json and .html")
    p.add_argument("--tables", type=Path, help="folder of the per-report tables and long.csv (default: beside STEM)")
    p.add_argument("--tables-label", help="how the Markdown names that folder (default: --tables)")
    p.add_argument("--metrics-out", type=Path, help="small headline-metrics JSON for `dvc metrics`")


def add_comparison(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--counts", type=Path, nargs="+", required=True, help="the model's shard counts")
    p.add_argument("--baseline-counts", type=Path, nargs="*", default=[], help="the baseline's shard counts")
    p.add_argument("--floor-counts", type=Path, nargs="*", default=[], help="the floor's shard counts")


def args_uncertainty(p: argparse.ArgumentParser) -> None:
    add_comparison(p)
    p.add_argument("--manifest", type=Path, required=True, help="the dataset manifest (frame -> group)")
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True)


def args_plot_iou(p: argparse.ArgumentParser) -> None:
    add_comparison(p)
    p.add_argument("--report", required=True, help="report key")
    p.add_argument("--png", type=Path, required=True)
    p.add_argument("--csv", type=Path, required=True)


def args_plot_confusion(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--counts", type=Path, nargs="+", required=True)
    p.add_argument("--space", required=True, help="'ground-truth' or a report key")
    p.add_argument("--png", type=Path, required=True)
    p.add_argument("--csv", type=Path, required=True)


def args_plot_fraction(p: argparse.ArgumentParser) -> None:
    add_comparison(p)
    p.add_argument("--metric", required=True, help="REPORT.METRIC of a fraction_mae metric")
    p.add_argument("--png", type=Path, required=True)


def args_overlays(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--split", required=True)
    p.add_argument("--frames-index", type=Path, help="frame index (results/<benchmark>/frames.json) instead of listing the dataset")
    p.add_argument("--counts", type=Path, nargs="+", required=True)
    p.add_argument("--predictions", type=Path, nargs="+", required=True, help="folders holding the predicted masks")
    p.add_argument("--frames", type=int, default=2, help="how many worst and best frames")
    p.add_argument("--out-dir", type=Path, required=True)


def args_plot_data(p: argparse.ArgumentParser) -> None:
    p.add_argument("--iou", type=Path, nargs="+", required=True)
    p.add_argument("--confusion", type=Path, nargs="+", required=True)
    p.add_argument("--iou-out", type=Path, required=True)
    p.add_argument("--confusion-out", type=Path, required=True)


def args_export_onnx(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--checkpoint", type=Path, required=True, help="a segbench .pt checkpoint")
    p.add_argument("--out", type=Path, required=True, help="the .onnx file to write")
    p.add_argument("--opset", type=int, default=17)


def args_import_checkpoint(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--weights", type=Path, required=True, help="state dict, Lightning checkpoint or .safetensors")
    p.add_argument("--architecture", required=True, help="a registered architecture (segbench.models.architectures)")
    p.add_argument("--arguments", default="{}", help="its keyword arguments as a JSON object (never num_classes)")
    p.add_argument("--label-space", required=True, help="one of the benchmark's label spaces: the output classes")
    p.add_argument("--mean", type=float, nargs=3, required=True, metavar=("R", "G", "B"), help="0..1 units")
    p.add_argument("--std", type=float, nargs=3, required=True, metavar=("R", "G", "B"), help="0..1 units")
    p.add_argument("--stride", type=int, help="padding stride (default: the architecture's)")
    p.add_argument("--prefix", help="strip this key prefix (default: a prefix all keys share, when that fits)")
    p.add_argument("--out", type=Path, required=True, help="the segbench .pt to write")


def args_export(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--dataset-manifest", type=Path, required=True, help="the manifest of the data the masks are for")
    p.add_argument("--split", help="the split (default: the benchmark's)")
    p.add_argument("--predictions", type=Path, required=True, help="folder or archive of masks named by frame")
    p.add_argument("--out", type=Path, required=True, help="the upload (.zip)")


def args_check_submission(p: argparse.ArgumentParser) -> None:
    p.add_argument("archive", type=Path)
    add_benchmark(p)
    p.add_argument("--dataset-manifest", type=Path, required=True)
    p.add_argument("--split", help="the split (default: the benchmark's)")
    p.add_argument("--label-space", help="the masks' label space (default: the benchmark's ground truth)")
    p.add_argument("--data", type=Path, help="the images, to check each mask's size against its image's")


def args_check_results(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=Path("results"), help="the DVC-tracked output folder")
    p.add_argument("--lock", type=Path, default=Path("dvc.lock"))
    p.add_argument("--cache", type=Path, default=Path(".dvc/cache"))
    p.add_argument("--repair", action="store_true", help="remove the job outputs holding damaged files")


# --- runs: each calls its step module ------------------------------------------------------------


def run_manifest(step: ModuleType, args: argparse.Namespace) -> None:
    manifest = step.write_identity(benchmark_of(args), args.data, args.verify, args.out, args.dataset_id_out,
                                   args.index_out)
    print(manifest["dataset_id"])


def run_audit(step: ModuleType, args: argparse.Namespace) -> None:
    report = step.run_audit(benchmark_of(args), args.data, args.split, args.json, args.text)
    print(f"audit passed: {len(report.warnings)} warning(s); report: {args.text}")


def run_identify(step: ModuleType, args: argparse.Namespace) -> None:
    print(step.identify(model_spec(args), benchmark_of(args), args.out).checkpoint_sha256)


def run_infer(step: ModuleType, args: argparse.Namespace) -> None:
    benchmark = benchmark_of(args)
    step.infer(benchmark, frames_of(args, benchmark), model_spec(args, benchmark), args.out, args.batch_size,
               args.device, progress=not args.quiet)


def run_score(step: ModuleType, args: argparse.Namespace) -> None:
    benchmark = benchmark_of(args)
    frames = frames_of(args, benchmark)
    if args.floor:
        step.score_floor(benchmark, frames, args.out, args.split)
        return
    if args.identity is not None:  # the workflow: the label space its identity step recorded
        from ..records.identity import read_identity

        identity, space, spec = read_identity(args.identity, benchmark)
        name, kind = identity.name, identity.kind
        folder = args.predictions if args.predictions is not None else spec.path
    elif args.label_space is not None:  # a folder of masks named by no config
        space, name, kind, folder = benchmark.space(args.label_space), None, "predictions", args.predictions
    else:
        spec = model_spec(args)
        if spec.label_space is None:
            raise SegbenchError(f"model '{spec.name}': its label space is not in the config; give --label-space, "
                                "or --identity with the record `segbench identify` writes")
        space, name, kind = benchmark.space(spec.label_space), spec.name, spec.kind
        folder = args.predictions if args.predictions is not None else spec.path
    if folder is None:
        raise SegbenchError("score needs --predictions DIR (the masks to score)")
    if kind == "predictions":  # made elsewhere: exactly one mask per frame of the split
        step.check_predictions(folder, frames_of_whole_split(args, benchmark))
    step.score_model(benchmark, frames, name or folder.name, kind, space, folder, args.out, args.split)


def frames_of_whole_split(args: argparse.Namespace, benchmark) -> list:
    from ..steps.frames import frames_of_split

    return frames_of_split(benchmark, args.data, args.split, args.frames)


def run_metrics(step: ModuleType, args: argparse.Namespace) -> None:
    from ..io.fileio import write_json

    benchmark = benchmark_of(args)
    if (args.counts is None) == (args.predictions is None):
        raise SegbenchError("metrics of --counts FILE... or of --predictions DIR (with --label-space and --data)")
    if args.counts is not None:
        write_json(args.out, step.metrics_document(benchmark, args.counts))
        return
    if args.label_space is None or args.data is None:
        raise SegbenchError("--predictions needs --label-space (the masks' label space) and --data (the dataset)")
    from ..steps.frames import frames_of_split

    split = args.split or benchmark.default_split
    frames = frames_of_split(benchmark, args.data, split)
    write_json(args.out, step.predictions_metrics(benchmark, frames, args.predictions,
                                                  benchmark.space(args.label_space), split))


def run_submit(step: ModuleType, args: argparse.Namespace) -> None:
    from ..io.fileio import read_json, read_json_fields
    from ..records.identity import read_identity

    benchmark = benchmark_of(args)
    identity, _, spec = read_identity(args.identity, benchmark)
    step.submission(benchmark, read_json(args.metrics), read_json(args.floor_metrics),
                    read_json_fields(args.dataset_id, ("dataset_id",))["dataset_id"], identity,
                    step.inference_record(spec, benchmark), args.out)


def run_idd_labels(step: ModuleType, args: argparse.Namespace) -> None:
    record = step.write_masks(args.data)
    print(f"{len(record['masks'])} level-3 masks drawn with Pillow {record['pillow']}; record: {args.data}/gtFine")


def run_pull(step: ModuleType, args: argparse.Namespace) -> None:
    from ..io.fileio import write_json

    pulled = step.restore(args.paths)
    write_json(args.out, {"paths": [str(p) for p in args.paths]})
    for path in args.paths:
        print(f"{path}: {'restored with dvc pull' if path in pulled else 'present'}")


def run_results(step: ModuleType, args: argparse.Namespace) -> None:
    print(step.results(args.submissions, args.floors, args.metrics, args.uncertainty, args.out,
                       args.tables or args.out.parent / "tables", args.metrics_out, args.tables_label))


def run_uncertainty(step: ModuleType, args: argparse.Namespace) -> None:
    benchmark = benchmark_of(args)
    document = step.uncertainty(benchmark, args.counts, args.baseline_counts, args.floor_counts, args.manifest,
                                args.resamples, args.seed, args.out)
    print(f"{len(document['intervals'])} intervals over {document['groups']} {benchmark.group_key} groups")


def run_plot_iou(step: ModuleType, args: argparse.Namespace) -> None:
    step.plot_iou(benchmark_of(args), args.report, args.counts, args.baseline_counts, args.floor_counts, args.png,
                  args.csv)


def run_plot_confusion(step: ModuleType, args: argparse.Namespace) -> None:
    step.plot_confusion(benchmark_of(args), args.space, args.counts, args.png, args.csv)


def run_plot_fraction(step: ModuleType, args: argparse.Namespace) -> None:
    step.plot_fraction(benchmark_of(args), args.metric, args.counts, args.baseline_counts, args.floor_counts, args.png)


def run_overlays(step: ModuleType, args: argparse.Namespace) -> None:
    from ..steps.frames import frames_of_split

    benchmark = benchmark_of(args)
    frames = frames_of_split(benchmark, args.data, args.split, args.frames_index)
    step.draw_overlays(benchmark, frames, args.counts, args.predictions, args.frames, args.out_dir)


def run_plot_data(step: ModuleType, args: argparse.Namespace) -> None:
    step.plot_data(args.iou, args.confusion, args.iou_out, args.confusion_out)


def run_export_onnx(step: ModuleType, args: argparse.Namespace) -> None:
    step.export_onnx(args.checkpoint, benchmark_of(args), args.out, args.opset)
    print(f"{args.out}: ONNX (opset {args.opset}) of {args.checkpoint}, label space, normalisation and stride in its metadata")


def run_import_checkpoint(step: ModuleType, args: argparse.Namespace) -> None:
    import json

    benchmark = benchmark_of(args)
    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        raise SegbenchError(f"--arguments: not JSON ({exc})") from None
    if not isinstance(arguments, dict):
        raise SegbenchError(f"--arguments: must be a JSON object of keyword arguments, got {args.arguments}")
    step.import_checkpoint(args.weights, args.architecture, arguments, benchmark.space(args.label_space),
                           {"mean": args.mean, "std": args.std}, args.out, args.stride, args.prefix)
    print(f"{args.out}: segbench checkpoint of {args.weights} ({args.architecture}, {args.label_space})")


def run_export(step: ModuleType, args: argparse.Namespace) -> None:
    benchmark = benchmark_of(args)
    frames, dataset_id = step.manifest_frames(benchmark, args.dataset_manifest, args.split or benchmark.default_split)
    count = step.export_upload(benchmark, frames, dataset_id, args.predictions, args.out)
    print(f"{args.out}: {count} masks in the {benchmark.title} upload format, for dataset {dataset_id}")


def run_check_submission(step: ModuleType, args: argparse.Namespace) -> None:
    benchmark = benchmark_of(args)
    frames, dataset_id = step.manifest_frames(benchmark, args.dataset_manifest, args.split or benchmark.default_split)
    space = benchmark.space(args.label_space) if args.label_space else benchmark.ground_truth
    summary = step.check_upload(benchmark, frames, dataset_id, args.archive, space, args.data)
    print(f"{args.archive}: accepted: {summary['frames']} frames of {dataset_id}, values {summary['values']} in "
          f"'{space.name}'")


def run_check_results(step: ModuleType, args: argparse.Namespace) -> None:
    import os

    listing = step.recorded_listing(args.lock, Path(os.path.relpath(args.out, args.lock.parent)).as_posix(), args.cache)
    if listing is None:
        print(f"{args.out}: no tree recorded in {args.lock} and {args.cache}: nothing to compare")
        return
    damaged = step.damaged_files(args.out, listing)
    lines = [f"{path}: {how} since {args.lock} recorded it" for path, how in damaged]
    if damaged and not args.repair:
        raise SegbenchError(f"{args.out}: {len(damaged)} file(s) differ from the recorded tree:\n  " + "\n  ".join(lines))
    for output in step.repair(args.out, damaged) if damaged else []:
        print(f"removed {output} (to be re-made by the workflow)")
    print(f"{args.out}: {len(listing) - len(damaged)} of {len(listing)} recorded files as recorded")


COMMANDS = [
    Command("manifest", "steps.dataset_identity", "build data_manifest.json and the dataset_id, or verify against one",
            args_manifest, run_manifest),
    Command("audit", "steps.audit", "audit the dataset; exit 1 on any error", args_audit, run_audit),
    Command("identify", "steps.model_identity", "checkpoint_sha256 and label space of a model: its identity record",
            args_identify, run_identify),
    Command("infer", "steps.inference", "predicted masks for the frames of a split (or one shard of it)",
            args_infer, run_infer),
    Command("score", "steps.scoring", "per-frame confusion counts of predicted masks (or of the floor)",
            args_score, run_score),
    Command("metrics", "steps.metrics", "merge counts and compute every metric of the benchmark",
            args_metrics, run_metrics),
    Command("submit", "steps.submission", "write the schema-checked submission record", args_submit, run_submit),
    Command("idd-labels", "protocols.idd.masks", "draw IDD level-3 masks from the polygon JSONs, as the reference does",
            args_idd_labels, run_idd_labels),
    Command("pull", "workflow.pinning", "restore DVC-pinned inputs (datasets, checkpoints) that are missing", args_pull, run_pull),
    Command("results", "steps.results", "the results table with bootstrap intervals: STEM.{csv,md,json,html}",
            args_results, run_results),
    Command("uncertainty", "steps.uncertainty", "bootstrap intervals over groups, paired comparisons with baseline and floor",
            args_uncertainty, run_uncertainty),
    Command("plot-iou", "steps.plots", "per-class IoU bars of a report: model, baseline, floor",
            args_plot_iou, run_plot_iou),
    Command("plot-confusion", "steps.plots", "row-normalised confusion heatmap in a label space",
            args_plot_confusion, run_plot_confusion),
    Command("plot-fraction", "steps.plots", "per-frame predicted vs ground-truth fraction of a fraction_mae metric",
            args_plot_fraction, run_plot_fraction),
    Command("overlays", "steps.overlays", "worst and best frames: image | ground truth | prediction | error",
            args_overlays, run_overlays),
    Command("plot-data", "steps.plots", "gather per-model plot data into the files dvc plots reads",
            args_plot_data, run_plot_data),
    Command("export-onnx", "models.onnx", "write a segbench checkpoint as an ONNX file (kind onnx) with its metadata",
            args_export_onnx, run_export_onnx),
    Command("import-checkpoint", "models.importing",
            "a plain state dict (.pt/.pth/.ckpt/.safetensors) -> a segbench checkpoint",
            args_import_checkpoint, run_import_checkpoint),
    Command("export", "stages.uploads", "the upload of a predictions folder in the benchmark's official format (zip)",
            args_export, run_export),
    Command("check-submission", "stages.uploads", "check an upload against the dataset manifest, without labels",
            args_check_submission, run_check_submission),
    Command("check-results", "workflow.results_check", "the results tree against dvc.lock: find (and remove) damaged outputs",
            args_check_results, run_check_results),
]
COMMAND = {c.name: c for c in COMMANDS}


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="segbench", description=__doc__.split("\n\n")[0])
    root.add_argument("--version", action="version", version=f"segbench {__version__}")
    sub = root.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.arguments(sub.add_parser(command.name, help=command.help))
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    command = COMMAND[args.command]
    try:
        command.run(import_module(f"..{command.step}", __package__), args)
    except AuditFailed as exc:
        print(f"segbench: audit failed: {exc}", file=sys.stderr)
        return 1
    except SegbenchError as exc:
        print(f"segbench: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("segbench: interrupted (every output is written whole or not at all: none was left half-written)",
              file=sys.stderr)
        return 130
    except OSError as exc:  # the file system refused (read-only, full, permissions) outside a named write
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"segbench: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
