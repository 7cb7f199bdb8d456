"""Confusion counts: exactness against naive counting, additivity over shards, reductions."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from segbench.core.confusion import FrameCounts, constant_prediction, joint_histogram, value_histogram
from segbench.core.labels import DROP, INVALID, reduce_confusion
from segbench.protocols.definitions import load_benchmark

PV = load_benchmark("painting-vision")
TIER1 = PV.space("painting-vision-tier1")
PV_VALUES = st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 255])


def naive_histogram(gt, pred):
    hist = np.zeros((256, 256), np.int64)
    for g, p in zip(gt.ravel(), pred.ravel()):
        hist[g, p] += 1
    return hist


def test_joint_histogram_matches_naive_count_with_high_values():
    rng = np.random.default_rng(1)
    gt = rng.integers(0, 256, (37, 41), dtype=np.uint8)  # odd size, values up to 255: no overflow
    pred = rng.integers(0, 256, (37, 41), dtype=np.uint8)
    assert np.array_equal(joint_histogram(gt, pred), naive_histogram(gt, pred))


def test_constant_prediction_is_the_histogram_in_one_column():
    gt = np.array([[0, 1, 1, 255]], np.uint8)
    hist = constant_prediction(value_histogram(gt), 0)
    assert np.array_equal(hist, joint_histogram(gt, np.zeros_like(gt)))


frames_strategy = st.lists(
    st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**32 - 1)), min_size=1, max_size=8
)


def make_frames(spec):
    out = []
    for h, w, seed in spec:
        rng = np.random.default_rng(seed)
        values = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 255], np.uint8)
        out.append((values[rng.integers(0, 11, (h, w))], values[rng.integers(0, 10, (h, w))]))
    return out


@settings(max_examples=60, deadline=None)
@given(frames_strategy, st.integers(1, 4))
def test_merged_shards_equal_the_whole(spec, shard_size):
    frames = make_frames(spec)
    ids = [f"f{i:02d}" for i in range(len(frames))]
    whole = FrameCounts.from_histograms(ids, [joint_histogram(g, p) for g, p in frames])
    shards = [
        FrameCounts.from_histograms(ids[i : i + shard_size], [joint_histogram(g, p) for g, p in frames[i : i + shard_size]])
        for i in range(0, len(frames), shard_size)
    ]
    merged = FrameCounts.merge(shards)
    assert merged.frame_ids == whole.frame_ids
    assert np.array_equal(merged.total(), whole.total())
    gt_lut = PV.ground_truth.raw_lut()
    assert np.array_equal(
        merged.reduced_per_frame(gt_lut, gt_lut, 10, 10), whole.reduced_per_frame(gt_lut, gt_lut, 10, 10)
    )


@settings(max_examples=60, deadline=None)
@given(arrays(np.uint8, (5, 7), elements=PV_VALUES), arrays(np.uint8, (5, 7), elements=st.integers(0, 9)))
def test_tier1_reduction_equals_direct_computation(gt, pred):
    mapping = PV.mapping(PV.ground_truth, TIER1)
    ten = FrameCounts.from_histograms(["f"], [joint_histogram(gt, pred)]).reduced(
        PV.ground_truth.raw_lut(), PV.ground_truth.raw_lut(), 10, 10
    )
    reduced = reduce_confusion(ten, mapping.lut, mapping.lut, 3, 3)
    # direct: relabel pixels into tier 1 first, then count
    relabel = np.full(256, 255, np.uint8)
    relabel[:10] = mapping.lut
    direct_gt, direct_pred = relabel[gt], relabel[pred]
    keep = direct_gt != 255
    direct = np.zeros((3, 3), np.int64)
    np.add.at(direct, (direct_gt[keep], direct_pred[keep]), 1)
    assert np.array_equal(reduced, direct)


def test_raw_lookup_tables():
    lut = PV.ground_truth.raw_lut()
    assert list(lut[:10]) == list(range(10))
    assert lut[255] == DROP
    assert set(lut[10:255]) == {INVALID}
    ade_to_tier1 = PV.mapping(PV.space("ade20k"), TIER1)
    assert ade_to_tier1.lut[0] == 1 and ade_to_tier1.lut[8] == 2  # wall, windowpane
    assert int((ade_to_tier1.lut == 0).sum()) == 148
