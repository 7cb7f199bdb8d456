"""What the config names, importable without the heavy modules: a model's spec and the shard
arithmetic. The workflow's plan (plan.py) imports this at every Snakemake start, so it must not
pull in scoring, numba or pyarrow; steps.py re-exports both for the CLI and the one-shot command."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import SegbenchError


@dataclass(frozen=True)
class ModelSpec:
    """A model as the config names it: how to load it and which label space it predicts in."""

    name: str
    kind: str
    path: Path
    label_space: str | None  # None: as the model file declares it
    role: str = "model"
    inference_size: int | None = None

    @classmethod
    def from_config(cls, config: dict[str, Any], name: str) -> ModelSpec:
        if name not in config["models"]:
            raise SegbenchError(f"unknown model or baseline '{name}' (the config defines: {sorted(config['models'])})")
        entry = config["models"][name]
        return cls(
            name=name,
            kind=entry["kind"],
            path=Path(entry["path"]),
            label_space=entry["label_space"],
            role=entry.get("role", "model"),
            inference_size=entry.get("inference_size"),
        )


def shard_count(frames: int, shard_size: int) -> int:
    """Shards of `shard_size` frames (the last one shorter) that hold `frames` frames; at least one."""
    return max(1, math.ceil(frames / shard_size))
