"""Boundary bands for boundary IoU (Cheng et al., CVPR 2021), counted in the scoring pass.

As the authors' `mask_to_boundary` (pad with background, erode d times with a 3x3 square,
subtract): a pixel is in the band of its class's mask when a pixel within chessboard distance d
is of another label or outside the image. That does not depend on the class, so one band per
label map serves every class (docs/metrics.md, "Boundary IoU"). `all_cells` counts every
pixel by (raw gt, raw pred, which bands), so every class's intersection and union follow from
lookup tables later, the joint histogram is the same counts summed over the bands (the scoring
pass needs no second count), and the counts add over frames and shards.

One pass down the rows for every label space at once, nothing frame-sized written: at row y,
each map's row verdicts in each space (is the row window of each pixel one label?) and a column
step (have the last 2d+1 verdicts agreed?) give row y - d's bands, and that row is counted by its
segments of one (bands in every space, gt, pred); one space's cells are these folded. Compiled
with numba, GIL released. Pure computation: no I/O.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

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
def _row_changes(row: np.ndarray, changes: np.ndarray, bits: np.ndarray) -> None:
    """bits := where row[x] != row[x + 1] (and the row's last pixel), packed (_pack). Scratch:
    `changes`, the row's width rounded up to 64 bytes, its tail zero. One vectorised loop, shared
    by every label space's verdicts of the row."""
    w = row.size
    for x in range(w - 1):
        changes[x] = row[x] != row[x + 1]
    changes[w - 1] = 1
    _pack(changes, bits)


@_row_kernel
def _row_verdicts(row: np.ndarray, code: np.ndarray, d: int, bits: np.ndarray, verdict: np.ndarray) -> None:
    """verdict[x] := the code of row[x]'s label when the row window [x-d, x+d] lies in one run of
    it, else NOT_UNIFORM. `bits`: the row's raw value changes (_row_changes), visited by their set
    bits, so a row costs its width / 64 words plus its runs."""
    w = row.size
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
                 flags: np.ndarray, bit: int) -> None:
    """At row y = clock[0]: first[x] := the first row of the column's run of equal verdicts ending
    here; flag `bit` of flags[x] := whether the full window centred on row y - d holds two labels
    or leaves the image: the run began after row clock[1] = y - 2d, or this verdict is no label.
    Branch-free, on lanes of first's type (row numbers as int16 where they fit: twice the pixels
    per instruction of int32; a saturating counter instead is promoted to int64 lanes by numba,
    3x slower). The flag is set by a mask, not a shift: x86 has no shift of byte lanes, and a
    shift by a count known only at run time kept this loop scalar (the pass 0.26 -> 0.21 ms a frame)."""
    now, limit = clock[0], clock[1]
    mark = np.uint8(1 << bit)
    for x in range(verdict.size):
        run_start = first[x] if verdict[x] == above[x] else now
        first[x] = run_start
        flags[x] |= (np.uint8(0) - (np.uint8(run_start > limit) | np.uint8(verdict[x] == NOT_UNIFORM))) & mark


