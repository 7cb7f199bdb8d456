"""The results tree against what dvc.lock recorded: a deleted or altered file is found, and the
job that made it is re-run by the workflow before DVC records the tree again.

Snakemake does not look inside a `directory()` output (it keeps a `.snakemake_timestamp` there),
and it re-makes a missing output only when a job that reads it has to run anyway: a prediction
PNG deleted from a shard folder, or the folder removed as a whole, left the shard as it was while
`dvc repro` re-recorded the tree one shard short. So a damaged file is not removed: the output of
the job that made it (its `directory()` output folder, or the file) is given to Snakemake as a
`--forcerun` target, and Snakemake re-runs that job and every job after it that reads its
outputs (a job reading them as `ancient` inputs is decided by its content key, as always).

dvc.lock records the tree's digest only; the tree's listing ({relpath, md5} per file) is kept
beside Snakemake's records, named by that digest, when the workflow run that made the tree ends
(DVC does not cache the results: `dvc pull` on a fresh clone has nothing of them to fetch). Every
listed file is hashed again here (MD5, as DVC 3 hashes a file's bytes). Without a listing of the
recorded tree (a first run, a tree DVC recorded after a run not made through this command) there
is nothing to compare, and nothing is forced.
"""

from __future__ import annotations

import json
import os
from base64 import urlsafe_b64decode
from hashlib import md5
from pathlib import Path

import yaml

from ..errors import SegbenchError
from ..io.fileio import md5_file, write_text

TIMESTAMP = ".snakemake_timestamp"  # Snakemake's marker inside a directory() output


def tree_listing(root: Path) -> list[dict[str, str]]:
    """DVC's listing of the folder `root`: every file's MD5 and path (relative, '/'-separated),
    sorted by path, as dvc_data's Tree lists a directory output."""
    files = (p for p in root.rglob("*") if p.is_file())
    entries = [{"md5": md5_file(p), "relpath": p.relative_to(root).as_posix()} for p in files]
    return sorted(entries, key=lambda e: e["relpath"])


def listing_digest(listing: list[dict[str, str]]) -> str:
    """The digest DVC records for a folder with this listing: the MD5 of the listing as JSON."""
    return md5(json.dumps(listing, sort_keys=True).encode(), usedforsecurity=False).hexdigest() + ".dir"


def recorded_digest(lock: Path, out: str) -> str | None:
    """The digest dvc.lock recorded for the output `out`, or None when there is none."""
    if not lock.is_file():
        return None
    try:
        stages = yaml.safe_load(lock.read_text(encoding="utf-8"))["stages"]
    except (yaml.YAMLError, KeyError, TypeError) as exc:
        raise SegbenchError(f"{lock}: not a readable dvc.lock ({exc})") from None
    entries = [o for stage in stages.values() for o in stage.get("outs", []) if o.get("path") == out]
    if not entries or not str(entries[0].get("md5", "")).endswith(".dir"):
        return None
    return entries[0]["md5"]


def recorded_listing(lock: Path, out: str, listings: Path) -> list[dict] | None:
    """The listing of the tree dvc.lock recorded for `out`, kept under `listings`; None without one."""
    digest = recorded_digest(lock, out)
    listing = listings / digest if digest else None
    if listing is None or not listing.is_file():
        return None
    text = listing.read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SegbenchError(f"{listing}: the listing of {out} is not JSON ({exc})") from None
    if listing_digest(document) != digest:
        raise SegbenchError(f"{listing}: the listing of {out} is damaged (its digest is not {digest}, "
                            "the name dvc.lock recorded)")
    return document


def keep_listing(root: Path, listings: Path) -> Path:
    """Keep the listing of the tree at `root` under `listings`, named by the digest DVC records."""
    listing = tree_listing(root)
    path = listings / listing_digest(listing)
    write_text(path, json.dumps(listing, sort_keys=True))
    return path


def damaged_files(root: Path, listing: list[dict]) -> list[tuple[Path, str]]:
    """(file, 'deleted' or 'altered') for each listed file that is not as recorded."""
    found = []
    for entry in listing:
        path = root / entry["relpath"]
        if not path.is_file():
            found.append((path, "deleted"))
        elif md5_file(path) != entry["md5"]:
            found.append((path, "altered"))
    return found


def record_subject(record: Path, metadata: Path) -> str:
    """The output path a record of Snakemake's metadata folder is about: its name is the path in
    URL-safe base64, cut into '@'-prefixed folders where it exceeds a file name's length."""
    parts = record.relative_to(metadata).parts
    return urlsafe_b64decode("".join(p.removeprefix("@") for p in parts)).decode()


def recorded_outputs(metadata: Path) -> set[str]:
    """The outputs Snakemake has a record of (one per output it made), as it recorded their paths:
    relative to its working directory, the folder above .snakemake."""
    found = set()
    for record in metadata.rglob("*") if metadata.is_dir() else []:
        if record.is_file():
            try:
                found.add(record_subject(record, metadata))
            except (ValueError, UnicodeDecodeError):
                continue  # not a record of Snakemake's: no output named through it
    return found


def job_output(root: Path, path: Path, recorded: set[str], workdir: Path) -> Path:
    """The output of the job that made `path`: the nearest of it and its folders inside `root`
    that Snakemake recorded as an output, else the nearest folder holding Snakemake's
    directory() marker, else the file itself."""
    inside = [path] + [p for p in path.parents if root in p.parents]
    for candidate in inside:
        if os.path.relpath(candidate, workdir) in recorded:
            return candidate
    return next((p for p in inside[1:] if (p / TIMESTAMP).exists()), path)


def rerun_targets(root: Path, damaged: list[tuple[Path, str]], metadata: Path) -> list[Path]:
    """The job outputs holding the damaged files, each once, in the order found: the targets
    Snakemake is to force (`--forcerun`)."""
    recorded = recorded_outputs(metadata)
    targets: list[Path] = []
    for path, _ in damaged:
        output = job_output(root, path, recorded, metadata.parent.parent)
        if output not in targets:
            targets.append(output)
    return targets
