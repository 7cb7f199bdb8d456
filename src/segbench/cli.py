"""`segbench`: one subcommand per step, for people and for the workflow's rules."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__, leaderboard, pinning, provenance, steps
from .config import load_config
from .definitions import load_benchmark
from .errors import AuditFailed, SegbenchError
from .fileio import atomic_write_texts

DEFAULT_CONFIG = Path("config/config.yaml")


def add_benchmark(p: argparse.ArgumentParser) -> None:
    p.add_argument("--benchmark", default="painting-vision", help="benchmark name (config/benchmarks/NAME.yaml)")


def add_frames(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--data", type=Path, required=True, help="dataset folder")
    p.add_argument("--split", required=True)
    p.add_argument("--shard", type=int, default=None, help="shard index (0-based); all frames when omitted")
    p.add_argument("--shard-size", type=int, default=8)


def add_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="model name in the config")
    p.add_argument("--config", type=Path, default=DEFAULT_CONFIG)


def cmd_manifest(args: argparse.Namespace) -> None:
    benchmark = load_benchmark(args.benchmark)
    manifest = steps.dataset_manifest(benchmark, args.data, args.verify)
    if args.out:
        provenance.write_manifest(args.out, manifest)
    if args.dataset_id_out:
        steps.write_json(args.dataset_id_out, {"dataset_id": manifest["dataset_id"], "frames": len(manifest["frames"])})
    print(manifest["dataset_id"])


def cmd_audit(args: argparse.Namespace) -> None:
    benchmark = load_benchmark(args.benchmark)
    report = steps.run_audit(benchmark, args.data, args.split, args.json, args.text)
    print(f"audit passed: {len(report.warnings)} warning(s); report: {args.text}")


def cmd_identify(args: argparse.Namespace) -> None:
    benchmark = load_benchmark(args.benchmark)
    spec = steps.ModelSpec.from_config(load_config(args.config), args.model)
    identity = steps.model_identity(spec, benchmark)
    steps.write_json(args.out, {"name": identity.name, "kind": identity.kind, "label_space": identity.label_space,
                                "checkpoint_sha256": identity.checkpoint_sha256, "path": str(spec.path)})
    print(identity.checkpoint_sha256)


def cmd_infer(args: argparse.Namespace) -> None:
    benchmark = load_benchmark(args.benchmark)
    config = load_config(args.config)
    spec = steps.ModelSpec.from_config(config, args.model)
    frames = steps.shard(steps.frames_of_split(benchmark, args.data, args.split), args.shard_size, args.shard)
    steps.infer(benchmark, frames, spec, args.out, args.batch_size or config["inference"]["batch_size"],
                args.device or config["inference"]["device"], progress=not args.quiet)


def cmd_score(args: argparse.Namespace) -> None:
    benchmark = load_benchmark(args.benchmark)
    all_frames = steps.frames_of_split(benchmark, args.data, args.split)
    frames = steps.shard(all_frames, args.shard_size, args.shard)
    spec = None
    if not args.floor:
        if args.model is None:
            raise SegbenchError("score needs --model NAME or --floor")
        spec = steps.ModelSpec.from_config(load_config(args.config), args.model)
        steps.check_predictions(spec, all_frames)
    steps.score(benchmark, frames, spec, args.predictions, args.out, args.split)


def cmd_metrics(args: argparse.Namespace) -> None:
    benchmark = load_benchmark(args.benchmark)
    steps.write_json(args.out, steps.metrics_document(benchmark, args.counts))


def cmd_submit(args: argparse.Namespace) -> None:
    benchmark = load_benchmark(args.benchmark)
    config = load_config(args.config)
    spec = steps.ModelSpec.from_config(config, args.model)
    identity_doc = steps.read_json_fields(args.identity, ("name", "kind", "label_space", "checkpoint_sha256"))
    identity = steps.ModelIdentity(identity_doc["name"], identity_doc["kind"], identity_doc["label_space"],
                                   identity_doc["checkpoint_sha256"])
    dataset_id = steps.read_json_fields(args.dataset_id, ("dataset_id",))["dataset_id"]
    steps.submission(benchmark, steps.read_json(args.metrics), steps.read_json(args.floor_metrics), dataset_id,
                     identity, steps.inference_record(spec, benchmark), args.out)


def cmd_export_onnx(args: argparse.Namespace) -> None:
    from .models.onnx import export_onnx

    export_onnx(args.checkpoint, load_benchmark(args.benchmark), args.out, args.opset)
    print(f"{args.out}: ONNX (opset {args.opset}) of {args.checkpoint}, label space, normalisation and stride in its metadata")


def cmd_import_checkpoint(args: argparse.Namespace) -> None:
    import json

    from .models.importing import import_checkpoint

    benchmark = load_benchmark(args.benchmark)
    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        raise SegbenchError(f"--arguments: not JSON ({exc})") from None
    if not isinstance(arguments, dict):
        raise SegbenchError(f"--arguments: must be a JSON object of keyword arguments, got {args.arguments}")
    import_checkpoint(args.weights, args.architecture, arguments, benchmark.space(args.label_space),
                      {"mean": args.mean, "std": args.std}, args.out, args.stride, args.prefix)
    print(f"{args.out}: segbench checkpoint of {args.weights} ({args.architecture}, {args.label_space})")


def cmd_idd_labels(args: argparse.Namespace) -> None:
    from .idd.masks import write_masks

    record = write_masks(args.data)
    print(f"{len(record['masks'])} level-3 masks drawn with Pillow {record['pillow']}; record: {args.data}/gtFine")


def cmd_pull(args: argparse.Namespace) -> None:
    pulled = pinning.restore(args.paths)
    steps.write_json(args.out, {"paths": [str(p) for p in args.paths]})
    for path in args.paths:
        print(f"{path}: {'restored with dvc pull' if path in pulled else 'present'}")


def read_records(paths: list[Path]) -> list[dict]:
    """Submission records, each validated against its benchmark's schemas before it is tabled."""
    from .submission import validate_record

    records = []
    for path in paths:
        record = steps.read_json(path)
        name = record.get("benchmark") if isinstance(record, dict) else None
        if not isinstance(name, str):
            raise SegbenchError(f"{path}: not a submission record (no 'benchmark' field naming its benchmark)")
        validate_record(record, load_benchmark(name), path)
        records.append(record)
    return records


