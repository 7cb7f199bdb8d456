"""How the workflow scales to a large dataset: planning and no-op re-runs of 20,000 frames.

    .venv/bin/python benchmarks/workflow_scale.py [--frames 20000] [--workdir build/bench-workflow] [--plan-only]

In a work folder outside the tracked tree (build/ is git-ignored) it

1. copies the repository as a clone would hold it (tracked and unignored files, no data, no
   results) into WORKDIR/repo, so the real Snakefile, rules, schemas and code are measured;
2. generates, on the fly, a Painting Vision dataset of N frames there (WORKDIR/repo/data-scale):
   a few distinct synthetic frames from segbench.synthetic.painting_vision, shrunk to 64x48 and
   copied to make N real, decodable, valid frames, all in the test split, walls of
   --frames-per-wall frames; its manifest with `segbench manifest`;
3. writes the copy's config/config.yaml: that one benchmark, one small model (the embedded
   artifacts/best.pt, restored from the in-repository DVC remote by the workflow itself, at a
   small inference size), shard_size 8 as in the embedded default and `max_shards` left at the
   schema's default (100), which makes the shards large enough for the job count to stay in the
   hundreds;
4. counts the planned jobs per rule (`snakemake -n --quiet rules` on the fresh state), runs the
   whole workflow once for real (`snakemake --cores C`), then times, REPEATS times each, a dry
   run of the complete, up-to-date workflow (`snakemake -n`) and a no-op re-run
   (`snakemake --cores C`), checking that both find nothing to do;
5. changes one label (re-pinning the manifest, as a maintainer does) and times the dry run that
   follows, which must plan the scoring of that frame's shard and no inference;
6. prints the figures (medians, with min and max) beside the targets of issue 5 and writes them
   to WORKDIR/workflow_scale.json.

--plan-only stops after step 4's planning and prints the jobs per rule (what the test of the
benchmark scripts runs: the whole workflow takes minutes even on a few frames).

Targets: dry run <= 5 s and no-op re-run <= 5 s (medians), the dry run after a one-label change
<= 8 s (issue 21), total jobs in the hundreds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from job_counts import planned_job_table  # noqa: E402
from repo_copy import copy_env, tracked_copy  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from copies import copy_file  # noqa: E402

BENCHMARK = "painting-vision"
DATA = "data-scale"
MANIFEST = f"{DATA}_manifest.json"
FRAME_SIZE = (64, 48)  # width, height of every generated frame
DISTINCT_WALLS, DISTINCT_FRAMES_PER_WALL = 3, 8  # 24 distinct frames, copied to make N
TARGET_SECONDS = 5.0
TARGET_CHANGE_SECONDS = 8.0  # the dry run after a one-label change
TARGET_JOBS = (100, 999)  # "in the hundreds, not thousands"


def log(message: str) -> None:
    print(f"[workflow_scale] {message}", flush=True)


# --- the synthetic dataset ----------------------------------------------------------------------


def distinct_frames(scratch: Path) -> list[tuple[Image.Image, Image.Image, str]]:
    """A few synthetic (image, label, lighting) frames of the embedded generator, shrunk to FRAME_SIZE."""
    from segbench.synthetic.painting_vision import build_dataset

    rows = build_dataset(scratch, seed=0, walls=DISTINCT_WALLS, frames_per_wall=DISTINCT_FRAMES_PER_WALL)
    pairs = []
    for row in rows:
        with Image.open(scratch / "images" / f"{row['frame_id']}.jpg") as image:
            small_image = image.convert("RGB").resize(FRAME_SIZE, Image.Resampling.BICUBIC)
        with Image.open(scratch / "labels" / f"{row['frame_id']}.png") as label:
            small_label = label.resize(FRAME_SIZE, Image.Resampling.NEAREST)
        pairs.append((small_image, small_label, row["lighting"]))
    return pairs


def generate_dataset(data: Path, frames: int, frames_per_wall: int, scratch: Path) -> None:
    """N frames in the Painting Vision format, all in the test split, walls of frames_per_wall frames.

    The first len(distinct) frames are written; every later one is a copy of one of them
    (identical bytes within one split are allowed; across splits the audit would refuse them) and
    keeps its lighting, the metadata column.
    """
    from segbench.synthetic.painting_vision import FRAMES_CSV_HEADER, JPEG_OPTIONS

    pairs = distinct_frames(scratch)
    shutil.rmtree(scratch)
    (data / "images").mkdir(parents=True)
    (data / "labels").mkdir()
    walls = -(-frames // frames_per_wall)
    wall_digits, frame_digits = len(str(walls)), len(str(frames_per_wall))
    written: list[tuple[Path, Path, str]] = []
    lines = [FRAMES_CSV_HEADER]
    for index in range(frames):
        wall, number = divmod(index, frames_per_wall)
        wall_id = f"w{wall + 1:0{wall_digits}d}"
        frame_id = f"{wall_id}_f{number + 1:0{frame_digits}d}"
        image, label = data / "images" / f"{frame_id}.jpg", data / "labels" / f"{frame_id}.png"
        if index < len(pairs):
            pairs[index][0].save(image, format="JPEG", **JPEG_OPTIONS)
            pairs[index][1].save(label, format="PNG")
            written.append((image, label, pairs[index][2]))
        else:
            first_image, first_label, _ = written[index % len(pairs)]
            copy_file(first_image, image)
            copy_file(first_label, label)
        lines.append(f"{frame_id},{wall_id},test,{written[index % len(pairs)][2]}")
    (data / "frames.csv").write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")


# --- the configuration --------------------------------------------------------------------------


def write_config(repo: Path, max_shards: int | None, inference_size: int) -> dict:
    """The copy's config/config.yaml (what the Snakefile's `configfile:` reads): one benchmark, one
    model; shard_size as in the embedded default, max_shards the schema's default unless given."""
    config = {
        "results": "results",
        "shard_size": 8,
        "inference": {"batch_size": 64, "device": "cpu", "gpu": 0},
        "bootstrap": {"resamples": 1000, "seed": 0},
        "plots": {"overlay_frames": 2},
        "benchmarks": {BENCHMARK: {"data": DATA, "manifest": MANIFEST, "splits": ["test"], "models": ["best"]}},
        "models": {
            "best": {
                "kind": "checkpoint",
                "path": "artifacts/best.pt",
                "label_space": "painting-vision-10",
                "inference_size": inference_size,
            }
        },
    }
    if max_shards is not None:
        config["max_shards"] = max_shards
    (repo / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return config


# --- running and timing -------------------------------------------------------------------------


def run(repo: Path, *args: str) -> tuple[float, str]:
    """(wall-clock seconds, stdout + stderr) of a command in the copy; raises on failure."""
    env = copy_env(repo)
    start = time.perf_counter()
    done = subprocess.run(list(args), cwd=repo, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}) in {repo}:\n{output[-6000:]}")
    return seconds, output


