"""Which boundary bands the scoring pass counts for a model: one per report space of the reports
with a boundary metric that apply to it. Planned from the definition and the metric registry's
declarations alone, so scoring does not depend on the metric code."""

from __future__ import annotations

from ..errors import SegbenchError
from .benchmark import Benchmark, applies
from .boundary import MAX_LABELS, BandPlan
from .labels import LabelSpace
from .metric_registry import function


def band_plan(benchmark: Benchmark, model_space: LabelSpace) -> BandPlan | None:
    """The boundary bands to count while scoring a model: one per report space of the reports with
    a boundary metric that apply to it; None when there is none."""
    spaces = list(dict.fromkeys(
        r.space.name for r in benchmark.reports
        if applies(r, benchmark, model_space) and any(function(m).bands for m in r.metrics)
    ))
    if not spaces or benchmark.boundary is None:
        return None
    for name in spaces:
        if benchmark.space(name).size > MAX_LABELS:
            raise SegbenchError(f"label space '{name}': boundary bands handle at most {MAX_LABELS} classes")
    gt = benchmark.ground_truth
    return BandPlan(
        tuple(spaces),
        tuple(benchmark.raw_lut(gt, benchmark.space(s)) for s in spaces),
        tuple(benchmark.raw_lut(model_space, benchmark.space(s)) for s in spaces),
        **benchmark.boundary,
    )
