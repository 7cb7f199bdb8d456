"""The results table: every submission record, grouped by comparability triple, floor in each group.

Rows are comparable only within one (benchmark_version, taxonomy_version, dataset_id) triple of
one benchmark and split; groups are never ranked against each other.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from .table import flatten, render_markdown

IDENTITY = ("benchmark", "benchmark_version", "taxonomy_version", "dataset_id", "split")
METRIC_EXCLUDE = {"benchmark", "benchmark_version", "taxonomy_version", "dataset_id", "split", "checkpoint_sha256",
                  "model", "inference_size", "frames", "pixels_evaluated", "floor", "tool"}


def metric_columns(record: dict[str, Any]) -> dict[str, Any]:
    """The record's metric blocks (the benchmark's reports), flattened to dotted columns."""
    return flatten({k: v for k, v in record.items() if k not in METRIC_EXCLUDE and isinstance(v, dict)})


def model_row(record: dict[str, Any]) -> dict[str, Any]:
    return {
        **{k: record[k] for k in IDENTITY},
        "model": record["model"]["name"],
        "kind": record["model"]["kind"],
        "label_space": record["model"]["label_space"],
        "checkpoint_sha256": record["checkpoint_sha256"],
        "frames": record["frames"],
        **metric_columns(record),
        "beats_floor": record["floor"]["beaten"],
    }


def floor_row(group: dict[str, Any], floor: dict[str, Any]) -> dict[str, Any]:
    return {
        **{k: group[k] for k in IDENTITY},
        "model": "floor",
        "kind": "floor",
        "label_space": floor["label_space"],
        "checkpoint_sha256": None,
        "frames": floor["frames"],
        **flatten(floor["results"]),
        "beats_floor": None,
    }


def build(records: Sequence[dict[str, Any]], floors: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Groups, each {identity..., headline, rows}; rows ranked by the headline, floor last."""
    floor_of = {(f["benchmark"], f["split"]): f for f in floors}
    groups: dict[tuple, dict[str, Any]] = {}
    for record in records:
        key = tuple(record[k] for k in IDENTITY)
        group = groups.setdefault(key, {**dict(zip(IDENTITY, key)), "headline": record["floor"]["metric"], "rows": []})
        group["rows"].append(model_row(record))
    for group in groups.values():
        headline = group["headline"]
        group["rows"].sort(key=lambda r: (r[headline] is None, -(r[headline] or 0.0), r["model"]))
        for rank, row in enumerate(group["rows"], start=1):
            row["rank"] = rank
        floor = floor_of.get((group["benchmark"], group["split"]))
        if floor is not None:
            group["rows"].append({**floor_row(group, floor), "rank": None})
    return [groups[k] for k in sorted(groups)]


def columns(groups: Sequence[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for group in groups:
        for row in group["rows"]:
            seen.update(dict.fromkeys(row))
    return list(seen)


def to_csv(groups: Sequence[dict[str, Any]]) -> str:
    names = columns(groups)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for group in groups:
        for row in group["rows"]:
            writer.writerow({k: "" if row.get(k) is None else row.get(k) for k in names})
    return out.getvalue()


def to_markdown(groups: Sequence[dict[str, Any]]) -> str:
    parts = ["# Results\n", "Rows are comparable only within one group (benchmark version, taxonomy version, "
             "dataset_id, split). The floor predicts the benchmark's floor class everywhere; a model that does "
             "not beat it is flagged **NO**.\n"]
    for group in groups:
        metric_names = [c for c in columns([group]) if c not in
                        {*IDENTITY, "label_space", "checkpoint_sha256", "frames", "rank", "beats_floor", "model", "kind"}]
        shown = ["rank", "model", "kind", *metric_names, "beats_floor"]
        parts.append(
            f"## {group['benchmark']} v{group['benchmark_version']} (taxonomy {group['taxonomy_version']}), "
            f"split {group['split']}\n\ndataset_id `{group['dataset_id']}` · ranked by `{group['headline']}`\n"
        )
        parts.append(render_markdown(shown, group["rows"]) + "\n")
    return "\n".join(parts)


def headline_metrics(groups: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A small document for `dvc metrics`: each group's scalar metrics per model."""
    out: dict[str, Any] = {}
    for group in groups:
        block = out.setdefault(group["benchmark"], {}).setdefault(group["split"], {})
        for row in group["rows"]:
            block[row["model"]] = {
                k: v for k, v in row.items()
                if isinstance(v, int | float) and not isinstance(v, bool) and k not in ("rank", "frames")
            }
    return out
