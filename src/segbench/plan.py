"""What the workflow will compute, known before any data is read: benchmarks, splits, shards,
models, and the files each job depends on. The Snakefile builds its DAG from this plan.

The frame list comes from the committed manifest when the config names one (so a fresh clone
knows its DAG before `dvc pull`), else from the dataset's frames.csv.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from . import provenance
from .datasets import dataset_format, read_dataset
from .definitions import Benchmark, load_benchmark
from .errors import SegbenchError
from .spec import ModelSpec, shard_count


@dataclass(frozen=True)
class PlannedFrame:
    frame_id: str
    split: str
    image: str  # path relative to the working directory
    label: str


def dvc_file(path: str) -> str:
    return f"{path}.dvc"


def check_pinned(path: str, what: str) -> None:
    """A pinned input must exist on disk or be restorable by `dvc pull` from its .dvc file."""
    if not Path(path).exists() and not Path(dvc_file(path)).is_file():
        raise SegbenchError(
            f"{what}: '{path}' does not exist and is not pinned (no {dvc_file(path)}). Either put it there, "
            f"or track it with `dvc add {path}` and `dvc push`, or restore the .dvc file from git "
            f"(`git checkout -- {dvc_file(path)}`), or change the config to point at it."
        )


@dataclass(frozen=True)
class BenchmarkPlan:
    name: str
    data: str
    manifest: str | None
    splits: tuple[str, ...]
    models: tuple[str, ...]
    shard_size: int
    max_shards: int | None = None

    @cached_property
    def benchmark(self) -> Benchmark:
        return load_benchmark(self.name)

    @cached_property
    def frames(self) -> list[PlannedFrame]:
        if self.manifest is not None:
            manifest = provenance.read_manifest(
                Path(self.manifest), id_prefix=self.benchmark.id_prefix, group_key=self.benchmark.group_key
            )
            return [
                PlannedFrame(f["frame_id"], f["split"], f"{self.data}/{f['image']['path']}", f"{self.data}/{f['label']['path']}")
                for f in manifest["frames"]
            ]
        if not Path(self.data).is_dir():
            raise SegbenchError(
                f"benchmarks/{self.name}: no manifest in the config and no dataset at '{self.data}': the workflow "
                f"cannot know the frames; set benchmarks/{self.name}/manifest or restore the data (`dvc pull`)"
            )
        return [PlannedFrame(f.frame_id, f.split, str(f.image), str(f.label)) for f in read_dataset(self.benchmark, Path(self.data))]

    @cached_property
    def _by_split(self) -> dict[str, list[PlannedFrame]]:
        by_split: dict[str, list[PlannedFrame]] = {}
        for frame in self.frames:
            by_split.setdefault(frame.split, []).append(frame)
        return by_split

    def split_frames(self, split: str) -> list[PlannedFrame]:
        """The split's frames in manifest (frame_id) order; the same list on every call, not to be changed."""
        return self._by_split.get(split, [])

    def split_shard_size(self, split: str) -> int:
        """Frames per shard of a split: shard_size, raised so that the split makes at most max_shards shards."""
        if self.max_shards is None:
            return self.shard_size
        return max(self.shard_size, math.ceil(len(self.split_frames(split)) / self.max_shards))

    def shards(self, split: str) -> list[int]:
        return list(range(shard_count(len(self.split_frames(split)), self.split_shard_size(split))))

    def shard_frames(self, split: str, shard: int) -> list[PlannedFrame]:
        size = self.split_shard_size(split)
        return self.split_frames(split)[shard * size : (shard + 1) * size]

    def index_files(self) -> list[str]:
        """The files that list the frames or that the labels are made from (frames.csv, IDD polygons)."""
        return [
            str(p)
            for p in dataset_format(self.benchmark.dataset_format).index_files(
                Path(self.data), [Path(f.label) for f in self.frames]
            )
        ]

    @cached_property
    def _dataset_files(self) -> tuple[str, ...]:
        files = self.index_files()
        for frame in self.frames:
            files += [frame.image, frame.label]
        return tuple(files)

    def dataset_files(self) -> list[str]:
        """Every file of the dataset: the index files, then each frame's image and label."""
        return list(self._dataset_files)

    def dataset_fingerprint(self) -> str:
        """A digest of the path, size and modification time of every file of the dataset, read
        without opening any: it changes when a file is written, replaced or removed (or the
        frame list changes). The workflow re-identifies the dataset when it changes, instead of
        listing every file as an input (see workflow/rules/common.smk)."""
        digest = hashlib.sha256()
        for path in self._dataset_files:
            try:
                st = os.stat(path)
            except OSError:
                digest.update(f"{path}\0missing\n".encode())
            else:
                digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        return digest.hexdigest()


@dataclass(frozen=True)
class Plan:
    config: dict[str, Any]

    @cached_property
    def benchmarks(self) -> dict[str, BenchmarkPlan]:
        return {
            name: BenchmarkPlan(
                name,
                entry["data"],
                entry.get("manifest"),
                tuple(entry["splits"]),
                tuple(entry["models"]),
                self.config["shard_size"],
                self.config.get("max_shards"),
            )
            for name, entry in self.config["benchmarks"].items()
        }

    def model(self, name: str) -> ModelSpec:
        return ModelSpec.from_config(self.config, name)

    def check_pinned_inputs(self) -> None:
        for name, bench in self.benchmarks.items():
            check_pinned(bench.data, f"benchmarks/{name}/data")
            for model in bench.models:
                check_pinned(str(self.model(model).path), f"models/{model}/path")

    def pinned_paths(self) -> list[str]:
        """Inputs restorable with `dvc pull`: those with a .dvc file beside them."""
        paths = {b.data for b in self.benchmarks.values()}
        paths |= {str(self.model(m).path) for b in self.benchmarks.values() for m in b.models}
        return sorted(p for p in paths if Path(dvc_file(p)).is_file())

    def evaluations(self) -> list[tuple[str, str, str]]:
        """Every (benchmark, split, model) the config asks for."""
        return [(b.name, split, model) for b in self.benchmarks.values() for split in b.splits for model in b.models]
