"""Boundary IoU: the band kernel against a distance transform per class, hand-drawn cases, the
counts beside the cells (additive over shards, through Parquet), intervals."""

from __future__ import annotations

import copy

import cv2
import numpy as np
import pytest

from segbench.core.bandplan import band_plan
from segbench.core.bootstrap import Subject, bootstrap
from segbench.core.boundary import IDENTITY, BandPlan, all_cells, band, band_cells, band_width, folded_cells
from segbench.core.cellcount import joint_cells
from segbench.core.confusion import BandCounts, FrameCounts
from segbench.core.evaluation import evaluate
from segbench.errors import SegbenchError
from segbench.protocols.definitions import benchmark_path, load_benchmark, parse_benchmark, read_yaml
from segbench.records.countsio import read_counts, write_counts

PV = load_benchmark("painting-vision")
TEN = PV.ground_truth
V = 255
TIER1 = np.array([0, 1, 1, 1, 0, 0, 0, 0, 2, 0])  # 10-class id -> other / wall / window


def reference_band(mask: np.ndarray, d: int) -> np.ndarray:
    """The mask's pixels within chessboard distance d of a pixel outside it (the image border
    counts as outside): a distance transform of the mask padded with one background pixel."""
    padded = np.pad(mask.astype(np.uint8), 1)
    distance = cv2.distanceTransform(padded, cv2.DIST_C, 3)[1:-1, 1:-1]
    return mask & (distance <= d)


def reference_map_band(labels: np.ndarray, d: int) -> np.ndarray:
    return np.logical_or.reduce([reference_band(labels == c, d) for c in np.unique(labels)])


