"""A small registry of network architectures, buildable from (name, arguments, num_classes).

A training checkpoint names its architecture and the keyword arguments it was built with; the
number of classes always comes from the checkpoint's label space, never from the arguments.
Register a new architecture with `@register("name", stride=...)` on a factory
`factory(num_classes: int, **arguments) -> nn.Module` whose module maps normalised
(N, 3, H, W) images to (N, num_classes, h, w) logits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import SegbenchError
from ..io.limits import LIMITS


@dataclass(frozen=True)
class Architecture:
    name: str
    factory: Callable[..., nn.Module]
    stride: int  # the input side must be a multiple of this


_REGISTRY: dict[str, Architecture] = {}


def register(name: str, stride: int) -> Callable[[Callable[..., nn.Module]], Callable[..., nn.Module]]:
    def decorate(factory: Callable[..., nn.Module]) -> Callable[..., nn.Module]:
        if name in _REGISTRY:
            raise ValueError(f"architecture '{name}' registered twice")
        _REGISTRY[name] = Architecture(name, factory, stride)
        return factory

    return decorate


def known_architectures() -> list[str]:
    return sorted(_REGISTRY)


def architecture(name: str) -> Architecture:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise SegbenchError(f"unknown architecture '{name}' (known: {known_architectures()})") from None


def build(name: str, arguments: Mapping[str, Any], num_classes: int) -> nn.Module:
    """The architecture `name` built with `arguments`, with `num_classes` output channels."""
    arch = architecture(name)
    if "num_classes" in arguments:
        raise SegbenchError(
            f"architecture '{name}': 'num_classes' must not be among the arguments (it comes from the label space)"
        )
    try:
        return arch.factory(num_classes=num_classes, **arguments)
    except (TypeError, ValueError) as exc:
        raise SegbenchError(f"architecture '{name}': bad arguments {dict(arguments)!r}: {exc}") from None


def meta_module(name: str, arguments: Mapping[str, Any], num_classes: int) -> nn.Module:
    """The architecture built on PyTorch's meta device (shapes, no values: nothing is allocated),
    refused when its parameters and buffers exceed LIMITS.max_parameters, so that the real module
    is built only at a bounded size."""
    with torch.device("meta"):
        module = build(name, arguments, num_classes)
    count = sum(tensor.numel() for tensor in module.state_dict().values())
    if count > LIMITS.max_parameters:
        raise SegbenchError(
            f"architecture '{name}' {dict(arguments)} with {num_classes} classes has {count} parameters and buffers, "
            f"more than the limit of {LIMITS.max_parameters}"
        )
    return module


def _conv_bn_relu(cin: int, cout: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class TinySegNet(nn.Module):
    """Three stride-2 conv stages, a decoder with one skip connection, output at input size.

    encoder: 1/2 (w0) -> 1/4 (w1) -> 1/8 (w2); decoder: upsample 1/8 to 1/4, concatenate the
    1/4 features, conv, 1x1 classifier, bilinear upsample to the input size. Scriptable.
    """

    def __init__(self, num_classes: int, widths: Sequence[int] = (16, 32, 64)) -> None:
        super().__init__()
        if (
            isinstance(widths, str)
            or len(widths) != 3
            or not all(isinstance(w, int) and not isinstance(w, bool) and w > 0 for w in widths)
        ):
            raise ValueError(f"widths must be three positive integers, got {widths!r}")
        if num_classes < 1:
            raise ValueError(f"num_classes must be positive, got {num_classes}")
        w0, w1, w2 = widths
        self.stage1 = _conv_bn_relu(3, w0, 2)
        self.stage2 = _conv_bn_relu(w0, w1, 2)
        self.stage3 = _conv_bn_relu(w1, w2, 2)
        self.fuse = _conv_bn_relu(w2 + w1, w1, 1)
        self.classifier = nn.Conv2d(w1, num_classes, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        quarter = self.stage2(self.stage1(x))
        eighth = self.stage3(quarter)
        up = F.interpolate(eighth, size=quarter.shape[-2:], mode="bilinear", align_corners=False)
        logits = self.classifier(self.fuse(torch.cat([up, quarter], dim=1)))
        return F.interpolate(logits, size=x.shape[-2:], mode="bilinear", align_corners=False)


@register("tiny-segnet", stride=8)
def tiny_segnet(num_classes: int, widths: Sequence[int] = (16, 32, 64)) -> nn.Module:
    return TinySegNet(num_classes, widths=tuple(widths) if isinstance(widths, list) else widths)
