"""numpy's mean of a row of per-frame values repeated by multiplicities, without building the
repeated arrays: a bootstrap resample's frame-averaged metric (core/metrics.frame_mean) must be
bit for bit what numpy's mean of that resample's own per-frame values gives (evaluation.evaluate
on its frames, tests/test_bootstrap.py), and numpy sums a float64 array pairwise in blocks of 8
accumulators (its `pairwise_sum`), so the order of the additions decides the last bit. The
compiled kernel (core/repeated_mean_kernel.py) adds in that order; building each resample's array
instead cost a fifth of a worker's time on a 1,600-frame upload (docs/performance.md)."""

from __future__ import annotations

import numpy as np


def repeated_means(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(rows,) float64: row r is np.mean(np.repeat(values, counts[r])), bit for bit; NaN for a row
    that repeats nothing. `values` (n,) float64, `counts` (rows, n) non-negative integers. One row
    that counts every frame once (an evaluation, not a resample) is numpy's mean itself, so that a
    command that resamples nothing never imports the compiled kernel."""
    counts = np.asarray(counts, np.int64)
    if counts.shape[0] == 1 and counts.shape[1] and (counts == 1).all():
        return np.array([np.mean(np.asarray(values, np.float64))])
    from .repeated_mean_kernel import compiled_repeated_means

    return compiled_repeated_means(values, counts)
