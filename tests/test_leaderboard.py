"""The results grouped by comparability triple (segbench.stages.leaderboard): ranks, floor rows,
every metric and the bootstrap intervals attached."""

from __future__ import annotations

import csv
import io
import json

import pytest

from results_fixtures import groups
from segbench.stages import leaderboard, results_csv, results_markdown


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


def test_a_report_that_does_not_apply_keeps_its_per_class_metrics_per_class():
    board = groups()
    base = next(r for r in board[0]["rows"] if r["model"] == "base")
    base["results"] = {"main": {"mIoU": None, "acc": None, "dice": None}, "second": {"aAcc": None}}  # a null report
    assert leaderboard.report_metrics(board[0], "main") == (["mIoU", "acc"], ["dice"])
    rows = [r for r in results_csv.long_rows(board) if r["model"] == "base" and r["metric"] == "dice"]
    assert [(r["class"], r["value"]) for r in rows] == [("road", None), ("sky", None)]
    assert "main.dice |" not in results_markdown.report_tables(board)["bench-a/test/main.md"]
