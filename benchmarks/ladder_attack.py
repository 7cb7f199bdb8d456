"""Blum & Hardt's boosting attack against a naive public board and against the Ladder.

    .venv/bin/python benchmarks/ladder_attack.py [--walls 44] [--frames-per-wall 10]
        [--mixes 400] [--attacks 3] [--resamples 1000] [--json build/ladder_attack.json]

1. draws a Painting Vision test split of WALLS walls of FRAMES_PER_WALL frames with the embedded
   generator's scenes (segbench.synthetic.attack_data: labels only, 128x96 crops of each
   wall's scene) and two honest prediction sets A and B (the labels with wrong-class rectangles
   over 0-60% of each frame, each set better on different frames, equally good on each wall);
2. divides the walls into a public and a private half by the keyed hash (core/public_private.py);
3. replays the boosting attack (core/boosting_attack.py) ATTACKS times (coin seeds 0, 1, ...),
   MIXES mixes each: against a naive board (every submission's exact public score released),
   keeping the mixes that score above the reference; against the Ladder, keeping the mixes it
   released as new bests (Blum & Hardt's attack on the Ladder); and against the Ladder with the
   naive board's rule (which, once the Ladder has released one mix, keeps every later one);
4. prints, per board and attack, the kept mixes, the public and private gains of the final
   submission over the reference (the honest set with the better released public score), the
   gap between them and the gap's standard error, and the means over the attacks.

Targets (issue 23), on the means over the attacks: on the naive board the public gain is well
above the private one (the gap more than 3 standard errors); on the Ladder, against Blum &
Hardt's attack, the public gain is within one standard error of the private gain. Each is printed
as met or MISSED (as the other benchmarks print theirs); the script's status is 0 either way.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from segbench.core.boosting_attack import AttackResult, Board, boosting_attack, ladder_board, naive_board
from segbench.synthetic.attack_data import attack_parts

SECRET = b"ladder-attack-benchmark"  # the host secret choosing the private walls
PRIVATE_FRACTION = 0.5
ERROR_SHARE = (0.0, 0.6)
SE_SEED = 0  # the bootstrap draws of the Ladder and of the gains' standard errors


NAIVE, LADDER, LADDER_THRESHOLD = "naive", "ladder", "ladder, naive rule"


def boards(resamples: int) -> dict[str, tuple[Callable[[], Board], bool]]:
    """name -> (a fresh board, whether the attacker keeps only the board's new bests)."""
    return {
        NAIVE: (naive_board, False),
        LADDER: (lambda: ladder_board(resamples, SE_SEED), True),
        LADDER_THRESHOLD: (lambda: ladder_board(resamples, SE_SEED), False),
    }


def run(walls: int, frames_per_wall: int, mixes: int, attacks: int, resamples: int,
        report=print) -> dict[str, list[AttackResult]]:
    public, private = attack_parts(walls, frames_per_wall, SECRET, PRIVATE_FRACTION, ERROR_SHARE)
    results: dict[str, list[AttackResult]] = {}
    for name, (make, new_bests) in boards(resamples).items():
        for seed in range(attacks):
            started = time.perf_counter()
            result = boosting_attack(make(), public, private, mixes, seed, resamples, SE_SEED, new_bests)
            results.setdefault(name, []).append(result)
            report(f"{name:18s} attack {seed}: kept {result.kept:4d}/{mixes}  reference {result.reference}  "
                   f"public {result.public_gain:+.4f}  private {result.private_gain:+.4f}  "
                   f"gap {result.gap:+.4f} (SE {result.gap_se:.4f}, {result.gap / result.gap_se:+.2f} SE)  "
                   f"[{time.perf_counter() - started:.1f} s]")
    return results


def summary(results: dict[str, list[AttackResult]]) -> dict[str, dict[str, float]]:
    """Per board, the means over the attacks."""
    return {name: {"kept": statistics.mean(r.kept for r in runs),
                   "public_gain": statistics.mean(r.public_gain for r in runs),
                   "private_gain": statistics.mean(r.private_gain for r in runs),
                   "gap": statistics.mean(r.gap for r in runs),
                   "gap_se": statistics.mean(r.gap_se for r in runs)}
            for name, runs in results.items()}


def targets(means: dict[str, dict[str, float]]) -> dict[str, bool]:
    naive, ladder = means[NAIVE], means[LADDER]
    return {"naive: gap > 3 SE": naive["gap"] > 3 * naive["gap_se"],
            "ladder: |gap| <= 1 SE": abs(ladder["gap"]) <= ladder["gap_se"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--walls", type=int, default=44)
    parser.add_argument("--frames-per-wall", type=int, default=10)
    parser.add_argument("--mixes", type=int, default=400)
    parser.add_argument("--attacks", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    print(f"{args.walls} walls x {args.frames_per_wall} frames, private fraction {PRIVATE_FRACTION}, "
          f"{args.mixes} mixes, {args.attacks} attacks, {args.resamples} resamples")
    results = run(args.walls, args.frames_per_wall, args.mixes, args.attacks, args.resamples)
    means = summary(results)
    for name, mean in means.items():
        print(f"{name:18s} mean: kept {mean['kept']:.1f}  public {mean['public_gain']:+.4f}  "
              f"private {mean['private_gain']:+.4f}  gap {mean['gap']:+.4f} ({mean['gap'] / mean['gap_se']:+.2f} SE)")
    met = targets(means)
    for target, ok in met.items():
        print(f"target {target}: {'met' if ok else 'MISSED'}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"arguments": {k: str(v) for k, v in vars(args).items()},
                                         "attacks": {n: [vars(r) for r in runs] for n, runs in results.items()},
                                         "means": means, "targets": met}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