def timed_repeats(repo: Path, repeats: int, *args: str) -> list[float]:
    seconds = []
    for _ in range(repeats):
        elapsed, output = run(repo, *args)
        if "Nothing to be done" not in output:
            raise SystemExit(f"{' '.join(args)} found work to do in an up-to-date workflow:\n{output[-4000:]}")
        seconds.append(elapsed)
    return seconds


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median_s": round(statistics.median(values), 3),
        "min_s": round(min(values), 3),
        "max_s": round(max(values), 3),
        "runs_s": [round(v, 3) for v in values],
    }


def print_jobs(jobs: dict[str, int]) -> None:
    print("jobs per rule (fresh state):")
    for rule, count in sorted(jobs.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {rule:<22}{count:>6}")
    print(f"  {'total':<22}{sum(jobs.values()):>6}")


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=20000, help="frames of the generated dataset (default 20000)")
    parser.add_argument("--workdir", type=Path, default=ROOT / "build" / "bench-workflow",
                        help="work folder, emptied first (default build/bench-workflow)")
    parser.add_argument("--frames-per-wall", type=int, default=40)
    parser.add_argument("--max-shards", type=int, default=None,
                        help="config max_shards: shards per (benchmark, split) at most (default: the schema's)")
    parser.add_argument("--inference-size", type=int, default=64, help="the model's long side at inference")
    parser.add_argument("--cores", type=int, default=2, help="snakemake --cores of the full run and no-op re-runs")
    parser.add_argument("--repeats", type=int, default=5, help="timed dry runs and no-op re-runs, each (default 5)")
    parser.add_argument("--plan-only", action="store_true",
                        help="stop after planning the fresh state: print the jobs per rule, run nothing")
    args = parser.parse_args(argv)

    workdir = args.workdir.resolve()
    if workdir == ROOT or ROOT in workdir.parents and not (workdir.relative_to(ROOT).parts[0] == "build"):
        raise SystemExit(f"--workdir {args.workdir}: must be outside the tracked tree (e.g. under build/)")
    if workdir.exists():
        shutil.rmtree(workdir)
    repo = workdir / "repo"
    repo.mkdir(parents=True)

    start = time.perf_counter()
    log(f"copying the repository to {repo}")
    tracked_copy(repo)
    log(f"generating {args.frames} frames in {repo / DATA}")
    generate_dataset(repo / DATA, args.frames, args.frames_per_wall, workdir / "scratch")
    seconds, output = run(repo, "segbench", "manifest", "--benchmark", BENCHMARK, "--data", DATA, "--out", MANIFEST)
    log(f"manifest {MANIFEST}: {output.strip().splitlines()[-1]}")
    config = write_config(repo, args.max_shards, args.inference_size)
    preparation = time.perf_counter() - start

    log("planning on the fresh state: snakemake -n --quiet rules")
    fresh_dry_run, output = run(repo, "snakemake", "-n", "--quiet", "rules")
    jobs = planned_job_table(output)
    total = sum(jobs.values())
    shards = jobs.get("infer", 0)
    frames_per_shard = -(-args.frames // shards) if shards else None
    if args.plan_only:
        print_jobs(jobs)
        print(f"dry run on the fresh state: {fresh_dry_run:.2f} s (--plan-only: nothing run, nothing timed)")
        return 0
    log(f"{total} jobs planned ({fresh_dry_run:.1f} s); running the whole workflow: snakemake --cores {args.cores}")
    full_run, _ = run(repo, "snakemake", "--cores", str(args.cores))
    log(f"full run: {full_run:.1f} s; timing {args.repeats} dry runs and {args.repeats} no-op re-runs")
    load_before = [round(x, 2) for x in os.getloadavg()]
    dry = timed_repeats(repo, args.repeats, "snakemake", "-n")
    noop = timed_repeats(repo, args.repeats, "snakemake", "--cores", str(args.cores))
    label = repo / DATA / "labels" / sorted(os.listdir(repo / DATA / "labels"))[0]
    with Image.open(label) as mask:
        mask.point(lambda v: 8 if v == 1 else 1 if v == 8 else v).save(label)
    run(repo, "segbench", "manifest", "--benchmark", BENCHMARK, "--data", DATA, "--out", MANIFEST)
    label_dry_run, output = run(repo, "snakemake", "-n", "--quiet", "rules")
    label_jobs = planned_job_table(output)
    log(f"one label changed: the dry run plans {label_jobs} in {label_dry_run:.2f} s")

    results = {
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_before_timing": load_before,
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "frames": args.frames,
        "frames_per_wall": args.frames_per_wall,
        "frame_size": list(FRAME_SIZE),
        "max_shards": config.get("max_shards", "schema default"),
        "shards": shards,
        "frames_per_shard": frames_per_shard,
        "inference_size": args.inference_size,
        "cores": args.cores,
        "jobs": jobs,
        "total_jobs": total,
        "preparation_s": round(preparation, 1),
        "fresh_dry_run_s": round(fresh_dry_run, 3),
        "full_run_s": round(full_run, 1),
        "dry_run": summary(dry),
        "noop_rerun": summary(noop),
        "label_change_dry_run_s": round(label_dry_run, 3),
        "label_change_jobs": label_jobs,
    }
    targets = {
        "dry_run_median_le_5s": results["dry_run"]["median_s"] <= TARGET_SECONDS,
        "noop_rerun_median_le_5s": results["noop_rerun"]["median_s"] <= TARGET_SECONDS,
        "jobs_in_the_hundreds": TARGET_JOBS[0] <= total <= TARGET_JOBS[1],
        "label_change_dry_run_le_8s": label_dry_run <= TARGET_CHANGE_SECONDS,
        "label_change_plans_one_shard": label_jobs.get("score") == 1 and label_jobs.get("score_floor") == 1
        and "infer" not in label_jobs,
    }
    results["targets"] = targets
    (workdir / "workflow_scale.json").write_text(json.dumps(results, indent=2) + "\n")

    print()
    print(f"workflow scale: {args.frames} synthetic frames ({FRAME_SIZE[0]}x{FRAME_SIZE[1]}, "
          f"{-(-args.frames // args.frames_per_wall)} walls, split test), benchmark {BENCHMARK}, model best")
    print(f"machine: {os.cpu_count()} CPUs, load average (1, 5, 15 min) {load_before} before timing, "
          f"{results['machine']['load_average_after']} after, "
          f"{results['machine']['platform']}, Python {results['machine']['python']}")
    print(f"config: shard_size {config['shard_size']}, max_shards {results['max_shards']} -> {shards} shards of "
          f"{frames_per_shard} frames; inference_size {args.inference_size}; --cores {args.cores}")
    print_jobs(jobs)
    print(f"preparation (copy, {args.frames} frames, manifest): {preparation:.1f} s")
    print(f"dry run on the fresh state: {fresh_dry_run:.2f} s")
    print(f"full run: {full_run:.1f} s")
    for name, key, values in (("snakemake -n (up to date)", "dry_run", dry),
                              (f"no-op snakemake --cores {args.cores}", "noop_rerun", noop)):
        s = results[key]
        print(f"{name}: median {s['median_s']:.2f} s (min {s['min_s']:.2f}, max {s['max_s']:.2f}, "
              f"{len(values)} runs); {s['median_s'] / TARGET_SECONDS:.2f} of the {TARGET_SECONDS:.0f} s target")
    print("targets:")
    print(f"  dry run median <= {TARGET_SECONDS:.0f} s: {verdict(targets['dry_run_median_le_5s'])}")
    print(f"  no-op re-run median <= {TARGET_SECONDS:.0f} s: {verdict(targets['noop_rerun_median_le_5s'])}")
    print(f"  dry run after a one-label change <= {TARGET_CHANGE_SECONDS:.0f} s: "
          f"{verdict(targets['label_change_dry_run_le_8s'])} ({label_dry_run:.2f} s)")
    print(f"  it plans one shard's scoring and no inference: {verdict(targets['label_change_plans_one_shard'])} "
          f"({label_jobs})")
    print(f"  jobs in the hundreds ({TARGET_JOBS[0]}-{TARGET_JOBS[1]}): {verdict(targets['jobs_in_the_hundreds'])} "
          f"({total})")
    print(f"figures: {workdir / 'workflow_scale.json'}")
    return 0 if all(targets.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
