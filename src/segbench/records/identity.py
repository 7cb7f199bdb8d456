"""A model's identity record (results/<benchmark>/models/<model>/identity.json): which bytes the
model is (checkpoint_sha256), the label space it predicts in with its classes, and its spec (the
config entry as the workflow resolved it). Written once by the identity step; inference, scoring
and submission read the model from it instead of re-reading a config or loading the checkpoint."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark
from ..core.labels import LabelSpace
from ..core.model_spec import ModelSpec
from ..errors import SegbenchError
from ..io.fileio import atomic_write_text, read_json

_KEYS = ("name", "kind", "label_space", "classes", "checkpoint_sha256", "path", "spec")


@dataclass(frozen=True)
class ModelIdentity:
    name: str
    kind: str
    label_space: str
    checkpoint_sha256: str


def identity_document(identity: ModelIdentity, space: LabelSpace, spec: ModelSpec) -> dict[str, Any]:
    return {"name": identity.name, "kind": identity.kind, "label_space": identity.label_space,
            "classes": list(space.names), "checkpoint_sha256": identity.checkpoint_sha256, "path": str(spec.path),
            "spec": spec.entry()}


def write_identity(out: Path, identity: ModelIdentity, space: LabelSpace, spec: ModelSpec) -> None:
    atomic_write_text(out, json.dumps(identity_document(identity, space, spec), indent=2, ensure_ascii=False) + "\n")


def space_named(benchmark: Benchmark, name: str, classes: list[str]) -> LabelSpace:
    """The label space of that name and classes: the benchmark's own when the names agree."""
    for space in benchmark.spaces.values():
        if space.name == name and list(space.names) == list(classes):
            return space
    return LabelSpace.from_table({"name": name, "classes": [{"id": i, "name": n} for i, n in enumerate(classes)]})


def read_identity(path: Path, benchmark: Benchmark) -> tuple[ModelIdentity, LabelSpace, ModelSpec]:
    """An identity record, checked for its fields, the label space it names and the model's spec."""
    document = read_json(path, "identity record (written by `segbench identify`)")
    if not isinstance(document, dict):
        raise SegbenchError(f"{path}: identity record must be a JSON object")
    missing = [k for k in _KEYS if k not in document]
    if missing:
        raise SegbenchError(f"{path}: identity record lacks the field(s) {missing} (written by `segbench identify`)")
    identity = ModelIdentity(document["name"], document["kind"], document["label_space"], document["checkpoint_sha256"])
    spec = document["spec"]
    lacking = [k for k in ("name", "kind", "path", "label_space") if k not in spec] if isinstance(spec, dict) else None
    if lacking is None or lacking:
        raise SegbenchError(f"{path}: identity record's field 'spec' must be the model's config entry with its name, "
                            f"kind, path and label_space" + (f" (it lacks {lacking})" if lacking else ""))
    spec = dict(spec)
    return identity, space_named(benchmark, document["label_space"], document["classes"]), ModelSpec.from_entry(
        spec.pop("name"), spec)
