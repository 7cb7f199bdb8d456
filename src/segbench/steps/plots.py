"""Figures from stored counts: per-class IoU, confusion heatmaps, per-frame fractions; and the
tables `dvc plots` reads, gathered from the per-model CSVs."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from ..core.benchmark import Benchmark
from ..errors import SegbenchError
from ..io.fileio import write_csv_rows
from ..stages import plots
from .comparison import comparison_subjects, read_subject
from .counts import counts_split


def plot_iou(benchmark: Benchmark, report_key: str, counts: Sequence[Path], baseline: Sequence[Path],
             floor: Sequence[Path], png: Path, csv_path: Path) -> None:
    report = next((r for r in benchmark.reports if r.key == report_key), None)
    if report is None:
        raise SegbenchError(f"benchmark '{benchmark.name}' has no report '{report_key}'")
    subjects = comparison_subjects(benchmark, counts, baseline, floor)
    rows = plots.iou_rows(benchmark, report, subjects)
    title = f"{benchmark.title}: per-class IoU in {report.space.name} ({report.key})"
    if any(r["role"] == "model" for r in rows):
        plots.render_iou(report, rows, title, png)
    else:
        plots.render_not_applicable("iou", title, f"report '{report.key}' does not apply to model "
                                    f"'{subjects['model'].name}' ({subjects['model'].space.name})", png)
    split = counts_split(counts[0])
    write_csv_rows(csv_path, [{"series": f"{benchmark.name}/{split}/{r['model']}/{report.key}/{r['class']}",
                               "benchmark": benchmark.name, "split": split, "report": report.key, **r} for r in rows])


def plot_confusion(benchmark: Benchmark, space_key: str, counts: Sequence[Path], png: Path, csv_path: Path) -> None:
    subject = read_subject(benchmark, counts)
    if space_key == "ground-truth":
        space = benchmark.ground_truth
    else:
        report = next((r for r in benchmark.reports if r.key == space_key), None)
        if report is None:
            raise SegbenchError(f"benchmark '{benchmark.name}' has no report '{space_key}' (nor is it 'ground-truth')")
        space = report.space
    confusion = plots.confusion_in(benchmark, space, subject)
    plots.render_confusion(confusion, f"{subject.name}: confusion in {space.name} (rows normalised)", png)
    matrix = f"{benchmark.name}/{counts_split(counts[0])}/{subject.name}/{space_key}"
    write_csv_rows(csv_path, [{"matrix": matrix, **r} for r in plots.confusion_rows(confusion)])


def plot_fraction(benchmark: Benchmark, metric: str, counts: Sequence[Path], baseline: Sequence[Path],
                  floor: Sequence[Path], png: Path) -> None:
    found = [(r, m) for r, m in plots.fraction_specs(benchmark) if f"{r.key}.{m.key}" == metric]
    if not found:
        raise SegbenchError(f"benchmark '{benchmark.name}' has no fraction_mae metric '{metric}'")
    report, spec = found[0]
    subjects = comparison_subjects(benchmark, counts, baseline, floor)
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
