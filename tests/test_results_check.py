"""`segbench check-results`: files of the results tree deleted or altered since dvc.lock recorded
it are found, and the jobs that made them forced (`--forcerun`) in the workflow run it starts."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from base64 import urlsafe_b64encode
from pathlib import Path

import pytest

from segbench.commands import cli
from segbench.workflow.results_check import keep_listing, listing_digest, recorded_outputs, rerun_targets, tree_listing

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
LISTINGS = Path(".snakemake/segbench/results-listings")


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Path:
    """A results tree, what dvc.lock recorded of it and the listing kept of it, in the working
    directory (Snakemake records paths relative to it)."""
    monkeypatch.chdir(tmp_path)
    results = tmp_path / "results"
    listing = []
    for relpath, payload in FILES.items():
        (results / relpath).parent.mkdir(parents=True, exist_ok=True)
        (results / relpath).write_bytes(payload)
        listing.append({"md5": hashlib.md5(payload).hexdigest(), "relpath": relpath})
    text = json.dumps(sorted(listing, key=lambda e: e["relpath"]), sort_keys=True)
    digest = hashlib.md5(text.encode()).hexdigest()  # DVC's digest of a tree: its listing's MD5
    (tmp_path / LISTINGS).mkdir(parents=True)
    (tmp_path / LISTINGS / f"{digest}.dir").write_text(text)
    (tmp_path / "dvc.lock").write_text(
        f"schema: '2.0'\nstages:\n  workflow:\n    cmd: x\n    outs:\n    - path: results\n      hash: md5\n"
        f"      md5: {digest}.dir\n      nfiles: {len(FILES)}\n")
    return tmp_path


def run(tree: Path, *extra: str) -> int:
    return cli.main(["check-results", "--results", "results", "--lock", "dvc.lock", *extra])


def workflow_stub(tree: Path, exit_code: int = 0) -> list[str]:
    """A workflow command that writes the arguments it was given to args.json."""
    code = f"import json, sys; json.dump(sys.argv[1:], open('args.json', 'w')); sys.exit({exit_code})"
    return ["--", sys.executable, "-c", code, "--cores", "1"]


def record(tree: Path, output: str, rule: str, name_max: int = 255) -> None:
    """Snakemake's record of one output (as snakemake/persistence/file.py names it: the path
    relative to the working directory in URL-safe base64, in '@' folders past a name's length)."""
    name = urlsafe_b64encode(output.encode()).decode()
    chunks = [name[i:i + name_max - 1] for i in range(0, len(name), name_max - 1)]
    path = tree / ".snakemake" / "metadata" / Path(*["@" + c for c in chunks[:-1]], chunks[-1])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"rule": rule, "record_format_version": 6}))


def test_an_intact_tree_passes(tree, capsys):
    assert run(tree) == 0
    assert f"{len(FILES)} of {len(FILES)} recorded files as recorded" in capsys.readouterr().out


def test_a_deleted_prediction_and_an_altered_record_are_named(tree, capsys):
    (tree / "results/pv/test/best/predictions/shard-0/b.png").unlink()
    (tree / "results/pv/test/best/submission.json").write_bytes(b"{\"x\": 2}")
    assert run(tree) == 1
    err = capsys.readouterr().err
    assert "results/pv/test/best/predictions/shard-0/b.png: deleted since dvc.lock recorded it" in err
    assert "results/pv/test/best/submission.json: altered since dvc.lock recorded it" in err
    assert (tree / "results/pv/test/best/predictions/shard-0/a.png").exists()  # nothing is removed


