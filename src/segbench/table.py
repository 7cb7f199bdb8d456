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


def headers(columns: Sequence[str]) -> list[str]:
    """Short headers, except where two columns would share one (e.g. two reports' mIoU)."""
    short = [short_header(c) for c in columns]
    return [s if short.count(s) == 1 else c for s, c in zip(short, columns)]


def render_text(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """A fixed-width table for the terminal."""
    names = headers(columns)
    body = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(names)]
    line = "  ".join(h.ljust(w) for h, w in zip(names, widths))
    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line, rule] + ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in body])


def render_markdown(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    names = headers(columns)
    lines = ["| " + " | ".join(names) + " |", "|" + "|".join("---" for _ in names) + "|"]
    lines += ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
