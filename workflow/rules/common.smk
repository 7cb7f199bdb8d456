# Shared by all rules: the plan (what to compute), paths, and which code each step depends on.
import os
from pathlib import Path

from segbench.config import check_config
from segbench.errors import SegbenchError
from segbench.plan import Plan, dvc_file

# Validates against workflow/schemas/config.schema.json (naming the key and what was expected),
# fills the schema's defaults, and checks that the benchmarks and models named exist.
try:
    check_config(config, "config/config.yaml")
    PLAN = Plan(config)
    PLAN.check_pinned_inputs()
except SegbenchError as error:
    raise WorkflowError(f"segbench: {error}") from None

R = config["results"]
LOGS = config["logs"]  # outside results/, so the results hold only reproducible bytes
ENV = "../../envs/segbench.yaml"
INFERENCE = config["inference"]
# GPUs for inference jobs only when the config asks for them (gpu_model then narrows the request).
INFERENCE_GPU = {"gpu": INFERENCE["gpu"]} | (
    {"gpu_model": INFERENCE["gpu_model"]}
    if INFERENCE["gpu"] and INFERENCE.get("gpu_model")
    else {}
)

# A code change re-runs exactly the steps that use that code.
SOURCE = "src/segbench"
CODE_DATASETS = sorted(str(p) for p in Path(f"{SOURCE}/datasets").glob("*.py"))
CODE_AUDIT = [
    f"{SOURCE}/audit.py",
    f"{SOURCE}/idd/masks.py",
    f"{SOURCE}/maskio.py",
] + CODE_DATASETS
CODE_INFERENCE = [
    f"{SOURCE}/inference.py",
    f"{SOURCE}/inference_kernels.py",
    f"{SOURCE}/inference_modes.py",
    f"{SOURCE}/maskio.py",
] + sorted(str(p) for p in Path(f"{SOURCE}/models").glob("*.py"))
CODE_SCORING = [
    f"{SOURCE}/scoring.py",
    f"{SOURCE}/cellcount.py",
    f"{SOURCE}/boundary.py",
    f"{SOURCE}/evaluation.py",  # which boundary bands to count (band_plan)
    f"{SOURCE}/metric_registry.py",
    f"{SOURCE}/confusion.py",
    f"{SOURCE}/countsio.py",
    f"{SOURCE}/maskio.py",
]
CODE_METRICS = [
    f"{SOURCE}/metrics.py",
    f"{SOURCE}/metric_registry.py",
    f"{SOURCE}/evaluation.py",
    f"{SOURCE}/labels.py",
    f"{SOURCE}/definitions.py",
]
CODE_SUBMISSION = [
    f"{SOURCE}/submission.py",
    f"{SOURCE}/evaluation.py",  # which results are the record's spec fields
    "workflow/schemas/submission.schema.json",
]
CODE_REPORT = [f"{SOURCE}/leaderboard.py", f"{SOURCE}/table.py"]


wildcard_constraints:
    benchmark="[a-z0-9][a-z0-9-]*",
    split="[A-Za-z0-9_-]+",
    model="[A-Za-z0-9_.-]+",
    shard=r"\d+",


def bench(wildcards):
    return PLAN.benchmarks[wildcards.benchmark]


def definition_files(wildcards):
    """The benchmark definition and the label spaces it uses."""
    b = bench(wildcards).benchmark
    # Relative like every other input: an absolute path would become part of the storage key
    # under a default storage provider (Kubernetes profile) and change with the checkout's place.
    return [os.path.relpath(b.source)] + [
        f"config/label_spaces/{s}.yaml" for s in b.spaces
    ]


def pin_slug(path):
    return "--".join(Path(path).parts)


# One marker per pinned input, so that pinning a new model re-runs only what depends on it.
PINNED = {pin_slug(p): p for p in PLAN.pinned_paths()}


def pinned(path):
    """Wait for a DVC-pinned input to be restored (a no-op when it is on disk already)."""
    if pin_slug(path) not in PINNED:
        return []
    return [checkpoints.pull_pinned.get(pin=pin_slug(path)).output[0]]


def model_inputs(name):
    """A model's files (file or folder) and its .dvc pin, so a re-pinned model re-runs its jobs."""
    path = str(PLAN.model(name).path)
    pin = [dvc_file(path)] if Path(dvc_file(path)).is_file() else []
    return pinned(path) + [path] + pin


# How jobs depend on the dataset's files. Without a shared filesystem (a default storage
# provider, as in the Kubernetes profile) a job sees only the files listed as its inputs, so
# every job lists each file it reads. On a shared filesystem (local, SLURM) they need no staging,
# and listing them costs Snakemake time per file at every start (20,000 frames: over 200,000
# input files, most of a dry run's time). There, dataset_identity alone watches the dataset,
# through a fingerprint of every file's path, size and modification time (a param: a changed file
# changes it and re-runs the job), and every job that reads frames runs after the audit, which
# runs after dataset_identity: a changed dataset re-runs them all, as listed files would.
STAGE_DATASET_FILES = workflow.storage_settings.default_storage_provider is not None


def dataset_files(wildcards):
    """The dataset, once its pinned copy is restored: every file when jobs stage their inputs."""
    b = bench(wildcards)
    return pinned(b.data) + (b.dataset_files() if STAGE_DATASET_FILES else [])


def dataset_fingerprint(wildcards):
    """What stands for the dataset's files where they are not inputs (see above)."""
    return "" if STAGE_DATASET_FILES else bench(wildcards).dataset_fingerprint()


def shard_files(wildcards, which):
    """The images or labels of one shard (when jobs stage their inputs), once the pinned dataset is restored."""
    b = bench(wildcards)
    if not STAGE_DATASET_FILES:
        return pinned(b.data)
    frames = b.shard_frames(wildcards.split, int(wildcards.shard))
    return pinned(b.data) + [getattr(f, which) for f in frames]


def shard_size(wildcards):
    """Frames per shard of the split: shard_size, or more to stay within max_shards."""
    return bench(wildcards).split_shard_size(wildcards.split)


def shard_count(wildcards):
    return len(bench(wildcards).shards(wildcards.split))


def predictions_input(wildcards):
    """The masks to score: an inference shard, or a predictions-folder model's own files."""
    spec = PLAN.model(wildcards.model)
    if spec.kind == "predictions":
        return model_inputs(wildcards.model)
    return f"{R}/{wildcards.benchmark}/{wildcards.split}/{wildcards.model}/predictions/shard-{wildcards.shard}"


def predictions_argument(wildcards, input):
    spec = PLAN.model(wildcards.model)
    return "" if spec.kind == "predictions" else f"--predictions {input.predictions}"


def cli(arguments):
    """The shell command of a rule: segbench, its output in the log, shown again on failure."""
    return f"segbench {arguments} > {{log}} 2>&1 || (cat {{log}} >&2; exit 1)"


def leaderboard_outputs():
    return [f"{R}/leaderboard.{ext}" for ext in ("csv", "md", "json")] + [
        config["metrics_file"]
    ]
