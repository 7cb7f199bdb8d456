"""What each `segbench` subcommand does with its arguments: it calls its step module (given as
`step`, imported by segbench.commands.cli only when that subcommand runs), and prints a line.

A model is named either as the workflow passes it, `--model-spec JSON` (its config entry as
Snakemake resolved it, with its name), or as a person does, `--model NAME --config FILE`.
Everything else of the package is imported inside the function that needs it, so a subcommand
loads only what it runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from urllib.parse import urlsplit

from ..errors import SegbenchError


def warn(lines: Sequence[str]) -> None:
    """Warnings (accepted, but worth knowing) on stderr, one a line."""
    for line in lines:
        print(f"warning: {line}", file=sys.stderr)


def benchmark_of(args: argparse.Namespace):
    from ..protocols.definitions import load_benchmark

    return load_benchmark(args.benchmark)


def model_spec(args: argparse.Namespace, benchmark=None):
    """The model the arguments name: its identity record (--identity, with --model-path where its
    bytes are for this job), --model-spec JSON, or --model NAME from --config; its path checked
    against the command's outputs like a path argument (model_input)."""
    spec = named_model(args, benchmark)
    model_input(args, spec.name, spec.path)
    return spec


def named_model(args: argparse.Namespace, benchmark=None):
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


def model_input(args: argparse.Namespace, name: str, path: Path | None) -> None:
    """A model's path named by the config or a record rather than an argument: refused when an
    output is it or inside it (segbench.commands.cli checked the path arguments before the run)."""
    if path is not None:
        from ..io.overlap import refuse_overlaps

        refuse_overlaps([(f"model '{name}'", path)], getattr(args, "written_paths", []))


def frames_of(args: argparse.Namespace, benchmark) -> list:
    """The frames of --split (from --frames INDEX when given), or of one --shard of --shards."""
    return frames_and_dataset(args, benchmark)[0]


def frames_and_dataset(args: argparse.Namespace, benchmark) -> tuple[list, str | None]:
    """frames_of's frames, with the dataset_id of --frames INDEX (None without one)."""
    from ..steps.frames import shard, split_and_dataset

    frames, dataset_id = split_and_dataset(benchmark, args.data, args.split, args.frames)
    return shard(frames, args.shards, args.shard), dataset_id


def frames_of_whole_split(args: argparse.Namespace, benchmark) -> list:
    from ..steps.frames import frames_of_split

    return frames_of_split(benchmark, args.data, args.split, args.frames)


def run_manifest(step: ModuleType, args: argparse.Namespace) -> None:
    manifest = step.write_identity(benchmark_of(args), args.data, args.dataset_manifest, args.out, args.dataset_id_out,
                                   args.index_out)
    print(manifest["dataset_id"])


def run_audit(step: ModuleType, args: argparse.Namespace) -> None:
    if args.json_out is None and args.text_out is None:  # no report file asked for: the report, printed
        report = step.audit_dataset(args.data, benchmark_of(args), args.split)
        print(report.to_text(), end="")
        report.raise_if_failed()
        return
    report = step.run_audit(benchmark_of(args), args.data, args.split, args.json_out, args.text_out)
    print(f"audit passed: {len(report.warnings)} warning(s); report: {args.text_out or args.json_out}")


def run_identify(step: ModuleType, args: argparse.Namespace) -> None:
    print(step.identify(model_spec(args), benchmark_of(args), args.out).checkpoint_sha256)


def run_infer(step: ModuleType, args: argparse.Namespace) -> None:
    benchmark = benchmark_of(args)
    step.infer(benchmark, frames_of(args, benchmark), model_spec(args, benchmark), args.out, args.batch_size,
               args.device, progress=not args.quiet)


