"""The state-dict checkpoint adapter (models/checkpoint.py): what it loads, the file it writes,
and what it refuses without running code from the file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from model_fixtures import NORM, WIDTHS, refused, tiny_net

from segbench.core.labels import LabelClass, LabelSpace
from segbench.errors import SegbenchError
from segbench.models import load_model
from segbench.models.base import Normalization
from segbench.models.checkpoint import save_checkpoint
from segbench.protocols.definitions import load_benchmark

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
    assert match and match.group(1).endswith("test_checkpoint._mark")
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
    with pytest.raises(SegbenchError, match=r"'arguments' or 'extra' holds a value .*test_checkpoint._mark"):
        save_checkpoint(path, tiny_net(), "tiny-segnet", {"widths": WIDTHS}, pv10, NORM, extra={"p": Payload()})
    assert not path.exists()
    assert UNPICKLED == []
