"""Uncertainty by bootstrap over the benchmark's independent units (walls, drives, users).

Frames of one group are correlated, so the resampling unit is the group, never the frame: each
resample draws the groups with replacement, sums their confusion counts and recomputes every
scalar metric of every report through the metric registry (so the bootstrap and the reported
numbers can never disagree on what a metric is). Intervals are 95% percentile
intervals. A paired comparison draws the same groups for both models and bootstraps the
difference of each metric.

Pure computation, no I/O. Vectorised: per-group matrices in each report space are computed
once; a resample is a vector of group multiplicities, all resamples' matrices come from one
matrix product, and every metric is evaluated on the whole stack at once (core.metrics: each
resample's value bit for bit the one its own matrix gives). A model's values on the resamples
(Replicated) depend only on its counts, the groups, the resamples and the seed: a reference's are
computed once and paired with every model scored on its frames (the server's workers keep them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SegbenchError
from .benchmark import Benchmark, ReportSpec, applies
from .confusion import BAND_TALLIES, FrameCounts
from .evaluation import report_band_tallies, report_matrix
from .labels import LabelSpace
from .metric_registry import MetricSpec, function
from .metric_values import ReportView, scalar_values

CONFIDENCE = 0.95


def group_index(frame_ids: Sequence[str], groups: Mapping[str, str]) -> tuple[list[str], np.ndarray]:
    """Sorted group ids and, for each frame, the index of its group; every frame needs a group."""
    missing = [f for f in frame_ids if f not in groups]
    if missing:
        raise SegbenchError(f"{len(missing)} frame(s) have no group in the manifest: {missing[:10]}")
    names = sorted({groups[f] for f in frame_ids})
    position = {g: i for i, g in enumerate(names)}
    return names, np.array([position[groups[f]] for f in frame_ids], dtype=np.int64)


def resample_weights(groups: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples, groups) multiplicities: row b counts how often each group is drawn in resample b.

    Drawn with numpy's default_rng(seed): indices = rng.integers(0, groups, (resamples, groups)).
    """
    if groups < 1:
        raise SegbenchError("the bootstrap needs at least one group")
    if resamples < 1:
        raise SegbenchError("the bootstrap needs at least one resample")
    indices = np.random.default_rng(seed).integers(0, groups, size=(resamples, groups))
    offsets = np.arange(resamples)[:, None] * groups
    return np.bincount((indices + offsets).ravel(), minlength=resamples * groups).reshape(resamples, groups)


@dataclass(frozen=True)
class ReportData:
    """One report of one model: its per-frame matrices, summed per group."""

    report: ReportSpec
    per_frame: np.ndarray  # (frames, K, K + 1), evaluation.report_matrix
    per_group: np.ndarray  # (groups, K, K + 1)
    frame_group: np.ndarray  # (frames,) group index
    group_bands: np.ndarray | None  # (groups, 3, K) boundary-band tallies; None without boundary metrics


def scalar_specs(report: ReportSpec) -> list[MetricSpec]:
    return [spec for spec in report.metrics if not function(spec).per_class]


def prepare(
    benchmark: Benchmark, counts: FrameCounts, model_space: LabelSpace, groups: Mapping[str, str]
) -> tuple[list[str], dict[str, ReportData]]:
    """Per-group matrices of every report that applies to the model."""
    names, frame_group = group_index(counts.frame_ids, groups)
    data: dict[str, ReportData] = {}
    for report in benchmark.reports:
        if not applies(report, benchmark, model_space):
            continue
        stack = report_matrix(benchmark, report, model_space, counts, per_frame=True)
        tallies = report_band_tallies(benchmark, report, model_space, counts) if any(
            function(spec).bands for spec in report.metrics) else None
        data[report.key] = report_data(report, stack, tallies, frame_group, len(names))
    return names, data


def report_data(report: ReportSpec, stack: np.ndarray, tallies: np.ndarray | None, frame_group: np.ndarray,
                groups: int) -> ReportData:
    """One report's per-frame matrices (and band tallies, or None) summed per group."""
    per_group = np.zeros((groups, *stack.shape[1:]), dtype=np.int64)
    np.add.at(per_group, frame_group, stack)
    group_bands = None
    if tallies is not None:
        group_bands = np.zeros((groups, BAND_TALLIES, report.space.size), dtype=np.int64)
        np.add.at(group_bands, frame_group, tallies)
    return ReportData(report, stack, per_group, frame_group, group_bands)


