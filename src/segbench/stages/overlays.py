"""Qualitative overlays: a model's worst and best frames by per-frame IoU, as
image | ground truth | prediction | error map, in the label spaces' own palettes.

Frames are ranked from the stored counts (the mean IoU over the classes present in the frame's
ground truth, in the benchmark's first report space); only the few chosen frames are read from
disk. Void ground-truth pixels are drawn as grey hatching in every panel but the image.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from ..core import metrics  # noqa: E402
from ..core.benchmark import Benchmark, ReportSpec, applies  # noqa: E402
from ..core.bootstrap import Subject  # noqa: E402
from ..core.evaluation import report_matrix  # noqa: E402
from ..core.labels import LabelSpace  # noqa: E402
from .plots import DPI, save  # noqa: E402

SIZE = (16.0, 4.8)  # inches; the PNG is SIZE * DPI pixels
PANEL = 480  # panels are drawn at most this many pixels on their long side
CORRECT = np.array([46, 160, 67], np.uint8)
WRONG = np.array([214, 39, 40], np.uint8)
HATCH = (np.array([96, 96, 96], np.uint8), np.array([176, 176, 176], np.uint8))


def pixel_size() -> tuple[int, int]:
    return int(round(SIZE[0] * DPI)), int(round(SIZE[1] * DPI))


def ranking_report(benchmark: Benchmark, subject: Subject) -> ReportSpec:
    """The first report that applies to the model (the first report, for every model that has one)."""
    return next(r for r in benchmark.reports if applies(r, benchmark, subject.space))


@dataclass(frozen=True)
class FrameScore:
    frame_id: str
    miou: float
    pixel_accuracy: float
    pixels: int


def frame_scores(benchmark: Benchmark, report: ReportSpec, subject: Subject) -> list[FrameScore]:
    """Per-frame mIoU (classes present in the frame's ground truth) and pixel accuracy in the
    report's space; frames with no evaluated pixel are left out."""
    stack = report_matrix(benchmark, report, subject.space, subject.counts, per_frame=True)
    evaluated = report.evaluated()
    scores = []
    for frame_id, cm in zip(subject.counts.frame_ids, stack):
        value = metrics.mean_iou(cm, "present_in_ground_truth", evaluated)
        if not np.isnan(value):
            scores.append(FrameScore(frame_id, value, metrics.pixel_accuracy(cm), int(cm.sum())))
    return scores


def pick(scores: Sequence[FrameScore], count: int) -> tuple[list[FrameScore], list[FrameScore]]:
    """The `count` worst and best frames (ties broken by frame id, so the choice is stable)."""
    ordered = sorted(scores, key=lambda s: (s.miou, s.frame_id))
    return ordered[:count], list(reversed(ordered[-count:]))


def hatch(shape: tuple[int, int], cell: int = 6) -> np.ndarray:
    """(H, W, 3) diagonal grey stripes: how void is drawn."""
    yy, xx = np.indices(shape)
    stripes = ((xx + yy) // cell) % 2 == 0
    return np.where(stripes[..., None], HATCH[0], HATCH[1]).astype(np.uint8)


def colourise(mask: np.ndarray, space: LabelSpace, void: np.ndarray) -> np.ndarray:
    """Raw values through the space's lookup table (void, folding) to its class colours."""
    colours = np.array([c.color for c in space.classes], dtype=np.uint8)
    classes = space.raw_lut()[mask]
    out = colours[np.clip(classes, 0, None)]
    hidden = void | (classes < 0)
    out[hidden] = hatch(mask.shape)[hidden]
    return out


def error_map(image: np.ndarray, gt_class: np.ndarray, pred_class: np.ndarray, void: np.ndarray) -> np.ndarray:
    """The image dimmed, correct pixels tinted green, wrong ones red, void hatched."""
    grey = (image.mean(axis=2, keepdims=True) * 0.35).astype(np.uint8).repeat(3, axis=2)
    out = grey.copy()
    correct = (gt_class == pred_class) & ~void
    wrong = (gt_class != pred_class) & ~void
    out[correct] = (0.5 * grey[correct] + 0.5 * CORRECT).astype(np.uint8)
    out[wrong] = WRONG
    out[void] = hatch(gt_class.shape)[void]
    return out


def shrink(array: np.ndarray, nearest: bool) -> np.ndarray:
    h, w = array.shape[:2]
    scale = PANEL / max(h, w)
    if scale >= 1:
        return array
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    method = Image.Resampling.NEAREST if nearest else Image.Resampling.BILINEAR
    return np.asarray(Image.fromarray(array).resize(size, method))


def panels(
    benchmark: Benchmark, report: ReportSpec, subject: Subject, image: np.ndarray, gt: np.ndarray, pred: np.ndarray
) -> list[tuple[str, np.ndarray]]:
    """The four panels of one frame; gt (raw values) and pred (raw values in the model's space)
    at the same size, image resized to it."""
    gt_space = benchmark.ground_truth
    if image.shape[:2] != gt.shape:
        image = np.asarray(Image.fromarray(image).resize((gt.shape[1], gt.shape[0]), Image.Resampling.BILINEAR))
    gt_lut = gt_space.raw_lut()
    void = gt_lut[gt] < 0
    rows = benchmark.raw_lut(gt_space, report.space)
    cols = benchmark.raw_lut(subject.space, report.space)
    gt_class, pred_class = rows[gt], cols[pred]
    void |= gt_class < 0
    no_void = np.zeros_like(void)
    return [
        ("image", shrink(image, nearest=False)),
        (f"ground truth ({gt_space.name})", shrink(colourise(gt, gt_space, void), nearest=True)),
        (f"prediction ({subject.space.name})", shrink(colourise(pred, subject.space, no_void), nearest=True)),
        (f"error in {report.space.name} (red: wrong, hatched: void)",
         shrink(error_map(image, gt_class, pred_class, void), nearest=True)),
    ]


def render(
    frame_panels: Sequence[tuple[str, np.ndarray]], caption: str, legend: Sequence[tuple[str, tuple[int, int, int]]],
    path: Path,
) -> None:
    fig = plt.figure(figsize=SIZE, dpi=DPI)
    width = 0.98 / len(frame_panels)
    for i, (title, array) in enumerate(frame_panels):
        ax = fig.add_axes((0.01 + i * width, 0.2, width - 0.01, 0.68))
        ax.imshow(array, interpolation="nearest")
        ax.set_title(title, fontsize=9)
        ax.set_axis_off()
    fig.text(0.5, 0.95, caption, ha="center", va="center", fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=np.array(colour) / 255) for _, colour in legend]
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="#b0b0b0", hatch="///", edgecolor="#606060"))
    labels = [name for name, _ in legend] + ["void"]
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 12), fontsize=7, frameon=False)
    save(fig, path)


def caption(kind: str, rank: int, subject: Subject, score: FrameScore, report: ReportSpec, group: str | None) -> str:
    where = f" ({group})" if group else ""
    return (f"{subject.name}: {kind} #{rank} — frame {score.frame_id}{where} · per-frame mIoU "
            f"{score.miou:.3f} · pixel accuracy {score.pixel_accuracy:.3f} in {report.space.name} · "
            f"{score.pixels} evaluated pixels")


def legend_of(benchmark: Benchmark, gt: np.ndarray) -> list[tuple[str, tuple[int, int, int]]]:
    """Ground-truth classes present in the frame, with their colours."""
    lut = benchmark.ground_truth.raw_lut()
    present = sorted({int(v) for v in np.unique(lut[gt]) if v >= 0})
    return [(benchmark.ground_truth.classes[c].name, benchmark.ground_truth.classes[c].color) for c in present]
