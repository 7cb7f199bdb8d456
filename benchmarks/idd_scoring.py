"""IDD20K (ICVGIP 2020) scoring speed against the reference evaluator's per-pixel loop.

    .venv/bin/python benchmarks/idd_scoring.py [--frames 4000] [--pool 40]

`--frames` ground-truth/prediction pairs at 1920x1080 (27 values 0..26 and 255, drawn shapes:
masks.py), copied from `--pool` distinct pairs, are scored as the benchmark defines it: both
masks resized to 1280x720 with Pillow NEAREST, level-3/2/1 reports computed from the counts.
The reference is the official evaluator's algorithm (docs/protocols/idd20k-icvgip2020.md: Pillow
decode, Pillow NEAREST resize, then a Python loop zipping the flattened arrays and adding
M[min(gt,26), min(pred,26)] per pixel),
written out here and run on one core over every distinct pair of the pool; its split matrix is the
sum over the pool weighted by how often each pair occurs, so it is exact for all `--frames`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from masks import copied_frames, mask_pairs  # noqa: E402
from timing import machine  # noqa: E402

from segbench.core.evaluation import evaluate  # noqa: E402
from segbench.datasets.base import Frame  # noqa: E402
from segbench.protocols.definitions import load_benchmark  # noqa: E402
from segbench.stages.scoring import score_predictions  # noqa: E402

SIZE = (1280, 720)
MISC = 26


def reference_matrix(gt_path: Path, pred_path: Path) -> np.ndarray:
    """The official evaluator's per-image matrix: a Python loop over every pixel."""
    gt, pred = Image.open(gt_path), Image.open(pred_path)
    if gt.size != SIZE:
        gt = gt.resize(SIZE, Image.NEAREST)
    if pred.size != SIZE:
        pred = pred.resize(SIZE, Image.NEAREST)
    matrix = np.zeros((MISC + 1, MISC + 1), dtype=np.uint64)
    # as the evaluator does it: zip over the flattened numpy arrays, one matrix update per pixel
    for g, p in zip(np.array(gt).flatten(), np.array(pred).flatten()):
        matrix[min(g, MISC), min(p, MISC)] += 1
    return matrix


def reference_level3_iou(matrix: np.ndarray) -> np.ndarray:
    """eval_ious: for classes 0..25, FN over all 27 columns, FP over GT rows 0..25 only."""
    m = matrix.astype(np.float64)
    tp = np.diag(m)[:MISC]
    fn = m[:MISC, :].sum(axis=1) - tp
    fp = m[:MISC, :MISC].sum(axis=0) - tp
    return tp / (tp + fp + fn)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=4000)
    parser.add_argument("--pool", type=int, default=40)
    parser.add_argument("--cache", type=Path, default=Path("build/benchmarks/masks"))
    args = parser.parse_args()

    pool = mask_pairs(args.cache, args.pool, 1920, 1080, classes=MISC + 1)
    pairs = copied_frames(pool, args.frames, args.cache)
    frames = [Frame(f"{i:06d}", "drive", "test", gt, gt, prediction=pred.name) for i, (gt, pred) in enumerate(pairs)]
    benchmark = load_benchmark("idd20k-icvgip2020")
    assert benchmark.evaluation_size == SIZE
    for path in (p for pair in pairs for p in pair):
        path.read_bytes()  # warm page cache, as for the reference

    start = time.perf_counter()
    submission_space = benchmark.space("idd-level3-misc")  # a challenge submission: 26 or 255 is misc
    counts = score_predictions(frames, pairs[0][1].parent, benchmark.ground_truth, submission_space, SIZE)
    reports = evaluate(benchmark, counts, submission_space)
    ours_seconds = time.perf_counter() - start

    reference_seconds, reference = [], []
    for gt, pred in pool:
        t0 = time.process_time()
        reference.append(reference_matrix(gt, pred))
        reference_seconds.append(time.process_time() - t0)
    per_pair = float(np.median(reference_seconds))
    occurrences = Counter(i % len(pool) for i in range(args.frames))
    reference_split = sum(reference[i].astype(np.int64) * n for i, n in occurrences.items())

    fold = np.minimum(np.arange(256), MISC)  # the evaluator's rule: 255 and anything > 26 become 26
    ours_split = np.zeros((MISC + 1, MISC + 1), np.int64)
    np.add.at(ours_split, (fold[counts.gt], fold[counts.pred]), counts.count)
    per_frame_equal = all(
        np.array_equal(
            np.bincount(fold[counts.gt[counts.frame == i]] * (MISC + 1) + fold[counts.pred[counts.frame == i]],
                        weights=counts.count[counts.frame == i], minlength=(MISC + 1) ** 2).reshape(MISC + 1, MISC + 1),
            reference[i].astype(np.float64),
        )
        for i in range(len(pool))
    )
    level3 = reports["level3"]["mIoU"]
    reference_miou = float(np.mean(reference_level3_iou(reference_split)))

    print(f"IDD scoring: {args.frames} pairs of 1920x1080 masks (copied from {len(pool)} distinct pairs), "
          f"resized to 1280x720, levels 3/2/1")
    print(f"machine: {machine()}\n")
    print(f"segbench (decode, resize, count, all reports), all cores: {ours_seconds:.2f} s "
          f"= {ours_seconds / args.frames * 1e3:.2f} ms per pair")
    print(f"reference per-pixel loop, one core (CPU time, median of {len(pool)} pairs): {per_pair:.3f} s per pair "
          f"-> {per_pair * args.frames:.0f} s for {args.frames}")
    print(f"\nsplit confusion matrix (27x27) identical to the reference: {np.array_equal(ours_split, reference_split)}")
    print(f"per-frame matrices identical for every distinct pair: {per_frame_equal}")
    print(f"level-3 mIoU: segbench {level3!r}, reference formula on the reference matrix {reference_miou!r}")
    print("reports:", ", ".join(f"{name} {report.get('mIoU')!r}" for name, report in reports.items()))
    speedup = per_pair * args.frames / ours_seconds
    cores = len(os.sched_getaffinity(0))
    print(f"\ntarget: >= 50x the reference on one core: {speedup:.0f}x "
          f"({speedup / cores:.0f}x the reference spread ideally over all {cores} cores)")
    return 0 if np.array_equal(ours_split, reference_split) and per_frame_equal else 1


if __name__ == "__main__":
    sys.exit(main())
