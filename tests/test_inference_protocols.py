"""Inference as the IDD and EasyPortrait protocols need it: no padding, the format's prediction
names, any input size, and flip test-time augmentation that swaps left and right classes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from segbench.core.model_spec import InferenceMode
from segbench.datasets.base import Frame
from segbench.errors import SegbenchError
from segbench.models.architectures import build
from segbench.models.base import Normalization, SegmentationModel, space_from_names
from segbench.protocols.definitions import load_label_space
from segbench.stages.inference import run_inference
from segbench.stages.inference_modes import predict, unmirrored


class RecordingModel(SegmentationModel):
    """Logits from `fn`; records the shape of every batch."""

    kind = "fake"

    def __init__(self, fn, classes: int = 3, stride: int = 32, space=None):
        self.source = Path("fake-model")
        self.label_space = space or space_from_names("fake", [f"c{i}" for i in range(classes)], "test")
        self.stride = stride
        self.device = torch.device("cpu")
        self.normalization = Normalization((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
        self.fn = fn
        self.shapes: list[tuple[int, ...]] = []

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        self.shapes.append(tuple(images.shape))
        return self.fn(images)


def frame(tmp_path: Path, name: str, size=(50, 30), prediction: str = "") -> Frame:
    image = tmp_path / "images" / f"{name.replace('/', '_')}.png"
    label = tmp_path / "labels" / f"{name.replace('/', '_')}.png"
    for path in (image, label):
        path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(image)
    Image.fromarray(np.zeros((size[1], size[0]), np.uint8)).save(label)
    return Frame(name, "g", "test", image, label, prediction=prediction)


def first_channel_wins(images: torch.Tensor) -> torch.Tensor:
    logits = torch.zeros(images.shape[0], 3, *images.shape[2:])
    logits[:, 1] = 1.0
    return logits


def test_without_padding_the_model_sees_exactly_the_resized_image(tmp_path):
    model = RecordingModel(first_channel_wins, stride=32)
    [out] = run_inference(model, [frame(tmp_path, "a", (50, 30))], tmp_path / "out", 40, progress=False,
                          pad_to_stride=False)
    assert model.shapes == [(1, 3, 24, 40)]  # 50x30 -> long side 40: 40x24, no padding to 32
    assert (np.asarray(Image.open(out)) == 1).all() and Image.open(out).size == (50, 30)
    padded = RecordingModel(first_channel_wins, stride=32)
    run_inference(padded, [frame(tmp_path, "a", (50, 30))], tmp_path / "out2", 40, progress=False)
    assert padded.shapes == [(1, 3, 32, 64)]


def test_predictions_are_written_where_the_format_names_them(tmp_path):
    frames = [frame(tmp_path, "7/000001", prediction="7/000001_gtFine_labellevel3Ids.png"),
              frame(tmp_path, "8/000002", prediction="8/000002_gtFine_labellevel3Ids.png")]
    outputs = run_inference(RecordingModel(first_channel_wins), frames, tmp_path / "out", 32, progress=False)
    assert outputs == [tmp_path / "out/7/000001_gtFine_labellevel3Ids.png", tmp_path / "out/8/000002_gtFine_labellevel3Ids.png"]
    assert all(p.is_file() for p in outputs)


def test_prediction_paths_must_stay_inside_and_be_distinct(tmp_path):
    model = RecordingModel(first_channel_wins)
    with pytest.raises(SegbenchError, match=r"frame 'a': prediction path \.\./a\.png is not inside the output folder"):
        run_inference(model, [frame(tmp_path, "a", prediction="../a.png")], tmp_path / "out", 32, progress=False)
    twins = [frame(tmp_path, "a", prediction="x.png"), frame(tmp_path, "b", prediction="x.png")]
    with pytest.raises(SegbenchError, match=r"frames 'a' and 'b' would both write the prediction x\.png"):
        run_inference(model, twins, tmp_path / "out", 32, progress=False)


@pytest.mark.parametrize("hw", [(37, 53), (1, 7), (64, 64), (101, 29)])
def test_tiny_segnet_accepts_any_size(hw):
    net = build("tiny-segnet", {"widths": [4, 8, 8]}, num_classes=5).eval()
    with torch.no_grad():
        assert net(torch.zeros(2, 3, *hw)).shape == (2, 5, *hw)


def test_mirrored_ids_swap_left_and_right():
    np.testing.assert_array_equal(load_label_space("easyportrait-9").mirrored_ids(), [0, 1, 2, 4, 3, 6, 5, 7, 8])
    np.testing.assert_array_equal(load_label_space("easyportrait-fp8").mirrored_ids(), [0, 1, 3, 2, 5, 4, 6, 7])
    np.testing.assert_array_equal(load_label_space("painting-vision-10").mirrored_ids(), np.arange(10))


def test_unmirrored_scores_flip_back_and_swap():
    scores = torch.arange(9 * 2 * 3, dtype=torch.float32).reshape(9, 2, 3)
    mirrored = torch.tensor([0, 1, 2, 4, 3, 6, 5, 7, 8])
    out = unmirrored(scores, mirrored)
    assert torch.equal(out[3], scores[4].flip(-1)) and torch.equal(out[4], scores[3].flip(-1))
    assert torch.equal(out[0], scores[0].flip(-1))
    assert torch.equal(unmirrored(out, mirrored), scores)  # a flip applied twice is the identity


def sides(images: torch.Tensor) -> torch.Tensor:
    """A side-aware model: the image's left half is 'left eye' (5), its right half 'right eye' (6)."""
    logits = torch.zeros(images.shape[0], 9, *images.shape[2:])
    half = images.shape[-1] // 2
    logits[:, 5, :, :half] = 1.0
    logits[:, 6, :, half:] = 1.0
    return logits


