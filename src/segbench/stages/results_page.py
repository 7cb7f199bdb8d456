"""The results as a static, self-contained HTML page: per comparability group a sortable table of
the headline, its interval and paired differences, and collapsed sections with every metric.

The page's frame (results_page.html, a string.Template: head, title, the note on reading it),
its style and its script are files of their own beside this module (package data); the style
and the script are inlined into the page. The script sorts a table when its header is clicked: by each cell's data-sort value
(numbers when every value is a number), ascending first, then descending; empty values last.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from importlib.resources import files
from string import Template
from typing import Any

from .leaderboard import (bootstrap_note, class_names, group_title, interval, mixed_modes, report_keys, report_metrics,
                          significant_entry, slice_comparison, slice_entries, too_few)
from .text_table import cell

STYLE = files(__package__).joinpath("results_page.css").read_text(encoding="utf-8")
SCRIPT = files(__package__).joinpath("results_page.js").read_text(encoding="utf-8")
# The page around the groups: $title, $note, $style, $groups (each line of HTML ending in a newline), $script.
PAGE = Template(files(__package__).joinpath("results_page.html").read_text(encoding="utf-8"))
# The note on reading the page, sentence by sentence (HTML): this page holds every one; the
# server's boards (server/pages.py) the ones true of what they show.
COMPARABLE = "Rows are comparable only within one table: one (benchmark version, taxonomy version, dataset_id, split)."
FLOOR = "The floor predicts the benchmark's floor class everywhere; a model that does not beat it is flagged <b>NO</b>."
INTERVALS = ("Grey brackets: 95% percentile bootstrap interval, resampling the benchmark's independent units (never "
             "frames). Δ columns: paired bootstrap difference of the ranking metric against the baseline and the "
             "floor on the same resampled units; ✱ marks an interval that excludes 0.")
DETAILS = "Every other metric and the per-class values are in the collapsed sections under each table"
SLICES = ", and so are the slices by metadata (choose one in the selector)"
SORT = "Click a column header to sort."
RESULTS_NOTE = " ".join((COMPARABLE, FLOOR, INTERVALS, f"{DETAILS}{SLICES}.", SORT))


def _escape(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _sort_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _td(text: str, sort: Any, css: str = "") -> str:
    klass = f' class="{css}"' if css else ""
    return f'<td{klass} data-sort="{_escape(_sort_value(sort))}">{text}</td>'


def _metric_cell(value: Any, low: Any = None, high: Any = None) -> str:
    if value is None:
        return _td("—", None)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _td(_escape(value), value, "text")
    text = f"{value:.4f}" if isinstance(value, float) else str(value)
    if low is not None and high is not None:
        text += f' <span class="ci">[{low:.4f}, {high:.4f}]</span>'
    return _td(text, value)


def _comparison_cell(row: dict[str, Any], role: str) -> str:
    value = row.get(f"vs_{role}.difference")
    if value is None:
        return _td("—", None)
    low, high = row.get(f"vs_{role}.ci_low"), row.get(f"vs_{role}.ci_high")
    significant = bool(row.get(f"vs_{role}.significant"))
    text = f'{value:+.4f} <span class="ci">[{low:+.4f}, {high:+.4f}]</span>'
    title = (f"paired bootstrap vs {row.get(f'vs_{role}.against')}: "
             + ("the interval excludes 0" if significant else "not significant (the interval includes 0, or too few units)"))
    return (f'<td class="{"sig" if significant else ""}" data-sort="{value}" title="{_escape(title)}">'
            f'{text}{" ✱" if significant else ""}</td>')


def _table(css: str, attributes: str, headers: Sequence[tuple[str, str, str]],
           rows: Sequence[tuple[str, str, list[str]]], row_attribute: str = "data-row") -> str:
    """headers: (data-column, label, css); rows: (the row's key, tr css, cells)."""
    # A metric's name may break after its report's dot (shared_metrics.<wbr>mIoU) where the frame is narrow.
    head = "".join(f'<th class="{c}" data-column="{_escape(k)}" title="{_escape(k)}">{_escape(label).replace(".", ".<wbr>")}'
                   "</th>" for k, label, c in headers)
    body = "".join((f'<tr class="{c}"' if c else "<tr") + f' {row_attribute}="{_escape(key)}">' + "".join(cells) + "</tr>"
                   for key, c, cells in rows)
    return (f'<div class="scroll"><table class="{css}"{attributes}><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _main_table(group: dict[str, Any]) -> str:
    """The compact columns: rank, model, kind, inference (when a record has one), label space, the
    headline with its interval, its paired differences, the flag."""
    headline = group["headline"]
    has_mode = any("inference_mode" in r for r in group["rows"])
    headers = [("rank", "rank", ""), ("model", "model", "text"), ("kind", "kind", "text")]
    headers += [("inference", "inference", "text")] if has_mode else []
    headers += [("label_space", "label space", "text"), (headline, headline, ""),
                ("vs_baseline", "Δ vs baseline", ""), ("vs_floor", "Δ vs floor", ""), ("beats_floor", "beats floor", "text")]
    rows = []
    for row in group["rows"]:
        cells = [_td(cell(row.get("rank")), row.get("rank")), _td(_escape(row["model"]), row["model"], "text"),
                 _td(_escape(row["kind"]), row["kind"], "text")]
        cells += [_td(_escape(cell(row.get("inference"))), row.get("inference"), "text")] if has_mode else []
        verdict = None if row.get("beats_floor") is None else too_few(group) or row["beats_floor"]
        cells += [_td(_escape(row.get("label_space")), row.get("label_space"), "text"),
                  _metric_cell(*interval(row, headline)), _comparison_cell(row, "baseline"),
                  _comparison_cell(row, "floor"),
                  _td(_escape(cell(verdict)), verdict, "text flag-no" if verdict == "no" else "text")]
        rows.append((row["model"], "floor" if row["kind"] == "floor" else "", cells))
    attributes = f' data-benchmark="{_escape(group["benchmark"])}" data-split="{_escape(group["split"])}"'
    return _table("leaderboard", attributes, headers, rows, row_attribute="data-model")


def _report_details(group: dict[str, Any], report: str) -> str:
    """One report, collapsed: its scalar metrics per model, then each per-class metric by class."""
    scalar, per_class = report_metrics(group, report)
    rows = group["rows"]
    attributes = f' data-benchmark="{_escape(group["benchmark"])}" data-report="{_escape(report)}"'
    parts = [f'<details data-report="{_escape(report)}"><summary>report <code>{_escape(report)}</code>: '
             f"{len(scalar)} metrics, {len(per_class)} per-class tables</summary>"]
    if scalar:
        headers = [("model", "model", "text")] + [(f"{report}.{m}", f"{report}.{m}", "") for m in scalar]
        body = [(r["model"], "floor" if r["kind"] == "floor" else "",
                 [_td(_escape(r["model"]), r["model"], "text")] + [_metric_cell(*interval(r, f"{report}.{m}")) for m in scalar])
                for r in rows]
        parts.append(_table("detail", attributes + ' data-metric=""', headers, body))
    for metric in per_class:
        headers = [("class", "class", "text")] + [(str(r["model"]), str(r["model"]), "") for r in rows]
        body = [(c, "", [_td(_escape(c), c, "text")] +
                 [_metric_cell((r["results"].get(report, {}).get(metric) or {}).get(c)) for r in rows])
                for c in class_names(group, report, metric)]
        parts.append(f"<h3><code>{_escape(report)}.{_escape(metric)}</code> by class</h3>")
        parts.append(_table("detail", attributes + f' data-metric="{_escape(metric)}"', headers, body))
    parts.append("</details>")
    return "".join(parts)


def _slice_difference(entry: dict[str, Any], role: str, key: str) -> str:
    """A slice's paired difference, ✱ when significant over the slice's units (significant_entry)."""
    paired = slice_comparison(entry, role, key)
    value, low, high = paired.get("difference"), paired.get("low"), paired.get("high")
    if value is None:
        return _td("—", None)
    significant = significant_entry(paired, entry["units"])
    text = f"{value:+.4f}" + (f' <span class="ci">[{low:+.4f}, {high:+.4f}]</span>' if low is not None else "")
    return _td(text + (" ✱" if significant else ""), value, "sig" if significant else "")


def _slice_table(group: dict[str, Any], entries: dict[str, dict[str, Any]], index: int) -> str:
    """One slice: a row per model with its frames and units, the headline with its interval,
    its paired differences, then every other scalar metric of every report with its interval."""
    headline = group["headline"]
    scalar = [f"{report}.{metric}" for report in report_keys(group) for metric in report_metrics(group, report)[0]]
    others = [k for k in scalar if k != headline]
    headers = [("model", "model", "text"), ("frames", "frames", ""), ("units", "units", ""), (headline, headline, ""),
               ("vs_baseline", "Δ vs baseline", ""), ("vs_floor", "Δ vs floor", ""),
               ("interval_note", "intervals", "text")] + [(k, k, "") for k in others]
    body = []
    for model, entry in entries.items():
        def value(key: str, entry: dict[str, Any] = entry) -> str:
            report, metric = key.split(".", 1)
            found = (entry["intervals"] or {}).get(key) or {}
            return _metric_cell(((entry["results"] or {}).get(report) or {}).get(metric), found.get("low"),
                                found.get("high"))

        note = entry["interval_note"] or "95% bootstrap"
        body.append((model, "", [_td(_escape(model), model, "text"), _td(str(entry["frames"]), entry["frames"]),
                                 _td(str(entry["units"]), entry["units"]), value(headline),
                                 _slice_difference(entry, "baseline", headline),
                                 _slice_difference(entry, "floor", headline), _td(_escape(note), note, "text")]
                     + [value(k) for k in others]))
    attributes = f' data-benchmark="{_escape(group["benchmark"])}" data-slice="{index}"'
    return _table("detail", attributes, headers, body, row_attribute="data-model")


def _slices_details(group: dict[str, Any]) -> str:
    """The slices by metadata, collapsed: a selector of (column = value), and the chosen slice's
    table (the others hidden)."""
    found = slice_entries(group)
    if not found:
        return ""
    group_key = next((r["uncertainty"]["group_key"] for r in group["rows"] if r.get("uncertainty")), "units")
    columns = len({key for key, _, _ in found})
    options = "".join(f'<option value="{i}">{_escape(key)} = {_escape(label)}</option>'
                      for i, (key, label, _) in enumerate(found))
    parts = [f'<details class="slices" data-benchmark="{_escape(group["benchmark"])}"><summary>slices by metadata: '
             f"{len(found)} slices of {columns} metadata column{'s' if columns != 1 else ''}</summary>",
             f'<p class="meta">Every metric on the frames of one slice, from the same counts; intervals resample the '
             f"{_escape(group_key)} units inside the slice, Δ is paired on them. Per-class values: tables/slices.csv."
             f'</p><label>slice <select class="slice-selector">{options}</select></label>']
    for i, (key, label, entries) in enumerate(found):
        parts.append(f'<div class="slice" data-slice="{i}" data-slicing="{_escape(key)}" data-value="{_escape(label)}">'
                     + _slice_table(group, entries, i) + "</div>")
    parts.append("</details>")
    return "".join(parts)


def group_sections(groups: Sequence[dict[str, Any]]) -> list[str]:
    """Each group's HTML, in order: its title and triple, the ranked table, the collapsed reports
    and slices (what `to_html` puts in its page, and the server's board in its own)."""
    parts = []
    for index, group in enumerate(groups):
        parts.append(f'<h2 id="group-{index}">{_escape(group_title(group))}</h2>')
        parts.append(f'<p class="meta">dataset_id <code>{_escape(group["dataset_id"])}</code> · ranked by '
                     f'<code>{_escape(group["headline"])}</code> · {_escape(bootstrap_note(group))}</p>')
        if mixed_modes(group):
            parts.append('<p class="meta flag-no">rows use different inference modes (column inference): '
                         "their ranks compare unlike runs</p>")
        if too_few(group):
            parts.append(f'<p class="meta flag-no">{_escape(too_few(group))}: no difference is marked significant, '
                         "no model said to beat the floor</p>")
        parts.append(_main_table(group))
        parts += [_report_details(group, report) for report in report_keys(group)]
        parts.append(_slices_details(group))
    return parts


def page(title: str, parts: Sequence[str], note: str = RESULTS_NOTE) -> str:
    """The page frame (results_page.html) around `parts`, under `note` (HTML), the style and script inlined."""
    return PAGE.substitute(title=_escape(title), note=note, style=STYLE, script=SCRIPT,
                           groups="".join(f"{p}\n" for p in parts))


def to_html(groups: Sequence[dict[str, Any]], title: str = "segbench results") -> str:
    """A self-contained page (results_page.html, its CSS and JS inlined, no network): per comparability triple, a sortable
    table of the headline with its 95% interval, its paired differences against the baseline and
    the floor, the floor row and the beats-floor flag; below it, per report, a collapsed section
    with every other metric and the per-class tables, all sortable; then the slices by metadata,
    one at a time through a selector."""
    return page(title, group_sections(groups))
