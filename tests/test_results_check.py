"""`segbench check-results`: files of the results tree deleted or altered since dvc.lock recorded
it are found, and their job outputs removed so the workflow re-makes them."""

from __future__ import annotations

import hashlib
import json
from base64 import urlsafe_b64encode
from pathlib import Path

import pytest

from segbench.commands import cli
from segbench.workflow.results_check import JobRecords

FILES = {
    "pv/test/best/predictions/shard-0/.snakemake_timestamp": b"",
    "pv/test/best/predictions/shard-0/a.png": b"mask a",
    "pv/test/best/predictions/shard-0/b.png": b"mask b",
    "pv/test/best/predictions/shard-1/c.png": b"mask c",
    "pv/test/best/predictions/shard-1/.snakemake_timestamp": b"",
    "pv/test/best/metrics.json": b"{}",
    "pv/test/best/submission.json": b"{\"x\": 1}",
    "pv/manifest.json": b"manifest",  # the three outputs of one identity job
    "pv/dataset.json": b"dataset",
    "pv/frames.json": b"frames",
    "pv/audit.json": b"audit",
}
IDENTITY = ("pv/manifest.json", "pv/dataset.json", "pv/frames.json")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A results tree and what DVC recorded of it: dvc.lock and the .dir listing in the cache."""
    results = tmp_path / "results"
    listing = []
    for relpath, payload in FILES.items():
        (results / relpath).parent.mkdir(parents=True, exist_ok=True)
        (results / relpath).write_bytes(payload)
        listing.append({"md5": hashlib.md5(payload).hexdigest(), "relpath": relpath})
    text = json.dumps(sorted(listing, key=lambda e: e["relpath"]))
    digest = hashlib.md5(text.encode()).hexdigest()
    cache = tmp_path / "cache" / "files" / "md5" / digest[:2]
    cache.mkdir(parents=True)
    (cache / f"{digest[2:]}.dir").write_text(text)
    (tmp_path / "dvc.lock").write_text(
        f"schema: '2.0'\nstages:\n  workflow:\n    cmd: x\n    outs:\n    - path: results\n      hash: md5\n"
        f"      md5: {digest}.dir\n      nfiles: {len(FILES)}\n")
    return tmp_path


def run(tree: Path, *extra: str) -> int:
    return cli.main(["check-results", "--out", str(tree / "results"), "--lock", str(tree / "dvc.lock"),
                     "--cache", str(tree / "cache"), "--metadata", str(tree / ".snakemake" / "metadata"), *extra])


def record(tree: Path, output: str, rule: str, job_hash: int, endtime: float, name_max: int = 255) -> None:
    """Snakemake's record of one output (as snakemake/persistence/file.py names and writes it: the
    path relative to the working directory in URL-safe base64, in '@' folders past a name's length)."""
    name = urlsafe_b64encode(output.encode()).decode()
    chunks = [name[i:i + name_max - 1] for i in range(0, len(name), name_max - 1)]
    path = tree / ".snakemake" / "metadata" / Path(*["@" + c for c in chunks[:-1]], chunks[-1])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"rule": rule, "job_hash": job_hash, "starttime": endtime - len(output) / 1e4,
                                "endtime": endtime, "record_format_version": 6}))  # a start time of each output's own


def test_an_intact_tree_passes(tree, capsys):
    assert run(tree) == 0
    assert f"{len(FILES)} of {len(FILES)} recorded files as recorded" in capsys.readouterr().out


def test_a_deleted_prediction_and_an_altered_record_are_named(tree, capsys):
    results = tree / "results"
    (results / "pv/test/best/predictions/shard-0/b.png").unlink()
    (results / "pv/test/best/submission.json").write_bytes(b"{\"x\": 2}")
    assert run(tree) == 1
    err = capsys.readouterr().err
    assert f"{results / 'pv/test/best/predictions/shard-0/b.png'}: deleted since" in err
    assert f"{results / 'pv/test/best/submission.json'}: altered since" in err
    assert (results / "pv/test/best/predictions/shard-0/a.png").exists()  # without --repair nothing is removed


def test_repair_removes_the_shard_folder_and_the_altered_file_only(tree, capsys):
    results = tree / "results"
    (results / "pv/test/best/predictions/shard-0/b.png").unlink()
    (results / "pv/test/best/submission.json").write_bytes(b"{\"x\": 2}")
    assert run(tree, "--repair") == 0
    out = capsys.readouterr().out
    assert not (results / "pv/test/best/predictions/shard-0").exists()  # the job made the folder whole
    assert not (results / "pv/test/best/submission.json").exists()
    assert (results / "pv/test/best/predictions/shard-1/c.png").exists()
    assert (results / "pv/test/best/metrics.json").exists()
    assert out.count("removed ") == 2 and f"{len(FILES) - 2} of {len(FILES)} recorded files" in out


def test_repair_removes_every_output_of_the_job(tree, capsys, monkeypatch):
    """A frame index removed alone would leave its identity job looking done (its first output,
    the manifest copy, exists): the job's other outputs go with it."""
    monkeypatch.chdir(tree)  # Snakemake records paths relative to its working directory
    for output in IDENTITY:
        record(tree, f"results/{output}", "dataset_identity", 1234, 100.5, name_max=20)  # long names in '@' folders
    record(tree, "results/pv/audit.json", "audit", 1234, 101.0)  # another job (same hash, another end)
    record(tree, "results/pv/test/best/metrics.json", "metrics", 99, 100.5)
    (tree / "results/pv/frames.json").unlink()
    assert run(tree, "--repair") == 0
    out = capsys.readouterr().out
    assert not any((tree / "results" / o).exists() for o in IDENTITY)
    assert (tree / "results/pv/audit.json").exists() and (tree / "results/pv/test/best/metrics.json").exists()
    assert out.count("removed ") == 3


def test_the_outputs_of_a_job_from_a_real_run(embedded_run):
    metadata = embedded_run.repo / ".snakemake" / "metadata"
    frames = embedded_run.repo / "results" / "painting-vision" / "frames.json"
    records = JobRecords(metadata)
    outputs = records.outputs(frames)
    assert outputs[0] == frames
    assert sorted(p.name for p in outputs) == ["dataset.json", "frames.json", "manifest.json"]
    assert all(p.parent == frames.parent and p.is_file() for p in outputs)
    metrics = embedded_run.repo / "results" / "painting-vision" / "test" / "best" / "metrics.json"
    assert records.outputs(metrics) == [metrics]
    assert JobRecords(embedded_run.repo / "no-such-folder" / "metadata").outputs(frames) == [frames]


def test_without_a_recorded_tree_nothing_is_compared(tmp_path, capsys):
    assert cli.main(["check-results", "--out", str(tmp_path / "results"), "--lock", str(tmp_path / "dvc.lock"),
                     "--cache", str(tmp_path / "cache")]) == 0
    assert "nothing to compare" in capsys.readouterr().out
