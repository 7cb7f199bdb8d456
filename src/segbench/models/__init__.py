"""Model adapters: every kind of model file behind one interface (models.base.SegmentationModel).

    checkpoint     a .pt training checkpoint (torch.load(weights_only=True) only)   models.checkpoint
    torchscript    a TorchScript archive with segbench.json                        models.torchscript
    hf-segformer   a local Hugging Face SegFormer folder, loaded offline            models.hf_segformer

A fourth kind, "predictions" (a folder of masks made elsewhere), needs no model and is read by
the scoring side.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..definitions import Benchmark
from ..errors import SegbenchError
from .base import SegmentationModel
from .checkpoint import load_checkpoint
from .hf_segformer import load_hf_segformer
from .torchscript import load_torchscript

LOADERS: dict[str, Callable[..., SegmentationModel]] = {
    "checkpoint": load_checkpoint,
    "torchscript": load_torchscript,
    "hf-segformer": load_hf_segformer,
}


def model_kinds() -> list[str]:
    return list(LOADERS)


def load_model(
    kind: str, path: Path, benchmark: Benchmark, label_space: str | None = None, device: str = "auto"
) -> SegmentationModel:
    """Load the model at `path` as `kind`, checking its label space against `benchmark`.

    `label_space` names the model's output space: required for hf-segformer unless its id2label
    equals one of the benchmark's spaces; for the self-describing kinds it must match the file.
    `device` is "auto" (CUDA when available), "cpu", "cuda" or "cuda:N".
    """
    try:
        loader = LOADERS[kind]
    except KeyError:
        raise SegbenchError(f"unknown model kind '{kind}' (kinds: {model_kinds()}; 'predictions' is scored directly)") from None
    return loader(Path(path), benchmark, label_space, device)


__all__ = ["SegmentationModel", "load_model", "model_kinds"]
