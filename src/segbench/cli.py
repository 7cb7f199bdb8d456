"""`segbench`: one subcommand per step, for people and for the workflow's rules."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__, leaderboard, pinning, provenance, steps
from .config import load_config
from .definitions import load_benchmark
from .errors import AuditFailed, SegbenchError

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
    identity_doc = steps.read_json(args.identity)
    identity = steps.ModelIdentity(identity_doc["name"], identity_doc["kind"], identity_doc["label_space"],
                                   identity_doc["checkpoint_sha256"])
    size = None if spec.kind == "predictions" else spec.inference_size or benchmark.inference_size
    dataset_id = steps.read_json(args.dataset_id)["dataset_id"]
    steps.submission(benchmark, steps.read_json(args.metrics), steps.read_json(args.floor_metrics), dataset_id,
                     identity, size, args.out)


def cmd_pull(args: argparse.Namespace) -> None:
    pulled = pinning.restore(args.paths)
    steps.write_json(args.out, {"paths": [str(p) for p in args.paths]})
    for path in args.paths:
        print(f"{path}: {'restored with dvc pull' if path in pulled else 'present'}")


def cmd_leaderboard(args: argparse.Namespace) -> None:
    records = [steps.read_json(p) for p in args.submissions]
    floors = [steps.read_json(p) for p in args.floors]
    groups = leaderboard.build(records, floors)
    steps.write_text(args.out.with_suffix(".csv"), leaderboard.to_csv(groups))
    steps.write_text(args.out.with_suffix(".md"), leaderboard.to_markdown(groups))
    steps.write_json(args.out.with_suffix(".json"), {"groups": groups})
    if args.metrics_out:
        steps.write_json(args.metrics_out, leaderboard.headline_metrics(groups))
    print(leaderboard.to_markdown(groups))


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
