"""The bootstrap over groups, against an independent straightforward implementation."""

from __future__ import annotations

import numpy as np
import pytest

from counts_fixtures import FRAMES, counts, floored, frame

from segbench.core.bootstrap import (Subject, bootstrap, bootstrap_document, percentile_interval, percentile_intervals,
                                     point_values, prepare, replicate_values, replicated, resample_weights,
                                     resampled_sums)
from segbench.core.confusion import FrameCounts
from segbench.core.evaluation import evaluate
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark

PV = load_benchmark("painting-vision")
TEN = PV.ground_truth
TIER1 = {0: 0, 1: 1, 2: 1, 3: 1, 4: 0, 5: 0, 6: 0, 7: 0, 8: 2, 9: 0}  # 10-class id -> other/wall/window
GROUPS = {f: w for f, w, _ in FRAMES}


def reduce(hist: np.ndarray, space: str) -> np.ndarray:
    """A raw histogram as a float confusion matrix of the 10-class or the Tier-1 space (void dropped)."""
    if space == "ten":
        return hist[:10, :10].astype(float)
    cm = np.zeros((3, 3))
    for g in range(10):
        for p in range(10):
            cm[TIER1[g], TIER1[p]] += hist[g, p]
    return cm


def class_iou(cm, c):
    union = cm[c].sum() + cm[:, c].sum() - cm[c, c]
    return cm[c, c] / union if union else float("nan")


def secondary(cms: list[np.ndarray]) -> dict[str, float]:
    """aAcc, mAcc, mDice (both nan-skipping), fwIoU and the two per-image mIoUs, by loops."""
    cm = sum(cms)
    classes = range(len(cm))
    accuracy = [cm[c, c] / cm[c].sum() for c in classes if cm[c].sum()]
    dice = [2 * cm[c, c] / (cm[c].sum() + cm[:, c].sum()) for c in classes if cm[c].sum() + cm[:, c].sum()]
    per_gt, per_any = [], []
    for frame_cm in cms:
        in_gt = [class_iou(frame_cm, c) for c in classes if frame_cm[c].sum()]
        in_any = [class_iou(frame_cm, c) for c in classes if frame_cm[c].sum() + frame_cm[:, c].sum()]
        if in_gt:
            per_gt.append(np.mean(in_gt))
        if in_any:
            per_any.append(np.mean(in_any))
    return {
        "aAcc": np.trace(cm) / cm.sum(),
        "mAcc": np.mean(accuracy),
        "mDice": np.mean(dice),
        "fwIoU": sum(cm[c].sum() / cm.sum() * class_iou(cm, c) for c in classes if cm[c].sum()),
        "mIoU_per_image": np.mean(per_gt),
        "mIoU_per_image_gt_or_pred": np.mean(per_any),
    }


def reference_metrics(hists: list[np.ndarray]) -> dict[str, float]:
    """Every scalar metric of both reports (Tier-1 and 10-class mIoU over classes present in GT,
    window precision/recall, painted-coverage MAE, the secondary measures), written out by hand
    from raw histograms."""
    total = sum(hists)
    tier = reduce(total, "tier")
    ten = reduce(total, "ten")

    def miou(cm):
        values = []
        for c in range(len(cm)):
            if cm[c].sum() > 0:
                values.append(cm[c, c] / (cm[c].sum() + cm[:, c].sum() - cm[c, c]))
        return float(np.mean(values))

    precision = tier[2, 2] / tier[:, 2].sum() if tier[:, 2].sum() else float("nan")
    recall = tier[2, 2] / tier[2].sum() if tier[2].sum() else float("nan")
    errors = []
    for h in hists:
        gt_un, gt_p = h[1, :10].sum(), h[2, :10].sum()
        if gt_un + gt_p == 0:
            continue
        gt_frac = gt_p / (gt_un + gt_p)
        valid = h[:10, :10]  # void ground truth excluded
        pred_un, pred_p = valid[:, 1].sum(), valid[:, 2].sum()
        pred_frac = pred_p / (pred_un + pred_p) if pred_un + pred_p else 0.0
        errors.append(abs(pred_frac - gt_frac))
    out = {
        "shared_metrics.mIoU": miou(tier),
        "shared_metrics.window_precision": precision,
        "shared_metrics.window_recall": recall,
        "paint_state_metrics.painted_coverage_mae": float(np.mean(errors)),
        "paint_state_metrics.mIoU_full_10class": miou(ten),
    }
    for report, space in (("shared_metrics", "tier"), ("paint_state_metrics", "ten")):
        for key, value in secondary([reduce(h, space) for h in hists]).items():
            out[f"{report}.{key}"] = float(value)
    return out


