"""The results table with intervals, and the static leaderboard page in a real headless browser."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest

from browser import chromium, console_errors, probe
from segbench import leaderboard

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


def groups() -> list[dict]:
    records = [record("alpha", 0.7, 0.9, True), record("base", 0.6, 0.8, True), record("gamma", 0.05, 0.4, False),
               record("other", 0.3, 0.6, True, benchmark="bench-b", dataset_id="y1:def")]
    floors = [floor(0.1), floor(0.2, benchmark="bench-b", dataset_id="y1:def")]
    built = leaderboard.build(records, floors)
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
    table = list(csv.DictReader(io.StringIO(leaderboard.to_csv(leaderboard.flat_groups(board)))))
    assert "uncertainty" not in table[0] and "main.mIoU.ci_low" in table[0]
    json.dumps({"groups": board})  # the JSON results hold the full bootstrap beside each row
    markdown = leaderboard.to_markdown_with_intervals(board)
    assert "0.7000 [0.6000, 0.8000]" in markdown and "Δ vs baseline" in markdown


def test_page_is_self_contained():
    page = leaderboard.to_html(groups())
    assert "http://" not in page and "https://" not in page and "src=" not in page and "<link" not in page
    assert page.count('<table class="leaderboard"') == 2


@pytest.mark.skipif(chromium() is None and not os.environ.get("SEGBENCH_REQUIRE_CHROMIUM"),
                    reason="needs Debian's chromium (apt-get install chromium)")
def test_page_in_a_headless_browser(tmp_path):
    page = tmp_path / "leaderboard.html"
    page.write_text(leaderboard.to_html(groups()))
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
