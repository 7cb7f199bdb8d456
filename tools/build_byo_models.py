#!/usr/bin/env python3
"""Build the embedded default's bring-your-own-model entries (docs/models.md):

    .venv/bin/python tools/build_byo_models.py      # writes artifacts/best.onnx, artifacts/deeplab-pv/

- artifacts/best.onnx: artifacts/best.pt exported by `segbench export-onnx` (kind onnx): the
  same network, so the same masks (tests/test_models_onnx.py).
- artifacts/deeplab-pv/: a small Hugging Face MobileNetV2-DeepLabV3 (kind hf, a non-SegFormer
  family) whose id2label is the ten-class taxonomy, trained with the embedded default's training
  loop (segbench.synthetic.training) on the train split.

Then pin and publish: `dvc add artifacts/best.onnx artifacts/deeplab-pv && dvc push`. Seeded, CPU,
two threads, as tools/build_embedded_default.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from segbench.datasets.painting_vision import read_frames
from segbench.models.onnx import export_onnx
from segbench.protocols.definitions import load_benchmark
from segbench.synthetic.training import IMAGENET, Crops, class_lut, load_pairs, train

LONG_SIDE = 640


def build_deeplab(pairs, out: Path, steps: int) -> None:
    from transformers import MobileNetV2Config, MobileNetV2ForSemanticSegmentation

    torch.manual_seed(0)
    ten = load_benchmark("painting-vision").ground_truth
    config = MobileNetV2Config(
        depth_multiplier=0.5,
        output_stride=8,
        aspp_out_channels=64,
        num_labels=ten.size,
        id2label=dict(enumerate(ten.names)),
        label2id={name: i for i, name in enumerate(ten.names)},
    )
    model = MobileNetV2ForSemanticSegmentation(config)
    # Smaller crops and batches than the embedded default's loop: the CPU budget of a shared machine.
    train(model, lambda x: model(pixel_values=x).logits, pairs, class_lut(10), steps, seed=3, name="deeplab",
          crops=Crops(size=192, batch=4))
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    preprocessor = {
        "image_processor_type": "SegformerImageProcessor",
        "do_rescale": True,
        "rescale_factor": 1 / 255,
        "do_normalize": True,
        "image_mean": IMAGENET["mean"],
        "image_std": IMAGENET["std"],
    }
    (out / "preprocessor_config.json").write_text(json.dumps(preprocessor, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("data"))
    parser.add_argument("--artifacts", type=Path, default=Path("artifacts"))
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    benchmark = load_benchmark("painting-vision")
    print(f"ONNX -> {args.artifacts / 'best.onnx'}")
    export_onnx(args.artifacts / "best.pt", benchmark, args.artifacts / "best.onnx")
    frames = read_frames(args.data, benchmark.splits)
    pairs = load_pairs([f for f in frames if f.split == "train"], LONG_SIDE)
    print(f"MobileNetV2-DeepLabV3 (ten classes) -> {args.artifacts / 'deeplab-pv'}")
    build_deeplab(pairs, args.artifacts / "deeplab-pv", args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
