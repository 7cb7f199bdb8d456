"""The specification's one-shot command on the embedded default, as written, from the repository root."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from oneshot_helpers import ROOT, SPEC_ARGS, oneshot
from segbench.commands.oneshot import model_folder
from segbench.io.fileio import sha256_file
from segbench.protocols.definitions import load_benchmark
from segbench.stages.submission import read_record

PV = load_benchmark("painting-vision")
BEST = model_folder("best", sha256_file(ROOT / "artifacts" / "best.pt"))  # best.pt's folder in a work folder
@pytest.fixture(scope="module")
def two_runs(oneshot_run, tmp_path_factory):
    """The session's run of the command (conftest.oneshot_run), and one more, in a folder of its own."""
    folder = tmp_path_factory.mktemp("again")
    done = oneshot(*SPEC_ARGS, "--emit-submission", str(folder / "submission.json"), "--work-dir", str(folder / "work"))
    assert done.returncode == 0, done.stderr[-3000:]
    return [(oneshot_run.folder, oneshot_run), (folder, done)]


def test_submission_validates_and_models_beat_the_floor(two_runs):
    folder, done = two_runs[0]
    record = read_record(folder / "submission.json", PV)
    baseline = read_record(folder / "submission.segformer-ade.json", PV)
    manifest = json.loads((ROOT / "data_manifest.json").read_text())
    assert record["dataset_id"] == baseline["dataset_id"] == manifest["dataset_id"]
    assert record["split"] == "test" and record["inference_size"] == 640
    assert record["floor"]["beaten"] is True and baseline["floor"]["beaten"] is True
    assert record["paint_state_metrics"]["mIoU_full_10class"] is not None
    assert baseline["paint_state_metrics"] == {"painted_coverage_mae": None, "painted_coverage_frames": None,
                                               "mIoU_full_10class": None}
    assert list(record)[:7] == ["benchmark_version", "taxonomy_version", "dataset_id", "split", "checkpoint_sha256",
                                "shared_metrics", "paint_state_metrics"]
    lines = done.stdout.splitlines()
    start = lines.index("model              mode   shared_metrics.mIoU   Δ baseline               Δ floor  beats floor")
    assert lines[start - 3:start + 5] == [  # the workflow's compact table: ranked, the baseline marked, 4 walls
        "**too few units (4 wall_id units) for an interval: nothing starred, no verdict**",
        "",
        "```text",
        "model              mode   shared_metrics.mIoU   Δ baseline               Δ floor  beats floor",
        "-----------------  -----  --------------------  -----------------------  -------  -----------",
        "segformer-ade (b)  whole  0.794 [0.720, 0.870]  —                        +0.686   —",
        "best               whole  0.706 [0.624, 0.792]  -0.088 [-0.121, -0.039]  +0.598   —",
        "floor              —      0.108 [0.088, 0.126]  —                        —        —",
    ]
    work = folder / "work" / "painting-vision" / "test"
    assert f"every metric, per report and per class: {work / 'tables'}/ and {work / 'results.html'}" in lines
    assert (work / "tables" / "painting-vision" / "test" / "paint_state_metrics.md").is_file()


def test_the_floor_verdict_is_the_paired_interval_over_the_walls(two_runs):
    """The record keeps the spec's point comparison and adds the paired interval over the 4 walls
    (as core.headline computes it from the counts) and the verdict: too few walls to call it."""
    from segbench.core.headline import headline_data, paired_difference
    from segbench.records.countsio import read_counts

    folder, done = two_runs[0]
    record = read_record(folder / "submission.json", PV)
    work = folder / "work" / "painting-vision" / "test"
    manifest = json.loads((ROOT / "data_manifest.json").read_text())
    walls = {f["frame_id"]: f["wall_id"] for f in manifest["frames"]}
    best, floor = (headline_data(PV, read_counts(work / name / "counts.parquet")[0], PV.ground_truth, walls)
                   for name in (BEST, "floor"))  # best predicts the ground truth's ten classes
    paired = paired_difference(best, floor, 1000, 0)
    assert record["floor"] == {
        "metric": "shared_metrics.mIoU", "value": record["floor"]["value"], "beaten": True,
        "difference": paired.difference, "low": paired.low, "high": paired.high, "units": 4, "unit": "wall_id",
        "verdict": "too few units (4 wall_id units) for an interval"}
    assert 0 < paired.low < paired.high and round(paired.difference, 3) == 0.598
    assert ("WARNING: best, segformer-ade: not shown to beat the floor (best: too few units (4 wall_id units) for an "
            "interval; segformer-ade: too few units (4 wall_id units) for an interval)") in done.stdout


