"""The compiled counting kernel equals the straightforward bincount, cell for cell."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from segbench.core.cellcount import joint_cells
from segbench.core.confusion import FrameCounts, histogram_cells, invalid_values, joint_histogram
from segbench.core.labels import INVALID


def assert_same_cells(gt: np.ndarray, pred: np.ndarray) -> None:
    cells, counts = joint_cells(gt, pred)
    expected_cells, expected_counts = histogram_cells(joint_histogram(gt, pred))
    assert cells.dtype == np.uint16 and counts.dtype == np.int64
    np.testing.assert_array_equal(cells, expected_cells)
    np.testing.assert_array_equal(counts, expected_counts)
    assert counts.sum() == gt.size


def coherent_pair(shape: tuple[int, int], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Blocks of one value (long runs, the kernel's 8-pixel skips) with a shifted prediction."""
    rng = np.random.default_rng(seed)
    gt = np.zeros(shape, np.uint8)
    pred = np.zeros(shape, np.uint8)
    for _ in range(12):
        y, x = rng.integers(0, shape[0]), rng.integers(0, shape[1])
        h, w = rng.integers(1, shape[0] + 1), rng.integers(1, shape[1] + 1)
        value = rng.choice([0, 3, 26, 254, 255])
        gt[y : y + h, x : x + w] = value
        pred[max(0, y - 2) : y + h, x + 1 : x + w + 5] = (value + rng.integers(0, 2)) % 256
    return gt, pred


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (1, 8), (1, 9), (3, 5), (8, 8), (7, 9), (37, 41), (720, 1281)])
def test_coherent_masks_of_odd_sizes(shape):
    assert_same_cells(*coherent_pair(shape, seed=sum(shape)))


def test_random_values_over_the_whole_byte_range():
    rng = np.random.default_rng(5)
    gt = rng.integers(0, 256, (97, 103), dtype=np.uint8)
    pred = rng.integers(0, 256, (97, 103), dtype=np.uint8)
    assert_same_cells(gt, pred)


def test_one_value_everywhere_is_one_cell():
    gt = np.full((720, 1280), 255, np.uint8)
    cells, counts = joint_cells(gt, np.full_like(gt, 7))
    assert cells.tolist() == [255 << 8 | 7] and counts.tolist() == [720 * 1280]


def test_a_run_that_changes_inside_a_word_and_returns():
    # 8 equal pixels, then one different pair in the middle of the next word, then back again
    gt = np.array([[1] * 8 + [1, 1, 1, 2, 1, 1, 1, 1] + [1] * 8], np.uint8)
    pred = np.array([[0] * 8 + [0, 0, 0, 0, 0, 5, 0, 0] + [0] * 8], np.uint8)
    cells, counts = joint_cells(gt, pred)
    assert dict(zip(cells.tolist(), counts.tolist())) == {1 << 8 | 0: 22, 2 << 8 | 0: 1, 1 << 8 | 5: 1}


def test_empty_masks_have_no_cells():
    cells, counts = joint_cells(np.zeros((0, 5), np.uint8), np.zeros((0, 5), np.uint8))
    assert cells.size == 0 and counts.size == 0


def test_non_contiguous_views_are_counted_as_their_values():
    gt, pred = coherent_pair((64, 80), seed=3)
    assert_same_cells(gt[::2, 1::3], pred[::2, 1::3])
    assert_same_cells(gt.T, pred.T)


def test_shape_and_type_mismatches_are_refused():
    with pytest.raises(ValueError, match="shapes differ"):
        joint_cells(np.zeros((2, 3), np.uint8), np.zeros((3, 2), np.uint8))
    with pytest.raises(ValueError, match="must be uint8"):
        joint_cells(np.zeros((2, 3), np.uint16), np.zeros((2, 3), np.uint8))


@settings(max_examples=200, deadline=None)
@given(
    arrays(np.uint8, st.tuples(st.integers(1, 19), st.integers(1, 19)), elements=st.sampled_from([0, 1, 2, 255])),
    st.integers(0, 2**32 - 1),
)
def test_any_mask_equals_the_bincount(gt, seed):
    rng = np.random.default_rng(seed)
    pred = np.where(rng.random(gt.shape) < 0.2, rng.integers(0, 256, gt.shape), gt).astype(np.uint8)
    assert_same_cells(gt, pred)


def test_frame_counts_from_cells_equal_those_from_histograms():
    pairs = [coherent_pair((30, 50), seed) for seed in range(4)] + [(np.zeros((0, 3), np.uint8),) * 2]
    ids = [f"f{i}" for i in range(len(pairs))]
    fast = FrameCounts.from_cells(ids, [joint_cells(g, p) for g, p in pairs])
    plain = FrameCounts.from_histograms(ids, [joint_histogram(g, p) for g, p in pairs])
    for name in ("frame", "gt", "pred", "count"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(plain, name))
        assert getattr(fast, name).dtype == getattr(plain, name).dtype
    np.testing.assert_array_equal(fast.total(), sum(joint_histogram(g, p) for g, p in pairs))


def test_invalid_values_name_each_raw_value_outside_the_tables():
    lut = np.full(256, INVALID, np.int64)
    lut[[0, 1, 255]] = 0
    cells = np.array([0 << 8 | 1, 1 << 8 | 7, 9 << 8 | 7, 255 << 8 | 255], np.uint16)
    assert invalid_values(cells, lut, lut) == ([9], [7])
