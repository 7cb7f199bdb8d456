"""The report's view of a figures folder (segbench.workflow.figure_report): each PNG core.figures
names is found by exactly one pattern, and labelled by its kind and its key."""

import re

from segbench.core.figures import figure_files
from segbench.protocols.definitions import known_benchmarks, load_benchmark
from segbench.workflow.figure_report import report_labels, report_patterns


def found(name: str) -> list[dict[str, str]]:
    """The wildcards of each pattern matching `name`, as Snakemake's glob_wildcards reads them."""
    matches = []
    for pattern in report_patterns():
        regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>.+)", re.escape(pattern))
        match = re.fullmatch(regex, name)
        if match:
            matches.append(match.groupdict())
    return matches


def test_every_figure_is_found_once_and_labelled():
    assert report_patterns() == ["iou-{report}.png", "confusion-{space}.png", "fraction-{metric}.png"]
    for benchmark in map(load_benchmark, known_benchmarks()):
        for name in figure_files(benchmark):
            assert len(found(name)) == (name.endswith(".png")), name
    job = {"benchmark": "painting-vision", "split": "test", "model": "best"}
    labels = [report_labels(job | found(n)[0]) for n in figure_files(load_benchmark("painting-vision")) if n.endswith(".png")]
    assert labels == [
        {"figure": "per-class IoU", "space": "shared_metrics"}, {"figure": "per-class IoU", "space": "paint_state_metrics"},
        {"figure": "confusion", "space": "ground-truth"}, {"figure": "confusion", "space": "shared_metrics"},
        {"figure": "confusion", "space": "paint_state_metrics"},
        {"figure": "per-frame fraction", "space": "paint_state_metrics.painted_coverage_mae"}]
