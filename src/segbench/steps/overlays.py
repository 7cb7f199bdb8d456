"""Qualitative overlays as a step: the worst and best frames of a model, ranked from stored
counts, drawn as image | ground truth | prediction | error."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..core.benchmark import Benchmark
from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.archives import is_archive
from ..io.fileio import write_json
from ..io.maskio import read_mask, read_rgb
from ..records.intake import open_predictions, read_prediction
from ..stages import overlays
from ..stages.plots import render_not_applicable
from ..stages.scoring import evaluated_masks
from .comparison import read_subject


def draw_overlays(benchmark: Benchmark, frames: Sequence[Frame], counts: Sequence[Path], predictions: Sequence[Path],
                  per_kind: int, out_dir: Path) -> None:
    subject = read_subject(benchmark, counts)
    by_id = {f.frame_id: f for f in frames}
    report = overlays.ranking_report(benchmark, subject)
    worst, best = overlays.pick(overlays.frame_scores(benchmark, report, subject), per_kind)
    chosen = []
    for kind, picked in (("worst", worst), ("best", best)):
        for rank in range(1, per_kind + 1):
            path = out_dir / f"{kind}-{rank}.png"
            if rank > len(picked):
                render_not_applicable("iou", f"{subject.name}: {kind} #{rank}", "not enough frames", path)
                continue
            score = picked[rank - 1]
            frame = by_id[score.frame_id]
            found = [d for d in predictions if is_archive(d) or (d / frame.prediction).is_file()]
            if not found:
                raise SegbenchError(f"no prediction for frame {frame.frame_id} in {[str(d) for d in predictions]}")
            gt = read_mask(frame.label)
            with open_predictions(found[0], [frame], exact=False) as masks:
                pred = read_prediction(masks, frame, gt.shape, benchmark.evaluation_size)
            gt, pred = evaluated_masks(gt, pred, benchmark.evaluation_size)
            image = read_rgb(frame.image)
            caption = overlays.caption(kind, rank, subject, score, report, frame.group_id)
            overlays.render(overlays.panels(benchmark, report, subject, np.asarray(image), gt, pred), caption,
                            overlays.legend_of(benchmark, gt), path)
            chosen.append({"kind": kind, "rank": rank, "file": path.name, "frame_id": score.frame_id,
                           benchmark.group_key: frame.group_id, "miou": score.miou,
                           "pixel_accuracy": score.pixel_accuracy, "pixels": score.pixels, "space": report.space.name})
    write_json(out_dir / "frames.json", {"model": subject.name, "frames": chosen})
