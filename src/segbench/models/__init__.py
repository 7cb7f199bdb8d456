"""Model adapters: every kind of model file behind one interface (models.base.SegmentationModel).

    checkpoint     a .pt training checkpoint (torch.load(weights_only=True) only)   models.checkpoint
    torchscript    a TorchScript archive with segbench.json                        models.torchscript
    onnx           an .onnx file run by onnxruntime (metadata or config)            models.onnx
    hf             a local Hugging Face segmentation folder (any family), offline   models.hf
    hf-segformer   alias of hf (the name the embedded default's baseline is recorded under)

One more kind, "predictions" (a folder of masks made elsewhere), needs no model and is read by
the scoring side.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark
from ..core.labels import LabelSpace
from ..errors import SegbenchError
from .base import SegmentationModel
from .checkpoint import checkpoint_space, load_checkpoint
from .hf import hf_space, load_hf, load_hf_segformer
from .onnx import load_onnx, onnx_space
from .torchscript import load_torchscript, torchscript_space

LOADERS: dict[str, Callable[..., SegmentationModel]] = {
    "checkpoint": load_checkpoint,
    "torchscript": load_torchscript,
    "onnx": load_onnx,
    "hf": load_hf,
    "hf-segformer": load_hf_segformer,
}

SPACES: dict[str, Callable[..., LabelSpace]] = {
    "checkpoint": checkpoint_space,
    "torchscript": torchscript_space,
    "onnx": onnx_space,
    "hf": hf_space,
    "hf-segformer": hf_space,
}
PREDICTIONS = "predictions"


def model_kinds() -> list[str]:
    return list(LOADERS)


def load_model(
    kind: str,
    path: Path,
    benchmark: Benchmark,
    label_space: str | None = None,
    device: str = "auto",
    normalization: Mapping[str, Any] | None = None,
    stride: int | None = None,
) -> SegmentationModel:
    """Load the model at `path` as `kind`, checking its label space against `benchmark`.

    `label_space` names the model's output space: required for hf unless its id2label equals
    one of the benchmark's spaces; for the self-describing kinds it must match the file.
    `device` is "auto" (CUDA when available), "cpu", "cuda" or "cuda:N". `normalization` and
    `stride` are for files that do not carry them (onnx only).
    """
    try:
        loader = LOADERS[kind]
    except KeyError:
        raise SegbenchError(
            f"unknown model kind '{kind}' (kinds: {model_kinds()}; 'predictions' is scored directly)"
        ) from None
    if kind == "onnx":
        return loader(Path(path), benchmark, label_space, device, normalization=normalization, stride=stride)
    if normalization is not None or stride is not None:
        raise SegbenchError(f"{path}: normalization and stride are given by kind '{kind}' itself, not by the config")
    return loader(Path(path), benchmark, label_space, device)


def output_space(kind: str, path: Path, benchmark: Benchmark, label_space: str | None = None) -> LabelSpace:
    """The label space a model's masks are in, checked as load_model checks it, without loading weights.

    For "predictions" (a folder of masks made elsewhere) it is the benchmark space `label_space` names.
    """
    if kind == PREDICTIONS:
        if label_space is None:
            raise SegbenchError(
                f"{path}: a predictions folder must name the label space of its masks "
                f"(one of {sorted(benchmark.spaces)})"
            )
        try:
            return benchmark.space(label_space)
        except SegbenchError as exc:
            raise SegbenchError(f"{path}: {exc}") from None
    if kind not in SPACES:
        raise SegbenchError(f"unknown model kind '{kind}' (kinds: {model_kinds() + [PREDICTIONS]})")
    return SPACES[kind](Path(path), benchmark, label_space)


__all__ = ["SegmentationModel", "load_model", "model_kinds", "output_space"]
