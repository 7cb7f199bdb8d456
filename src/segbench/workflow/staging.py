"""Where a job finds its files: the two ways the workflow runs, as one object chosen once.

On a shared filesystem (a local run, SLURM) a job opens the files where they are, and what it
reads is identified by content when the DAG is built (keys.py): the dataset's files and a model's
are not inputs (20,000 frames would make over 200,000 inputs, most of a dry run's time, and an
input's path would tie a job to where the bytes lie); each job reads the marker of its content key
instead. DVC-pinned inputs are restored by a job of their own (pull_pinned) before a job reads
them, where they are missing.

Staged (a default storage provider: the Kubernetes profile, or the staged test run) a job sees
only the files listed as its inputs, under local copies: every job lists each file it reads, and
its arguments name the local copies (arguments.py). Pinned inputs are staged into the storage with
the others (docs/cluster.md), and the files are not on the planning machine, so there are no
content keys and re-runs follow Snakemake's own rules (docs/workflow.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
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
    """Every job reads the files where they are, identified by content (keys.py)."""

    keyed = True  # a job reads the marker of its content key

    def restores_pins(self) -> bool:
        """Whether a job waits for pull_pinned to restore a DVC-pinned input it reads."""
        return True

    def listed_dataset(self, bench: BenchmarkPlan, scope: str, split: str | None = None,
                       shard: int | str | None = None) -> list[str]:
        """The dataset files a job lists as its inputs: none here (its key stands for them)."""
        return []

    def listed_model(self, path: str) -> list[str]:
        """A model's files as inputs of the jobs that read them: none here (its key stands for them)."""
        return []

    def listed_manifest(self, manifest: str | None) -> list[str]:
        """The config's manifest as an input of the jobs that read it: none here (in the dataset's key)."""
        return []

    def model_spec(self, name: str, entry: Mapping[str, Any], local: Sequence[str]) -> str:
        """The model's config entry with its name, as JSON: what `segbench identify` acts on, given
        the local paths of its listed files (staged, the path is the local copy's)."""
        return json.dumps({"name": name, **entry}, sort_keys=True)


class StagedStorage:
    """Every job reads local copies of the files listed as its inputs."""

    keyed = False

    def restores_pins(self) -> bool:
        return False

    def listed_dataset(self, bench: BenchmarkPlan, scope: str, split: str | None = None,
                       shard: int | str | None = None) -> list[str]:
        return dataset_files(bench, scope, split, shard)

    def listed_model(self, path: str) -> list[str]:
        """A folder is one storage object (a prefix) the job retrieves whole; its .dvc pin beside it."""
        return [path] + dvc_pin(path)

    def listed_manifest(self, manifest: str | None) -> list[str]:
        return [manifest] if manifest else []

    def model_spec(self, name: str, entry: Mapping[str, Any], local: Sequence[str]) -> str:
        return json.dumps({"name": name, **entry, "path": local[0]}, sort_keys=True)


def staging_mode(default_storage_provider: str | None) -> SharedFilesystem | StagedStorage:
    """The mode of a run: staged when Snakemake has a default storage provider."""
    return SharedFilesystem() if default_storage_provider is None else StagedStorage()
