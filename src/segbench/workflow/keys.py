"""The content keys of the shard jobs: a digest of exactly the bytes a job's result depends on,
read from the records the identity checkpoints wrote (the frame index: each frame's image and
label SHA-256 and ground-truth size; a model's identity record: its checkpoint's SHA-256 and label
space). A rule carries its key as a parameter, so a job whose key is unchanged is not re-run,
whatever its files' times say (docs/workflow.md, "What re-runs").

Snakemake creates a shard job again after each checkpoint it depends on, mostly with the records
unchanged, and asks for its parameters each time: every value here is computed once per state of
the files it is made from (StateCache), the parsed frame index and each job's key alike.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from ..core.model_spec import by_shard

V = TypeVar("V")


def content_key(document: object) -> str:
    """A short stable digest of a JSON-able document: what a job's parameter holds."""
    return hashlib.sha256(json.dumps(document, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:32]


def model_content(entry: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    """What a model's predictions depend on: its bytes and label space (its identity record) and
    every setting of its config entry but where it lies and its role."""
    settings = {k: v for k, v in entry.items() if k not in ("path", "role")}
    return {"settings": settings, "sha256": record["checkpoint_sha256"], "label_space": record["label_space"],
            "classes": record["classes"]}


def checkpoint_record(path: str) -> dict[str, Any]:
    """A record an identity checkpoint wrote (JSON): the frame index, a dataset or identity record."""
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


class StateCache:
    """Values computed from files, each kept while its files keep their state (modification time
    and size: one stat a file) and computed again once one of them changes."""

    def __init__(self) -> None:
        self._values: dict[Hashable, tuple[tuple, Any]] = {}

    def get(self, what: Hashable, files: Sequence[str], compute: Callable[[], V]) -> V:
        state = tuple((f, *_stamp(f)) for f in files)
        found = self._values.get(what)
        if found is None or found[0] != state:
            found = (state, compute())
            self._values[what] = found
        return found[1]


def _stamp(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


class FrameIndex:
    """The entries of a frame index (records.frameindex) by split and shard."""

    def __init__(self, entries: list[dict[str, Any]]):
        self.entries = sorted(entries, key=lambda e: e["frame_id"])
        self._shards: dict[tuple[str, int], dict[int, list[dict[str, Any]]]] = {}

    def shard(self, split: str, shard: int, shards: int) -> list[dict[str, Any]]:
        """The entries of one shard of the split, in frame_id order."""
        if (split, shards) not in self._shards:
            in_split = [e for e in self.entries if e["split"] == split]
            self._shards[(split, shards)] = by_shard(in_split, lambda e: e["frame_id"], shards)
        return self._shards[(split, shards)].get(shard, [])


class ContentKeys:
    """The shard jobs' keys, given the config's models and inference settings."""

    def __init__(self, models: Mapping[str, Mapping[str, Any]], inference: Mapping[str, Any]):
        self.models = models
        self.inference_settings = {"batch_size": inference["batch_size"], "device": inference["device"]}
        self.cache = StateCache()

    def frame_index(self, path: str) -> FrameIndex:
        return self.cache.get(("frame index", path), [path], lambda: FrameIndex(checkpoint_record(path)["frames"]))

    def shard_content(self, index: str, split: str, shard: int, shards: int, fields: tuple[str, ...]) -> list:
        """[frame_id, *fields] of each frame of the shard in the frame index, in frame_id order."""
        return [[e["frame_id"], *(e[f] for f in fields)] for e in self.frame_index(index).shard(split, shard, shards)]

    def inference(self, index: str, identity: str, model: str, split: str, shard: int, shards: int) -> str:
        """What a shard's predictions depend on: the model (bytes, label space, settings), the
        inference settings, and each frame's image bytes and ground-truth size."""
        def compute() -> str:
            return content_key({
                "model": model_content(self.models[model], checkpoint_record(identity)),
                **self.inference_settings,
                "frames": self.shard_content(index, split, shard, shards, ("image_sha256", "label_size")),
            })
        return self.cache.get(("inference", index, identity, model, split, shard, shards), [index, identity], compute)

    def scoring(self, index: str, identity: str | None, model: str | None, split: str, shard: int, shards: int) -> str:
        """What a shard's counts depend on besides the predictions: each frame's label bytes (and
        for a model, not the floor (identity and model None), its identity: for a folder of masks
        made elsewhere, every file's bytes)."""
        def compute() -> str:
            document: dict[str, Any] = {"frames": self.shard_content(index, split, shard, shards, ("label_sha256",))}
            if identity is not None and model is not None:
                document["model"] = model_content(self.models[model], checkpoint_record(identity))
            return content_key(document)
        records = [index] if identity is None else [index, identity]
        return self.cache.get(("scoring", index, identity, model, split, shard, shards), records, compute)
