"""The results table with intervals, and the static leaderboard page in a real headless browser."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest

from browser import chromium, console_errors, probe
from segbench.stages import leaderboard, results_csv, results_markdown, results_page

IDENTITY = {"benchmark": "bench-a", "benchmark_version": "1.0", "taxonomy_version": "1.0",
            "dataset_id": "x1:abc", "split": "test"}


def record(name: str, miou: float, acc: float, beaten: bool, **identity) -> dict:
    return {**IDENTITY, **identity, "model": {"name": name, "kind": "checkpoint", "label_space": "s"},
            "checkpoint_sha256": "0" * 64, "frames": 10, "floor": {"metric": "main.mIoU", "beaten": beaten},
            "main": {"mIoU": miou, "acc": acc}}


def floor(miou: float, **identity) -> dict:
    merged = {**IDENTITY, **identity}
    return {"benchmark": merged["benchmark"], "split": merged["split"], "label_space": "s", "frames": 10,
            "results": {"main": {"mIoU": miou, "acc": 0.5}}}


def uncertainty(name: str, miou: float, benchmark: str = "bench-a", baseline: str | None = "base") -> dict:
    def comparison(against, diff):
        return {"against": against, "metrics": {"main.mIoU": {
            "value": miou, "other": miou - diff, "difference": diff, "low": diff - 0.05, "high": diff + 0.05,
            "excludes_zero": abs(diff) > 0.05, "undefined_resamples": 0}}}
    return {"benchmark": benchmark, "split": "test", "model": name, "method": "m", "group_key": "wall_id",
            "groups": 4, "resamples": 100, "seed": 0, "confidence": 0.95,
            "intervals": {"main.mIoU": {"value": miou, "low": miou - 0.1, "high": miou + 0.1, "undefined_resamples": 0},
                          "main.acc": {"value": 0.9, "low": 0.8, "high": 0.95, "undefined_resamples": 0}},
            "comparisons": {"baseline": comparison(baseline, miou - 0.6) if baseline and name != baseline else None,
                            "floor": comparison("floor", miou - 0.1) if name != "floor" else None}}


def metrics_doc(name: str, miou: float, acc: float, benchmark: str = "bench-a") -> dict:
    """A model's metrics.json: the record's fields and more (a secondary measure, a per-class one)."""
    return {"benchmark": benchmark, "split": "test", "model": name,
            "results": {"main": {"mIoU": miou, "acc": acc, "dice": {"road": miou / 2, "sky": None}},
                        "second": {"aAcc": acc}}}


def groups(with_results: bool = True) -> list[dict]:
    records = [record("alpha", 0.7, 0.9, True), record("base", 0.6, 0.8, True), record("gamma", 0.05, 0.4, False),
               record("other", 0.3, 0.6, True, benchmark="bench-b", dataset_id="y1:def")]
    floors = [floor(0.1), floor(0.2, benchmark="bench-b", dataset_id="y1:def")]
    built = leaderboard.build(records, floors)
    if with_results:
        built = leaderboard.attach_results(built, [
            metrics_doc("alpha", 0.7, 0.9), metrics_doc("base", 0.6, 0.8), metrics_doc("gamma", 0.05, 0.4),
            {**metrics_doc("floor", 0.1, 0.5), "results": {"main": {"mIoU": 0.1, "acc": 0.5, "dice": {"road": 0.0}}}},
            metrics_doc("other", 0.3, 0.6, benchmark="bench-b")])
    docs = [uncertainty("alpha", 0.7), uncertainty("base", 0.6), uncertainty("gamma", 0.05),
            uncertainty("floor", 0.1), uncertainty("other", 0.3, benchmark="bench-b", baseline=None)]
    return leaderboard.attach_intervals(built, docs)


def test_intervals_go_beside_the_fields():
    board = groups()
    alpha = next(r for r in board[0]["rows"] if r["model"] == "alpha")
    assert alpha["main.mIoU"] == 0.7
    assert alpha["main.mIoU.ci_low"] == pytest.approx(0.6) and alpha["main.mIoU.ci_high"] == pytest.approx(0.8)
    assert alpha["vs_baseline.against"] == "base" and alpha["vs_baseline.difference"] == pytest.approx(0.1)
    assert alpha["vs_floor.excludes_zero"] is True
    assert alpha["uncertainty"]["resamples"] == 100
    base = next(r for r in board[0]["rows"] if r["model"] == "base")
    assert base["vs_baseline.difference"] is None  # the baseline is not compared with itself
    table = list(csv.DictReader(io.StringIO(results_csv.to_csv(board))))
    assert "uncertainty" not in table[0] and "results" not in table[0] and "main.mIoU.ci_low" in table[0]
    json.dumps({"groups": board})  # the JSON results hold the full bootstrap beside each row


def test_results_add_every_metric_and_leave_the_dvc_metrics_alone():
    records_only = groups(with_results=False)
    board = groups()
    alpha = next(r for r in board[0]["rows"] if r["model"] == "alpha")
    assert alpha["main.dice.road"] == 0.35 and alpha["second.aAcc"] == 0.9 and alpha["main.dice.sky"] is None
    assert "main.dice.road" not in next(r for r in records_only[0]["rows"] if r["model"] == "alpha")
    header = results_csv.to_csv(board).splitlines()[0].split(",")
    assert all(c.count(".") >= 1 for c in header if c.startswith(("main", "second")))  # report.metric[.class]
    assert "main.dice.road" in header and "road" not in header


def test_compact_table_reads_in_100_columns():
    markdown = results_markdown.to_markdown(groups())
    assert "0.700 [0.600, 0.800]" in markdown and "Δ baseline" in markdown and "beats floor" in markdown
    lines = markdown.splitlines()
    assert max(len(line) for line in lines) <= 100
    alpha = next(line for line in lines if line.startswith("alpha"))
    assert alpha.split() == ["alpha", "checkpoint", "0.700", "[0.600,", "0.800]", "+0.100*", "+0.600*", "yes"]
    gamma = next(line for line in lines if line.startswith("gamma"))
    assert gamma.split()[-3:] == ["-0.550*", "-0.050", "NO"]  # -0.05 ± 0.05 includes 0: no star
    assert "main.acc" not in markdown and "dice" not in markdown  # everything else: results/tables
    header = next(line for line in lines if line.startswith("model"))
    assert header.split()[:3] == ["model", "kind", "main.mIoU"]  # no record has an inference block: no mode


def test_compact_table_shows_the_inference_mode_when_present():
    records = [{**record("easyportrait-best", 0.5, 0.5, True), "inference": {"mode": "multi-scale", "size": 512, "scales": [0.5, 1.0], "flip": True},
                "model": {"name": "easyportrait-best", "kind": "hf-segformer", "label_space": "s"}},
               record("b", 0.4, 0.5, True)]
    board = leaderboard.attach_intervals(leaderboard.build(records, [floor(0.1)]),
                                         [uncertainty("easyportrait-best", 0.5), uncertainty("b", 0.4)])
    table = results_markdown.compact_table(board[0])
    header, _, first, second, last = table.splitlines()
    assert header.split()[:3] == ["model", "kind", "mode"]
    assert first.split()[:3] == ["easyportrait-best", "hf-segformer", "multi-scale"]
    assert second.split()[:3] == ["b", "checkpoint", "—"] and last.split()[:3] == ["floor", "floor", "—"]
    assert max(len(line) for line in table.splitlines()) <= 100
    assert board[0]["rows"][0]["inference_mode"] == "multi-scale" and "inference.mode" not in board[0]["rows"][0]
    markdown = results_markdown.to_markdown(board)  # b has no inference block: a group mixing modes is marked
    assert "**rows use different inference modes (column `inference`): their ranks compare unlike runs**" in markdown
    assert max(len(line) for line in markdown.splitlines()) <= 100


def test_long_format_has_one_row_per_value():
    rows = list(csv.DictReader(io.StringIO(results_csv.to_long_csv(groups()))))
    assert list(rows[0]) == ["benchmark", "split", "model", "report", "metric", "class", "value", "low", "high"]
    alpha = [r for r in rows if r["model"] == "alpha"]
    assert alpha == [
        {"benchmark": "bench-a", "split": "test", "model": "alpha", "report": "main", "metric": "mIoU", "class": "",
         "value": "0.7", "low": "0.6", "high": str(0.7 + 0.1)},
        {"benchmark": "bench-a", "split": "test", "model": "alpha", "report": "main", "metric": "acc", "class": "",
         "value": "0.9", "low": "0.8", "high": "0.95"},
        {"benchmark": "bench-a", "split": "test", "model": "alpha", "report": "main", "metric": "dice",
         "class": "road", "value": "0.35", "low": "", "high": ""},
        {"benchmark": "bench-a", "split": "test", "model": "alpha", "report": "main", "metric": "dice",
         "class": "sky", "value": "", "low": "", "high": ""},
        {"benchmark": "bench-a", "split": "test", "model": "alpha", "report": "second", "metric": "aAcc",
         "class": "", "value": "0.9", "low": "", "high": ""},
    ]
    # bench-a: three models of 5 values, its floor 4 (no `second`; sky, which its document lacks,
    # empty: every class of the group); bench-b: one model, and a floor without a metrics
    # document (the spec fields only): 2.
    assert len(rows) == 3 * 5 + 4 + 5 + 2
    assert {"benchmark": "bench-a", "split": "test", "model": "floor", "report": "main", "metric": "dice",
            "class": "sky", "value": "", "low": "", "high": ""} in rows


def test_report_tables_name_report_metric_and_class():
    tables = results_markdown.report_tables(groups())
    assert sorted(tables) == ["bench-a/test/main.md", "bench-a/test/second.md", "bench-b/test/main.md",
                              "bench-b/test/second.md"]
    main = tables["bench-a/test/main.md"]
    assert "| model | kind | main.mIoU | main.acc |" in main
    assert "### `main.dice` by class" in main and "| class | alpha | base | gamma | floor |" in main
    assert "| road | 0.350 | 0.300 | 0.025 | 0.000 |" in main and "| sky | — | — | — | — |" in main


def test_page_is_self_contained():
    page = results_page.to_html(groups())
    assert "http://" not in page and "https://" not in page and "src=" not in page and "<link" not in page
    assert page.count('<table class="leaderboard"') == 2
    assert page.count("<details") == 4 and " open" not in page  # one per report and group, collapsed
    assert page.count('<table class="detail"') == 4 + 2  # each report's scalars; main's dice by class, twice


@pytest.mark.skipif(chromium() is None and not os.environ.get("SEGBENCH_REQUIRE_CHROMIUM"),
                    reason="needs Debian's chromium (apt-get install chromium)")
def test_page_in_a_headless_browser(tmp_path):
    page = tmp_path / "leaderboard.html"
    page.write_text(results_page.to_html(groups()))
    found, stderr = probe(page, ["model", "main.mIoU", "vs_floor"], tmp_path)
    assert found["errors"] == [] and console_errors(stderr) == []
    first, second = found["tables"]
    assert (first["benchmark"], second["benchmark"]) == ("bench-a", "bench-b")
    assert first["initial"] == ["alpha", "base", "gamma", "floor"]  # ranked by the headline, floor last
    assert second["initial"] == ["other", "floor"]
    ascending, descending = first["clicks"]["model"]
    assert ascending == {"order": ["alpha", "base", "floor", "gamma"], "sort": "ascending"}
    assert descending == {"order": ["gamma", "floor", "base", "alpha"], "sort": "descending"}
    ascending, descending = first["clicks"]["main.mIoU"]
    assert ascending["order"] == ["gamma", "floor", "base", "alpha"]  # numeric, not text, order
    assert descending["order"] == ["alpha", "base", "floor", "gamma"]
    ascending, descending = first["clicks"]["vs_floor"]
    assert ascending["order"][:3] == ["gamma", "base", "alpha"] and ascending["order"][-1] == "floor"  # empty last


@pytest.mark.skipif(chromium() is None and not os.environ.get("SEGBENCH_REQUIRE_CHROMIUM"),
                    reason="needs Debian's chromium (apt-get install chromium)")
def test_collapsed_tables_sort_in_a_headless_browser(tmp_path):
    page = tmp_path / "leaderboard.html"
    page.write_text(results_page.to_html(groups()))
    found, stderr = probe(page, ["main.acc", "gamma"], tmp_path, selector="table.detail")
    assert found["errors"] == [] and console_errors(stderr) == []
    tables = {(t["benchmark"], t["report"], t["metric"]): t for t in found["tables"]}
    assert all(t["collapsed"] for t in found["tables"])
    scalars = tables[("bench-a", "main", "")]
    assert scalars["initial"] == ["alpha", "base", "gamma", "floor"]
    ascending, descending = scalars["clicks"]["main.acc"]
    assert ascending["order"] == ["gamma", "floor", "base", "alpha"] and descending["order"] == ["alpha", "base", "floor", "gamma"]
    by_class = tables[("bench-a", "main", "dice")]
    assert by_class["initial"] == ["road", "sky"]
    ascending, _ = by_class["clicks"]["gamma"]
    assert ascending["order"] == ["road", "sky"]  # sky is undefined: empty values sort last


def test_a_report_that_does_not_apply_keeps_its_per_class_metrics_per_class():
    board = groups()
    base = next(r for r in board[0]["rows"] if r["model"] == "base")
    base["results"] = {"main": {"mIoU": None, "acc": None, "dice": None}, "second": {"aAcc": None}}  # a null report
    assert leaderboard.report_metrics(board[0], "main") == (["mIoU", "acc"], ["dice"])
    rows = [r for r in results_csv.long_rows(board) if r["model"] == "base" and r["metric"] == "dice"]
    assert [(r["class"], r["value"]) for r in rows] == [("road", None), ("sky", None)]
    assert "main.dice |" not in results_markdown.report_tables(board)["bench-a/test/main.md"]


# --- slices by metadata ------------------------------------------------------------------------


def slices_doc(name: str, miou: float) -> dict:
    """A model's slices.json: lighting=left has one wall (no intervals), right two (intervals)."""
    left = {"slice": "left", "frames": 2, "units": 1,
            "results": {"main": {"mIoU": miou - 0.2, "acc": 0.7, "dice": {"road": 0.1}}},
            "intervals": {"main.mIoU": {"value": miou - 0.2, "low": None, "high": None},
                          "main.acc": {"value": 0.7, "low": None, "high": None}},
            "comparisons": {"baseline": {"against": "base", "metrics": {"main.mIoU": {
                "value": miou - 0.2, "other": 0.3, "difference": miou - 0.5, "low": None, "high": None,
                "excludes_zero": None}}}, "floor": None},
            "interval_note": "1 wall_id unit: too few to resample (at least 2 needed); values without intervals"}
    right = {"slice": "right", "frames": 6, "units": 2,
             "results": {"main": {"mIoU": miou, "acc": 0.9, "dice": {"road": 0.5}}},
             "intervals": {"main.mIoU": {"value": miou, "low": miou - 0.1, "high": miou + 0.1},
                           "main.acc": {"value": 0.9, "low": 0.85, "high": 0.95}},
             "comparisons": {"baseline": {"against": "base", "metrics": {"main.mIoU": {
                 "value": miou, "other": 0.6, "difference": miou - 0.6, "low": miou - 0.65, "high": miou - 0.55,
                 "excludes_zero": abs(miou - 0.6) > 0.05}}}, "floor": None},
             "interval_note": None}
    empty = {"slice": "missing", "frames": 0, "units": 0, "results": None, "intervals": None, "comparisons": None,
             "interval_note": "no frames"}
    return {"benchmark": "bench-a", "split": "test", "model": name,
            "slicings": {"lighting": {"column": "lighting", "bins": None, "slices": [left, right, empty]}}}


