# Shared by all rules: the plan (what to compute), the path of every result, which code each step
# runs, and how a job learns what its result depends on.
#
# How re-runs are decided (docs/workflow.md, "What re-runs"): a job's result depends on content,
# never on file times. The identity jobs (dataset_identity, audit, checkpoint_identity) are
# Snakemake checkpoints: the jobs after them are planned only once they have run, with the
# identities they wrote. Those jobs take the identities as `ancient` inputs (their times do not
# count) and carry a content key as a parameter: the hashes of exactly the bytes their result
# depends on (a shard's images, or its labels; the model's bytes and settings). A touched or
# copied file re-runs its identity job and nothing else; a changed one re-runs what reads it.
import inspect
import json
import os
import re
import shlex
import sys
from pathlib import Path

from snakemake.common import overwrite_function_params

from segbench.commands.cli import COMMAND
from segbench.core.metric_registry import with_figure
from segbench.errors import SegbenchError
from segbench.workflow.codedeps import CodeGraph
from segbench.workflow.config import ConfigSources, check_config
from segbench.workflow.plan import (
    Plan,
    content_key,
    dvc_file,
    model_content,
    shard_content,
)
from segbench.workflow.runlock import claim_folder

# A lock that a killed run left is removed before Snakemake checks it, a live run's never
# (segbench/workflow/runlock.py), so a plain `snakemake` after a `kill -9` recovers. Only the
# scheduling process: a cluster's jobs parse this file too.
if workflow.is_main_process:
    stale = claim_folder(Path(".snakemake"))
    if stale:
        print(
            f"segbench: removed the lock of a killed run ({', '.join(map(str, stale))}): no other "
            "snakemake runs in this folder; the killed jobs' files are re-made (rerun-incomplete)",
            file=sys.stderr,
        )

# Validates against workflow/schemas/config.schema.json (naming the key and what was expected),
# fills the schema's defaults, and checks that the benchmarks and models named exist and the
# paths. Each refusal names the file and line holding the value: the Snakefile's config file
# (unless --replace-workflow-config), then each --configfile, then --config, as Snakemake merged them.
try:
    check_config(
        config,
        ConfigSources.workflow(
            (
                []
                if workflow.config_settings.replace_workflow_config
                else ["config/config.yaml"]
            )
            + list(workflow.config_settings.configfiles),
            workflow.config_settings.config,
        ),
    )
    PLAN = Plan(config, checked=Path(".snakemake/segbench/checked-manifests"))
    PLAN.check_pinned_inputs()
except SegbenchError as error:
    raise WorkflowError(f"segbench: {error}") from None

R = config["results"]
LOGS = config["logs"]  # outside results/, so the results hold only reproducible bytes
ENV = "../../envs/segbench.yaml"
INFERENCE = config["inference"]
BOOTSTRAP = config["bootstrap"]
OVERLAY_FRAMES = config["plots"]["overlay_frames"]
OVERLAY_KINDS = ("worst", "best")
PLOT_CATEGORY = "{benchmark} ({split})"
# GPUs for inference jobs only when the config asks for them (gpu_model then narrows the request).
INFERENCE_GPU = {"gpu": INFERENCE["gpu"]} | (
    {"gpu_model": INFERENCE["gpu_model"]}
    if INFERENCE["gpu"] and INFERENCE.get("gpu_model")
    else {}
)

# Every result's path, once. Wildcards: benchmark, split, model, shard (and report, space, metric).
PATHS = {
    "pinned": "{R}/pinned/{pin}.json",
    "manifest": "{R}/{benchmark}/manifest.json",
    "dataset": "{R}/{benchmark}/dataset.json",
    "frames": "{R}/{benchmark}/frames.json",
    "audit": "{R}/{benchmark}/audit.json",
    "audit_text": "{R}/{benchmark}/audit.txt",
    "identity": "{R}/{benchmark}/models/{model}/identity.json",
    "predictions": "{R}/{benchmark}/{split}/{model}/predictions/shard-{shard}",
    "counts": "{R}/{benchmark}/{split}/{model}/counts/shard-{shard}.parquet",
    "metrics": "{R}/{benchmark}/{split}/{model}/metrics.json",
    "submission": "{R}/{benchmark}/{split}/{model}/submission.json",
    "uncertainty": "{R}/{benchmark}/{split}/{model}/uncertainty.json",
    "slices": "{R}/{benchmark}/{split}/{model}/slices.json",
    "plot_iou": "{R}/{benchmark}/{split}/{model}/plots/iou-{report}.png",
    "plot_iou_csv": "{R}/{benchmark}/{split}/{model}/plots/iou-{report}.csv",
    "plot_confusion": "{R}/{benchmark}/{split}/{model}/plots/confusion-{space}.png",
    "plot_confusion_csv": "{R}/{benchmark}/{split}/{model}/plots/confusion-{space}.csv",
    "plot_fraction": "{R}/{benchmark}/{split}/{model}/plots/fraction-{metric}.png",
    "overlays": "{R}/{benchmark}/{split}/{model}/overlays",
    "overlay_frames": "{R}/{benchmark}/{split}/{model}/overlays/frames.json",
}


