"""Inference: the protocol's resize, pad, crop and resize-to-ground-truth rules, batching, outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from test_models import make_segformer

from segbench.datasets.base import Frame
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark, load_label_space
from segbench.stages import inference_resize
from segbench.stages.inference import run_inference
from segbench.stages.inference_geometry import Geometry, frame_geometry, make_batches, padded_size, resized_size
from segbench.stages.inference_resize import bilinear, logits_to_mask
from segbench.models import load_model
from segbench.models.architectures import build
from segbench.models.base import Normalization, SegmentationModel, space_from_names
from segbench.models.checkpoint import save_checkpoint
from segbench.models.torchscript import save_torchscript

NORM = {"mean": [0.5, 0.25, 0.75], "std": [0.25, 0.5, 0.125]}


class FakeModel(SegmentationModel):
    """Logits computed by `fn` from the normalised batch; records every batch it is given."""

    kind = "fake"

    def __init__(self, classes: int, stride: int, fn, mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0)):
        self.source = Path("fake-model")
        self.label_space = space_from_names("fake", [f"c{i}" for i in range(classes)], "test")
        self.stride = stride
        self.device = torch.device("cpu")
        self.normalization = Normalization(tuple(mean), tuple(std))
        self.fn = fn
        self.inputs: list[torch.Tensor] = []

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        self.inputs.append(images.clone())
        return self.fn(self.normalization.apply(images))


def write_frame(root: Path, frame_id: str, rgb: np.ndarray, label_hw: tuple[int, int] | None = None) -> Frame:
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labels").mkdir(parents=True, exist_ok=True)
    image = root / "images" / f"{frame_id}.png"
    label = root / "labels" / f"{frame_id}.png"
    Image.fromarray(rgb).save(image)
    Image.fromarray(np.zeros(label_hw or rgb.shape[:2], dtype=np.uint8)).save(label)
    return Frame(frame_id, "wall-1", "test", image, label)


def random_rgb(height: int, width: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(height, width, 3), dtype=np.uint8)


def read_png(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        assert image.mode == "L"
        return np.asarray(image)


# --- resolution arithmetic ------------------------------------------------------------


@pytest.mark.parametrize(
    ("hw", "size", "expected"),
    [
        ((480, 640), 640, (480, 640)),  # already at the size
        ((500, 1000), 640, (320, 640)),  # landscape 1000x500 -> 640x320
        ((1000, 500), 640, (640, 320)),  # portrait
        ((517, 333), 640, (640, 412)),  # 333 * 640 / 517 = 412.22
        ((333, 517), 640, (412, 640)),
        ((5, 8), 4, (3, 4)),  # 2.5 rounds half up (Python's round would give 2)
        ((1, 1000), 640, (1, 640)),  # never below one pixel
        ((640, 640), 320, (320, 320)),
    ],
)
def test_resized_size(hw, size, expected):
    assert resized_size(*hw, size) == expected


def test_padded_size():
    assert padded_size(412, 640, 32) == (416, 640)
    assert padded_size(320, 640, 8) == (320, 640)
    assert padded_size(1, 1, 32) == (32, 32)


def test_frame_geometry_reads_headers(tmp_path):
    frame = write_frame(tmp_path, "f", random_rgb(517, 333, 0), label_hw=(600, 400))
    assert frame_geometry(frame, 640, 32) == Geometry((517, 333), (640, 412), (640, 416), (600, 400))


def test_batches_group_by_padded_shape_in_frame_order():
    a, b = (64, 96), (96, 64)
    shapes = [a, b, a, a, b, a, a]
    geometries = [Geometry(s, s, s, s) for s in shapes]
    assert make_batches(geometries, 2) == [[0, 2], [1, 4], [3, 5], [6]]  # full batches as they fill, then the rest
    assert make_batches(geometries, 1) == [[i] for i in range(7)]
    assert make_batches(geometries, 10) == [[0, 2, 3, 5, 6], [1, 4]]


# --- logit resampling -----------------------------------------------------------------


@pytest.mark.parametrize("out_size", [(20, 33), (5, 4), (7, 11), (3, 40)])
def test_bilinear_matches_interpolate(out_size):
    x = torch.randn(3, 7, 11, generator=torch.Generator().manual_seed(0))
    reference = F.interpolate(x[None], size=out_size, mode="bilinear", align_corners=False)[0]
    torch.testing.assert_close(bilinear(x, out_size), reference, rtol=0, atol=1e-5)


def test_bilinear_window_is_the_same_values():
    x = torch.randn(4, 9, 13, generator=torch.Generator().manual_seed(1))
    full = bilinear(x, (30, 41))
    assert torch.equal(bilinear(x, (30, 41), (3, 17), (5, 40)), full[:, 3:17, 5:40])
    assert torch.equal(bilinear(x, (9, 13)), x)  # the same size is the identity, exactly


def test_banding_does_not_change_the_mask(monkeypatch):
    logits = torch.randn(5, 20, 30, generator=torch.Generator().manual_seed(2))
    geometry = Geometry((40, 60), (40, 60), (48, 64), (97, 143))
    whole = logits_to_mask(logits, geometry)
    monkeypatch.setattr(inference_resize, "BAND_ELEMENTS", 5 * 200)  # a band of a few rows
    assert np.array_equal(logits_to_mask(logits, geometry), whole)
    assert whole.shape == (97, 143) and whole.dtype == np.uint8


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


def png_bytes(paths: list[Path]) -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in paths}


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
