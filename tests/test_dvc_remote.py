"""The in-repo DVC remote verifies what it restores: `dvc pull` of an object damaged in the remote
fails naming its hash, and the damaged bytes never reach the working tree; `segbench pull` (the
workflow's way in) names each damaged or missing object with its .dvc file, path and hashes; a
plain `dvc pull` in a fresh clone restores every input."""

from __future__ import annotations

import configparser
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from segbench.errors import SegbenchError
from segbench.workflow.pinning import parse_listing, pinned_hash, restore

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    return subprocess.run(list(args), cwd=repo, env=env, capture_output=True, text=True)


def test_the_repository_remote_verifies_downloads():
    config = configparser.ConfigParser()
    config.read(ROOT / ".dvc" / "config")
    assert config['\'remote "embedded"\'']["verify"] == "true"


def test_pull_of_an_object_damaged_in_the_remote_fails_naming_it(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    assert run(repo, "git", "init", "-q").returncode == 0
    assert run(repo, "dvc", "init", "-q").returncode == 0
    (repo / ".dvc" / "config").write_text((ROOT / ".dvc" / "config").read_text())  # the same remote settings
    payload = b"checkpoint bytes " * 100
    (repo / "model.pt").write_bytes(payload)
    assert run(repo, "dvc", "add", "-q", "model.pt").returncode == 0
    done = run(repo, "dvc", "push", "-q")
    assert done.returncode == 0, done.stderr
    md5 = hashlib.md5(payload).hexdigest()
    stored = repo / "dvc-store" / "files" / "md5" / md5[:2] / md5[2:]
    stored.chmod(0o644)
    stored.write_bytes(b"damaged " + payload[8:])
    (repo / "model.pt").unlink()
    for folder in (repo / ".dvc" / "cache", repo / ".dvc" / "tmp"):
        subprocess.run(["rm", "-rf", str(folder)], check=True)
    done = run(repo, "dvc", "pull", "model.pt.dvc")
    assert done.returncode != 0
    assert md5 in done.stdout + done.stderr
    assert not (repo / "model.pt").exists()


# --- segbench pull: every object checked before checkout, each fault named by file and hash -----

DATA_PIN = yaml.safe_load((ROOT / "data.dvc").read_text())["outs"][0]["md5"]  # <md5>.dir


def stored(repo: Path, oid: str) -> Path:
    return repo / "dvc-store" / "files" / "md5" / oid[:2] / oid[2:]


@pytest.fixture
def remote_copy(tmp_path, monkeypatch) -> Path:
    """A repository holding data.dvc, the DVC settings and a copy of the repository's remote."""
    repo = tmp_path / "repo"
    repo.mkdir()
    assert run(repo, "git", "init", "-q").returncode == 0
    shutil.copytree(ROOT / ".dvc", repo / ".dvc", ignore=shutil.ignore_patterns("cache", "tmp"))
    shutil.copytree(ROOT / "dvc-store", repo / "dvc-store")
    shutil.copy2(ROOT / "data.dvc", repo / "data.dvc")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}")
    return repo


def listed_file(repo: Path, index: int) -> tuple[str, str]:
    entry = json.loads(stored(repo, DATA_PIN).read_text())[index]
    return entry["relpath"], entry["md5"]


def damage(path: Path, payload: bytes) -> None:
    path.chmod(0o644)
    path.write_bytes(payload)


def test_an_intact_remote_restores_the_data(remote_copy):
    assert restore([Path("data")]) == [Path("data")]
    relpath, md5 = listed_file(remote_copy, 5)
    assert hashlib.md5((remote_copy / "data" / relpath).read_bytes()).hexdigest() == md5