# Each wildcard standing for itself, and the results folder: what path() fills in by default.
WILDCARDS = ("benchmark", "split", "model", "shard", "report", "space", "metric", "pin")
UNFILLED = {n: f"{{{n}}}" for n in WILDCARDS} | {"R": R}


def path(name, **values):
    """The path of result `name` with the given wildcard values; the others stay wildcards."""
    return PATHS[name].format_map(UNFILLED | values)


def of(name, w, **values):
    """The path of result `name` for the job with wildcards `w`."""
    return path(name, **(dict(w.items()) | values))


# The names wildcards may take, listed (a wildcard sees one path component only).
BENCHMARK_NAMES = sorted(PLAN.benchmarks)
MODEL_NAMES = sorted({m for b in PLAN.benchmarks.values() for m in b.models})
SPLIT_NAMES = sorted({s for b in PLAN.benchmarks.values() for s in b.splits})


def one_of(names):
    return "|".join(re.escape(n) for n in names)


wildcard_constraints:
    benchmark=one_of(BENCHMARK_NAMES),
    split=one_of(SPLIT_NAMES),
    model=one_of(MODEL_NAMES + ["floor"]),
    shard=r"\d+",


def bench(w):
    return PLAN.benchmarks[w.benchmark]


def per_job(function):
    """An input or parameter function of the shard rules, with its signature read once: Snakemake
    reads a function's signature at each call, and calls each one per job twice (again after the
    identity checkpoints): about 6,000 calls at 20,000 frames, a tenth of a no-op's time. The
    parameters given are those inspect finds, what Snakemake would read itself."""
    overwrite_function_params(function, inspect.signature(function).parameters)
    return function


CODE = CodeGraph(workflow.basedir)


def code(command):
    """The digest of the source files `segbench COMMAND` runs, from the imports of its step
    (segbench.workflow.codedeps): a rule's parameter, so a change to that code re-runs its jobs.
    """
    return CODE.command_key(COMMAND[command].step)


def cli(command, arguments):
    """The shell command of a rule: `segbench COMMAND ...`, its output in the log, shown again on
    failure. Every path in `arguments` is quoted with {...:q}."""
    return f"segbench {command} {arguments} > {{log:q}} 2>&1 || (cat {{log:q}} >&2; exit 1)"


@per_job
def definition_files(w):
    """Every file the benchmark definition is built from (itself, label spaces, mappings)."""
    return list(bench(w).definition_files)


def pin_slug(p):
    return "--".join(Path(p).parts)


# One marker per pinned input, so that pinning a new model re-runs only what depends on it.
PINNED = {pin_slug(p): p for p in PLAN.pinned_paths()}


def pinned(p):
    """Wait for a DVC-pinned input to be restored (a no-op when it is on disk already). Not when
    inputs are staged: a job restoring them would restore them only where it runs; they are
    staged into the storage with the other inputs (docs/cluster.md)."""
    if STAGED or pin_slug(p) not in PINNED:
        return []
    return [after("pull_pinned", "pinned", pin=pin_slug(p))]


# --- what jobs read of the dataset and the models ------------------------------------------------
#
# Without a shared filesystem (a default storage provider: the Kubernetes profile, or the staged
# test run) a job sees only the files listed as its inputs, so every job lists each file it reads
# and finds them under its local copies (staged_root). On a shared filesystem (local, SLURM) the
# files are not listed (20,000 frames would make over 200,000 inputs, most of a dry run's time):
# dataset_identity watches them through a fingerprint of every file's path, size and time (its
# one job re-runs when it changes: the cheap identity check), and the frame index it writes holds
# each file's SHA-256, from which the content keys come.
STAGED = workflow.storage_settings.default_storage_provider is not None


