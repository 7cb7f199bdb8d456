"""The scoring hot loop: a frame's joint histogram as its non-zero cells, compiled with numba.

Equal to confusion.joint_histogram's non-zero cells (tests say so on random, coherent and
odd-sized masks), about 5x faster on coherent masks: the loop counts runs of one (gt, pred) pair
and skips 8 pixels at a time while both masks stay on the current pair, so a 1280x720 pair costs
a fraction of decoding its two PNGs. It releases the GIL, so frames are counted in parallel
threads. Pure computation: no I/O.
"""

from __future__ import annotations

import threading

import numba
import numpy as np

_EIGHT_COPIES = np.uint64(0x0101010101010101)  # v * this = the byte v in all 8 lanes of a word
# One zeroed 256 x 256 table per thread, reused: allocating 512 KiB per frame cost a quarter of
# the kernel's time (page faults); the kernel clears the cells it touched before returning.
_buffers = threading.local()


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _count_cells(gt: np.ndarray, pred: np.ndarray, hist: np.ndarray, seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`hist` (65536 int64) must be all zero on entry and is all zero again on return."""
    n_seen = 0
    n = gt.size
    words = n // 8
    gt_words = gt[: words * 8].view(np.uint64)
    pred_words = pred[: words * 8].view(np.uint64)
    cell = -1  # the (gt << 8 | pred) pair of the current run, -1 before the first pixel
    run = 0
    gt_word = np.uint64(0)
    pred_word = np.uint64(0)
    for w in range(words + 1):
        if w < words and cell >= 0 and gt_words[w] == gt_word and pred_words[w] == pred_word:
            run += 8
            continue
        for i in range(w * 8, min(w * 8 + 8, n)):
            index = (np.int64(gt[i]) << 8) | np.int64(pred[i])
            if index != cell:
                if cell >= 0:
                    if hist[cell] == 0:
                        seen[n_seen] = cell
                        n_seen += 1
                    hist[cell] += run
                cell = index
                run = 0
                gt_word = np.uint64(gt[i]) * _EIGHT_COPIES
                pred_word = np.uint64(pred[i]) * _EIGHT_COPIES
            run += 1
    if cell >= 0:
        if hist[cell] == 0:
            seen[n_seen] = cell
            n_seen += 1
        hist[cell] += run
    cells = np.sort(seen[:n_seen])
    counts = np.empty(n_seen, np.int64)
    for k in range(n_seen):
        counts[k] = hist[cells[k]]
        hist[cells[k]] = 0
    return cells, counts


def joint_cells(gt: np.ndarray, pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The non-zero cells of the (gt, pred) joint histogram of two uint8 masks of one shape.

    Returns (cells, counts): cells are uint16 `gt << 8 | pred` in ascending order (the order of
    np.nonzero on the 256 x 256 histogram), counts are int64.
    """
    if gt.shape != pred.shape:
        raise ValueError(f"shapes differ: ground truth {gt.shape}, prediction {pred.shape}")
    if gt.dtype != np.uint8 or pred.dtype != np.uint8:
        raise ValueError(f"masks must be uint8, got {gt.dtype} and {pred.dtype}")
    buffers = _buffers.__dict__
    if not buffers:
        buffers["hist"], buffers["seen"] = np.zeros(65536, np.int64), np.empty(65536, np.uint16)
    flat_gt, flat_pred = np.ascontiguousarray(gt).reshape(-1), np.ascontiguousarray(pred).reshape(-1)
    return _count_cells(flat_gt, flat_pred, buffers["hist"], buffers["seen"])
