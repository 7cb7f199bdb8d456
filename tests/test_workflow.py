"""End-to-end runs of the workflow in a temporary copy of the repository.

The shared run of the whole embedded default (conftest.embedded_run) is only read here: the fresh
run restored the pinned inputs with dvc and built every benchmark's table. What changes something
starts from this module's own copy of the narrow run (conftest.narrow_run: Painting Vision, the
embedded checkpoint and its baseline) and goes through the sequence a maintainer lives through: a
no-op re-run, adding a model, a metric-code change, a label and an image change; then the graph's
promises on the same copy: each kind of change redoing exactly the work it affects (the shards of
the jobs a run executed read from what it printed), and the dry run
(`snakemake -n`) showing exactly the jobs the run then executes, rule by rule (planned_then_run);
the same bytes elsewhere (a renamed copy, a link, a moved checkout) planning nothing; the resolved
config honoured. Code changes, whose runs prove nothing more, are planned only.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pytest
import yaml
from workflow_helpers import (ROOT, executed_jobs, executed_wildcards, label_of_a_test_frame, only_benchmark,
                              planned_job_table, pv_models, run, tracked_copy)

from segbench.core.model_spec import shard_of

pytestmark = pytest.mark.workflow
SHARDS = 2  # the narrow configuration's Painting Vision test split: 16 frames in shards of 8


def planned_jobs(repo: Path, *targets: str) -> dict[str, int]:
    """Rule -> job count of a dry run ({} when there is nothing to do)."""
    return planned_job_table(run(repo, "snakemake", *targets, "-n", "--quiet", "rules").stdout)


def run_output(repo: Path, *args: str) -> str:
    """Run the workflow (extra arguments: targets, --configfile, ...); what it printed."""
    done = run(repo, "snakemake", "--cores", "2", *args)
    return done.stdout + done.stderr


def run_jobs(repo: Path, *args: str) -> dict[str, int]:
    """Run the workflow and count the jobs it ran."""
    return executed_jobs(run_output(repo, *args))


@dataclass(frozen=True)
class Ran:
    """What a run printed, and the jobs it executed, read from that."""

    output: str

    @cached_property
    def jobs(self) -> dict[str, int]:
        """Rule -> how many of its jobs ran."""
        return executed_jobs(self.output)

    def shards(self, rule: str) -> list[tuple[str, int]]:
        """(model, shard) of each job of `rule` it executed, sorted ("" for the floor's, which has no model)."""
        return sorted((w.get("model", ""), int(w["shard"])) for w in executed_wildcards(self.output, rule))


def planned_then_run(repo: Path, *args: str) -> Ran:
    """A run whose jobs must be, rule by rule, the jobs the dry run before it planned."""
    planned = planned_jobs(repo, *args)
    ran = Ran(run_output(repo, *args))
    assert ran.jobs == planned, f"planned {planned}, ran {ran.jobs}"
    return ran


def leaderboard(repo: Path) -> dict:
    return json.loads((repo / "results" / "leaderboard.json").read_text())


def model_shards(repo: Path) -> int:
    """How many inference shards the copy's config makes, over every (benchmark, split, model)."""
    from segbench.workflow.config import check_config
    from segbench.workflow.plan import Plan

    with contextlib.chdir(repo):  # the config's paths (manifests) are the copy's
        plan = Plan(check_config(yaml.safe_load(Path("config/config.yaml").read_text()), "config.yaml"))
        return sum(len(plan.benchmarks[b].shards(s)) for b, s, _ in plan.evaluations())


def pv_group(repo: Path) -> dict:
    return next(g for g in leaderboard(repo)["groups"] if g["benchmark"] == "painting-vision")


@pytest.fixture(scope="module")
def first_run(narrow_run, tmp_path_factory) -> Path:
    """This module's copy of the narrow run (conftest.py), which its tests go on changing, in order."""
    return narrow_run.copy_to(tmp_path_factory.mktemp("workflow") / "repo")


def test_full_run_restores_pinned_inputs_and_builds_the_table(embedded_run):
    full_run = embedded_run.repo
    board = leaderboard(full_run)
    assert [g["benchmark"] for g in board["groups"]] == ["easyportrait", "idd20k-icvgip2020", "painting-vision"]
    for other in board["groups"][:2]:
        assert [r["model"] for r in other["rows"]] == [other["rows"][0]["model"], "floor"]
        # two drives / two users: no interval, so no verdict (core.significance.MIN_UNITS)
        assert re.fullmatch(r"too few units \(2 \w+ units\) for an interval", other["rows"][0]["beats_floor"])
    group = pv_group(full_run)
    assert group["split"] == "test"
    assert [r["model"] for r in group["rows"]][-1] == "floor"
    assert {r["model"] for r in group["rows"]} == {"best", "segformer-ade", "best-onnx", "deeplab-pv", "floor"}
    assert {r["beats_floor"] for r in group["rows"] if r["model"] != "floor"} == {
        "too few units (4 wall_id units) for an interval"}
    manifest = json.loads((full_run / "data_manifest.json").read_text())
    assert group["dataset_id"] == manifest["dataset_id"]
    for suffix in (".csv", ".md"):
        assert (full_run / "results" / f"leaderboard{suffix}").stat().st_size > 0
    metrics = json.loads((full_run / "metrics.json").read_text())
    assert set(metrics["painting-vision"]["test"]) == {"best", "segformer-ade", "best-onnx", "deeplab-pv", "floor"}
    assert set(metrics["idd20k-icvgip2020"]["test"]) == {"idd-best", "floor"}
    assert set(metrics["easyportrait"]["test"]) == {"easyportrait-best", "floor"}


def test_table_equals_the_one_shot_command(first_run: Path, oneshot_run):
    """The one-shot command run on the same pinned bytes (from the repository root: conftest.oneshot_run)."""
    for name, oneshot in (("best", "submission.json"), ("segformer-ade", "submission.segformer-ade.json")):
        workflow = (first_run / "results" / "painting-vision" / "test" / name / "submission.json").read_bytes()
        assert workflow == (oneshot_run.folder / oneshot).read_bytes()


def test_no_op_rerun_does_nothing(first_run: Path):
    assert planned_jobs(first_run) == {}
    out = run(first_run, "snakemake", "--cores", "2")
    assert "Nothing to be done" in out.stdout + out.stderr


def test_adding_a_model_runs_only_its_jobs(first_run: Path):
    config_path = first_run / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["models"]["best-320"] = dict(config["models"]["best"], inference_size=320)
    config["benchmarks"]["painting-vision"]["models"].append("best-320")
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    assert planned_then_run(first_run).jobs == {
        "content_key": 1 + 2 * SHARDS,  # the model's bytes, each shard's inference and scoring
        "checkpoint_identity": 1, "infer": SHARDS, "score": SHARDS, "metrics": 1, "submission": 1,
        "uncertainty": 1, "slices": 1, "figures": 1, "overlays": 1,
        "plot_data": 1, "leaderboard": 1, "all": 1,
    }
    rows = pv_group(first_run)["rows"]
    assert {r["model"] for r in rows} == {"best", "best-320", "segformer-ade", "floor"}
    # Taken out again, it leaves the table alone to re-make (and the later scenarios two models to redo).
    config["benchmarks"]["painting-vision"]["models"].remove("best-320")
    del config["models"]["best-320"]
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    assert planned_then_run(first_run).jobs == {"plot_data": 1, "leaderboard": 1, "all": 1}
    assert {r["model"] for r in pv_group(first_run)["rows"]} == {"best", "segformer-ade", "floor"}


def test_metric_code_change_rescores_without_inference(first_run: Path):
    metrics_py = first_run / "src" / "segbench" / "core" / "metrics.py"
    original = metrics_py.read_text()
    metrics_py.write_text(original + "\n")
    jobs = planned_jobs(first_run)
    metrics_py.write_text(original)
    assert "infer" not in jobs and "score" not in jobs
    # Painting Vision's models and the floor: the narrow configuration has no other benchmark (the
    # whole embedded default adds IDD's and EasyPortrait's model and floor: + 2 + 2)
    assert jobs["metrics"] == len(pv_models(first_run)) + 1
    assert planned_jobs(first_run) == {}  # the same bytes again: nothing (a newer time alone re-runs nothing)


def a_test_frame_in_the_other_shard(repo: Path, frame: str) -> str:
    rows = csv.DictReader((repo / "data" / "frames.csv").read_text().splitlines())
    return next(row["frame_id"] for row in rows
                if row["split"] == "test" and shard_of(row["frame_id"], SHARDS) != shard_of(frame, SHARDS))


def test_a_label_and_an_image_change_redo_their_own_shards_work(first_run: Path):
    """One label changed (half its frame becomes window) and one image in the other shard: refused
    until the manifest is re-pinned; then the label's shard is re-scored without inference, the
    image's inferred and scored again, the floor re-scored on the label's shard alone, and the
    dataset id and the table change."""
    from PIL import Image
    import numpy as np

    before = pv_group(first_run)
    label = label_of_a_test_frame(first_run)
    mask = np.array(Image.open(label))
    mask[: mask.shape[0] // 2] = 8  # half the frame becomes window
    Image.fromarray(mask).save(label)
    other = a_test_frame_in_the_other_shard(first_run, label.stem)
    image = next((first_run / "data" / "images").glob(f"{other}.*"))
    pixels = np.array(Image.open(image))
    pixels[:8, :8] = 255 - pixels[:8, :8]
    Image.fromarray(pixels).save(image)
    # Unpinned bytes are refused, naming the file ...
    failed = run(first_run, "snakemake", "--cores", "2", check=False)
    assert failed.returncode != 0 and label.name in failed.stderr + failed.stdout
    # ... until the maintainer re-pins the manifest.
    run(first_run, "segbench", "manifest", "--data", "data", "--out", "data_manifest.json")
    ran = planned_then_run(first_run)
    models = sorted(pv_models(first_run))
    labelled, imaged = shard_of(label.stem, SHARDS), shard_of(other, SHARDS)
    assert ran.shards("infer") == [(m, imaged) for m in models]
    assert ran.shards("score") == sorted((m, s) for m in models for s in (labelled, imaged))
    assert ran.shards("score_floor") == [("", labelled)]
    jobs = ran.jobs
    assert jobs["dataset_identity"] == 1 and jobs["audit"] == 1  # the audit still runs on a changed dataset
    assert jobs["metrics"] == len(models) + 1 and jobs["submission"] == len(models)
    # the dataset's marker, and every shard's, decided again after dataset_identity
    assert jobs["content_key"] == 1 + SHARDS * (2 * len(models) + 1)
    after = pv_group(first_run)
    assert after["dataset_id"] != before["dataset_id"]
    assert after["rows"] != before["rows"]


def test_config_errors_name_the_key(tmp_path: Path):
    repo = tracked_copy(tmp_path)
    config_path = repo / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["shard_size"] = "eight"
    config_path.write_text(yaml.safe_dump(config))
    out = run(repo, "snakemake", "-n", check=False)
    assert out.returncode != 0 and "field 'shard_size': 'eight' is not of type 'integer'" in out.stdout + out.stderr

    config["shard_size"] = 8
    config["benchmarks"]["painting-vision"]["models"].append("nonexistent")
    config_path.write_text(yaml.safe_dump(config))
    out = run(repo, "snakemake", "-n", check=False)
    assert out.returncode != 0 and "model 'nonexistent' is not defined" in out.stdout + out.stderr


def test_the_configs_slices_reach_the_slices_job(tmp_path: Path):
    """The config entry's `slices` list is the slices job's --slicings (quoted JSON), absent without
    one: a dry run of that job alone, on a copy holding the frame index the graph's parameters read
    and empty counts files standing in for the scoring's."""
    from segbench.protocols.definitions import load_benchmark
    from segbench.records.frameindex import build_index, write_index
    from segbench.steps.dataset_identity import identify_dataset
    from segbench.workflow.config import check_config
    from segbench.workflow.plan import Plan

    repo = only_benchmark(tracked_copy(tmp_path))
    benchmark = load_benchmark("painting-vision")
    manifest, frames = identify_dataset(benchmark, ROOT / "data", ROOT / "data_manifest.json")
    write_index(repo / "results" / "painting-vision" / "frames.json",
                build_index(benchmark.name, ROOT / "data", frames, manifest))
    config_path = repo / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    with contextlib.chdir(repo):  # the config's manifest is the copy's
        plan = Plan(check_config(yaml.safe_load(config_path.read_text()), "config.yaml"))
        shards = plan.benchmarks["painting-vision"].shards("test")
    for model in ("best", "segformer-ade", "floor"):
        for shard in shards:
            counts = repo / "results" / "painting-vision" / "test" / model / "counts" / f"shard-{shard}.parquet"
            counts.parent.mkdir(parents=True, exist_ok=True)
            counts.touch()

    def command(slices) -> str:
        entry = config["benchmarks"]["painting-vision"]
        entry.pop("slices", None)
        if slices is not None:
            entry["slices"] = slices
        config_path.write_text(yaml.safe_dump(config, sort_keys=False))
        out = run(repo, "snakemake", "-n", "-p", "--allowed-rules", "slices", "--",
                  "results/painting-vision/test/best/slices.json").stdout
        return next(line for line in out.splitlines() if line.startswith("Shell command: segbench slices "))

    rooms = [{"key": "room", "column": "room"}, {"key": "b", "column": "brightness", "bins": [0, 128, 255]}]
    assert (" --slicings '[{\"column\": \"room\", \"key\": \"room\"}, {\"bins\": [0, 128, 255], \"column\": "
            "\"brightness\", \"key\": \"b\"}]' --resamples ") in command(rooms)
    assert " --slicings '[]' --resamples " in command([])
    assert "--slicings" not in command(None)


def test_missing_pin_says_which_and_how_to_fix(tmp_path: Path):
    repo = tracked_copy(tmp_path)
    (repo / "artifacts" / "best.pt.dvc").unlink()
    out = run(repo, "snakemake", "-n", check=False)
    assert out.returncode != 0
    assert "artifacts/best.pt" in out.stdout + out.stderr and "dvc add" in out.stdout + out.stderr


def test_unreachable_remote_says_which_and_how_to_fix(tmp_path: Path):
    repo = tracked_copy(tmp_path)
    shutil.rmtree(repo / "dvc-store")
    out = run(repo, "snakemake", "--cores", "1", check=False)
    assert out.returncode != 0
    assert "dvc pull" in out.stderr and "dvc remote list" in out.stderr


def test_failing_audit_stops_before_inference(tmp_path: Path, narrow_run):
    repo = narrow_run.copy_to(tmp_path / "repo")
    frames = repo / "data" / "frames.csv"
    reader = csv.DictReader(frames.read_text().splitlines())
    rows = list(reader)
    first_test = next(row for row in rows if row["split"] == "test")
    test_wall = first_test["wall_id"]
    first_test["split"] = "train"  # the wall now crosses splits
    with frames.open("w", newline="") as out:
        writer = csv.DictWriter(out, reader.fieldnames, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    run(repo, "segbench", "manifest", "--data", "data", "--out", "data_manifest.json")
    planned = planned_jobs(repo)
    assert planned["infer"] >= 1 and planned["audit"] == 1  # what the split's change would re-make past the audit
    out = run(repo, "snakemake", "--cores", "1", check=False)
    assert out.returncode != 0
    assert "results/painting-vision/audit.json" in out.stderr
    assert test_wall in out.stderr
    ran = executed_jobs(out.stdout + out.stderr)
    assert "infer" not in ran and "score" not in ran, ran  # stopped at the audit: no inference, no scoring


# --- the graph tells the truth (issue 11), on the same copy ---------------------------------------
# Each scenario runs only the results table's target (`leaderboard`): the plots re-run exactly like
# the table's other inputs, and leaving them out keeps the suite's time down.


def pinned_change(repo: Path, edit) -> None:
    """Change the dataset with `edit(repo)`, then re-pin its manifest as a maintainer does."""
    edit(repo)
    run(repo, "segbench", "manifest", "--data", "data", "--out", "data_manifest.json")


def test_touched_files_rerun_nothing(first_run: Path):
    assert planned_jobs(first_run) == {}  # the label change's run above left everything (plots too) done
    label = label_of_a_test_frame(first_run)
    image = next((first_run / "data" / "images").glob(f"{label.stem}.*"))
    # same bytes, new times (as touch, a re-checkout or dvc checkout leave them): hashed again
    # when the DAG is built (the cheap identity check), found the same
    for path in (label, image, first_run / "artifacts" / "best.pt", *(first_run / "artifacts" / "segformer-ade").iterdir()):
        os.utime(path)
    assert planned_then_run(first_run).jobs == {}


def test_the_same_bytes_elsewhere_re_run_nothing(first_run: Path, tmp_path: Path):
    config_path = first_run / "config" / "config.yaml"
    committed = config_path.read_text()
    shutil.copytree(first_run / "data", tmp_path / "moved data")  # another disk, another name
    shutil.copy(first_run / "data_manifest.json", tmp_path / "its manifest.json")
    shutil.copytree(first_run / "artifacts" / "segformer-ade", tmp_path / "baseline")
    os.symlink(first_run / "artifacts" / "best.pt", tmp_path / "linked.pt")
    config = yaml.safe_load(committed)
    config["benchmarks"]["painting-vision"].update(data=str(tmp_path / "moved data"),
                                                   manifest=str(tmp_path / "its manifest.json"))
    config["models"]["segformer-ade"]["path"] = str(tmp_path / "baseline")
    config["models"]["best"]["path"] = str(tmp_path / "linked.pt")
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    try:
        assert planned_then_run(first_run).jobs == {}
    finally:
        config_path.write_text(committed)
    moved = first_run.parent / "moved checkout"
    first_run.rename(moved)
    try:
        assert planned_jobs(moved) == {}
    finally:
        moved.rename(first_run)


def test_a_frame_removed_and_one_added_change_their_shard_only(first_run: Path):
    frame = label_of_a_test_frame(first_run).stem
    shard = shard_of(frame, SHARDS)
    added = next(name for name in (f"added-{i}" for i in itertools.count()) if shard_of(name, SHARDS) == shard)

    def swap_frame(repo: Path) -> None:
        """`frame` removed; `added` (its label, its image inverted: a frame of its own) in its place."""
        from PIL import Image
        import numpy as np

        frames_csv = repo / "data" / "frames.csv"
        lines = frames_csv.read_text().splitlines()
        row = next(line for line in lines if line.startswith(f"{frame},"))
        lines = [line for line in lines if not line.startswith(f"{frame},")] + [row.replace(frame, added, 1)]
        frames_csv.write_text("\n".join(lines) + "\n")
        (repo / "data" / "labels" / f"{frame}.png").rename(repo / "data" / "labels" / f"{added}.png")
        image = next((repo / "data" / "images").glob(f"{frame}.*"))
        Image.fromarray(255 - np.array(Image.open(image))).save(image.with_name(f"{added}{image.suffix}"))
        image.unlink()

    pinned_change(first_run, swap_frame)
    ran = planned_then_run(first_run, "leaderboard")
    models = sorted(pv_models(first_run))  # 16 frames again: 2 shards, only the two frames' one changed
    assert ran.shards("infer") == ran.shards("score") == [(m, shard) for m in models], ran.jobs
    assert ran.shards("score_floor") == [("", shard)], ran.jobs


def test_code_changes_rerun_the_steps_that_import_the_code(first_run: Path):
    # the results table's target, which the tests before this one brought up to date
    source = first_run / "src" / "segbench"
    original = (source / "stages" / "inference.py").read_text()
    (source / "stages" / "inference.py").write_text(original + "\n")
    jobs = planned_jobs(first_run, "leaderboard")
    (source / "stages" / "inference.py").write_text(original)
    shards = model_shards(first_run)  # every model's inference shards, of all three benchmarks
    assert jobs["infer"] == shards and jobs["score"] == shards and "score_floor" not in jobs
    assert planned_jobs(first_run, "leaderboard") == {}  # the same bytes again: nothing
    (source / "synthetic" / "training.py").write_text((source / "synthetic" / "training.py").read_text() + "\n")
    assert planned_jobs(first_run, "leaderboard") == {}  # a module no step imports


def pv_slicings(repo: Path) -> dict[str, tuple[str, list[str]]]:
    """model -> (slicings_from, slicing keys) of each Painting Vision model's slices.json, and
    the table's: every row that has slices, under "table"."""
    found = {}
    for model in pv_models(repo):
        document = json.loads((repo / "results" / "painting-vision" / "test" / model / "slices.json").read_text())
        found[model] = (document["slicings_from"], list(document["slicings"]))
    rows = [r for g in leaderboard(repo)["groups"] if g["benchmark"] == "painting-vision" for r in g["rows"]]
    found["table"] = sorted({tuple(r["slices"]) for r in rows if "slices" in r})
    return found


def test_a_config_slices_change_reruns_the_slices_jobs_and_the_table_only(first_run: Path):
    # the results table's target, which the data changes above brought up to date
    config_path = first_run / "config" / "config.yaml"
    committed = config_path.read_text()
    config = yaml.safe_load(committed)
    config["benchmarks"]["painting-vision"]["slices"] = [{"key": "light", "column": "lighting"}]
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    try:
        jobs = run_jobs(first_run, "leaderboard")
        assert pv_slicings(first_run) == {**{m: ("config", ["light"]) for m in pv_models(first_run)},
                                          "table": [("light",)]}
    finally:
        config_path.write_text(committed)
    models = len(pv_models(first_run))
    assert jobs == {"slices": models, "leaderboard": 1}, jobs
    assert run_jobs(first_run, "leaderboard") == {"slices": models, "leaderboard": 1}  # the definition's again
    assert pv_slicings(first_run) == {**{m: ("benchmark", ["lighting"]) for m in pv_models(first_run)},
                                      "table": [("lighting",)]}


def another_checkpoint(repo: Path) -> Path:
    """A second ten-class checkpoint: the embedded model with one weight tensor halved."""
    import torch

    doc = torch.load(repo / "artifacts" / "best.pt", weights_only=True)
    name = next(k for k, v in doc["state_dict"].items() if v.is_floating_point())
    doc["state_dict"][name] = doc["state_dict"][name] * 0.5
    path = repo / "artifacts" / "other.pt"
    torch.save(doc, path)
    return path


def test_a_configfile_is_honoured_by_every_job(first_run: Path):
    other = another_checkpoint(first_run)
    config = yaml.safe_load((first_run / "config" / "config.yaml").read_text())
    config["models"]["best"]["path"] = "artifacts/other.pt"
    (first_run / "my.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    jobs = planned_then_run(first_run, "leaderboard", "--configfile", "my.yaml").jobs
    # only that model's jobs: its identity, inference and scoring of both shards, its records
    assert jobs["checkpoint_identity"] == 1 and jobs["infer"] == 2 and jobs["score"] == 2, jobs
    assert "score_floor" not in jobs and jobs["submission"] == 1
    record = json.loads((first_run / "results" / "painting-vision" / "test" / "best" / "submission.json").read_text())
    from segbench.io.fileio import sha256_file

    assert record["checkpoint_sha256"] == sha256_file(other)
    run(first_run, sys.executable, "benchmark.py", "--data", "data", "--checkpoint", "artifacts/other.pt",
        "--split", "test", "--emit-submission", "other.json")
    oneshot = json.loads((first_run / "other.json").read_text())
    assert oneshot["checkpoint_sha256"] == record["checkpoint_sha256"]
    assert oneshot["shared_metrics"] == record["shared_metrics"]  # its numbers, not the old checkpoint's


def test_a_config_override_is_honoured_too(first_run: Path):
    # over the --configfile above (other.pt), the committed checkpoint through --config
    record = first_run / "results" / "painting-vision" / "test" / "best" / "submission.json"
    before = json.loads(record.read_text())
    jobs = planned_then_run(first_run, "leaderboard", "--configfile", "my.yaml", "--config",
                            "models={best: {kind: checkpoint, path: artifacts/best.pt, label_space: painting-vision-10}}").jobs
    assert jobs["infer"] == 2 and jobs["checkpoint_identity"] == 1
    after = json.loads(record.read_text())
    from segbench.io.fileio import sha256_file

    assert after["checkpoint_sha256"] == sha256_file(first_run / "artifacts" / "best.pt") != before["checkpoint_sha256"]
