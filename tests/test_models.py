"""Model adapters: the kinds and their dispatch, Hugging Face SegFormer (other families: test_models_hf.py; checkpoint:
test_checkpoint.py; TorchScript: test_torchscript.py), and output_space, each with what it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from model_fixtures import make_segformer, refused

from segbench.models import load_model, model_kinds, output_space
from segbench.models.base import Normalization
from segbench.protocols.definitions import load_benchmark, load_label_space


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("painting-vision")


def ade_names() -> list[str]:
    return load_label_space("ade20k").names


@pytest.fixture(scope="module")
def segformer_dir(tmp_path_factory):
    return make_segformer(tmp_path_factory.mktemp("segformer"), ade_names())


# --- Hugging Face SegFormer -----------------------------------------------------------


def test_segformer_loads_offline_and_gives_quarter_resolution_logits(segformer_dir, benchmark):
    model = load_model("hf-segformer", segformer_dir, benchmark, "ade20k", "cpu")
    assert (model.kind, model.stride, model.label_space) == ("hf-segformer", 32, benchmark.space("ade20k"))
    assert model.normalization == Normalization(
        tuple(m / (1 / 255) for m in (0.485, 0.456, 0.406)), tuple(s / (1 / 255) for s in (0.229, 0.224, 0.225))
    )
    with torch.inference_mode():
        logits = model.logits(torch.rand(2, 3, 64, 96) * 255)
    assert logits.shape == (2, 150, 16, 24)


def test_segformer_infers_an_exactly_matching_space(segformer_dir, benchmark):
    assert load_model("hf-segformer", segformer_dir, benchmark, None, "cpu").label_space.name == "ade20k"


def _fake_segformer(folder: Path, config: dict | None, weights: bool = True, preprocessor: bool = True) -> Path:
    folder.mkdir()
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
    if weights:
        (folder / "model.safetensors").write_bytes(b"")
    if preprocessor:
        (folder / "preprocessor_config.json").write_text("{}")
    return folder


def test_segformer_folder_errors(tmp_path, benchmark):
    def load(folder, space="ade20k"):
        return refused(load_model, "hf-segformer", folder, benchmark, space, "cpu")

    labels = {str(i): n for i, n in enumerate(ade_names())}
    assert load(tmp_path / "absent") == f"{tmp_path / 'absent'}: Hugging Face model folder not found"
    folder = _fake_segformer(tmp_path / "no-config", None)
    assert load(folder) == f"{folder / 'config.json'}: missing: a Hugging Face model folder needs config.json"
    folder = _fake_segformer(tmp_path / "bert", {"model_type": "bert", "id2label": labels})
    assert load(folder).startswith(
        f"{folder / 'config.json'}: model_type 'bert' is not a semantic or universal segmentation model "
        "(supported: ['beit', 'data2vec-vision', 'dpt', 'mask2former', 'maskformer', "
    )
    folder = _fake_segformer(tmp_path / "no-labels", {"model_type": "segformer"})
    assert load(folder) == (
        f"{folder / 'config.json'}: field 'id2label' is missing or empty; the model's classes must be named"
    )
    folder = _fake_segformer(tmp_path / "no-weights", {"model_type": "segformer", "id2label": labels}, weights=False)
    assert load(folder) == (
        f"{folder}: no weights file (expected one of ['model.safetensors', 'model.safetensors.index.json', "
        "'pytorch_model.bin', 'pytorch_model.bin.index.json'])"
    )
    folder = _fake_segformer(tmp_path / "no-pre", {"model_type": "segformer", "id2label": labels}, preprocessor=False)
    assert load(folder) == (
        f"{folder / 'preprocessor_config.json'}: missing: a Hugging Face model folder needs preprocessor_config.json"
    )
    folder = _fake_segformer(tmp_path / "other-space", {"model_type": "segformer", "id2label": labels})
    assert load(folder, "coco") == (
        f"{folder}: label space 'coco' is not one of benchmark 'painting-vision''s label spaces "
        "['ade20k', 'painting-vision-10', 'painting-vision-tier1']"
    )


def test_segformer_names_matching_nothing(tmp_path, benchmark):
    folder = _fake_segformer(tmp_path / "m", {"model_type": "segformer", "id2label": {"0": "sky", "1": "road"}})
    assert refused(load_model, "hf-segformer", folder, benchmark, "ade20k", "cpu") == (
        f"{folder}: none of the model's id2label names match the benchmark's mapping from 'ade20k' to "
        "'painting-vision-tier1': expected some of ['wall', 'window', 'windowpane']"
    )


def test_segformer_names_missing_one_rule(tmp_path, benchmark):
    folder = _fake_segformer(tmp_path / "m", {"model_type": "segformer", "id2label": {"0": "wall", "1": "sky"}})
    assert refused(load_model, "hf-segformer", folder, benchmark, "ade20k", "cpu") == (
        f"{folder}: the model's classes cannot be scored: {benchmark.source}: mapping ade20k -> "
        "painting-vision-tier1: none of ['windowpane', 'window'] (for 'window') is a class of 'ade20k'"
    )


def test_segformer_weights_that_do_not_fit(tmp_path, segformer_dir, benchmark):
    folder = tmp_path / "m"
    folder.mkdir()
    for name in ("config.json", "model.safetensors", "preprocessor_config.json"):
        (folder / name).write_bytes((segformer_dir / name).read_bytes())
    config = json.loads((folder / "config.json").read_text())
    config["hidden_sizes"] = [8, 16, 24, 40]
    (folder / "config.json").write_text(json.dumps(config))
    assert refused(load_model, "hf-segformer", folder, benchmark, "ade20k", "cpu").startswith(
        f"{folder / 'model.safetensors'}: cannot load the segformer weights: "
    )


# --- registry and dispatch ------------------------------------------------------------


def test_unknown_kind():
    assert refused(load_model, "caffe", Path("m.caffemodel"), None, None, "cpu") == (
        "unknown model kind 'caffe' (kinds: ['checkpoint', 'torchscript', 'onnx', 'hf', 'hf-segformer']; "
        "'predictions' is scored directly)"
    )
    assert model_kinds() == ["checkpoint", "torchscript", "onnx", "hf", "hf-segformer"]


# --- output_space: the label space without loading weights ----------------------------


def test_output_space_agrees_with_the_loaded_models(model_files, segformer_dir, benchmark, pv10):
    for kind, path, name in [
        ("checkpoint", model_files / "tiny.pt", None),
        ("torchscript", model_files / "tiny.ts", None),
        ("hf-segformer", segformer_dir, "ade20k"),
    ]:
        assert output_space(kind, path, benchmark, name) == load_model(kind, path, benchmark, name, "cpu").label_space
    assert output_space("checkpoint", model_files / "tiny.pt", benchmark) is pv10
    assert output_space("predictions", Path("preds"), benchmark, "ade20k") is benchmark.space("ade20k")


def test_output_space_errors(model_files, tmp_path, benchmark):
    assert refused(output_space, "predictions", Path("preds"), benchmark, None) == (
        "preds: a predictions folder must name the label space of its masks "
        "(one of ['ade20k', 'painting-vision-10', 'painting-vision-tier1'])"
    )
    assert refused(output_space, "predictions", Path("preds"), benchmark, "coco") == (
        "preds: benchmark 'painting-vision' has no label space 'coco' "
        "(it has ['ade20k', 'painting-vision-10', 'painting-vision-tier1'])"
    )
    assert refused(output_space, "caffe", Path("m.caffemodel"), benchmark, None) == (
        "unknown model kind 'caffe' (kinds: ['checkpoint', 'torchscript', 'onnx', 'hf', 'hf-segformer', 'predictions'])"
    )
    assert refused(output_space, "torchscript", model_files / "tiny.pt", benchmark, None) == (
        f"{model_files / 'tiny.pt'}: not a TorchScript archive (torch.jit.save): no constants.pkl "
        "(it looks like a torch.save file: use model kind 'checkpoint')"
    )
    text = tmp_path / "notes.ts"
    text.write_text("hello\n")
    assert refused(output_space, "torchscript", text, benchmark, None) == (
        f"{text}: not a TorchScript archive (torch.jit.save): File is not a zip file"
    )
    assert refused(output_space, "checkpoint", model_files / "tiny.pt", benchmark, "ade20k") == (
        f"{model_files / 'tiny.pt'}: the checkpoint's label space is 'painting-vision-10', but 'ade20k' was requested"
    )
