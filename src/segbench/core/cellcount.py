"""The scoring hot loop: a frame's joint histogram as its non-zero cells, compiled with numba.

Equal to confusion.joint_histogram's non-zero cells (tests say so on random, coherent and
odd-sized masks), about 5x faster on coherent masks: the loop counts runs of one (gt, pred) pair,
compares 8 pixels of each mask at once with the current pair and jumps to the first pixel that
differs (the XOR's trailing zero bits), so a 1280x720 pair costs a fraction of decoding its PNGs.
It releases the GIL, so frames are counted in parallel threads. Pure computation: no I/O.
"""

from __future__ import annotations

import threading

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

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
    gt_word = np.uint64(0)  # the current pair's values in all 8 lanes
    pred_word = np.uint64(0)
    i = 0  # the first pixel not yet counted
    while i < n:
        w = i >> 3
        if (i & 7) == 0 and w < words and cell >= 0:
            differs = (gt_words[w] ^ gt_word) | (pred_words[w] ^ pred_word)
            if differs == 0:
                run += 8
                i += 8
                continue
            same = np.int64(trailing_zeros(differs)) >> 3  # pixels before the first change (little-endian)
            run += same
            i += same
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
        i += 1
        w = i >> 3
        if (i & 7) != 0 and w < words:  # the rest of this word: skip the pixels still on the pair
            differs = ((gt_words[w] ^ gt_word) | (pred_words[w] ^ pred_word)) >> np.uint64((i & 7) * 8)
            skip = np.int64(8 - (i & 7)) if differs == 0 else np.int64(trailing_zeros(differs)) >> 3
            run += skip
            i += skip
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
