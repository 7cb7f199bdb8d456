"""core/runs.py (a map held as runs of one value): it expands to itself, whatever its runs."""

from __future__ import annotations

import numpy as np

from segbench.core.runs import Runs


def test_maps_expand_to_themselves():
    rng = np.random.default_rng(3)
    blocky = np.kron(rng.integers(0, 5, (9, 13)), np.ones((7, 11), int)).astype(np.uint8)
    cases = [blocky, rng.integers(0, 256, (5, 7)).astype(np.uint8), np.zeros((4, 6), np.uint8),
             np.full((1, 1), 255, np.uint8), np.zeros((0, 3), np.uint8), np.arange(256, dtype=np.uint8).reshape(16, 16)]
    for array in cases:
        runs = Runs.of(array)
        out = runs.expanded()
        assert out.dtype == np.uint8 and out.shape == array.shape and np.array_equal(out, array)
        assert runs.values.size == (0 if array.size == 0 else 1 + int((array.ravel()[1:] != array.ravel()[:-1]).sum()))
        assert runs.nbytes == 5 * runs.values.size and int(runs.lengths.sum()) == array.size


def test_a_run_crosses_rows_and_an_expansion_is_a_new_array():
    array = np.array([[1, 1, 2], [2, 2, 2]], np.uint8)
    runs = Runs.of(array)
    assert runs.values.tolist() == [1, 2] and runs.lengths.tolist() == [2, 4]
    out = runs.expanded()
    out[:] = 9
    assert np.array_equal(runs.expanded(), array)