EXACT_BELOW = 2 ** 53  # float64 holds every integer below this exactly


def resampled_sums(weights: np.ndarray, per_group: np.ndarray) -> np.ndarray:
    """(B, ...) int64: each resample's sum of the per-group counts (G, ...) with its multiplicities
    (B, G). Through float64's BLAS product when no sum can reach 2^53 (each row of weights sums to
    at most its largest row sum, every count at most the largest: integers that small are added
    without rounding, in any order, so the result is exact), else numpy's integer product, about
    ten times slower (it has no BLAS)."""
    flat = per_group.reshape(len(per_group), -1)
    largest = int(np.abs(flat).max(initial=0)) * int(np.abs(weights).sum(axis=1).max(initial=0))
    if largest < EXACT_BELOW:
        sums = (weights.astype(np.float64) @ flat.astype(np.float64)).astype(np.int64)
    else:
        sums = weights @ flat
    return sums.reshape(len(weights), *per_group.shape[1:])


def replicate_values(data: Mapping[str, ReportData], weights: np.ndarray) -> dict[str, np.ndarray]:
    """'report.metric' -> (resamples,) values, NaN where a resample leaves a metric undefined."""
    out: dict[str, np.ndarray] = {}
    for key, item in data.items():
        report = item.report
        # All resamples' matrices in one product: (B, G) @ (G, K*(K+1)).
        matrices = resampled_sums(weights, item.per_group)
        bands = None if item.group_bands is None else resampled_sums(weights, item.group_bands)
        # A resample holds each frame of a drawn group as many times as it drew the group (take: in
        # C order, which the per-frame means read 1.7 x faster than indexing's Fortran order).
        view = ReportView(report.space, report.evaluated(), matrices, lambda item=item: item.per_frame,
                          lambda bands=bands: bands, weights.take(item.frame_group, axis=1))
        for spec in scalar_specs(report):
            out[f"{key}.{spec.key}"] = scalar_values(spec, view)
    return out


def points_and_replicates(data: Mapping[str, ReportData],
                          weights: np.ndarray) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """(the metrics on all groups once, equal to evaluation.evaluate's; their values on each
    resample of `weights`) in one pass: the all-groups row is evaluated in the resamples' stack,
    which gives each row its own matrix's value."""
    if not data:
        return {}, {}
    rows = replicate_values(data, np.vstack([np.ones((1, weights.shape[1]), np.int64), weights]))
    return {key: float(values[0]) for key, values in rows.items()}, {key: values[1:] for key, values in rows.items()}


def point_values(data: Mapping[str, ReportData]) -> dict[str, float]:
    """The metrics on all groups once (equal to evaluation.evaluate's)."""
    groups = next(iter(data.values())).per_group.shape[0] if data else 0
    return points_and_replicates(data, np.zeros((0, groups), np.int64))[0]


TAIL = (1 - CONFIDENCE) / 2 * 100
TAILS = [TAIL, 100 - TAIL]


def percentile_interval(values: np.ndarray) -> tuple[float | None, float | None]:
    """The 95% percentile interval of the defined values (None when none is defined)."""
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return None, None
    low, high = np.percentile(defined, TAILS)
    return float(low), float(high)


