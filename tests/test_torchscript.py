"""The TorchScript adapter (models/torchscript.py): it agrees with the checkpoint it was saved
from, and what it refuses."""

from __future__ import annotations

import pytest
import torch

from model_fixtures import NORM, refused, tiny_net

from segbench.core.labels import LabelClass, LabelSpace
from segbench.models import load_model
from segbench.models.torchscript import save_torchscript
from segbench.protocols.definitions import load_benchmark, load_label_space


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("painting-vision")


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


def test_export_torchscript_command_writes_the_checkpoints_model(model_files, benchmark, pv10, tmp_path):
    from segbench.commands.cli import main

    out = tmp_path / "exported" / "tiny.ts"
    assert main(["export-torchscript", "--checkpoint", str(model_files / "tiny.pt"), "--out", str(out)]) == 0
    ckpt = load_model("checkpoint", model_files / "tiny.pt", benchmark, None, "cpu")
    script = load_model("torchscript", out, benchmark, None, "cpu")
    assert (script.stride, script.label_space, script.normalization) == (8, pv10, ckpt.normalization)
    images = torch.rand(2, 3, 16, 24)
    torch.testing.assert_close(script.module(images), ckpt.module(images), rtol=0, atol=1e-6)
    assert sorted(p.name for p in out.parent.iterdir()) == ["tiny.ts"]  # no partial file left
