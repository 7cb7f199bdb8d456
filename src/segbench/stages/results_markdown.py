"""The results in Markdown: the compact table (per group, a fixed-width block that reads in a
100-column terminal, shown at the end of `make run`) and every metric of each report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .leaderboard import (bootstrap_note, class_names, group_title, interval, mixed_modes, report_keys, report_metrics,
                          too_few)

def number(value: Any, signed: bool = False) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return str(value)
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def with_interval(value: Any, low: Any, high: Any) -> str:
    text = number(value)
    if value is not None and low is not None and high is not None:
        text += f" [{number(low)}, {number(high)}]"
    return text


def difference(row: dict[str, Any], role: str, with_bounds: bool) -> str:
    """Δ of the headline against the baseline or the floor, with its paired interval when asked;
    * when it is significant (its interval excludes 0, with enough units: core.significance)."""
    value = row.get(f"vs_{role}.difference")
    if value is None:
        return "—"
    low, high = row.get(f"vs_{role}.ci_low"), row.get(f"vs_{role}.ci_high")
    text = number(value, signed=True) + ("*" if row.get(f"vs_{role}.significant") else "")
    if not with_bounds or low is None or high is None:
        return text
    return f"{text} [{number(low, signed=True)}, {number(high, signed=True)}]"


def verdict(group: dict[str, Any], row: dict[str, Any]) -> str:
    """The row's beats-the-floor verdict; '—' for the floor, and where the group has too few units
    (the group's note says so once)."""
    return "—" if row.get("beats_floor") is None or too_few(group) else str(row["beats_floor"])


def compact_columns(group: dict[str, Any]) -> list[tuple[str, Any]]:
    """(header, cell function) of the compact table, in 100 columns, rows in rank order: the model
    (the baseline marked (b)), the mode when a record has one, the headline with its interval, Δ
    against the baseline with its interval, Δ against the floor (its interval decides the verdict
    beside it), and the void pixels (predicted as no class, counted as misses) when a row has any."""
    headline = group["headline"]
    baseline = {r.get("vs_baseline.against") for r in group["rows"]} - {None}
    shown: list[tuple[str, Any]] = [("model", lambda r: str(r["model"]) + (" (b)" if r["model"] in baseline else ""))]
    if any("inference_mode" in r for r in group["rows"]):
        shown.append(("mode", lambda r: number(r.get("inference_mode"))))
    shown += [
        (headline, lambda r: with_interval(*interval(r, headline))),
        ("Δ baseline", lambda r: difference(r, "baseline", with_bounds=True)),
        ("Δ floor", lambda r: difference(r, "floor", with_bounds=False)),
        ("beats floor", lambda r: verdict(group, r)),
    ]
    if any(r["pixels_predicted_void"] for r in group["rows"]):  # a model abstained: say how much it did
        shown.append(("void px", lambda r: number(r["pixels_predicted_void"])))
    return shown


def fixed_width(headers: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in body]
    return "\n".join(lines)


def compact_table(group: dict[str, Any]) -> str:
    shown = compact_columns(group)
    return fixed_width([h for h, _ in shown], [[f(r) for _, f in shown] for r in group["rows"]])


def to_markdown(groups: Sequence[dict[str, Any]], tables: str = "results/tables") -> str:
    """The compact results: per comparability group, one line per model (ranked, floor last) with
    the headline, its interval, the paired Δ against the baseline and the floor and the flag; in
    fixed-width blocks that read in a 100-column terminal. Every other metric: `tables`."""
    parts = ["# Results\n",
             "Rows are comparable only within one group (benchmark version, taxonomy version, dataset_id, split),\n"
             "ranked by the group's headline; (b): the baseline. [low, high]: 95% bootstrap interval over\n"
             "the benchmark's independent units. Δ: paired difference of the headline (*: its interval\n"
             "excludes 0, with at least 5 units). The floor predicts the floor class everywhere; beats\n"
             "floor: yes when Δ floor's interval is above 0, no when below, within noise otherwise.\n"
             f"Every metric, per class and per report: {tables}/ (long.csv: one row per value).\n"]
    for group in groups:
        parts.append(f"## {group_title(group)}\n\ndataset_id `{group['dataset_id']}`  \n"
                     f"ranked by `{group['headline']}`; {bootstrap_note(group)}\n"
                     + ("**rows use different inference modes (column `inference`): their ranks compare unlike runs**\n"
                        if mixed_modes(group) else "")
                     + (f"**{too_few(group)}: nothing starred, no verdict**\n"
                        if too_few(group) else ""))
        parts.append("```text\n" + compact_table(group) + "\n```\n")
    return "\n".join(parts)


def markdown_table(headers: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])


def report_table(group: dict[str, Any], report: str) -> str:
    """A report's tables in Markdown: its scalar metrics (a row per model, value [interval]) and,
    per per-class metric, a row per class and a column per model."""
    scalar, per_class = report_metrics(group, report)
    rows = group["rows"]
    parts = [f"## {group_title(group)}: report `{report}`\n\ndataset_id `{group['dataset_id']}`; "
             f"{bootstrap_note(group)}\n"]
    if scalar:
        parts.append(f"### `{report}`: every scalar metric\n")
        body = [[str(r["model"]), str(r["kind"])] + [with_interval(*interval(r, f"{report}.{m}")) for m in scalar]
                for r in rows]
        parts.append(markdown_table(["model", "kind", *(f"{report}.{m}" for m in scalar)], body) + "\n")
    for metric in per_class:
        parts.append(f"### `{report}.{metric}` by class\n")
        body = [[c] + [number((r["results"].get(report, {}).get(metric) or {}).get(c)) for r in rows]
                for c in class_names(group, report, metric)]
        parts.append(markdown_table(["class", *(str(r["model"]) for r in rows)], body) + "\n")
    return "\n".join(parts)


def report_tables(groups: Sequence[dict[str, Any]]) -> dict[str, str]:
    """'BENCHMARK/SPLIT/REPORT.md' -> the report's tables of every group of that benchmark and split."""
    files: dict[str, list[str]] = {}
    for group in groups:
        for report in report_keys(group):
            files.setdefault(f"{group['benchmark']}/{group['split']}/{report}.md", []).append(report_table(group, report))
    return {name: "# Results: every metric of one report\n\n" + "\n".join(texts) for name, texts in files.items()}
