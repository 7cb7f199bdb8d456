"""The in-repo DVC remote verifies what it restores: `dvc pull` of an object damaged in the remote
fails naming its hash, and the damaged bytes never reach the working tree."""

from __future__ import annotations

import configparser
import hashlib
import os
import subprocess
import sys
from pathlib import Path

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
