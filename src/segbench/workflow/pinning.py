"""Restoring DVC-pinned inputs (datasets, checkpoints) that are missing from the working tree.

`dvc fetch` first, then every object the pin names is checked in the cache against its hash
before `dvc checkout` puts anything into the working tree: DVC, told to verify downloads, drops a
damaged object silently (`dvc fetch` exits 0) and its checkout then fails with "Checkout failed
... Is your cache up to date?", and a damaged listing of a folder (`<md5>.dir`) ends in "unexpected
error - 'relpath'". Here each is named: the .dvc file, the path inside the pinned folder, the
object and its expected and actual MD5 (read from the remote's copy when the cache lacks it).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ..errors import SegbenchError
from ..io.fileio import md5_file

LOCK = Path(".dvc") / "tmp" / "segbench-pull.lock"


def dvc_file(path: Path) -> Path:
    return path.with_name(path.name + ".dvc")


def pinned_hash(pin: Path) -> str:
    """The MD5 a .dvc file pins its one output to (`<md5>` or `<md5>.dir`)."""
    try:
        document = yaml.safe_load(pin.read_text(encoding="utf-8"))
        digest = document["outs"][0]["md5"]
    except (OSError, UnicodeDecodeError, yaml.YAMLError, KeyError, IndexError, TypeError) as exc:
        raise SegbenchError(f"{pin}: not a readable .dvc file ({type(exc).__name__}: {exc})") from None
    body = str(digest).removesuffix(".dir")
    if len(body) != 32 or any(c not in "0123456789abcdef" for c in body):
        raise SegbenchError(f"{pin}: field 'outs/0/md5': '{digest}' is not an MD5")
    return str(digest)


def parse_listing(text: bytes, pin: Path, digest: str) -> list[tuple[str, str]]:
    """(relpath, md5) of each file of a folder's listing (DVC's `.dir` object), every entry checked."""
    try:
        entries = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SegbenchError(f"{pin}: the listing {digest} of the pinned folder is not JSON ({exc})") from None
    if not isinstance(entries, list):
        raise SegbenchError(f"{pin}: the listing {digest} of the pinned folder is not a list of files")
    files = []
    for i, entry in enumerate(entries):
        relpath = entry.get("relpath") if isinstance(entry, dict) else None
        md5 = entry.get("md5") if isinstance(entry, dict) else None
        if not isinstance(relpath, str) or not isinstance(md5, str) or len(md5) != 32:
            raise SegbenchError(f"{pin}: entry {i} of the listing {digest} of the pinned folder has no "
                                f"'relpath' and 'md5' ({json.dumps(entry)[:200]})")
        files.append((relpath, md5))
    return files


class Objects:
    """The objects of a repository's DVC cache, and of its default remote for those the cache lacks."""

    def __init__(self) -> None:
        from dvc.exceptions import DvcException
        from dvc.repo import Repo  # DVC itself only where a pull runs

        try:
            repo = Repo(".")
            self.cache = repo.cache.local
            self.remote = repo.cloud.get_remote_odb()
        except DvcException as exc:
            raise SegbenchError(f"the DVC repository or its default remote cannot be used: {exc}") from None

    def problem(self, oid: str) -> tuple[str, bytes | None]:
        """'' when the cache holds the object as its hash says (a listing: or the remote does),
        with a listing's bytes; else what is wrong (with the expected and actual MD5) and None."""
        cached = Path(self.cache.oid_to_path(oid))
        expected = oid.removesuffix(".dir")
        if cached.is_file():
            actual = md5_file(cached)
            if actual == expected:
                return "", cached.read_bytes() if oid.endswith(".dir") else None
            return f"is damaged in the cache ({cached}): MD5 {actual}, expected {expected}", None
        stored = self.remote.oid_to_path(oid)
        try:
            if not self.remote.fs.exists(stored):
                return f"is not in the remote ({stored})", None
            with self.remote.fs.open(stored, "rb") as stream:
                payload = stream.read()
        except OSError as exc:  # an unreachable remote
            return f"is not in the cache and cannot be read from the remote ({stored}: {exc})", None
        actual = hashlib.md5(payload, usedforsecurity=False).hexdigest()
        if actual == expected and oid.endswith(".dir"):
            return "", payload  # DVC fetches a listing's files with it: it is kept when one of them fails
        if actual == expected:
            return f"is in the remote ({stored}) as pinned but was not fetched (see `dvc fetch`)", None
        return f"is damaged in the remote ({stored}): MD5 {actual}, expected {expected}", None


def pin_problems(path: Path, objects: Any) -> list[str]:
    """What keeps the pinned `path` from being checked out as its .dvc file pins it: each object
    (the file, or the folder's listing and every file it lists) missing or damaged, named."""
    pin = dvc_file(path)
    digest = pinned_hash(pin)
    problem, listing = objects.problem(digest)
    if problem:
        what = f"the listing of the folder (object {digest})" if digest.endswith(".dir") else f"object {digest}"
        return [f"{pin}: {path}: {what} {problem}"]
    if listing is None:
        return []
    found = []
    for relpath, md5 in parse_listing(listing, pin, digest):
        problem, _ = objects.problem(md5)
        if problem:
            found.append(f"{pin}: {path}/{relpath}: object {md5} {problem}")
    return found


def dvc(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dvc", *arguments], capture_output=True, text=True)


def restore(paths: Sequence[Path], objects: Any = None) -> list[Path]:
    """Restore those pinned `paths` that are missing, in one `dvc fetch` and one `dvc checkout`,
    every object checked in between (`objects`: an Objects, made here when not given); returns the
    pulled ones.

    An existing path is left alone (a modified working copy is the user's, not ours to reset).
    """
    missing = [p for p in paths if not p.exists()]
    for path in missing:
        if not dvc_file(path).is_file():
            raise SegbenchError(
                f"'{path}' is missing and not pinned: there is no {dvc_file(path)}. Restore the .dvc file from git "
                f"(`git checkout -- {dvc_file(path)}`), or track the input with `dvc add {path}` and `dvc push`."
            )
    if not missing:
        return []
    pins = [str(dvc_file(p)) for p in missing]
    # DVC refuses to run twice at once in one repository: parallel pulls wait for each other.
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        dvc("fetch", *pins)  # what it could not fetch is found and named below
        objects = objects or Objects()
        problems = [p for path in missing for p in pin_problems(path, objects)]
        if problems:
            raise SegbenchError(f"could not restore {[str(p) for p in missing]}: the DVC remote does not hold these "
                                "bytes as pinned (nothing was checked out; check which remote is used, `dvc remote "
                                "list`, and that it holds the pins, `dvc push` where they were added, then `dvc pull` "
                                "or run again):\n  " + "\n  ".join(problems))
        done = dvc("checkout", *pins)  # every object is in the cache as pinned
    still_missing = [p for p in missing if not p.exists()]
    if done.returncode != 0 or still_missing:
        detail = (done.stderr or done.stdout).strip().splitlines()[-8:]
        raise SegbenchError(
            f"could not restore {[str(p) for p in still_missing or missing]} with `dvc checkout {' '.join(pins)}`, "
            "although the cache holds every object as pinned: check that the working tree can be written there.\n"
            "  dvc said: " + "\n  ".join(detail or ["(nothing)"])
        )
    return missing