def reference_bootstrap(frames, resamples: int, seed: int) -> dict[str, np.ndarray]:
    """The obvious loop: draw wall indices, gather those walls' frames, recompute."""
    walls = sorted({w for _, w, _ in frames})
    draws = np.random.default_rng(seed).integers(0, len(walls), size=(resamples, len(walls)))
    out: dict[str, list[float]] = {}
    for row in draws:
        hists = [frame(c) for i in row for _, w, c in frames if w == walls[i]]
        for k, v in reference_metrics(hists).items():
            out.setdefault(k, []).append(v)
    return {k: np.array(v) for k, v in out.items()}


def test_point_values_are_the_reported_metrics():
    doc = bootstrap(PV, Subject("m", counts(), TEN), GROUPS, resamples=5, seed=0)
    results = evaluate(PV, counts(), TEN)
    reference = reference_metrics([frame(c) for _, _, c in FRAMES])
    for key, interval in doc["intervals"].items():
        report, metric = key.split(".")
        assert interval["value"] == pytest.approx(results[report][metric])
        if metric == "mBIoU":  # counts made from histograms hold no boundary bands (tests/test_boundary.py)
            assert interval["value"] is None and interval["low"] is None
            continue
        assert interval["value"] == pytest.approx(reference[key])
    assert set(doc["intervals"]) == set(reference) | {"shared_metrics.mBIoU", "paint_state_metrics.mBIoU"}
    assert doc["groups"] == 3 and doc["frames"] == 5 and doc["group_key"] == "wall_id"


def test_the_points_evaluated_among_the_resamples_are_each_evaluated_alone():
    # replicated() evaluates the all-groups row in the resamples' stack: bit for bit what the
    # points and the resamples give in passes of their own.
    data = prepare(PV, counts(), TEN, GROUPS)[1]
    model = replicated(PV, Subject("m", counts(), TEN), GROUPS, resamples=40, seed=3)
    alone = replicate_values(data, resample_weights(3, 40, 3))
    np.testing.assert_equal(model.points, point_values(data))  # exactly, NaN (undefined) as NaN
    np.testing.assert_equal(model.replicates, alone)
    assert model.points.keys() == alone.keys() and any(np.isnan(v) for v in model.points.values())


def test_hand_checked_point_value():
    # Tier 1 totals, checked by hand:
    # gt wall row: (1,1)50+10 (1,2)->wall, (2,2)40 (2,1)5, (2,2)30 (2,0)30->other, (1,1)10, (2,1)20 (2,2)20
    # => wall->wall 185, wall->other 30; window: 20+5+30 = 55 correct, 25 -> other;
    # other: 15+40+60+5(obstacle) = 120 correct, 10 -> window. Void (255) dropped.
    cm = np.array([[120, 0, 10], [30, 185, 0], [25, 0, 55]])
    ious = [cm[c, c] / (cm[c].sum() + cm[:, c].sum() - cm[c, c]) for c in range(3)]
    doc = bootstrap(PV, Subject("m", counts(), TEN), GROUPS, resamples=5, seed=0)
    assert doc["intervals"]["shared_metrics.mIoU"]["value"] == pytest.approx(np.mean(ious))
    assert doc["intervals"]["shared_metrics.window_precision"]["value"] == pytest.approx(55 / 65)


