"""Where a job finds its files: the two ways the workflow runs, as one object chosen once.

On a shared filesystem (a local run, SLURM) a job opens the files where they are. The dataset's
files are not listed as inputs (20,000 frames would make over 200,000 inputs, most of a dry run's
time): dataset_identity watches them through a fingerprint of every file's path, size and time
(its one job re-runs when it changes: the cheap identity check), and the frame index it writes
holds each file's SHA-256, from which the content keys come (keys.py). DVC-pinned inputs are
restored by a job of their own (pull_pinned) before a job reads them.

Staged (a default storage provider: the Kubernetes profile, or the staged test run) a job sees
only the files listed as its inputs, under local copies: every job lists each file it reads, and
its arguments name the local copies (arguments.py). Pinned inputs are staged into the storage with the others
(docs/cluster.md), and the identity records are not on the planning machine, so there are no
content keys and re-runs follow Snakemake's own rules (docs/workflow.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .plan import BenchmarkPlan, dvc_file

def dataset_files(bench: BenchmarkPlan, scope: str, split: str | None = None, shard: int | str | None = None) -> list[str]:
    """The dataset files a job reads: "all" (the index files and every frame's), "split" (the
    split's images and labels), "shard" (the shard's images and labels) or "shard-labels"."""
    if scope == "all":
        return bench.dataset_files()
    frames = bench.split_frames(split) if scope == "split" else bench.shard_frames(split, int(shard))
    labels = [f.label for f in frames]
    return labels if scope == "shard-labels" else [f.image for f in frames] + labels


def dvc_pin(path: str) -> list[str]:
    """The .dvc file pinning `path`, where there is one."""
    return [dvc_file(path)] if Path(dvc_file(path)).is_file() else []


class SharedFilesystem:
    """Every job reads the files where they are."""

    def restores_pins(self) -> bool:
        """Whether a job waits for pull_pinned to restore a DVC-pinned input it reads."""
        return True

    def listed_dataset(self, bench: BenchmarkPlan, scope: str, split: str | None = None,
                       shard: int | str | None = None) -> list[str]:
        """The dataset files a job lists as its inputs: none here (the fingerprint stands for them)."""
        return []

    def dataset_fingerprint(self, bench: BenchmarkPlan) -> str:
        return bench.dataset_fingerprint()

    def model_files(self, path: str) -> list[str]:
        """A model's files as inputs of its identity job, a folder's one by one (a folder has no
        checksum), and its .dvc pin where it has one (a re-pinned model is identified again)."""
        if Path(path).is_dir():
            return sorted(str(f) for f in Path(path).rglob("*") if f.is_file()) + dvc_pin(path)
        return [path] + dvc_pin(path)

    def model_spec(self, name: str, entry: Mapping[str, Any], local: Sequence[str]) -> str:
        """The model's config entry with its name, as JSON: what `segbench identify` acts on, given
        the local paths of its model_files (staged, the path is the local copy's)."""
        return json.dumps({"name": name, **entry}, sort_keys=True)

    def waits_for_checkpoint(self, output: str) -> bool:
        """Whether a job reading a checkpoint's `output` must wait for the checkpoint (planned after
        it has run): only while the output is missing, here."""
        return not os.path.exists(output)

    def rerun_trigger(self, read: Callable[[], str]) -> str:
        """The value of a parameter that exists to re-run a job when what `read` reads from the
        identity records changes (a content key, a dataset_id, a checkpoint's SHA-256)."""
        return read()


class StagedStorage:
    """Every job reads local copies of the files listed as its inputs."""

    def restores_pins(self) -> bool:
        return False

    def listed_dataset(self, bench: BenchmarkPlan, scope: str, split: str | None = None,
                       shard: int | str | None = None) -> list[str]:
        return dataset_files(bench, scope, split, shard)

    def dataset_fingerprint(self, bench: BenchmarkPlan) -> str:
        return ""

    def model_files(self, path: str) -> list[str]:
        """A folder is one storage object (a prefix) the job retrieves whole."""
        return [path] + dvc_pin(path)

    def model_spec(self, name: str, entry: Mapping[str, Any], local: Sequence[str]) -> str:
        return json.dumps({"name": name, **entry, "path": local[0]}, sort_keys=True)

    def waits_for_checkpoint(self, output: str) -> bool:
        return True

    def rerun_trigger(self, read: Callable[[], str]) -> str:
        return ""  # the records are not on the planning machine


def staging_mode(default_storage_provider: str | None) -> SharedFilesystem | StagedStorage:
    """The mode of a run: staged when Snakemake has a default storage provider."""
    return SharedFilesystem() if default_storage_provider is None else StagedStorage()
