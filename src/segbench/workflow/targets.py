"""The files the workflow makes, listed from the plan: each (benchmark, split, model)'s counts,
figures and records, and the lists the gathering rules and the default target read. The
predictions-folder case is decided here once (`made_elsewhere`, `masks`): such a model's own files
are its masks, where any other model's are its inference shards."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.figures import figure_files, figures_of
from .paths import FLOOR, ResultPaths
from .plan import Plan
OVERLAY_KINDS = ("worst", "best")
LEADERBOARD_FORMATS = ("csv", "md", "json")


class Targets:
    def __init__(self, plan: Plan, paths: ResultPaths, overlay_frames: int, metrics_file: str):
        self.plan = plan
        self.paths = paths
        self.overlay_frames = overlay_frames
        self.metrics_file = metrics_file

    # --- one (benchmark, split, model) ---------------------------------------------------------

    def counts(self, benchmark: str, split: str, model: str) -> list[str]:
        """The model's (or the floor's) counts, one file per shard of the split."""
        return [self.paths.path("counts", benchmark=benchmark, split=split, model=model, shard=s)
                for s in self.plan.benchmarks[benchmark].shards(split)]

    def baseline(self, benchmark: str) -> str | None:
        """The benchmark's baseline: its first model with role: baseline (None without one)."""
        names = [m for m in self.plan.benchmarks[benchmark].models if self.plan.model(m).role == "baseline"]
        return names[0] if names else None

    def baseline_counts(self, benchmark: str, split: str, model: str) -> list[str]:
        """The baseline's counts, to compare the model with: none for the baseline or the floor itself."""
        baseline = self.baseline(benchmark)
        if baseline is None or model in (baseline, FLOOR):
            return []
        return self.counts(benchmark, split, baseline)

    def floor_counts(self, benchmark: str, split: str, model: str) -> list[str]:
        return [] if model == FLOOR else self.counts(benchmark, split, FLOOR)

    def made_elsewhere(self, model: str) -> bool:
        """Whether the model is a folder of masks made elsewhere (kind: predictions): its files are
        its masks and its identity covers them; nothing is inferred for it."""
        return self.plan.model(model).kind == "predictions"

    def masks(self, benchmark: str, split: str, model: str, shards: Sequence[int | str] | None = None) -> list[str]:
        """The model's masks for these shards of the split (all shards: None): the folders of its
        inference shards, or a predictions folder's own path (made_elsewhere)."""
        if self.made_elsewhere(model):
            return [str(self.plan.model(model).path)]
        if shards is None:
            shards = self.plan.benchmarks[benchmark].shards(split)
        return [self.paths.path("predictions", benchmark=benchmark, split=split, model=model, shard=s) for s in shards]

    def overlay_files(self, folder: str) -> list[str]:
        return [f"{folder}/{kind}-{rank}.png" for kind in OVERLAY_KINDS for rank in range(1, self.overlay_frames + 1)]

    def figures(self, benchmark: str, split: str, model: str) -> list[str]:
        """The files of one (benchmark, split, model)'s figures job, inside its folder `plots`."""
        folder = self.paths.path("plots", benchmark=benchmark, split=split, model=model)
        return [f"{folder}/{name}" for name in figure_files(self.plan.benchmarks[benchmark].benchmark)]

    # --- over every (benchmark, split, model) ----------------------------------------------------

    def each(self, name: str) -> list[str]:
        """Result `name` of every (benchmark, split, model) the config asks for."""
        return [self.paths.path(name, benchmark=b, split=s, model=m) for b, s, m in self.plan.evaluations()]

    def each_floor(self, name: str) -> list[str]:
        """Result `name` of the floor of every (benchmark, split), once each, sorted."""
        return sorted({self.paths.path(name, benchmark=b, split=s, model=FLOOR) for b, s, _ in self.plan.evaluations()})

    def plot_data_files(self, kind: str) -> list[str]:
        """The per-evaluation CSVs behind the IoU bars ("iou") or the confusion heatmaps ("confusion")."""
        return [f"{self.paths.path('plots', benchmark=b, split=s, model=m)}/{figure.csv}"
                for b, s, m in self.plan.evaluations()
                for figure in figures_of(self.plan.benchmarks[b].benchmark) if figure.kind == kind]

    def leaderboard_inputs(self) -> dict[str, list[str]]:
        """What the results table is made of: every record and metrics document, with the floors'
        metrics, every model's and floor's bootstrap, every model's slices."""
        return {
            "submissions": self.each("submission"),
            "floors": self.each_floor("metrics"),
            "metrics": self.each("metrics"),
            "uncertainty": self.each("uncertainty") + self.each_floor("uncertainty"),
            "slices": self.each("slices"),
        }

    def leaderboard_outputs(self) -> list[str]:
        stem = self.paths.path("leaderboard")
        return [f"{stem}.{ext}" for ext in LEADERBOARD_FORMATS] + [self.metrics_file]

    def plot_outputs(self) -> list[str]:
        """What the default target asks for beyond the tables: each evaluation's figures folder and
        overlays, the gathered plot data, the results page."""
        overlays = [f for b, s, m in self.plan.evaluations()
                    for f in self.overlay_files(self.paths.path("overlays", benchmark=b, split=s, model=m))]
        return self.each("plots") + overlays + [self.paths.path("plot_data_iou"), self.paths.path("plot_data_confusion"),
                                                f"{self.paths.path('leaderboard')}.html"]
