"""Exactly the affected work: which jobs each kind of change re-runs, on 2,000 frames and two models.

    .venv/bin/python benchmarks/workflow_changes.py [--frames 2000] [--workdir build/bench-changes]

In a work folder under the git-ignored build/ it copies the repository as a clone holds it,
generates N valid Painting Vision test frames (benchmarks/workflow_scale.py's generator, 64x48,
walls of 40) and their manifest, and writes a config with that one benchmark and two models: the
embedded `best` and `second` (the same network with one weight tensor halved, so other bytes);
shard_size 8 and max_shards at the schema's default (100 shards). After one full run it makes each
change below in turn, re-pins the manifest where the change is to the dataset (as a maintainer
does), plans it (`snakemake -n`, timed), runs `snakemake --cores C` and counts the jobs each rule
ran (from Snakemake's log), which must be, rule by rule, the jobs the dry run planned:

  touched      a label, an image and both checkpoints touched (same bytes, new times)
  label        one test label changed
  image        one test image changed
  added        one frame added to the split
  removed      one frame removed from the split
  checkpoint   `second`'s checkpoint changed
  metric-code  a change to segbench/core/metrics.py
  infer-code   a change to segbench/stages/inference.py
  unused-code  a change to a module no step imports (segbench/synthetic/training.py)
  renamed      the config's data and manifest pointed at a byte-identical copy in another folder
  moved        the checkout moved to another folder (and the config back to data/)

(--changes NAME,... makes only those, in this order, after the full run; --plan-only sets the
copy up and prints the full run's planned jobs per rule, what the test of the benchmark scripts
runs, since the full run alone takes minutes.)

and checks each against what must hold (issue 11, docs/workflow.md "What re-runs"). It prints the
jobs per rule for every change and writes WORKDIR/workflow_changes.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from workflow_scale import (  # noqa: E402
    BENCHMARK, DATA, MANIFEST, generate_dataset, print_jobs, run, tracked_copy, write_config,
)
from job_counts import executed_jobs, planned_job_table  # noqa: E402  (tools/, on the path workflow_scale set)

MODELS = ("best", "second")
CHANGES = ("touched", "label", "image", "added", "removed", "checkpoint", "metric-code", "infer-code", "unused-code",
           "renamed", "moved")


def log(message: str) -> None:
    print(f"[workflow_changes] {message}", flush=True)


def second_checkpoint(repo: Path, factor: float) -> None:
    """artifacts/second.pt: the embedded network with its first weight tensor scaled by `factor`."""
    import torch

    doc = torch.load(repo / "artifacts" / "best.pt", weights_only=True)
    name = next(k for k, v in doc["state_dict"].items() if v.is_floating_point())
    doc["state_dict"][name] = doc["state_dict"][name] * factor
    torch.save(doc, repo / "artifacts" / "second.pt")


def rewrite(path: Path, edit: Callable[[Image.Image], Image.Image]) -> None:
    """Replace a frame file by an edited copy (a new file, as an editor saving it would make)."""
    with Image.open(path) as image:
        edited = edit(image.copy())
    path.unlink()
    edited.save(path, **({"quality": 95} if path.suffix == ".jpg" else {}))


def frame_rows(repo: Path) -> list[str]:
    return (repo / DATA / "frames.csv").read_text().splitlines()


def repin(repo: Path) -> None:
    run(repo, "segbench", "manifest", "--benchmark", BENCHMARK, "--data", DATA, "--out", MANIFEST)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--workdir", type=Path, default=ROOT / "build" / "bench-changes")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--changes", type=lambda text: text.split(","), default=None, metavar="NAME,...",
                        help="only these changes, in the order above (default: all)")
    parser.add_argument("--plan-only", action="store_true",
                        help="set the copy up and plan its full run (snakemake -n); run and change nothing")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.changes or ()) - set(CHANGES))
    if unknown:
        parser.error(f"--changes: unknown {', '.join(unknown)} (known: {', '.join(CHANGES)})")

    workdir = args.workdir.resolve()
    if workdir.exists():
        shutil.rmtree(workdir)
    repo = workdir / "repo"
    repo.mkdir(parents=True)
    log(f"copying the repository to {repo}; generating {args.frames} frames")
    tracked_copy(repo)
    generate_dataset(repo / DATA, args.frames, 40, workdir / "scratch")
    repin(repo)
    config = write_config(repo, None, 64)
    config["models"]["second"] = dict(config["models"]["best"], path="artifacts/second.pt")
    config["benchmarks"][BENCHMARK]["models"] = list(MODELS)
    (repo / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    run(repo, "dvc", "pull", "-q", "artifacts/best.pt.dvc")
    second_checkpoint(repo, 0.5)

    if args.plan_only:
        _, output = run(repo, "snakemake", "-n", "--quiet", "rules")
        print_jobs(planned_job_table(output))
        print("--plan-only: the full run and the changes are not made")
        return 0
    log(f"full run: snakemake --cores {args.cores}")
    seconds, output = run(repo, "snakemake", "--cores", str(args.cores))
    full = executed_jobs(output)
    log(f"full run: {seconds:.0f} s, {sum(full.values())} jobs")
    test_ids = [line.split(",")[0] for line in frame_rows(repo)[1:]]
    label = lambda i: repo / DATA / "labels" / f"{test_ids[i]}.png"  # noqa: E731
    image = lambda i: repo / DATA / "images" / f"{test_ids[i]}.jpg"  # noqa: E731

    def touched() -> None:
        for path in (label(0), image(1), repo / "artifacts" / "best.pt", repo / "artifacts" / "second.pt"):
            os.utime(path)

    def changed_label() -> None:
        rewrite(label(2), lambda m: m.point(lambda v: 8 if v == 1 else v))
        repin(repo)

    def changed_image() -> None:
        rewrite(image(3), lambda m: m.point(lambda v: 255 - v))
        repin(repo)

    def added_frame() -> None:
        rows = frame_rows(repo)
        first = rows[1].split(",")[0]
        shutil.copyfile(repo / DATA / "images" / f"{first}.jpg", repo / DATA / "images" / "zz_added.jpg")
        shutil.copyfile(repo / DATA / "labels" / f"{first}.png", repo / DATA / "labels" / "zz_added.png")
        _, wall, _, *meta = rows[1].split(",")  # frame_id, wall_id, split, then any metadata columns
        (repo / DATA / "frames.csv").write_text("\n".join(rows + [",".join(["zz_added", wall, "test", *meta])]) + "\n")
        repin(repo)

    def removed_frame() -> None:
        gone = test_ids[4]
        rows = [r for r in frame_rows(repo) if not r.startswith(f"{gone},")]
        (repo / DATA / "frames.csv").write_text("\n".join(rows) + "\n")
        label(4).unlink()
        image(4).unlink()
        repin(repo)

    config_path = repo / "config" / "config.yaml"

    def renamed_copy() -> None:
        shutil.copytree(repo / DATA, workdir / "renamed copy")
        shutil.copyfile(repo / MANIFEST, workdir / "renamed manifest.json")
        config = yaml.safe_load(config_path.read_text())
        config["benchmarks"][BENCHMARK].update(data=str(workdir / "renamed copy"),
                                               manifest=str(workdir / "renamed manifest.json"))
        config_path.write_text(yaml.safe_dump(config, sort_keys=False))

    def moved_checkout() -> None:
        nonlocal repo, config_path
        config = yaml.safe_load(config_path.read_text())
        config["benchmarks"][BENCHMARK].update(data=DATA, manifest=MANIFEST)
        config_path.write_text(yaml.safe_dump(config, sort_keys=False))
        repo = repo.rename(workdir / "moved checkout")
        config_path = repo / "config" / "config.yaml"

    def code_change(module: str) -> Callable[[], None]:
        def change() -> None:
            path = repo / "src" / "segbench" / module
            path.write_text(path.read_text() + "\n# changed\n")
        return change

    # (name, change, check of the jobs it ran): what must hold
    per_model = len(MODELS)
    scenarios = [
        ("touched", touched, lambda j: j == {}),
        ("label", changed_label, lambda j: "infer" not in j and j.get("score") == per_model and j.get("score_floor") == 1
         and j.get("audit") == 1),
        ("image", changed_image, lambda j: j.get("infer") == per_model and j.get("score") == per_model
         and "score_floor" not in j),
        ("added", added_frame, lambda j: j.get("infer", 0) <= per_model and j.get("score_floor", 0) <= 1),
        ("removed", removed_frame, lambda j: j.get("infer", 0) <= per_model and j.get("score_floor", 0) <= 1),
        ("checkpoint", lambda: second_checkpoint(repo, 0.25), lambda j: j.get("checkpoint_identity") == 1
         and j.get("infer") == 100 and j.get("score") == 100 and "score_floor" not in j and j.get("submission") == 1),
        ("metric-code", code_change("core/metrics.py"), lambda j: not {"infer", "score", "score_floor"} & set(j)),
        ("infer-code", code_change("stages/inference.py"), lambda j: "score_floor" not in j and j.get("infer") == 2 * 100),
        ("unused-code", code_change("synthetic/training.py"), lambda j: j == {}),
        ("renamed", renamed_copy, lambda j: j == {}),
        ("moved", moved_checkout, lambda j: j == {}),
    ]
    assert [name for name, _, _ in scenarios] == list(CHANGES)
    scenarios = [s for s in scenarios if args.changes is None or s[0] in args.changes]
    results: dict[str, dict] = {"frames": args.frames, "models": list(MODELS), "full_run": full, "changes": {}}
    ok = True
    for name, change, check in scenarios:
        change()
        plan_seconds, output = run(repo, "snakemake", "-n", "--quiet", "rules")
        planned = planned_job_table(output)
        start = time.perf_counter()
        _, output = run(repo, "snakemake", "--cores", str(args.cores))
        jobs = executed_jobs(output)
        holds = check(jobs) and planned == jobs
        ok &= holds
        results["changes"][name] = {"jobs": jobs, "planned": planned, "plan_seconds": round(plan_seconds, 1),
                                    "seconds": round(time.perf_counter() - start, 1), "holds": holds}
        log(f"{name}: planned {sum(planned.values())} jobs in {plan_seconds:.1f} s, ran {sum(jobs.values())} in "
            f"{results['changes'][name]['seconds']} s: {'holds' if holds else 'DOES NOT HOLD'}")
    (workdir / "workflow_changes.json").write_text(json.dumps(results, indent=2) + "\n")

    print(f"\nworkflow changes: {args.frames} frames, models {', '.join(MODELS)}, full run {sum(full.values())} jobs")
    rules = sorted({r for c in results["changes"].values() for r in c["jobs"]})
    print(f"{'change':<13}" + "".join(f"{r[:10]:>11}" for r in rules) + f"{'-n s':>7}{'run s':>8}  plan = run, holds")
    for name, entry in results["changes"].items():
        print(f"{name:<13}" + "".join(f"{entry['jobs'].get(r, 0):>11}" for r in rules)
              + f"{entry['plan_seconds']:>7}{entry['seconds']:>8}  {'yes' if entry['holds'] else 'NO'}")
    print(f"figures: {workdir / 'workflow_changes.json'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
