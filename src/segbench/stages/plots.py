"""Figures from stored confusion counts (never re-scoring): per-class IoU bars, row-normalised
confusion heatmaps, per-frame fraction scatter (e.g. painted coverage).

The data behind each figure is computed by pure functions (`iou_rows`, `confusion_rows`,
`fraction_points`); `render_*` draw them with matplotlib's Agg backend at fixed sizes and write
deterministic PNGs (no creation date or software version in the metadata).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..core import metrics  # noqa: E402
from ..core.benchmark import Benchmark, ReportSpec, applies  # noqa: E402
from ..core.bootstrap import Subject  # noqa: E402
from ..core.evaluation import report_matrix  # noqa: E402
from ..core.labels import LabelSpace, no_class_column  # noqa: E402
from ..core.metric_registry import MetricSpec, with_figure  # noqa: E402
from ..io.fileio import atomic_path

DPI = 100
# (width, height) in inches; the PNGs are these times DPI pixels, whatever they show.
SIZES = {"iou": (10.0, 5.0), "confusion": (9.0, 8.0), "fraction": (6.0, 6.0)}
SERIES_COLOURS = {"model": "#1f77b4", "baseline": "#ff7f0e", "floor": "#7f7f7f"}
MAX_COLUMNS = 40  # a model space wider than this shows only the columns that received pixels


def pixel_size(kind: str) -> tuple[int, int]:
    w, h = SIZES[kind]
    return int(round(w * DPI)), int(round(h * DPI))


def save(fig: plt.Figure, path: Path) -> None:
    with atomic_path(path) as partial:
        fig.savefig(partial, dpi=DPI, format="png", metadata={"Software": None})
    plt.close(fig)


def figure(kind: str) -> plt.Figure:
    return plt.figure(figsize=SIZES[kind], dpi=DPI)


def render_not_applicable(kind: str, title: str, reason: str, path: Path) -> None:
    """A figure of the expected size saying why there is nothing to show."""
    fig = figure(kind)
    fig.text(0.5, 0.6, title, ha="center", va="center", fontsize=12, wrap=True)
    fig.text(0.5, 0.45, reason, ha="center", va="center", fontsize=10, color="#555555", wrap=True)
    save(fig, path)


# --- per-class IoU -------------------------------------------------------------------------


def evaluated_classes(report: ReportSpec) -> list[int]:
    return [c.id for c in report.space.classes if c.name not in report.exclude_classes]


def class_iou(benchmark: Benchmark, report: ReportSpec, subject: Subject) -> np.ndarray | None:
    """Per-class IoU of the report's space (NaN for an empty union); None when it does not apply."""
    if not applies(report, benchmark, subject.space):
        return None
    return metrics.iou(report_matrix(benchmark, report, subject.space, subject.counts))


def iou_rows(benchmark: Benchmark, report: ReportSpec, subjects: Mapping[str, Subject | None]) -> list[dict[str, Any]]:
    """One row per (role, class): role is model / baseline / floor."""
    rows = []
    for role, subject in subjects.items():
        if subject is None:
            continue
        ious = class_iou(benchmark, report, subject)
        if ious is None:
            continue
        for c in evaluated_classes(report):
            value = float(ious[c])
            rows.append({"role": role, "model": subject.name, "class": report.space.classes[c].name,
                         "iou": None if np.isnan(value) else round(value, 6)})
    return rows


def render_iou(report: ReportSpec, rows: Sequence[dict[str, Any]], title: str, path: Path) -> None:
    classes = [report.space.classes[c].name for c in evaluated_classes(report)]
    roles = list(dict.fromkeys(r["role"] for r in rows))
    fig = figure("iou")
    ax = fig.add_axes((0.07, 0.25, 0.9, 0.65))
    width = 0.8 / max(1, len(roles))
    x = np.arange(len(classes))
    for i, role in enumerate(roles):
        by_class = {r["class"]: r for r in rows if r["role"] == role}
        values = [by_class[c]["iou"] if by_class.get(c) and by_class[c]["iou"] is not None else 0.0 for c in classes]
        name = next(r["model"] for r in rows if r["role"] == role)
        ax.bar(x + (i - (len(roles) - 1) / 2) * width, values, width, label=f"{name} ({role})",
               color=SERIES_COLOURS.get(role))
    ax.set_xticks(x, classes, rotation=45, ha="right", fontsize=8 if len(classes) < 20 else 6)
    ax.set_ylim(0, 1)
    ax.set_ylabel("IoU")
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    save(fig, path)


# --- confusion -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Confusion:
    matrix: np.ndarray  # (rows, cols) pixel counts
    rows: list[str]
    cols: list[str]
    space: str  # the label space the rows (and, when mapped, the columns) are in


NO_CLASS_COLUMN = "(no class)"  # the column of pixels predicted void: no class, a miss


