"""A file's tensors checked before any operation touches them.

`torch.load(weights_only=True)` rebuilds each tensor from its storage, its shape and its strides as
the file states them. A tensor whose strides are zero or overlap repeats a few stored values over
any shape: an 8.7 KB file can hold tensors shaped for 57.6 GB, and the first operation on them
(`isfinite`, `load_state_dict`) allocates that much. So every tensor must be stored on the CPU, be
dense and strided, and address each of its elements in storage of its own (no zero or overlapping
strides): then it is no larger than the file's data. A tensor on the meta device holds no values.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch

from ..errors import SegbenchError
from ..io.limits import LIMITS


def overlapping(tensor: torch.Tensor) -> bool:
    """Whether two of the tensor's elements share a stored value (zero or overlapping strides)."""
    reach = 0  # the furthest storage offset the dimensions taken so far address
    for size, stride in sorted(((s, t) for s, t in zip(tensor.shape, tensor.stride()) if s > 1), key=lambda d: d[1]):
        if stride <= reach:
            return True
        reach += (size - 1) * stride
    return False


def storage_problem(tensor: torch.Tensor) -> str | None:
    """Why a tensor read from a file is refused before any operation on it, or None."""
    if tensor.device.type != "cpu":
        return f"is on device '{tensor.device.type}', not values stored in the file"
    if tensor.layout != torch.strided:
        return f"has layout {tensor.layout}, not a dense tensor"
    if overlapping(tensor):
        stored = tensor.untyped_storage().nbytes() // tensor.element_size()
        return (f"of shape {tuple(tensor.shape)} has zero or overlapping strides {tensor.stride()}: "
                f"{tensor.numel()} elements from {stored} stored values")
    return None


def check_tensors(state: Mapping[str, torch.Tensor], path: Path) -> None:
    """Refuse a state dict holding a tensor `storage_problem` refuses, or more than
    LIMITS.max_parameters elements in all, naming the file and the tensors."""
    problems = [f"'{name}' {problem}" for name, tensor in state.items() if (problem := storage_problem(tensor))]
    if problems:
        more = f" (and {len(problems) - 1} more tensors)" if len(problems) > 1 else ""
        raise SegbenchError(f"{path}: state_dict refused: tensor {problems[0]}{more}")
    total = sum(tensor.numel() for tensor in state.values())
    if total > LIMITS.max_parameters:
        raise SegbenchError(f"{path}: state_dict holds {total} values, more than the limit of {LIMITS.max_parameters}")
