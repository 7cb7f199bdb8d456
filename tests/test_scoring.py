"""Scoring predicted masks: exact counts, Pillow-nearest resizing, and bad predictions folders."""

import numpy as np
import pytest
from PIL import Image

from pv_fixtures import make_dataset, write_png
from segbench.core.confusion import joint_histogram
from segbench.datasets.painting_vision import read_frames
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.records.intake import check_prediction_header, open_predictions
from segbench.stages.scoring import fit_prediction, score_constant, score_predictions

PV = load_benchmark("painting-vision")
GT = np.array([[0, 1, 2, 255], [8, 8, 9, 3]], np.uint8)


@pytest.fixture
def dataset(tmp_path):
    data = make_dataset(tmp_path, [("a", "w1", "test", GT), ("b", "w2", "test", GT[:, ::-1].copy())])
    return read_frames(data, PV.splits)


def test_counts_equal_a_direct_histogram(tmp_path, dataset):
    preds = tmp_path / "preds"
    write_png(preds / "a.png", np.full((2, 4), 1, np.uint8))
    write_png(preds / "b.png", GT[:, ::-1] % 10)
    counts = score_predictions(dataset, preds, PV.ground_truth, PV.ground_truth)
    expected = joint_histogram(GT, np.full((2, 4), 1, np.uint8)) + joint_histogram(GT[:, ::-1], GT[:, ::-1] % 10)
    assert np.array_equal(counts.total(), expected)
    assert counts.frame_ids == ("a", "b")


def test_floor_counts_come_from_the_ground_truth_alone(dataset):
    counts = score_constant(dataset, PV.floor_class, PV.ground_truth)
    assert counts.total()[:, 0].tolist()[:10] == [2, 2, 2, 2, 0, 0, 0, 0, 4, 2]
    assert counts.total()[255, 0] == 2 and counts.total()[:, 1:].sum() == 0


def test_missing_and_extra_masks_are_named(tmp_path, dataset):
    preds = tmp_path / "preds"
    write_png(preds / "a.png", GT)
    write_png(preds / "zz.png", GT)
    with pytest.raises(SegbenchError) as error:
        open_predictions(preds, dataset).close()
    assert "missing prediction for frame b" in str(error.value)
    assert "zz.png" in str(error.value)


def test_missing_folder_is_named(tmp_path, dataset):
    with pytest.raises(SegbenchError, match="predictions folder not found"):
        open_predictions(tmp_path / "nope", dataset).close()


def test_prediction_values_outside_the_model_space_name_the_frame(tmp_path, dataset):
    preds = tmp_path / "preds"
    write_png(preds / "a.png", np.full((2, 4), 12, np.uint8))
    write_png(preds / "b.png", GT % 10)
    with pytest.raises(SegbenchError, match=r"a\.png: frame a: predicted values \[12\]"):
        score_predictions(dataset, preds, PV.ground_truth, PV.ground_truth)


def test_rgb_prediction_is_refused(tmp_path, dataset):
    preds = tmp_path / "preds"
    Image.fromarray(np.zeros((2, 4, 3), np.uint8)).save((preds.mkdir() or preds) / "a.png")
    write_png(preds / "b.png", GT % 10)
    with pytest.raises(SegbenchError, match="single-channel"):
        score_predictions(dataset, preds, PV.ground_truth, PV.ground_truth)


def test_uniformly_rescaled_mask_is_resized_as_pillow_nearest():
    small = np.arange(6, dtype=np.uint8).reshape(2, 3)
    resized = fit_prediction(small, (4, 6))
    # Pillow NEAREST samples pixel centres: destination i takes source floor((i + 0.5) * src / dst)
    rows = [int((i + 0.5) * 2 / 4) for i in range(4)]
    cols = [int((j + 0.5) * 3 / 6) for j in range(6)]
    assert np.array_equal(resized, small[np.ix_(rows, cols)])
    odd = np.arange(35, dtype=np.uint8).reshape(5, 7)
    assert np.array_equal(fit_prediction(odd, (10, 14)), np.asarray(Image.fromarray(odd).resize((14, 10), Image.NEAREST)))


def test_wrong_aspect_ratio_is_refused_at_the_header():
    header = png_of(np.zeros((2, 5), np.uint8))
    with pytest.raises(SegbenchError, match=r"a\.png: prediction is 5x2 but the ground truth is 6x4: not the same aspect"):
        check_prediction_header(header, "a.png", (6, 4), None)
    check_prediction_header(png_of(np.zeros((8, 12), np.uint8)), "a.png", (6, 4), None)  # 2x each side: accepted
    with pytest.raises(SegbenchError, match=r"the largest accepted for a ground truth of 6x4 is 24x16"):
        check_prediction_header(png_of(np.zeros((20, 30), np.uint8)), "a.png", (6, 4), None)


def test_the_fast_path_equals_the_straightforward_one_on_the_shipped_dataset(tmp_path):
    """imagecodecs + the compiled kernel + threads == Pillow + np.bincount, frame by frame, cell by cell."""
    from pathlib import Path

    from segbench.core.confusion import FrameCounts

    data = Path(__file__).resolve().parents[1] / "data"
    frames = read_frames(data, PV.splits)
    assert len(frames) >= 50, "the DVC-pinned dataset is not pulled (make setup)"
    preds = tmp_path / "preds"
    straightforward = []
    for i, frame in enumerate(frames):
        gt = np.asarray(Image.open(frame.label))
        pred = np.where(np.roll(gt, i + 1, axis=1) == 255, i % 10, np.roll(gt, i + 1, axis=1)).astype(np.uint8)
        write_png(preds / frame.prediction, pred)
        straightforward.append(joint_histogram(gt, np.asarray(Image.open(preds / frame.prediction))))
    fast = score_predictions(frames, preds, PV.ground_truth, PV.ground_truth)
    plain = FrameCounts.from_histograms([f.frame_id for f in frames], straightforward)
    for name in ("frame", "gt", "pred", "count"):
        assert np.array_equal(getattr(fast, name), getattr(plain, name)), name
    assert fast.frame_ids == plain.frame_ids


def png_of(mask: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    Image.fromarray(mask).save(buffer, format="PNG")
    return buffer.getvalue()