def test_inference_scoring_and_the_floor_show_their_progress(two_runs):
    """A bar per long step on stderr, each ending at the split's frames (tqdm: `what: 100%|...| n/n`)."""
    _, done = two_runs[0]
    frames = sum(1 for f in json.loads((ROOT / "data_manifest.json").read_text())["frames"] if f["split"] == "test")
    finished = {what.strip() for what in re.findall(rf"([a-z ()-]+): 100%\|[^|]*\| {frames}/{frames} ", done.stderr)}
    assert {"floor", "scoring"} <= finished and {w for w in finished if w.startswith("inference")}
    # The floor's bar before the models', each model's scoring after its inference.
    steps = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert [line.split("] ")[1] for line in steps] == [
        "dataset identity", "audit", "floor", "inference: best", "scoring: best", "inference: segformer-ade", "scoring: segformer-ade", "bootstrap"]


def test_two_models_of_one_name_in_one_run_are_refused_before_anything_is_read(tmp_path):
    done = oneshot("--data", "data", "--checkpoint", "artifacts/best.pt", "--baseline", "segformer-ade", "--baseline",
                   "segformer-ade", "--work-dir", str(tmp_path / "work"))
    assert done.returncode == 1 and done.stderr == (
        "benchmark.py: error: two of the models evaluated are named 'segformer-ade' (the checkpoint's file name, a "
        "--baseline given twice, or 'floor', the floor's): the records and the table could not tell them apart\n")
    (tmp_path / "floor.pt").write_bytes(b"never read")
    done = oneshot("--data", "data", "--checkpoint", str(tmp_path / "floor.pt"), "--work-dir", str(tmp_path / "work"))
    assert done.returncode == 1 and "two of the models evaluated are named 'floor'" in done.stderr
    assert not (tmp_path / "work").exists()


def test_second_run_reproduces_the_same_bytes(two_runs):
    (first, _), (second, _) = two_runs
    for name in ("submission.json", "submission.segformer-ade.json"):
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_unknown_split_and_baseline_are_named(tmp_path):
    done = oneshot("--data", "data", "--checkpoint", "artifacts/best.pt", "--split", "holdout")
    assert done.returncode == 1 and "unknown split 'holdout'" in done.stderr and "train" in done.stderr
    done = oneshot("--data", "data", "--checkpoint", "artifacts/best.pt", "--baseline", "deeplab-coco")
    assert done.returncode == 1 and "unknown model or baseline 'deeplab-coco'" in done.stderr


def test_manifest_mismatch_is_refused_listing_the_file(tmp_path):
    manifest = json.loads((ROOT / "data_manifest.json").read_text())
    entry = manifest["frames"][3]
    entry["label"]["sha256"] = "0" * 64
    from segbench.records.provenance import dataset_id

    manifest["dataset_id"] = dataset_id(manifest["frames"], "pv1")
    (tmp_path / "m.json").write_text(json.dumps(manifest))
    done = oneshot("--data", "data", "--checkpoint", "artifacts/best.pt", "--dataset-manifest", str(tmp_path / "m.json"),
                   "--work-dir", str(tmp_path / "work"))
    assert done.returncode == 1
    assert entry["label"]["path"] in done.stderr
    assert not (tmp_path / "work").exists()  # refused before anything was evaluated


def test_a_file_that_is_not_a_checkpoint_is_refused(tmp_path):
    bogus = tmp_path / "model.pt"
    bogus.write_text("not a checkpoint")
    done = oneshot("--data", "data", "--checkpoint", str(bogus), "--work-dir", str(tmp_path / "work"))
    assert done.returncode == 1 and str(bogus) in done.stderr and "Traceback" not in done.stderr