def dataset_listed(w, which):
    """The dataset files a job reads, listed as its inputs only when inputs are staged: `which`
    is "all" (the index files and every frame's), "split" (the split's images and labels),
    "shard" (the shard's images and labels) or "shard-labels"."""
    if not STAGED:
        return []
    b = bench(w)
    if which == "all":
        return b.dataset_files()
    frames = (
        b.split_frames(w.split)
        if which == "split"
        else b.shard_frames(w.split, int(w.shard))
    )
    labels = [f.label for f in frames]
    return labels if which == "shard-labels" else [f.image for f in frames] + labels


def dataset_inputs(which):
    """Input function: the pinned dataset restored, and the files the job reads (staged only)."""
    return per_job(lambda w: pinned(bench(w).data) + dataset_listed(w, which))


def dataset_fingerprint(w):
    """What stands for the dataset's files where they are not inputs (see above)."""
    return "" if STAGED else bench(w).dataset_fingerprint()


def staged_root(local, relative):
    """The folder a file at `relative` inside it was staged into, given the file's local path
    (the file itself when `relative` is empty)."""
    if not relative:
        return str(local)
    return str(Path(local).parents[len(Path(relative).parts) - 1])


def data_argument(which):
    """Params function: --data for a job, the dataset folder or (inputs staged) its local copy,
    found from the local path of the first listed file (the last inputs of `files`)."""

    @per_job
    def argument(w, input):
        b = bench(w)
        listed = dataset_listed(w, which)
        if not listed:
            return b.data
        files = as_list(input.files)
        local = files[len(files) - len(listed)]
        return staged_root(local, os.path.relpath(listed[0], b.data))

    return argument


def model_files(name):
    """A model's files as inputs of its identity job, and its .dvc pin, so that a re-pinned model
    re-runs its identity. A folder's files one by one on a shared filesystem (a folder has no
    checksum); staged, the folder is one storage object (a prefix) the job retrieves whole.
    """
    p = str(PLAN.model(name).path)
    pin = [dvc_file(p)] if Path(dvc_file(p)).is_file() else []
    if Path(p).is_dir() and not STAGED:
        return (
            pinned(p) + sorted(str(f) for f in Path(p).rglob("*") if f.is_file()) + pin
        )
    return pinned(p) + [p] + pin


def model_read(name):
    """The model as an input of the jobs that read it (inference; scoring of a folder of masks):
    its identity record's hash is in their content key, so its files' times do not count.
    """
    p = str(PLAN.model(name).path)
    return [ancient(f) for f in pinned(p) + [p]]


def as_list(files):
    """An input of a job as a list (a named input of one file is a string)."""
    return [files] if isinstance(files, str) else list(files)


@per_job
def model_input(w):
    """The model of the job's wildcards as an input (model_read)."""
    return model_read(w.model)


@per_job
def model_path_param(w, input):
    """Where the job finds the model of its wildcards (model_path_argument)."""
    return model_path_argument(w.model, input.model)


def model_path_argument(name, local_files):
    """Where a job finds the model: its path, or (inputs staged) the local copy of it, the first
    of `local_files` (the local paths of its model_files or model_read input)."""
    return as_list(local_files)[0] if STAGED else str(PLAN.model(name).path)


def model_spec_argument(name, input):
    """The model's config entry as Snakemake resolved it, with its name: what the CLI acts on
    (its path the local copy, when inputs are staged)."""
    entry = {"name": name, **config["models"][name]}
    if STAGED:
        entry["path"] = model_path_argument(name, input.model)
    return json.dumps(entry, sort_keys=True)


# --- the identities jobs after the checkpoints read ------------------------------------------------
#
# A job reads a checkpoint's output by its path once it exists, as an `ancient` input: its time
# does not count (the content key does), and a job whose identity inputs are all ancient is not
# marked to re-run merely because the identity job runs. When the checkpoint re-runs, Snakemake
# re-creates the jobs that read its outputs once it has finished, and decides each by its key
# then. A missing output (a fresh run) goes through checkpoints.get: those jobs are planned after
# the checkpoint ran.


