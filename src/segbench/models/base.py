"""The one interface every model adapter implements, and the small pieces they share.

An adapter turns a batch of RGB images into logits in a declared label space. Everything
geometric (resize to the inference size, padding, cropping, resizing to the ground truth,
argmax) belongs to segbench.stages.inference; everything model-specific (normalisation, the network,
its label space) belongs to the adapter.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..core.benchmark import Benchmark
from ..core.labels import LabelClass, LabelSpace
from ..errors import SegbenchError
from ..io.limits import LIMITS


@dataclass(frozen=True)
class Normalization:
    """Per-channel mean and std in PIXEL units (the 0..255 scale the adapters receive).

    Files store them in 0..1 units (pixel / 255), as torchvision and Hugging Face do;
    `from_unit_scale` converts. Normalising is then (x - mean) / std on 0..255 input.
    """

    mean: tuple[float, float, float]
    std: tuple[float, float, float]

    @classmethod
    def from_unit_scale(cls, mean: Sequence[float], std: Sequence[float]) -> Normalization:
        return cls(tuple(255.0 * float(m) for m in mean), tuple(255.0 * float(s) for s in std))

    @classmethod
    def from_file_field(cls, value: Any, where: str) -> Normalization:
        """Parse and check a `{"mean": [r, g, b], "std": [r, g, b]}` field in 0..1 units."""
        if not isinstance(value, Mapping) or not {"mean", "std"} <= set(value):
            raise SegbenchError(f"{where}: field 'normalization' must be {{'mean': [r, g, b], 'std': [r, g, b]}}")
        triples = {}
        for key in ("mean", "std"):
            triple = value[key]
            if (
                not isinstance(triple, Sequence)
                or isinstance(triple, str)
                or len(triple) != 3
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in triple)
            ):
                raise SegbenchError(f"{where}: field 'normalization/{key}' must be three numbers, got {triple!r}")
            triples[key] = [float(v) for v in triple]
        # 0..1 units: a mean above 1 or a std above 1 almost surely means 0..255 units were stored.
        if not all(0.0 <= m <= 1.0 for m in triples["mean"]):
            raise SegbenchError(
                f"{where}: field 'normalization/mean' {triples['mean']} must be in 0..1 units (pixel / 255)"
            )
        if not all(0.0 < s <= 1.0 for s in triples["std"]):
            raise SegbenchError(
                f"{where}: field 'normalization/std' {triples['std']} must be in (0, 1] (0..1 units, pixel / 255)"
            )
        return cls.from_unit_scale(triples["mean"], triples["std"])

    def to_file_field(self) -> dict[str, list[float]]:
        return {"mean": [m / 255.0 for m in self.mean], "std": [s / 255.0 for s in self.std]}

    def apply(self, images: torch.Tensor) -> torch.Tensor:
        mean = torch.tensor(self.mean, dtype=images.dtype, device=images.device).view(1, 3, 1, 1)
        std = torch.tensor(self.std, dtype=images.dtype, device=images.device).view(1, 3, 1, 1)
        return (images - mean) / std


class SegmentationModel(ABC):
    """A model that maps RGB images to logits over `label_space`."""

    kind: str
    source: Path
    label_space: LabelSpace  # the space of the output channels / predicted ids
    stride: int  # inputs are padded bottom/right to a multiple of this
    device: torch.device
    normalization: Normalization
    # What `logits` returns: "logits" (softmax gives probabilities) or "scores" (already
    # probabilities, e.g. the query mixtures of Mask2Former); test-time averaging needs to know.
    output: str = "logits"
    square: bool = False  # the network takes square inputs only: padded to the long side (DPT)

    @property
    def pad_value(self) -> tuple[float, float, float]:
        """The 0..255 pixel value padding is filled with: the mean, so padding normalises to 0."""
        return self.normalization.mean

    @abstractmethod
    def logits(self, images: torch.Tensor) -> torch.Tensor:
        """images: float32 (N, 3, H, W) RGB in 0..255 on self.device, H and W multiples of stride.

        Returns (N, C, h, w) logits, C == label_space.size, at any resolution with the same
        aspect (the caller resizes).
        """

    def describe(self) -> str:
        return f"{self.kind} model {self.source} ({self.label_space.name}, {self.label_space.size} classes)"


def check_stride(stride: Any, where: str) -> int:
    """A model's stride: a positive integer no larger than LIMITS.max_stride (inputs are padded to a
    multiple of it, so a huge one asks for a huge input)."""
    if not isinstance(stride, int) or isinstance(stride, bool) or stride < 1:
        raise SegbenchError(f"{where}: field 'stride' must be a positive integer, got {stride!r}")
    if stride > LIMITS.max_stride:
        raise SegbenchError(f"{where}: field 'stride' {stride} is above the limit of {LIMITS.max_stride}")
    return stride


def resolve_device(device: str | torch.device) -> torch.device:
    """'auto' -> CUDA when available, else CPU; anything else must name a usable device."""
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except RuntimeError:
        raise SegbenchError(f"unknown device '{device}' (use auto, cpu, cuda or cuda:N)") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise SegbenchError(f"device '{device}' requested but CUDA is not available on this machine")
    return resolved


def declared_space(benchmark: Benchmark, name: Any, classes: Any, where: str) -> LabelSpace:
    """The benchmark's label space a self-describing model declares, checked name by name.

    The name must be one of the benchmark's label spaces and the class names must equal that
    space's names in id order; the benchmark's own table (with its void and colours) is returned.
    """
    if not isinstance(name, str):
        raise SegbenchError(f"{where}: field 'label_space/name' must be a string, got {name!r}")
    if not isinstance(classes, Sequence) or isinstance(classes, str) or not all(isinstance(c, str) for c in classes):
        raise SegbenchError(f"{where}: field 'label_space/classes' must be a list of class names in id order")
    if name not in benchmark.spaces:
        raise SegbenchError(
            f"{where}: label space '{name}' is not one of benchmark '{benchmark.name}''s label spaces "
            f"{sorted(benchmark.spaces)}"
        )
    space = benchmark.spaces[name]
    if list(classes) != space.names:
        raise SegbenchError(
            f"{where}: its classes do not match label space '{name}': {name_differences(list(classes), space)}"
        )
    return space


def name_differences(names: list[str], space: LabelSpace) -> str:
    """A short account of how `names` (in id order) differ from `space`'s names."""
    expected = space.names
    parts = [
        f"id {i}: '{got}' where '{space.name}' has '{want}'"
        for i, (got, want) in enumerate(zip(names, expected, strict=False))
        if got != want
    ]
    shown = parts[:8] + ([f"... and {len(parts) - 8} more"] if len(parts) > 8 else [])
    if len(names) != len(expected):
        shown.append(f"{len(names)} classes where '{space.name}' has {len(expected)}")
    return "; ".join(shown)


def space_from_names(name: str, names: Sequence[str], where: str) -> LabelSpace:
    """A label space (no void values) from class names in id order."""
    try:
        return LabelSpace(name, tuple(LabelClass(i, n, (0, 0, 0)) for i, n in enumerate(names)))
    except SegbenchError as exc:
        raise SegbenchError(f"{where}: {exc}") from None