def spec_fields(document: dict) -> dict:
    """A metrics document restricted, like a record, to the spec fields its benchmark selects."""
    from .evaluation import record_results

    return {**document, "results": record_results(load_benchmark(document["benchmark"]), document["results"])}


def cmd_leaderboard(args: argparse.Namespace) -> None:
    records = read_records(args.submissions)
    groups = leaderboard.build(records, [spec_fields(steps.read_json(p)) for p in args.floors])
    steps.write_text(args.out.with_suffix(".csv"), leaderboard.to_csv(groups))
    steps.write_text(args.out.with_suffix(".md"), leaderboard.to_markdown(groups))
    steps.write_json(args.out.with_suffix(".json"), {"groups": groups})
    if args.metrics_out:
        steps.write_json(args.metrics_out, leaderboard.headline_metrics(groups))
    print(leaderboard.to_markdown(groups))


def cmd_results(args: argparse.Namespace) -> None:
    """The records' table (metrics.json for `dvc metrics` from the spec fields only), then every
    metric of the models' and floors' metrics documents, the intervals, the per-report tables."""
    records = read_records(args.submissions)
    floors = [steps.read_json(p) for p in args.floors]
    groups = leaderboard.build(records, [spec_fields(f) for f in floors])
    if args.metrics_out:
        steps.write_json(args.metrics_out, leaderboard.headline_metrics(groups))
    groups = leaderboard.attach_results(groups, [steps.read_json(p) for p in args.metrics] + floors)
    groups = leaderboard.attach_intervals(groups, [steps.read_json(p) for p in args.uncertainty])
    steps.write_text(args.out.with_suffix(".csv"), leaderboard.to_csv(groups))
    tables = args.tables or args.out.parent / "tables"
    steps.write_text(args.out.with_suffix(".md"), leaderboard.to_markdown(groups, str(tables)))
    steps.write_json(args.out.with_suffix(".json"), {"groups": groups})
    steps.write_text(args.out.with_suffix(".html"), leaderboard.to_html(groups))
    texts = {tables / name: text for name, text in leaderboard.report_tables(groups).items()}
    atomic_write_texts({**texts, tables / "long.csv": leaderboard.to_long_csv(groups)})
    print(leaderboard.to_markdown(groups, str(tables)))


