"""`segbench import-checkpoint`: plain weights files -> segbench checkpoints whose logits equal
the original module's; every missing, unexpected or misshaped tensor named."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import save_file
from torch import nn

from segbench.commands.cli import main
from segbench.errors import SegbenchError
from segbench.models import load_model
from segbench.models.architectures import build
from segbench.models.importing import import_checkpoint
from segbench.protocols.definitions import load_benchmark

WIDTHS = [4, 8, 8]
NORM = {"mean": [0.5, 0.25, 0.75], "std": [0.25, 0.5, 0.125]}


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("painting-vision")


def trained(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    net = build("tiny-segnet", {"widths": WIDTHS}, 10)
    for module in net.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    return net.eval()


def same_logits(path, net: nn.Module, benchmark) -> None:
    model = load_model("checkpoint", path, benchmark, None, "cpu")
    images = torch.rand(2, 3, 32, 48) * 255
    mean = torch.tensor(NORM["mean"]).view(1, 3, 1, 1) * 255
    std = torch.tensor(NORM["std"]).view(1, 3, 1, 1) * 255
    with torch.inference_mode():
        torch.testing.assert_close(model.logits(images), net((images - mean) / std), rtol=0, atol=0)


def save_as(tmp_path, net: nn.Module, form: str):
    state = net.state_dict()
    if form == "state-dict.pth":
        path = tmp_path / "w.pth"
        torch.save(state, path)
    elif form == "lightning.ckpt":
        path = tmp_path / "w.ckpt"
        torch.save({"epoch": 7, "global_step": 70, "state_dict": {f"model.{k}": v for k, v in state.items()},
                    "optimizer_states": [], "hyper_parameters": {"lr": 0.01}}, path)
    elif form == "dataparallel.pt":
        path = tmp_path / "w.pt"
        torch.save({f"module.{k}": v for k, v in state.items()}, path)
    else:
        path = tmp_path / "w.safetensors"
        save_file({k: v.contiguous() for k, v in state.items()}, str(path))
    return path


@pytest.mark.parametrize("form", ["state-dict.pth", "lightning.ckpt", "dataparallel.pt", "safetensors"])
def test_imported_weights_give_the_original_logits(tmp_path, benchmark, form):
    net = trained()
    out = tmp_path / "imported.pt"
    import_checkpoint(save_as(tmp_path, net, form), "tiny-segnet", {"widths": WIDTHS},
                      benchmark.space("painting-vision-10"), NORM, out)
    same_logits(out, net, benchmark)


def test_cli_import(tmp_path, benchmark):
    net = trained(1)
    weights = save_as(tmp_path, net, "lightning.ckpt")
    out = tmp_path / "cli.pt"
    assert main(["import-checkpoint", "--weights", str(weights), "--architecture", "tiny-segnet",
                 "--arguments", '{"widths": [4, 8, 8]}', "--label-space", "painting-vision-10",
                 "--mean", "0.5", "0.25", "0.75", "--std", "0.25", "0.5", "0.125", "--prefix", "model.",
                 "--out", str(out)]) == 0
    same_logits(out, net, benchmark)
    doc = torch.load(out, weights_only=True)
    assert doc["extra"]["imported_from"] == "w.ckpt" and len(doc["extra"]["sha256"]) == 64


def refused(tmp_path, benchmark, state, **kwargs) -> str:
    path = tmp_path / "w.pth"
    torch.save(state, path)
    with pytest.raises(SegbenchError) as info:
        import_checkpoint(path, "tiny-segnet", {"widths": WIDTHS}, benchmark.space("painting-vision-10"), NORM,
                          tmp_path / "out.pt", **kwargs)
    assert not (tmp_path / "out.pt").exists()
    return str(info.value)


def test_every_problem_tensor_is_named(tmp_path, benchmark):
    state = trained().state_dict()
    state.pop("classifier.bias")
    state["extra.weight"] = torch.zeros(1)
    state["stage1.0.weight"] = torch.zeros(5, 3, 3, 3)
    assert refused(tmp_path, benchmark, state) == (
        f"{tmp_path / 'w.pth'}: state_dict does not match architecture 'tiny-segnet' {{'widths': [4, 8, 8]}} with "
        "10 classes: 1 missing keys (classifier.bias); 1 unexpected keys (extra.weight); 1 shape mismatches "
        "(stage1.0.weight: (5, 3, 3, 3) in the file, (4, 3, 3, 3) expected)"
    )


def test_wrong_number_of_classes_is_a_shape_mismatch(tmp_path, benchmark):
    state = build("tiny-segnet", {"widths": WIDTHS}, 3).state_dict()
    assert "2 shape mismatches (classifier.weight: (3, 8, 1, 1) in the file, (10, 8, 1, 1) expected, " in refused(
        tmp_path, benchmark, state
    )


def test_a_prefix_that_is_not_there(tmp_path, benchmark):
    # 26 tensors: 4 conv-BN stages of 6 (conv weight, BN weight, bias, running mean, var, count) + classifier 2
    assert refused(tmp_path, benchmark, trained().state_dict(), prefix="model.") == (
        f"{tmp_path / 'w.pth'}: 26 keys lack the prefix 'model.' (e.g. stage1.0.weight)"
    )


def test_not_a_state_dict(tmp_path, benchmark):
    assert refused(tmp_path, benchmark, {"epoch": 3, "lr": 0.1}) == (
        f"{tmp_path / 'w.pth'}: no state dict: expected parameter name -> tensor, at the top level or under one "
        "of ['state_dict', 'model_state_dict', 'model']"
    )


def test_a_pickle_that_needs_code_is_refused(tmp_path, benchmark):
    message = refused(tmp_path, benchmark, trained())
    assert "refused: this checkpoint needs code to unpickle (segbench.models.architectures.TinySegNet)" in message


def test_unknown_architecture(tmp_path, benchmark):
    with pytest.raises(SegbenchError) as info:
        import_checkpoint(tmp_path / "w.pth", "resnet", {}, benchmark.space("painting-vision-10"), NORM, tmp_path / "o.pt")
    assert str(info.value) == f"{tmp_path / 'w.pth'}: unknown architecture 'resnet' (known: ['tiny-segnet'])"
