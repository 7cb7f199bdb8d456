"""What each `segbench` subcommand takes: its argparse arguments (segbench.commands.cli.COMMANDS
pairs each with its run). Every path argument says whether the command reads it (`input_path`) or
writes it (`output_path`: a file, a folder it writes into, a stem): `named_paths` gives both
lists, which the commands check against each other before they start (segbench.io.overlap)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from typing import Any
from pathlib import Path

from ..io.overlap import Named

DEFAULT_CONFIG = Path("config/config.yaml")


def input_path(text: str) -> Path:
    """A path argument the command reads (data, model, predictions, records)."""
    return Path(text)


def output_path(text: str) -> Path:
    """A path argument the command writes: never an input nor inside one (segbench.io.overlap)."""
    return Path(text)


def named_paths(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[list[Named], list[Named]]:
    """(inputs, outputs): the path arguments given, each with its option's name, by the role its
    type declares; a subcommand's own arguments included."""
    inputs: list[Named] = []
    outputs: list[Named] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            more_inputs, more_outputs = named_paths(action.choices[getattr(args, action.dest)], args)
            inputs += more_inputs
            outputs += more_outputs
        role = {input_path: inputs, output_path: outputs}.get(action.type)
        value = getattr(args, action.dest, None)
        if role is not None and value is not None:
            # A renamed flag by its new name; another by its long name.
            name = action.option_strings[0] if isinstance(action, Renamed) else max(action.option_strings, key=len,
                                                                                      default=action.dest)
            role += [(name, path) for path in (value if isinstance(value, list) else [value])]
    return inputs, outputs


def whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def whole_number_within(least: int, most: float, problem: str) -> Callable[[str], int]:
    """An argument type: a whole number from `least` to `most`, else `problem` with the value."""
    def parse(text: str) -> int:
        value = whole_number(text)
        if not least <= value <= most:
            raise argparse.ArgumentTypeError(f"{problem}, got {value}")
        return value

    return parse


positive_int = whole_number_within(1, math.inf, "must be a positive integer")  # a size, a batch
seed_number = whole_number_within(0, math.inf, "a seed is 0 or more")  # numpy's generators take no negative seed
port_number = whole_number_within(0, 65535, "a port is 0 to 65535")  # 0: one the system chooses (printed when serving)


def seconds(text: str) -> float:
    """A duration: a finite number of seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text}")
    return value


class Parser(argparse.ArgumentParser):
    """segbench's parsers, and their subcommands' (argparse makes those of the parent's class): an
    option is taken only as spelt in full. argparse's default takes a prefix of a longer option
    for it without a word: `server add-phase --phase test` set the phases file to `test`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, allow_abbrev=False, **kwargs)


class Renamed(argparse._StoreAction):
    """A flag renamed to the convention of docs/cli.md: its new name first, its old spelling after
    it, accepted until the next release with a warning on stderr (`add_renamed`)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        name = self.option_strings[0]
        if option_string is not None and option_string != name:
            print(f"{parser.prog}: warning: {option_string} is deprecated, use {name} (the old name goes in the "
                  "next release)", file=sys.stderr)
        super().__call__(parser, namespace, values, option_string)


def add_renamed(p: argparse.ArgumentParser, name: str, old: str, **kwargs: object) -> None:
    """The flag `name`, also taken under its deprecated spelling `old` (Renamed)."""
    kwargs["help"] = f"{kwargs['help']} ({old}: its old name, deprecated)"
    p.add_argument(name, old, action=Renamed, **kwargs)


class Help(argparse.RawDescriptionHelpFormatter):
    """Every flag's help ends with its default, where it has one worth saying (not None, False or
    an empty list) and the help does not already say it; choices show in the flag's metavar."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if default in (None, False, [], argparse.SUPPRESS) or "default" in text or not action.option_strings:
            return text
        return f"{text} (default: {default})".lstrip()


def benchmark_names() -> list[str]:
    from ..protocols.definitions import known_benchmarks  # the definitions' folder, read when a parser is built

    return known_benchmarks()


def add_benchmark(p: argparse.ArgumentParser) -> None:
    p.add_argument("--benchmark", default="painting-vision", choices=benchmark_names(),
                   help="benchmark name (config/benchmarks/NAME.yaml)")


def add_team(p: argparse.ArgumentParser) -> None:
    p.add_argument("--team", help="who submits it, written in the record: a results table names its row TEAM/MODEL")


def add_data(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=input_path, required=True, help="dataset folder, as the benchmark's format ships it")


