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


def short_header(column: str) -> str:
    """The last two parts of a dotted column name: 'shared_metrics.iou.wall' -> 'iou.wall'."""
    parts = column.split(".")
    return ".".join(parts[-2:]) if len(parts) > 2 else parts[-1]


def render_text(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """A fixed-width table for the terminal."""
    headers = [short_header(c) for c in columns]
    body = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line, rule] + ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in body])


def render_markdown(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    headers = [short_header(c) for c in columns]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
