"""Boundary bands for boundary IoU (Cheng et al., CVPR 2021), counted in the scoring pass.

As the authors' `mask_to_boundary` (pad with background, erode d times with a 3x3 square,
subtract): a pixel is in the band of its class's mask when a pixel within chessboard distance d
is of another label or outside the image. That does not depend on the class, so one band per
label map serves every class (/work/shared/protocols/boundary-iou.md). `band_cells` counts the
pixels in the ground truth's or the prediction's band by (raw gt, raw pred, which bands), so
every class's intersection and union follow from lookup tables later, and the counts add over
frames and shards. Compiled with numba, GIL released. Pure computation: no I/O.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numba
import numpy as np

GT_BAND = 1  # flag bits of a band cell
PRED_BAND = 2


def band_width(shape: tuple[int, int], ratio: float | None = None, pixels: int | None = None) -> int:
    """d in pixels: `pixels`, or round(ratio x the image diagonal), at least 1."""
    if pixels is not None:
        return max(1, int(pixels))
    return max(1, int(round(ratio * math.hypot(shape[0], shape[1]))))


_LANES = np.uint64(0x0101010101010101)  # v * this: the byte v in all 8 lanes of a word
NOT_UNIFORM = np.uint8(255)  # a row verdict: the row window holds two labels or leaves the image
MAX_LABELS = 253  # label codes 0..254: lut + 2 (INVALID -2 -> 0, DROP -1 -> 1, class c -> c + 2)


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _row_verdicts(raw: np.ndarray, code: np.ndarray, d: int, verdict: np.ndarray) -> None:
    """verdict[y, x] = the label when the row window [x-d, x+d] lies in one run of it, else
    NOT_UNIFORM. Runs end where a row ends or the label changes; label changes are found 8
    pixels at a time (a word against itself shifted by one pixel), so a run costs its ends, and
    its verdicts are three fills."""
    h, w = raw.shape
    flat, out = raw.reshape(-1), verdict.reshape(-1)
    words = flat.size // 8
    packed = flat[: words * 8].view(np.uint64)
    start = 0  # the current run's first pixel
    row_end = w - 1  # the current row's last pixel
    for i in range(words + 1):
        first = i * 8
        if i + 1 < words and row_end >= first + 8:
            word = packed[i]
            if word == ((word >> np.uint64(8)) | (packed[i + 1] << np.uint64(56))):
                continue  # pixels first..first+8 all hold one raw value: no run ends here
        for p in range(first, min(first + 8, flat.size)):
            if p == row_end or (flat[p] != flat[p + 1] and code[flat[p]] != code[flat[p + 1]]):
                end = p + 1
                inner = min(start + d, end)
                out[start:inner] = NOT_UNIFORM
                if end - d > start + d:  # the run covers these pixels' row windows
                    out[start + d:end - d] = code[flat[start]]
                tail = max(end - d, inner)
                out[tail:end] = NOT_UNIFORM
                start = end
                if p == row_end:
                    row_end += w


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _band(raw: np.ndarray, lut: np.ndarray, d: int, verdict: np.ndarray, band: np.ndarray) -> None:
    """band (H, W) uint8 := 1 where the (2d+1)^2 window of the label map lut[raw] holds another
    label or leaves the image, else 0; `verdict` is scratch of the same shape. Both are the
    caller's (reused: a fresh frame-sized array costs its page faults, as much as the pass).

    Two passes: the row verdicts (_row_verdicts); then, down each column, the count of rows of
    one verdict ending at row y (saturating at 2d+1): row y-d's window is uniform when that
    count reaches 2d+1 and the verdict is a label. The column pass is branch-free over a row,
    so it runs as vector instructions."""
    h, w = raw.shape
    span = 2 * d + 1
    if h < span or w < span:
        band[:] = 1
        return
    band[:d] = 1
    band[h - d:] = 1
    code = np.empty(256, np.uint8)
    for v in range(256):
        code[v] = np.uint8(lut[v] + 2)
    _row_verdicts(raw, code, d, verdict)
    full = np.uint16(span)
    up = np.ones(w, np.uint16)  # rows of the same verdict ending at row y, per column, at most span
    for y in range(1, h):
        current, above = verdict[y], verdict[y - 1]
        if y >= 2 * d:
            out = band[y - d]
            for x in range(w):
                count = min(np.uint16(current[x] == above[x]) * up[x] + np.uint16(1), full)
                up[x] = count
                out[x] = np.uint8(count < full) | np.uint8(current[x] == NOT_UNIFORM)
        else:
            for x in range(w):
                up[x] = min(np.uint16(current[x] == above[x]) * up[x] + np.uint16(1), full)


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _count_band_cells(gt: np.ndarray, pred: np.ndarray, gt_band: np.ndarray, pred_band: np.ndarray,
                      hist: np.ndarray, seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Runs of one (flags, gt, pred) are counted at once, 8 pixels of each array compared at a
    time with the run's values (as cellcount does); `hist` is zero on entry and on return."""
    n_seen = 0
    n = gt.size
    words = n // 8
    gt_words, pred_words = gt[: words * 8].view(np.uint64), pred[: words * 8].view(np.uint64)
    gb_words, pb_words = gt_band[: words * 8].view(np.uint64), pred_band[: words * 8].view(np.uint64)
    key = np.int64(-1)
    run = np.int64(0)
    g8 = p8 = a8 = b8 = np.uint64(0)  # the run's four values in all 8 lanes of a word
    i = 0
    while i < n:
        if (i & 7) == 0 and i >> 3 < words and key >= 0:
            w = i >> 3
            if (gt_words[w] == g8) and (pred_words[w] == p8) and (gb_words[w] == a8) and (pb_words[w] == b8):
                run += 8
                i += 8
                continue
        current = ((np.int64(gt_band[i]) + 2 * np.int64(pred_band[i])) << 16) | (np.int64(gt[i]) << 8) | np.int64(pred[i])
        if current != key:
            if key >= (1 << 16):
                if hist[key] == 0:
                    seen[n_seen] = key
                    n_seen += 1
                hist[key] += run
            key = current
            run = 0
            g8 = np.uint64(gt[i]) * _LANES
            p8 = np.uint64(pred[i]) * _LANES
            a8 = np.uint64(gt_band[i]) * _LANES
            b8 = np.uint64(pred_band[i]) * _LANES
        run += 1
        i += 1
    if key >= (1 << 16):
        if hist[key] == 0:
            seen[n_seen] = key
            n_seen += 1
        hist[key] += run
    cells = np.sort(seen[:n_seen])
    counts = np.empty(n_seen, np.int64)
    for k in range(n_seen):
        counts[k] = hist[np.int64(cells[k])]
        hist[np.int64(cells[k])] = 0
    return cells, counts