@pytest.mark.parametrize("seed", [0, 7])
def test_intervals_match_an_independent_implementation(seed):
    resamples = 40
    doc = bootstrap(PV, Subject("m", counts(), TEN), GROUPS, resamples=resamples, seed=seed)
    reference = reference_bootstrap(FRAMES, resamples, seed)
    for key, values in reference.items():
        defined = values[~np.isnan(values)]
        low, high = np.percentile(defined, [2.5, 97.5])
        assert doc["intervals"][key]["low"] == pytest.approx(low), key
        assert doc["intervals"][key]["high"] == pytest.approx(high), key
        assert doc["intervals"][key]["undefined_resamples"] == int(np.isnan(values).sum())
        assert doc["intervals"][key]["low"] <= doc["intervals"][key]["value"] + 1e-12 or key.endswith("mae")


def test_the_rows_intervals_at_once_are_each_rows_own():
    nan = float("nan")
    # 0..40: the 2.5th percentile lies at 1.0, the 97.5th at 39.0; a NaN is left out, so 1..40
    # gives 1.975 and 39.025 (numpy's linear rule: position p / 100 x 39 from 1).
    rows = [np.arange(41.0), np.array([nan, *np.arange(1.0, 41.0)]), np.full(41, nan), np.full(41, 0.25)]
    whole, one_undefined, undefined, constant = percentile_intervals(rows)
    assert whole == pytest.approx((1.0, 39.0)) and one_undefined == pytest.approx((1.975, 39.025))
    assert undefined == (None, None) and constant == (0.25, 0.25)
    drawn = list(np.random.default_rng(5).normal(size=(30, 997)))
    drawn[3][[0, 9]] = nan
    assert percentile_intervals(drawn) == [percentile_interval(row) for row in drawn]
    assert percentile_intervals([]) == []


def test_seeded_and_reproducible():
    a = bootstrap(PV, Subject("m", counts(), TEN), GROUPS, resamples=30, seed=3)
    b = bootstrap(PV, Subject("m", counts(), TEN), GROUPS, resamples=30, seed=3)
    c = bootstrap(PV, Subject("m", counts(), TEN), GROUPS, resamples=30, seed=4)
    assert a == b
    assert a["intervals"] != c["intervals"]


def test_identical_walls_collapse_the_interval_to_the_point():
    cells = FRAMES[0][2]
    same = [(f"w{i}_a", f"w{i}", cells) for i in range(4)]
    doc = bootstrap(PV, Subject("m", counts(same), TEN), {f: w for f, w, _ in same}, resamples=50, seed=1)
    for key, interval in doc["intervals"].items():
        if interval["value"] is not None:
            assert interval["low"] == pytest.approx(interval["value"]) == pytest.approx(interval["high"]), key


def test_weights_resample_whole_groups():
    weights = resample_weights(groups=3, resamples=1000, seed=0)
    assert weights.shape == (1000, 3) and (weights.sum(axis=1) == 3).all()
    draws = np.random.default_rng(0).integers(0, 3, size=(1000, 3))
    assert (weights == np.stack([np.bincount(r, minlength=3) for r in draws])).all()


def test_paired_comparison_uses_the_same_walls():
    resamples, seed = 60, 2
    floor = counts(floored())
    doc = bootstrap(PV, Subject("m", counts(), TEN), GROUPS, resamples=resamples, seed=seed,
                    others={"floor": Subject("floor", floor, TEN), "baseline": None})
    assert doc["comparisons"]["baseline"] is None
    comparison = doc["comparisons"]["floor"]
    assert comparison["against"] == "floor"
    model = reference_bootstrap(FRAMES, resamples, seed)
    other = reference_bootstrap(floored(), resamples, seed)
    difference = model["shared_metrics.mIoU"] - other["shared_metrics.mIoU"]
    low, high = np.percentile(difference, [2.5, 97.5])
    entry = comparison["metrics"]["shared_metrics.mIoU"]
    assert entry["low"] == pytest.approx(low) and entry["high"] == pytest.approx(high)
    assert entry["difference"] == pytest.approx(entry["value"] - entry["other"])
    assert entry["excludes_zero"] == bool(low > 0 or high < 0)
    # The model is better than the floor on every wall: every resample's difference is positive.
    assert entry["excludes_zero"] and low > 0