def test_repair_forces_the_jobs_of_the_damaged_files_and_keeps_the_new_listing(tree, capsys):
    """The shard folder (a directory() output: its marker) and the altered file are given to the
    workflow as --forcerun targets; nothing is removed here (Snakemake removes a forced job's
    outputs itself), and the listing of the tree the run left is kept under its DVC digest."""
    (tree / "results/pv/test/best/predictions/shard-0/b.png").unlink()
    (tree / "results/pv/test/best/submission.json").write_bytes(b"{\"x\": 2}")
    assert run(tree, "--repair", *workflow_stub(tree)) == 0
    assert json.loads((tree / "args.json").read_text()) == [
        "--cores", "1", "--forcerun", "results/pv/test/best/predictions/shard-0", "results/pv/test/best/submission.json"]
    assert (tree / "results/pv/test/best/predictions/shard-0/a.png").exists()
    out = capsys.readouterr().out
    assert f"{len(FILES) - 2} of {len(FILES)} recorded files as recorded" in out
    kept = tree / LISTINGS / listing_digest(tree_listing(tree / "results"))
    assert f"the listing of the tree made is kept as {LISTINGS / kept.name}" in out
    assert len(json.loads(kept.read_text())) == len(FILES) - 1


def test_an_intact_tree_runs_the_workflow_with_nothing_forced(tree):
    assert run(tree, "--repair", *workflow_stub(tree)) == 0
    assert json.loads((tree / "args.json").read_text()) == ["--cores", "1"]


def test_a_failed_workflow_run_keeps_no_listing(tree, capsys):
    (tree / "results/pv/audit.json").write_bytes(b"altered")
    before = sorted(p.name for p in (tree / LISTINGS).iterdir())
    assert run(tree, "--repair", *workflow_stub(tree, exit_code=3)) == 1
    assert "failed (exit 3)" in capsys.readouterr().err
    assert sorted(p.name for p in (tree / LISTINGS).iterdir()) == before


def test_repair_needs_the_workflow_command(tree, capsys):
    assert run(tree, "--repair") == 1
    assert "name its command after `--`" in capsys.readouterr().err


def test_a_deleted_directory_output_is_found_through_snakemakes_records(tree):
    """A shard folder removed whole has no marker left: its record names the job output; a file
    without a record or a marker above it is its own job's output."""
    record(tree, "results/pv/test/best/predictions/shard-1", "infer", name_max=20)  # long names in '@' folders
    record(tree, "results/pv/frames.json", "dataset_identity")
    shutil.rmtree(tree / "results/pv/test/best/predictions/shard-1")
    (tree / "results/pv/frames.json").unlink()
    (tree / "results/pv/audit.json").unlink()
    damaged = [(Path("results") / p, "deleted") for p in (
        "pv/test/best/predictions/shard-1/c.png", "pv/test/best/predictions/shard-1/.snakemake_timestamp",
        "pv/frames.json", "pv/audit.json")]
    metadata = Path(".snakemake/metadata")
    assert recorded_outputs(metadata) == {"results/pv/test/best/predictions/shard-1", "results/pv/frames.json"}
    assert rerun_targets(Path("results"), damaged, metadata) == [
        Path("results/pv/test/best/predictions/shard-1"), Path("results/pv/frames.json"), Path("results/pv/audit.json")]


def test_the_kept_listing_has_dvcs_digest_and_a_damaged_one_is_named(tree, capsys):
    digest = next((tree / LISTINGS).iterdir()).name
    assert listing_digest(tree_listing(tree / "results")) == digest  # the fixture's digest, made as DVC makes it
    assert keep_listing(Path("results"), LISTINGS) == LISTINGS / digest
    (tree / LISTINGS / digest).write_text("[]")
    assert run(tree) == 1
    assert f"{LISTINGS / digest}: the listing of results is damaged (its digest is not {digest}" in capsys.readouterr().err


def test_without_a_recorded_tree_nothing_is_compared(tmp_path, capsys):
    assert cli.main(["check-results", "--results", str(tmp_path / "results"), "--lock", str(tmp_path / "dvc.lock"),
                     "--listings", str(tmp_path / "listings")]) == 0
    assert "nothing to compare" in capsys.readouterr().out
