"""Benchmark definitions read from config/ (segbench.protocols.definitions): mapping files."""

from __future__ import annotations

from segbench.protocols.definitions import load_benchmark


def test_mapping_files_are_loaded():
    benchmark = load_benchmark("idd20k-icvgip2020")
    assert ("idd-level3-misc", "idd-level2") in benchmark.mapping_rules
    assert benchmark.reaches(benchmark.ground_truth, benchmark.space("idd-level1-reference"))
    assert not benchmark.reaches(benchmark.space("idd-level2"), benchmark.space("idd-level3-misc"))
