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


def test_records_from_elsewhere_merge_with_their_floor_teams_and_intervals():
    """Two teams' `best` and a masks folder, no floors' documents and no uncertainty documents:
    the floor row from the records, rows named TEAM/MODEL, Δ floor with the records' intervals,
    no mixed-mode banner (a masks folder has no mode)."""
    from results_fixtures import record
    from segbench.stages import results_markdown

    def team(name, miou, low, high, **fields):
        base = record("best", miou, 0.9, "yes")
        return {**base, **fields, "team": name, "inference": {"mode": "whole", "size": 640},
                "floor": {**base["floor"], "value": 0.1, "difference": miou - 0.1, "low": low, "high": high}}

    masks = {**record("masks", 0.3, 0.5, "within noise"), "inference": None}
    masks["floor"] = {**masks["floor"], "value": 0.1, "difference": 0.2, "low": -0.05, "high": 0.45}
    board = leaderboard.build([team("red", 0.7, 0.5, 0.9), team("blue", 0.5, 0.3, 0.7), masks])
    (group,) = board
    assert [r["model"] for r in group["rows"]] == ["red/best", "blue/best", "masks", "floor"]
    assert group["rows"][-1]["main.mIoU"] == 0.1 and group["inference_modes"] == ["whole 640"]
    lines = results_markdown.to_markdown(board).splitlines()
    start = lines.index("```text")
    assert lines[start - 2] == "ranked by `main.mIoU`; no uncertainty.json given: intervals of Δ floor only, from the records"
    assert lines[start + 1:start + 7] == [
        "model      mode   main.mIoU  Δ baseline  Δ floor  beats floor",
        "---------  -----  ---------  ----------  -------  ------------",
        "red/best   whole  0.700      —           +0.600*  yes",
        "blue/best  whole  0.500      —           +0.400*  yes",
        "masks      —      0.300      —           +0.200   within noise",
        "floor      —      0.100      —           —        —",
    ]
    assert not any("different inference modes" in line for line in lines)


def test_two_records_of_one_name_without_teams_are_refused():
    from results_fixtures import record
    from segbench.errors import SegbenchError

    with pytest.raises(SegbenchError) as info:
        leaderboard.build([record("best", 0.7, 0.9, "yes"), record("best", 0.5, 0.9, "yes")])
    assert str(info.value) == ("two records of bench-a v1.0 (taxonomy 1.0), split test are both named 'best': give each "
                               "its team (benchmark.py --team, segbench record --team) to tell their rows apart")


def test_the_dvc_metrics_hold_the_spec_fields_alone():
    from results_fixtures import floor, record

    built = leaderboard.build([record("alpha", 0.7, 0.9, "yes")], [floor(0.1)])
    assert leaderboard.headline_metrics(built) == {"bench-a": {"test": {
        "alpha": {"main.mIoU": 0.7, "main.acc": 0.9}, "floor": {"main.mIoU": 0.1, "main.acc": 0.5}}}}
