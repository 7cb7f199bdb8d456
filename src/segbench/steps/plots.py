"""Figures from stored counts: every figure of one evaluation in one pass (per-class IoU,
confusion heatmaps, per-frame fractions: core.figures); and the tables `dvc plots` reads,
gathered from the per-evaluation CSVs."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..core.benchmark import Benchmark
from ..core.bootstrap import Subject
from ..core.figures import GROUND_TRUTH, figures_of
from ..io.fileio import write_csv_rows
from ..stages import plots
from .comparison import comparison_subjects
from .counts import counts_split


def figures(benchmark: Benchmark, counts: Sequence[Path], baseline: Sequence[Path], floor: Sequence[Path],
            folder: Path) -> list[Path]:
    """Every figure of one evaluation (core.figures) into `folder`, from the counts read once: the
    model's, beside its baseline's and the floor's where a figure compares them."""
    subjects = comparison_subjects(benchmark, counts, baseline, floor)
    split = counts_split(counts[0])
    draw = {"iou": plot_iou, "confusion": plot_confusion, "fraction": plot_fraction}
    written = []
    for figure in figures_of(benchmark):
        draw[figure.kind](benchmark, figure.key, subjects, split, folder / figure.png,
                          None if figure.csv is None else folder / figure.csv)
        written += [folder / name for name in (figure.png, figure.csv) if name is not None]
    return written


def plot_iou(benchmark: Benchmark, report_key: str, subjects: Mapping[str, Subject | None], split: str,
             png: Path, csv_path: Path) -> None:
    report = next(r for r in benchmark.reports if r.key == report_key)
    rows = plots.iou_rows(benchmark, report, subjects)
    title = f"{benchmark.title}: per-class IoU in {report.space.name} ({report.key})"
    if any(r["role"] == "model" for r in rows):
        plots.render_iou(report, rows, title, png)
    else:
        plots.render_not_applicable("iou", title, f"report '{report.key}' does not apply to model "
                                    f"'{subjects['model'].name}' ({subjects['model'].space.name})", png)
    write_csv_rows(csv_path, [{"series": f"{benchmark.name}/{split}/{r['model']}/{report.key}/{r['class']}",
                               "benchmark": benchmark.name, "split": split, "report": report.key, **r} for r in rows])


def plot_confusion(benchmark: Benchmark, space_key: str, subjects: Mapping[str, Subject | None], split: str,
                   png: Path, csv_path: Path) -> None:
    subject = subjects["model"]
    if space_key == GROUND_TRUTH:
        space = benchmark.ground_truth
    else:
        space = next(r for r in benchmark.reports if r.key == space_key).space
    confusion = plots.confusion_in(benchmark, space, subject)
    plots.render_confusion(confusion, f"{subject.name}: confusion in {space.name} (rows normalised)", png)
    matrix = f"{benchmark.name}/{split}/{subject.name}/{space_key}"
    write_csv_rows(csv_path, [{"matrix": matrix, **r} for r in plots.confusion_rows(confusion)])


def plot_fraction(benchmark: Benchmark, metric: str, subjects: Mapping[str, Subject | None], split: str,
                  png: Path, csv_path: None) -> None:
    report, spec = next((r, m) for r, m in plots.fraction_specs(benchmark) if f"{r.key}.{m.key}" == metric)
    series = {}
    for role in ("model", "baseline"):
        subject = subjects[role]
        points = None if subject is None else plots.fraction_points(benchmark, report, spec, subject)
        if points is not None:
            series[role] = (subject.name, points[1], points[2])
    title = f"{benchmark.title}: {spec.key} per frame"
    if "model" in series:
        plots.render_fraction(series, spec, title, png)
    else:
        plots.render_not_applicable("fraction", title, f"'{metric}' does not apply to model "
                                    f"'{subjects['model'].name}' ({subjects['model'].space.name})", png)


def plot_data(iou: Sequence[Path], confusion: Sequence[Path], iou_out: Path, confusion_out: Path) -> None:
    """The models' per-class IoU rows (not the baseline's or floor's beside them) and every confusion row."""
    for sources, out, keep in ((iou, iou_out, lambda row: row["role"] == "model"),
                               (confusion, confusion_out, lambda row: True)):
        rows: list[dict] = []
        for path in sources:
            with open(path, newline="") as handle:
                rows.extend(row for row in csv.DictReader(handle) if keep(row))
        write_csv_rows(out, rows)
