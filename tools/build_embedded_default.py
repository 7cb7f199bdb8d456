#!/usr/bin/env python3
"""Build the embedded default: the synthetic Painting Vision dataset and the two small models.

    .venv/bin/python tools/build_embedded_default.py            # writes data/, artifacts/, data_manifest.json

Then pin and publish the bytes (see docs/embedded-default.md):

    dvc add data artifacts/best.pt artifacts/segformer-ade && dvc push

- data/: ~14 procedurally drawn walls, 4 frames each, split by wall (segbench.synthetic).
- artifacts/best.pt: a tiny-segnet in the ten-class taxonomy, trained on the train split,
  saved in segbench's checkpoint format (loadable with torch.load(weights_only=True)).
- artifacts/segformer-ade/: a small SegFormer in the Hugging Face format whose 150 outputs are
  ADE20K's classes in their standard order, trained on the same frames with the ten classes
  translated into ADE20K names; it stands in for a real ADE20K checkpoint.

Everything is seeded and runs on the CPU with two threads, so a rebuild with the pinned versions
gives the same models; the pinned bytes (dvc pull) are what the results are computed from.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from segbench.datasets.painting_vision import read_frames
from segbench.models.architectures import architecture, build
from segbench.models.checkpoint import save_checkpoint
from segbench.protocols.definitions import load_benchmark
from segbench.records.provenance import build_manifest, write_manifest
from segbench.synthetic.painting_vision import build_dataset
from segbench.synthetic.training import IGNORE, IMAGENET, class_lut, load_pairs, train

LONG_SIDE = 640

# Ten-class name -> the ADE20K class the SegFormer stand-in learns for it.
ADE_NAME_FOR = {
    "other": "painting",
    "wall_unpainted": "wall",
    "wall_painted": "wall",
    "wall_uncertain": "wall",
    "ceiling": "ceiling",
    "floor": "floor",
    "skirting": "base",
    "fixture": "radiator",
    "window": "windowpane",
    "obstacle": "door",
}


def ade_lut() -> np.ndarray:
    benchmark = load_benchmark("painting-vision")
    ten, ade = benchmark.ground_truth, benchmark.space("ade20k")
    lut = np.full(256, IGNORE, dtype=np.uint8)
    for cls in ten.classes:
        lut[cls.id] = ade.id_of(ADE_NAME_FOR[cls.name])
    return lut


def build_ten_class(pairs, out: Path, steps: int) -> None:
    torch.manual_seed(0)
    arguments = {"widths": [16, 32, 64]}
    model = build("tiny-segnet", arguments, num_classes=10)
    train(model, model, pairs, class_lut(10), steps, seed=1, name="tiny-segnet")
    space = load_benchmark("painting-vision").ground_truth
    save_checkpoint(out, model, "tiny-segnet", arguments, space, IMAGENET, architecture("tiny-segnet").stride,
                    extra={"trained_on": "embedded default train split", "steps": steps})


def build_segformer(pairs, out: Path, steps: int) -> None:
    from transformers import SegformerConfig, SegformerForSemanticSegmentation

    torch.manual_seed(0)
    ade = load_benchmark("painting-vision").space("ade20k")
    config = SegformerConfig(
        num_channels=3,
        num_encoder_blocks=4,
        depths=[1, 1, 1, 1],
        hidden_sizes=[16, 32, 64, 96],
        num_attention_heads=[1, 1, 2, 4],
        sr_ratios=[8, 4, 2, 1],
        decoder_hidden_size=64,
        num_labels=ade.size,
        id2label={i: name for i, name in enumerate(ade.names)},
        label2id={name: i for i, name in enumerate(ade.names)},
    )
    model = SegformerForSemanticSegmentation(config)
    train(model, lambda x: model(pixel_values=x).logits, pairs, ade_lut(), steps, seed=2, name="segformer")
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    preprocessor = {
        "image_processor_type": "SegformerImageProcessor",
        "do_resize": True,
        "size": {"height": 512, "width": 512},
        "resample": 2,
        "do_rescale": True,
        "rescale_factor": 1 / 255,
        "do_normalize": True,
        "image_mean": IMAGENET["mean"],
        "image_std": IMAGENET["std"],
        "do_reduce_labels": False,
    }
    (out / "preprocessor_config.json").write_text(json.dumps(preprocessor, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("data"))
    parser.add_argument("--artifacts", type=Path, default=Path("artifacts"))
    parser.add_argument("--manifest", type=Path, default=Path("data_manifest.json"))
    parser.add_argument("--steps", type=int, default=600)
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)

    print(f"dataset -> {args.data}")
    rows = build_dataset(args.data, seed=0)
    benchmark = load_benchmark("painting-vision")
    frames = read_frames(args.data, benchmark.splits)
    manifest = build_manifest(args.data, frames, id_prefix=benchmark.id_prefix, group_key=benchmark.group_key)
    write_manifest(args.manifest, manifest)
    print(f"  {len(rows)} frames, dataset_id {manifest['dataset_id']}")
    pairs = load_pairs([f for f in frames if f.split == "train"], LONG_SIDE)
    print(f"ten-class model -> {args.artifacts / 'best.pt'}")
    build_ten_class(pairs, args.artifacts / "best.pt", args.steps)
    print(f"SegFormer (ADE20K labels) -> {args.artifacts / 'segformer-ade'}")
    build_segformer(pairs, args.artifacts / "segformer-ade", args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