def test_best_with_its_wrong_pixels_void_earns_nothing_for_them(two_runs, tmp_path):
    """`best`'s masks with every wrong pixel set to 255, through benchmark.py --emit-submission: the
    void pixels are misses, so each class's recall (and mAcc) stays exactly best's, and the mIoUs are
    mmsegmentation's (histc counting, written out in forgery_fixtures), strictly below 1.0 (dropping
    them gave 1.0)."""
    from forgery_fixtures import VOID, mmseg_areas, read, void_the_wrong_pixels
    from segbench.core import metrics
    from segbench.core.evaluation import report_matrix
    from segbench.records.countsio import read_counts
    from segbench.steps.frames import frames_of_split
    from segbench.steps.metrics import metrics_document

    folder, _ = two_runs[0]
    work = tmp_path / "work" / "painting-vision" / "test"
    shutil.copytree(folder / "work", tmp_path / "work")  # best.pt's run, in the work folder this run writes into
    best_counts = (work / BEST / "counts.parquet").read_bytes()
    frames = frames_of_split(PV, ROOT / "data", "test")
    # Named `best` too: its outputs go to a folder of their own, best.pt's are left as they were.
    forged = void_the_wrong_pixels(frames, work / BEST / "predictions", tmp_path / "best")
    done = oneshot("--data", "data", "--checkpoint", str(forged), "--checkpoint-kind", "predictions", "--label-space",
                   "painting-vision-10", "--dataset-manifest", "data_manifest.json", "--emit-submission",
                   str(tmp_path / "submission.json"), "--work-dir", str(tmp_path / "work"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert (work / BEST / "counts.parquet").read_bytes() == best_counts
    record = read_record(tmp_path / "submission.json", PV)
    forged_counts = work / model_folder("best", record["checkpoint_sha256"]) / "counts.parquet"
    assert forged_counts.parent != work / BEST
    best = metrics_document(PV, [work / BEST / "counts.parquet"])["results"]
    results = metrics_document(PV, [forged_counts])["results"]

    pairs = [(read(f.label), read(forged / f.prediction)) for f in frames]
    wrong = sum(int((pred == VOID).sum() - (gt == VOID)[pred == VOID].sum()) for gt, pred in pairs)
    assert record["pixels_predicted_void"] == wrong > 0
    assert f"best: {wrong:,} of {record['pixels_evaluated']:,} evaluated pixels predicted as void" in done.stdout
    tier1 = np.full(256, VOID, np.uint8)
    tier1[:10] = [0, 1, 1, 1, 0, 0, 0, 0, 2, 0]  # the specification's reduction, written out
    for lut, classes, miou in ((None, 10, record["paint_state_metrics"]["mIoU_full_10class"]),
                               (tier1, 3, record["shared_metrics"]["mIoU"])):
        intersect, union, label = mmseg_areas(pairs, classes, lut)
        present = label > 0  # the protocol's mean: over the classes present in the ground truth
        assert miou == float((intersect[present] / union[present]).mean())
        assert miou < 1.0
    intersect, _, label = mmseg_areas(pairs, 10)
    ten = next(r for r in PV.reports if r.key == "paint_state_metrics")
    recalls = [metrics.class_accuracy(report_matrix(PV, ten, ten.space, read_counts(path)[0]))
               for path in (work / BEST / "counts.parquet", forged_counts)]
    np.testing.assert_array_equal(recalls[1], recalls[0])
    np.testing.assert_array_equal(recalls[1], intersect / label)
    assert results["paint_state_metrics"]["mAcc"] == best["paint_state_metrics"]["mAcc"]
    assert results["shared_metrics"]["window_recall"] == best["shared_metrics"]["window_recall"]
    assert record["shared_metrics"]["mIoU"] > best["shared_metrics"]["mIoU"]  # fewer false positives, never 1.0


def test_without_the_set_up_it_says_make_setup_in_one_line():
    """A python lacking a package the set-up installs (here fastjsonschema, hidden): one line, no traceback."""
    hide = ("import sys; sys.modules['fastjsonschema'] = None; sys.argv = ['benchmark.py', '--help']; "
            "exec(compile(open('benchmark.py').read(), 'benchmark.py', 'exec'), "
            "{'__name__': '__main__', '__file__': 'benchmark.py'})")
    done = subprocess.run([sys.executable, "-c", hide], cwd=ROOT, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "src")})
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"benchmark.py: {sys.executable} lacks the package 'fastjsonschema': run `make setup`, "
                           "then .venv/bin/python benchmark.py ...\n")


def test_the_conventions_names_are_aliases_of_the_specifications_flags():
    from segbench.commands.oneshot import parser

    spec = parser().parse_args(["--data", "d", "--checkpoint", "m.zip", "--emit-submission", "s.json"])
    convention = parser().parse_args(["--data", "d", "--predictions", "m.zip", "--out", "s.json"])
    assert (spec.checkpoint, spec.predictions, spec.emit_submission) == (Path("m.zip"), None, Path("s.json"))
    assert (convention.checkpoint, convention.predictions, convention.emit_submission) == (None, Path("m.zip"),
                                                                                          Path("s.json"))
    with pytest.raises(SystemExit):
        parser().parse_args(["--data", "d", "--checkpoint", "m.pt", "--predictions", "m.zip"])