@_row_kernel
def _advance(row: np.ndarray, code: np.ndarray, d: int, y: int, bits: np.ndarray, verdicts: np.ndarray,
             first: np.ndarray, clock: np.ndarray, flags: np.ndarray, bit: int) -> None:
    """Row y of a label map in one label space, its raw changes in `bits` (_row_changes): its row
    verdicts into verdicts[y % 2], then the column step, which sets flag `bit` of row y - d's
    flags once y >= 2d. `first` starts all zero, the rest is scratch."""
    _row_verdicts(row, code, d, bits, verdicts[y & 1])
    if y > 0:
        clock[0] = y
        clock[1] = y - 2 * d
        _column_step(verdicts[y & 1], verdicts[1 - (y & 1)], first, clock, flags, bit)


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _map_flags(raw: np.ndarray, codes: np.ndarray, d: int, step: int, first: np.ndarray, clock: np.ndarray,
               flags: np.ndarray) -> None:
    """flags (H, W) uint8, bit step * s := 1 where the (2d+1)^2 window of the label map
    codes[s][raw] holds another label or leaves the image, for every space s of codes (S, 256);
    every other bit 0. `first` (S, W) zeros and `clock` (2) of _scratch's type."""
    h, w = raw.shape
    spaces = codes.shape[0]
    every = 0
    for s in range(spaces):
        every |= 1 << step * s
    flags[:] = every
    if h < 2 * d + 1 or w < 2 * d + 1:
        return
    changes, bits = np.zeros((w + 63) // 64 * 64, np.uint8), np.empty((w + 63) // 64, np.uint64)
    verdicts, scratch = np.empty((spaces, 2, w), np.uint8), np.empty(w, np.uint8)
    for y in range(h):
        target = flags[y - d] if y >= 2 * d else scratch
        target[:] = 0
        _row_changes(raw[y], changes, bits)
        for s in range(spaces):
            _advance(raw[y], codes[s], d, y, bits, verdicts[s], first[s], clock, target, step * s)
    flags[h - d:] = every


@_row_kernel
def _count_row(gt: np.ndarray, pred: np.ndarray, flags: np.ndarray, changes: np.ndarray, bits: np.ndarray,
               hist: np.ndarray, seen: np.ndarray, n_seen: int) -> int:
    """Adds one row's pixels to hist by (flags, gt, pred): the row's segments of one key end
    where any of the three rows changes, marked as in _row_changes and visited as in _row_verdicts."""
    w = gt.size
    for x in range(w - 1):
        changes[x] = (gt[x] != gt[x + 1]) | (pred[x] != pred[x + 1]) | (flags[x] != flags[x + 1])
    changes[w - 1] = 1
    _pack(changes, bits)
    start = 0
    for k in range(bits.size):
        word = bits[k]
        while word:
            x = k * 64 + np.int64(trailing_zeros(word))
            word &= word - np.uint64(1)
            key = (np.int64(flags[x]) << 16) | (np.int64(gt[x]) << 8) | np.int64(pred[x])
            if hist[key] == 0:
                seen[n_seen] = key
                n_seen += 1
            hist[key] += x + 1 - start
            start = x + 1
    return n_seen


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _count_cells(gt: np.ndarray, pred: np.ndarray, gt_codes: np.ndarray, pred_codes: np.ndarray, d: int,
                 gt_flags: np.ndarray, gt_known: bool, first: np.ndarray, clock: np.ndarray, hist: np.ndarray,
                 seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pixel by (flags, gt, pred), flags 0 included, in one pass down the rows for every
    label space s of the codes (S, 256): flag bit 2s is the ground truth's band in space s, bit
    2s + 1 the prediction's. At row y each map's raw changes once, its row verdicts and column
    step in each space, then the count of row y - d, whose flags are then known; every buffer is a
    row (cache-resident), no frame-sized array is written. With `gt_known`, the ground truth's
    bands are gt_flags (H, W), made by _map_flags(gt, gt_codes, d, 2, ...) once for any number of
    predictions, and only the prediction's are found. `hist` (at least 4^S << 16 long) is zero on
    entry and on return; `first` (2S, W) zeros and `clock` (2) of _scratch's type. Each row
    helper has one call site (they are inlined)."""
    h, w = gt.shape
    spaces = gt_codes.shape[0]
    maps = (gt, pred)
    changes, bits = np.zeros((w + 63) // 64 * 64, np.uint8), np.empty((w + 63) // 64, np.uint64)
    verdicts, flags = np.empty((2 * spaces, 2, w), np.uint8), np.zeros(w, np.uint8)
    # the flags of a row within d of the top or bottom edge, or of a small frame: every band
    border = np.full(w, (1 << 2 * spaces) - 1, np.uint8)
    n_seen = 0
    small = h < 2 * d + 1 or w < 2 * d + 1
    edge = h if small else d  # the rows with the border's bands: all, or the top and bottom d
    for y in range(h + d):
        row = y - d
        if y < h and not small:
            if gt_known and row >= 0:
                known = gt_flags[row]
                for x in range(w):  # numba's slice assignment from an array is 16x slower than this loop
                    flags[x] = known[x]
            else:
                flags[:] = 0
            for m in range(1 if gt_known else 0, 2):
                codes = gt_codes if m == 0 else pred_codes
                _row_changes(maps[m][y], changes, bits)
                for s in range(spaces):
                    bit = 2 * s + m
                    _advance(maps[m][y], codes[s], d, y, bits, verdicts[bit], first[bit], clock, flags, bit)
        if row >= 0:
            row_flags = border if row < edge or row >= h - edge else flags
            n_seen = _count_row(gt[row], pred[row], row_flags, changes, bits, hist, seen, n_seen)
    cells = np.sort(seen[:n_seen])
    counts = np.empty(n_seen, np.int64)
    for k in range(n_seen):
        counts[k] = hist[np.int64(cells[k])]
        hist[np.int64(cells[k])] = 0
    return cells, counts


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _folds(cells: np.ndarray, counts: np.ndarray, spaces: int,
           hist: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells of _count_cells folded for each of their uses, one after the other, each ascending
    with its counts summed over the flags it drops: first the joint histogram's (`gt << 8 |
    pred`, every flag dropped), then for each space s < `spaces` the pixels in its bands (its
    flag bits 2s, 2s + 1 kept as bits 16, 17; the pixels in neither band of s left out). Returns
    (cells, counts, starts), fold k at [starts[k], starts[k + 1]). One call for a frame's every
    fold: the scoring threads hand the GIL over at each compiled call. `hist` (at least 4 << 16
    long) is zero on entry and on return."""
    n = cells.size
    folded, folded_counts = np.empty(n * (spaces + 1), np.uint32), np.empty(n * (spaces + 1), np.int64)
    starts = np.zeros(spaces + 2, np.int64)
    at = 0
    for k in range(spaces + 1):
        shift, keep = (0, 0) if k == 0 else (2 * (k - 1), 3)
        begin = at
        for i in range(n):
            c = np.int64(cells[i])
            v = (((c >> (16 + shift)) & keep) << 16) | (c & 0xFFFF)
            if k > 0 and v < 1 << 16:
                continue  # in neither band of this space
            if hist[v] == 0:
                folded[at] = v
                at += 1
            hist[v] += counts[i]
        folded[begin:at].sort()
        for j in range(begin, at):
            folded_counts[j] = hist[np.int64(folded[j])]
            hist[np.int64(folded[j])] = 0
        starts[k + 1] = at
    return folded[:at], folded_counts[:at], starts


IDENTITY = np.arange(256, dtype=np.int32)
# Per thread: a zeroed table the count kernel clears after use (allocating it per frame cost its
# page faults), and the list of its touched cells; 4^S << 16 cells for S spaces counted at once.
_buffers = threading.local()


def _scratch(maps: int, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The column steps' `first` (maps, W) zeros and `clock` (2), in their type of row numbers:
    int16 where a frame's rows fit (row - 2d too: d < height / 2 there), else int32. numba
    compiles the kernels once per type."""
    rows = np.int16 if shape[0] <= np.iinfo(np.int16).max else np.int32
    return np.zeros((maps, shape[1]), rows), np.empty(2, rows)


def band(labels: np.ndarray, d: int) -> np.ndarray:
    """(H, W) bool: the band of a uint8 label map."""
    labels = np.ascontiguousarray(labels, dtype=np.uint8)
    out = np.empty(labels.shape, np.uint8)
    _map_flags(labels, codes_of([IDENTITY]), int(d), 1, *_scratch(1, labels.shape), out)
    return out.astype(bool)


def _tables(spaces: int = 1) -> tuple[np.ndarray, np.ndarray]:
    buffers = _buffers.__dict__
    size = 4 ** max(spaces, 1) << 16
    if buffers.get("hist") is None or buffers["hist"].size < size:
        buffers["hist"], buffers["seen"] = np.zeros(size, np.int64), np.empty(size, np.uint32)
    return buffers["hist"], buffers["seen"]


def _read_only(mask: np.ndarray) -> np.ndarray:
    """A C-contiguous read-only view of `mask` (a copy only when it is not contiguous): the kernel
    holds both masks in one tuple, which numba types only when both have one array type, and a
    mask may come read-only (a decoded buffer, the floor's constant frame) or not."""
    view = np.ascontiguousarray(mask).view()
    view.flags.writeable = False
    return view


def codes_of(luts: Sequence[np.ndarray]) -> np.ndarray:
    """(S, 256) uint8: each lookup table's label codes, as the count kernel takes them."""
    return np.stack([_codes(np.asarray(lut, np.int32)) for lut in luts])


def _cells_in_spaces(gt: np.ndarray, pred: np.ndarray, gt_codes: np.ndarray, pred_codes: np.ndarray, d: int,
                     gt_flags: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every pixel by (raw gt, raw pred, which bands in each space): _count_cells' cells, the
    ground truth's bands taken from `gt_flags` when given (truth_flags)."""
    if gt.shape != pred.shape or gt.ndim != 2:
        raise ValueError(f"shapes differ or are not 2-D: ground truth {gt.shape}, prediction {pred.shape}")
    if gt.dtype != np.uint8 or pred.dtype != np.uint8:
        raise ValueError(f"masks must be uint8, got {gt.dtype} and {pred.dtype}")
    if gt_flags is not None and gt_flags.shape != gt.shape:
        raise ValueError(f"the ground truth's bands are {gt_flags.shape}, its mask {gt.shape}")
    spaces = gt_codes.shape[0]
    hist, seen = _tables(spaces)
    known = _read_only(_NO_FLAGS if gt_flags is None else gt_flags)
    return _count_cells(_read_only(gt), _read_only(pred), gt_codes, pred_codes, int(d), known, gt_flags is not None,
                        *_scratch(2 * spaces, gt.shape), hist, seen)


def truth_flags(gt: np.ndarray, gt_codes: np.ndarray, d: int) -> np.ndarray:
    """(H, W) uint8, read-only: the ground truth's bands in every space of gt_codes (S, 256), bit
    2s for space s, as the count pass finds them: kept, they spare that pass its ground-truth half
    for every prediction scored against this mask."""
    gt = np.ascontiguousarray(gt)
    flags = np.empty(gt.shape, np.uint8)
    _map_flags(gt, gt_codes, int(d), 2, *_scratch(gt_codes.shape[0], gt.shape), flags)
    flags.flags.writeable = False
    return flags


_NO_FLAGS = np.zeros((1, 1), np.uint8)


def all_cells(gt: np.ndarray, pred: np.ndarray, gt_lut: np.ndarray, pred_lut: np.ndarray,
              d: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pixel by (raw gt, raw pred, which bands): cells are uint32 `flags << 16 | gt << 8 |
    pred` ascending, flags 0 (in neither band) included, counts int64.

    gt/pred are the raw uint8 masks of one shape; gt_lut/pred_lut send each raw value to its class
    in the band's label space (void and dropped values are labels of their own: distinct
    negative codes)."""
    return _cells_in_spaces(gt, pred, codes_of([gt_lut]), codes_of([pred_lut]), d)


def folded_cells(cells: np.ndarray, counts: np.ndarray,
                 spaces: int) -> tuple[tuple[np.ndarray, np.ndarray], list[tuple[np.ndarray, np.ndarray]]]:
    """Cells counted in `spaces` spaces at once as (the joint histogram's non-zero cells, as
    cellcount.joint_cells; each space's cells in its bands, flags GT_BAND | PRED_BAND)."""
    cells, counts, starts = _folds(cells, counts, spaces, _tables()[0])
    at = starts.tolist()
    return ((cells[:at[1]].astype(np.uint16), counts[:at[1]]),
            [(cells[at[k]:at[k + 1]], counts[at[k]:at[k + 1]]) for k in range(1, spaces + 1)])


def band_cells(gt: np.ndarray, pred: np.ndarray, gt_lut: np.ndarray, pred_lut: np.ndarray,
               d: int) -> tuple[np.ndarray, np.ndarray]:
    """The pixels in the ground truth's or the prediction's band, by (raw gt, raw pred, bands):
    all_cells' cells with flags GT_BAND | PRED_BAND."""
    return folded_cells(*all_cells(gt, pred, gt_lut, pred_lut, d), 1)[1][0]


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

    @cached_property
    def truth_key(self) -> tuple:
        """What the ground truth's bands depend on: its lookups into the spaces, and the width."""
        return self.spaces, tuple(lut.tobytes() for lut in self.gt_luts), self.ratio, self.pixels

    @cached_property
    def codes(self) -> tuple[np.ndarray, np.ndarray]:
        """The ground truth's and the prediction's codes in every space (codes_of)."""
        return codes_of(self.gt_luts), codes_of(self.pred_luts)

    def frame_counts(self, gt: np.ndarray, pred: np.ndarray, gt_flags: np.ndarray | None = None,
                     ) -> tuple[tuple[np.ndarray, np.ndarray], list[tuple[np.ndarray, np.ndarray]]]:
        """One frame's joint-histogram cells (as cellcount.joint_cells) and its band cells in
        each space, in one pass over the pixels for every space: it counts every pixel, so the
        joint cells need no pass of their own. `gt_flags`: the ground truth's bands, when kept
        (self.truth_flags(gt)), else found in the pass."""
        d = band_width(gt.shape, self.ratio, self.pixels)
        return folded_cells(*_cells_in_spaces(gt, pred, *self.codes, d, gt_flags), len(self.spaces))

    def truth_flags(self, gt: np.ndarray) -> np.ndarray:
        """The ground truth's bands in every space of the plan, for frame_counts' `gt_flags`."""
        return truth_flags(gt, self.codes[0], band_width(gt.shape, self.ratio, self.pixels))

    def frame_cells(self, gt: np.ndarray, pred: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """One frame's band cells in each space."""
        return self.frame_counts(gt, pred)[1]