def test_a_reference_replicated_once_pairs_with_every_model_as_its_own_bootstrap_would():
    # The server's workers keep the floor's values on the resamples and pair every upload with
    # them: each document equal to bootstrap()'s with the floor recomputed, the kept arrays unchanged.
    resamples, seed = 30, 4
    floor = Subject("floor", counts(floored()), TEN)
    kept = replicated(PV, floor, GROUPS, resamples, seed)
    before = {k: v.copy() for k, v in kept.replicates.items()}
    better = [(f, w, c) for f, w, c in FRAMES[:3]] + floored()[3:]
    for model in (Subject("m", counts(), TEN), Subject("n", counts(better), TEN)):
        alone = bootstrap(PV, model, GROUPS, resamples, seed, others={"floor": floor, "baseline": None})
        shared = bootstrap_document(PV, replicated(PV, model, GROUPS, resamples, seed), {"floor": kept, "baseline": None})
        assert shared == alone
    assert all(np.array_equal(kept.replicates[k], v, equal_nan=True) for k, v in before.items())
    assert not any(v.flags.writeable for v in kept.replicates.values())
    fewer = replicated(PV, Subject("m", counts(FRAMES[:4]), TEN), GROUPS, resamples, seed)
    with pytest.raises(SegbenchError, match="^'m' and 'floor' were scored on different frames; no paired comparison$"):
        bootstrap_document(PV, fewer, {"floor": kept})


def test_a_model_compared_with_itself_differs_by_exactly_zero():
    doc = bootstrap(PV, Subject("m", counts(), TEN), GROUPS, resamples=20, seed=0,
                    others={"baseline": Subject("m2", counts(), TEN)})
    for entry in doc["comparisons"]["baseline"]["metrics"].values():
        if entry["difference"] is not None:
            assert entry["difference"] == 0 and entry["low"] == 0 and entry["high"] == 0
            assert entry["excludes_zero"] is False


def test_a_frame_without_a_group_is_refused():
    with pytest.raises(SegbenchError, match="no group"):
        bootstrap(PV, Subject("m", counts(), TEN), {"w1_a": "w1"}, resamples=5, seed=0)


def test_each_resample_is_bit_for_bit_the_evaluation_of_its_own_frames():
    # The stack of all resamples evaluated at once, against evaluate() on each resample's frames
    # gathered one by one (each drawn wall's frames as often as it was drawn): equal, not close.
    resamples, seed = 25, 5
    doc_replicates = replicate_values(prepare(PV, counts(), TEN, GROUPS)[1], resample_weights(3, resamples, seed))
    walls = sorted({w for _, w, _ in FRAMES})
    for b, row in enumerate(np.random.default_rng(seed).integers(0, 3, size=(resamples, 3))):
        drawn = sorted((f, c) for i in row for f, w, c in FRAMES if w == walls[i])
        results = evaluate(PV, FrameCounts.from_histograms([f"{i}" for i in range(len(drawn))],
                                                           [frame(c) for _, c in drawn]), TEN)
        for key, values in doc_replicates.items():
            report, metric = key.split(".")
            expected = results[report][metric]
            assert (np.isnan(values[b]) if expected is None else values[b] == expected), (key, b)


def test_resampled_sums_are_the_integer_product_exactly_on_both_paths():
    rng = np.random.default_rng(21)
    weights = resample_weights(40, 300, 3)
    counts = rng.integers(0, 10**9, (40, 4, 5))  # BLAS's path: 40 x 10^9 stays below 2^53
    expected = np.einsum("bg,gij->bij", weights.astype(object), counts.astype(object)).astype(np.int64)
    sums = resampled_sums(weights, counts)
    assert sums.dtype == np.int64 and sums.shape == (300, 4, 5) and np.array_equal(sums, expected)
    # Counts so large a float64 would round them (2^53 + 1 is not a float64): numpy's integer product.
    huge = np.full((40, 1), 2**53 // 40 + 1, np.int64)
    assert np.array_equal(resampled_sums(weights, huge)[:, 0], weights.sum(axis=1) * (2**53 // 40 + 1))
    assert resampled_sums(np.ones((1, 2), np.int64), np.array([[2**53], [1]]))[0, 0] == 2**53 + 1