def add_frames(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    add_data(p)
    p.add_argument("--split", required=True, help="the split evaluated (e.g. test)")
    p.add_argument("--frames", type=input_path, help="frame index (results/<benchmark>/frames.json) instead of listing the dataset")
    p.add_argument("--shard", type=int, default=None, help="shard index (0-based); all frames when omitted")
    p.add_argument("--shards", type=int, default=None, help="the split's shard count (frames go by a hash of their id)")


def add_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="model name in the config")
    p.add_argument("--config", type=input_path, default=DEFAULT_CONFIG, help="where --model is defined")
    p.add_argument("--model-spec", help="the model's config entry as JSON with its name (as the workflow passes it)")


def args_manifest(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    add_data(p)
    add_renamed(p, "--dataset-manifest", "--verify", type=input_path,
                help="refuse unless the bytes on disk match this manifest")
    p.add_argument("--out", type=output_path, help="write the manifest here")
    p.add_argument("--dataset-id-out", type=output_path, help="write {dataset_id, frames} JSON here")
    p.add_argument("--index-out", type=output_path, help="write the frame index (frames, hashes, label sizes) here")


def args_audit(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    add_data(p)
    p.add_argument("--split", action="append", default=[], help="a split to be evaluated (must not be empty); repeatable")
    add_renamed(p, "--json-out", "--json", type=output_path, help="write the report as JSON here")
    add_renamed(p, "--text-out", "--text", type=output_path,
                help="write the report as text here (with neither, it is printed)")


def args_identify(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    add_model(p)
    p.add_argument("--out", type=output_path, required=True, help="the file written")


def args_infer(p: argparse.ArgumentParser) -> None:
    add_frames(p)
    add_model(p)
    p.add_argument("--identity", type=input_path, help="the model's identity record (`segbench identify`): its spec")
    p.add_argument("--model-path", type=input_path, help="with --identity: where the model's bytes are (default: its spec's path)")
    p.add_argument("--out", type=output_path, required=True, help="folder for the predicted masks")
    p.add_argument("--batch-size", type=positive_int, default=4, help="frames per forward pass")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto", help="where the model runs (auto: cuda when available)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def args_score(p: argparse.ArgumentParser) -> None:
    add_frames(p)
    add_model(p)
    p.add_argument("--identity", type=input_path, help="the model's identity record (its label space), from `segbench identify`")
    p.add_argument("--label-space", help="the predictions' label space (for a folder of masks named by no config)")
    p.add_argument("--predictions", type=input_path, help="folder of masks (default: the model's path, for kind predictions)")
    p.add_argument("--floor", action="store_true", help="score the floor predictor from the ground truth alone")
    p.add_argument("--out", type=output_path, required=True, help="counts file (.parquet)")


def args_metrics(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--counts", type=input_path, nargs="+", help="shard counts (from `segbench score`)")
    p.add_argument("--frames", type=input_path, help="with --counts: the workflow's frame index (the counts must "
                                                     "hold exactly its frames of the split; its dataset_id is named)")
    p.add_argument("--predictions", type=input_path, help="or a folder (or archive) of masks, scored directly")
    p.add_argument("--label-space", help="with --predictions: the masks' label space")
    p.add_argument("--data", type=input_path, help="with --predictions: the dataset folder")
    p.add_argument("--split", help="with --predictions: the split the masks are for (default: the benchmark's)")
    p.add_argument("--out", type=output_path, required=True, help="the file written")


def args_record(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--metrics", type=input_path, required=True, help="the model's metrics.json (`segbench metrics`)")
    p.add_argument("--floor-metrics", type=input_path, required=True, help="the floor's metrics.json on the same split")
    p.add_argument("--identity", type=input_path, required=True, help="output of `segbench identify`")
    p.add_argument("--dataset-id", type=input_path, required=True, help="output of `segbench manifest --dataset-id-out`")
    p.add_argument("--uncertainty", type=input_path, required=True,
                   help="the model's uncertainty.json (`segbench uncertainty` with --floor-counts): its paired "
                        "comparison with the floor decides the record's floor verdict")
    add_team(p)
    p.add_argument("--out", type=output_path, required=True, help="the file written")


def args_idd_labels(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=input_path, required=True, help="IDD root holding gtFine/<split>/<drive>/*_polygons.json")


def args_pull(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", type=input_path, nargs="+", help="the DVC-pinned paths to restore")
    p.add_argument("--out", type=output_path, required=True, help="marker JSON written when the path is present")


def args_results(p: argparse.ArgumentParser) -> None:
    p.add_argument("--submissions", type=input_path, nargs="+", required=True, help="submission records (JSON)")
    p.add_argument("--floors", type=input_path, nargs="*", default=[],
                   help="the floor's metrics.json per split: every metric of the floor row (without: the floor's "
                        "headline as the records state it)")
    p.add_argument("--metrics", type=input_path, nargs="*", default=[],
                   help="the models' metrics.json: every metric of every report, beside the records' spec fields")
    p.add_argument("--uncertainty", type=input_path, nargs="*", default=[], help="uncertainty.json of models and floors")
    p.add_argument("--slices", type=input_path, nargs="*", default=[], help="slices.json of the models")
    p.add_argument("--out", type=output_path, required=True, help="stem: writes STEM.csv, .md, .json and .html")
    p.add_argument("--tables", type=output_path, help="folder of the per-report tables and long.csv (default: beside STEM)")
    p.add_argument("--tables-label", help="how the Markdown names that folder (default: --tables)")
    p.add_argument("--metrics-out", type=output_path, help="small headline-metrics JSON for `dvc metrics`")


def add_comparison(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--counts", type=input_path, nargs="+", required=True, help="the model's shard counts")
    p.add_argument("--baseline-counts", type=input_path, nargs="*", default=[], help="the baseline's shard counts")
    p.add_argument("--floor-counts", type=input_path, nargs="*", default=[], help="the floor's shard counts")


def args_uncertainty(p: argparse.ArgumentParser) -> None:
    add_comparison(p)
    p.add_argument("--frames", type=input_path, required=True,
                   help="the frame index (`segbench manifest --index-out`): each frame's group")
    p.add_argument("--resamples", type=positive_int, default=1000, help="bootstrap resamples of the units")
    p.add_argument("--seed", type=seed_number, default=0, help="the bootstrap's random seed")
    p.add_argument("--out", type=output_path, required=True, help="the file written")


def args_slices(p: argparse.ArgumentParser) -> None:
    add_comparison(p)
    p.add_argument("--frames", type=input_path, required=True,
                   help="the frame index (`segbench manifest --index-out`): each frame's group and metadata")
    p.add_argument("--slicings", help="a config benchmark entry's `slices` list as JSON (as the workflow passes it): "
                                      "in place of the benchmark's own; '[]' slices nothing")
    p.add_argument("--resamples", type=positive_int, default=1000, help="bootstrap resamples of the units")
    p.add_argument("--seed", type=seed_number, default=0, help="the bootstrap's random seed")
    p.add_argument("--out", type=output_path, required=True, help="the file written")


def args_figures(p: argparse.ArgumentParser) -> None:
    add_comparison(p)
    p.add_argument("--out", type=output_path, required=True,
                   help="the folder written: each figure's PNG and, beside the IoU and confusion ones, its CSV")


def args_overlays(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--data", type=input_path, required=True, help="dataset folder, as the benchmark's format ships it")
    p.add_argument("--split", required=True, help="the split evaluated (e.g. test)")
    p.add_argument("--frames-index", type=input_path, help="frame index (results/<benchmark>/frames.json) instead of listing the dataset")
    p.add_argument("--counts", type=input_path, nargs="+", required=True, help="the model's shard counts")
    p.add_argument("--predictions", type=input_path, nargs="+", required=True, help="folders holding the predicted masks")
    add_renamed(p, "--examples", "--frames", type=positive_int, default=2,
                help="how many worst and how many best frames are drawn")
    add_renamed(p, "--out", "--out-dir", type=output_path, required=True, help="the folder written")


def args_plot_data(p: argparse.ArgumentParser) -> None:
    p.add_argument("--iou", type=input_path, nargs="+", required=True, help="the per-class IoU CSVs (`figures`: iou-REPORT.csv)")
    p.add_argument("--confusion", type=input_path, nargs="+", required=True, help="the confusion CSVs (`figures`: confusion-SPACE.csv)")
    p.add_argument("--iou-out", type=output_path, required=True, help="the gathered IoU file dvc plots reads")
    p.add_argument("--confusion-out", type=output_path, required=True, help="the gathered confusion file dvc plots reads")


def args_export_onnx(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--checkpoint", type=input_path, required=True, help="a segbench .pt checkpoint")
    p.add_argument("--out", type=output_path, required=True, help="the .onnx file to write")
    p.add_argument("--opset", type=positive_int, default=17, help="the ONNX opset")


def args_export_torchscript(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--checkpoint", type=input_path, required=True, help="a segbench .pt checkpoint")
    p.add_argument("--out", type=output_path, required=True, help="the TorchScript archive to write (.ts)")


def args_import_checkpoint(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--weights", type=input_path, required=True, help="state dict, Lightning checkpoint or .safetensors")
    p.add_argument("--architecture", required=True, help="a registered architecture (segbench.models.architectures)")
    p.add_argument("--arguments", default="{}", help="its keyword arguments as a JSON object (never num_classes)")
    p.add_argument("--label-space", required=True, help="one of the benchmark's label spaces: the output classes")
    p.add_argument("--mean", type=float, nargs=3, required=True, metavar=("R", "G", "B"), help="0..1 units")
    p.add_argument("--std", type=float, nargs=3, required=True, metavar=("R", "G", "B"), help="0..1 units")
    p.add_argument("--stride", type=int, help="padding stride (default: the architecture's)")
    p.add_argument("--prefix", help="strip this key prefix (default: a prefix all keys share, when that fits)")
    p.add_argument("--out", type=output_path, required=True, help="the segbench .pt to write")


def args_export(p: argparse.ArgumentParser) -> None:
    add_benchmark(p)
    p.add_argument("--dataset-manifest", type=input_path, required=True, help="the manifest of the data the masks are for")
    p.add_argument("--split", help="the split (default: the benchmark's)")
    p.add_argument("--predictions", type=input_path, help="folder or archive of masks named by frame (made elsewhere)")
    p.add_argument("--data", type=input_path, help="the dataset, to run a model on the split (labels not needed)")
    p.add_argument("--checkpoint", type=input_path, help="with --data: the model, as benchmark.py takes it")
    p.add_argument("--checkpoint-kind", choices=["checkpoint", "torchscript", "onnx", "hf", "hf-segformer"],
                   help="the model's kind (default: from the path)")
    p.add_argument("--label-space", help="with --checkpoint: its label space (default: as it declares); with "
                   "--predictions: the masks' (default: the benchmark's ground truth), whose void values are listed")
    add_model(p)
    p.add_argument("--batch-size", type=positive_int, default=4, help="frames per forward pass")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto", help="where the model runs (auto: cuda when available)")
    p.add_argument("--out", type=output_path, required=True, help="the upload (.zip)")


def args_check_submission(p: argparse.ArgumentParser) -> None:
    p.add_argument("archive", type=input_path, help="the upload (zip) to check")
    add_benchmark(p)
    p.add_argument("--dataset-manifest", type=input_path, required=True, help="the manifest the upload is checked against")
    p.add_argument("--split", help="the split (default: the benchmark's)")
    p.add_argument("--label-space", help="the masks' label space (default: the benchmark's ground truth)")
    p.add_argument("--data", type=input_path, help="the images, to check each mask's size against its image's")


def args_check_results(p: argparse.ArgumentParser) -> None:
    add_renamed(p, "--results", "--out", type=input_path, default=Path("results"),
                help="the DVC-tracked output folder (checked)")
    p.add_argument("--lock", type=input_path, default=Path("dvc.lock"), help="the DVC lock file pinning the results")
    p.add_argument("--listings", type=input_path, default=Path(".snakemake/segbench/results-listings"),
                   help="where the listing of each tree the workflow made is kept, named by its digest")
    p.add_argument("--metadata", type=input_path, default=Path(".snakemake/metadata"),
                   help="Snakemake's records of the outputs (which are job outputs)")
    p.add_argument("--repair", action="store_true",
                   help="run the workflow, forcing the jobs that made damaged files, instead of failing")
    p.add_argument("workflow", nargs=argparse.REMAINDER,
                   help="-- SNAKEMAKE-COMMAND: the workflow run (given --forcerun and the damaged job "
                        "outputs); when it succeeds the listing of the tree it made is kept")


def add_database(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=os.environ.get("SEGBENCH_DB"),
                   help="the server's database, an SQLAlchemy URL (sqlite:///PATH, postgresql+psycopg://...); "
                        "default: $SEGBENCH_DB")


def add_server_settings(p: argparse.ArgumentParser) -> None:
    """One option per field of the server's settings (segbench.server.settings.Settings)."""
    from dataclasses import fields

    from ..server.settings import DEFAULTS

    for field in fields(DEFAULTS):
        default = getattr(DEFAULTS, field.name)
        p.add_argument(f"--{field.name.replace('_', '-')}", type=type(default), default=default,
                       help=f"default {default}")


def args_server(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="server_command", required=True, metavar="ACTION")

    def action(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text, formatter_class=Help)

    init = action("init", "create or migrate the database; record the store; print a new host token")
    add_database(init)
    init.add_argument("--store", required=True, help="where uploads and counts are kept: a folder, or s3://BUCKET[/PREFIX]")
    team = action("add-team", "add a team and print its API token (shown once)")
    team.add_argument("name", help="the team's name, shown on the boards")
    add_database(team)
    renew = action("new-token", "a new token for a team (a lost or leaked one): its old token and browser sessions stop "
                                "working, a revoked team is live again, its submissions stay; printed once")
    renew.add_argument("name", help="the team's name")
    add_database(renew)
    revoke = action("revoke-team", "stop a team's token working (its submissions stay)")
    revoke.add_argument("name", help="the team's name")
    add_database(revoke)
    phase = action("add-phase", "point a phase of a benchmark at its hidden split (data and manifest)")
    add_database(phase)
    add_benchmark(phase)
    add_renamed(phase, "--phase", "--name", default="test", help="the phase's name in the phases file")
    phase.add_argument("--phases", type=input_path, help="the phases file (default: config/phases/BENCHMARK.yaml): the "
                                                   "phase's split, dates, quotas")
    phase.add_argument("--data", type=input_path, required=True, help="the hidden split's dataset folder (labels included)")
    add_renamed(phase, "--dataset-manifest", "--manifest", type=input_path, required=True,
                help="its manifest (the dataset_id is checked against the data)")
    phase.add_argument("--baseline", type=input_path, help="the baseline's upload (a zip), scored now: the boards' Δ vs baseline")
    reveal = action("reveal", "open a phase's private board on every endpoint (and close its selection)")
    add_database(reveal)
    add_benchmark(reveal)
    reveal.add_argument("--phase", required=True, help="the phase's name")
    rescore = action("rescore", "after a correction of a phase's hidden labels: move the phase to the new data and "
                                "queue every stored submission's re-score of the changed frames")
    add_database(rescore)
    add_benchmark(rescore)
    rescore.add_argument("--phase", required=True, help="the phase's name")
    rescore.add_argument("--dataset-manifest", type=input_path, required=True,
                         help="the corrected data's manifest (`segbench manifest` of the phase's data folder, after "
                              "`dvc add`), where every worker reads it")
    rescore.add_argument("--baseline", type=input_path, help="the baseline's upload for the corrected split (default: "
                                                             "the one the phase was added with, re-scored)")
    run = action("run", "serve the API and the pages (uvicorn)")
    add_database(run)
    run.add_argument("--host", default="127.0.0.1", help="the address to listen on (behind the host's TLS proxy)")
    run.add_argument("--port", type=port_number, default=8000, help="the port to listen on (0: one the system chooses)")
    run.add_argument("--processes", type=int, default=1,
                     help="server processes on the one port (each keeps its own boards and counts 1/N of the rate "
                          "limits); default 1")
    add_server_settings(run)
    worker = action("worker", "claim queued submissions and score them")
    add_database(worker)
    worker.add_argument("--once", action="store_true", help="stop when nothing is left to claim")
    add_server_settings(worker)
    sub.help = f"what to do: {', '.join(sub.choices)}"


def add_client(p: argparse.ArgumentParser) -> None:
    p.add_argument("--server", default=os.environ.get("SEGBENCH_SERVER"), help="the server's URL; default $SEGBENCH_SERVER")
    p.add_argument("--token", default=os.environ.get("SEGBENCH_TOKEN"), help="the team's token; default $SEGBENCH_TOKEN")


def args_submit(p: argparse.ArgumentParser) -> None:
    p.add_argument("upload", type=input_path, help="the upload (a zip, as `segbench export` writes it)")
    add_client(p)
    p.add_argument("--benchmark", required=True, help="the benchmark the phase belongs to, as the server names it")
    p.add_argument("--phase", required=True, help="the phase to submit to (e.g. test)")
    p.add_argument("--method", default="", help="the method's name, shown on the board")
    p.add_argument("--description", default="", help="a longer description of the method, shown to the team")
    p.add_argument("--wait", action="store_true", help="wait for the result and print it")
    p.add_argument("--timeout", type=seconds, default=3600.0, help="with --wait: seconds to wait at most")


def args_submissions(p: argparse.ArgumentParser) -> None:
    add_client(p)
