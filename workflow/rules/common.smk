# The glue Snakemake needs: start-up, the objects the rules read, the rules' input and parameter
# functions. What they compute is in segbench.workflow (docs/ARCHITECTURE.md, "The workflow
# layer"). Re-runs follow content, never paths or file times (docs/workflow.md, "What re-runs"):
# the dataset and the models are identified when the DAG is built (keys.py), and each job reads
# the marker of its content key (made by the content_key rule) and the records it needs as
# `ancient` inputs. A parameter there only to re-run a job is named rerun_when_*.
import inspect
import os
from pathlib import Path

from snakemake.common import overwrite_function_params
from snakemake.io import IOFile

from segbench.commands.cli import COMMAND
from segbench.errors import SegbenchError
from segbench.workflow import arguments, figure_report
from segbench.workflow.arguments import cli
from segbench.workflow.codedeps import CodeGraph
from segbench.workflow.digests import DigestCache
from segbench.workflow.keys import ContentKeys, marker, settle, slot, slot_records
from segbench.workflow.paths import FLOOR, ResultPaths, one_of
from segbench.workflow.plan import dvc_file
from segbench.workflow.staging import staging_mode
from segbench.workflow.startup import (
    FILE_DIGESTS,
    checked_plan,
    gpu_resources,
    recover_lock,
)
from segbench.workflow.targets import Targets

if workflow.is_main_process:  # not in a cluster's jobs, which parse this file too
    recover_lock()
try:
    PLAN = checked_plan(config, workflow.config_settings)
except SegbenchError as error:
    raise WorkflowError(f"segbench: {error}") from None

LOGS = config["logs"]  # outside results/, so the results hold only reproducible bytes
ENV = "../../envs/segbench.yaml"
INFERENCE = config["inference"]
BOOTSTRAP = config["bootstrap"]
PLOT_CATEGORY = "{benchmark} ({split})"
INFERENCE_GPU = gpu_resources(INFERENCE)
PATHS = ResultPaths(config["results"])
path = PATHS.path
TARGETS = Targets(
    PLAN, PATHS, config["plots"]["overlay_frames"], config["metrics_file"]
)
MODE = staging_mode(workflow.storage_settings.default_storage_provider)
CODE = CodeGraph(workflow.basedir)
PINNED = PLAN.pinned_paths()  # restored together by one pull_pinned job
MODEL_NAMES = sorted({m for b in PLAN.benchmarks.values() for m in b.models})
KEYS = ContentKeys(PLAN, config["models"], INFERENCE, DigestCache(FILE_DIGESTS))
if MODE.keyed and workflow.is_main_process:
    try:
        KEYS.identify_present()
    except SegbenchError as error:
        raise WorkflowError(f"segbench: {error}") from None


wildcard_constraints:
    benchmark=one_of(sorted(PLAN.benchmarks)),
    split=one_of(sorted({s for b in PLAN.benchmarks.values() for s in b.splits})),
    model=one_of(MODEL_NAMES + [FLOOR]),
    shard=r"\d+",


def per_job(function):
    """An input or parameter function with its signature read once (Snakemake reads it at each
    of its calls, twice per job: docs/performance.md)."""
    overwrite_function_params(function, inspect.signature(function).parameters)
    return function


def bench(w):
    return PLAN.benchmarks[w.benchmark]


def code(command):
    """The digest of the source files `segbench COMMAND` runs (segbench.workflow.codedeps)."""
    return CODE.command_key(COMMAND[command].step)


def restored(p):
    """The path `p` of an input, once there: while a DVC-pinned input is missing, the job waits
    for the pull of the missing pins (planned once pull_pinned has run); it is no input of the
    job, so that where the bytes lie never re-runs one."""
    if MODE.restores_pins() and p in PINNED and not os.path.exists(p):
        checkpoints.pull_pinned.get()
    return p


def record(name, *wildcards):
    """Input function: a record of an identity job (or the audit) as an `ancient` input: what
    the record says is in the content keys, its file's times never count."""
    return per_job(lambda w: ancient(path(name, **{n: w[n] for n in wildcards})))


