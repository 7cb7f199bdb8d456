"""`segbench check-results`: files of the results tree deleted or altered since dvc.lock recorded
it are found, and their job outputs removed so the workflow re-makes them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from segbench.commands import cli

FILES = {
    "pv/test/best/predictions/shard-0/.snakemake_timestamp": b"",
    "pv/test/best/predictions/shard-0/a.png": b"mask a",
    "pv/test/best/predictions/shard-0/b.png": b"mask b",
    "pv/test/best/predictions/shard-1/c.png": b"mask c",
    "pv/test/best/predictions/shard-1/.snakemake_timestamp": b"",
    "pv/test/best/metrics.json": b"{}",
    "pv/test/best/submission.json": b"{\"x\": 1}",
}


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
                     "--cache", str(tree / "cache"), *extra])


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


def test_without_a_recorded_tree_nothing_is_compared(tmp_path, capsys):
    assert cli.main(["check-results", "--out", str(tmp_path / "results"), "--lock", str(tmp_path / "dvc.lock"),
                     "--cache", str(tmp_path / "cache")]) == 0
    assert "nothing to compare" in capsys.readouterr().out