def test_a_damaged_object_is_named_with_its_pin_path_and_hashes(remote_copy):
    relpath, md5 = listed_file(remote_copy, 5)
    damage(stored(remote_copy, md5), b"damaged bytes")
    with pytest.raises(SegbenchError) as info:
        restore([Path("data")])
    actual = hashlib.md5(b"damaged bytes").hexdigest()
    assert str(info.value).endswith(
        f"data.dvc: data/{relpath}: object {md5} is damaged in the remote ({stored(remote_copy, md5)}): "
        f"MD5 {actual}, expected {md5}")
    assert "nothing was checked out" in str(info.value) and not (remote_copy / "data").exists()


def test_a_damaged_listing_is_named_and_a_missing_object_too(remote_copy):
    listing = json.loads(stored(remote_copy, DATA_PIN).read_text())
    del listing[3]["relpath"]
    text = json.dumps(listing).encode()
    damage(stored(remote_copy, DATA_PIN), text)
    with pytest.raises(SegbenchError) as info:
        restore([Path("data")])
    assert str(info.value).endswith(
        f"data.dvc: data: the listing of the folder (object {DATA_PIN}) is damaged in the remote "
        f"({stored(remote_copy, DATA_PIN)}): MD5 {hashlib.md5(text).hexdigest()}, expected {DATA_PIN.removesuffix('.dir')}")
    assert not (remote_copy / "data").exists()


def test_an_object_missing_from_the_remote_is_named(remote_copy):
    relpath, md5 = listed_file(remote_copy, 7)
    stored(remote_copy, md5).unlink()
    with pytest.raises(SegbenchError) as info:
        restore([Path("data")])
    assert str(info.value).splitlines()[1:] == [
        f"  data.dvc: data/{relpath}: object {md5} is not in the remote ({stored(remote_copy, md5)})"]


def test_a_listing_with_the_pinned_hash_but_an_entry_without_relpath_is_named(tmp_path):
    """A listing pinned as it is (its hash is right) is still parsed entry by entry."""
    with pytest.raises(SegbenchError) as info:
        parse_listing(b'[{"md5": "' + b"0" * 32 + b'"}]', Path("x.dvc"), "ab.dir")
    assert str(info.value) == ("x.dvc: entry 0 of the listing ab.dir of the pinned folder has no 'relpath' and 'md5' "
                               '({"md5": "00000000000000000000000000000000"})')
    with pytest.raises(SegbenchError, match=r"^x\.dvc: the listing ab\.dir of the pinned folder is not JSON"):
        parse_listing(b"[{", Path("x.dvc"), "ab.dir")


def test_a_pin_without_an_md5_is_named(tmp_path):
    (tmp_path / "m.pt.dvc").write_text("outs:\n- path: m.pt\n  md5: nothex\n")
    with pytest.raises(SegbenchError) as info:
        pinned_hash(tmp_path / "m.pt.dvc")
    assert str(info.value) == f"{tmp_path / 'm.pt.dvc'}: field 'outs/0/md5': 'nothex' is not an MD5"


def test_a_plain_dvc_pull_in_a_fresh_clone_restores_every_input(tmp_path):
    """The results are not cached by DVC (the workflow makes them): the remote holds every other
    output a clone's .dvc files and dvc.lock name, and a plain `dvc pull` succeeds."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    clone = tmp_path / "clone"
    assert run(tmp_path, "git", "clone", "-q", str(ROOT), str(clone)).returncode == 0
    assert run(clone, "git", "checkout", "-q", head.strip()).returncode == 0
    done = run(clone, "dvc", "pull")
    assert done.returncode == 0, done.stdout + done.stderr
    pins = [p for p in sorted(clone.glob("*.dvc")) + sorted(clone.glob("artifacts/*.dvc")) if p.is_file()]  # not .dvc/
    assert len(pins) == 9
    for pin in pins:
        out = yaml.safe_load(pin.read_text())["outs"][0]
        restored = clone / pin.parent.relative_to(clone) / out["path"]
        if out["md5"].endswith(".dir"):
            assert sum(1 for p in restored.rglob("*") if p.is_file()) == out["nfiles"], pin
        else:
            assert hashlib.md5(restored.read_bytes()).hexdigest() == out["md5"], pin
    assert not (clone / "results").exists()
