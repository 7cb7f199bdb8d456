"""The results as CSV (segbench.stages.results_csv): the long table, one row per value."""

from __future__ import annotations

import csv
import io

from results_fixtures import groups, sliced
from segbench.stages import results_csv


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
