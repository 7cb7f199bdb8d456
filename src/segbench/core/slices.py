"""Slices by metadata: every metric of every report per value of a metadata column (a benchmark's
`slices`), from the stored per-frame counts — a slice is a set of frames, nothing is re-scored —
with bootstrap intervals over the benchmark's independent units inside the slice and the paired
differences to the baseline and the floor on the same resampled units.

A frame without a value for the column (its metadata lacks the column, or the value is empty) is
in the slice MISSING, never dropped: a column's slices partition the scored frames. A binned
column's value must be a number inside the bins (else an error naming the frame). A slice with
fewer than MIN_UNITS units cannot be resampled (every resample of one unit is that unit): it gets
its values and differences, no intervals, and `interval_note` says why. A bin that no frame falls
in is listed with no values.

Pure computation, no I/O.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from typing import Any

from .bootstrap import Subject, bootstrap, prepare, point_values
from ..errors import SegbenchError
from .benchmark import Benchmark, SliceSpec
from .evaluation import evaluate

MISSING = "missing"
MIN_UNITS = 2  # one unit resamples to itself: no interval


def _edge(value: float) -> str:
    return f"{value:g}"


def bin_labels(bins: Sequence[float]) -> list[str]:
    """'[a, b)' per bin, the last one closed: '[a, b]'."""
    last = len(bins) - 2
    return [f"[{_edge(a)}, {_edge(b)}{']' if i == last else ')'}" for i, (a, b) in enumerate(zip(bins, bins[1:]))]


def slice_of(spec: SliceSpec, frame_id: str, meta: Mapping[str, str]) -> str:
    """The slice of a frame with metadata `meta` under `spec`."""
    value = meta.get(spec.column, "").strip()
    if not value:
        return MISSING
    if spec.bins is None:
        return value
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not spec.bins[0] <= number <= spec.bins[-1]:  # NaN compares false
        raise SegbenchError(f"frame '{frame_id}': {spec.column} {value!r} is not a number inside the bins "
                            f"{list(spec.bins)} of slice '{spec.key}'")
    index = min(bisect.bisect_right(spec.bins, number) - 1, len(spec.bins) - 2)
    return bin_labels(spec.bins)[index]


def partition(spec: SliceSpec, frame_ids: Sequence[str], meta: Mapping[str, Mapping[str, str]]) -> dict[str, list[str]]:
    """slice -> its frames (in `frame_ids` order): every bin (empty ones too) in order, or the
    distinct values sorted; MISSING last when a frame has no value. Every frame needs an entry in
    `meta` (the frame index's)."""
    unknown = [f for f in frame_ids if f not in meta]
    if unknown:
        raise SegbenchError(f"{len(unknown)} scored frame(s) are not in the frame index: {unknown[:10]}")
    members: dict[str, list[str]] = {label: [] for label in bin_labels(spec.bins)} if spec.bins else {}
    for frame_id in frame_ids:
        members.setdefault(slice_of(spec, frame_id, meta[frame_id]), []).append(frame_id)
    order = list(members) if spec.bins else sorted(k for k in members if k != MISSING)
    return {label: members[label] for label in order + ([MISSING] if MISSING in members else [])}


def _restricted(subject: Subject | None, frame_ids: Sequence[str]) -> Subject | None:
    return None if subject is None else Subject(subject.name, subject.counts.subset(frame_ids), subject.space)


def _differences(points: Mapping[str, float], others: Mapping[str, tuple[Subject, Mapping[str, float]] | None]
                 ) -> dict[str, Any]:
    """Point differences only (a slice too small to resample), shaped as bootstrap.paired's."""
    out: dict[str, Any] = {}
    for role, other in others.items():
        if other is None:
            out[role] = None
            continue
        subject, other_points = other
        metrics = {}
        for key, value in points.items():
            if key in other_points:
                both = not (math.isnan(value) or math.isnan(other_points[key]))
                metrics[key] = {"value": None if math.isnan(value) else value,
                                "other": None if math.isnan(other_points[key]) else other_points[key],
                                "difference": value - other_points[key] if both else None,
                                "low": None, "high": None, "excludes_zero": None}
        out[role] = {"against": subject.name, "metrics": metrics}
    return out


def _points(benchmark: Benchmark, subject: Subject, groups: Mapping[str, str]) -> dict[str, float]:
    return point_values(prepare(benchmark, subject.counts, subject.space, groups)[1])


def one_slice(benchmark: Benchmark, label: str, frame_ids: Sequence[str], subject: Subject,
              others: Mapping[str, Subject | None], groups: Mapping[str, str], resamples: int, seed: int) -> dict[str, Any]:
    """A slice's frames and units, every metric of every report (evaluation.evaluate on its
    frames), and its intervals and paired comparisons (bootstrap over its units)."""
    units = len({groups[f] for f in frame_ids})
    entry: dict[str, Any] = {"slice": label, "frames": len(frame_ids), "units": units}
    if not frame_ids:
        return {**entry, "results": None, "intervals": None, "comparisons": None, "interval_note": "no frames"}
    model = _restricted(subject, frame_ids)
    restricted = {role: _restricted(other, frame_ids) for role, other in others.items()}
    entry["results"] = evaluate(benchmark, model.counts, model.space)
    if units < MIN_UNITS:
        points = _points(benchmark, model, groups)
        entry["intervals"] = {k: {"value": None if math.isnan(v) else v, "low": None, "high": None}
                              for k, v in points.items()}
        entry["comparisons"] = _differences(points, {
            role: None if other is None else (other, _points(benchmark, other, groups))
            for role, other in restricted.items()})
        entry["interval_note"] = (f"{units} {benchmark.group_key} unit: too few to resample "
                                  f"(at least {MIN_UNITS} needed); values without intervals")
        return entry
    document = bootstrap(benchmark, model, groups, resamples, seed, restricted)
    return {**entry, "intervals": document["intervals"], "comparisons": document["comparisons"], "interval_note": None}


def slice_results(benchmark: Benchmark, subject: Subject, others: Mapping[str, Subject | None],
                  groups: Mapping[str, str], meta: Mapping[str, Mapping[str, str]], resamples: int,
                  seed: int) -> dict[str, Any]:
    """slicing key -> {column, bins, slices: [one_slice ...]} for every slicing of the benchmark."""
    out: dict[str, Any] = {}
    for spec in benchmark.slices:
        members = partition(spec, subject.counts.frame_ids, meta)
        out[spec.key] = {
            "column": spec.column,
            "bins": None if spec.bins is None else list(spec.bins),
            "slices": [one_slice(benchmark, label, frames, subject, others, groups, resamples, seed)
                       for label, frames in members.items()],
        }
    return out