def sliced() -> list[dict]:
    return leaderboard.attach_slices(groups(), [slices_doc("alpha", 0.7), slices_doc("gamma", 0.05)])


def test_slices_csv_has_a_row_per_value_with_its_interval_and_difference():
    rows = list(csv.DictReader(io.StringIO(results_csv.to_slices_csv(sliced()))))
    assert list(rows[0]) == list(results_csv.SLICE_COLUMNS)
    alpha = [r for r in rows if r["model"] == "alpha"]
    common = {"benchmark": "bench-a", "split": "test", "model": "alpha", "slicing": "lighting"}
    assert alpha[0] == {**common, "slice": "left", "frames": "2", "units": "1", "report": "main", "metric": "mIoU",
                        "class": "", "value": str(0.7 - 0.2), "low": "", "high": "", "vs_baseline": str(0.7 - 0.5),
                        "vs_baseline_low": "", "vs_baseline_high": "", "vs_floor": "", "vs_floor_low": "",
                        "vs_floor_high": "", "note": alpha[0]["note"]}
    assert alpha[0]["note"].startswith("1 wall_id unit: too few to resample")
    road = next(r for r in alpha if r["slice"] == "right" and r["metric"] == "dice")
    assert (road["class"], road["value"], road["low"], road["vs_baseline"]) == ("road", "0.5", "", "")
    right = next(r for r in alpha if r["slice"] == "right" and r["metric"] == "mIoU")
    assert (right["low"], right["high"], right["vs_baseline"]) == (str(0.7 - 0.1), str(0.7 + 0.1), str(0.7 - 0.6))
    assert [r for r in alpha if r["slice"] == "missing"] == [
        {**{k: "" for k in results_csv.SLICE_COLUMNS}, **common, "slice": "missing", "frames": "0", "units": "0",
         "note": "no frames"}]
    assert len(alpha) == 2 * 3 + 1  # mIoU, acc, dice.road per slice with frames; the empty one
    assert {r["model"] for r in rows} == {"alpha", "gamma"}  # models without a slices document have none
    assert all("slices" not in r for r in csv.DictReader(io.StringIO(results_csv.to_csv(sliced()))))