# --- uncertainty, plots, overlays (from stored counts; nothing is re-scored) -------------------


def read_subject(benchmark, paths, name=None):
    """Merged shard counts as a bootstrap/plot subject; None when no paths are given."""
    from .bootstrap import Subject

    if not paths:
        return None
    counts, meta, space = steps.merge_counts(benchmark, paths)
    return Subject(name or meta["model"]["name"], counts, space)


def read_groups(benchmark, manifest: Path) -> dict[str, str]:
    """frame_id -> group id (wall, drive, user) from the dataset manifest."""
    document = steps.read_json(manifest)
    return {f["frame_id"]: f[benchmark.group_key] for f in document["frames"]}


def read_counts_meta(path: Path) -> dict:
    from .countsio import read_counts

    return read_counts(path)[1]


def comparison_subjects(benchmark, args) -> dict:
    return {"model": read_subject(benchmark, args.counts), "baseline": read_subject(benchmark, args.baseline_counts),
            "floor": read_subject(benchmark, args.floor_counts)}


def write_rows(path: Path, rows: list[dict]) -> None:
    import csv
    import io

    out = io.StringIO()
    names = list(dict.fromkeys(k for row in rows for k in row))
    writer = csv.DictWriter(out, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if row.get(k) is None else row.get(k) for k in names} for row in rows)
    steps.write_text(path, out.getvalue())


def cmd_uncertainty(args: argparse.Namespace) -> None:
    from .bootstrap import bootstrap

    benchmark = load_benchmark(args.benchmark)
    subjects = comparison_subjects(benchmark, args)
    others = {"baseline": subjects["baseline"], "floor": subjects["floor"]}
    document = bootstrap(benchmark, subjects["model"], read_groups(benchmark, args.manifest), args.resamples,
                         args.seed, others)
    document = {"benchmark": benchmark.name, "split": read_counts_meta(args.counts[0])["split"], **document}
    steps.write_json(args.out, document)
    print(f"{len(document['intervals'])} intervals over {document['groups']} {benchmark.group_key} groups")


def cmd_plot_iou(args: argparse.Namespace) -> None:
    from . import plots

    benchmark = load_benchmark(args.benchmark)
    report = next((r for r in benchmark.reports if r.key == args.report), None)
    if report is None:
        raise SegbenchError(f"benchmark '{benchmark.name}' has no report '{args.report}'")
    subjects = comparison_subjects(benchmark, args)
    rows = plots.iou_rows(benchmark, report, subjects)
    title = f"{benchmark.title}: per-class IoU in {report.space.name} ({report.key})"
    if any(r["role"] == "model" for r in rows):
        plots.render_iou(report, rows, title, args.png)
    else:
        plots.render_not_applicable("iou", title, f"report '{report.key}' does not apply to model "
                                    f"'{subjects['model'].name}' ({subjects['model'].space.name})", args.png)
    split = read_counts_meta(args.counts[0])["split"]
    write_rows(args.csv, [{"series": f"{benchmark.name}/{split}/{r['model']}/{report.key}/{r['class']}",
                           "benchmark": benchmark.name, "split": split, "report": report.key, **r} for r in rows])