def run_score(step: ModuleType, args: argparse.Namespace) -> None:
    benchmark = benchmark_of(args)
    frames, dataset_id = frames_and_dataset(args, benchmark)
    if args.floor:
        step.score_floor(benchmark, frames, args.out, args.split, dataset_id)
        return
    checkpoint_sha256 = None
    if args.identity is not None:  # the workflow: the label space its identity step recorded
        from ..records.identity import read_identity

        identity, space, spec = read_identity(args.identity, benchmark)
        name, kind, checkpoint_sha256 = identity.name, identity.kind, identity.checkpoint_sha256
        folder = args.predictions if args.predictions is not None else spec.path
        model_input(args, name, folder)
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
        step.check_predictions(benchmark, folder, frames_of_whole_split(args, benchmark), space, dataset_id)
    step.score_model(benchmark, frames, name or folder.name, kind, space, folder, args.out, args.split, dataset_id,
                     checkpoint_sha256)


def run_metrics(step: ModuleType, args: argparse.Namespace) -> None:
    from ..io.fileio import write_json

    benchmark = benchmark_of(args)
    if (args.counts is None) == (args.predictions is None):
        raise SegbenchError("metrics of --counts FILE... or of --predictions DIR (with --label-space and --data)")
    if args.counts is not None:
        write_json(args.out, step.metrics_document(benchmark, args.counts, args.frames))
        return
    if args.label_space is None or args.data is None:
        raise SegbenchError("--predictions needs --label-space (the masks' label space) and --data (the dataset)")
    from ..steps.dataset_identity import dataset_manifest
    from ..steps.frames import frames_of_split

    split = args.split or benchmark.default_split
    frames = frames_of_split(benchmark, args.data, split)
    dataset_id = dataset_manifest(benchmark, args.data, None)["dataset_id"]  # what an upload must have been made for
    write_json(args.out, step.predictions_metrics(benchmark, frames, args.predictions,
                                                  benchmark.space(args.label_space), split, dataset_id))


def run_record(step: ModuleType, args: argparse.Namespace) -> None:
    benchmark = benchmark_of(args)
    metrics, floor, dataset_id, identity, spec, uncertainty = step.record_inputs(
        benchmark, args.metrics, args.floor_metrics, args.identity, args.dataset_id, args.uncertainty)
    step.submission(benchmark, metrics, floor, dataset_id, identity, step.inference_record(spec, benchmark),
                    uncertainty, args.out, args.team)


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
                       args.tables or args.out.parent / "tables", args.metrics_out, args.tables_label, args.slices))


def run_uncertainty(step: ModuleType, args: argparse.Namespace) -> None:
    benchmark = benchmark_of(args)
    document = step.uncertainty(benchmark, args.counts, args.baseline_counts, args.floor_counts, args.frames,
                                args.resamples, args.seed, args.out)
    print(f"{len(document['intervals'])} intervals over {document['groups']} {benchmark.group_key} groups")


def run_slices(step: ModuleType, args: argparse.Namespace) -> None:
    from ..protocols.definitions import slices_from_json

    slicings = None if args.slicings is None else slices_from_json(args.slicings, "--slicings")
    document = step.slices(benchmark_of(args), args.counts, args.baseline_counts, args.floor_counts, args.frames,
                           args.resamples, args.seed, args.out, slicings)
    slicings = document["slicings"]
    print(f"{sum(len(s['slices']) for s in slicings.values())} slices of {len(slicings)} metadata column(s)")


def run_figures(step: ModuleType, args: argparse.Namespace) -> None:
    written = step.figures(benchmark_of(args), args.counts, args.baseline_counts, args.floor_counts, args.out)
    print(f"{args.out}: {sum(p.suffix == '.png' for p in written)} figures")


def run_overlays(step: ModuleType, args: argparse.Namespace) -> None:
    from ..steps.frames import frames_of_split

    benchmark = benchmark_of(args)
    frames = frames_of_split(benchmark, args.data, args.split, args.frames_index)
    step.draw_overlays(benchmark, frames, args.counts, args.predictions, args.examples, args.out)


