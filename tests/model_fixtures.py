"""Models built for tests from real config classes with random weights: a tiny-segnet net and its
checkpoint and TorchScript files, SegFormer folders; and `refused`, the error a call raises."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from segbench.errors import SegbenchError
from segbench.models.architectures import build
from segbench.models.checkpoint import save_checkpoint
from segbench.models.torchscript import save_torchscript

NORM = {"mean": [0.5, 0.25, 0.75], "std": [0.25, 0.5, 0.125]}
WIDTHS = [4, 8, 8]


def tiny_net(classes: int = 10, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    net = build("tiny-segnet", {"widths": WIDTHS}, classes)
    for module in net.modules():  # non-trivial running statistics, so eval-mode BN matters
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    return net.eval()


def write_model_files(root: Path, space) -> Path:
    """tiny.pt (a checkpoint) and tiny.ts (its TorchScript archive) of one tiny net in `space`."""
    net = tiny_net()
    save_checkpoint(root / "tiny.pt", net, "tiny-segnet", {"widths": WIDTHS}, space, NORM, extra={"epoch": 3})
    save_torchscript(root / "tiny.ts", net, space, NORM, stride=8)
    return root


def refused(fn, *args) -> str:
    with pytest.raises(SegbenchError) as info:
        fn(*args)
    return str(info.value)


def make_segformer(folder: Path, names: list[str], preprocessor: dict | None = None) -> Path:
    from transformers import SegformerConfig, SegformerForSemanticSegmentation

    torch.manual_seed(0)
    config = SegformerConfig(
        num_channels=3,
        num_encoder_blocks=4,
        depths=[1, 1, 1, 1],
        hidden_sizes=[8, 16, 24, 32],
        decoder_hidden_size=16,
        num_attention_heads=[1, 1, 1, 1],
        num_labels=len(names),
        id2label=dict(enumerate(names)),
        label2id={n: i for i, n in enumerate(names)},
    )
    SegformerForSemanticSegmentation(config).eval().save_pretrained(folder)
    pre = {
        "image_processor_type": "SegformerImageProcessor",
        "do_resize": True,
        "size": {"height": 512, "width": 512},
        "do_rescale": True,
        "rescale_factor": 1 / 255,
        "do_normalize": True,
        "image_mean": [0.485, 0.456, 0.406],
        "image_std": [0.229, 0.224, 0.225],
    }
    (folder / "preprocessor_config.json").write_text(json.dumps(preprocessor or pre))
    return folder
