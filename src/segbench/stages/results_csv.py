"""The results as CSV: the wide table (one row per model, one column per metric) and the long one
(one row per value)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from .leaderboard import class_names, interval, report_keys, report_metrics

NESTED = ("results", "uncertainty")  # JSON only; flattened into the columns


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