IDENTITY = np.arange(256, dtype=np.int32)
# Per thread: a zeroed table the count kernel clears after use, and frame-sized arrays for the
# verdicts and the two bands, kept while frames keep their size.
_buffers = threading.local()


def band(labels: np.ndarray, d: int) -> np.ndarray:
    """(H, W) bool: the band of a uint8 label map."""
    labels = np.ascontiguousarray(labels, dtype=np.uint8)
    out = np.empty(labels.shape, np.uint8)
    _band(labels, IDENTITY, int(d), np.empty_like(out), out)
    return out.astype(bool)


def _frame_buffers(shape: tuple[int, int]) -> dict:
    buffers = _buffers.__dict__
    if not buffers:
        buffers["hist"], buffers["seen"] = np.zeros(4 << 16, np.int64), np.empty(4 << 16, np.uint32)
    if buffers.get("shape") != shape:
        buffers["shape"] = shape
        buffers["verdict"], buffers["gt"], buffers["pred"] = (np.empty(shape, np.uint8) for _ in range(3))
    return buffers


def band_cells(gt: np.ndarray, pred: np.ndarray, gt_lut: np.ndarray, pred_lut: np.ndarray,
               d: int) -> tuple[np.ndarray, np.ndarray]:
    """The pixels in the ground truth's or the prediction's band, by (raw gt, raw pred, bands).

    gt/pred are the raw uint8 masks; gt_lut/pred_lut send each raw value to its class in the band's
    label space (void and dropped values are labels of their own: distinct negative codes).
    Returns (cells, counts): cells are uint32 `flags << 16 | gt << 8 | pred` ascending, flags
    GT_BAND | PRED_BAND, counts int64.
    """
    gt, pred = np.ascontiguousarray(gt), np.ascontiguousarray(pred)
    buffers = _frame_buffers(gt.shape)
    gt_band, pred_band = buffers["gt"], buffers["pred"]
    _band(gt, np.asarray(gt_lut, np.int32), int(d), buffers["verdict"], gt_band)
    _band(pred, np.asarray(pred_lut, np.int32), int(d), buffers["verdict"], pred_band)
    return _count_band_cells(gt.reshape(-1), pred.reshape(-1), gt_band.reshape(-1), pred_band.reshape(-1),
                             buffers["hist"], buffers["seen"])


@dataclass(frozen=True)
class BandPlan:
    """Which bands the scoring pass counts: the label spaces (the report spaces of the boundary
    metrics), each with the raw-value lookup of the ground truth and of the prediction into it,
    and the band width (the benchmark's `scoring.boundary`)."""

    spaces: tuple[str, ...]
    gt_luts: tuple[np.ndarray, ...]
    pred_luts: tuple[np.ndarray, ...]
    ratio: float | None = None
    pixels: int | None = None

    def frame_cells(self, gt: np.ndarray, pred: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """One frame's band cells in each space."""
        d = band_width(gt.shape, self.ratio, self.pixels)
        return [band_cells(gt, pred, g, p, d) for g, p in zip(self.gt_luts, self.pred_luts)]
