#!/usr/bin/env python3
"""Build the embedded defaults of the IDD20K and EasyPortrait benchmarks: a synthetic dataset in
each one's exact on-disk format, its manifest, and a small model trained on its train split.

    .venv/bin/python tools/build_embedded_protocols.py     # writes the paths below

    data-idd/                          IDD20K format: polygon JSONs, images, level-3 masks drawn
                                       from the JSONs (segbench.protocols.idd.masks) and their record
    data-idd_manifest.json             its manifest (dataset_id idd:...)
    artifacts/idd-best.pt              tiny-segnet, 26 level-3 classes (idd-level3)
    data-easyportrait/                 EasyPortrait 1.0 layout: images/, annotations/, annotations/meta.zip
    data-easyportrait_manifest.json    its manifest (dataset_id ep:...)
    artifacts/easyportrait-best.pt     tiny-segnet, 9 classes (easyportrait-9)

Then pin the bytes (see docs/embedded-default.md):

    dvc add data-idd data-easyportrait artifacts/idd-best.pt artifacts/easyportrait-best.pt && dvc push

Everything is seeded and runs on the CPU with two threads (about two minutes), so a rebuild with
the pinned versions gives the same files; the pinned bytes are what results are computed from.
`--data-only` rebuilds the datasets and manifests and keeps the models: for a change of layout
that leaves every image and mask as it was (the dataset_id says whether it did).
The models are trained as they are evaluated: frames resized to the benchmark's inference size;
tiny-segnet accepts any input size, as EasyPortrait's unpadded inference needs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from segbench.datasets import dataset_layout, read_dataset, select_split
from segbench.models.architectures import architecture, build
from segbench.models.checkpoint import save_checkpoint
from segbench.protocols.definitions import load_benchmark
from segbench.records.provenance import build_manifest, write_manifest
from segbench.synthetic import easyportrait, idd
from segbench.synthetic.training import IMAGENET, Crops, class_lut, load_pairs, train

ARCHITECTURE = "tiny-segnet"
ARGUMENTS = {"widths": [16, 32, 64]}


@dataclass(frozen=True)
class Protocol:
    benchmark: str
    data: Path
    manifest: Path
    checkpoint: Path
    build_dataset: Callable[[Path], list[dict]]
    crops: Crops
    steps: int


PROTOCOLS = (
    Protocol("idd20k-icvgip2020", Path("data-idd"), Path("data-idd_manifest.json"), Path("artifacts/idd-best.pt"),
             idd.build_dataset, Crops(size=192, balanced=True), 500),
    # No flips: EasyPortrait's left and right classes would need geometric context to swap.
    Protocol("easyportrait", Path("data-easyportrait"), Path("data-easyportrait_manifest.json"),
             Path("artifacts/easyportrait-best.pt"), easyportrait.build_dataset, Crops(size=192, flip=None, balanced=True),
             800),
)


def build_protocol(protocol: Protocol, root: Path, steps: int | None, train_model: bool = True) -> None:
    benchmark = load_benchmark(protocol.benchmark)
    data = root / protocol.data
    if data.exists():
        shutil.rmtree(data)
    print(f"{benchmark.name}: dataset -> {data}")
    protocol.build_dataset(data)
    frames = read_dataset(benchmark, data)
    manifest = build_manifest(data, frames, id_prefix=benchmark.id_prefix, group_key=benchmark.group_key,
                              layout=dataset_layout(benchmark, data))
    write_manifest(root / protocol.manifest, manifest)
    print(f"  {len(frames)} frames, dataset_id {manifest['dataset_id']}")
    if not train_model:
        return
    space = benchmark.ground_truth
    torch.manual_seed(0)
    model = build(ARCHITECTURE, ARGUMENTS, num_classes=space.size)
    pairs = load_pairs(select_split(frames, "train"), benchmark.inference_size)
    total = steps or protocol.steps
    train(model, model, pairs, class_lut(space.size), total, seed=1, name=benchmark.name, crops=protocol.crops)
    save_checkpoint(root / protocol.checkpoint, model, ARCHITECTURE, ARGUMENTS, space, IMAGENET,
                    architecture(ARCHITECTURE).stride,
                    extra={"trained_on": f"{protocol.data} train split", "steps": total})
    print(f"  model -> {root / protocol.checkpoint}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path("."), help="where the paths above are written")
    parser.add_argument("--only", choices=[p.benchmark for p in PROTOCOLS], help="build one protocol")
    parser.add_argument("--steps", type=int, help="training steps (default: each protocol's)")
    parser.add_argument("--data-only", action="store_true", help="build the datasets and manifests, keep the models")
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    for protocol in PROTOCOLS:
        if args.only in (None, protocol.benchmark):
            build_protocol(protocol, args.root, args.steps, train_model=not args.data_only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