def test_flip_through_multi_scale_inference(tmp_path):
    """The mirror view calls the left half 'right eye' again; swapped back, the views agree."""
    space = load_label_space("easyportrait-9")
    image = frame(tmp_path, "f", (16, 8))
    plain = run_inference(RecordingModel(sides, space=space), [image], tmp_path / "plain", 16, progress=False,
                          pad_to_stride=False)
    flip = InferenceMode("multi-scale", scales=(1.0,), flip=True)
    model = RecordingModel(sides, space=space)
    tta = predict(model, [image], tmp_path / "tta", 16, flip, progress=False, pad_to_stride=False)
    expected = np.where(np.arange(16) < 8, 5, 6)[None].repeat(8, 0)
    np.testing.assert_array_equal(np.asarray(Image.open(plain[0])), expected)
    np.testing.assert_array_equal(np.asarray(Image.open(tta[0])), expected)
    assert len(model.shapes) == 2  # the image and its mirror
    unswapped = RecordingModel(sides, space=space_from_names("plain", [f"c{i}" for i in range(9)], "test"))
    [out] = predict(unswapped, [image], tmp_path / "unswapped", 16, flip, progress=False, pad_to_stride=False)
    assert set(np.unique(np.asarray(Image.open(out)))) == {5}  # without the swap, each pixel ties 5 and 6


def test_bilinear_logits_to_the_mask_size_without_padding(tmp_path):
    """No padding: logits resized straight from the input size to the mask size (align_corners=False)."""
    captured = {}

    def ramp(images: torch.Tensor) -> torch.Tensor:
        x = torch.linspace(-1, 1, images.shape[-1]).expand(images.shape[0], 1, images.shape[2], -1)
        captured["logits"] = torch.cat([x, -x], 1)
        return captured["logits"]

    model = RecordingModel(ramp, classes=2)
    [out] = run_inference(model, [frame(tmp_path, "a", (50, 30))], tmp_path / "out", 20, progress=False,
                          pad_to_stride=False)
    expected = F.interpolate(captured["logits"], size=(30, 50), mode="bilinear", align_corners=False)[0].argmax(0)
    np.testing.assert_array_equal(np.asarray(Image.open(out)), expected.numpy())
