"""Inference modes against straightforward reference implementations written here: an explicit
window loop for `slide`, explicit resize-and-average for `multi-scale` (with flip)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from segbench.core.model_spec import InferenceMode, ModelSpec
from segbench.datasets.base import Frame
from segbench.models.base import Normalization, SegmentationModel
from segbench.protocols.definitions import load_label_space
from segbench.stages.inference import run_inference
from segbench.stages.inference_modes import predict, windows

MEAN, STD = (120.0, 110.0, 100.0), (60.0, 50.0, 70.0)


class ConvModel(SegmentationModel):
    """A fixed random 3x3 convolution, then 2x2 average pooling: logits at half resolution,
    position-dependent, so window edges and padding show in the results."""

    kind = "fake"

    def __init__(self, space, stride: int = 4, seed: int = 0, output: str = "logits", square: bool = False):
        generator = torch.Generator().manual_seed(seed)
        self.weight = torch.randn(space.size, 3, 3, 3, generator=generator)
        self.bias = torch.randn(space.size, generator=generator)
        self.source = Path("conv-model")
        self.label_space = space
        self.stride = stride
        self.device = torch.device("cpu")
        self.normalization = Normalization(MEAN, STD)
        self.output, self.square = output, square
        self.calls = 0

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return reference_logits(self, images)


def reference_logits(model: ConvModel, images: torch.Tensor) -> torch.Tensor:
    mean, std = torch.tensor(MEAN).view(1, 3, 1, 1), torch.tensor(STD).view(1, 3, 1, 1)
    return F.avg_pool2d(F.conv2d((images - mean) / std, model.weight, model.bias, padding=1), 2)


def write_frame(root: Path, name: str, image_hw: tuple[int, int], label_hw: tuple[int, int], seed: int) -> Frame:
    rng = np.random.default_rng(seed)
    image, label = root / "images" / f"{name}.png", root / "labels" / f"{name}.png"
    for path in (image, label):
        path.parent.mkdir(parents=True, exist_ok=True)
    # smooth random images: a few blobs, so that classes form regions rather than noise
    low = rng.integers(0, 256, (4, 5, 3)).astype(np.uint8)
    Image.fromarray(low).resize(image_hw[::-1], Image.BILINEAR).save(image)
    Image.fromarray(np.zeros(label_hw, np.uint8)).save(label)
    return Frame(name, "g", "test", image, label)


def rgb_tensor(frame: Frame) -> torch.Tensor:
    return torch.from_numpy(np.asarray(Image.open(frame.image).convert("RGB")).astype(np.float32)).permute(2, 0, 1)


def padded_with_mean(image: torch.Tensor, stride: int, square: bool = False) -> torch.Tensor:
    h, w = image.shape[1:]
    ph, pw = (max(h, w),) * 2 if square else (h, w)
    out = torch.tensor(MEAN).view(3, 1, 1).expand(3, -ph // stride * -stride, -pw // stride * -stride).clone()
    out[:, :h, :w] = image
    return out


def model_at(model: ConvModel, image: torch.Tensor) -> torch.Tensor:
    """(C, h, w) logits of one (3, h, w) image: padded, run, upsampled to the padded size, cropped."""
    padded = padded_with_mean(image, model.stride, model.square)
    logits = reference_logits(model, padded[None])
    up = F.interpolate(logits, size=padded.shape[1:], mode="bilinear", align_corners=False)[0]
    return up[:, : image.shape[1], : image.shape[2]]


def starts(length: int, crop: int, stride: int) -> list[int]:
    """Window starts every `stride`, the last one moved back to end at the edge."""
    positions = list(range(0, max(length - crop, 0) + 1, stride))
    if positions[-1] + crop < length:
        positions.append(length - crop)
    return positions


def reference_slide(model: ConvModel, frame: Frame, crop, stride) -> np.ndarray:
    image = rgb_tensor(frame)  # the frames are made at the inference size: no input resize
    _, h, w = image.shape
    total = torch.zeros(model.label_space.size, h, w, dtype=torch.float64)
    count = torch.zeros(h, w, dtype=torch.float64)
    for top in starts(h, crop[0], stride[0]):
        for left in starts(w, crop[1], stride[1]):
            bottom, right = min(top + crop[0], h), min(left + crop[1], w)
            total[:, top:bottom, left:right] += model_at(model, image[:, top:bottom, left:right]).double()
            count[top:bottom, left:right] += 1
    averaged = (total / count).float()
    target = Image.open(frame.label).size[::-1]
    return F.interpolate(averaged[None], size=target, mode="bilinear", align_corners=False)[0].argmax(0).numpy()


def scaled_size(h: int, w: int, size: int) -> tuple[int, int]:
    long, short = max(h, w), min(h, w)
    other = max(1, int(np.floor(short * size / long + 0.5)))
    return (size, other) if h >= w else (other, size)


def reference_multi_scale(model: ConvModel, frame: Frame, size: int, scales, flip: bool) -> np.ndarray:
    image = rgb_tensor(frame)
    target = Image.open(frame.label).size[::-1]
    mirror = model.label_space.mirrored_ids()
    total = 0
    views = 0
    for scale in scales:
        hw = scaled_size(*image.shape[1:], max(1, round(scale * size)))
        shrinking = hw[0] < image.shape[1] or hw[1] < image.shape[2]
        resized = image if hw == tuple(image.shape[1:]) else F.interpolate(
            image[None], size=hw, mode="bilinear", align_corners=False, antialias=shrinking)[0]
        for mirrored in (False, True) if flip else (False,):
            logits = model_at(model, resized.flip(-1) if mirrored else resized)
            if mirrored:
                logits = logits.flip(-1)[list(mirror)]
            at_target = F.interpolate(logits[None], size=target, mode="bilinear", align_corners=False)[0]
            total = total + (at_target if model.output == "scores" else at_target.softmax(0))
            views += 1
    return (total / views).argmax(0).numpy()


def read(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path))


def test_windows_as_placed_by_hand():
    assert windows(10, 7, (4, 4), (3, 3)) == [
        (0, 4, 0, 4), (0, 4, 3, 7), (3, 7, 0, 4), (3, 7, 3, 7), (6, 10, 0, 4), (6, 10, 3, 7)
    ]
    assert windows(11, 4, (4, 4), (3, 3)) == [(0, 4, 0, 4), (3, 7, 0, 4), (6, 10, 0, 4), (7, 11, 0, 4)]
    assert windows(3, 5, (4, 8), (2, 2)) == [(0, 3, 0, 5)]  # smaller than the crop: one window, its own size


@pytest.mark.parametrize(
    "image_hw, label_hw, crop, stride",
    [((40, 56), (40, 56), (24, 24), (16, 16)), ((56, 30), (71, 38), (20, 16), (12, 10)), ((18, 22), (18, 22), (32, 32), (8, 8))],
    ids=["overlap", "odd-sizes-target-larger", "frame-smaller-than-crop"],
)
def test_slide_equals_an_explicit_window_loop(tmp_path, image_hw, label_hw, crop, stride):
    space = load_label_space("painting-vision-10")
    frames = [write_frame(tmp_path, f"f{i}", image_hw, label_hw, seed=i) for i in range(2)]
    model = ConvModel(space)
    mode = InferenceMode("slide", crop=crop, stride=stride)
    outputs = predict(model, frames, tmp_path / "out", max(image_hw), mode, batch_size=3, progress=False)
    for frame, out in zip(frames, outputs):
        expected = reference_slide(model, frame, crop, stride)
        assert read(out).shape == label_hw
        np.testing.assert_array_equal(read(out), expected)


def test_slide_pads_windows_to_a_square_for_square_input_models(tmp_path):
    space = load_label_space("painting-vision-10")
    frames = [write_frame(tmp_path, "f", (40, 56), (40, 56), seed=5)]
    model = ConvModel(space, square=True)
    [out] = predict(model, frames, tmp_path / "out", 56, InferenceMode("slide", crop=(24, 32), stride=(16, 16)),
                    progress=False)
    np.testing.assert_array_equal(read(out), reference_slide(model, frames[0], (24, 32), (16, 16)))


def test_slide_with_one_window_covering_the_frame_is_whole(tmp_path):
    space = load_label_space("painting-vision-10")
    frames = [write_frame(tmp_path, "f", (40, 56), (40, 56), seed=3)]
    whole = run_inference(ConvModel(space), frames, tmp_path / "whole", 56, progress=False)
    slide = predict(ConvModel(space), frames, tmp_path / "slide", 56, InferenceMode("slide", crop=(40, 56), stride=(40, 56)),
                    progress=False)
    np.testing.assert_array_equal(read(whole[0]), read(slide[0]))


@pytest.mark.parametrize(
    "flip, output, square",
    [(False, "logits", False), (True, "logits", False), (True, "scores", False), (False, "logits", True)],
    ids=["plain", "flip", "flip-scores-averaged-as-they-are", "square-inputs"],
)
def test_multi_scale_equals_explicit_resize_and_average(tmp_path, flip, output, square):
    space = load_label_space("easyportrait-9")  # has left/right classes: the flip must swap them
    assert list(space.mirrored_ids()) != list(range(space.size))
    frames = [write_frame(tmp_path, f"f{i}", (45, 60), (90, 120), seed=10 + i) for i in range(2)]
    model = ConvModel(space, output=output, square=square)
    scales = (0.5, 0.75, 1.25)
    mode = InferenceMode("multi-scale", scales=scales, flip=flip)
    outputs = predict(model, frames, tmp_path / "out", 48, mode, progress=False)
    assert model.calls == len(frames) * len(scales) * (2 if flip else 1)
    for frame, out in zip(frames, outputs):
        np.testing.assert_array_equal(read(out), reference_multi_scale(model, frame, 48, scales, flip))


def record(name: str, miou: float, inference: dict | None) -> dict:
    return {
        "benchmark": "painting-vision", "benchmark_version": "1.0", "taxonomy_version": "1.0",
        "dataset_id": "pv1:" + "0" * 64, "split": "test", "checkpoint_sha256": "1" * 64,
        "shared_metrics": {"mIoU": miou}, "model": {"name": name, "kind": "checkpoint", "label_space": "pv"},
        "inference_size": 640, "inference": inference, "frames": 4, "pixels_evaluated": 10,
        "pixels_predicted_void": 0,
        "floor": {"metric": "shared_metrics.mIoU", "value": 0.1, "beaten": True, "difference": miou - 0.1,
                  "low": miou - 0.15, "high": miou - 0.05, "units": 8, "unit": "wall_id", "verdict": "yes"},
        "tool": {"name": "segbench"},
    }


def test_leaderboard_shows_the_mode_and_marks_groups_that_mix_modes():
    from segbench.stages import leaderboard, results_markdown, results_page

    whole = InferenceMode().record(640)
    slide = InferenceMode("slide", crop=(512, 512), stride=(341, 341)).record(640)
    same = leaderboard.build([record("a", 0.5, whole), record("b", 0.6, whole)], [])
    mixed = leaderboard.build([record("a", 0.5, whole), record("b", 0.6, slide)], [])
    # the floor's row comes from the records' floor block; it has no inference mode
    assert [(row["model"], row["inference"]) for row in mixed[0]["rows"]] == [
        ("b", "slide 640 crop 512x512 stride 341x341"), ("a", "whole 640"), ("floor", None)]
    assert "shared_metrics.inference" not in mixed[0]["rows"][0]
    assert "different inference modes" not in results_markdown.to_markdown(same)
    assert "rows use different inference modes" in results_markdown.to_markdown(mixed)
    assert "rows use different inference modes" in results_page.to_html(mixed)
    ms = InferenceMode("multi-scale", scales=(0.5, 1.0), flip=True).record(512)
    assert leaderboard.inference_text(ms) == "multi-scale 512 x[0.5, 1.0] +flip"


def test_a_configured_mode_reaches_the_cli_and_the_record(tmp_path):
    """A model entry -> `segbench infer --model-spec` (what the workflow's rules pass) runs the
    mode; the record's inference block names it."""
    import json

    from segbench.commands.cli import main
    from segbench.core.model_spec import shard_of
    from segbench.datasets import read_dataset
    from segbench.models import load_model
    from segbench.protocols.definitions import load_benchmark
    from segbench.steps.submission import inference_record

    root = Path(__file__).parents[1]
    entry = {"kind": "checkpoint", "path": str(root / "artifacts/best.pt"), "label_space": "painting-vision-10",
             "inference": {"mode": "slide", "crop": 320, "stride": [200, 213]}}
    assert main(["infer", "--model-spec", json.dumps({"name": "best-slide", **entry}), "--data", str(root / "data"),
                 "--split", "test", "--shard", "0", "--shards", "8", "--out", str(tmp_path / "cli"), "--quiet"]) == 0
    benchmark = load_benchmark("painting-vision")
    frames = [f for f in read_dataset(benchmark, root / "data") if f.split == "test" and shard_of(f.frame_id, 8) == 0]
    mode = InferenceMode("slide", crop=(320, 320), stride=(200, 213))
    model = load_model("checkpoint", root / "artifacts/best.pt", benchmark, None, "cpu")
    direct = predict(model, frames, tmp_path / "direct", 640, mode, progress=False)
    assert frames and sorted(p.name for p in (tmp_path / "cli").iterdir()) == sorted(f.prediction for f in frames)
    for frame, expected in zip(frames, direct):
        np.testing.assert_array_equal(read(tmp_path / "cli" / frame.prediction), read(expected))
    assert inference_record(ModelSpec.from_entry("best-slide", entry), benchmark) == (
        640, {"mode": "slide", "size": 640, "crop": [320, 320], "stride": [200, 213], "scales": None, "flip": False}
    )
