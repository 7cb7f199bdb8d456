"""The results table as a step: submission records and floors grouped by comparability triple,
with every metric and bootstrap interval, as CSV, Markdown, JSON, a sortable HTML page and the
per-report tables."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.evaluation import record_results
from ..io.fileio import atomic_write_texts, read_json, write_json, write_text
from ..protocols.definitions import load_benchmark
from ..stages import leaderboard, results_csv, results_markdown, results_page
from ..stages.submission import read_record


def read_records(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Submission records, each validated against its benchmark's schemas before it is tabled."""
    return [read_record(path) for path in paths]


def spec_fields(document: dict[str, Any]) -> dict[str, Any]:
    """A metrics document restricted, like a record, to the spec fields its benchmark selects."""
    return {**document, "results": record_results(load_benchmark(document["benchmark"]), document["results"])}


def results(submissions: Sequence[Path], floors: Sequence[Path], metrics: Sequence[Path], uncertainty: Sequence[Path],
            stem: Path, tables: Path, metrics_out: Path | None, tables_label: str | None = None,
            slices: Sequence[Path] = ()) -> str:
    """The records' table (metrics.json for `dvc metrics` from the spec fields only), then every
    metric of the models' and floors' metrics documents, the intervals, the slices, the per-report
    tables.
    Writes STEM.{csv,md,json,html} and TABLES/; returns the Markdown, which names the tables'
    folder as `tables_label` (default: TABLES; the workflow gives its path in the results, not a
    job's local copy of it)."""
    floor_documents = [read_json(p) for p in floors]
    groups = leaderboard.build(read_records(submissions), [spec_fields(f) for f in floor_documents])
    if metrics_out:
        write_json(metrics_out, leaderboard.headline_metrics(groups))
    groups = leaderboard.attach_results(groups, [read_json(p) for p in metrics] + floor_documents)
    groups = leaderboard.attach_intervals(groups, [read_json(p) for p in uncertainty])
    groups = leaderboard.attach_slices(groups, [read_json(p) for p in slices])
    markdown = results_markdown.to_markdown(groups, tables_label or str(tables))
    write_text(stem.with_suffix(".csv"), results_csv.to_csv(groups))
    write_text(stem.with_suffix(".md"), markdown)
    write_json(stem.with_suffix(".json"), {"groups": groups})
    write_text(stem.with_suffix(".html"), results_page.to_html(groups))
    texts = {tables / name: text for name, text in results_markdown.report_tables(groups).items()}
    atomic_write_texts({**texts, tables / "long.csv": results_csv.to_long_csv(groups),
                        tables / "slices.csv": results_csv.to_slices_csv(groups)})
    return markdown
