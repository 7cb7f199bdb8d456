"""The figures of one evaluation (a model on a split), as a table derived from the benchmark: a
per-class IoU bar chart per report, a confusion heatmap in the ground-truth space and in each
report's space, and a per-frame fraction plot per fraction metric. The figures step writes them
and the workflow lists them from this one table, so the two never name a file differently."""

from __future__ import annotations

from dataclasses import dataclass

from .benchmark import Benchmark
from .metric_registry import with_figure

GROUND_TRUTH = "ground-truth"  # the confusion heatmap's key for the benchmark's ground-truth space
# kind: (what a figure of that kind is keyed by, what it is called)
KINDS = {"iou": ("report", "per-class IoU"), "confusion": ("space", "confusion"),
         "fraction": ("metric", "per-frame fraction")}


@dataclass(frozen=True)
class Figure:
    kind: str  # "iou", "confusion" or "fraction"
    key: str  # the report, the space (a report key or GROUND_TRUTH), or REPORT.METRIC

    @property
    def png(self) -> str:
        return f"{self.kind}-{self.key}.png"

    @property
    def csv(self) -> str | None:
        """The plotted values beside the PNG (what `dvc plots` reads); a fraction plot has none."""
        return None if self.kind == "fraction" else f"{self.kind}-{self.key}.csv"


def figures_of(benchmark: Benchmark) -> list[Figure]:
    reports = [r.key for r in benchmark.reports]
    return ([Figure("iou", r) for r in reports]
            + [Figure("confusion", x) for x in [GROUND_TRUTH, *reports]]
            + [Figure("fraction", f"{r.key}.{m.key}") for r, m in with_figure(benchmark.reports, "fraction")])


def figure_files(benchmark: Benchmark) -> list[str]:
    """Every file the figures step writes for one evaluation, in the table's order."""
    return [name for f in figures_of(benchmark) for name in (f.png, f.csv) if name is not None]
