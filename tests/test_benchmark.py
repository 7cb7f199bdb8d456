"""A benchmark definition as data (segbench.core.benchmark): its lookups between label spaces."""

from __future__ import annotations

import numpy as np

from segbench.core.labels import DROP, INVALID
from segbench.protocols.definitions import load_benchmark


def test_raw_lut_sends_raw_values_through_the_declared_mapping():
    benchmark = load_benchmark("painting-vision")
    ten, tier1 = benchmark.space("painting-vision-10"), benchmark.space("painting-vision-tier1")
    # the definition's rules: the three wall classes -> wall, window -> window, everything else -> other
    expected = np.full(256, INVALID)
    expected[:10] = [0, 1, 1, 1, 0, 0, 0, 0, 2, 0]
    expected[255] = DROP
    assert np.array_equal(benchmark.raw_lut(ten, tier1), expected)


def test_raw_lut_into_its_own_space_is_the_spaces_raw_lookup():
    benchmark = load_benchmark("painting-vision")
    ten = benchmark.space("painting-vision-10")
    assert np.array_equal(benchmark.raw_lut(ten, ten), ten.raw_lut())
