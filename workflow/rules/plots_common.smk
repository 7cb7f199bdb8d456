# What the plot, overlay and uncertainty rules (plots.smk) read and write: settings, code
# dependencies, and the files of each (benchmark, split, model).
from segbench.metric_registry import with_figure

BOOTSTRAP = config["bootstrap"]
OVERLAY_FRAMES = config["plots"]["overlay_frames"]
OVERLAY_KINDS = ("worst", "best")
CODE_EVALUATION = [
    f"{SOURCE}/evaluation.py",
    f"{SOURCE}/metrics.py",
    f"{SOURCE}/metric_registry.py",
    f"{SOURCE}/labels.py",
    f"{SOURCE}/definitions.py",
    f"{SOURCE}/countsio.py",
]
CODE_BOOTSTRAP = [f"{SOURCE}/bootstrap.py", f"{SOURCE}/cli.py"] + CODE_EVALUATION
CODE_PLOTS = [
    f"{SOURCE}/plots.py",
    f"{SOURCE}/bootstrap.py",
    f"{SOURCE}/cli.py",
] + CODE_EVALUATION
CODE_OVERLAYS = [
    f"{SOURCE}/overlays.py",
    f"{SOURCE}/scoring.py",
    f"{SOURCE}/maskio.py",
] + CODE_PLOTS
PLOT_CATEGORY = "{benchmark} ({split})"


def baseline_of(benchmark):
    """The benchmark's baseline: its first model with role: baseline (None without one)."""
    names = [
        m for m in PLAN.benchmarks[benchmark].models if PLAN.model(m).role == "baseline"
    ]
    return names[0] if names else None


def counts_of(w, model):
    return expand(
        f"{R}/{w.benchmark}/{w.split}/{model}/counts/shard-{{shard}}.parquet",
        shard=bench(w).shards(w.split),
    )


def baseline_counts(w):
    """The baseline's counts, unless this is the baseline or the floor itself."""
    baseline = baseline_of(w.benchmark)
    if baseline is None or w.model in (baseline, "floor"):
        return []
    return counts_of(w, baseline)


def floor_counts(w):
    return [] if w.model == "floor" else counts_of(w, "floor")


def comparison_arguments(w, input):
    arguments = ""
    if input.baseline:
        arguments += f"--baseline-counts {' '.join(input.baseline)} "
    if input.floor:
        arguments += f"--floor-counts {' '.join(input.floor)}"
    return arguments


def prediction_folders(w):
    """Every folder holding the model's masks for the split."""
    if PLAN.model(w.model).kind == "predictions":
        return model_inputs(w.model)
    return expand(
        f"{R}/{w.benchmark}/{w.split}/{w.model}/predictions/shard-{{shard}}",
        shard=bench(w).shards(w.split),
    )


def split_files(w):
    """The images and labels of the split (when jobs stage their inputs, see common.smk), once
    the pinned dataset is restored."""
    b = bench(w)
    if not STAGE_DATASET_FILES:
        return pinned(b.data)
    frames = b.split_frames(w.split)
    return pinned(b.data) + [f.image for f in frames] + [f.label for f in frames]


def overlay_files(folder):
    return [
        f"{folder}/{kind}-{rank}.png"
        for kind in OVERLAY_KINDS
        for rank in range(1, OVERLAY_FRAMES + 1)
    ]


def plot_files(b, s, m):
    """Every figure of one (benchmark, split, model)."""
    definition = PLAN.benchmarks[b].benchmark
    folder = f"{R}/{b}/{s}/{m}"
    spaces = ["ground-truth"] + [r.key for r in definition.reports]
    fractions = [
        f"{r.key}.{x.key}" for r, x in with_figure(definition.reports, "fraction")
    ]
    return (
        [f"{folder}/plots/iou-{r.key}.png" for r in definition.reports]
        + [f"{folder}/plots/confusion-{space}.png" for space in spaces]
        + [f"{folder}/plots/fraction-{metric}.png" for metric in fractions]
        + overlay_files(f"{folder}/overlays")
    )


def plot_data_files(kind):
    """The per-model CSVs behind the IoU bars or the confusion heatmaps."""
    files = []
    for b, s, m in PLAN.evaluations():
        definition = PLAN.benchmarks[b].benchmark
        if kind == "iou":
            names = [f"iou-{r.key}" for r in definition.reports]
        else:
            names = ["confusion-ground-truth"] + [
                f"confusion-{r.key}" for r in definition.reports
            ]
        files += [f"{R}/{b}/{s}/{m}/plots/{name}.csv" for name in names]
    return files


def uncertainty_files():
    """The bootstrap of every model and of each split's floor."""
    files = [f"{R}/{b}/{s}/{m}/uncertainty.json" for b, s, m in PLAN.evaluations()]
    floors = {f"{R}/{b}/{s}/floor/uncertainty.json" for b, s, _ in PLAN.evaluations()}
    return files + sorted(floors)


def plot_outputs():
    files = [f for b, s, m in PLAN.evaluations() for f in plot_files(b, s, m)]
    return files + [
        f"{R}/plots/iou.csv",
        f"{R}/plots/confusion.csv",
        f"{R}/leaderboard.html",
    ]
