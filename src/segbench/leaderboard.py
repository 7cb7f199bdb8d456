"""The results table: every submission record, grouped by comparability triple, floor in each group.

Rows are comparable only within one (benchmark_version, taxonomy_version, dataset_id) triple of
one benchmark and split; groups are never ranked against each other.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from .table import cell, flatten, headers as table_headers, render_markdown, short_header as short

IDENTITY = ("benchmark", "benchmark_version", "taxonomy_version", "dataset_id", "split")
METRIC_EXCLUDE = {"benchmark", "benchmark_version", "taxonomy_version", "dataset_id", "split", "checkpoint_sha256",
                  "model", "inference_size", "inference", "frames", "pixels_evaluated", "floor", "tool"}


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


def mode_note(group: dict[str, Any]) -> str:
    """A warning for a group whose rows were made with different inference modes."""
    if len(group.get("inference_modes", [])) < 2:
        return ""
    return " · **rows use different inference modes (column `inference`): their ranks compare unlike runs**"


def metric_columns(record: dict[str, Any]) -> dict[str, Any]:
    """The record's metric blocks (the benchmark's reports), flattened to dotted columns."""
    return flatten({k: v for k, v in record.items() if k not in METRIC_EXCLUDE and isinstance(v, dict)})


def model_row(record: dict[str, Any]) -> dict[str, Any]:
    return {
        **{k: record[k] for k in IDENTITY},
        "model": record["model"]["name"],
        "kind": record["model"]["kind"],
        "inference": inference_text(record.get("inference")),
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
        "inference": None,
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
        group["inference_modes"] = sorted({str(row["inference"]) for row in group["rows"]})
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
                        {*IDENTITY, "label_space", "checkpoint_sha256", "frames", "rank", "beats_floor", "model", "kind",
                         "inference"}]
        shown = ["rank", "model", "kind", "inference", *metric_names, "beats_floor"]
        parts.append(
            f"## {group['benchmark']} v{group['benchmark_version']} (taxonomy {group['taxonomy_version']}), "
            f"split {group['split']}\n\ndataset_id `{group['dataset_id']}` · ranked by `{group['headline']}`"
            f"{mode_note(group)}\n"
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


# --- uncertainty beside the spec's fields ------------------------------------------------------

COMPARISONS = ("baseline", "floor")


def uncertainty_key(document: dict[str, Any]) -> tuple[str, str, str]:
    return document["benchmark"], document["split"], document["model"]


def attach_intervals(groups: Sequence[dict[str, Any]], uncertainties: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row gains `M.ci_low` / `M.ci_high` beside every bootstrapped metric M, and
    `vs_baseline.*` / `vs_floor.*` (difference, interval, excludes_zero) for the headline metric;
    the full bootstrap document goes under `uncertainty` (JSON only). Records are not changed."""
    by_key = {uncertainty_key(u): u for u in uncertainties}
    out = []
    for group in groups:
        rows = []
        for row in group["rows"]:
            document = by_key.get((group["benchmark"], group["split"], row["model"]))
            row = dict(row)
            if document is not None:
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
                row["uncertainty"] = {k: document[k] for k in ("method", "group_key", "groups", "resamples", "seed",
                                                                 "confidence", "intervals", "comparisons")}
            rows.append(row)
        out.append({**group, "rows": rows})
    return out


