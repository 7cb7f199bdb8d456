"""Model adapters: checkpoint, TorchScript and Hugging Face SegFormer (other families: test_models_hf.py), and what they refuse."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from torch import nn

from model_fixtures import make_segformer

from segbench.core.labels import LabelClass, LabelSpace
from segbench.errors import SegbenchError
from segbench.models import load_model, model_kinds, output_space
from segbench.models.architectures import build, known_architectures
from segbench.models.base import Normalization
from segbench.models.checkpoint import save_checkpoint
from segbench.models.torchscript import save_torchscript
from segbench.protocols.definitions import load_benchmark, load_label_space

NORM = {"mean": [0.5, 0.25, 0.75], "std": [0.25, 0.5, 0.125]}
WIDTHS = [4, 8, 8]
UNPICKLED: list[str] = []  # set if unpickling ever runs code from a refused file


def _mark() -> None:
    UNPICKLED.append("ran")


class Payload:
    """Unpickling this would run _mark: a stand-in for a malicious checkpoint."""

    def __reduce__(self):
        return (_mark, ())


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("painting-vision")


@pytest.fixture(scope="module")
def pv10():
    return load_label_space("painting-vision-10")


def tiny_net(classes: int = 10, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    net = build("tiny-segnet", {"widths": WIDTHS}, classes)
    for module in net.modules():  # non-trivial running statistics, so eval-mode BN matters
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    return net.eval()


@pytest.fixture(scope="module")
def model_files(tmp_path_factory, pv10):
    root = tmp_path_factory.mktemp("models")
    net = tiny_net()
    save_checkpoint(root / "tiny.pt", net, "tiny-segnet", {"widths": WIDTHS}, pv10, NORM, extra={"epoch": 3})
    save_torchscript(root / "tiny.ts", net, pv10, NORM, stride=8)
    return root


def ade_names() -> list[str]:
    return load_label_space("ade20k").names


@pytest.fixture(scope="module")
def segformer_dir(tmp_path_factory):
    return make_segformer(tmp_path_factory.mktemp("segformer"), ade_names())


def refused(fn, *args) -> str:
    with pytest.raises(SegbenchError) as info:
        fn(*args)
    return str(info.value)


# --- checkpoint -------------------------------------------------------------------------


def test_checkpoint_loads_and_gives_logits(model_files, benchmark, pv10):
    model = load_model("checkpoint", model_files / "tiny.pt", benchmark, None, "cpu")
    assert (model.kind, model.stride, model.device) == ("checkpoint", 8, torch.device("cpu"))
    assert model.label_space is pv10
    assert model.normalization == Normalization((127.5, 63.75, 191.25), (63.75, 127.5, 31.875))
    assert model.pad_value == (127.5, 63.75, 191.25)
    with torch.inference_mode():
        logits = model.logits(torch.rand(2, 3, 32, 48) * 255)
    assert logits.shape == (2, 10, 32, 48)


def test_checkpoint_file_holds_the_documented_format(model_files, pv10):
    doc = torch.load(model_files / "tiny.pt", map_location="cpu", weights_only=True)
    assert {k: v for k, v in doc.items() if k != "state_dict"} == {
        "format": "segbench-checkpoint",
        "format_version": 1,
        "architecture": "tiny-segnet",
        "arguments": {"widths": [4, 8, 8]},
        "label_space": {"name": "painting-vision-10", "classes": pv10.names},
        "normalization": NORM,
        "stride": 8,
        "extra": {"epoch": 3},
    }
    assert sorted(doc["state_dict"]) == sorted(tiny_net().state_dict())
    assert not (model_files / "tiny.pt.partial").exists()


def test_checkpoint_needing_code_is_refused_without_running_it(tmp_path, benchmark):
    path = tmp_path / "evil.pt"
    torch.save({"state_dict": {}, "payload": Payload()}, path)
    message = refused(load_model, "checkpoint", path, benchmark, None, "cpu")
    match = re.fullmatch(
        re.escape(f"{path}: refused: this checkpoint needs code to unpickle (")
        + r"([\w.]+)"
        + re.escape(
            "); segbench loads checkpoints with torch.load(weights_only=True) only — re-save it as a plain "
            "state-dict checkpoint (see docs; segbench.models.checkpoint.save_checkpoint writes one)"
        ),
        message,
    )
    assert match and match.group(1).endswith("test_models._mark")
    assert UNPICKLED == []


def test_whole_module_pickle_is_refused(tmp_path, benchmark):
    path = tmp_path / "module.pt"
    torch.save(tiny_net(), path)
    message = refused(load_model, "checkpoint", path, benchmark, None, "cpu")
    assert "needs code to unpickle (segbench.models.architectures.TinySegNet)" in message


@pytest.mark.parametrize(
    "content",
    [b"epoch 3, loss 0.1\n", b"", b"PK\x03\x04 not really a zip"],
    ids=["text", "empty", "fake-zip"],
)
def test_non_checkpoint_file_is_refused(tmp_path, benchmark, content):
    path = tmp_path / "notes.pt"
    path.write_bytes(content)
    message = refused(load_model, "checkpoint", path, benchmark, None, "cpu")
    assert message.startswith(f"{path}: not a torch checkpoint")


def test_missing_checkpoint(tmp_path, benchmark):
    assert refused(load_model, "checkpoint", tmp_path / "nope.pt", benchmark, None, "cpu") == (
        f"{tmp_path / 'nope.pt'}: checkpoint not found"
    )


def test_bare_state_dict_is_refused_with_the_missing_fields(tmp_path, benchmark):
    path = tmp_path / "bare.pt"
    torch.save(tiny_net().state_dict(), path)
    assert refused(load_model, "checkpoint", path, benchmark, None, "cpu") == (
        f"{path}: not a segbench checkpoint: missing field(s) ['format', 'format_version', 'architecture', "
        "'arguments', 'label_space', 'normalization', 'stride', 'state_dict'] (save_checkpoint writes them)"
    )


def test_torchscript_archive_given_as_checkpoint(model_files, benchmark):
    message = refused(load_model, "checkpoint", model_files / "tiny.ts", benchmark, None, "cpu")
    assert message == (
        f"{model_files / 'tiny.ts'}: this is a TorchScript archive, not a training checkpoint: use model kind 'torchscript'"
    )


def test_label_names_that_differ_are_named(tmp_path, benchmark, pv10):
    renamed = LabelSpace(
        "painting-vision-10",
        tuple(
            LabelClass(c.id, {"fixture": "fixtures", "obstacle": "clutter"}.get(c.name, c.name), c.color)
            for c in pv10.classes
        ),
    )
    path = tmp_path / "renamed.pt"
    save_checkpoint(path, tiny_net(), "tiny-segnet", {"widths": WIDTHS}, renamed, NORM)
    assert refused(load_model, "checkpoint", path, benchmark, None, "cpu") == (
        f"{path}: its classes do not match label space 'painting-vision-10': "
        "id 7: 'fixtures' where 'painting-vision-10' has 'fixture'; "
        "id 9: 'clutter' where 'painting-vision-10' has 'obstacle'"
    )


def test_label_space_outside_the_benchmark(tmp_path, benchmark):
    space = LabelSpace("cityscapes", tuple(LabelClass(i, n, (0, 0, 0)) for i, n in enumerate(["road", "car"])))
    path = tmp_path / "city.pt"
    save_checkpoint(path, tiny_net(2), "tiny-segnet", {"widths": WIDTHS}, space, NORM)
    assert refused(load_model, "checkpoint", path, benchmark, None, "cpu") == (
        f"{path}: label space 'cityscapes' is not one of benchmark 'painting-vision''s label spaces "
        "['ade20k', 'painting-vision-10', 'painting-vision-tier1']"
    )


def test_requested_label_space_must_match_the_file(model_files, benchmark):
    assert refused(load_model, "checkpoint", model_files / "tiny.pt", benchmark, "ade20k", "cpu") == (
        f"{model_files / 'tiny.pt'}: the checkpoint's label space is 'painting-vision-10', but 'ade20k' was requested"
    )


def _edited(model_files: Path, tmp_path: Path, **changes) -> Path:
    doc = torch.load(model_files / "tiny.pt", map_location="cpu", weights_only=True)
    for key, value in changes.items():
        if value is None:
            del doc[key]
        else:
            doc[key] = value
    path = tmp_path / "edited.pt"
    torch.save(doc, path)
    return path


def test_state_dict_shape_mismatch_is_summarised(model_files, tmp_path, benchmark):
    path = _edited(model_files, tmp_path, arguments={"widths": [4, 8, 16]})
    assert refused(load_model, "checkpoint", path, benchmark, None, "cpu") == (
        f"{path}: state_dict does not match architecture 'tiny-segnet' {{'widths': [4, 8, 16]}} with 10 classes: "
        "6 shape mismatches (stage3.0.weight: (8, 8, 3, 3) in the file, (16, 8, 3, 3) expected, "
        "stage3.1.weight: (8,) in the file, (16,) expected, stage3.1.bias: (8,) in the file, (16,) expected, "
        "stage3.1.running_mean: (8,) in the file, (16,) expected, stage3.1.running_var: (8,) in the file, "
        "(16,) expected, ... 1 more)"
    )


def test_state_dict_missing_and_unexpected_keys(model_files, tmp_path, benchmark):
    state = dict(torch.load(model_files / "tiny.pt", weights_only=True)["state_dict"])
    state["head.weight"] = state.pop("classifier.weight")
    path = _edited(model_files, tmp_path, state_dict=state)
    assert refused(load_model, "checkpoint", path, benchmark, None, "cpu") == (
        f"{path}: state_dict does not match architecture 'tiny-segnet' {{'widths': [4, 8, 8]}} with 10 classes: "
        "1 missing keys (classifier.weight); 1 unexpected keys (head.weight)"
    )


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"architecture": "unet-9000"}, "unknown architecture 'unet-9000' (known: ['tiny-segnet'])"),
        ({"stride": None}, "not a segbench checkpoint: missing field(s) ['stride'] (save_checkpoint writes them)"),
        ({"stride": "8"}, "field 'stride' must be a positive integer, got str"),
        ({"format_version": 2}, "field 'format_version' is 2; this segbench reads version 1"),
        (
            {"arguments": {"widths": [4, 8]}},
            "architecture 'tiny-segnet': bad arguments {'widths': [4, 8]}: "
            "widths must be three positive integers, got (4, 8)",
        ),
        (
            {"arguments": {"num_classes": 3}},
            "architecture 'tiny-segnet': 'num_classes' must not be among the "
            "arguments (it comes from the label space)",
        ),
        (
            {"normalization": {"mean": [123.675, 116.28, 103.53], "std": [58.395, 57.12, 57.375]}},
            "field 'normalization/mean' [123.675, 116.28, 103.53] must be in 0..1 units (pixel / 255)",
        ),
        ({"stride": 12}, "field 'stride' 12 is not a multiple of architecture 'tiny-segnet''s stride 8"),
    ],
    ids=[
        "architecture",
        "no-stride",
        "stride-type",
        "version",
        "arguments",
        "num-classes",
        "norm-units",
        "stride-multiple",
    ],
)
def test_ill_formed_fields(model_files, tmp_path, benchmark, changes, expected):
    path = _edited(model_files, tmp_path, **changes)
    assert refused(load_model, "checkpoint", path, benchmark, None, "cpu") == f"{path}: {expected}"


def test_non_finite_weights_are_refused(model_files, tmp_path, benchmark):
    state = dict(torch.load(model_files / "tiny.pt", weights_only=True)["state_dict"])
    state["classifier.bias"] = torch.full_like(state["classifier.bias"], float("nan"))
    path = _edited(model_files, tmp_path, state_dict=state)
    assert refused(load_model, "checkpoint", path, benchmark, None, "cpu") == (
        f"{path}: state_dict has non-finite values (NaN or inf) in 1 tensors (classifier.bias)"
    )


def test_save_checkpoint_refuses_extras_that_need_code(tmp_path, pv10):
    path = tmp_path / "x.pt"
    with pytest.raises(SegbenchError, match=r"'arguments' or 'extra' holds a value .*test_models._mark"):
        save_checkpoint(path, tiny_net(), "tiny-segnet", {"widths": WIDTHS}, pv10, NORM, extra={"p": Payload()})
    assert not path.exists()
    assert UNPICKLED == []


# --- TorchScript ----------------------------------------------------------------------


def test_torchscript_matches_checkpoint(model_files, benchmark, pv10):
    ckpt = load_model("checkpoint", model_files / "tiny.pt", benchmark, None, "cpu")
    script = load_model("torchscript", model_files / "tiny.ts", benchmark, "painting-vision-10", "cpu")
    assert (script.kind, script.stride, script.label_space, script.normalization) == (
        "torchscript",
        8,
        pv10,
        ckpt.normalization,
    )
    images = torch.rand(2, 3, 40, 64, generator=torch.Generator().manual_seed(1)) * 255
    with torch.inference_mode():
        a, b = ckpt.logits(images), script.logits(images)
    assert a.shape == (2, 10, 40, 64)
    torch.testing.assert_close(a, b, rtol=0, atol=1e-5)
    assert torch.equal(a.argmax(1), b.argmax(1))


def test_torchscript_refuses_other_files(model_files, tmp_path, benchmark):
    text = tmp_path / "notes.ts"
    text.write_text("hello\n")
    assert refused(load_model, "torchscript", text, benchmark, None, "cpu").startswith(
        f"{text}: not a TorchScript archive (torch.jit.save): "
    )
    assert refused(load_model, "torchscript", model_files / "tiny.pt", benchmark, None, "cpu").startswith(
        f"{model_files / 'tiny.pt'}: not a TorchScript archive (torch.jit.save) (it looks like a torch.save file: "
        "use model kind 'checkpoint'): "
    )
    assert refused(load_model, "torchscript", tmp_path / "nope.ts", benchmark, None, "cpu") == (
        f"{tmp_path / 'nope.ts'}: TorchScript archive not found"
    )


def test_torchscript_without_metadata(tmp_path, benchmark):
    path = tmp_path / "plain.ts"
    with pytest.warns(DeprecationWarning):  # torch.jit itself, outside segbench's silencing
        torch.jit.save(torch.jit.script(tiny_net()), str(path))
    assert refused(load_model, "torchscript", path, benchmark, None, "cpu") == (
        f"{path}: the TorchScript archive has no segbench.json (label space, normalization, stride); "
        "write it with segbench.models.torchscript.save_torchscript"
    )


def test_torchscript_label_names_checked(tmp_path, benchmark):
    tier1 = load_label_space("painting-vision-tier1")
    wrong = LabelSpace("painting-vision-tier1", tuple(LabelClass(c.id, c.name.upper(), c.color) for c in tier1.classes))
    path = tmp_path / "wrong.ts"
    save_torchscript(path, tiny_net(3), wrong, NORM, stride=8)
    assert refused(load_model, "torchscript", path, benchmark, None, "cpu") == (
        f"{path}: its classes do not match label space 'painting-vision-tier1': "
        "id 0: 'OTHER' where 'painting-vision-tier1' has 'other'; id 1: 'WALL' where 'painting-vision-tier1' "
        "has 'wall'; id 2: 'WINDOW' where 'painting-vision-tier1' has 'window'"
    )


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


def test_tiny_segnet_output_at_input_resolution():
    assert known_architectures() == ["tiny-segnet"]
    with torch.inference_mode():
        assert tiny_net(3)(torch.zeros(1, 3, 24, 40)).shape == (1, 3, 24, 40)
    assert refused(build, "resnet", {}, 3) == "unknown architecture 'resnet' (known: ['tiny-segnet'])"


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
