"""The results as CSV: the wide table (one row per model, one column per metric) and the long one
(one row per value)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from .leaderboard import COMPARISONS, class_names, interval, report_keys, report_metrics, slice_comparison, slice_entries

NESTED = ("results", "uncertainty", "slices")  # JSON only; flattened into the columns (slices: to_slices_csv)


def columns(groups: Sequence[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for group in groups:
        for row in group["rows"]:
            seen.update(dict.fromkeys(k for k in row if k not in NESTED))
    return list(seen)


def to_csv(groups: Sequence[dict[str, Any]]) -> str:
    """The wide table: one row per model, one column per `report.metric[.class]`."""
    names = columns(groups)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for group in groups:
        for row in group["rows"]:
            writer.writerow({k: "" if row.get(k) is None else row.get(k) for k in names})
    return out.getvalue()


# --- the long (tidy) table -------------------------------------------------------------------

LONG_COLUMNS = ("benchmark", "split", "model", "report", "metric", "class", "value", "low", "high")


def long_rows(groups: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (benchmark, split, model, report, metric, class): class is empty for a
    scalar metric, low/high its 95% bootstrap interval (empty for per-class values). A report
    that does not apply to a model gives its classes' rows with empty values."""
    out = []
    for group in groups:
        per_class = {report: report_metrics(group, report)[1] for report in report_keys(group)}
        for row in group["rows"]:
            for report, block in row["results"].items():
                base = {"benchmark": group["benchmark"], "split": group["split"], "model": row["model"], "report": report}
                for metric in block:
                    if metric in per_class[report]:
                        values = block[metric] or {}
                        out += [{**base, "metric": metric, "class": c, "value": values.get(c), "low": None, "high": None}
                                for c in class_names(group, report, metric)]
                    else:
                        _, low, high = interval(row, f"{report}.{metric}")
                        out.append({**base, "metric": metric, "class": None, "value": block[metric], "low": low,
                                    "high": high})
    return out


def to_long_csv(groups: Sequence[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=LONG_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if r[k] is None else r[k] for k in LONG_COLUMNS} for r in long_rows(groups))
    return out.getvalue()


SLICE_COLUMNS = ("benchmark", "split", "model", "slicing", "slice", "frames", "units", "report", "metric", "class",
                 "value", "low", "high", "vs_baseline", "vs_baseline_low", "vs_baseline_high", "vs_floor",
                 "vs_floor_low", "vs_floor_high", "note")


def slice_rows(groups: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (model, slicing, slice, report, metric, class), like long.csv, with the
    slice's frames and units and the paired differences of scalar metrics; a slice without
    frames is one row with its note, one too small to resample has values without intervals."""
    out = []
    for group in groups:
        for key, label, entries in slice_entries(group):
            for model, entry in entries.items():
                base = {"benchmark": group["benchmark"], "split": group["split"], "model": model, "slicing": key,
                        "slice": label, "frames": entry["frames"], "units": entry["units"],
                        "note": entry["interval_note"]}
                if entry["results"] is None:
                    out.append(base)
                    continue
                for report, block in entry["results"].items():
                    for metric, value in block.items():
                        if isinstance(value, dict):
                            out += [{**base, "report": report, "metric": metric, "class": c, "value": v}
                                    for c, v in value.items()]
                            continue
                        found = (entry["intervals"] or {}).get(f"{report}.{metric}") or {}
                        row = {**base, "report": report, "metric": metric, "value": value, "low": found.get("low"),
                               "high": found.get("high")}
                        for role in COMPARISONS:
                            paired = slice_comparison(entry, role, f"{report}.{metric}")
                            row |= {f"vs_{role}": paired.get("difference"), f"vs_{role}_low": paired.get("low"),
                                    f"vs_{role}_high": paired.get("high")}
                        out.append(row)
    return out


def to_slices_csv(groups: Sequence[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=SLICE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if r.get(k) is None else r[k] for k in SLICE_COLUMNS} for r in slice_rows(groups))
    return out.getvalue()