def confusion_in(benchmark: Benchmark, space: LabelSpace, subject: Subject) -> Confusion:
    """Ground truth mapped into `space` (rows) by predictions mapped into it (columns), or, when the
    model's space does not map into it, by the model's own classes (those that received pixels,
    when there are many); the pixels predicted as no class (void) are a last column, shown when
    it holds any."""
    rows = benchmark.raw_lut(benchmark.ground_truth, space)
    mapped = benchmark.reaches(subject.space, space)
    if mapped:
        cols, names = benchmark.prediction_columns(subject.space, space), space.names
    else:
        cols, names = no_class_column(subject.space.prediction_lut(), subject.space.size), subject.space.names
    matrix = subject.counts.reduced(rows, cols, space.size, len(names) + 1)
    keep = np.arange(len(names))
    if not mapped and len(names) > MAX_COLUMNS:
        keep = np.flatnonzero(matrix[:, :-1].sum(axis=0))[:MAX_COLUMNS]
    if matrix[:, -1].any():
        keep = np.append(keep, len(names))
    return Confusion(matrix[:, keep], space.names, [[*names, NO_CLASS_COLUMN][i] for i in keep], space.name)


def row_normalised(matrix: np.ndarray) -> np.ndarray:
    return metrics.safe_ratio(matrix, matrix.sum(axis=1, keepdims=True))


def confusion_rows(confusion: Confusion) -> list[dict[str, Any]]:
    """Long form for DVC plots: one row per cell with pixels or a ground-truth class."""
    normalised = row_normalised(confusion.matrix)
    out = []
    for i, actual in enumerate(confusion.rows):
        for j, predicted in enumerate(confusion.cols):
            out.append({"actual": actual, "predicted": predicted, "pixels": int(confusion.matrix[i, j]),
                        "fraction": 0.0 if np.isnan(normalised[i, j]) else round(float(normalised[i, j]), 6)})
    return out


def render_confusion(confusion: Confusion, title: str, path: Path) -> None:
    normalised = row_normalised(confusion.matrix)
    fig = figure("confusion")
    ax = fig.add_axes((0.2, 0.2, 0.68, 0.7))
    image = ax.imshow(np.nan_to_num(normalised), vmin=0, vmax=1, cmap="viridis", aspect="auto",
                      interpolation="nearest")
    small = len(confusion.cols) <= 12 and len(confusion.rows) <= 12
    ax.set_xticks(range(len(confusion.cols)), confusion.cols, rotation=60, ha="right", fontsize=8 if small else 5)
    ax.set_yticks(range(len(confusion.rows)), confusion.rows, fontsize=8 if small else 5)
    ax.set_xlabel("prediction")
    ax.set_ylabel("ground truth")
    ax.set_title(title, fontsize=11)
    if small:
        for i in range(len(confusion.rows)):
            for j in range(len(confusion.cols)):
                value = normalised[i, j]
                if not np.isnan(value) and value >= 0.005:
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                            color="white" if value < 0.6 else "black")
    colourbar = fig.add_axes((0.9, 0.2, 0.025, 0.7))
    fig.colorbar(image, cax=colourbar, label="fraction of the ground-truth row")
    save(fig, path)


# --- per-frame fractions (painted coverage) ------------------------------------------------


def fraction_specs(benchmark: Benchmark) -> list[tuple[ReportSpec, MetricSpec]]:
    return with_figure(benchmark.reports, "fraction")


def fraction_points(
    benchmark: Benchmark, report: ReportSpec, spec: MetricSpec, subject: Subject
) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """(frame ids, ground-truth fraction, predicted fraction) of the frames the metric covers, as
    metrics.fraction_mae defines them; None when the report does not apply to the model."""
    if not applies(report, benchmark, subject.space):
        return None
    space = report.space
    stack = report_matrix(benchmark, report, subject.space, subject.counts, per_frame=True)
    covered, gt_frac, pred_frac = metrics.class_fractions(stack, *(
        np.isin(np.arange(space.size), [space.id_of(n) for n in spec.options[key]]) for key in ("numerator", "denominator")))
    ids = [f for f, c in zip(subject.counts.frame_ids, covered) if c]
    return ids, gt_frac, pred_frac


def render_fraction(series: Mapping[str, tuple[str, np.ndarray, np.ndarray]], spec: MetricSpec, title: str,
                    path: Path) -> None:
    """series: role -> (model name, ground-truth fractions, predicted fractions)."""
    fig = figure("fraction")
    ax = fig.add_axes((0.14, 0.12, 0.8, 0.78))
    ax.plot([0, 1], [0, 1], color="#999999", linewidth=1, linestyle="--", label="perfect")
    for role, (name, gt, pred) in series.items():
        mae = float(np.abs(pred - gt).mean()) if len(gt) else float("nan")
        ax.scatter(gt, pred, s=22, alpha=0.8, color=SERIES_COLOURS.get(role),
                   label=f"{name} ({role}): MAE {mae:.3f}, {len(gt)} frames")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    numerator = "+".join(spec.options["numerator"])
    denominator = "+".join(spec.options["denominator"])
    ax.set_xlabel(f"ground truth: {numerator} / ({denominator})", fontsize=9)
    ax.set_ylabel(f"prediction: {numerator} / ({denominator})", fontsize=9)
    ax.set_title(title, fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    save(fig, path)
