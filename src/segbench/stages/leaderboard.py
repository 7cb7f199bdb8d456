"""The results table: every submission record, grouped by comparability triple, floor in each group.

Rows are comparable only within one (benchmark_version, taxonomy_version, dataset_id) triple of
one benchmark and split; groups are never ranked against each other. The groups are rendered by
results_csv (wide and long CSV), results_markdown (the compact table, the per-report tables) and
results_page (the sortable HTML page).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core.headline import PairedDifference
from ..core.significance import MIN_UNITS, significant, too_few_units
from ..errors import SegbenchError
from .text_table import flatten

IDENTITY = ("benchmark", "benchmark_version", "taxonomy_version", "dataset_id", "split")


METRIC_EXCLUDE = {"benchmark", "benchmark_version", "taxonomy_version", "dataset_id", "split", "checkpoint_sha256",
                  "model", "inference_size", "inference", "frames", "pixels_evaluated", "pixels_predicted_void", "floor", "tool"}


def inference_text(block: dict[str, Any] | None) -> str | None:
    """The record's inference mode in a few words: "whole 640", "slide 640 crop 512x512 stride 341x341",
    "multi-scale 640 x[0.5, 1.0] +flip"; None for predictions folders."""
    if block is None:
        return None
    text = f"{block['mode']} {block['size']}"
    if block["mode"] == "slide":
        text += " crop {}x{} stride {}x{}".format(*block["crop"], *block["stride"])
    if block["mode"] == "multi-scale":
        text += f" x{block['scales']}" + (" +flip" if block["flip"] else "")
    return text


def too_few(group: dict[str, Any]) -> str | None:
    """The group's note when it has too few units for an interval to be called significant."""
    return too_few_units(group["units"], group["unit"]) if group["units"] < MIN_UNITS else None


def mixed_modes(group: dict[str, Any]) -> bool:
    """Whether the group's rows were made with different inference modes (their ranks compare unlike runs)."""
    return len(group.get("inference_modes", [])) >= 2


def metric_blocks(record: dict[str, Any]) -> dict[str, Any]:
    """The record's metric blocks (the benchmark's reports, with the spec fields they select)."""
    return {k: v for k, v in record.items() if k not in METRIC_EXCLUDE and isinstance(v, dict)}


def inference_mode(record: dict[str, Any]) -> dict[str, Any]:
    """{'inference_mode': mode} when the record has an `inference` block, else {}."""
    block = record.get("inference")
    return {"inference_mode": block.get("mode")} if isinstance(block, dict) else {}


def row_name(record: dict[str, Any]) -> str:
    """A row's name: the model's, after its team's when the record names one ('team/best')."""
    team = record.get("team")
    return f"{team}/{record['model']['name']}" if team else record["model"]["name"]


def record_floor_comparison(record: dict[str, Any]) -> dict[str, Any]:
    """Δ floor from the record itself (its paired interval over the units): what a row shows when
    no uncertainty document of its counts is given (attach_intervals replaces it by the same)."""
    floor = record["floor"]
    entry = {"difference": floor["difference"], "low": floor["low"], "high": floor["high"]}
    return {"vs_floor.against": "floor", "vs_floor.difference": floor["difference"], "vs_floor.ci_low": floor["low"],
            "vs_floor.ci_high": floor["high"], "vs_floor.significant": significant_entry(entry, floor["units"])}


def model_row(record: dict[str, Any]) -> dict[str, Any]:
    blocks = metric_blocks(record)
    return {
        **{k: record[k] for k in IDENTITY},
        "model": row_name(record),
        "kind": record["model"]["kind"],
        "inference": inference_text(record.get("inference")),
        **inference_mode(record),
        "label_space": record["model"]["label_space"],
        "checkpoint_sha256": record["checkpoint_sha256"],
        "frames": record["frames"],
        "pixels_predicted_void": record["pixels_predicted_void"],
        **flatten(blocks),
        **record_floor_comparison(record),
        "beats_floor": record["floor"]["verdict"],
        "results": blocks,
    }


def floor_row(group: dict[str, Any], floor: dict[str, Any]) -> dict[str, Any]:
    return {
        **{k: group[k] for k in IDENTITY},
        "model": "floor",
        "kind": "floor",
        "inference": None,
        "label_space": floor["label_space"],
        "checkpoint_sha256": None,
        "frames": floor["frames"],
        "pixels_predicted_void": floor["pixels_predicted_void"],
        **flatten(floor["results"]),
        "beats_floor": None,
        "results": floor["results"],
    }