SLICE_ACTIONS = """
(function () {
  var select = document.querySelector('select.slice-selector');
  function visible() {
    return Array.prototype.filter.call(select.closest('details').querySelectorAll('div.slice'),
      function (d) { return !d.hidden; }).map(function (d) {
        var rows = d.querySelectorAll('tbody tr');
        return {slice: d.getAttribute('data-slicing') + '=' + d.getAttribute('data-value'),
                models: Array.prototype.map.call(rows, function (r) { return r.getAttribute('data-model'); }),
                first: Array.prototype.map.call(rows[0].cells, function (c) { return c.textContent; })};
      });
  }
  var found = {options: Array.prototype.map.call(select.options, function (o) { return o.textContent; }),
               initial: visible()};
  select.value = '1';
  select.dispatchEvent(new Event('change'));
  found.after = visible();
  window.__actions = found;
})();
"""


@pytest.mark.skipif(chromium() is None and not os.environ.get("SEGBENCH_REQUIRE_CHROMIUM"),
                    reason="needs Debian's chromium (apt-get install chromium)")
def test_slice_selector_in_a_headless_browser(tmp_path):
    page = tmp_path / "board.html"
    page.write_text(results_page.to_html(sliced()))
    found, stderr = probe(page, ["main.mIoU"], tmp_path, selector="table.detail[data-slice]", actions=SLICE_ACTIONS)
    assert found["errors"] == [] and console_errors(stderr) == []
    actions = found["actions"]
    assert actions["options"] == ["lighting = left", "lighting = right", "lighting = missing"]
    assert [v["slice"] for v in actions["initial"]] == ["lighting=left"]  # one slice shown at a time
    first = actions["initial"][0]["first"]
    assert first[:3] == ["alpha", "2", "1"] and first[3] == "0.5000" and first[4] == "+0.2000"
    assert first[6].startswith("1 wall_id unit: too few to resample")
    after = actions["after"]
    assert [v["slice"] for v in after] == ["lighting=right"] and after[0]["models"] == ["alpha", "gamma"]
    assert after[0]["first"][3] == "0.7000 [0.6000, 0.8000]" and after[0]["first"][4] == "+0.1000 [+0.0500, +0.1500] ✱"
    left = found["tables"][0]  # the slices' tables in page order: left first, sortable like the others
    assert left["headers"][:7] == ["model", "frames", "units", "main.mIoU", "vs_baseline", "vs_floor", "interval_note"]
    assert left["headers"][7:] == ["main.acc", "second.aAcc"]
    assert [c["order"] for c in left["clicks"]["main.mIoU"]] == [["gamma", "alpha"], ["alpha", "gamma"]]
    assert left["collapsed"] is True and len(found["tables"]) == 3
