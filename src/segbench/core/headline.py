"""One submission's headline (the benchmark's floor comparison metric, e.g. shared_metrics.mIoU)
over a set of frames, held per independent unit (wall, drive, user) for the unit bootstrap, and
the paired difference of two submissions' headlines over the same units.

Built on core/bootstrap.py: the same per-group matrices, resample draws and metric registry,
restricted to the one report and the one metric (so a board's thousand resamples evaluate one
metric, not every metric of every report). Pure computation, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
import numpy as np

from ..errors import SegbenchError
from .benchmark import Benchmark, ReportSpec, applies
from .bootstrap import (
    ReportData,
    group_index,
    percentile_interval,
    replicate_values,
    report_data,
    resample_weights,
)
from .confusion import FrameCounts
from .evaluation import report_band_tallies, report_matrix
from .labels import LabelSpace
from .metric_registry import function


@dataclass(frozen=True)
class UnitData:
    """A submission's headline report, with the headline metric alone, over `frame_ids` (sorted),
    summed per unit; `units` are the sorted unit names, `unit` what they are (the group key)."""

    key: str  # 'report.metric'
    unit: str
    units: tuple[str, ...]
    frame_ids: tuple[str, ...]
    data: ReportData


def headline_report(benchmark: Benchmark) -> ReportSpec:
    """The floor comparison's report, holding its headline metric alone."""
    report_key, metric_key = benchmark.floor_compare_on
    report = next(r for r in benchmark.reports if r.key == report_key)
    return replace(report, metrics=tuple(m for m in report.metrics if m.key == metric_key))


def stack_data(report: ReportSpec, unit: str, frame_ids: Sequence[str], groups: Mapping[str, str],
               stack: np.ndarray, tallies: np.ndarray | None = None) -> UnitData:
    """UnitData of a one-metric report from its per-frame matrices (frames in `frame_ids`' order;
    `groups`: frame -> unit) and, for a boundary headline, band tallies."""
    (metric,) = report.metrics
    order = np.argsort(np.array(frame_ids, dtype=object), kind="stable")
    frames = tuple(frame_ids[i] for i in order)
    names, frame_group = group_index(frames, groups)
    return UnitData(f"{report.key}.{metric.key}", unit, tuple(names), frames,
                    report_data(report, stack[order], None if tallies is None else tallies[order], frame_group, len(names)))


def headline_data(benchmark: Benchmark, counts: FrameCounts, model_space: LabelSpace, groups: Mapping[str, str],
                  frames: Sequence[str] | None = None) -> UnitData:
    """A submission's headline over `frames` (default: all its frames; e.g. a phase's public ones)."""
    report = headline_report(benchmark)
    if not applies(report, benchmark, model_space):
        raise SegbenchError(f"the headline {'.'.join(benchmark.floor_compare_on)} does not apply to a model "
                            f"predicting '{model_space.name}'")
    chosen = counts.subset(sorted(counts.frame_ids if frames is None else frames))
    tallies = report_band_tallies(benchmark, report, model_space, chosen) if function(report.metrics[0]).bands else None
    stack = report_matrix(benchmark, report, model_space, chosen, per_frame=True)
    return stack_data(report, benchmark.group_key, chosen.frame_ids, groups, stack, tallies)


def weights(data: UnitData, resamples: int, seed: int) -> np.ndarray:
    """The (resamples, units) bootstrap draws over the data's units (bootstrap.resample_weights)."""
    return resample_weights(len(data.units), resamples, seed)


def replicates(data: UnitData, draws: np.ndarray) -> np.ndarray:
    """(resamples,) the headline of each resample, NaN where it is undefined."""
    return replicate_values({data.data.report.key: data.data}, draws)[data.key]


def point(data: UnitData) -> float:
    """The headline on all the units once (NaN: undefined)."""
    return float(replicates(data, np.ones((1, len(data.units)), dtype=np.int64))[0])


def check_paired(new: UnitData, old: UnitData) -> None:
    if new.frame_ids != old.frame_ids or new.key != old.key:
        raise SegbenchError(f"the two submissions' {new.key} are over different frames "
                            f"({len(new.frame_ids)} and {len(old.frame_ids)}); no paired comparison")


@dataclass(frozen=True)
class PairedDifference:
    """new minus old on the same units: the point difference, the standard error (the standard
    deviation, ddof 1, of the resampled differences that are defined) and the 95% percentile
    interval; None where undefined."""

    difference: float | None
    standard_error: float | None
    low: float | None
    high: float | None
    units: int
    unit: str


def number(value: float) -> float | None:
    return None if math.isnan(value) else value


# Headlines are ratios of pixel counts computed in floating point: resamples that agree exactly
# (one unit, or the same difference on every unit) still differ by a few ulps, which is no noise.
FLOAT_NOISE = 1e-12


def spread(values: np.ndarray) -> float | None:
    """The standard deviation (ddof 1) of the defined values, 0.0 below FLOAT_NOISE; None with
    fewer than two."""
    defined = values[~np.isnan(values)]
    if defined.size < 2:
        return None
    deviation = float(defined.std(ddof=1))
    return 0.0 if deviation < FLOAT_NOISE else deviation


def paired_difference(new: UnitData, old: UnitData, resamples: int, seed: int) -> PairedDifference:
    check_paired(new, old)
    draws = weights(new, resamples, seed)
    differences = replicates(new, draws) - replicates(old, draws)
    low, high = percentile_interval(differences)
    return PairedDifference(number(point(new) - point(old)), spread(differences), low, high, len(new.units), new.unit)

