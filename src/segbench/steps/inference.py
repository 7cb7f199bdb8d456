"""Inference as a step: predicted masks of a model for a list of frames."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.benchmark import Benchmark
from ..core.model_spec import ModelSpec
from ..datasets import require_images
from ..datasets.base import Frame
from ..errors import SegbenchError


def infer(
    benchmark: Benchmark, frames: Sequence[Frame], spec: ModelSpec, out_dir: Path, batch_size: int, device: str, progress: bool
) -> None:
    """Predicted masks for `frames` in `out_dir`, at ground-truth size, in the model's label space."""
    from ..models import load_model
    from ..stages.inference_modes import predict

    if spec.kind == "predictions":
        raise SegbenchError(f"model '{spec.name}' is a predictions folder: it has no inference step")
    require_images(frames)
    model = load_model(spec.kind, spec.path, benchmark, spec.label_space, device,
                       normalization=spec.normalization, stride=spec.stride)
    predict(
        model,
        frames,
        out_dir,
        spec.inference_size or benchmark.inference_size,
        spec.inference,
        batch_size,
        progress,
        pad_to_stride=benchmark.pad_to_stride,
    )