@pytest.mark.parametrize("seed", range(4))
def test_band_equals_a_distance_transform_per_class(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        h, w = (int(v) for v in rng.integers(1, 30, size=2))
        d = int(rng.integers(1, 5))
        blocky = np.kron(rng.integers(0, 3, size=(h // 4 + 1, w // 4 + 1)), np.ones((4, 4), int))[:h, :w]
        noisy = rng.integers(0, 3, size=(h, w))
        for labels in (blocky, noisy, np.zeros((h, w), int)):
            assert (band(labels.astype(np.uint8), d) == reference_map_band(labels, d)).all(), (h, w, d)


def test_square_inside_a_square():
    labels = np.zeros((9, 9), np.uint8)
    labels[3:6, 3:6] = 1
    expected = np.ones((9, 9), bool)
    expected[2:7, 2:7] = True
    expected[1:8, 1:8] = False  # the outer square's interior, away from the border...
    expected[2:7, 2:7] = True  # ...but not next to the inner square
    expected[4, 4] = False  # the inner square's centre: its 3x3 window is all square
    assert (band(labels, 1) == expected).all()
    # d = 2: the 3x3 square is all band, the outer square keeps no interior at all
    assert band(labels, 2).all()


def test_thin_line_and_one_class():
    labels = np.zeros((7, 11), np.uint8)
    labels[3, :] = 1  # a one-pixel line across
    banded = band(labels, 1)
    assert banded[2:5].all()  # the line and its neighbours
    assert not banded[1, 1:10].any() and not banded[5, 1:10].any()  # background interior rows
    one = band(np.zeros((7, 11), np.uint8), 2)
    assert one.sum() == 7 * 11 - 3 * 7 and not one[2:5, 2:9].any()  # only the border strip of width 2


def test_band_width():
    assert band_width((720, 1280), ratio=0.02) == round(0.02 * np.hypot(720, 1280)) == 29
    assert band_width((10, 10), ratio=0.02) == 1  # at least one pixel
    assert band_width((720, 1280), pixels=3) == 3


def counts_with_bands(pairs, space=TEN, benchmark=PV) -> FrameCounts:
    """What the scoring pass stores for these (gt, pred) raw masks: cells and band cells."""
    plan = band_plan(benchmark, space)
    cells = [joint_cells(g, p) for g, p in pairs]
    bands = BandCounts.from_cells(plan.spaces, [plan.frame_cells(g, p) for g, p in pairs])
    return FrameCounts.from_cells([f"f{i}" for i in range(len(pairs))], cells, bands)


def reference_boundary_iou(pairs, to_space, classes, d_of):
    """Per class I/U summed over frames, from reference_band on each class's masks; void pixels
    (ground truth 255) are not the class and drop out of every count."""
    inter, union = np.zeros(classes), np.zeros(classes)
    for gt, pred in pairs:
        valid = gt != V
        g = np.where(valid, to_space[np.minimum(gt, 9)], -1)
        p = to_space[pred]
        d = d_of(gt.shape)
        for c in range(classes):
            gb = reference_band(g == c, d) & valid
            pb = reference_band(p == c, d) & valid
            inter[c] += (gb & pb).sum()
            union[c] += (gb | pb).sum()
    return [i / u if u else None for i, u in zip(inter, union)]


def random_pairs(seed, frames=4):
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(frames):
        h, w = (int(v) for v in rng.integers(20, 70, size=2))
        gt = np.kron(rng.integers(0, 10, size=(h // 6 + 1, w // 6 + 1)), np.ones((6, 6), int))[:h, :w].astype(np.uint8)
        gt[rng.random((h, w)) < 0.05] = V
        pred = np.where(rng.random((h, w)) < 0.9, np.minimum(gt, 9), rng.integers(0, 10, size=(h, w))).astype(np.uint8)
        pairs.append((gt, pred))
    return pairs


@pytest.mark.parametrize("seed", [0, 1])
def test_boundary_iou_equals_the_reference_in_both_report_spaces(seed):
    pairs = random_pairs(seed)
    results = evaluate(PV, counts_with_bands(pairs), TEN)
    d_of = lambda shape: band_width(shape, ratio=0.02)  # noqa: E731
    tier = reference_boundary_iou(pairs, TIER1, 3, d_of)
    assert list(results["shared_metrics"]["boundary_iou"].values()) == pytest.approx(tier, rel=1e-12)
    ten = reference_boundary_iou(pairs, np.arange(10), 10, d_of)
    assert list(results["paint_state_metrics"]["boundary_iou"].values()) == pytest.approx(ten, rel=1e-12)
    present = [v for v, c in zip(ten, range(10)) if any((np.minimum(g, 9)[g != V] == c).any() for g, _ in pairs)]
    assert results["paint_state_metrics"]["mBIoU"] == pytest.approx(np.mean(present), rel=1e-12)


def test_void_next_to_a_region_makes_a_boundary_and_counts_nowhere():
    # 8x8 wall (1) with a void 3x8 strip on top; the prediction is wall everywhere. d = 1.
    gt = np.ones((8, 8), np.uint8)
    gt[:3] = V
    pred = np.ones((8, 8), np.uint8)
    plan = band_plan(PV, TEN)
    d = band_width(gt.shape, ratio=0.02)
    assert d == 1
    results = evaluate(PV, counts_with_bands([(gt, pred)]), TEN)["paint_state_metrics"]
    # GT band of wall: row 3 (next to void) and the border columns/row: 8 + 2*4 + 6 = 22 pixels
    # of the 40 non-void ones. Pred band (all wall): the border strip, of which the non-void part
    # is rows 3..7's border pixels: 2*5 + 6 = 16. Intersection: the border pixels of rows 3..7
    # (16); union: 22.
    assert results["boundary_iou"]["wall_unpainted"] == pytest.approx(16 / 22)
    assert plan.spaces == ("painting-vision-tier1", "painting-vision-10")


def test_band_counts_add_over_shards_and_survive_parquet(tmp_path):
    pairs = random_pairs(3, frames=5)
    whole = counts_with_bands(pairs)
    first, second = counts_with_bands(pairs[:2]), counts_with_bands(pairs[2:])
    second = FrameCounts(tuple(f"f{i + 2}" for i in range(3)), second.frame, second.gt, second.pred, second.count,
                         second.bands)
    merged = FrameCounts.merge([first, second])
    rows = PV.mapping(TEN, PV.space("painting-vision-tier1")).apply_to_raw(TEN.raw_lut())
    args = ("painting-vision-tier1", rows, rows, 3, 5)
    assert (merged.bands.tallies(*args) == whole.bands.tallies(*args)).all()
    write_counts(tmp_path / "c.parquet", merged, {"benchmark": "painting-vision", "split": "test", "model": {}})
    again, meta = read_counts(tmp_path / "c.parquet")
    assert meta["band_spaces"] == list(whole.bands.spaces)
    assert (again.bands.tallies(*args) == whole.bands.tallies(*args)).all()
    assert evaluate(PV, again, TEN) == evaluate(PV, whole, TEN)


def test_counts_without_bands_in_the_space_are_refused_and_without_any_are_undefined():
    gt = np.ones((4, 4), np.uint8)
    plain = FrameCounts.from_cells(["f0"], [joint_cells(gt, gt)])
    shared = evaluate(PV, plain, TEN)["shared_metrics"]  # e.g. counts made from histograms alone
    assert shared["mBIoU"] is None and set(shared["boundary_iou"].values()) == {None} and shared["mIoU"] == 1.0
    other = FrameCounts.from_cells(["f0"], [joint_cells(gt, gt)], BandCounts(("painting-vision-10",)))
    with pytest.raises(SegbenchError, match="no boundary bands in 'painting-vision-tier1'"):
        evaluate(PV, other, TEN)


def test_a_boundary_metric_needs_the_band_width():
    doc = copy.deepcopy(read_yaml(benchmark_path("painting-vision")))
    del doc["scoring"]["boundary"]
    with pytest.raises(SegbenchError, match="need the band width 'scoring/boundary'"):
        parse_benchmark(doc, benchmark_path("painting-vision"))


def test_band_cells_hold_only_pixels_in_a_band():
    gt = np.zeros((9, 9), np.uint8)
    gt[3:6, 3:6] = 1
    cells, counts = band_cells(gt, gt, np.arange(256), np.arange(256), 1)
    flags, values = cells >> 16, cells & 0xFFFF
    assert set(flags.tolist()) == {3}  # the same map on both sides: every band pixel is in both bands
    assert counts.sum() == band(gt, 1).sum() == 81 - 24 - 1  # all but the 24 outer-interior pixels and the centre
    assert dict(zip(values.tolist(), counts.tolist())) == {0: 81 - 24 - 9, (1 << 8) | 1: 8}


def test_intervals_of_the_boundary_metrics():
    pairs = random_pairs(4, frames=6)
    counts = counts_with_bands(pairs)
    groups = {f"f{i}": f"w{i // 2}" for i in range(6)}
    document = bootstrap(PV, Subject("m", counts, TEN), groups, resamples=30, seed=0)
    interval = document["intervals"]["shared_metrics.mBIoU"]
    assert interval["value"] == pytest.approx(evaluate(PV, counts, TEN)["shared_metrics"]["mBIoU"])
    assert interval["low"] <= interval["value"] <= interval["high"]
    # One wall drawn three times is the whole split three times: the same ratio.
    same = {f"f{i}": "w0" for i in range(6)}
    collapsed = bootstrap(PV, Subject("m", counts, TEN), same, resamples=5, seed=0)["intervals"]["shared_metrics.mBIoU"]
    assert collapsed["low"] == pytest.approx(collapsed["value"]) == pytest.approx(collapsed["high"])


def test_the_scoring_pass_counts_the_bands_beside_the_cells(tmp_path):
    from pv_fixtures import make_dataset, write_png
    from segbench.datasets.painting_vision import read_frames
    from segbench.stages.scoring import score_constant, score_predictions

    pairs = random_pairs(5, frames=2)
    data = make_dataset(tmp_path, [(f"f{i}", f"w{i}", "test", gt) for i, (gt, _) in enumerate(pairs)])
    frames = read_frames(data, PV.splits)
    for i, (_, pred) in enumerate(pairs):
        write_png(tmp_path / "preds" / f"f{i}.png", pred)
    scored = score_predictions(frames, tmp_path / "preds", TEN, TEN, bands=band_plan(PV, TEN))
    expected = counts_with_bands(pairs)
    assert scored.frame_ids == expected.frame_ids
    for field in ("frame", "space", "flags", "gt", "pred", "count"):
        assert np.array_equal(getattr(scored.bands, field), getattr(expected.bands, field)), field
    # The floor: its constant map's band is the border strip of each frame.
    floor = score_constant(frames, PV.floor_class, TEN, bands=band_plan(PV, TEN))
    constant = counts_with_bands([(gt, np.zeros_like(gt)) for gt, _ in pairs])
    assert np.array_equal(floor.bands.count, constant.bands.count)
    assert evaluate(PV, floor, TEN) == evaluate(PV, constant, TEN)


def reference_all_cells(gt, pred, gt_lut, pred_lut, d):
    """Every pixel by (flags, raw gt, raw pred), flags from reference_map_band of each side's label
    map, counted by np.unique: what boundary.all_cells must return."""
    flags = reference_map_band(gt_lut[gt], d).astype(np.int64) | reference_map_band(pred_lut[pred], d) << 1
    keys = (flags << 16 | gt.astype(np.int64) << 8 | pred).ravel()
    cells, counts = np.unique(keys, return_counts=True)
    return cells, counts


@pytest.mark.parametrize("seed", range(3))
def test_the_one_pass_counts_equal_reference_bands_and_the_joint_histogram(seed):
    # Widths and heights around the kernel's 8- and 64-pixel words and below the window (2d + 1),
    # blocky and noisy maps, luts that merge raw values (a raw change that is no label change),
    # void and dropped codes, and values over the whole byte range.
    rng = np.random.default_rng(100 + seed)
    for h, w in [(1, 1), (1, 70), (70, 1), (5, 63), (9, 64), (11, 65), (23, 129), (40, 7), (3, 200)]:
        for d in (1, 2, 5):
            blocky = np.kron(rng.integers(0, 6, (h // 5 + 1, w // 5 + 1)), np.ones((5, 5), int))[:h, :w]
            gt = rng.choice(np.array([0, 1, 2, 7, 200, 255], np.uint8), size=(h, w))
            gt = np.where(rng.random((h, w)) < 0.8, blocky.astype(np.uint8), gt)
            pred = np.where(rng.random((h, w)) < 0.85, gt, rng.integers(0, 256, (h, w))).astype(np.uint8)
            gt_lut, pred_lut = rng.integers(-2, 4, 256), rng.integers(-2, 4, 256)
            cells, counts = all_cells(gt, pred, gt_lut, pred_lut, d)
            expected_cells, expected_counts = reference_all_cells(gt, pred, gt_lut, pred_lut, d)
            assert cells.dtype == np.uint32 and counts.dtype == np.int64
            assert np.array_equal(cells, expected_cells) and np.array_equal(counts, expected_counts), (h, w, d)
            joint, joint_counts = folded_cells(cells, counts, 0)[0]
            plain, plain_counts = joint_cells(gt, pred)
            assert joint.dtype == plain.dtype
            assert np.array_equal(joint, plain) and np.array_equal(joint_counts, plain_counts)
            banded, banded_counts = band_cells(gt, pred, gt_lut, pred_lut, d)
            keep = expected_cells >= 1 << 16
            assert np.array_equal(banded, expected_cells[keep]) and np.array_equal(banded_counts, expected_counts[keep])


@pytest.mark.parametrize("spaces", [2, 3])
def test_one_pass_for_several_spaces_gives_each_space_its_own_cells(spaces):
    # The plan's pass counts every space's bands at once (flag bits 2s, 2s + 1): each space's band
    # cells and the joint cells must be what a reference pass in that space alone counts, on
    # spaces that merge raw values differently (a change in one is none in another).
    rng = np.random.default_rng(200 + spaces)
    for h, w in [(1, 1), (9, 64), (23, 129), (40, 7), (61, 67)]:
        for d in (1, 3):
            blocky = np.kron(rng.integers(0, 8, (h // 4 + 1, w // 4 + 1)), np.ones((4, 4), int))[:h, :w]
            gt = np.where(rng.random((h, w)) < 0.9, blocky, rng.integers(0, 256, (h, w))).astype(np.uint8)
            pred = np.where(rng.random((h, w)) < 0.8, gt, rng.integers(0, 8, (h, w))).astype(np.uint8)
            gt_luts = [rng.integers(-2, 4, 256) for _ in range(spaces)]
            pred_luts = [rng.integers(-2, 4, 256) for _ in range(spaces)]
            plan = BandPlan(tuple(f"s{s}" for s in range(spaces)), tuple(gt_luts), tuple(pred_luts), pixels=d)
            (joint, joint_counts), per_space = plan.frame_counts(gt, pred)
            plain, plain_counts = joint_cells(gt, pred)
            assert joint.dtype == plain.dtype
            assert np.array_equal(joint, plain) and np.array_equal(joint_counts, plain_counts), (h, w, d)
            kept = plan.truth_flags(gt)  # the ground truth's bands made once, as a worker keeps them
            for g, lut in enumerate(gt_luts):
                assert np.array_equal((kept >> 2 * g) & 1, reference_map_band(lut[gt], d)), (h, w, d)
            assert not (kept & 0b10101010).any() and not kept.flags.writeable
            for (cells, counts), g, p in zip(per_space, gt_luts, pred_luts):
                expected_cells, expected_counts = reference_all_cells(gt, pred, g, p, d)
                keep = expected_cells >= 1 << 16
                assert np.array_equal(cells, expected_cells[keep]), (h, w, d)
                assert np.array_equal(counts, expected_counts[keep]), (h, w, d)
            (joint_kept, joint_kept_counts), per_space_kept = plan.frame_counts(gt, pred, kept)
            assert np.array_equal(joint_kept, joint) and np.array_equal(joint_kept_counts, joint_counts)
            for (cells, counts), (with_kept, counts_with_kept) in zip(per_space, per_space_kept):
                assert np.array_equal(cells, with_kept) and np.array_equal(counts, counts_with_kept), (h, w, d)


def test_the_one_pass_on_a_full_size_frame_of_drawn_shapes():
    # 720x1280 at the benchmark's d: the kernel's rows reach every part of a real frame.
    rng = np.random.default_rng(7)
    gt = np.zeros((720, 1280), np.uint8)
    for value in range(1, 12):
        y, x, hh, ww = (int(v) for v in rng.integers(0, [700, 1260, 300, 500]))
        gt[y:y + hh, x:x + ww] = value
    gt[rng.integers(0, 720, 50), rng.integers(0, 1280, 50)] = V
    pred = np.roll(gt, (3, -5), axis=(0, 1))
    pred[pred == V] = 0
    lut = np.where(np.arange(256) == V, -2, np.arange(256))
    d = band_width(gt.shape, ratio=0.02)
    cells, counts = all_cells(gt, pred, lut, lut, d)
    expected_cells, expected_counts = reference_all_cells(gt, pred, lut, lut, d)
    assert np.array_equal(cells, expected_cells) and np.array_equal(counts, expected_counts)


def test_the_one_pass_refuses_masks_of_two_shapes_or_another_dtype():
    gt = np.zeros((4, 5), np.uint8)
    with pytest.raises(ValueError, match="shapes differ"):
        all_cells(gt, np.zeros((5, 4), np.uint8), IDENTITY, IDENTITY, 1)
    with pytest.raises(ValueError, match="must be uint8"):
        all_cells(gt, np.zeros((4, 5), np.int32), IDENTITY, IDENTITY, 1)


def test_with_bands_the_scoring_pass_takes_the_joint_cells_from_the_band_pass(tmp_path):
    from pv_fixtures import make_dataset, write_png
    from segbench.datasets.painting_vision import read_frames
    from segbench.stages.scoring import score_predictions

    pairs = random_pairs(6, frames=3)
    data = make_dataset(tmp_path, [(f"f{i}", f"w{i}", "test", gt) for i, (gt, _) in enumerate(pairs)])
    frames = read_frames(data, PV.splits)
    for i, (_, pred) in enumerate(pairs):
        write_png(tmp_path / "preds" / f"f{i}.png", pred)
    with_bands = score_predictions(frames, tmp_path / "preds", TEN, TEN, bands=band_plan(PV, TEN))
    without = score_predictions(frames, tmp_path / "preds", TEN, TEN)
    for field in ("frame", "gt", "pred", "count"):
        assert np.array_equal(getattr(with_bands, field), getattr(without, field)), field
    assert len(without.bands.count) == 0 and len(with_bands.bands.count) > 0


def test_a_frame_taller_than_int16_row_numbers():
    # 33,000 rows: the column step numbers rows in int32 there (int16 below 32,768 rows).
    rng = np.random.default_rng(8)
    h, w = 33_000, 6
    gt = np.repeat(rng.integers(0, 3, (h // 40 + 1, w)), 40, axis=0)[:h].astype(np.uint8)
    gt[20_000:20_003] = 2  # a thin stripe far past row 32,767 - 2d, and runs longer than 2d before it
    pred = np.roll(gt, 7, axis=0)
    for d in (1, 2):
        assert (band(gt, d) == reference_map_band(gt, d)).all()
        cells, counts = all_cells(gt, pred, IDENTITY, IDENTITY, d)
        expected_cells, expected_counts = reference_all_cells(gt, pred, IDENTITY, IDENTITY, d)
        assert np.array_equal(cells, expected_cells) and np.array_equal(counts, expected_counts)


def test_the_one_pass_takes_read_only_and_writable_masks_alike():
    # a decoded mask may be read-only and the other not (the floor's constant frame, a buffer)
    rng = np.random.default_rng(7)
    gt = np.kron(rng.integers(0, 4, (4, 5)), np.ones((6, 6), int)).astype(np.uint8)
    pred = np.where(rng.random(gt.shape) < 0.9, gt, 3).astype(np.uint8)
    lut = np.arange(256) % 4
    expected = reference_all_cells(gt, pred, lut, lut, 2)
    for gt_writable, pred_writable in ((True, False), (False, True), (False, False)):
        a, b = gt.copy(), pred.copy()
        a.flags.writeable, b.flags.writeable = gt_writable, pred_writable
        cells, counts = all_cells(a, b, lut, lut, 2)
        assert np.array_equal(cells, expected[0]) and np.array_equal(counts, expected[1])
        assert a.flags.writeable == gt_writable and b.flags.writeable == pred_writable  # the callers' arrays untouched
    broadcast = np.broadcast_to(np.uint8(1), gt.shape)  # not contiguous, read-only
    cells, counts = all_cells(gt, broadcast, lut, lut, 2)
    expected = reference_all_cells(gt, np.ones_like(gt), lut, lut, 2)
    assert np.array_equal(cells, expected[0]) and np.array_equal(counts, expected[1])
