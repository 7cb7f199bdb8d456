"""Benchmark definitions: protocols loaded from config/benchmarks/*.yaml, validated by a schema."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ..core.benchmark import Benchmark, ReportSpec, SliceSpec
from ..core.labels import LabelMapping, LabelSpace
from ..core.metric_registry import REGISTRY, MetricSpec
from ..errors import SegbenchError
from ..io.oserrors import file_error
from ..io.paths import config_dir
from ..io.schemas import validate


# libyaml's parser where PyYAML has it (its wheels do): the same safe documents, about 8 times
# faster, and the benchmark definitions are read at every workflow start.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path: Path) -> Any:
    try:
        return yaml.load(path.read_text(), Loader=SAFE_LOADER)
    except (OSError, UnicodeDecodeError) as exc:
        raise file_error(exc, path) from None
    except yaml.YAMLError as exc:
        raise SegbenchError(f"{path}: not valid YAML: {exc}") from None


def config_table(folder: str, name: str, schema: str, unknown: str) -> tuple[Path, Any]:
    """config/FOLDER/NAME.yaml, validated by its schema; a missing one lists those that exist."""
    path = config_dir() / folder / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in (config_dir() / folder).glob("*.yaml"))
        raise SegbenchError(f"{unknown} '{name}' (no {path}); known: {known}")
    table = read_yaml(path)
    validate(table, schema, path)
    return path, table


@cache
def load_label_space(name: str) -> LabelSpace:
    path, table = config_table("label_spaces", name, "label_space", "unknown label space")
    if table["name"] != name:
        raise SegbenchError(f"{path}: field 'name' is '{table['name']}', expected '{name}' (the file's stem)")
    return LabelSpace.from_table(table)


def benchmark_path(name: str) -> Path:
    return config_dir() / "benchmarks" / f"{name}.yaml"


def mapping_file_rules(name: str, where: str) -> list[dict[str, Any]]:
    """The mapping rules of config/mappings/NAME.yaml."""
    _, doc = config_table("mappings", name, "mappings", f"{where}: unknown mapping file")
    return doc["mappings"]


def known_benchmarks() -> list[str]:
    return sorted(p.stem for p in (config_dir() / "benchmarks").glob("*.yaml"))


@cache
def load_benchmark(name: str) -> Benchmark:
    path = benchmark_path(name)
    if not path.is_file():
        raise SegbenchError(f"unknown benchmark '{name}' (no {path}); known: {known_benchmarks()}")
    doc = read_yaml(path)
    validate(doc, "benchmark", path)
    return parse_benchmark(doc, path)


def parse_slices(entries: list[dict[str, Any]], source: str | Path, field: str) -> tuple[SliceSpec, ...]:
    """The slicings of a `slices` list (its items valid by slice.schema.json): a benchmark
    definition's, or a config benchmark entry's that replaces it. Errors name `source` and the
    item: field `field`/i (i alone when `field` is empty: a list on its own)."""
    slices = tuple(SliceSpec(e["key"], e["column"], tuple(float(b) for b in e["bins"]) if "bins" in e else None)
                   for e in entries)
    for i, spec in enumerate(slices):
        where = f"{source}: field '{'/'.join(filter(None, (field, str(i))))}'"
        if spec.bins is not None and any(a >= b for a, b in zip(spec.bins, spec.bins[1:])):
            raise SegbenchError(f"{where} ('{spec.key}'): bins {list(spec.bins)} are not increasing")
        if spec.key in [s.key for s in slices[:i]]:
            raise SegbenchError(f"{where}: key '{spec.key}' is used twice")
    return slices


def slices_from_json(text: str, source: str) -> tuple[SliceSpec, ...]:
    """A `slices` list as JSON (the config's, as a workflow rule passes it), checked by
    slice.schema.json and parse_slices."""
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SegbenchError(f"{source}: not JSON ({exc}): {text[:200]}") from None
    validate(entries, "slice", source, {"type": "array", "items": {"$ref": "slice.schema.json"}})
    return parse_slices(entries, source, "")


def parse_benchmark(doc: dict[str, Any], path: Path) -> Benchmark:
    if doc["name"] != path.stem:
        raise SegbenchError(f"{path}: field 'name' is '{doc['name']}', expected '{path.stem}' (the file's stem)")
    spaces = {name: load_label_space(name) for name in doc["label_spaces"]}

    def space(name: str, field: str) -> LabelSpace:
        if name not in spaces:
            raise SegbenchError(f"{path}: field '{field}': '{name}' is not in label_spaces {sorted(spaces)}")
        return spaces[name]

    ground_truth = space(doc["ground_truth"], "ground_truth")
    rules: dict[tuple[str, str], dict[str, Any]] = {}
    mappings: dict[tuple[str, str], LabelMapping] = {}
    declared = [(f"mappings/{i}", rule) for i, rule in enumerate(doc.get("mappings", []))]
    for name in doc.get("mapping_files", []):
        declared += [(f"mapping_files/{name}/{i}", r) for i, r in enumerate(mapping_file_rules(name, str(path)))]
    for where, rule in declared:
        source = space(rule["from"], f"{where}/from")
        target = space(rule["to"], f"{where}/to")
        if (source.name, target.name) in rules:
            raise SegbenchError(f"{path}: {where}: a second mapping from '{source.name}' to '{target.name}'")
        rules[(source.name, target.name)] = rule
        mappings[(source.name, target.name)] = LabelMapping.from_rules(
            source, target, rule["classes"], rule.get("default"), f"{path}: {where}"
        )
    dataset = doc["dataset"]
    if dataset["default_split"] not in dataset["splits"]:
        raise SegbenchError(f"{path}: field 'dataset/default_split': '{dataset['default_split']}' is not a split")
    report_key, metric_key = doc["floor"]["compare_on"].split(".")
    reports = []
    for i, report in enumerate(doc["reports"]):
        report_space = space(report["space"], f"reports/{i}/space")
        for name in report.get("exclude_classes", []):
            report_space.id_of(name)
        metrics = tuple(
            MetricSpec(m["key"], m["fn"], {k: v for k, v in m.items() if k not in ("key", "fn")})
            for m in report["metrics"]
        )
        keys = [m.key for m in metrics]
        if len(set(keys)) != len(keys):
            raise SegbenchError(f"{path}: reports/{i}: a metric key appears twice in {keys}")
        # By default the record carries the headline only; the results always carry every metric.
        record = report.get("record", [metric_key] if report["key"] == report_key else [])
        for key in record:
            if key not in keys:
                raise SegbenchError(f"{path}: reports/{i}/record: '{key}' is not one of its metrics {keys}")
        reports.append(
            ReportSpec(
                report["key"],
                report_space,
                metrics,
                report.get("only_for_model_space"),
                tuple(report.get("exclude_classes", [])),
                tuple(record),
            )
        )
        # A report must be reachable from the ground truth, or no model could ever be scored on it.
        if ground_truth.name != report_space.name and (ground_truth.name, report_space.name) not in mappings:
            raise SegbenchError(
                f"{path}: reports/{i}: no mapping from the ground truth '{ground_truth.name}' to '{report_space.name}'"
            )
    boundary = doc.get("scoring", {}).get("boundary")
    for report in reports:
        needs = [m.key for m in report.metrics if REGISTRY[m.fn].bands]
        if needs and boundary is None:
            raise SegbenchError(f"{path}: report '{report.key}': {needs} need the band width 'scoring/boundary'")
    if not any(r.key == report_key and metric_key in [m.key for m in r.metrics] for r in reports):
        raise SegbenchError(f"{path}: field 'floor/compare_on': no report '{report_key}' with a metric '{metric_key}'")
    return Benchmark(
        name=doc["name"],
        title=doc["title"],
        benchmark_version=doc["benchmark_version"],
        taxonomy_version=doc["taxonomy_version"],
        dataset_format=dataset["format"],
        id_prefix=dataset["id_prefix"],
        group_key=dataset["group_key"],
        splits=tuple(dataset["splits"]),
        default_split=dataset["default_split"],
        ground_truth=ground_truth,
        spaces=spaces,
        mappings=mappings,
        mapping_rules=rules,
        inference_size=doc["inference"]["size"],
        pad_to_stride=doc["inference"].get("pad_to_stride", True),
        evaluation_size=tuple(doc["scoring"]["resize_to"]) if "resize_to" in doc.get("scoring", {}) else None,
        boundary=boundary,
        floor_class=ground_truth.id_of(doc["floor"]["predict"]),
        floor_compare_on=(report_key, metric_key),
        reports=tuple(reports),
        source=path,
        slices=parse_slices(doc.get("slices", []), path, "slices"),
        files=(path, *(config_dir() / "label_spaces" / f"{n}.yaml" for n in doc["label_spaces"]),
               *(config_dir() / "mappings" / f"{n}.yaml" for n in doc.get("mapping_files", []))),
    )