def percentile_intervals(rows: list[np.ndarray]) -> list[tuple[float | None, float | None]]:
    """percentile_interval of each of `rows` (one length, at least 1), those with every value
    defined in one call: numpy's percentile along an axis computes each row as of the row alone."""
    if not rows:
        return []
    stack = np.array(rows, dtype=np.float64)
    whole = ~np.isnan(stack).any(axis=1)
    out = {}
    if whole.any():
        lows, highs = np.percentile(stack[whole], TAILS, axis=1)
        out = dict(zip(np.flatnonzero(whole).tolist(), zip(lows.tolist(), highs.tolist())))
    return [out[i] if i in out else percentile_interval(row) for i, row in enumerate(stack)]


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def intervals(points: Mapping[str, float], replicates: Mapping[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    bounds = percentile_intervals(list(replicates.values()))
    return {key: {"value": _number(points[key]), "low": low, "high": high,
                  "undefined_resamples": int(np.isnan(values).sum())}
            for (key, values), (low, high) in zip(replicates.items(), bounds)}


def paired(
    points: Mapping[str, float], replicates: Mapping[str, np.ndarray],
    other_points: Mapping[str, float], other_replicates: Mapping[str, np.ndarray],
) -> dict[str, dict[str, Any]]:
    """Model minus other, per metric both define, over the same resampled groups."""
    differences = {key: replicates[key] - other_replicates[key] for key in replicates if key in other_replicates}
    out = {}
    for (key, difference), (low, high) in zip(differences.items(), percentile_intervals(list(differences.values()))):
        point = points[key] - other_points[key]
        out[key] = {
            "value": _number(points[key]),
            "other": _number(other_points[key]),
            "difference": _number(point),
            "low": low,
            "high": high,
            "excludes_zero": None if low is None else bool(low > 0 or high < 0),
            "undefined_resamples": int(np.isnan(difference).sum()),
        }
    return out


@dataclass(frozen=True)
class Subject:
    """A model's counts as the bootstrap needs them."""

    name: str
    counts: FrameCounts
    space: LabelSpace


@dataclass(frozen=True)
class Replicated:
    """A subject's metrics on all its groups (`points`) and on every resample of them
    (`replicates`): what its intervals and a paired comparison with it are made of. Two subjects
    on the same frames, groups, resamples and seed share their resamples, so a reference's (the
    floor's, the baseline's) is computed once and paired with every model on those frames."""

    name: str
    frames: tuple[str, ...]  # sorted
    groups: int
    resamples: int
    seed: int
    points: dict[str, float]
    replicates: dict[str, np.ndarray]


def replicated(benchmark: Benchmark, subject: Subject, groups: Mapping[str, str], resamples: int,
               seed: int) -> Replicated:
    names, data = prepare(benchmark, subject.counts, subject.space, groups)
    points, replicates = points_and_replicates(data, resample_weights(len(names), resamples, seed))
    for values in replicates.values():
        values.flags.writeable = False  # shared by every comparison with the subject
    return Replicated(subject.name, tuple(sorted(subject.counts.frame_ids)), len(names), resamples, seed,
                      points, replicates)


def check_paired(subject: Replicated, other: str, frames: tuple[str, ...]) -> None:
    """A paired comparison needs the other model (named `other`) on the subject's frames (sorted)."""
    if frames != subject.frames:
        raise SegbenchError(f"'{subject.name}' and '{other}' were scored on different frames; no paired comparison")


def bootstrap_document(benchmark: Benchmark, subject: Replicated, others: Mapping[str, Replicated | None]) -> dict[str, Any]:
    """Intervals of every scalar metric of `subject`, and paired comparisons with `others` (role
    -> the other's Replicated on the same frames, resamples and seed; None: no such other)."""
    document: dict[str, Any] = {
        "method": "percentile bootstrap over groups (resampled with replacement, counts summed)",
        "group_key": benchmark.group_key,
        "groups": subject.groups,
        "frames": len(subject.frames),
        "resamples": subject.resamples,
        "seed": subject.seed,
        "confidence": CONFIDENCE,
        "model": subject.name,
        "intervals": intervals(subject.points, subject.replicates),
        "comparisons": {},
    }
    for role, other in others.items():
        if other is None:
            document["comparisons"][role] = None
            continue
        check_paired(subject, other.name, other.frames)
        assert (other.groups, other.resamples, other.seed) == (subject.groups, subject.resamples, subject.seed)
        document["comparisons"][role] = {
            "against": other.name,
            "metrics": paired(subject.points, subject.replicates, other.points, other.replicates),
        }
    return document


def bootstrap(
    benchmark: Benchmark,
    subject: Subject,
    groups: Mapping[str, str],
    resamples: int,
    seed: int,
    others: Mapping[str, Subject | None] | None = None,
) -> dict[str, Any]:
    """Intervals of every scalar metric of `subject`, and paired comparisons with `others`
    (role -> subject, e.g. {'baseline': ..., 'floor': ...}), all on the same resampled groups."""
    model = replicated(benchmark, subject, groups, resamples, seed)
    references: dict[str, Replicated | None] = {}
    for role, other in (others or {}).items():
        if other is not None:  # other frames refused before the other's groups are looked up
            check_paired(model, other.name, tuple(sorted(other.counts.frame_ids)))
        references[role] = None if other is None else replicated(benchmark, other, groups, resamples, seed)
    return bootstrap_document(benchmark, model, references)
