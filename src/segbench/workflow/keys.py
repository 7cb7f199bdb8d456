"""The content keys of the jobs: a digest of exactly the bytes a job's result depends on, known
when the DAG is built, so that the dry run shows what the run will do (docs/workflow.md, "What
re-runs").

The dataset is identified as its dataset_identity job identifies it (steps.dataset_identity, the
same function), with the digests kept between starts (digests.py): every file's SHA-256, verified
against the committed manifest (a changed byte the manifest does not pin is refused here, before
any job), and each ground truth's size. A model is identified by its files' SHA-256 and its config
entry but where it lies. Nothing in a key is a path outside the dataset or the model, so the same
bytes elsewhere (renamed, moved, through a link, restored by `dvc checkout`) have the same keys.

A job reads its key as an `ancient` input: a marker file named by the key (`marker`), made by the
content_key rule. Snakemake does not look at the parameters of a job downstream of one that must
run (dag.update_needrun masks them); a missing input it does see, so a new key re-runs its job
wherever it sits in the DAG, and an unchanged one leaves it alone.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..steps.dataset_identity import identify_dataset
from .digests import DigestCache
from .paths import FLOOR, ResultPaths
from .plan import BenchmarkPlan, Plan

KEYS_FOLDER = ".snakemake/segbench/keys"  # relative: moves with the checkout


def content_key(document: object) -> str:
    """A short stable digest of a JSON-able document: what a job's marker is named by."""
    return hashlib.sha256(json.dumps(document, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class FrameContent:
    frame_id: str
    split: str
    image_sha256: str | None
    label_sha256: str | None
    label_size: list[int] | None  # None: an unlabelled frame


@dataclass(frozen=True)
class DatasetContent:
    """What a dataset is, by content: its dataset_id, its frames' bytes, the bytes of the files
    that list the frames (frames.csv, IDD's polygons: the frames' groups and metadata)."""

    dataset_id: str
    frames: tuple[FrameContent, ...]
    index_files: Mapping[str, str]  # path relative to the data folder -> SHA-256

    @cached_property
    def key(self) -> str:
        return content_key({"dataset_id": self.dataset_id, "index": dict(self.index_files),
                            "frames": [[f.frame_id, f.split, f.image_sha256, f.label_sha256] for f in self.frames]})

    @cached_property
    def by_id(self) -> dict[str, FrameContent]:
        return {f.frame_id: f for f in self.frames}


def identify(bench: BenchmarkPlan, digests: DigestCache) -> DatasetContent:
    """The dataset's content: refused, naming each file, where its bytes are not the manifest's."""
    data = Path(bench.data)
    manifest, frames = identify_dataset(bench.benchmark, data, Path(bench.manifest) if bench.manifest else None,
                                        sha256=lambda p: digests.sha256(str(p)))
    labelled = {f.frame_id: f.labelled for f in frames}
    label_of = {f.frame_id: f.label for f in frames}
    content = []
    for entry in sorted(manifest["frames"], key=lambda e: e["frame_id"]):
        frame_id = entry["frame_id"]
        size = digests.image_size(str(label_of[frame_id])) if labelled[frame_id] else None
        content.append(FrameContent(frame_id, entry["split"], entry["image"]["sha256"], entry["label"]["sha256"], size))
    index = {Path(os.path.relpath(p, data)).as_posix(): digests.sha256(p) for p in bench.index_files()}
    return DatasetContent(manifest["dataset_id"], tuple(content), index)


def model_settings(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A model's config entry but where it lies and its role: what its results depend on besides its bytes."""
    return {k: v for k, v in entry.items() if k not in ("path", "role")}


class ContentKeys:
    """Every job's key, computed once per start from the plan, the config's models and inference
    settings, and the kept digests."""

    def __init__(self, plan: Plan, models: Mapping[str, Mapping[str, Any]], inference: Mapping[str, Any],
                 digests: DigestCache):
        self.plan = plan
        self.models = models
        self.inference_settings = {"batch_size": inference["batch_size"], "device": inference["device"]}
        self.digests = digests
        self._datasets: dict[str, DatasetContent] = {}
        self._models: dict[str, str] = {}

    def dataset(self, benchmark: str) -> DatasetContent:
        if benchmark not in self._datasets:
            self._datasets[benchmark] = identify(self.plan.benchmarks[benchmark], self.digests)
            self.digests.save()
        return self._datasets[benchmark]

    def model(self, name: str) -> str:
        """The key of a model's bytes (a file's SHA-256, or every file's under a folder) and settings."""
        if name not in self._models:
            path = str(self.plan.model(name).path)
            files = self.digests.folder(path) if Path(path).is_dir() else {"": self.digests.sha256(path)}
            self._models[name] = content_key({"settings": model_settings(self.models[name]), "files": files})
            self.digests.save()
        return self._models[name]

    def identify_present(self) -> None:
        """Identify every dataset and model on disk now, at the start: a refusal (a byte the
        manifest does not pin, a missing file) stops the run before any job. One still to be
        restored by its pull is identified once it is there."""
        for name, bench in self.plan.benchmarks.items():
            if Path(bench.data).exists():
                self.dataset(name)
            for model in bench.models:
                if self.plan.model(model).path.exists():
                    self.model(model)

    def _shard(self, benchmark: str, split: str, shard: int) -> list[FrameContent]:
        """The content of the shard's frames, the plan's shard membership (plan.shard_frames)."""
        content = self.dataset(benchmark).by_id
        return [content[f.frame_id] for f in self.plan.benchmarks[benchmark].shard_frames(split, shard)]

    def inference(self, benchmark: str, split: str, model: str, shard: int) -> str:
        """What a shard's predictions depend on: the model, the inference settings, and each
        frame's image bytes and ground-truth size."""
        frames = self._shard(benchmark, split, shard)
        return content_key({"model": self.model(model), **self.inference_settings,
                            "frames": [[f.frame_id, f.image_sha256, f.label_size] for f in frames]})

    def of(self, step: str, wildcards: Mapping[str, str]) -> str:
        """The key of a job of `step` ("dataset", "model", or a shard job's: "infer", "score")
        with these wildcards (the floor's: no model wildcard)."""
        benchmark, model = wildcards["benchmark"], wildcards.get("model", FLOOR)
        if step == "dataset":
            return self.dataset(benchmark).key
        if step == "model":
            return self.model(model)
        split, shard = wildcards["split"], int(wildcards["shard"])
        if step == "infer":
            return self.inference(benchmark, split, model, shard)
        return self.scoring(benchmark, split, None if model == FLOOR else model, shard)

    def scoring(self, benchmark: str, split: str, model: str | None, shard: int) -> str:
        """What a shard's counts depend on besides the predictions: each frame's label bytes and,
        but for the floor (model None), the model (for a folder of masks made elsewhere, its masks)."""
        frames = self._shard(benchmark, split, shard)
        document: dict[str, Any] = {"frames": [[f.frame_id, f.label_sha256] for f in frames]}
        if model is not None:
            document["model"] = self.model(model)
        return content_key(document)


# A marker's slot: which job it is for, as a path of that job's wildcard values; one layout for
# the identity jobs' each, one for every shard job (the floor's model: FLOOR).
SLOT_LAYOUTS = {"dataset": "{benchmark}/dataset", "model": "{benchmark}/models/{model}"}
SHARD_SLOT = "{benchmark}/{split}/{model}/{step}-shard-{shard}"
_SHARD_SLOT = re.compile(re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+?)", SHARD_SLOT))  # read back by slot_records


def slot(step: str, wildcards: Mapping[str, str]) -> str:
    """The slot of a job of `step` ("dataset", "model", or a shard job's) with these wildcards."""
    values = {"model": FLOOR, **dict(wildcards.items()), "step": step}
    return SLOT_LAYOUTS.get(step, SHARD_SLOT).format_map(values)


def slot_records(job_slot: str, paths: ResultPaths) -> list[str]:
    """The inputs of a shard job's marker: the records its key is decided after (the frame index;
    the model's identity but for the floor). Snakemake does not run a job for a missing output
    alone, only for a job that needs it: a re-run identity job reaches these markers (plain
    inputs), and a marker of a new key the job reading it. The dataset's and a model's own markers
    have none (the identity jobs read them)."""
    shard = _SHARD_SLOT.fullmatch(job_slot)
    if shard is None:
        return []
    benchmark, model = shard["benchmark"], shard["model"]
    identity = [] if model == FLOOR else [paths.path("identity", benchmark=benchmark, model=model)]
    return [paths.path("frames", benchmark=benchmark), *identity]


def marker(slot: str, key: str) -> str:
    """The marker of a job's key: one file per job slot (`slot`, a path of wildcard values)."""
    return f"{KEYS_FOLDER}/{slot}.{key}"


def settle(marker_path: str, log: str, forget: Callable[[str], None]) -> list[str]:
    """The content_key job: make a job slot's marker, removing the slot's markers of other keys,
    each `forget`-ten too (its record in Snakemake's metadata: a key seen before then counts as new
    when it comes back); the log names what went. Returns the markers removed."""
    path = Path(marker_path)
    slot = path.name.rsplit(".", 1)[0]
    others = [str(p) for p in path.parent.glob(f"{glob.escape(slot)}.*") if p != path]
    for other in others:
        Path(other).unlink(missing_ok=True)
        forget(other)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    Path(log).write_text("".join(f"replaced {other}\n" for other in others))
    return others
