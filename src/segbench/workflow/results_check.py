"""The results tree against what dvc.lock recorded: a deleted or altered file is found and its
job's output removed, so that the workflow re-makes it before DVC records the tree again.

Snakemake does not look inside a `directory()` output (it keeps a `.snakemake_timestamp` there),
so a prediction PNG deleted from a shard folder would otherwise be re-recorded by `dvc repro` as a
tree one file short. DVC keeps the recorded tree's listing ({relpath, md5} per file, a `.dir`
object) in its cache; every listed file is hashed again here (MD5, as DVC 3 hashes a file's
bytes). A damaged file inside a `directory()` output removes that whole folder (the job made it
whole); any other damaged file is removed itself. Either way every other output of the job that
made it goes too: Snakemake takes a job whose first output exists as done, so an identity job
with its frame index removed but its manifest copy left would never re-make the index. The
outputs of a job are found in Snakemake's records of them (.snakemake/metadata). Without a
recorded tree (a first run, or a cache without it) there is nothing to compare and nothing is
removed.
"""

from __future__ import annotations

import json
import os
import shutil
from base64 import urlsafe_b64decode
from pathlib import Path

import yaml

from ..errors import SegbenchError
from ..io.fileio import md5_file

TIMESTAMP = ".snakemake_timestamp"  # Snakemake's marker inside a directory() output


def recorded_listing(lock: Path, out: str, cache: Path) -> list[dict] | None:
    """The {relpath, md5} listing dvc.lock recorded for the output `out`, or None when there is none."""
    if not lock.is_file():
        return None
    try:
        stages = yaml.safe_load(lock.read_text(encoding="utf-8"))["stages"]
    except (yaml.YAMLError, KeyError, TypeError) as exc:
        raise SegbenchError(f"{lock}: not a readable dvc.lock ({exc})") from None
    entries = [o for stage in stages.values() for o in stage.get("outs", []) if o.get("path") == out]
    if not entries or not str(entries[0].get("md5", "")).endswith(".dir"):
        return None
    digest = entries[0]["md5"]
    listing = cache / "files" / "md5" / digest[:2] / digest[2:]
    if not listing.is_file():
        return None
    try:
        return json.loads(listing.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SegbenchError(f"{listing}: DVC's listing of {out} is damaged ({exc})") from None


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


def job_output(root: Path, path: Path) -> Path:
    """The output of the job that made `path`: its directory() output folder, or the file."""
    for parent in path.parents:
        if parent == root or root not in parent.parents:
            break
        if (parent / TIMESTAMP).exists():
            return parent
    return path


def record_subject(record: Path, metadata: Path) -> str:
    """The output path a record of Snakemake's metadata folder is about: its name is the path in
    URL-safe base64, cut into '@'-prefixed folders where it exceeds a file name's length."""
    parts = record.relative_to(metadata).parts
    return urlsafe_b64decode("".join(p.removeprefix("@") for p in parts)).decode()


class JobRecords:
    """Snakemake's records of the outputs it made, read from its metadata folder (one JSON record per
    output; the outputs of one job execution share its rule, hash and end time). Paths are as
    Snakemake recorded them, relative to its working directory (the folder above .snakemake)."""

    def __init__(self, metadata: Path):
        self.workdir = metadata.parent.parent
        self.jobs: dict[str, tuple] = {}
        for record in metadata.rglob("*") if metadata.is_dir() else []:
            if record.is_file():
                try:
                    doc = json.loads(record.read_text(encoding="utf-8"))
                    self.jobs[record_subject(record, metadata)] = (doc["rule"], doc["job_hash"], doc["endtime"])
                except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                    continue  # not a record of Snakemake's (or of another format): no sibling found through it

    def outputs(self, output: Path) -> list[Path]:
        """Every output of the job that wrote `output`, itself first, in its form (absolute or
        relative); just `output` when it has no record."""
        subject = os.path.relpath(output, self.workdir)
        job = self.jobs.get(subject)
        if job is None:
            return [output]
        base = self.workdir.resolve() if output.is_absolute() else self.workdir
        return [output] + [base / s for s, of in sorted(self.jobs.items()) if of == job and s != subject]


def repair(root: Path, damaged: list[tuple[Path, str]], metadata: Path) -> list[Path]:
    """Remove the job outputs holding damaged files, and the other outputs of their jobs, so the
    workflow re-makes them; returns what was removed."""
    removed: list[Path] = []
    records = JobRecords(metadata)
    for path, _ in damaged:
        outputs = records.outputs(job_output(root, path))
        for output in outputs:
            if output in removed or (output != outputs[0] and not output.exists()):
                continue  # a sibling already gone is not reported as removed
            if output.is_dir():
                shutil.rmtree(output)
            else:
                output.unlink(missing_ok=True)
            removed.append(output)
    return removed