def cmd_plot_confusion(args: argparse.Namespace) -> None:
    from . import plots

    benchmark = load_benchmark(args.benchmark)
    subject = read_subject(benchmark, args.counts)
    if args.space == "ground-truth":
        space = benchmark.ground_truth
    else:
        report = next((r for r in benchmark.reports if r.key == args.space), None)
        if report is None:
            raise SegbenchError(f"benchmark '{benchmark.name}' has no report '{args.space}' (nor is it 'ground-truth')")
        space = report.space
    confusion = plots.confusion_in(benchmark, space, subject)
    title = f"{subject.name}: confusion in {space.name} (rows normalised)"
    plots.render_confusion(confusion, title, args.png)
    split = read_counts_meta(args.counts[0])["split"]
    matrix = f"{benchmark.name}/{split}/{subject.name}/{args.space}"
    rows = [{"matrix": matrix, **r} for r in plots.confusion_rows(confusion)]
    write_rows(args.csv, rows)


def cmd_plot_fraction(args: argparse.Namespace) -> None:
    from . import plots

    benchmark = load_benchmark(args.benchmark)
    found = [(r, m) for r, m in plots.fraction_specs(benchmark) if f"{r.key}.{m.key}" == args.metric]
    if not found:
        raise SegbenchError(f"benchmark '{benchmark.name}' has no fraction_mae metric '{args.metric}'")
    report, spec = found[0]
    subjects = comparison_subjects(benchmark, args)
    series = {}
    for role in ("model", "baseline"):
        subject = subjects[role]
        points = None if subject is None else plots.fraction_points(benchmark, report, spec, subject)
        if points is not None:
            series[role] = (subject.name, points[1], points[2])
    title = f"{benchmark.title}: {spec.key} per frame"
    if "model" in series:
        plots.render_fraction(series, spec, title, args.png)
    else:
        plots.render_not_applicable("fraction", title, f"'{args.metric}' does not apply to model "
                                    f"'{subjects['model'].name}' ({subjects['model'].space.name})", args.png)


def cmd_overlays(args: argparse.Namespace) -> None:
    import numpy as np

    from . import overlays
    from .maskio import read_mask, read_rgb
    from .intake import is_archive, open_predictions, read_prediction
    from .scoring import evaluated_masks

    benchmark = load_benchmark(args.benchmark)
    subject = read_subject(benchmark, args.counts)
    frames = {f.frame_id: f for f in steps.frames_of_split(benchmark, args.data, args.split)}
    report = overlays.ranking_report(benchmark, subject)
    worst, best = overlays.pick(overlays.frame_scores(benchmark, report, subject), args.frames)
    chosen = []
    for kind, picked in (("worst", worst), ("best", best)):
        for rank in range(1, args.frames + 1):
            path = args.out_dir / f"{kind}-{rank}.png"
            if rank > len(picked):
                from .plots import render_not_applicable

                render_not_applicable("iou", f"{subject.name}: {kind} #{rank}", "not enough frames", path)
                continue
            score = picked[rank - 1]
            frame = frames[score.frame_id]
            found = [d for d in args.predictions if is_archive(d) or (d / frame.prediction).is_file()]
            if not found:
                raise SegbenchError(f"no prediction for frame {frame.frame_id} in {[str(d) for d in args.predictions]}")
            gt = read_mask(frame.label)
            with open_predictions(found[0], [frame], exact=False) as masks:
                pred = read_prediction(masks, frame, gt.shape, benchmark.evaluation_size)
            gt, pred = evaluated_masks(gt, pred, benchmark.evaluation_size)
            image = read_rgb(frame.image)
            caption = overlays.caption(kind, rank, subject, score, report, frame.group_id)
            overlays.render(overlays.panels(benchmark, report, subject, np.asarray(image), gt, pred), caption,
                            overlays.legend_of(benchmark, gt), path)
            chosen.append({"kind": kind, "rank": rank, "file": path.name, "frame_id": score.frame_id,
                           benchmark.group_key: frame.group_id, "miou": score.miou,
                           "pixel_accuracy": score.pixel_accuracy, "pixels": score.pixels, "space": report.space.name})
    steps.write_json(args.out_dir / "frames.json", {"model": subject.name, "frames": chosen})


