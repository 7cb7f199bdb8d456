"""Made-up raw counts of five Painting Vision frames on three walls, and the all-other predictor on
them: what the bootstrap and plots tests share; and shard counts files written as the scoring step
writes them, for the steps that read them."""

from __future__ import annotations

import numpy as np

from segbench.core.confusion import FrameCounts
from segbench.protocols.definitions import load_label_space
from segbench.records.countsio import write_counts

PV10 = load_label_space("painting-vision-10")


def frame(cells: dict[tuple[int, int], int]) -> np.ndarray:
    hist = np.zeros((256, 256), dtype=np.int64)
    for (g, p), n in cells.items():
        hist[g, p] = n
    return hist


# Three walls, five frames: (frame id, wall, {(gt raw, pred raw): pixels}); 255 is void.
FRAMES = [
    ("w1_a", "w1", {(1, 1): 50, (1, 2): 10, (8, 8): 20, (0, 0): 15, (255, 0): 5}),
    ("w1_b", "w1", {(2, 2): 40, (2, 1): 5, (0, 8): 10, (8, 8): 5}),
    ("w2_a", "w2", {(2, 2): 30, (2, 0): 30, (0, 0): 40}),
    ("w3_a", "w3", {(1, 1): 10, (8, 0): 25, (0, 0): 60, (9, 9): 5}),
    ("w3_b", "w3", {(2, 1): 20, (2, 2): 20, (8, 8): 30, (255, 255): 9}),
]


def counts(frames=FRAMES) -> FrameCounts:
    return FrameCounts.from_histograms([f for f, _, _ in frames], [frame(c) for _, _, c in frames])


def floored(frames=FRAMES) -> list:
    """The all-other predictor (raw 0 everywhere) on the same frames."""
    out = []
    for f, w, cells in frames:
        merged: dict[tuple[int, int], int] = {}
        for (g, _), n in cells.items():
            merged[(g, 0)] = merged.get((g, 0), 0) + n
        out.append((f, w, merged))
    return out


def write_shard(folder, name, frame_ids, cells, split="test", model="best", benchmark="painting-vision",
                classes=None, dataset_id=None):
    """FOLDER/NAME.parquet: counts of `frame_ids` as the scoring step writes them (a checkpoint
    predicting in painting-vision-10, or in a space of that name with `classes`);
    cells: (frame index, gt raw, pred raw, pixels)."""
    columns = zip(*cells)
    index, gt, pred, count = (np.array(c, t) for c, t in zip(columns, (np.int32, np.uint8, np.uint8, np.int64)))
    space = {"name": PV10.name, "classes": list(classes or PV10.names)}
    path = folder / f"{name}.parquet"
    write_counts(path, FrameCounts(tuple(frame_ids), index, gt, pred, count),
                 {"benchmark": benchmark, "split": split, "dataset_id": dataset_id,
                  "model": {"name": model, "kind": "checkpoint", "label_space": space}})
    return path
