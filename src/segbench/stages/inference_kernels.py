"""Compiled (numba) loops of inference on the CPU: input frames into a batch, logits to a uint8 mask.

`place` writes an (h, w, 3) RGB image into one (3, H, W) float32 slot of a batch, channel-first,
filling the rest (bottom/right padding) with a per-channel value: the collation of
`inference.collate`, in one pass, converting uint8 exactly.

The rest turns logits into a mask with the protocol's bilinear resizes and the argmax.

The harness's logit resizes are separable bilinear resizes (align_corners=False, no antialias):
rows first, then columns, each output value reading two source values with weights
(w_low, w_high) — the rows of `inference.interpolation_matrix`, whose matrix products the torch
path (`inference.bilinear`) computes. Here each 1-D step is computed directly as

    out = fma(w_high, x[high], w_low * x[low])            (float32, one fused multiply-add)

which is the value a dot product of a matrix row with the input computes when it accumulates
in index order with fused multiply-adds — what BLAS does (the zero weights of the matrix add
exact zeros), except where a BLAS kernel splits its sum between blocks of the index, which it
rounds separately (with MKL on x86, where `low` and `high` straddle a multiple of 192; a
difference of at most one unit in the last place, and only at those rows or columns). Where
`low == high` (the last row or column) the single weight is (1 - frac) + frac rounded to
float32, as the matrix accumulates it. Non-finite logits are not mixed into their neighbours
the way a dense product would.

`all_finite` tells whether a frame's logits hold a NaN or an infinity (a broken model), read once
in the helper thread that makes its mask.

The argmax is over channels, first maximum on ties, a NaN counting as the maximum (the first
NaN wins), as torch.argmax. The resize to the ground truth is fused with the argmax row by row,
so no (C, H, W) tensor at the ground-truth size is ever made (a 150-class model at phone-photo
size costs C x W floats of scratch), and it takes a band of the source's rows, so the logits
resized to the input size are made band by band too (`inference_resize.mask_from_array`).
Every kernel releases the GIL: masks are made in helper threads while the model runs.
"""

from __future__ import annotations

from functools import lru_cache

import numba
import numpy as np
import torch
from numba import types
from numba.extending import intrinsic


@intrinsic
def _fma(typingctx, a, b, c):
    """a * b + c in float32 with one rounding (llvm.fma)."""
    sig = types.float32(types.float32, types.float32, types.float32)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