def cmd_export(args: argparse.Namespace) -> None:
    from .uploads import export_upload, manifest_frames

    benchmark = load_benchmark(args.benchmark)
    frames, dataset_id = manifest_frames(benchmark, args.dataset_manifest, args.split or benchmark.default_split)
    count = export_upload(benchmark, frames, dataset_id, args.predictions, args.out)
    print(f"{args.out}: {count} masks in the {benchmark.title} upload format, for dataset {dataset_id}")


def cmd_check_submission(args: argparse.Namespace) -> None:
    from .uploads import check_upload, manifest_frames

    benchmark = load_benchmark(args.benchmark)
    frames, dataset_id = manifest_frames(benchmark, args.dataset_manifest, args.split or benchmark.default_split)
    space = benchmark.space(args.label_space) if args.label_space else benchmark.ground_truth
    summary = check_upload(benchmark, frames, dataset_id, args.archive, space, args.data)
    print(f"{args.archive}: accepted: {summary['frames']} frames of {dataset_id}, values {summary['values']} in "
          f"'{space.name}'")


def cmd_check_results(args: argparse.Namespace) -> None:
    from .results_check import damaged_files, recorded_listing, repair

    import os

    listing = recorded_listing(args.lock, Path(os.path.relpath(args.out, args.lock.parent)).as_posix(), args.cache)
    if listing is None:
        print(f"{args.out}: no tree recorded in {args.lock} and {args.cache}: nothing to compare")
        return
    damaged = damaged_files(args.out, listing)
    lines = [f"{path}: {how} since {args.lock} recorded it" for path, how in damaged]
    if damaged and not args.repair:
        raise SegbenchError(f"{args.out}: {len(damaged)} file(s) differ from the recorded tree:\n  " + "\n  ".join(lines))
    for output in repair(args.out, damaged) if damaged else []:
        print(f"removed {output} (to be re-made by the workflow)")
    print(f"{args.out}: {len(listing) - len(damaged)} of {len(listing)} recorded files as recorded")


