"""The compiled kernel of core/repeated_mean.py: numpy's mean of each row of per-frame values
repeated by multiplicities, added in numpy's pairwise order (its `pairwise_sum`: blocks of 8
accumulators), without building the repeated arrays. Compiled with numba, GIL released; imported
only by a resampling (its import and cache load cost a command about 0.3 s)."""

from __future__ import annotations

import numba
import numpy as np

BLOCK = 128  # numpy's PW_BLOCKSIZE: below it, 8 accumulators; above, halves
UNROLLED = 4  # copies of a frame's value written without a loop (_means)


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _block_sum(a: np.ndarray, start: int, n: int) -> float:
    """numpy's pairwise_sum of a[start:start + n] for n <= BLOCK: a plain loop below 8, else 8
    accumulators, added in pairs, then the rest."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[start + i]
        return res
    r0, r1, r2, r3 = a[start], a[start + 1], a[start + 2], a[start + 3]
    r4, r5, r6, r7 = a[start + 4], a[start + 5], a[start + 6], a[start + 7]
    i = 8
    whole = n - n % 8
    while i < whole:
        r0 += a[start + i]
        r1 += a[start + i + 1]
        r2 += a[start + i + 2]
        r3 += a[start + i + 3]
        r4 += a[start + i + 4]
        r5 += a[start + i + 5]
        r6 += a[start + i + 6]
        r7 += a[start + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[start + i]
        i += 1
    return res


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _pairwise_sum(a: np.ndarray, n: int) -> float:
    """a[:n] summed as numpy's pairwise_sum adds a contiguous float64 array: above BLOCK, the sum
    of its two halves (the first a multiple of 8 long), each summed the same way. Iterative, with
    its own stack (numba's cache does not load recursive functions safely)."""
    if n <= BLOCK:
        return _block_sum(a, 0, n)
    starts, lengths, phases = np.empty(64, np.int64), np.empty(64, np.int64), np.empty(64, np.int64)
    sums = np.empty(64, np.float64)
    top, held = 0, 0
    starts[0], lengths[0], phases[0] = 0, n, 0
    while top >= 0:
        start, length = starts[top], lengths[top]
        if length <= BLOCK:
            sums[held] = _block_sum(a, start, length)
            held += 1
            top -= 1
            continue
        half = length // 2
        half -= half % 8
        if phases[top] == 2:  # both halves summed: add them, left first
            sums[held - 2] = sums[held - 2] + sums[held - 1]
            held -= 1
            top -= 1
            continue
        phases[top] += 1
        first = phases[top] == 1
        top += 1
        starts[top] = start if first else start + half
        lengths[top] = half if first else length - half
        phases[top] = 0
    return sums[0]


@numba.njit(nogil=True, cache=True, boundscheck=False)
def _means(values: np.ndarray, counts: np.ndarray, out: np.ndarray) -> None:
    longest = 0
    for r in range(counts.shape[0]):
        longest = max(longest, counts[r].sum())
    row = np.empty(longest + UNROLLED, np.float64)
    for r in range(counts.shape[0]):
        length = 0
        for f in range(counts.shape[1]):
            # A resample draws a frame 0, 1, 2 ... times at random: a loop per draw mispredicts its
            # end about once a frame, so the first UNROLLED copies are written whatever the count
            # (the next frame's overwrite the surplus), and a loop only for more.
            value, count = values[f], counts[r, f]
            for extra in range(UNROLLED):  # a constant count: compiled without a branch
                row[length + extra] = value
            for extra in range(UNROLLED, count):
                row[length + extra] = value
            length += count
        # numpy's reduction starts from its identity, 0.0 (so an all -0.0 row sums to 0.0)
        out[r] = (0.0 + _pairwise_sum(row, length)) / length if length else np.nan


def compiled_repeated_means(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(rows,) float64: row r is np.mean(np.repeat(values, counts[r])), bit for bit; NaN for a row
    that repeats nothing. `values` (n,) float64, `counts` (rows, n) non-negative integers."""
    out = np.empty(counts.shape[0], np.float64)
    # counts as they lie: the bootstrap gathers them in C order (replicate_values), which is read fastest
    _means(np.ascontiguousarray(values, np.float64), np.asarray(counts, np.int64), out)
    return out
