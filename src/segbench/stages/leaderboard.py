"""The results table: every submission record, grouped by comparability triple, floor in each group.

Rows are comparable only within one (benchmark_version, taxonomy_version, dataset_id) triple of
one benchmark and split; groups are never ranked against each other.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from .text_table import cell, flatten

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


def metric_blocks(record: dict[str, Any]) -> dict[str, Any]:
    """The record's metric blocks (the benchmark's reports, with the spec fields they select)."""
    return {k: v for k, v in record.items() if k not in METRIC_EXCLUDE and isinstance(v, dict)}


def inference_mode(record: dict[str, Any]) -> dict[str, Any]:
    """{'inference_mode': mode} when the record has an `inference` block, else {}."""
    block = record.get("inference")
    return {"inference_mode": block.get("mode")} if isinstance(block, dict) else {}


def model_row(record: dict[str, Any]) -> dict[str, Any]:
    blocks = metric_blocks(record)
    return {
        **{k: record[k] for k in IDENTITY},
        "model": record["model"]["name"],
        "kind": record["model"]["kind"],
        "inference": inference_text(record.get("inference")),
        **inference_mode(record),
        "label_space": record["model"]["label_space"],
        "checkpoint_sha256": record["checkpoint_sha256"],
        "frames": record["frames"],
        **flatten(blocks),
        "beats_floor": record["floor"]["beaten"],
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
        **flatten(floor["results"]),
        "beats_floor": None,
        "results": floor["results"],
    }


def build(records: Sequence[dict[str, Any]], floors: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Groups, each {identity..., headline, rows}; rows ranked by the headline, floor last. Each
    row holds the record's spec fields as dotted columns and, nested, as `results`."""
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


def row_key(document: dict[str, Any]) -> tuple[str, str, str]:
    return document["benchmark"], document["split"], document["model"]


