"""core/repeated_mean.py and its compiled kernel against numpy itself: each row's mean equal, not
close, to np.mean of the repeated array, across the lengths where numpy's pairwise summation
changes its order; and a command that resamples nothing never loads the kernel."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from segbench.core.repeated_mean import repeated_means
from segbench.core.repeated_mean_kernel import compiled_repeated_means


def test_every_length_around_numpys_blocks_gives_numpys_mean_bit_for_bit():
    rng = np.random.default_rng(11)
    lengths = [*range(1, 300), 383, 384, 385, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 5000, 12_345]
    for length in lengths:
        values = rng.random(length) * rng.choice([1e-6, 1.0, 3e5])
        counts = np.ones((1, length), np.int64)
        assert compiled_repeated_means(values, counts)[0] == np.mean(values), length
        assert repeated_means(values, counts).tolist() == [np.mean(values)], length


def test_rows_of_multiplicities_equal_numpys_mean_of_each_repeated_row():
    rng = np.random.default_rng(12)
    for frames in (1, 5, 9, 64, 130, 700):
        values = rng.random(frames)
        counts = rng.integers(0, 4, (200, frames))
        counts[100:] = rng.integers(0, 12, (100, frames))  # more draws of a frame than the kernel writes unlooped
        counts[0] = 0  # a row that draws nothing: NaN
        means = repeated_means(values, counts)
        assert np.isnan(means[0])
        for r in range(1, 200):
            if counts[r].sum():
                assert means[r] == np.mean(np.repeat(values, counts[r])), (frames, r)


def test_negative_zeros_sum_to_zero_as_numpy_starts_from_its_identity():
    for length in (1, 3, 8, 9, 200):
        values = np.full(length, -0.0)
        for means in (compiled_repeated_means, repeated_means):
            mean = means(values, np.ones((1, length), np.int64))[0]
            assert mean == 0.0 and not np.signbit(mean) and not np.signbit(np.mean(values))


def test_no_frames_is_nan():
    assert np.isnan(repeated_means(np.empty(0), np.empty((2, 0), np.int64))).all()


def test_the_commands_that_resample_nothing_do_not_import_numba():
    # numba's import and its kernels' cache load cost each such job about 0.3 s of a workflow run
    code = ("import sys; import segbench.steps.metrics, segbench.steps.results, segbench.steps.submission; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'numba')[:1])")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"
