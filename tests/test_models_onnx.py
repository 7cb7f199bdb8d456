"""The `onnx` kind: the exported embedded model gives the PyTorch model's masks on every embedded
frame, and what the kind refuses (custom operators, wrong output rank, missing metadata, ...)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper
from PIL import Image

from segbench.commands.cli import main
from segbench.datasets import read_dataset
from segbench.errors import SegbenchError
from segbench.models import load_model, output_space
from segbench.protocols.definitions import load_benchmark
from segbench.stages.inference import load_batch, run_inference
from segbench.stages.inference_geometry import frame_geometry
from segbench.stages.inference_resize import bilinear

ROOT = Path(__file__).parents[1]
IR_VERSION = 8  # onnx writes its newest IR version by default; onnxruntime reads up to an older one
NORM = {"mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25]}


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("painting-vision")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("onnx") / "best.onnx"
    assert main(["export-onnx", "--checkpoint", str(ROOT / "artifacts/best.pt"), "--out", str(out)]) == 0
    return out


def refused(*args, **kwargs) -> str:
    with pytest.raises(SegbenchError) as info:
        load_model(*args, **kwargs)
    return str(info.value)


@pytest.mark.parametrize(
    "name, data, checkpoint, count",
    [("painting-vision", "data", "best.pt", 56), ("idd20k-icvgip2020", "data-idd", "idd-best.pt", 12),
     ("easyportrait", "data-easyportrait", "easyportrait-best.pt", 16)],
)
def test_exported_model_gives_the_same_masks_on_every_embedded_frame(tmp_path, name, data, checkpoint, count):
    """Every frame of every split of the three embedded datasets: every pixel where the masks
    differ is a tie. The two runtimes sum the same convolutions in different orders, so their
    logits differ by float rounding (~1e-6); a pixel can flip only where the two best classes'
    scores at the ground-truth pixel are that close (gap below 1e-4 in both runtimes' scores).
    How many such ties flip depends on the CPU's kernels: 0 / 1 / 1 of 15.0 / 18.0 / 19.7 M
    pixels on the development machine, 0 / 5 / 0 on CI's; more than one in a million would
    be no longer rounding."""
    benchmark = load_benchmark(name)
    frames = read_dataset(benchmark, ROOT / data)
    exported = tmp_path / "model.onnx"
    assert main(["export-onnx", "--benchmark", name, "--checkpoint", str(ROOT / "artifacts" / checkpoint),
                 "--out", str(exported)]) == 0
    torch_model = load_model("checkpoint", ROOT / "artifacts" / checkpoint, benchmark, None, "cpu")
    onnx_model = load_model("onnx", exported, benchmark, None, "cpu")
    assert (onnx_model.label_space, onnx_model.normalization, onnx_model.stride) == (
        torch_model.label_space, torch_model.normalization, torch_model.stride
    )
    size, pad = benchmark.inference_size, benchmark.pad_to_stride
    a = run_inference(torch_model, frames, tmp_path / "torch", size, progress=False, pad_to_stride=pad)
    b = run_inference(onnx_model, frames, tmp_path / "onnx", size, progress=False, pad_to_stride=pad)
    differing = pixels = 0
    for frame, x, y in zip(frames, a, b):
        where = np.argwhere(np.asarray(Image.open(x)) != np.asarray(Image.open(y)))
        differing += len(where)
        pixels += np.asarray(Image.open(x)).size
        for model in (torch_model, onnx_model) if len(where) else ():
            for gap in top_two_gaps(model, frame, size, pad, where):
                assert gap < 1e-4, (frame.frame_id, gap)
    assert len(frames) == count and differing * 1_000_000 <= pixels


def top_two_gaps(model, frame, size: int, pad: bool, pixels: np.ndarray) -> list[float]:
    """The gap between the two best classes' scores at these ground-truth pixels, as the
    pipeline computes them (logits resized to the padded input, cropped, resized to the target)."""
    geometry = frame_geometry(frame, size, model.stride if pad else 1)
    with torch.inference_mode():
        logits = model.logits(load_batch([frame], [geometry], [0], model.pad_value))[0].float()
        height, width = geometry.input
        cropped = bilinear(logits, geometry.padded, (0, height), (0, width))
        gaps = []
        for row, col in pixels:
            scores = bilinear(cropped, geometry.target, (row, row + 1), (col, col + 1))[:, 0, 0]
            best = scores.topk(2).values
            gaps.append(float(best[0] - best[1]))
    return gaps


def test_metadata_written_by_export(exported, benchmark):
    props = {p.key: p.value for p in onnx.load(str(exported)).metadata_props}
    doc = json.loads(props["segbench"])
    assert doc == {
        "format": "segbench-onnx", "format_version": 1,
        "label_space": {"name": "painting-vision-10", "classes": benchmark.space("painting-vision-10").names},
        "normalization": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
        "stride": 8,
    }
    assert output_space("onnx", exported, benchmark) is benchmark.space("painting-vision-10")


def graph(tmp_path: Path, name: str, node, output_shape, domain: str = "") -> Path:
    """A one-node graph x (N, 3, H, W) -> y, saved without segbench metadata."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, output_shape)
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(helper.make_graph([node], "g", [x], [y]), opset_imports=opsets, ir_version=IR_VERSION)
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def ten_channels(tmp_path: Path) -> Path:
    """Tiles the 3 channels to 9, plus their sum: 10 'classes', no metadata."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10, "H", "W"])
    nodes = [
        helper.make_node("Concat", ["x", "x", "x"], ["t"], axis=1),
        helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=1),
        helper.make_node("Concat", ["t", "s"], ["y"], axis=1),
    ]
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [axes]), opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=IR_VERSION)
    path = tmp_path / "ten.onnx"
    onnx.save(model, str(path))
    return path


def test_file_without_metadata_takes_the_config(tmp_path, benchmark):
    path = ten_channels(tmp_path)
    model = load_model("onnx", path, benchmark, "painting-vision-10", "cpu", normalization=NORM, stride=4)
    images = torch.rand(1, 3, 8, 12) * 255
    normalised = (images - 127.5) / 63.75
    expected = torch.cat([normalised] * 3 + [normalised.sum(1, keepdim=True)], 1)
    torch.testing.assert_close(model.logits(images), expected)
    assert refused("onnx", path, benchmark, "painting-vision-10", "cpu", stride=4) == (
        f"{path}: no normalization: the file has no segbench metadata; give 'normalization' in the model's config entry"
    )
    assert refused("onnx", path, benchmark, "ade20k", "cpu", normalization=NORM, stride=4) == (
        f"{path}: the model outputs 10 classes, but label space 'ade20k' has 150"
    )
    assert refused("onnx", path, benchmark, "painting-vision-10", "cpu", normalization=NORM, stride=2**24) == (
        f"{path}: field 'stride' 16777216 is above the limit of 1024"  # refused before the probe pads to it
    )


def test_config_that_contradicts_the_metadata(exported, benchmark):
    assert refused("onnx", exported, benchmark, None, "cpu", stride=16) == (
        f"{exported}: the config's stride 16 differs from the file's 8"
    )
    assert refused("onnx", exported, benchmark, "ade20k", "cpu") == (
        f"{exported}: the model's label space is 'painting-vision-10', but 'ade20k' was requested"
    )


def test_custom_operator_is_refused(tmp_path, benchmark):
    path = graph(tmp_path, "custom", helper.make_node("FancySegment", ["x"], ["y"], domain="com.example"),
                 ["N", 10, "H", "W"], domain="com.example")
    assert refused("onnx", path, benchmark, "painting-vision-10", "cpu", normalization=NORM, stride=4) == (
        f"{path}: refused: custom operators ['com.example::FancySegment'] (only the standard ONNX operators "
        "run here; export without custom ops)"
    )


def test_wrong_output_rank_is_refused(tmp_path, benchmark):
    reduce = helper.make_node("ReduceMax", ["x"], ["y"], keepdims=0, axes=[1])
    path = graph(tmp_path, "rank3", reduce, ["N", "H", "W"])
    assert refused("onnx", path, benchmark, "painting-vision-10", "cpu", normalization=NORM, stride=4) == (
        f"{path}: wrong output rank: the first output must be (N, C, h, w) per-class logits (rank 4), "
        "this one has rank 3"
    )


def test_not_an_onnx_file(tmp_path, benchmark):
    text = tmp_path / "notes.onnx"
    text.write_bytes(b"\x00\xffnot a protobuf at all")
    assert refused("onnx", text, benchmark, "painting-vision-10", "cpu").startswith(f"{text}: not an ONNX model")
    assert refused("onnx", tmp_path / "absent.onnx", benchmark, None, "cpu") == f"{tmp_path / 'absent.onnx'}: ONNX model not found"
    checkpoint = ROOT / "artifacts/best.pt"
    assert refused("onnx", checkpoint, benchmark, None, "cpu").startswith(f"{checkpoint}: not an ONNX model")


def test_normalization_in_config_for_other_kinds_is_refused(benchmark):
    assert refused("checkpoint", ROOT / "artifacts/best.pt", benchmark, None, "cpu", stride=8) == (
        f"{ROOT / 'artifacts/best.pt'}: normalization and stride are given by kind 'checkpoint' itself, not by the config"
    )
