"""Results as rows: flattening report dictionaries into named columns, and rendering them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def flatten(results: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{'shared_metrics': {'iou': {'wall': x}}} -> {'shared_metrics.iou.wall': x}."""
    flat: dict[str, Any] = {}
    for key, value in results.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def render_text(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """A fixed-width table for the terminal; headers are the full column names, so every class
    column reads `report.metric.class`."""
    body = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(columns)]  # no rows: the headers
    line = "  ".join(h.ljust(w) for h, w in zip(columns, widths))
    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line, rule] + ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in body])