def run_plot_data(step: ModuleType, args: argparse.Namespace) -> None:
    step.plot_data(args.iou, args.confusion, args.iou_out, args.confusion_out)


def run_export_onnx(step: ModuleType, args: argparse.Namespace) -> None:
    step.export_onnx(args.checkpoint, benchmark_of(args), args.out, args.opset)
    print(f"{args.out}: ONNX (opset {args.opset}) of {args.checkpoint}, label space, normalisation and stride in its metadata")


def run_export_torchscript(step: ModuleType, args: argparse.Namespace) -> None:
    step.export_torchscript(args.checkpoint, benchmark_of(args), args.out)
    print(f"{args.out}: TorchScript of {args.checkpoint}, label space, normalisation and stride in its segbench.json")


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
    split = args.split or benchmark.default_split
    named = args.checkpoint is not None or args.model is not None or args.model_spec is not None
    if args.predictions is not None and not named and args.data is None:
        space = benchmark.space(args.label_space) if args.label_space else benchmark.ground_truth
        count, dataset_id, warnings = step.export_predictions(benchmark, args.dataset_manifest, split, args.predictions,
                                                              space, args.out)
    elif args.predictions is None and named and args.data is not None:
        count, dataset_id, warnings = step.export_model(benchmark, args.dataset_manifest, split, args.data,
                                                        export_model_spec(args), args.out, args.batch_size, args.device)
    else:
        raise SegbenchError("export needs --predictions PATH (masks made elsewhere), or --data DIR and a model to run "
                            "on the split (--checkpoint PATH, --model NAME or --model-spec JSON), not both")
    print(f"{args.out}: {count} masks in the {benchmark.title} upload format, for dataset {dataset_id}")
    warn(warnings)


def export_model_spec(args: argparse.Namespace):
    """The model `export` runs: --checkpoint as benchmark.py takes it, or a config entry."""
    if args.checkpoint is None:
        return model_spec(args)
    from ..core.model_spec import ModelSpec
    from .modelpath import checkpoint_kind, model_name

    kind = args.checkpoint_kind or checkpoint_kind(args.checkpoint)
    return ModelSpec.from_entry(model_name(args.checkpoint),
                                {"kind": kind, "path": str(args.checkpoint), "label_space": args.label_space})


def run_check_submission(step: ModuleType, args: argparse.Namespace) -> None:
    benchmark = benchmark_of(args)
    frames, dataset_id = step.manifest_frames(benchmark, args.dataset_manifest, args.split or benchmark.default_split)
    space = benchmark.space(args.label_space) if args.label_space else benchmark.ground_truth
    summary = step.check_upload(benchmark, frames, dataset_id, args.archive, space, args.data)
    print(f"{args.archive}: accepted: {summary['frames']} frames of {dataset_id}, values {summary['values']} in "
          f"'{space.name}'")
    warn(step.void_warnings(space, summary["void_pixels"]))


def run_check_results(step: ModuleType, args: argparse.Namespace) -> None:
    import os
    import subprocess

    workflow = args.workflow[1:] if args.workflow[:1] == ["--"] else args.workflow
    if args.repair and not workflow:
        raise SegbenchError("--repair re-runs jobs through the workflow: name its command after `--` "
                            "(segbench check-results --repair -- snakemake --cores 8)")
    out = Path(os.path.relpath(args.results, args.lock.parent)).as_posix()
    listing = step.recorded_listing(args.lock, out, args.listings)
    if listing is None:
        print(f"{args.results}: no listing of the tree {args.lock} recorded under {args.listings}: nothing to compare")
    damaged = step.damaged_files(args.results, listing) if listing else []
    lines = [f"{path}: {how} since {args.lock} recorded it" for path, how in damaged]
    if damaged and not args.repair:
        raise SegbenchError(f"{args.results}: {len(damaged)} file(s) differ from the recorded tree:\n  " + "\n  ".join(lines))
    targets = step.rerun_targets(args.results, damaged, args.metadata)
    for line in lines:
        print(line)
    for target in targets:
        print(f"{target}: its job is re-run, with the jobs that read its outputs (--forcerun)")
    if listing is not None:
        print(f"{args.results}: {len(listing) - len(damaged)} of {len(listing)} recorded files as recorded")
    if not workflow:
        return
    forced = ["--forcerun", *map(str, targets)] if targets else []
    done = subprocess.run([*workflow, *forced])
    if done.returncode != 0:
        raise SegbenchError(f"the workflow run `{' '.join(workflow + forced)}` failed (exit {done.returncode})")
    print(f"{args.results}: the listing of the tree made is kept as {step.keep_listing(args.results, args.listings)}")


