"""Boundary bands for boundary IoU (Cheng et al., CVPR 2021), counted in the scoring pass.

As the authors' `mask_to_boundary` (pad with background, erode d times with a 3x3 square,
subtract): a pixel is in the band of its class's mask when a pixel within chessboard distance d
is of another label or outside the image. That does not depend on the class, so one band per
label map serves every class (docs/metrics.md, "Boundary IoU"). `all_cells` counts every
pixel by (raw gt, raw pred, which bands), so every class's intersection and union follow from
lookup tables later, the joint histogram is the same counts summed over the bands (the scoring
pass needs no second count), and the counts add over frames and shards.

One pass down the rows, nothing frame-sized written: at row y, each map's row verdicts (is the
row window of each pixel one label?) and a column step (have the last 2d+1 verdicts agreed?) give
row y - d's bands, and that row is counted by its segments of one (bands, gt, pred). Compiled
with numba, GIL released. Pure computation: no I/O.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

GT_BAND = 1  # flag bits of a band cell
PRED_BAND = 2


def band_width(shape: tuple[int, int], ratio: float | None = None, pixels: int | None = None) -> int:
    """d in pixels: `pixels`, or round(ratio x the image diagonal), at least 1."""
    if pixels is not None:
        return max(1, int(pixels))
    return max(1, int(round(ratio * math.hypot(shape[0], shape[1]))))


NOT_UNIFORM = np.uint8(255)  # a row verdict: the row window holds two labels or leaves the image
MAX_LABELS = 253  # label codes 0..254: lut + 2 (INVALID -2 -> 0, DROP -1 -> 1, class c -> c + 2)


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _codes(lut: np.ndarray) -> np.ndarray:
    code = np.empty(256, np.uint8)
    for v in range(256):
        code[v] = np.uint8(lut[v] + 2)
    return code


# The row helpers are inlined into the frame kernels: a call per row and helper cost a fifth of the pass.
_row_kernel = numba.njit(nogil=True, cache=True, boundscheck=False, inline="always")
_GATHER = np.uint64(0x0102040810204080)  # (8 bytes of 0/1) * this >> 56: their 8 bits in one byte


@_row_kernel
def _pack(changes: np.ndarray, bits: np.ndarray) -> None:
    """bits[k] bit j := changes[64k + j] (bytes 0 or 1; len(changes) == 64 len(bits)): a row's
    change marks as 64-pixel words, so reading them back costs a branch per 64 pixels, not per 8."""
    words = changes.view(np.uint64)
    for k in range(bits.size):
        packed = np.uint64(0)
        for j in range(8):
            packed |= ((words[8 * k + j] * _GATHER) >> np.uint64(56)) << np.uint64(8 * j)
        bits[k] = packed


@_row_kernel
def _row_verdicts(row: np.ndarray, code: np.ndarray, d: int, changes: np.ndarray, bits: np.ndarray,
                  verdict: np.ndarray) -> None:
    """verdict[x] := the code of row[x]'s label when the row window [x-d, x+d] lies in one run of
    it, else NOT_UNIFORM. Scratch: `changes`, the row's width rounded up to 64 bytes, its tail
    zero, and `bits` (_pack): the raw value changes are marked in one vectorised loop, packed, and
    visited by their set bits, so a row costs its width / 64 words plus its runs."""
    w = row.size
    for x in range(w - 1):
        changes[x] = row[x] != row[x + 1]
    changes[w - 1] = 1
    _pack(changes, bits)
    verdict[:] = NOT_UNIFORM
    start = 0  # the current run's first pixel
    for k in range(bits.size):
        word = bits[k]
        while word:
            x = k * 64 + np.int64(trailing_zeros(word))
            word &= word - np.uint64(1)
            if x == w - 1 or code[row[x]] != code[row[x + 1]]:  # a run of one label ends at x
                if x + 1 - start > 2 * d:
                    verdict[start + d:x + 1 - d] = code[row[start]]
                start = x + 1


@_row_kernel
def _column_step(verdict: np.ndarray, above: np.ndarray, first: np.ndarray, clock: np.ndarray,
                 band: np.ndarray) -> None:
    """At row y = clock[0]: first[x] := the first row of the column's run of equal verdicts ending
    here; band[x] := whether the full window centred on row y - d holds two labels or leaves the
    image: the run began after row clock[1] = y - 2d, or this verdict is no label. Branch-free, on
    lanes of first's type (row numbers as int16 where they fit: twice the pixels per instruction
    of int32; a saturating counter instead is promoted to int64 lanes by numba, 3x slower)."""
    now, limit = clock[0], clock[1]
    for x in range(verdict.size):
        run_start = first[x] if verdict[x] == above[x] else now
        first[x] = run_start
        band[x] = np.uint8(run_start > limit) | np.uint8(verdict[x] == NOT_UNIFORM)


@_row_kernel
def _advance(row: np.ndarray, code: np.ndarray, d: int, y: int, changes: np.ndarray, bits: np.ndarray,
             verdicts: np.ndarray, first: np.ndarray, clock: np.ndarray, band: np.ndarray) -> None:
    """Row y of a label map: its row verdicts into verdicts[y % 2], then the column step, which
    sets band to row y - d's band once y >= 2d. `first` starts all zero, the rest is scratch."""
    _row_verdicts(row, code, d, changes, bits, verdicts[y & 1])
    if y > 0:
        clock[0] = y
        clock[1] = y - 2 * d
        _column_step(verdicts[y & 1], verdicts[1 - (y & 1)], first, clock, band)


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _band(raw: np.ndarray, code: np.ndarray, d: int, first: np.ndarray, clock: np.ndarray, band: np.ndarray) -> None:
    """band (H, W) uint8 := 1 where the (2d+1)^2 window of the label map code[raw] holds another
    label or leaves the image, else 0. `first` (W zeros) and `clock` (2) of _row_numbers' type."""
    h, w = raw.shape
    band[:] = 1
    if h < 2 * d + 1 or w < 2 * d + 1:
        return
    changes, bits = np.zeros((w + 63) // 64 * 64, np.uint8), np.empty((w + 63) // 64, np.uint64)
    verdicts, scratch = np.empty((2, w), np.uint8), np.empty(w, np.uint8)
    for y in range(h):
        _advance(raw[y], code, d, y, changes, bits, verdicts, first, clock, band[y - d] if y >= 2 * d else scratch)
    band[h - d:] = 1


@_row_kernel
def _count_row(gt: np.ndarray, pred: np.ndarray, gt_band: np.ndarray, pred_band: np.ndarray, changes: np.ndarray,
               bits: np.ndarray, hist: np.ndarray, seen: np.ndarray, n_seen: int) -> int:
    """Adds one row's pixels to hist by (flags, gt, pred): the row's segments of one key end
    where any of the four rows changes, marked and visited as in _row_verdicts."""
    w = gt.size
    for x in range(w - 1):
        changes[x] = (gt[x] != gt[x + 1]) | (pred[x] != pred[x + 1]) | (gt_band[x] != gt_band[x + 1]) \
            | (pred_band[x] != pred_band[x + 1])
    changes[w - 1] = 1
    _pack(changes, bits)
    start = 0
    for k in range(bits.size):
        word = bits[k]
        while word:
            x = k * 64 + np.int64(trailing_zeros(word))
            word &= word - np.uint64(1)
            key = ((np.int64(gt_band[x]) | (np.int64(pred_band[x]) << 1)) << 16) | (np.int64(gt[x]) << 8) \
                | np.int64(pred[x])
            if hist[key] == 0:
                seen[n_seen] = key
                n_seen += 1
            hist[key] += x + 1 - start
            start = x + 1
    return n_seen


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _count_cells(gt: np.ndarray, pred: np.ndarray, gt_code: np.ndarray, pred_code: np.ndarray, d: int,
                 first: np.ndarray, clock: np.ndarray, hist: np.ndarray,
                 seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pixel by (flags, gt, pred), flags 0 included, in one pass down the rows: at row y
    both maps' row verdicts and column steps, then the count of row y - d, whose bands are then
    known; every buffer is a row (cache-resident), no frame-sized array is written. `hist` is
    zero on entry and on return; `first` (2, W) zeros and `clock` (2) of _row_numbers' type.
    Each row helper has one call site (they are inlined)."""
    h, w = gt.shape
    maps, codes = (gt, pred), (gt_code, pred_code)
    changes, bits = np.zeros((w + 63) // 64 * 64, np.uint8), np.empty((w + 63) // 64, np.uint64)
    verdicts, bands = np.empty((2, 2, w), np.uint8), np.empty((2, w), np.uint8)
    border = np.ones((2, w), np.uint8)  # the bands of a row within d of the top or bottom edge, or of a small frame
    n_seen = 0
    small = h < 2 * d + 1 or w < 2 * d + 1
    edge = h if small else d  # the rows with the border's bands: all, or the top and bottom d
    for y in range(h + d):
        if y < h and not small:
            for m in range(2):
                _advance(maps[m][y], codes[m], d, y, changes, bits, verdicts[m], first[m], clock, bands[m])
        row = y - d
        if row >= 0:
            row_bands = border if row < edge or row >= h - edge else bands
            n_seen = _count_row(gt[row], pred[row], row_bands[0], row_bands[1], changes, bits, hist, seen, n_seen)
    cells = np.sort(seen[:n_seen])
    counts = np.empty(n_seen, np.int64)
    for k in range(n_seen):
        counts[k] = hist[np.int64(cells[k])]
        hist[np.int64(cells[k])] = 0
    return cells, counts


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _fold_flags(cells: np.ndarray, counts: np.ndarray, hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (gt, pred) joint cells of (flags, gt, pred) cells: counts summed over the flags.
    `hist` (at least 65536 long) is zero on entry and on return."""
    values = np.empty(cells.size, np.uint16)
    n = 0
    for k in range(cells.size):
        v = np.int64(cells[k] & 0xFFFF)
        if hist[v] == 0:
            values[n] = v
            n += 1
        hist[v] += counts[k]
    joint = np.sort(values[:n])
    joint_counts = np.empty(n, np.int64)
    for k in range(n):
        joint_counts[k] = hist[np.int64(joint[k])]
        hist[np.int64(joint[k])] = 0
    return joint, joint_counts


IDENTITY = np.arange(256, dtype=np.int32)
# Per thread: a zeroed table the count kernel clears after use (allocating 2 MiB per frame cost
# its page faults), and the list of its touched cells.
_buffers = threading.local()


def _row_numbers(height: int) -> type:
    """The column step's type of row numbers: int16 where a frame's rows fit (row - 2d too: d <
    height / 2 there), else int32. numba compiles the kernels once per type."""
    return np.int16 if height <= np.iinfo(np.int16).max else np.int32


def band(labels: np.ndarray, d: int) -> np.ndarray:
    """(H, W) bool: the band of a uint8 label map."""
    labels = np.ascontiguousarray(labels, dtype=np.uint8)
    out = np.empty(labels.shape, np.uint8)
    rows = _row_numbers(labels.shape[0])
    _band(labels, _codes(IDENTITY), int(d), np.zeros(labels.shape[1], rows), np.empty(2, rows), out)
    return out.astype(bool)


def _tables() -> tuple[np.ndarray, np.ndarray]:
    buffers = _buffers.__dict__
    if not buffers:
        buffers["hist"], buffers["seen"] = np.zeros(4 << 16, np.int64), np.empty(4 << 16, np.uint32)
    return buffers["hist"], buffers["seen"]


def _read_only(mask: np.ndarray) -> np.ndarray:
    """A C-contiguous read-only view of `mask` (a copy only when it is not contiguous): the kernel
    holds both masks in one tuple, which numba types only when both have one array type, and a
    mask may come read-only (a decoded buffer, the floor's constant frame) or not."""
    view = np.ascontiguousarray(mask).view()
    view.flags.writeable = False
    return view


def all_cells(gt: np.ndarray, pred: np.ndarray, gt_lut: np.ndarray, pred_lut: np.ndarray,
              d: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pixel by (raw gt, raw pred, which bands): cells are uint32 `flags << 16 | gt << 8 |
    pred` ascending, flags 0 (in neither band) included, counts int64.

    gt/pred are the raw uint8 masks of one shape; gt_lut/pred_lut send each raw value to its class
    in the band's label space (void and dropped values are labels of their own: distinct
    negative codes)."""
    if gt.shape != pred.shape or gt.ndim != 2:
        raise ValueError(f"shapes differ or are not 2-D: ground truth {gt.shape}, prediction {pred.shape}")
    if gt.dtype != np.uint8 or pred.dtype != np.uint8:
        raise ValueError(f"masks must be uint8, got {gt.dtype} and {pred.dtype}")
    gt, pred = _read_only(gt), _read_only(pred)
    hist, seen = _tables()
    rows = _row_numbers(gt.shape[0])
    return _count_cells(gt, pred, _codes(np.asarray(gt_lut, np.int32)), _codes(np.asarray(pred_lut, np.int32)),
                        int(d), np.zeros((2, gt.shape[1]), rows), np.empty(2, rows), hist, seen)


def in_bands(cells: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cells of all_cells with a band flag: the pixels in the ground truth's or the prediction's band."""
    first = int(np.searchsorted(cells, 1 << 16))
    return cells[first:], counts[first:]


def joint_of(cells: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The joint histogram's non-zero cells (as cellcount.joint_cells) from all_cells' cells."""
    return _fold_flags(cells, counts, _tables()[0])


def band_cells(gt: np.ndarray, pred: np.ndarray, gt_lut: np.ndarray, pred_lut: np.ndarray,
               d: int) -> tuple[np.ndarray, np.ndarray]:
    """The pixels in the ground truth's or the prediction's band, by (raw gt, raw pred, bands):
    all_cells' cells with flags GT_BAND | PRED_BAND."""
    return in_bands(*all_cells(gt, pred, gt_lut, pred_lut, d))


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

    def frame_counts(self, gt: np.ndarray, pred: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray],
                                                                        list[tuple[np.ndarray, np.ndarray]]]:
        """One frame's joint-histogram cells (as cellcount.joint_cells) and its band cells in
        each space, in one pass over the pixels per space: the first space's pass counts every
        pixel, so the joint cells need no pass of their own."""
        d = band_width(gt.shape, self.ratio, self.pixels)
        every = [all_cells(gt, pred, g, p, d) for g, p in zip(self.gt_luts, self.pred_luts)]
        return joint_of(*every[0]), [in_bands(*cells) for cells in every]

    def frame_cells(self, gt: np.ndarray, pred: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """One frame's band cells in each space."""
        return self.frame_counts(gt, pred)[1]