def records_floor(record: dict[str, Any]) -> dict[str, Any]:
    """The floor as a record states it (its headline value alone), for a group given no floor's
    metrics document: records merged from elsewhere carry it."""
    report, metric = record["floor"]["metric"].split(".", 1)
    return {"label_space": None, "frames": record["frames"], "pixels_predicted_void": None,
            "results": {report: {metric: record["floor"]["value"]}}}


def build(records: Sequence[dict[str, Any]], floors: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """Groups, each {identity..., headline, rows}; rows ranked by the headline, floor last (from
    its metrics document, or as the group's first record states it). Each row holds the record's
    spec fields as dotted columns and, nested, as `results`. Two rows of a group with one name
    (two teams' `best`) are refused unless their records name their teams."""
    floor_of = {(f["benchmark"], f["split"]): f for f in floors}
    groups: dict[tuple, dict[str, Any]] = {}
    for record in records:
        key = tuple(record[k] for k in IDENTITY)
        group = groups.setdefault(key, {**dict(zip(IDENTITY, key)), "headline": record["floor"]["metric"],
                                        "units": record["floor"]["units"], "unit": record["floor"]["unit"], "rows": [],
                                        "stated_floor": records_floor(record)})
        row = model_row(record)
        if any(r["model"] == row["model"] for r in group["rows"]):
            raise SegbenchError(f"two records of {group_title(group)} are both named '{row['model']}': give each its "
                                "team (benchmark.py --team, segbench record --team) to tell their rows apart")
        group["rows"].append(row)
    for group in groups.values():
        headline = group["headline"]
        group["rows"].sort(key=lambda r: (r[headline] is None, -(r[headline] or 0.0), r["model"]))
        for rank, row in enumerate(group["rows"], start=1):
            row["rank"] = rank
        # a predictions folder has no mode: it is no second mode beside the models'
        group["inference_modes"] = sorted({row["inference"] for row in group["rows"] if row["inference"] is not None})
        floor = floor_of.get((group["benchmark"], group["split"]), group.pop("stated_floor"))
        group["rows"].append({**floor_row(group, floor), "rank": None})
    return [groups[k] for k in sorted(groups)]


COUNTS = ("rank", "frames", "pixels_predicted_void")  # numbers of a row that are not metrics


def headline_metrics(groups: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A small document for `dvc metrics`: each group's scalar metrics per model."""
    out: dict[str, Any] = {}
    for group in groups:
        block = out.setdefault(group["benchmark"], {}).setdefault(group["split"], {})
        for row in group["rows"]:
            block[row["model"]] = {
                k: v for k, v in row.items()
                if isinstance(v, int | float) and not isinstance(v, bool) and k not in COUNTS
                and not k.startswith("vs_")  # the spec's fields only: a record's Δ floor is no metric of it
            }
    return out


def row_key(document: dict[str, Any]) -> tuple[str, str, str]:
    return document["benchmark"], document["split"], document["model"]


def attach(groups: Sequence[dict[str, Any]], documents: Sequence[dict[str, Any]],
           extend: Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row of each group, with the document of the same (benchmark, split, model) when there
    is one, replaced by `extend(group, row, document)`; rows without a document stay as they are."""
    by_key = {row_key(d): d for d in documents}
    out = []
    for group in groups:
        rows = []
        for row in group["rows"]:
            document = by_key.get((group["benchmark"], group["split"], row["model"]))
            rows.append(row if document is None else extend(group, row, document))
        out.append({**group, "rows": rows})
    return out


def attach_results(groups: Sequence[dict[str, Any]], documents: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with a metrics document (results/<b>/<s>/<model>/metrics.json, the floor's too)
    gains every metric of every report, beside the record's spec fields. Records are not changed."""
    return attach(groups, documents, lambda group, row, document: {
        **{k: v for k, v in row.items() if k != "beats_floor"}, **flatten(document["results"]),
        "beats_floor": row["beats_floor"], "results": document["results"]})


# --- uncertainty beside the spec's fields ------------------------------------------------------

COMPARISONS = ("baseline", "floor")


def attach_intervals(groups: Sequence[dict[str, Any]], uncertainties: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row gains `M.ci_low` / `M.ci_high` beside every bootstrapped metric M, and
    `vs_baseline.*` / `vs_floor.*` (difference, interval, excludes_zero, significant: by
    core.significance, with enough units) for the headline metric;
    the full bootstrap document goes under `uncertainty` (JSON only). Records are not changed."""
    return attach(groups, uncertainties, with_intervals)


def significant_entry(entry: dict[str, Any], units: int) -> bool:
    """Whether a bootstrap document's paired comparison (difference, low, high) over `units` units
    is significant by core.significance's rule (its interval excludes 0, with enough units)."""
    return significant(PairedDifference(entry["difference"], None, entry["low"], entry["high"], units, ""))


def with_intervals(group: dict[str, Any], row: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    row = dict(row)
    for key, interval in document["intervals"].items():
        row[f"{key}.ci_low"] = interval["low"]
        row[f"{key}.ci_high"] = interval["high"]
    for role in COMPARISONS:
        comparison = (document["comparisons"] or {}).get(role)
        entry = comparison["metrics"].get(group["headline"]) if comparison else None
        row[f"vs_{role}.against"] = comparison["against"] if comparison else None
        row[f"vs_{role}.difference"] = entry["difference"] if entry else None
        row[f"vs_{role}.ci_low"] = entry["low"] if entry else None
        row[f"vs_{role}.ci_high"] = entry["high"] if entry else None
        row[f"vs_{role}.excludes_zero"] = entry["excludes_zero"] if entry else None
        row[f"vs_{role}.significant"] = significant_entry(entry, document["groups"]) if entry else None
    row["uncertainty"] = {k: document[k] for k in ("method", "group_key", "groups", "resamples", "seed",
                                                     "confidence", "intervals", "comparisons")}
    return row


def interval(row: dict[str, Any], key: str) -> tuple[Any, Any, Any]:
    """(value, low, high) of `report.metric` in a row; low/high None without a bootstrap."""
    found = ((row.get("uncertainty") or {}).get("intervals") or {}).get(key) or {}
    return row.get(key), found.get("low"), found.get("high")


# --- what a group holds, for the renderers --------------------------------------------------


def attach_slices(groups: Sequence[dict[str, Any]], documents: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each model row with a slices document gains its slicings under `slices` (JSON only)."""
    return attach(groups, documents, lambda group, row, document: {**row, "slices": document["slicings"]})


def slice_entries(group: dict[str, Any]) -> list[tuple[str, str, dict[str, dict[str, Any]]]]:
    """(slicing, slice, model -> the model's entry for it) over the group's models, in order."""
    found: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for row in group["rows"]:
        for key, slicing in (row.get("slices") or {}).items():
            for entry in slicing["slices"]:
                found.setdefault((key, entry["slice"]), {})[row["model"]] = entry
    return [(key, label, entries) for (key, label), entries in found.items()]


def slice_comparison(entry: dict[str, Any], role: str, key: str) -> dict[str, Any]:
    """The paired difference of `report.metric` against `role` in a slice ({} when none)."""
    comparison = (entry.get("comparisons") or {}).get(role)
    return (comparison or {}).get("metrics", {}).get(key) or {}


def report_keys(group: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(k for r in group["rows"] for k in r["results"]))


def report_metrics(group: dict[str, Any], report: str) -> tuple[list[str], list[str]]:
    """The report's (scalar, per-class) metric keys, in definition order; a metric is per-class
    when any row holds a {class: value} for it (a report that does not apply holds nulls)."""
    keys: dict[str, None] = {}
    per_class: set[str] = set()
    for row in group["rows"]:
        for metric, value in (row["results"].get(report) or {}).items():
            keys[metric] = None
            if isinstance(value, dict):
                per_class.add(metric)
    return [k for k in keys if k not in per_class], [k for k in keys if k in per_class]


def class_names(group: dict[str, Any], report: str, metric: str) -> list[str]:
    return list(dict.fromkeys(c for r in group["rows"] for c in (r["results"].get(report, {}).get(metric) or {})))


def group_title(group: dict[str, Any]) -> str:
    return (f"{group['benchmark']} v{group['benchmark_version']} (taxonomy {group['taxonomy_version']}), "
            f"split {group['split']}")


def bootstrap_note(group: dict[str, Any]) -> str:
    if group.get("bootstrap_note"):  # a board that shows no interval by design says so (server/pages.py)
        return group["bootstrap_note"]
    documents = [r["uncertainty"] for r in group["rows"] if r.get("uncertainty")]
    if not documents:
        return "no uncertainty.json given: intervals of Δ floor only, from the records"
    d = documents[0]
    return f"95% bootstrap intervals: {d['resamples']} resamples of {d['groups']} {d['group_key']} groups, seed {d['seed']}"