def after(checkpoint, name, **wildcards):
    """The output `name` of a checkpoint job, for a job that reads it (see above)."""
    output = path(name, **wildcards)
    if STAGED or not os.path.exists(output):
        getattr(checkpoints, checkpoint).get(
            **wildcards
        )  # raises while it is incomplete
    return ancient(output)


@per_job
def frame_index(w):
    """The frame index dataset_identity wrote."""
    return after("dataset_identity", "frames", benchmark=w.benchmark)


def dataset_record(w):
    return after("dataset_identity", "dataset", benchmark=w.benchmark)


def dataset_manifest(w):
    return after("dataset_identity", "manifest", benchmark=w.benchmark)


@per_job
def audit_gate(w):
    """The passed audit: every job that reads frames waits for it (a failed audit has no output)."""
    return after("audit", "audit", benchmark=w.benchmark)


@per_job
def identity_record(w):
    return after(
        "checkpoint_identity", "identity", benchmark=w.benchmark, model=w.model
    )


# Content keys are parameters of one argument (the wildcards): Snakemake records and compares
# only those, not parameters computed from a job's input. With staged inputs (a storage
# provider) the identities are not on this machine while the DAG is built: no keys there, and
# re-runs follow Snakemake's own rules (docs/workflow.md).


def read_record(accessor, w):
    """A checkpoint's JSON output; calling `accessor` first leaves a parameter to be decided once
    the checkpoint has run when it still has to."""
    with open(accessor(w), encoding="utf-8") as handle:
        return json.load(handle)


def dataset_id(w):
    """The dataset_id dataset_identity found (a parameter of the jobs that cite it)."""
    return "" if STAGED else read_record(dataset_record, w)["dataset_id"]


def checkpoint_sha256(w):
    """The model's checkpoint_sha256 its identity job found (a parameter of its submission)."""
    return "" if STAGED else read_record(identity_record, w)["checkpoint_sha256"]


@per_job
def shard_total(w):
    return bench(w).shard_total(w.split)


def frame_fields(w, fields):
    return shard_content(frame_index(w), w.split, int(w.shard), shard_total(w), fields)


def stamp(file):
    """A file's state: its modification time and size (one stat)."""
    st = os.stat(file)
    return st.st_mtime_ns, st.st_size


def once_per_state(compute):
    """A shard job's content key, computed once per job and state of the records it is made from
    (the frame index; the model's identity): Snakemake creates a job again after each identity
    checkpoint it depends on, mostly with those records unchanged."""
    keys = {}

    @per_job
    def key(w):
        if STAGED:
            return ""
        records = [frame_index(w)] + (
            [identity_record(w)] if "model" in w.keys() else []
        )
        state = (
            tuple(w.items()),
            tuple((r, *stamp(r)) for r in records),
        )
        if state not in keys:
            keys[state] = compute(w)
        return keys[state]

    return key


@once_per_state
def inference_key(w):
    """What a shard's predictions depend on: the model (bytes, label space, settings), the
    inference settings, and each frame's image bytes and ground-truth size."""
    identity = read_record(identity_record, w)
    return content_key(
        {
            "model": model_content(config["models"][w.model], identity),
            "batch_size": INFERENCE["batch_size"],
            "device": INFERENCE["device"],
            "frames": frame_fields(w, ("image_sha256", "label_size")),
        }
    )


@once_per_state
def scoring_key(w):
    """What a shard's counts depend on besides the predictions: each frame's label bytes (and
    for a folder of masks made elsewhere, its identity: every file's bytes)."""
    document = {"frames": frame_fields(w, ("label_sha256",))}
    if "model" in w.keys():  # not the floor
        identity = read_record(identity_record, w)
        document["model"] = model_content(config["models"][w.model], identity)
    return content_key(document)


@per_job
def predictions_input(w):
    """The masks to score: an inference shard, or a predictions-folder model's own files (their
    identity is in the content key, so their times do not count)."""
    if PLAN.model(w.model).kind == "predictions":
        return model_read(w.model)
    return of("predictions", w)


@per_job
def predictions_argument(w, input):
    if PLAN.model(w.model).kind == "predictions":
        return model_path_argument(w.model, input.predictions)
    return input.predictions


# --- the files of each (benchmark, split, model) -------------------------------------------------