frame_index = record("frames", "benchmark")
dataset_record = record("dataset", "benchmark")
dataset_manifest = record("manifest", "benchmark")
audit_gate = record("audit", "benchmark")  # a failed audit has no output
identity_record = record("identity", "benchmark", "model")


def key_of(step, w):
    """The content key of a job of `step` (keys.ContentKeys.of), once the bytes it identifies
    are there."""
    if w.get("model", FLOOR) != FLOOR:
        restored(str(PLAN.model(w.model).path))
    if step != "model":
        restored(bench(w).data)
    return KEYS.of(step, w)


def content(step):
    """Input function: the marker of the job's content key, `ancient` (keys.py says why); none
    where staged (no keys)."""
    return per_job(
        lambda w: ancient(marker(slot(step, w), key_of(step, w))) if MODE.keyed else []
    )


key_records = per_job(lambda w: slot_records(w.slot, PATHS))


def forget_metadata(marker_path):
    """Snakemake's record of a marker removed by keys.settle."""
    workflow.persistence.cleanup_metadata(IOFile(marker_path))


@per_job
def definition_files(w):
    """Every file the benchmark definition is built from (itself, label spaces, mappings)."""
    return list(bench(w).definition_files)


def dataset_listed(w, scope):
    """The dataset files a job reads (staging.dataset_files), listed only when staged."""
    return MODE.listed_dataset(bench(w), scope, w.get("split"), w.get("shard"))


def dataset_inputs(scope):
    return per_job(lambda w: dataset_listed(w, scope))


def model_files(w):
    """The model's files as inputs (staged only: staging.listed_model)."""
    return MODE.listed_model(str(PLAN.model(w.model).path))


def manifest_file(w):
    """The config's manifest as an input (staged only: its bytes are in the dataset's key)."""
    return MODE.listed_manifest(bench(w).manifest)


@per_job
def model_path(w, input):
    """--model-path: the model where it lies (staged: its local copy)."""
    return (
        arguments.as_list(input.model)[0]
        if input.model
        else restored(str(PLAN.model(w.model).path))
    )


def masks_input(scope):
    """Input function: the masks a job reads ("shard": its shard's, "split": all; Targets.masks):
    a predictions folder's own are no input where its key stands for them (staging.listed_model).
    """

    def masks(w):
        if TARGETS.made_elsewhere(w.model):
            return MODE.listed_model(str(PLAN.model(w.model).path))
        shards = [w.shard] if scope == "shard" else None
        return TARGETS.masks(w.benchmark, w.split, w.model, shards)

    return per_job(masks)


@per_job
def masks_paths(w, input):
    """--predictions: the masks' folders (a predictions folder where it lies, or its local copy)."""
    if TARGETS.made_elsewhere(w.model) and not input.predictions:
        return [restored(str(PLAN.model(w.model).path))]
    return arguments.as_list(input.predictions)


model_counts = per_job(lambda w: TARGETS.counts(w.benchmark, w.split, w.model))
# The inputs of the jobs comparing a model with its baseline and the floor.
COMPARED = dict(
    counts=model_counts,
    baseline=lambda w: TARGETS.baseline_counts(w.benchmark, w.split, w.model),
    floor=lambda w: TARGETS.floor_counts(w.benchmark, w.split, w.model),
    definition=definition_files,
)


shard_total = per_job(lambda w: bench(w).shard_total(w.split))


def data_argument(scope):
    """--data: the dataset folder, or its local copy found from the job's `data` input."""
    return per_job(
        lambda w, input: arguments.data_folder(
            bench(w).data, dataset_listed(w, scope), arguments.as_list(input.data)
        )
    )


@per_job
def scored_argument(w, input):
    """What a score job scores: the floor, or the model's masks with its identity."""
    if "model" not in w.keys():
        return arguments.scored_arguments(None, None)
    return arguments.scored_arguments(input.identity, masks_paths(w, input)[0])


def comparison_argument(w, input):
    return arguments.comparison_arguments(input.baseline, input.floor)
