"""A model's identity: the SHA-256 of its bytes and the label space it predicts in (loading the
model's declaration where the config leaves it open), written as its identity record."""

from __future__ import annotations

from pathlib import Path

from ..core.benchmark import Benchmark
from ..core.labels import LabelSpace
from ..core.model_spec import ModelSpec
from ..records import provenance
from ..records.identity import ModelIdentity, write_identity


def model_space(spec: ModelSpec, benchmark: Benchmark) -> LabelSpace:
    """The label space a model predicts in (imports torch: only steps that need a model call it)."""
    from ..models import output_space

    return output_space(spec.kind, spec.path, benchmark, spec.label_space)


def model_identity(spec: ModelSpec, benchmark: Benchmark) -> tuple[ModelIdentity, LabelSpace]:
    space = model_space(spec, benchmark)
    return ModelIdentity(spec.name, spec.kind, space.name, provenance.checkpoint_sha256(spec.path)), space


def identify(spec: ModelSpec, benchmark: Benchmark, out: Path) -> ModelIdentity:
    identity, space = model_identity(spec, benchmark)
    write_identity(out, identity, space, spec)
    return identity
