"""Model folders built for tests from real config classes with random weights."""

from __future__ import annotations

import json
from pathlib import Path

import torch


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
