"""segbench's counting against its peers, on the same decoded pairs, checked cell for cell.

    .venv/bin/python benchmarks/peers.py [--pairs 64] [--rounds 5] [--evaluate-metric PATH]

`--pairs` pairs of 1280x720 masks (27 classes 0..26, void 255 in the ground truth, drawn shapes:
masks.py) are decoded once into memory; then, in rounds whose order rotates, each method counts
all of them (decoding is not timed, so this compares counting alone):

  segbench                      cellcount.joint_cells per frame, in threads on all cores, the
                                per-frame counts kept, then the K x (K + 1) report matrix
  segbench, 1 thread            the same on one thread
  torchmetrics                  MulticlassJaccardIndex(ignore_index=255, validate_args=False)
  mmseg-style histc             mmsegmentation's intersect_and_union, written out here: drop the
                                ground truth's void, torch.histc of the hits, the prediction and
                                the ground truth, summed over frames
  HF evaluate mean_iou          the Hub's evaluate-metric/mean_iou script, loaded with
                                evaluate.load(PATH) from a local copy (--evaluate-metric: a
                                mean_iou.py or the folder holding it); nothing is downloaded, and
                                without the flag it is skipped, saying so

The report convention is segbench's: a predicted void (255) on a labelled pixel is a miss of its
ground-truth class (the matrix's last column), as mmseg and HF evaluate count it (their
prediction histograms skip 255, their ground-truth histograms keep the pixel). torchmetrics'
ignore_index drops only ground-truth void and cannot count a predicted 255, so the timed pairs
have no predicted void (masks.py draws none); every peer but torchmetrics is checked again on
the same pairs with a void band painted into each prediction.

Checks: torchmetrics' K x K matrix equals segbench's matrix without its void column (which is
zero), cell for cell; mmseg's and evaluate's four per-class areas (intersection, union,
prediction, ground truth) equal those of segbench's matrix exactly; evaluate's per-class IoU
equals segbench's. Ratios are medians of per-round ratios (timing.ratio).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import imagecodecs
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from masks import mask_pairs  # noqa: E402
from timing import machine, median, ratio, rounds  # noqa: E402

from segbench.core.cellcount import joint_cells  # noqa: E402
from segbench.core.confusion import FrameCounts  # noqa: E402
from segbench.core.metrics import iou  # noqa: E402

CLASSES, VOID = 27, 255
ROWS = np.where(np.arange(256) < CLASSES, np.arange(256), -1)  # ground truth: void rows dropped
COLUMNS = np.where(np.arange(256) < CLASSES, np.arange(256), np.where(np.arange(256) == VOID, CLASSES, -1))
Pairs = list[tuple[np.ndarray, np.ndarray]]


def segbench_matrix(pairs: Pairs, threads: ThreadPoolExecutor | None) -> np.ndarray:
    """The K x (K + 1) report matrix from per-frame counts, as the scoring step keeps them."""
    count = (lambda pair: joint_cells(*pair))
    cells = list(threads.map(count, pairs)) if threads else [count(p) for p in pairs]
    counts = FrameCounts.from_cells([str(i) for i in range(len(pairs))], cells)
    return counts.reduced(ROWS, COLUMNS, CLASSES, CLASSES + 1)


def areas(matrix: np.ndarray) -> np.ndarray:
    """(4, K) intersection, union, prediction and ground-truth pixels of a K x (K + 1) matrix."""
    hits = np.diag(matrix[:, :CLASSES])
    predicted, labelled = matrix[:, :CLASSES].sum(axis=0), matrix.sum(axis=1)
    return np.stack([hits, predicted + labelled - hits, predicted, labelled])


def torchmetrics_confmat(pairs: Pairs) -> np.ndarray:
    import torch
    from torchmetrics.classification import MulticlassJaccardIndex

    # validate_args=False: its fastest setting (the per-update value checks cost ~5x more)
    metric = MulticlassJaccardIndex(num_classes=CLASSES, ignore_index=VOID, average=None, validate_args=False)
    for gt, pred in pairs:
        metric.update(torch.from_numpy(pred).long()[None], torch.from_numpy(gt).long()[None])
    metric.compute()
    return metric.confmat.numpy().astype(np.int64)


def mmseg_areas(pairs: Pairs) -> np.ndarray:
    """mmsegmentation's intersect_and_union per frame (histc of hits, prediction, ground truth)."""
    import torch

    total = torch.zeros((4, CLASSES), dtype=torch.float64)
    for gt, pred in pairs:
        label, predicted = torch.from_numpy(gt), torch.from_numpy(pred)
        labelled = label != VOID
        label, predicted = label[labelled], predicted[labelled]
        hits = predicted[predicted == label]
        histogram = [torch.histc(x.float(), bins=CLASSES, min=0, max=CLASSES - 1) for x in (hits, predicted, label)]
        total += torch.stack([histogram[0], histogram[1] + histogram[2] - histogram[0], histogram[1], histogram[2]])
    return total.numpy()


def load_mean_iou(path: Path | None):
    """(metric, None) from a local copy of the Hub's mean_iou script, or (None, why it is skipped)."""
    if path is None:
        return None, ("skipped: no --evaluate-metric PATH. The evaluate package ships no metric scripts and "
                      "evaluate.load('mean_iou') downloads evaluate-metric/mean_iou from the Hugging Face Hub, "
                      "which this benchmark never does; pass a local copy of that script (mean_iou.py or its folder)")
    os.environ["HF_HUB_OFFLINE"] = os.environ["HF_EVALUATE_OFFLINE"] = "1"
    import evaluate

    if not path.exists():
        raise SystemExit(f"--evaluate-metric {path}: no such file or folder")
    return evaluate.load(str(path)), None