def require_database(args: argparse.Namespace) -> str:
    if not args.db:
        raise SegbenchError("name the server's database: --db URL or $SEGBENCH_DB")
    return args.db


def run_server(step: ModuleType, args: argparse.Namespace) -> None:
    db = require_database(args)
    if args.server_command == "init":
        revision, host_token = step.init(db, args.store)
        print(f"database at schema {revision}; store {args.store}")
        if host_token is not None:
            print(f"host token: {host_token}")
    elif args.server_command == "add-team":
        print(f"token for {args.name}: {step.add_team(db, args.name)}")
    elif args.server_command == "new-token":
        print(f"token for {args.name}: {step.new_team_token(db, args.name)}")
    elif args.server_command == "revoke-team":
        step.revoke_team(db, args.name)
        print(f"team {args.name}: token revoked")
    elif args.server_command == "add-phase":
        phase = step.add_phase(db, args.benchmark, args.phase, args.data, args.dataset_manifest, args.baseline, args.phases)
        print(f"phase {phase.name} of {phase.benchmark}: split {phase.split}, dataset {phase.dataset_id}")
    elif args.server_command == "reveal":
        phase = step.reveal(db, args.benchmark, args.phase)
        print(f"phase {phase.name} of {phase.benchmark}: private board revealed at {phase.revealed_at.isoformat()}Z")
    elif args.server_command == "rescore":
        print(step.rescore(db, args.benchmark, args.phase, args.dataset_manifest, args.baseline).describe())
    elif args.server_command == "run":
        step.serve(db, args.host, args.port, step.settings_of(vars(args)), args.processes)
    else:
        done = step.work(db, step.settings_of(vars(args)), args.once)
        print(f"{done} submission(s) scored")


def check_server_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # a port out of range
        usable = False
    if not usable:
        raise SegbenchError(f"the server's URL (--server or $SEGBENCH_SERVER) {url!r} is not http(s)://HOST[:PORT], "
                            "e.g. http://127.0.0.1:8000")


def client_args(args: argparse.Namespace) -> tuple[str, str]:
    if not args.server:
        raise SegbenchError("name the server: --server URL or $SEGBENCH_SERVER")
    check_server_url(args.server)
    if not args.token:
        raise SegbenchError("give the team's token: --token TOKEN or $SEGBENCH_TOKEN")
    return args.server, args.token


def run_submit(step: ModuleType, args: argparse.Namespace) -> None:
    import json

    server, token = client_args(args)
    accepted = step.submit(server, token, args.benchmark, args.phase, args.upload, args.method, args.description)
    warn(accepted.get("warnings", []))  # as check-submission warns of the same upload
    print(accepted["id"], flush=True)
    if args.wait:
        result = step.wait(server, token, accepted["id"], args.timeout)
        print(json.dumps(result, indent=2, sort_keys=True))
        if result["status"] != "scored":
            raise SegbenchError(f"submission {accepted['id']}: {result['status']}: {result['error']}")


def run_submissions(step: ModuleType, args: argparse.Namespace) -> None:
    for view in step.submissions(*client_args(args)):
        print(step.listing_line(view))