def baseline_of(benchmark):
    """The benchmark's baseline: its first model with role: baseline (None without one)."""
    names = [
        m for m in PLAN.benchmarks[benchmark].models if PLAN.model(m).role == "baseline"
    ]
    return names[0] if names else None


def counts_of(w, model):
    return [
        path("counts", benchmark=w.benchmark, split=w.split, model=model, shard=s)
        for s in bench(w).shards(w.split)
    ]


def baseline_counts(w):
    """The baseline's counts, unless this is the baseline or the floor itself."""
    baseline = baseline_of(w.benchmark)
    if baseline is None or w.model in (baseline, "floor"):
        return []
    return counts_of(w, baseline)


def floor_counts(w):
    return [] if w.model == "floor" else counts_of(w, "floor")


def prediction_folders(w):
    """Every folder holding the model's masks for the split."""
    if PLAN.model(w.model).kind == "predictions":
        return [str(PLAN.model(w.model).path)]
    return [of("predictions", w, shard=s) for s in bench(w).shards(w.split)]


def overlay_files(folder):
    return [
        f"{folder}/{kind}-{rank}.png"
        for kind in OVERLAY_KINDS
        for rank in range(1, OVERLAY_FRAMES + 1)
    ]


def report_keys(b):
    return [r.key for r in PLAN.benchmarks[b].benchmark.reports]


def confusion_spaces(b):
    return ["ground-truth"] + report_keys(b)


def fraction_metrics(b):
    definition = PLAN.benchmarks[b].benchmark
    return [f"{r.key}.{x.key}" for r, x in with_figure(definition.reports, "fraction")]


def plot_files(b, s, m):
    """Every figure of one (benchmark, split, model)."""
    at = dict(benchmark=b, split=s, model=m)
    return (
        [path("plot_iou", **at, report=r) for r in report_keys(b)]
        + [path("plot_confusion", **at, space=x) for x in confusion_spaces(b)]
        + [path("plot_fraction", **at, metric=x) for x in fraction_metrics(b)]
        + overlay_files(path("overlays", **at))
    )


def plot_data_files(kind):
    """The per-model CSVs behind the IoU bars or the confusion heatmaps."""
    files = []
    for b, s, m in PLAN.evaluations():
        at = dict(benchmark=b, split=s, model=m)
        if kind == "iou":
            files += [path("plot_iou_csv", **at, report=r) for r in report_keys(b)]
        else:
            files += [
                path("plot_confusion_csv", **at, space=x) for x in confusion_spaces(b)
            ]
    return files


def uncertainty_files():
    """The bootstrap of every model and of each split's floor."""
    files = [
        path("uncertainty", benchmark=b, split=s, model=m)
        for b, s, m in PLAN.evaluations()
    ]
    floors = {
        path("uncertainty", benchmark=b, split=s, model="floor")
        for b, s, _ in PLAN.evaluations()
    }
    return files + sorted(floors)


def slice_files():
    """Every model's metrics per slice of the frames' metadata."""
    return [
        path("slices", benchmark=b, split=s, model=m) for b, s, m in PLAN.evaluations()
    ]


def slicings_argument(w):
    """The config entry's own `slices` list, which replaces the benchmark definition's, as JSON
    for the slices job (nothing where the config gives none: the job takes the definition's).
    A parameter of the wildcards alone, so Snakemake records it: a changed list re-runs the job.
    """
    entry = config["benchmarks"][w.benchmark]
    if "slices" not in entry:
        return ""
    return f"--slicings {shlex.quote(json.dumps(entry['slices'], sort_keys=True))}"


def comparison_arguments(w, input):
    arguments = ""
    if input.baseline:
        arguments += f"--baseline-counts {' '.join(map(shlex.quote, input.baseline))} "
    if input.floor:
        arguments += f"--floor-counts {' '.join(map(shlex.quote, input.floor))}"
    return arguments


def leaderboard_outputs():
    return [f"{R}/leaderboard.{ext}" for ext in ("csv", "md", "json")] + [
        config["metrics_file"]
    ]


def plot_outputs():
    files = [f for b, s, m in PLAN.evaluations() for f in plot_files(b, s, m)]
    return files + [
        f"{R}/plots/iou.csv",
        f"{R}/plots/confusion.csv",
        f"{R}/leaderboard.html",
    ]