def evaluate_result(metric, pairs: Pairs) -> dict:
    for gt, pred in pairs:
        metric.add_batch(predictions=[pred], references=[gt])
    return metric.compute(num_labels=CLASSES, ignore_index=VOID, reduce_labels=False)


def evaluate_areas(metric, pairs: Pairs) -> np.ndarray:
    """The script's own total_intersect_and_union (what its compute sums), as (4, K)."""
    script = sys.modules[type(metric).__module__]
    return np.stack(script.total_intersect_and_union([p for _, p in pairs], [g for g, _ in pairs], CLASSES, VOID))


def with_void_band(pairs: Pairs) -> Pairs:
    """The pairs with rows 100..139 of every prediction set to void: labelled pixels predicted void."""
    out = []
    for gt, pred in pairs:
        pred = pred.copy()
        pred[100:140] = VOID
        out.append((gt, pred))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=Path("build/benchmarks/masks"))
    parser.add_argument("--evaluate-metric", type=Path, help="a local copy of the Hub's mean_iou script or its folder")
    args = parser.parse_args()

    import torch

    files = mask_pairs(args.cache, args.pairs, 1280, 720, CLASSES)
    pairs = [(imagecodecs.png_decode(gt.read_bytes()), imagecodecs.png_decode(pred.read_bytes())) for gt, pred in files]
    if any((pred == VOID).any() for _, pred in pairs):
        raise SystemExit("the timed predictions must have no void: torchmetrics cannot count a predicted 255")
    metric, evaluate_missing = load_mean_iou(args.evaluate_metric)
    cores = len(os.sched_getaffinity(0))
    load_before, started = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    results: dict[str, object] = {}
    with ThreadPoolExecutor(cores) as threads:
        methods = {
            f"segbench, {cores} threads": lambda: results.__setitem__("segbench", segbench_matrix(pairs, threads)),
            "segbench, 1 thread": lambda: results.__setitem__("segbench 1", segbench_matrix(pairs, None)),
            "torchmetrics MulticlassJaccardIndex": lambda: results.__setitem__("torchmetrics", torchmetrics_confmat(pairs)),
            "mmseg-style histc": lambda: results.__setitem__("mmseg", mmseg_areas(pairs)),
        }
        if metric is not None:
            methods["HF evaluate mean_iou"] = lambda: results.__setitem__("evaluate", evaluate_result(metric, pairs))
        times = rounds(methods, args.rounds)
        voided = with_void_band(pairs)
        ours_voided = segbench_matrix(voided, threads)
    load_after = os.getloadavg()

    reference = f"segbench, {cores} threads"
    print(f"Peers: {args.pairs} pairs of 1280x720 masks, {CLASSES} classes + void, decoded once (counting only)")
    print(f"machine: {machine()}; torch {torch.__version__}, {torch.get_num_threads()} threads; {started}; "
          f"load {load_before[0]:.1f} -> {load_after[0]:.1f}; {args.rounds} rounds after 1 warm-up\n")
    print(f"{'method':38s} {'median s':>9s} {'ms/pair':>8s} {'x segbench':>11s} {'x segbench 1 thread':>20s}")
    for name in times:
        print(f"{name:38s} {median(times[name]):9.3f} {median(times[name]) / args.pairs * 1e3:8.2f} "
              f"{ratio(times, name, reference):11.2f} {ratio(times, name, 'segbench, 1 thread'):20.2f}")

    ours = results["segbench"]
    checks = {
        "segbench on 1 thread == on all threads": np.array_equal(results["segbench 1"], ours),
        "no predicted void in the timed pairs: segbench's void column is zero": not ours[:, CLASSES].any(),
        "torchmetrics confusion matrix == segbench's K x K, cell for cell": np.array_equal(results["torchmetrics"], ours[:, :CLASSES]),
        "mmseg-style areas == segbench's": np.array_equal(results["mmseg"], areas(ours)),
        "with predicted void: segbench's void column holds the band's labelled pixels":
            int(ours_voided[:, CLASSES].sum()) == sum(int((g[100:140] != VOID).sum()) for g, _ in pairs),
        "with predicted void: mmseg-style areas == segbench's": np.array_equal(mmseg_areas(voided), areas(ours_voided)),
    }
    if metric is not None:
        theirs = np.asarray(results["evaluate"]["per_category_iou"], np.float64)
        mine = iou(ours)
        present = ~np.isnan(mine)
        checks["HF evaluate areas == segbench's"] = np.array_equal(evaluate_areas(metric, pairs), areas(ours))
        checks["HF evaluate per-class IoU == segbench's (NaN for the same classes)"] = (
            np.array_equal(np.isnan(theirs), ~present) and np.array_equal(theirs[present], mine[present]))
        checks["with predicted void: HF evaluate areas == segbench's"] = np.array_equal(
            evaluate_areas(metric, voided), areas(ours_voided))
    print("\nexactness")
    for name, holds in checks.items():
        print(f"  {name}: {holds}")
    if metric is None:
        print(f"  HF evaluate mean_iou: {evaluate_missing}")
    print("\nspeed-up of segbench (all threads) over each peer")
    for name in methods:
        if not name.startswith("segbench"):
            print(f"  {name}: {ratio(times, name, reference):.1f}x")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