def flat_rows(group: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows without the nested bootstrap document (for CSV and Markdown)."""
    return [{k: v for k, v in row.items() if k != "uncertainty"} for row in group["rows"]]


def flat_groups(groups: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**g, "rows": flat_rows(g)} for g in groups]


def interval_text(row: dict[str, Any], key: str) -> str:
    value, low, high = row.get(key), row.get(f"{key}.ci_low"), row.get(f"{key}.ci_high")
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    text = f"{value:.4f}" if isinstance(value, float) else str(value)
    if low is not None and high is not None:
        text += f" [{low:.4f}, {high:.4f}]"
    return text


def comparison_text(row: dict[str, Any], role: str) -> str:
    difference = row.get(f"vs_{role}.difference")
    if difference is None:
        return "—"
    low, high = row.get(f"vs_{role}.ci_low"), row.get(f"vs_{role}.ci_high")
    mark = " *" if row.get(f"vs_{role}.excludes_zero") else ""
    return f"{difference:+.4f} [{low:+.4f}, {high:+.4f}]{mark}"


HIDDEN = {*IDENTITY, "label_space", "checkpoint_sha256", "frames", "rank", "beats_floor", "model", "kind", "inference"}


def shown_metrics(group: dict[str, Any]) -> list[str]:
    """The metric columns of a group (no interval or comparison columns)."""
    return [c for c in columns([group]) if c not in HIDDEN and c != "uncertainty" and not c.endswith((".ci_low", ".ci_high"))
            and not c.startswith("vs_")]


def to_markdown_with_intervals(groups: Sequence[dict[str, Any]]) -> str:
    """The results table with each bootstrapped metric's 95% interval, and the headline's paired
    differences against the baseline and the floor (* : the interval excludes 0)."""
    parts = ["# Results\n", "Rows are comparable only within one group (benchmark version, taxonomy version, "
             "dataset_id, split). The floor predicts the benchmark's floor class everywhere; a model that does "
             "not beat it is flagged **NO**. Brackets: 95% bootstrap interval over the benchmark's independent "
             "units; Δ: paired difference of the headline metric (* : its interval excludes 0).\n"]
    for group in groups:
        rows = flat_rows(group)
        metric_names = shown_metrics(group)
        headers = ["rank", "model", "kind", "inference", *table_headers(metric_names), "Δ vs baseline", "Δ vs floor",
                   "beats_floor"]
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        for row in rows:
            cells = [cell(row.get("rank")), str(row["model"]), str(row["kind"]), cell(row.get("inference"))]
            cells += [interval_text(row, m) for m in metric_names]
            cells += [comparison_text(row, "baseline"), comparison_text(row, "floor"), cell(row.get("beats_floor"))]
            lines.append("| " + " | ".join(cells) + " |")
        parts.append(
            f"## {group['benchmark']} v{group['benchmark_version']} (taxonomy {group['taxonomy_version']}), "
            f"split {group['split']}\n\ndataset_id `{group['dataset_id']}` · ranked by `{group['headline']}`"
            f"{mode_note(group)}\n"
        )
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


# --- the static page ---------------------------------------------------------------------------

PAGE_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em}
p.note,p.meta{color:#555;font-size:.9em;max-width:60em}
div.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:.88em;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right;white-space:nowrap}
th{background:#f0f0f0;cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}
td.text,th.text{text-align:left}
tr.floor td{background:#f7f7f7;font-style:italic}
td.flag-no{background:#fde2e1;font-weight:bold;color:#a00}
td.sig{font-weight:bold}
span.ci{color:#666;font-size:.85em}
"""

# Sorting: a click on a header sorts its table's rows by the cell's data-sort value (numbers when
# every value is a number), ascending first, then descending; empty values always sort last.
PAGE_SCRIPT = """
(function () {
  function key(cell) {
    var raw = cell.getAttribute('data-sort');
    return raw === null ? cell.textContent.trim() : raw;
  }
  function sortTable(table, column, header) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var values = rows.map(function (r) { return key(r.cells[column]); });
    var numeric = values.every(function (v) { return v === '' || !isNaN(Number(v)); });
    var ascending = header.getAttribute('aria-sort') !== 'ascending';
    rows.sort(function (a, b) {
      var x = key(a.cells[column]), y = key(b.cells[column]);
      if (x === '' || y === '') { return (x === '') - (y === ''); }
      var d = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return ascending ? d : -d;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
    header.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
  }
  document.querySelectorAll('table.leaderboard').forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
      header.addEventListener('click', function () { sortTable(table, column, header); });
    });
  });
})();
"""


def _escape(value: Any) -> str:
    import html

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


def _metric_cell(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if value is None:
        return _td("—", None)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _td(_escape(value), value, "text")
    text = f"{value:.4f}" if isinstance(value, float) else str(value)
    low, high = row.get(f"{key}.ci_low"), row.get(f"{key}.ci_high")
    if low is not None and high is not None:
        text += f' <span class="ci">[{low:.4f}, {high:.4f}]</span>'
    return _td(text, value)


def _comparison_cell(row: dict[str, Any], role: str) -> str:
    difference = row.get(f"vs_{role}.difference")
    if difference is None:
        return _td("—", None)
    low, high = row.get(f"vs_{role}.ci_low"), row.get(f"vs_{role}.ci_high")
    significant = bool(row.get(f"vs_{role}.excludes_zero"))
    text = f'{difference:+.4f} <span class="ci">[{low:+.4f}, {high:+.4f}]</span>'
    title = f"paired bootstrap vs {row.get(f'vs_{role}.against')}: the interval " + ("excludes" if significant else "includes") + " 0"
    return (f'<td class="{"sig" if significant else ""}" data-sort="{difference}" title="{_escape(title)}">'
            f'{text}{" ✱" if significant else ""}</td>')


def to_html(groups: Sequence[dict[str, Any]], title: str = "segbench results") -> str:
    """A self-contained page (inline CSS and JS, no network): one sortable table per
    comparability triple, each bootstrapped metric with its 95% interval, the headline's paired
    differences against the baseline and the floor, the floor row and the beats-floor flag."""
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_escape(title)}</title>", f"<style>{PAGE_STYLE}</style>", "</head>", "<body>",
        f"<h1>{_escape(title)}</h1>",
        '<p class="note">Rows are comparable only within one table: one (benchmark version, taxonomy version, '
        "dataset_id, split). The floor predicts the benchmark's floor class everywhere; a model that does not beat "
        "it is flagged <b>NO</b>. Grey brackets: 95% percentile bootstrap interval, resampling the benchmark's "
        "independent units (never frames). Δ columns: paired bootstrap difference of the ranking metric against "
        "the baseline and the floor on the same resampled units; ✱ marks an interval that excludes 0. "
        "Click a column header to sort.</p>",
    ]
    for index, group in enumerate(groups):
        rows = group["rows"]
        metric_names = shown_metrics(group)
        headline = group["headline"]
        documents = [r["uncertainty"] for r in rows if r.get("uncertainty")]
        method = ""
        if documents:
            d = documents[0]
            method = (f" · bootstrap: {d['resamples']} resamples of {d['groups']} groups ({_escape(d['group_key'])}),"
                      f" seed {d['seed']}")
        parts.append(
            f'<h2 id="group-{index}">{_escape(group["benchmark"])} v{_escape(group["benchmark_version"])} '
            f'(taxonomy {_escape(group["taxonomy_version"])}), split {_escape(group["split"])}</h2>'
        )
        parts.append(f'<p class="meta">dataset_id <code>{_escape(group["dataset_id"])}</code> · ranked by '
                     f"<code>{_escape(headline)}</code>{method}</p>")
        if mode_note(group):
            parts.append('<p class="meta flag-no">rows use different inference modes (column inference): '
                         "their ranks compare unlike runs</p>")
        headers = [("rank", "rank", ""), ("model", "model", "text"), ("kind", "kind", "text"),
                   ("inference", "inference", "text"), ("label_space", "label space", "text")]
        # The ranking metric, its paired differences and the flag first; the other metrics after.
        metric_names = [m for m in metric_names if m == headline] + [m for m in metric_names if m != headline]
        names = dict(zip(metric_names, table_headers(metric_names)))
        headers += [(m, names[m], "") for m in metric_names[:1]]
        headers += [("vs_baseline", f"Δ {short(headline)} vs baseline", ""),
                    ("vs_floor", f"Δ {short(headline)} vs floor", ""), ("beats_floor", "beats floor", "text")]
        headers += [(m, names[m], "") for m in metric_names[1:]]
        parts.append('<div class="scroll">')
        parts.append(f'<table class="leaderboard" data-benchmark="{_escape(group["benchmark"])}" '
                     f'data-split="{_escape(group["split"])}">')
        parts.append("<thead><tr>" + "".join(
            f'<th class="{css}" data-column="{_escape(key)}" title="{_escape(key)}">{_escape(label)}</th>'
            for key, label, css in headers) + "</tr></thead>")
        parts.append("<tbody>")
        for row in rows:
            cells = [_td(cell(row.get("rank")), row.get("rank")), _td(_escape(row["model"]), row["model"], "text"),
                     _td(_escape(row["kind"]), row["kind"], "text"),
                     _td(_escape(cell(row.get("inference"))), row.get("inference"), "text"),
                     _td(_escape(row.get("label_space")), row.get("label_space"), "text")]
            beaten = row.get("beats_floor")
            cells += [_metric_cell(row, m) for m in metric_names[:1]]
            cells += [_comparison_cell(row, "baseline"), _comparison_cell(row, "floor")]
            cells.append(_td(cell(beaten), beaten, "text flag-no" if beaten is False else "text"))
            cells += [_metric_cell(row, m) for m in metric_names[1:]]
            css = ' class="floor"' if row["kind"] == "floor" else ""
            parts.append(f'<tr{css} data-model="{_escape(row["model"])}">' + "".join(cells) + "</tr>")
        parts.append("</tbody></table></div>")
    parts += [f"<script>{PAGE_SCRIPT}</script>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"
