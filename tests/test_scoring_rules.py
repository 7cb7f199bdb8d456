"""Scoring rules a benchmark declares: the evaluation size (IDD's 1280x720), the prediction file
naming of each format, and every bad prediction."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from segbench.core.confusion import joint_histogram
from segbench.datasets.base import Frame
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.records.intake import open_predictions
from segbench.stages.scoring import score_constant, score_predictions

IDD_SIZE = (1280, 720)


@pytest.fixture(scope="module")
def idd():
    return load_benchmark("idd20k-icvgip2020")


def save(path, array):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path)
    return path


def idd_frame(tmp_path, gt, name="7/000001"):
    label = save(tmp_path / "gt" / f"{name}_gtFine_labellevel3Ids.png", gt)
    return Frame(name, name.split("/")[0], "test", label, label, prediction=f"{name}_gtFine_labellevel3Ids.png")


def test_1920x1080_resized_to_1280x720_as_pillow_does(tmp_path, idd):
    rng = np.random.default_rng(0)
    gt = rng.choice(np.r_[np.arange(26), [255]], size=(1080, 1920)).astype(np.uint8)
    pred = rng.integers(0, 26, size=(1080, 1920)).astype(np.uint8)
    frame = idd_frame(tmp_path, gt)
    save(tmp_path / "pred" / frame.prediction, pred)
    counts = score_predictions([frame], tmp_path / "pred", idd.ground_truth, idd.space("idd-level3-misc"), IDD_SIZE)
    small = [np.asarray(Image.fromarray(m).resize(IDD_SIZE, Image.Resampling.NEAREST)) for m in (gt, pred)]
    np.testing.assert_array_equal(counts.total(), joint_histogram(*small))
    # Pillow's NEAREST samples pixel centres: 1920 -> 1280 takes source floor(1.5 i + 0.75) on both axes.
    rows, cols = np.floor(1.5 * np.arange(720) + 0.75).astype(int), np.floor(1.5 * np.arange(1280) + 0.75).astype(int)
    np.testing.assert_array_equal(small[0], gt[np.ix_(rows, cols)])
    assert counts.total().sum() == 1280 * 720


def test_masks_already_at_1280x720_are_not_resampled(tmp_path, idd):
    rng = np.random.default_rng(1)
    gt = rng.integers(0, 26, size=(720, 1280)).astype(np.uint8)
    frame = idd_frame(tmp_path, gt)
    save(tmp_path / "pred" / frame.prediction, gt)
    counts = score_predictions([frame], tmp_path / "pred", idd.ground_truth, idd.space("idd-level3-misc"), IDD_SIZE)
    np.testing.assert_array_equal(counts.total(), joint_histogram(gt, gt))


def test_a_prediction_at_1280x720_against_1920x1080_ground_truth(tmp_path, idd):
    """The challenge's submissions are 1280x720 whatever the GT's size: only the GT is resized."""
    gt = np.zeros((1080, 1920), np.uint8)
    gt[:, 960:] = 9
    pred = np.zeros((720, 1280), np.uint8)
    pred[:, 640:] = 9
    frame = idd_frame(tmp_path, gt)
    save(tmp_path / "pred" / frame.prediction, pred)
    hist = score_predictions([frame], tmp_path / "pred", idd.ground_truth, idd.ground_truth, IDD_SIZE).total()
    assert hist[0, 0] == hist[9, 9] == 640 * 720 and hist.sum() == 1280 * 720


def test_other_aspect_is_stretched_as_the_reference_does(tmp_path, idd):
    gt = np.zeros((964, 1280), np.uint8)  # a 1280x964 frame, as some IDD images are
    frame = idd_frame(tmp_path, gt)
    save(tmp_path / "pred" / frame.prediction, np.zeros((720, 1280), np.uint8))
    hist = score_predictions([frame], tmp_path / "pred", idd.ground_truth, idd.ground_truth, IDD_SIZE).total()
    assert hist[0, 0] == 1280 * 720


def test_floor_counts_the_resized_ground_truth(tmp_path, idd):
    gt = np.full((1080, 1920), 255, np.uint8)
    gt[:540] = 25
    counts = score_constant([idd_frame(tmp_path, gt)], 0, idd.ground_truth, IDD_SIZE)
    hist = counts.total()
    assert hist[25, 0] == hist[255, 0] == 1280 * 360


def test_without_an_evaluation_size_the_prediction_is_fitted_to_the_ground_truth(tmp_path):
    pv = load_benchmark("painting-vision")
    gt = np.zeros((40, 60), np.uint8)
    label = save(tmp_path / "labels" / "a.png", gt)
    frame = Frame("a", "w", "test", label, label)
    save(tmp_path / "pred" / "a.png", np.ones((20, 30), np.uint8))  # same aspect: resized
    hist = score_predictions([frame], tmp_path / "pred", pv.ground_truth, pv.ground_truth).total()
    assert hist[0, 1] == 40 * 60
    save(tmp_path / "pred" / "a.png", np.ones((30, 30), np.uint8))  # another aspect: refused
    with pytest.raises(SegbenchError, match=r"a\.png: prediction is 30x30 but the ground truth is 60x40: not the same aspect"):
        score_predictions([frame], tmp_path / "pred", pv.ground_truth, pv.ground_truth)


def test_every_problem_of_the_masks_is_refused_in_one_error_by_kind(tmp_path, idd):
    """Missing masks, an RGB one and one of values outside the space: all named, by kind, in one error."""
    names = ("7/000001", "7/000002", "7/000004", "7/000005", "8/000003")
    frames = [idd_frame(tmp_path, np.zeros((4, 4), np.uint8), name) for name in names]
    save(tmp_path / "pred" / frames[1].prediction, np.zeros((4, 4), np.uint8))
    rgb = save(tmp_path / "pred" / frames[2].prediction, np.zeros((4, 4, 3), np.uint8))
    outside = save(tmp_path / "pred" / frames[3].prediction, np.full((4, 4), 40, np.uint8))
    with pytest.raises(SegbenchError) as exc:
        score_predictions(frames, tmp_path / "pred", idd.ground_truth, load_benchmark("painting-vision").ground_truth,
                          IDD_SIZE)
    assert str(exc.value) == (
        f"{tmp_path / 'pred'}: predictions refused: 4 problems:\n"
        "  missing predictions (2):\n"
        f"    missing prediction for frame 7/000001: {tmp_path / 'pred/7/000001_gtFine_labellevel3Ids.png'}\n"
        f"    missing prediction for frame 8/000003: {tmp_path / 'pred/8/000003_gtFine_labellevel3Ids.png'}\n"
        "  not 8-bit single-channel PNGs (1):\n"
        f"    {rgb}: prediction is a 4x4, 8-bit RGB PNG; a prediction must be an 8-bit single-channel "
        "PNG (greyscale, or palette read as its indices) holding class ids, not a colour rendering\n"
        "  masks with values outside the label space (1):\n"
        f"    {outside}: frame 7/000005: predicted values [40] are outside the model's label space "
        "'painting-vision-10' (0..9)"
    )


def test_rgb_prediction_is_refused(tmp_path, idd):
    frame = idd_frame(tmp_path, np.zeros((4, 4), np.uint8))
    path = save(tmp_path / "pred" / frame.prediction, np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(SegbenchError) as exc:
        score_predictions([frame], tmp_path / "pred", idd.ground_truth, idd.ground_truth, IDD_SIZE)
    assert str(exc.value).endswith(
        f"\n    {path}: prediction is a 4x4, 8-bit RGB PNG; a prediction must be an 8-bit single-channel "
        "PNG (greyscale, or palette read as its indices) holding class ids, not a colour rendering"
    )


def test_palette_prediction_is_read_as_its_indices(tmp_path, idd):
    frame = idd_frame(tmp_path, np.full((4, 4), 9, np.uint8))
    image = Image.fromarray(np.full((4, 4), 9, np.uint8)).convert("P")
    (tmp_path / "pred" / "7").mkdir(parents=True)
    image.save(tmp_path / "pred" / frame.prediction)
    hist = score_predictions([frame], tmp_path / "pred", idd.ground_truth, idd.ground_truth, IDD_SIZE).total()
    assert hist[9, 9] == 1280 * 720


def test_prediction_values_outside_the_space(tmp_path, idd):
    frame = idd_frame(tmp_path, np.zeros((4, 4), np.uint8))
    path = save(tmp_path / "pred" / frame.prediction, np.full((4, 4), 40, np.uint8))
    with pytest.raises(SegbenchError, match=rf"{path}: frame 7/000001: predicted values \[40\] are outside"):
        score_predictions([frame], tmp_path / "pred", idd.ground_truth, load_benchmark("painting-vision").ground_truth)
    # In the challenge's space 40 is misc, a legal (wrong) prediction.
    score_predictions([frame], tmp_path / "pred", idd.ground_truth, idd.space("idd-level3-misc"), IDD_SIZE)


def test_submission_folder_must_mirror_the_frames(tmp_path, idd):
    frames = [idd_frame(tmp_path, np.zeros((4, 4), np.uint8), name) for name in ("7/000001", "8/000002")]
    save(tmp_path / "pred" / frames[0].prediction, np.zeros((4, 4), np.uint8))
    save(tmp_path / "pred" / "7" / "000001_leftImg8bit.png", np.zeros((4, 4), np.uint8))
    with pytest.raises(SegbenchError) as exc:
        open_predictions(tmp_path / "pred", frames).close()
    assert str(exc.value).splitlines()[1:] == [
        "  missing predictions (1):",
        f"    missing prediction for frame 8/000002: {tmp_path / 'pred/8/000002_gtFine_labellevel3Ids.png'}",
        "  extra files (1):",
        f"    extra file not matching any evaluated frame: {tmp_path / 'pred/7/000001_leftImg8bit.png'}",
    ]
