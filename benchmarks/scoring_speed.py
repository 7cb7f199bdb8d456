"""Scoring speed: segbench against decoding the same PNGs alone (the peers: benchmarks/peers.py).

    .venv/bin/python benchmarks/scoring_speed.py [--pairs 200] [--rounds 5]

200 pairs of 1280x720 masks (27 classes 0..26, void 255 in the ground truth, drawn shapes: see
masks.py) are scored by segbench's scoring step (decode both PNGs, count the joint histogram,
keep per-frame counts) with all cores, and again with boundary IoU on (both masks' bands, d =
2% of the diagonal, counted in the same pass). In the same rounds: decoding the same 400 files alone with
each decoder on one core, the fastest of them with all cores (threads and processes).
Medians over rounds; ratios are the median of per-round ratios (targets: issue 29). Exactness: segbench's counts equal the straightforward
implementation (Pillow decode + np.bincount) cell for cell. torchmetrics, mmseg and HF evaluate
are compared in benchmarks/peers.py.
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import cv2
import imagecodecs
import numpy as np
import pyspng
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from masks import mask_pairs  # noqa: E402
from timing import machine, median, ratio, rounds  # noqa: E402

from segbench.core.boundary import BandPlan  # noqa: E402
from segbench.core.confusion import FrameCounts, joint_histogram  # noqa: E402
from segbench.datasets.base import Frame  # noqa: E402
from segbench.protocols.definitions import load_label_space  # noqa: E402
from segbench.stages.scoring import score_predictions  # noqa: E402

CLASSES, VOID = 27, 255
DECODERS = {
    "Pillow": lambda path: np.asarray(Image.open(path)),
    "cv2": lambda path: cv2.imread(str(path), cv2.IMREAD_UNCHANGED),
    "pyspng": lambda path: pyspng.load(path.read_bytes()),
    "imagecodecs": lambda path: imagecodecs.png_decode(path.read_bytes()),
}
FASTEST = "imagecodecs"  # checked below: the fastest single-core median must be this one


def decode_fastest(path: Path) -> int:
    return DECODERS[FASTEST](path).size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=Path("build/benchmarks/masks"))
    args = parser.parse_args()

    pairs = mask_pairs(args.cache, args.pairs, 1280, 720, CLASSES)
    files = [p for pair in pairs for p in pair]
    predictions = pairs[0][1].parent
    frames = [Frame(gt.stem, gt.stem, "test", gt.parent / gt.name, gt, prediction=pred.name) for gt, pred in pairs]
    space = load_label_space("idd-level3-misc")  # raw values 0..26 and 255 are valid
    cores = len(os.sched_getaffinity(0))

    results: dict[str, object] = {}

    def segbench_scoring():
        results["segbench"] = score_predictions(frames, predictions, space, space)

    # Boundary IoU on: the bands of both masks (d = 2% of the diagonal = 29 px) counted in the
    # same pass, in the one label space of these masks.
    lut = space.raw_lut()
    bands = BandPlan((space.name,), (lut,), (lut,), ratio=0.02)

    def segbench_scoring_with_bands():
        results["segbench with bands"] = score_predictions(frames, predictions, space, space, bands=bands)

    with ThreadPoolExecutor(cores) as threads, ProcessPoolExecutor(cores) as processes:
        list(processes.map(decode_fastest, files[:cores]))  # start the workers outside the timing
        methods = {f"decode {name}, 1 core": (lambda d=d: [d(f) for f in files]) for name, d in DECODERS.items()}
        methods[f"decode {FASTEST}, {cores} threads"] = lambda: list(threads.map(decode_fastest, files))
        methods[f"decode {FASTEST}, {cores} processes"] = lambda: list(processes.map(decode_fastest, files, chunksize=8))
        methods["segbench scoring"] = segbench_scoring
        methods["segbench scoring, boundary IoU on"] = segbench_scoring_with_bands
        times = rounds(methods, args.rounds)
    # The all-core decode baseline: per round, the faster of threads and processes.
    parallel = [f"decode {FASTEST}, {cores} threads", f"decode {FASTEST}, {cores} processes"]
    times["fastest decode, all cores"] = [min(a, b) for a, b in zip(*(times[p] for p in parallel))]
    single = {name: median(times[f"decode {name}, 1 core"]) for name in DECODERS}

    print(f"Scoring speed: {args.pairs} pairs of 1280x720 masks ({len(files)} PNGs, "
          f"{sum(f.stat().st_size for f in files) / len(files) / 1024:.1f} KiB each), {CLASSES} classes + void")
    print(f"machine: {machine()}; load {os.getloadavg()[0]:.1f}; {args.rounds} rounds after 1 warm-up\n")
    print(f"{'method':42s} {'median s':>9s} {'ms/pair':>8s} {'x fastest decode (all cores)':>29s}")
    for name in times:
        print(f"{name:42s} {median(times[name]):9.3f} {median(times[name]) / args.pairs * 1e3:8.2f} "
              f"{ratio(times, name, 'fastest decode, all cores'):29.2f}")

    # Exactness.
    fast = results["segbench"]
    plain = FrameCounts.from_histograms(
        [f.frame_id for f in frames],
        [joint_histogram(np.asarray(Image.open(gt)), np.asarray(Image.open(pred))) for gt, pred in pairs],
    )
    identical = all(np.array_equal(getattr(fast, k), getattr(plain, k)) for k in ("frame", "gt", "pred", "count"))
    banded = results["segbench with bands"]
    identical &= all(np.array_equal(getattr(banded, k), getattr(plain, k)) for k in ("frame", "gt", "pred", "count"))
    print("\nexactness")
    print(f"  segbench counts (boundary IoU off and on) == Pillow decode + np.bincount, every cell of every frame: "
          f"{identical}")
    print(f"  fastest decoder single core is {FASTEST}: {min(single, key=single.get) == FASTEST} "
          f"({', '.join(f'{k} {v / len(files) * 1e3:.2f} ms' for k, v in single.items())} per file)")
    speed = median(times["segbench scoring"]) / median(times["fastest decode, all cores"])
    print("\ntargets")
    print(f"  segbench <= 1.05 x fastest decode (all cores): {ratio(times, 'segbench scoring', 'fastest decode, all cores'):.3f}"
          f" (ratio of medians {speed:.3f})")
    on = ratio(times, "segbench scoring, boundary IoU on", "fastest decode, all cores")
    print(f"  segbench with boundary IoU on <= 1.3 x fastest decode (all cores): {on:.3f} (off: "
          f"{ratio(times, 'segbench scoring', 'fastest decode, all cores'):.3f})")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
