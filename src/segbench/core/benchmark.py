"""What a benchmark is, as its definition declares it: the reports, label spaces and mappings.

Plain data with its lookups; segbench.protocols.definitions builds it from config/benchmarks/*.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import SegbenchError
from .labels import LabelMapping, LabelSpace, no_class_column
from .metric_registry import MetricSpec


@dataclass(frozen=True)
class ReportSpec:
    key: str
    space: LabelSpace
    metrics: tuple[MetricSpec, ...]
    only_for_model_space: str | None
    exclude_classes: tuple[str, ...]
    record: tuple[str, ...]  # metric keys kept in the submission record's spec fields

    def evaluated(self) -> np.ndarray:
        """(K,) bool: the report space's classes its metrics run over (all but exclude_classes)."""
        mask = np.ones(self.space.size, dtype=bool)
        mask[[self.space.id_of(n) for n in self.exclude_classes]] = False
        return mask


@dataclass(frozen=True)
class SliceSpec:
    """A metadata column every metric is also computed per value of (`slices` in the YAML)."""

    key: str
    column: str
    bins: tuple[float, ...] | None  # increasing edges of a numeric column; None: each distinct value


@dataclass(frozen=True)
class Benchmark:
    name: str
    title: str
    benchmark_version: str
    taxonomy_version: str
    dataset_format: str
    id_prefix: str
    group_key: str
    splits: tuple[str, ...]
    default_split: str
    ground_truth: LabelSpace
    spaces: dict[str, LabelSpace]
    mappings: dict[tuple[str, str], LabelMapping]
    mapping_rules: dict[tuple[str, str], dict[str, Any]]
    inference_size: int
    pad_to_stride: bool
    evaluation_size: tuple[int, int] | None  # (width, height) both masks are resized to; None: the GT's
    boundary: dict[str, Any] | None  # the boundary band's width: {"ratio": r} or {"pixels": d}; None: no bands
    floor_class: int
    floor_compare_on: tuple[str, str]
    reports: tuple[ReportSpec, ...]
    source: Path
    slices: tuple[SliceSpec, ...] = ()
    # Every file the definition was built from (itself, its label spaces, its mapping files):
    # what the workflow's rules declare, so that changing any of them re-runs what reads it.
    files: tuple[Path, ...] = ()

    def space(self, name: str) -> LabelSpace:
        try:
            return self.spaces[name]
        except KeyError:
            raise SegbenchError(
                f"benchmark '{self.name}' has no label space '{name}' (it has {sorted(self.spaces)})"
            ) from None

    def mapping(self, source: LabelSpace, target: LabelSpace) -> LabelMapping:
        """The lookup table from `source` to `target`: identity, declared, or declared by name.

        A model's own label space (e.g. a SegFormer's id2label) that claims to be one of the
        benchmark's spaces is mapped by class name with that space's rules.
        """
        if source.names == target.names:
            return LabelMapping.identity(source)
        key = (source.name, target.name)
        if key in self.mappings and self.mappings[key].source == source:
            return self.mappings[key]
        if key in self.mapping_rules:
            rule = self.mapping_rules[key]
            return LabelMapping.from_rules(source, target, rule["classes"], rule.get("default"), str(self.source))
        raise SegbenchError(
            f"benchmark '{self.name}' defines no mapping from label space '{source.name}' to "
            f"'{target.name}' (mappings: {[f'{a}->{b}' for a, b in self.mapping_rules]})"
        )

    def raw_lut(self, source: LabelSpace, target: LabelSpace) -> np.ndarray:
        """(256,) raw value of a mask in `source` -> class index in `target` (DROP and INVALID
        kept): the source's raw lookup through `mapping(source, target)`."""
        return self.mapping(source, target).apply_to_raw(source.raw_lut())

    def prediction_columns(self, source: LabelSpace, target: LabelSpace) -> np.ndarray:
        """(256,) raw value of a prediction in `source` -> its column of a confusion matrix in
        `target`: the class index, `target.size` for a void value of `source` (no class predicted:
        a miss, never dropped), DROP for a class the mapping leaves out, INVALID."""
        return no_class_column(self.mapping(source, target).apply_to_raw(source.prediction_lut()), target.size)

    def reaches(self, source: LabelSpace, target: LabelSpace) -> bool:
        """Whether `mapping(source, target)` exists: same class names, or a declared mapping."""
        return source.names == target.names or (source.name, target.name) in self.mapping_rules

    def check_split(self, split: str) -> None:
        if split not in self.splits:
            raise SegbenchError(f"unknown split '{split}' for benchmark '{self.name}' (splits: {list(self.splits)})")


def applies(report: ReportSpec, benchmark: Benchmark, model_space: LabelSpace) -> bool:
    """A report applies to a model whose space maps into the report's (e.g. a 2-class portrait
    model gets the portrait report only), and, with only_for_model_space, only to that space."""
    if report.only_for_model_space is not None and model_space.names != benchmark.space(report.only_for_model_space).names:
        return False
    return benchmark.reaches(model_space, report.space)
