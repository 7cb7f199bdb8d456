"""Inference: the protocol's resize, pad, crop and resize-to-ground-truth rules, batching, outputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from inference_fixtures import FakeModel, png_bytes, random_rgb, read_png, write_frame
from model_fixtures import make_segformer

from segbench.core.model_spec import InferenceMode
from segbench.errors import SegbenchError
from segbench.io.limits import LIMITS
from segbench.protocols.definitions import load_benchmark, load_label_space
from segbench.stages.inference import run_inference
from segbench.stages.inference_geometry import frame_geometry
from segbench.stages.inference_modes import predict
from segbench.models import load_model
from segbench.models.architectures import build
from segbench.models.checkpoint import save_checkpoint
from segbench.models.torchscript import save_torchscript

NORM = {"mean": [0.5, 0.25, 0.75], "std": [0.25, 0.5, 0.125]}


# --- exact geometry through run_inference --------------------------------------------


def test_padding_is_mean_and_is_cropped_exactly(tmp_path):
    """A frame already at the inference size goes in unresampled, padded with the mean.

    The fake model predicts the strongest normalised channel, and class 3 wherever the input is
    padding (all channels 0 after normalising): none of it may reach the mask.
    """
    mean = (100.0, 110.0, 120.0)
    rgb = random_rgb(470, 600, 3)
    rgb[0, 0] = (0, 0, 0)

    def fn(x):
        pad = torch.where((x == 0).all(dim=1, keepdim=True), 1000.0, -1000.0)
        return torch.cat([x, pad], dim=1)

    model = FakeModel(4, 32, fn, mean=mean)
    frame = write_frame(tmp_path / "data", "f1", rgb)
    [out] = run_inference(model, [frame], tmp_path / "out", inference_size=600, progress=False)
    assert out == tmp_path / "out" / "f1.png"
    [batch] = model.inputs
    assert batch.shape == (1, 3, 480, 608)
    assert torch.equal(batch[0, :, :470, :600], torch.from_numpy(rgb).permute(2, 0, 1).float())
    padding = torch.tensor(mean).view(3, 1, 1)
    assert torch.equal(batch[0, :, 470:, :], padding.expand(3, 10, 608))
    assert torch.equal(batch[0, :, :, 600:], padding.expand(3, 480, 8))
    expected = np.argmax(rgb.astype(np.float32) - np.array(mean, dtype=np.float32), axis=2).astype(np.uint8)
    assert np.array_equal(read_png(out), expected)


def _position_logits(factor: int, tx: float, ty: float):
    """Logits at 1/factor resolution: [0, x - tx, y - ty] with x, y the padded-input position of
    each logit cell's centre; bilinear upsampling reproduces them exactly away from the edges."""

    def fn(x):
        n, _, height, width = x.shape
        u = torch.arange(width // factor, dtype=torch.float32) * factor + (factor - 1) / 2
        v = torch.arange(height // factor, dtype=torch.float32) * factor + (factor - 1) / 2
        ch1 = (u - tx).view(1, 1, 1, -1).expand(n, 1, height // factor, width // factor)
        ch2 = (v - ty).view(1, 1, -1, 1).expand(n, 1, height // factor, width // factor)
        return torch.cat([torch.zeros_like(ch1), ch1, ch2], dim=1)

    return fn


def _axis(n_target: int, n_input: int, n_padded: int, factor: int, t: float) -> np.ndarray:
    """The protocol's two resizes along one axis, in float64: logits -> padded input, crop, -> target."""
    n_logits = n_padded // factor
    x = np.arange(n_input)
    s1 = np.clip((x + 0.5) * n_logits / n_padded - 0.5, 0, n_logits - 1)
    cropped = s1 * factor + (factor - 1) / 2 - t
    s2 = np.clip((np.arange(n_target) + 0.5) * n_input / n_target - 0.5, 0, n_input - 1)
    return np.interp(s2, x, cropped)


@pytest.mark.parametrize(
    ("image_hw", "label_hw", "size"),
    [
        ((600, 1000), (600, 1000), 500),  # shrink to the inference size, predict at full size
        ((517, 333), (517, 333), 640),  # odd sizes, enlarged
        ((300, 500), (450, 750), 500),  # ground truth at another size than the image: GT wins
    ],
)
def test_logits_follow_pad_crop_and_resize_exactly(tmp_path, image_hw, label_hw, size):
    tx, ty = 100.1, 60.3
    model = FakeModel(3, 32, _position_logits(4, tx, ty))
    frame = write_frame(tmp_path / "data", "f", random_rgb(*image_hw, 4), label_hw=label_hw)
    geometry = frame_geometry(frame, size, 32)
    [out] = run_inference(model, [frame], tmp_path / "out", inference_size=size, progress=False)
    columns = _axis(label_hw[1], geometry.input[1], geometry.padded[1], 4, tx)
    rows = _axis(label_hw[0], geometry.input[0], geometry.padded[0], 4, ty)
    stacked = np.stack(np.broadcast_arrays(np.zeros(label_hw), columns[None, :], rows[:, None]))
    ordered = np.sort(stacked, axis=0)
    assert (ordered[-1] - ordered[-2]).min() > 1e-2  # no near-ties: the expected mask is unambiguous
    mask = read_png(out)
    assert mask.shape == label_hw
    assert np.array_equal(mask, np.argmax(stacked, axis=0).astype(np.uint8))
    assert set(np.unique(mask)) == {0, 1, 2}


# --- real models ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    space = load_label_space("painting-vision-10")
    torch.manual_seed(0)
    net = build("tiny-segnet", {"widths": [4, 8, 8]}, space.size).eval()
    save_checkpoint(root / "tiny.pt", net, "tiny-segnet", {"widths": [4, 8, 8]}, space, NORM)
    save_torchscript(root / "tiny.ts", net, space, NORM, stride=8)
    benchmark = load_benchmark("painting-vision")
    return (
        load_model("checkpoint", root / "tiny.pt", benchmark, None, "cpu"),
        load_model("torchscript", root / "tiny.ts", benchmark, None, "cpu"),
    )


@pytest.fixture(scope="module")
def shard(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    frames = [write_frame(root, f"same{i}", random_rgb(96, 128, 10 + i)) for i in range(5)]
    frames.insert(2, write_frame(root, "other", random_rgb(100, 128, 20)))  # pads to another shape
    return frames


def test_batch_composition_does_not_change_masks(tiny_models, shard, tmp_path):
    model, _ = tiny_models
    together = png_bytes(run_inference(model, shard, tmp_path / "b4", 64, batch_size=4, progress=False))
    one_by_one = png_bytes(run_inference(model, shard, tmp_path / "b1", 64, batch_size=1, progress=False))
    alone = png_bytes(run_inference(model, shard[:1], tmp_path / "alone", 64, batch_size=4, progress=False))
    assert together == one_by_one
    assert alone["same0"] == together["same0"]
    assert [p.stem for p in (tmp_path / "b4").iterdir()] and sorted(together) == sorted(f.frame_id for f in shard)
    assert read_png(tmp_path / "b4" / "other.png").shape == (100, 128)
    assert not list((tmp_path / "b4").glob("*.partial"))


def test_checkpoint_and_torchscript_give_identical_masks(tiny_models, shard, tmp_path):
    ckpt, script = tiny_models
    a = png_bytes(run_inference(ckpt, shard, tmp_path / "ckpt", 64, progress=False))
    b = png_bytes(run_inference(script, shard, tmp_path / "ts", 64, progress=False))
    assert a == b
    assert len({read_png(tmp_path / "ckpt" / f"{k}.png").tobytes() for k in a}) == len(a)  # not constant masks


def test_segformer_end_to_end(tmp_path):
    folder = make_segformer(tmp_path / "segformer", load_label_space("ade20k").names)
    model = load_model("hf-segformer", folder, load_benchmark("painting-vision"), "ade20k", "cpu")
    frame = write_frame(tmp_path / "data", "f", random_rgb(60, 90, 5))
    [out] = run_inference(model, [frame], tmp_path / "out", 96, progress=False)
    mask = read_png(out)
    assert mask.shape == (60, 90) and mask.max() < 150


# --- failures -------------------------------------------------------------------------


def test_failure_leaves_no_outputs(tmp_path):
    calls = []

    def fn(x):
        calls.append(1)
        if len(calls) == 3:
            raise SegbenchError("boom")
        return x

    model = FakeModel(3, 8, fn)
    frames = [write_frame(tmp_path / "data", f"f{i}", random_rgb(16, 16, i)) for i in range(4)]
    out = tmp_path / "out"
    with pytest.raises(SegbenchError, match="^boom$"):
        run_inference(model, frames, out, 16, batch_size=1, progress=False)
    assert list(out.iterdir()) == []


def test_wrong_logit_shape_is_an_error(tmp_path):
    model = FakeModel(3, 8, lambda x: x[:, :2])
    frame = write_frame(tmp_path, "f", random_rgb(16, 16, 0))
    with pytest.raises(SegbenchError) as info:
        run_inference(model, [frame], tmp_path / "out", 16, progress=False)
    assert str(info.value) == "fake-model: the model returned logits of shape (1, 2, 16, 16), expected (1, 3, h, w)"


def test_missing_label_is_named(tmp_path):
    frame = write_frame(tmp_path, "f", random_rgb(16, 16, 0))
    frame.label.unlink()
    with pytest.raises(SegbenchError) as info:
        run_inference(FakeModel(3, 8, lambda x: x), [frame], tmp_path / "out", 16, progress=False)
    assert str(info.value) == f"{frame.label}: file not found"


def test_duplicate_frame_ids_and_too_many_classes(tmp_path):
    frame = write_frame(tmp_path, "f", random_rgb(16, 16, 0))
    with pytest.raises(SegbenchError, match="^frame id 'f' appears twice; each frame writes <frame_id>.png$"):
        run_inference(FakeModel(3, 8, lambda x: x), [frame, frame], tmp_path / "out", 16, progress=False)
    with pytest.raises(SegbenchError, match=r"^fake-model: 256 classes do not fit a uint8 mask \(at most 255\)$"):
        run_inference(FakeModel(256, 8, lambda x: x), [frame], tmp_path / "out", 16, progress=False)


def nan_on_frame(bad: int):
    """Logits that are the input, with NaN for the frame whose first pixel's red value is `bad`."""

    def fn(x):
        logits = x.clone()
        for row in range(x.shape[0]):
            if round(float(x[row, 0, 0, 0])) == bad:
                logits[row, 1, 3, 4] = float("nan")
        return logits

    return fn


def uniform_frames(root, count: int):
    """Frames whose every pixel is (i, i, i): frame i is told apart by its value."""
    return [write_frame(root, f"f{i}", np.full((16, 16, 3), i, np.uint8)) for i in range(count)]


@pytest.mark.parametrize("batch_size", [1, 3])
def test_non_finite_logits_are_refused_naming_the_frame(tmp_path, batch_size):
    frames = uniform_frames(tmp_path / "data", 3)
    out = tmp_path / "out"
    with pytest.raises(SegbenchError) as info:
        run_inference(FakeModel(3, 8, nan_on_frame(1)), frames, out, 16, batch_size=batch_size, progress=False)
    assert str(info.value) == ("fake-model: frame f1: the model's logits hold NaN or infinite values "
                               "(a broken model: its mask would be arbitrary)")
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("mode", [InferenceMode("slide", crop=(8, 8), stride=(8, 8)),
                                  InferenceMode("multi-scale", scales=(1.0,), flip=True)])
def test_non_finite_logits_are_refused_in_every_mode(tmp_path, mode):
    frames = uniform_frames(tmp_path / "data", 2)
    with pytest.raises(SegbenchError) as info:
        predict(FakeModel(3, 8, nan_on_frame(1)), frames, tmp_path / "out", 16, mode, progress=False)
    assert str(info.value).startswith("fake-model: frame f1: the model's logits hold NaN or infinite values")
    assert list((tmp_path / "out").glob("*")) == []


def test_a_model_that_raises_is_refused_naming_the_frames(tmp_path):
    def fn(x):
        if x.shape[-1] > 16:
            raise RuntimeError("The following operation failed in the TorchScript interpreter.\nTraceback of "
                               "TorchScript (most recent call last): ...\nbuiltins.RuntimeError: too large")
        return x

    frames = [write_frame(tmp_path / "data", f"f{i}", random_rgb(16, 24, i)) for i in range(2)]
    with pytest.raises(SegbenchError) as info:
        run_inference(FakeModel(3, 8, fn), frames, tmp_path / "out", 24, batch_size=2, progress=False)
    assert str(info.value) == ("fake-model: the model failed on frame(s) f0, f1 (input 16x24): "
                               "builtins.RuntimeError: too large")
    with pytest.raises(SegbenchError) as info:
        predict(FakeModel(3, 8, fn), frames[:1], tmp_path / "out", 24, InferenceMode("multi-scale", scales=(1.0,)),
                progress=False)
    assert str(info.value).startswith("fake-model: the model failed on frame(s) f0 (input 16x24): ")


def test_sizes_above_the_limits_are_refused_before_decoding(tmp_path):
    frame = write_frame(tmp_path, "f", random_rgb(16, 16, 0))
    with pytest.raises(SegbenchError) as info:
        run_inference(FakeModel(3, 8, lambda x: x), [frame], tmp_path / "out", LIMITS.max_inference_size + 1,
                      progress=False)
    assert str(info.value) == (f"inference size {LIMITS.max_inference_size + 1} is above the limit of "
                               f"{LIMITS.max_inference_size} (the long side a frame is resized to for the model)")
    with pytest.raises(SegbenchError) as info:
        predict(FakeModel(3, 8, lambda x: x), [frame], tmp_path / "out", 4096, InferenceMode("multi-scale", scales=(3.0,)),
                progress=False)
    assert str(info.value).startswith("inference size 12288 is above the limit of 8192")
    with pytest.raises(SegbenchError) as info:
        run_inference(FakeModel(3, 2**30, lambda x: x), [frame], tmp_path / "out", 16, progress=False)
    assert str(info.value) == f"fake-model: field 'stride' {2**30} is above the limit of {LIMITS.max_stride}"
