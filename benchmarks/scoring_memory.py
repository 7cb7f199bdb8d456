"""Peak memory of scoring as the number of frames grows: it must stream, not accumulate.

    .venv/bin/python benchmarks/scoring_memory.py [--frames 500 1000 2000 4000] [--pool 200]

For each count, a fresh process scores that many 1280x720 pairs (copied from --pool distinct
pairs drawn by masks.py, 200 by default) with segbench's scoring step and writes the per-frame counts Parquet,
then reports its peak resident memory (ru_maxrss: everything the process ever held, imports
included). The same process first imports everything and records its resident memory before
scoring, so the table separates the libraries' fixed cost from what scoring adds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from masks import copied_frames, mask_pairs  # noqa: E402
from timing import machine  # noqa: E402

TARGET = 300 * 2**20  # peak RSS at 4,000 frames (issue 29)


def rss_now() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(frames: int, pool: int, cache: Path) -> None:
    from segbench.datasets.base import Frame
    from segbench.protocols.definitions import load_label_space
    from segbench.records.countsio import write_counts
    from segbench.stages.scoring import score_predictions

    pairs = copied_frames(mask_pairs(cache, pool, 1280, 720), frames, cache)
    space = load_label_space("idd-level3-misc")
    records = [Frame(gt.stem, "g", "test", gt, gt, prediction=pred.name) for gt, pred in pairs]
    score_predictions(records[:2], pairs[0][1].parent, space, space)  # compile/load the kernel first
    before = rss_now()
    start = time.perf_counter()
    counts = score_predictions(records, pairs[0][1].parent, space, space)
    with tempfile.TemporaryDirectory() as tmp:
        write_counts(Path(tmp) / "counts.parquet", counts, {"benchmark": "memory"})
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"frames": frames, "before": before, "peak": peak, "seconds": seconds, "cells": len(counts.count)}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    parser.add_argument("--pool", type=int, default=200, help="distinct pairs the frames copy in turn")
    parser.add_argument("--cache", type=Path, default=Path("build/benchmarks/masks"))
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.pool, args.cache)
        return 0

    copied_frames(mask_pairs(args.cache, args.pool, 1280, 720), max(args.frames), args.cache)  # draw before timing
    print(f"Scoring memory: 1280x720 pairs, one fresh process per count\nmachine: {machine()}\n")
    print(f"{'frames':>7s} {'RSS before scoring':>19s} {'peak RSS':>9s} {'peak - before':>14s} {'seconds':>8s} {'cells kept':>11s}")
    rows = []
    for frames in args.frames:
        out = subprocess.run([sys.executable, __file__, "--child", str(frames), "--pool", str(args.pool),
                              "--cache", str(args.cache)],
                             capture_output=True, text=True, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        rows.append(row)
        print(f"{frames:7d} {row['before'] / 2**20:15.0f} MiB {row['peak'] / 2**20:5.0f} MiB "
              f"{(row['peak'] - row['before']) / 2**20:10.0f} MiB {row['seconds']:8.1f} {row['cells']:11d}")
    largest, smallest = rows[-1], rows[0]
    growth = (largest["peak"] - smallest["peak"]) / (largest["frames"] - smallest["frames"]) * 1000
    print(f"\ntarget: peak <= {TARGET / 2**20:.0f} MiB at {largest['frames']} frames: {largest['peak'] / 2**20:.0f} MiB; "
          f"growth of the peak: {growth / 2**20:.1f} MiB per 1000 frames "
          f"(the per-frame counts kept are {largest['cells'] * 14 / largest['frames']:.0f} bytes per frame)")
    return 0 if largest["peak"] <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