@lru_cache(maxsize=64)
def axis_weights(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, w_low, w_high) of the 1-D resize n_in -> n_out: `inference.interpolation_matrix`'s
    rows as their two entries (w_high is 0 where low == high, the single entry then being w_low)."""
    dst = torch.arange(0, n_out, dtype=torch.float64)
    src = ((dst + 0.5) * (n_in / n_out) - 0.5).clamp(min=0.0)
    low = src.floor().long().clamp(max=n_in - 1)
    high = (low + 1).clamp(max=n_in - 1)
    frac = (src - low).to(torch.float32)
    w_low = 1 - frac
    same = low == high
    w_low = torch.where(same, w_low + frac, w_low)  # the matrix accumulates both weights in one cell
    w_high = torch.where(same, torch.zeros_like(frac), frac)
    arrays = (low.to(torch.int64).numpy(), high.to(torch.int64).numpy(), w_low.numpy(), w_high.numpy())
    for a in arrays:
        a.setflags(write=False)
    return arrays


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _place(image, pad, out):  # pragma: no cover - compiled
    height, width, _ = image.shape
    _, out_height, out_width = out.shape
    for c in range(3):
        value = pad[c]
        for i in range(height):
            for j in range(width):
                out[c, i, j] = image[i, j, c]
            for j in range(width, out_width):
                out[c, i, j] = value
        for i in range(height, out_height):
            for j in range(out_width):
                out[c, i, j] = value


def place(image: np.ndarray, pad: np.ndarray, out: np.ndarray) -> None:
    """out[c, :h, :w] = image[:, :, c] (uint8 or float32, converted exactly), the rest of out
    (3, H, W) float32 = pad[c] (float32)."""
    if image.ndim != 3 or image.shape[2] != 3 or out.shape[0] != 3:
        raise ValueError(f"place: image {image.shape} must be (h, w, 3) and out {out.shape} (3, H, W)")
    if image.shape[0] > out.shape[1] or image.shape[1] > out.shape[2]:
        raise ValueError(f"place: image {image.shape[:2]} does not fit in {out.shape[1:]}")
    _place(image, pad, out)


@numba.njit(inline="always", boundscheck=False)
def _argmax_step(value, c, best, index):  # pragma: no cover - compiled
    """One channel of a running argmax over a row: the first maximum wins, NaN beats any number
    (torch.argmax's rule). Channel 0 initialises `best` and `index`."""
    for j in range(value.shape[0]):
        v = value[j]
        b = best[j]
        if c == 0 or v > b or (v != v and b == b):
            best[j] = v
            index[j] = c


@numba.njit(inline="always", boundscheck=False)
def _resized_row(x, c, lo, hi, wl, wh, c_low, c_high, c_wl, c_wh, row, out):  # pragma: no cover - compiled
    """One output row of channel c: the two source rows blended, then the columns (one fma per tap)."""
    for k in range(row.shape[0]):
        row[k] = _fma(wh, x[c, hi, k], wl * x[c, lo, k])
    for j in range(out.shape[0]):
        out[j] = _fma(c_wh[j], row[c_high[j]], c_wl[j] * row[c_low[j]])


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _argmax_rows(x, out):  # pragma: no cover - compiled
    channels, height, width = x.shape
    best = np.empty(width, np.float32)
    index = np.empty(width, np.uint8)
    for i in range(height):
        for c in range(channels):
            _argmax_step(x[c, i], c, best, index)
        out[i, :] = index


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _resize(x, r_low, r_high, r_wl, r_wh, c_low, c_high, c_wl, c_wh, out):  # pragma: no cover - compiled
    row = np.empty(x.shape[2], np.float32)
    for c in range(x.shape[0]):
        for i in range(r_low.shape[0]):
            _resized_row(x, c, r_low[i], r_high[i], r_wl[i], r_wh[i], c_low, c_high, c_wl, c_wh, row, out[c, i])


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _resize_argmax(x, r_low, r_high, r_wl, r_wh, c_low, c_high, c_wl, c_wh, out):  # pragma: no cover - compiled
    width = c_low.shape[0]
    row = np.empty(x.shape[2], np.float32)
    value = np.empty(width, np.float32)
    best = np.empty(width, np.float32)
    index = np.empty(width, np.uint8)
    for i in range(r_low.shape[0]):
        for c in range(x.shape[0]):
            _resized_row(x, c, r_low[i], r_high[i], r_wl[i], r_wh[i], c_low, c_high, c_wl, c_wh, row, value)
            _argmax_step(value, c, best, index)
        out[i, :] = index


FLOAT32_EXPONENT = 0x7F800000  # all exponent bits set: an infinity or a NaN


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _non_finite_count(bits):  # pragma: no cover - compiled
    count = 0
    for k in range(bits.shape[0]):  # no branch: the loop vectorises (an early exit would not)
        count += (bits[k] & FLOAT32_EXPONENT) == FLOAT32_EXPONENT
    return count


def all_finite(x: np.ndarray) -> bool:
    """Whether every value of the float32 array x is finite (no NaN, no infinity): one read of
    its bits, at memory speed, without the boolean array np.isfinite would make."""
    if x.dtype != np.float32:
        raise ValueError(f"all_finite: float32 values expected, got {x.dtype}")
    return _non_finite_count(np.ascontiguousarray(x).reshape(-1).view(np.uint32)) == 0


def _window(weights, span: tuple[int, int] | None):
    return weights if span is None else tuple(a[span[0] : span[1]] for a in weights)


def resize(
    x: np.ndarray,
    out_size: tuple[int, int],
    rows: tuple[int, int] | None = None,
    cols: tuple[int, int] | None = None,
) -> np.ndarray:
    """Rows rows[0]..rows[1]-1 and columns cols[0]..cols[1]-1 of x (C, h, w) float32 resized
    bilinearly to (C, *out_size): `inference.bilinear`'s values (see above)."""
    r = _window(axis_weights(x.shape[1], out_size[0]), rows)
    c = _window(axis_weights(x.shape[2], out_size[1]), cols)
    out = np.empty((x.shape[0], r[0].shape[0], c[0].shape[0]), np.float32)
    _resize(x, *r, *c, out)
    return out


def argmax(x: np.ndarray) -> np.ndarray:
    """(H, W) uint8 index of the largest of the C channels of x (C, H, W) float32; C <= 255."""
    out = np.empty(x.shape[1:], np.uint8)
    _argmax_rows(x, out)
    return out


def source_rows(n_in: int, n_out: int, rows: tuple[int, int]) -> tuple[int, int]:
    """The source rows [first, last) that output rows rows[0]..rows[1]-1 of the 1-D resize
    n_in -> n_out read (its weights are monotone)."""
    low, high, _, _ = axis_weights(n_in, n_out)
    return int(low[rows[0]]), int(high[rows[1] - 1]) + 1


def resize_argmax(x: np.ndarray, out_size: tuple[int, int], rows: tuple[int, int] | None = None,
                  source: tuple[int, int] | None = None) -> np.ndarray:
    """argmax(resize(s, out_size)) as a uint8 mask, without making the resized array: its rows
    rows[0]..rows[1]-1 (default: all). x is the source s (C, h, w), or, with `source` = (h,
    first), only s's rows first.. (source_rows of those output rows): each value is the one the
    whole source gives, the same two weights read at the same rows."""
    height, first = source or (x.shape[1], 0)
    rows = rows or (0, out_size[0])
    low, high, w_low, w_high = _window(axis_weights(height, out_size[0]), rows)
    out = np.empty((rows[1] - rows[0], out_size[1]), np.uint8)
    _resize_argmax(x, low - first, high - first, w_low, w_high, *axis_weights(x.shape[2], out_size[1]), out)
    return out
