# The glue Snakemake needs: start-up, the objects the rules read, the rules' input and parameter
# functions. What they compute is in segbench.workflow (docs/ARCHITECTURE.md, "The workflow
# layer"). Re-runs follow content, never file times (docs/workflow.md, "What re-runs"): the jobs
# after the identity checkpoints read the identities as `ancient` inputs and carry what their
# result depends on in parameters named rerun_when_*, there only for that (Snakemake records each
# parameter of the wildcards alone and re-runs a job when one changes).
import inspect
from pathlib import Path

from snakemake.common import overwrite_function_params

from segbench.commands.cli import COMMAND
from segbench.errors import SegbenchError
from segbench.workflow import arguments
from segbench.workflow.arguments import cli
from segbench.workflow.codedeps import CodeGraph
from segbench.workflow.keys import ContentKeys, checkpoint_record
from segbench.workflow.paths import ResultPaths, one_of, pin_name
from segbench.workflow.plan import dvc_file
from segbench.workflow.staging import staging_mode
from segbench.workflow.startup import checked_plan, gpu_resources, recover_lock
from segbench.workflow.targets import FLOOR, Targets

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
KEYS = ContentKeys(config["models"], INFERENCE)
CODE = CodeGraph(workflow.basedir)
PINNED = {pin_name(p): p for p in PLAN.pinned_paths()}  # one marker per pinned input
MODEL_NAMES = sorted({m for b in PLAN.benchmarks.values() for m in b.models})


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


def after(checkpoint, name, **wildcards):
    """The output `name` of a checkpoint job as an `ancient` input; while it has to be made, the
    job waits (checkpoints.get raises: the job is planned once the checkpoint has run).
    """
    output = path(name, **wildcards)
    if MODE.waits_for_checkpoint(output):
        getattr(checkpoints, checkpoint).get(**wildcards)
    return ancient(output)


def output_of(checkpoint, name, *wildcards):
    """Input function: the output `name` of the checkpoint job of the job's `wildcards`."""
    return per_job(lambda w: after(checkpoint, name, **{n: w[n] for n in wildcards}))


frame_index = output_of("dataset_identity", "frames", "benchmark")
dataset_record = output_of("dataset_identity", "dataset", "benchmark")
dataset_manifest = output_of("dataset_identity", "manifest", "benchmark")
audit_gate = output_of("audit", "audit", "benchmark")  # a failed audit has no output
identity_record = output_of("checkpoint_identity", "identity", "benchmark", "model")


def pinned(p):
    """The marker of a DVC-pinned input restored (none where it is not pinned, or staged)."""
    if not MODE.restores_pins() or pin_name(p) not in PINNED:
        return []
    return [after("pull_pinned", "pinned", pin=pin_name(p))]


def restored(p):
    """The path `p` of an input, once restored: the job waits for its pull (pinned) till then."""
    pinned(p)
    return p


def pins(*of_what):
    """Input function: the restore markers of what a job reads (Targets.pinnable)."""
    return per_job(
        lambda w: [
            marker
            for p in TARGETS.pinnable(w.benchmark, getattr(w, "model", None), of_what)
            for marker in pinned(p)
        ]
    )


@per_job
def definition_files(w):
    """Every file the benchmark definition is built from (itself, label spaces, mappings)."""
    return list(bench(w).definition_files)


def dataset_listed(w, scope):
    """The dataset files a job reads (staging.dataset_files), listed only when staged."""
    split, shard = getattr(w, "split", None), getattr(w, "shard", None)
    return MODE.listed_dataset(bench(w), scope, split, shard)


def dataset_inputs(scope):
    return per_job(lambda w: dataset_listed(w, scope))


def model_files(w):
    """The model's files for its identity job, and its .dvc pin (a re-pin re-runs it)."""
    return MODE.model_files(restored(str(PLAN.model(w.model).path)))


@per_job
def model_input(w):
    """The model for the jobs that read it: its identity's hash is in their key, not its times."""
    return ancient(restored(str(PLAN.model(w.model).path)))


def masks_input(scope):
    """Input function: the masks a job reads ("shard": its shard's, "split": all; Targets.masks)."""

    def masks(w):
        files = TARGETS.masks(
            w.benchmark, w.split, w.model, [w.shard] if scope == "shard" else None
        )
        # a predictions folder's identity is in the key: its times do not count
        if TARGETS.made_elsewhere(w.model):
            return [ancient(restored(f)) for f in files]
        return files

    return per_job(masks)


model_counts = per_job(lambda w: TARGETS.counts(w.benchmark, w.split, w.model))
# The inputs of the jobs comparing a model with its baseline and the floor.
COMPARED = dict(
    counts=model_counts,
    baseline=lambda w: TARGETS.baseline_counts(w.benchmark, w.split, w.model),
    floor=lambda w: TARGETS.floor_counts(w.benchmark, w.split, w.model),
    definition=definition_files,
)


# Parameters: first the re-run triggers (of the wildcards alone, so recorded), then arguments.


def recorded(record, field):
    """A `field` of the record (a checkpoint's output) the input function `record` names."""
    return lambda w: MODE.rerun_trigger(lambda: checkpoint_record(record(w))[field])


dataset_id = recorded(dataset_record, "dataset_id")
checkpoint_sha256 = recorded(identity_record, "checkpoint_sha256")
shard_total = per_job(lambda w: bench(w).shard_total(w.split))


def dataset_fingerprint(w):
    """What stands for the dataset's files where they are not inputs (staging.py)."""
    return MODE.dataset_fingerprint(bench(w))


def shard_of(w):
    return w.split, int(w.shard), shard_total(w)


@per_job
def inference_key(w):
    return MODE.rerun_trigger(
        lambda: KEYS.inference(
            frame_index(w), identity_record(w), w.model, *shard_of(w)
        )
    )


@per_job
def scoring_key(w):
    model = w.model if "model" in w.keys() else None  # None: the floor
    return MODE.rerun_trigger(
        lambda: KEYS.scoring(
            frame_index(w), model and identity_record(w), model, *shard_of(w)
        )
    )


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
    masks = arguments.as_list(input.predictions)[0]
    return arguments.scored_arguments(input.identity, masks)


def comparison_argument(w, input):
    return arguments.comparison_arguments(input.baseline, input.floor)