def cmd_plot_data(args: argparse.Namespace) -> None:
    import csv

    for sources, out, keep in ((args.iou, args.iou_out, lambda row: row["role"] == "model"),
                               (args.confusion, args.confusion_out, lambda row: True)):
        rows: list[dict] = []
        for path in sources:
            with open(path, newline="") as handle:
                rows.extend(row for row in csv.DictReader(handle) if keep(row))
        write_rows(out, rows)


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="segbench", description=__doc__)
    root.add_argument("--version", action="version", version=f"segbench {__version__}")
    sub = root.add_subparsers(dest="command", required=True)

    p = sub.add_parser("manifest", help="build data_manifest.json and the dataset_id, or verify against one")
    add_benchmark(p)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--verify", type=Path, help="refuse unless the bytes on disk match this manifest")
    p.add_argument("--out", type=Path, help="write the manifest here")
    p.add_argument("--dataset-id-out", type=Path, help="write {dataset_id, frames} JSON here")
    p.set_defaults(run=cmd_manifest)

    p = sub.add_parser("audit", help="audit the dataset; exit 1 on any error")
    add_benchmark(p)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--split", action="append", default=[], help="a split to be evaluated (must not be empty); repeatable")
    p.add_argument("--json", type=Path, required=True)
    p.add_argument("--text", type=Path, required=True)
    p.set_defaults(run=cmd_audit)

    p = sub.add_parser("identify", help="checkpoint_sha256 and label space of a configured model")
    add_benchmark(p)
    add_model(p)
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(run=cmd_identify)

    p = sub.add_parser("infer", help="predicted masks for the frames of a split (or one shard of it)")
    add_frames(p)
    add_model(p)
    p.add_argument("--out", type=Path, required=True, help="folder for <frame_id>.png masks")
    p.add_argument("--batch-size", type=int)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"])
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=cmd_infer)

    p = sub.add_parser("score", help="per-frame confusion counts of predicted masks (or of the floor)")
    add_frames(p)
    p.add_argument("--model", help="model name in the config")
    p.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    p.add_argument("--predictions", type=Path, help="folder of masks (default: the model's path, for kind predictions)")
    p.add_argument("--floor", action="store_true", help="score the floor predictor from the ground truth alone")
    p.add_argument("--out", type=Path, required=True, help="counts file (.parquet)")
    p.set_defaults(run=cmd_score)

    p = sub.add_parser("metrics", help="merge counts and compute every metric of the benchmark")
    add_benchmark(p)
    p.add_argument("--counts", type=Path, nargs="+", required=True)
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(run=cmd_metrics)

    p = sub.add_parser("submit", help="write the schema-checked submission record")
    add_benchmark(p)
    add_model(p)
    p.add_argument("--metrics", type=Path, required=True)
    p.add_argument("--floor-metrics", type=Path, required=True)
    p.add_argument("--identity", type=Path, required=True, help="output of `segbench identify`")
    p.add_argument("--dataset-id", type=Path, required=True, help="output of `segbench manifest --dataset-id-out`")
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(run=cmd_submit)

    p = sub.add_parser("export-onnx", help="write a segbench checkpoint as an ONNX file (kind onnx) with its metadata")
    add_benchmark(p)
    p.add_argument("--checkpoint", type=Path, required=True, help="a segbench .pt checkpoint")
    p.add_argument("--out", type=Path, required=True, help="the .onnx file to write")
    p.add_argument("--opset", type=int, default=17)
    p.set_defaults(run=cmd_export_onnx)

    p = sub.add_parser("import-checkpoint", help="a plain state dict (.pt/.pth/.ckpt/.safetensors) -> a segbench checkpoint")
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
    p.set_defaults(run=cmd_import_checkpoint)

    p = sub.add_parser("idd-labels", help="draw IDD level-3 masks from the polygon JSONs, as the reference does")
    p.add_argument("--data", type=Path, required=True, help="IDD root holding gtFine/<split>/<drive>/*_polygons.json")
    p.set_defaults(run=cmd_idd_labels)

    p = sub.add_parser("pull", help="restore DVC-pinned inputs (datasets, checkpoints) that are missing")
    p.add_argument("paths", type=Path, nargs="+")
    p.add_argument("--out", type=Path, required=True, help="marker JSON written when the path is present")
    p.set_defaults(run=cmd_pull)

    p = sub.add_parser("leaderboard", help="the results table over submission records, by comparability triple")
    p.add_argument("--submissions", type=Path, nargs="+", required=True)
    p.add_argument("--floors", type=Path, nargs="+", required=True, help="the floor's metrics.json per split")
    p.add_argument("--out", type=Path, required=True, help="stem: writes STEM.csv, STEM.md and STEM.json")
    p.add_argument("--metrics-out", type=Path, help="small headline-metrics JSON for `dvc metrics`")
    p.set_defaults(run=cmd_leaderboard)

    p = sub.add_parser("results", help="the leaderboard with bootstrap intervals: STEM.{csv,md,json,html}, tables/")
    p.add_argument("--submissions", type=Path, nargs="+", required=True)
    p.add_argument("--floors", type=Path, nargs="+", required=True, help="the floor's metrics.json per split")
    p.add_argument("--metrics", type=Path, nargs="*", default=[],
                   help="the models' metrics.json: every metric of every report, beside the records' spec fields")
    p.add_argument("--uncertainty", type=Path, nargs="*", default=[], help="uncertainty.json of models and floors")
    p.add_argument("--out", type=Path, required=True, help="stem: writes STEM.csv, .md, .json and .html")
    p.add_argument("--tables", type=Path, help="folder of the per-report tables and long.csv (default: beside STEM)")
    p.add_argument("--metrics-out", type=Path, help="small headline-metrics JSON for `dvc metrics`")
    p.set_defaults(run=cmd_results)

    def add_comparison(p: argparse.ArgumentParser) -> None:
        add_benchmark(p)
        p.add_argument("--counts", type=Path, nargs="+", required=True, help="the model's shard counts")
        p.add_argument("--baseline-counts", type=Path, nargs="*", default=[], help="the baseline's shard counts")
        p.add_argument("--floor-counts", type=Path, nargs="*", default=[], help="the floor's shard counts")

    p = sub.add_parser("uncertainty", help="bootstrap intervals over groups, paired comparisons with baseline and floor")
    add_comparison(p)
    p.add_argument("--manifest", type=Path, required=True, help="the dataset manifest (frame -> group)")
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(run=cmd_uncertainty)

    p = sub.add_parser("plot-iou", help="per-class IoU bars of a report: model, baseline, floor")
    add_comparison(p)
    p.add_argument("--report", required=True, help="report key")
    p.add_argument("--png", type=Path, required=True)
    p.add_argument("--csv", type=Path, required=True)
    p.set_defaults(run=cmd_plot_iou)

    p = sub.add_parser("plot-confusion", help="row-normalised confusion heatmap in a label space")
    add_benchmark(p)
    p.add_argument("--counts", type=Path, nargs="+", required=True)
    p.add_argument("--space", required=True, help="'ground-truth' or a report key")
    p.add_argument("--png", type=Path, required=True)
    p.add_argument("--csv", type=Path, required=True)
    p.set_defaults(run=cmd_plot_confusion)

    p = sub.add_parser("plot-fraction", help="per-frame predicted vs ground-truth fraction of a fraction_mae metric")
    add_comparison(p)
    p.add_argument("--metric", required=True, help="REPORT.METRIC of a fraction_mae metric")
    p.add_argument("--png", type=Path, required=True)
    p.set_defaults(run=cmd_plot_fraction)

    p = sub.add_parser("overlays", help="worst and best frames: image | ground truth | prediction | error")
    add_benchmark(p)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--split", required=True)
    p.add_argument("--counts", type=Path, nargs="+", required=True)
    p.add_argument("--predictions", type=Path, nargs="+", required=True, help="folders holding the predicted masks")
    p.add_argument("--frames", type=int, default=2, help="how many worst and best frames")
    p.add_argument("--out-dir", type=Path, required=True)
    p.set_defaults(run=cmd_overlays)

    p = sub.add_parser("export", help="the upload of a predictions folder in the benchmark's official format (zip)")
    add_benchmark(p)
    p.add_argument("--dataset-manifest", type=Path, required=True, help="the manifest of the data the masks are for")
    p.add_argument("--split", help="the split (default: the benchmark's)")
    p.add_argument("--predictions", type=Path, required=True, help="folder or archive of masks named by frame")
    p.add_argument("--out", type=Path, required=True, help="the upload (.zip)")
    p.set_defaults(run=cmd_export)

    p = sub.add_parser("check-submission", help="check an upload against the dataset manifest, without labels")
    p.add_argument("archive", type=Path)
    add_benchmark(p)
    p.add_argument("--dataset-manifest", type=Path, required=True)
    p.add_argument("--split", help="the split (default: the benchmark's)")
    p.add_argument("--label-space", help="the masks' label space (default: the benchmark's ground truth)")
    p.add_argument("--data", type=Path, help="the images, to check each mask's size against its image's")
    p.set_defaults(run=cmd_check_submission)

    p = sub.add_parser("check-results", help="the results tree against dvc.lock: find (and remove) damaged outputs")
    p.add_argument("--out", type=Path, default=Path("results"), help="the DVC-tracked output folder")
    p.add_argument("--lock", type=Path, default=Path("dvc.lock"))
    p.add_argument("--cache", type=Path, default=Path(".dvc/cache"))
    p.add_argument("--repair", action="store_true", help="remove the job outputs holding damaged files")
    p.set_defaults(run=cmd_check_results)

    p = sub.add_parser("plot-data", help="gather per-model plot data into the files dvc plots reads")
    p.add_argument("--iou", type=Path, nargs="+", required=True)
    p.add_argument("--confusion", type=Path, nargs="+", required=True)
    p.add_argument("--iou-out", type=Path, required=True)
    p.add_argument("--confusion-out", type=Path, required=True)
    p.set_defaults(run=cmd_plot_data)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        args.run(args)
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
