"""Submission records, floors, metrics and bootstrap documents of two made-up benchmarks, grouped
as the results step groups them: what the tests of the results' grouping and renderers share."""

from __future__ import annotations

from segbench.stages import leaderboard


IDENTITY = {"benchmark": "bench-a", "benchmark_version": "1.0", "taxonomy_version": "1.0",
            "dataset_id": "x1:abc", "split": "test"}


UNITS = {"bench-a": 6, "bench-b": 2}  # walls: bench-a's differences can be significant, bench-b's cannot
FLOOR = {"bench-a": 0.1, "bench-b": 0.2}  # the floors' mIoU


def record(name: str, miou: float, acc: float, verdict: str, **identity) -> dict:
    """A record; its floor comparison as uncertainty() below pairs it (the difference ± 0.05)."""
    benchmark = identity.get("benchmark", IDENTITY["benchmark"])
    difference = miou - FLOOR[benchmark]
    return {**IDENTITY, **identity, "model": {"name": name, "kind": "checkpoint", "label_space": "s"},
            "checkpoint_sha256": "0" * 64, "frames": 10, "pixels_predicted_void": 0,
            "floor": {"metric": "main.mIoU", "value": FLOOR[benchmark], "beaten": difference > 0,
                      "difference": difference, "low": difference - 0.05, "high": difference + 0.05,
                      "units": UNITS[benchmark], "unit": "wall_id", "verdict": verdict},
            "main": {"mIoU": miou, "acc": acc}}


def floor(miou: float, **identity) -> dict:
    merged = {**IDENTITY, **identity}
    return {"benchmark": merged["benchmark"], "split": merged["split"], "label_space": "s", "frames": 10,
            "pixels_predicted_void": 0, "results": {"main": {"mIoU": miou, "acc": 0.5}}}


def uncertainty(name: str, miou: float, benchmark: str = "bench-a", baseline: str | None = "base") -> dict:
    def comparison(against, diff):
        return {"against": against, "metrics": {"main.mIoU": {
            "value": miou, "other": miou - diff, "difference": diff, "low": diff - 0.05, "high": diff + 0.05,
            "excludes_zero": abs(diff) > 0.05, "undefined_resamples": 0}}}
    return {"benchmark": benchmark, "split": "test", "model": name, "method": "m", "group_key": "wall_id",
            "groups": UNITS[benchmark], "resamples": 100, "seed": 0, "confidence": 0.95,
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
    records = [record("alpha", 0.7, 0.9, "yes"), record("base", 0.6, 0.8, "yes"), record("gamma", 0.05, 0.4, "within noise"),
               record("other", 0.3, 0.6, "too few units (2 wall_id units) for an interval", benchmark="bench-b",
                      dataset_id="y1:def")]
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
