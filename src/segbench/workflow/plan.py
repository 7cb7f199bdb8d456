"""What the workflow will compute, known before any data is read: benchmarks, splits, shards,
models, and the files each job depends on. The Snakefile builds its DAG from this plan.

The frame list comes from the committed manifest when the config names one (so a fresh clone
knows its DAG before `dvc pull`), else from the dataset's frames.csv. A frame's shard is a stable
hash of its id (model_spec.by_shard), so adding or removing a frame changes one shard only.
Once dataset_identity has written the frame index, the jobs read their frames from it, never from
this plan; the content keys (keys.py) identify the same frames by their bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark
from ..core.model_spec import ModelSpec, by_shard, shard_total
from ..datasets import dataset_format, read_dataset
from ..errors import SegbenchError
from ..protocols.definitions import load_benchmark
from ..records import provenance


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
    checked: Path | None = None  # where the digests of manifests that passed the checks are kept

    @cached_property
    def benchmark(self) -> Benchmark:
        return load_benchmark(self.name)

    @cached_property
    def definition_files(self) -> tuple[str, ...]:
        """Every file the benchmark definition is built from (itself, label spaces, mappings),
        relative: an absolute path would become part of the storage key under a default storage
        provider and change with the checkout's place."""
        return tuple(os.path.relpath(p) for p in self.benchmark.files)

    def read_manifest(self) -> dict:
        """The config's manifest, checked (provenance.check_manifest) the first time its bytes are
        seen: the plan reads it at every start, and the check is most of a large manifest's cost
        (docs/performance.md).
        A marker under `checked`, named by a digest of its text, the schema and the benchmark's id
        fields, says it passed; the dataset_identity job checks it again whenever it runs."""
        text = provenance.read_manifest_text(Path(self.manifest))
        if self.checked is None:
            return provenance.check_manifest(text, self.manifest, self.benchmark.id_prefix, self.benchmark.group_key)
        schema = json.dumps(provenance.manifest_schema(self.benchmark.group_key), sort_keys=True)
        parts = [text, schema, self.benchmark.id_prefix, self.benchmark.group_key]
        marker = self.checked / hashlib.sha256("\0".join(parts).encode()).hexdigest()
        if marker.is_file():
            return json.loads(text)
        manifest = provenance.check_manifest(text, self.manifest, self.benchmark.id_prefix, self.benchmark.group_key)
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:
            pass  # a read-only work folder: checked again at the next start
        return manifest

    @cached_property
    def frames(self) -> list[PlannedFrame]:
        if self.manifest is not None:
            manifest = self.read_manifest()
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

    def shard_total(self, split: str) -> int:
        """The split's shard count: about shard_size frames each, within max_shards (spec.shard_total)."""
        return shard_total(len(self.split_frames(split)), self.shard_size, self.max_shards)

    def shards(self, split: str) -> list[int]:
        return list(range(self.shard_total(split)))

    @cached_property
    def _by_shard(self) -> dict[tuple[str, int], list[PlannedFrame]]:
        return {(split, shard): frames for split in self.splits
                for shard, frames in by_shard(self.split_frames(split), frame_id, self.shard_total(split)).items()}

    def shard_frames(self, split: str, shard: int) -> list[PlannedFrame]:
        """The frames of one shard, in frame_id order (possibly none, for a small split)."""
        return self._by_shard.get((split, shard), [])

    def index_files(self) -> list[str]:
        """The files that list the frames or that the labels are made from (frames.csv, IDD polygons)."""
        return [
            str(p)
            for p in dataset_format(self.benchmark.dataset_format).index_files(
                Path(self.data), [f.label for f in self.frames]
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


def frame_id(frame: PlannedFrame) -> str:
    return frame.frame_id


@dataclass(frozen=True)
class Plan:
    config: dict[str, Any]
    checked: Path | None = None  # BenchmarkPlan.checked

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
                self.checked,
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
