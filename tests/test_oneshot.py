"""The specification's one-shot command on the embedded default, as written, from the repository root."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from segbench.protocols.definitions import load_benchmark
from segbench.stages.submission import read_record

ROOT = Path(__file__).resolve().parents[1]
PV = load_benchmark("painting-vision")
SPEC_ARGS = ["--data", "data", "--checkpoint", "artifacts/best.pt", "--baseline", "segformer-ade", "--split", "test",
             "--dataset-manifest", "data_manifest.json"]


def oneshot(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "benchmark.py", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    outs = []
    for i in range(2):
        folder = tmp_path_factory.mktemp(f"run{i}")
        done = oneshot(*SPEC_ARGS, "--emit-submission", str(folder / "submission.json"), "--work-dir", str(folder / "work"))
        assert done.returncode == 0, done.stderr[-3000:]
        outs.append((folder, done))
    return outs


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
    table = done.stdout
    assert "floor" in table and "segformer-ade" in table and "best" in table


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