def attach_results(groups: Sequence[dict[str, Any]], documents: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with a metrics document (results/<b>/<s>/<model>/metrics.json, the floor's too)
    gains every metric of every report, beside the record's spec fields. Records are not changed."""
    by_key = {row_key(d): d for d in documents}
    out = []
    for group in groups:
        rows = []
        for row in group["rows"]:
            document = by_key.get((group["benchmark"], group["split"], row["model"]))
            if document is not None:
                row = {**{k: v for k, v in row.items() if k != "beats_floor"}, **flatten(document["results"]),
                       "beats_floor": row["beats_floor"], "results": document["results"]}
            rows.append(row)
        out.append({**group, "rows": rows})
    return out


# --- uncertainty beside the spec's fields ------------------------------------------------------

COMPARISONS = ("baseline", "floor")


def attach_intervals(groups: Sequence[dict[str, Any]], uncertainties: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row gains `M.ci_low` / `M.ci_high` beside every bootstrapped metric M, and
    `vs_baseline.*` / `vs_floor.*` (difference, interval, excludes_zero) for the headline metric;
    the full bootstrap document goes under `uncertainty` (JSON only). Records are not changed."""
    by_key = {row_key(u): u for u in uncertainties}
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


def interval(row: dict[str, Any], key: str) -> tuple[Any, Any, Any]:
    """(value, low, high) of `report.metric` in a row; low/high None without a bootstrap."""
    found = ((row.get("uncertainty") or {}).get("intervals") or {}).get(key) or {}
    return row.get(key), found.get("low"), found.get("high")


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


# --- the compact table (the end of `make run`) and the per-report tables ----------------------


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


def difference(row: dict[str, Any], role: str) -> str:
    """Δ of the headline against the baseline or the floor; * when its interval excludes 0."""
    value = row.get(f"vs_{role}.difference")
    return "—" if value is None else number(value, signed=True) + ("*" if row.get(f"vs_{role}.excludes_zero") else "")


def compact_columns(group: dict[str, Any]) -> list[tuple[str, Any]]:
    """(header, cell function) of the compact table; the mode column only when a record has one."""
    headline = group["headline"]
    shown: list[tuple[str, Any]] = [("model", lambda r: str(r["model"])), ("kind", lambda r: str(r["kind"]))]
    if any("inference_mode" in r for r in group["rows"]):
        shown.append(("mode", lambda r: number(r.get("inference_mode"))))
    shown += [
        (headline, lambda r: with_interval(*interval(r, headline))),
        ("Δ baseline", lambda r: difference(r, "baseline")),
        ("Δ floor", lambda r: difference(r, "floor")),
        ("beats floor", lambda r: cell(r.get("beats_floor"))),
    ]
    return shown


def fixed_width(headers: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in body]
    return "\n".join(lines)


def group_title(group: dict[str, Any]) -> str:
    return (f"{group['benchmark']} v{group['benchmark_version']} (taxonomy {group['taxonomy_version']}), "
            f"split {group['split']}")


def bootstrap_note(group: dict[str, Any]) -> str:
    documents = [r["uncertainty"] for r in group["rows"] if r.get("uncertainty")]
    if not documents:
        return "no bootstrap intervals"
    d = documents[0]
    return f"95% bootstrap intervals: {d['resamples']} resamples of {d['groups']} {d['group_key']} groups, seed {d['seed']}"


def compact_table(group: dict[str, Any]) -> str:
    shown = compact_columns(group)
    return fixed_width([h for h, _ in shown], [[f(r) for _, f in shown] for r in group["rows"]])


def to_markdown(groups: Sequence[dict[str, Any]], tables: str = "results/tables") -> str:
    """The compact results: per comparability group, one line per model (ranked, floor last) with
    the headline, its interval, the paired Δ against the baseline and the floor and the flag; in
    fixed-width blocks that read in a 100-column terminal. Every other metric: `tables`."""
    parts = ["# Results\n",
             "Rows are comparable only within one group (benchmark version, taxonomy version, dataset_id, split),\n"
             "ranked by the group's headline. [low, high]: 95% bootstrap interval over the benchmark's\n"
             "independent units. Δ: paired difference of the headline (* : its interval excludes 0). The floor\n"
             "predicts the floor class everywhere; a model that does not beat it is flagged NO.\n"
             f"Every metric, per class and per report: {tables}/ (long.csv: one row per value).\n"]
    for group in groups:
        parts.append(f"## {group_title(group)}\n\ndataset_id `{group['dataset_id']}`  \n"
                     f"ranked by `{group['headline']}`; {bootstrap_note(group)}\n"
                     + (f"{mode_note(group).removeprefix(' · ')}\n" if mode_note(group) else ""))
        parts.append("```text\n" + compact_table(group) + "\n```\n")
    return "\n".join(parts)


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
    return {name: f"# Results: every metric of one report\n\n" + "\n".join(texts) for name, texts in files.items()}


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
details{margin:.3em 0 .3em 1em}summary{cursor:pointer;color:#333}
h3{font-size:1em;margin:.8em 0 .2em}
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
  document.querySelectorAll('table.leaderboard, table.detail').forEach(function (table) {
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
    significant = bool(row.get(f"vs_{role}.excludes_zero"))
    text = f'{value:+.4f} <span class="ci">[{low:+.4f}, {high:+.4f}]</span>'
    title = f"paired bootstrap vs {row.get(f'vs_{role}.against')}: the interval " + ("excludes" if significant else "includes") + " 0"
    return (f'<td class="{"sig" if significant else ""}" data-sort="{value}" title="{_escape(title)}">'
            f'{text}{" ✱" if significant else ""}</td>')


def _table(css: str, attributes: str, headers: Sequence[tuple[str, str, str]],
           rows: Sequence[tuple[str, str, list[str]]], row_attribute: str = "data-row") -> str:
    """headers: (data-column, label, css); rows: (the row's key, tr css, cells)."""
    head = "".join(f'<th class="{c}" data-column="{_escape(k)}" title="{_escape(k)}">{_escape(label)}</th>'
                   for k, label, c in headers)
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
        beaten = row.get("beats_floor")
        cells += [_td(_escape(row.get("label_space")), row.get("label_space"), "text"),
                  _metric_cell(*interval(row, headline)), _comparison_cell(row, "baseline"),
                  _comparison_cell(row, "floor"), _td(cell(beaten), beaten, "text flag-no" if beaten is False else "text")]
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


def to_html(groups: Sequence[dict[str, Any]], title: str = "segbench results") -> str:
    """A self-contained page (inline CSS and JS, no network): per comparability triple, a sortable
    table of the headline with its 95% interval, its paired differences against the baseline and
    the floor, the floor row and the beats-floor flag; below it, per report, a collapsed section
    with every other metric and the per-class tables, all sortable."""
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
        "Every other metric and the per-class values are in the collapsed sections under each table. "
        "Click a column header to sort.</p>",
    ]
    for index, group in enumerate(groups):
        parts.append(f'<h2 id="group-{index}">{_escape(group_title(group))}</h2>')
        parts.append(f'<p class="meta">dataset_id <code>{_escape(group["dataset_id"])}</code> · ranked by '
                     f'<code>{_escape(group["headline"])}</code> · {_escape(bootstrap_note(group))}</p>')
        if mode_note(group):
            parts.append('<p class="meta flag-no">rows use different inference modes (column inference): '
                         "their ranks compare unlike runs</p>")
        parts.append(_main_table(group))
        parts += [_report_details(group, report) for report in report_keys(group)]
    parts += [f"<script>{PAGE_SCRIPT}</script>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"
