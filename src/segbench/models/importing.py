"""`segbench import-checkpoint`: a team's plain weights file -> the segbench checkpoint format.

Read without running code: a `.safetensors` file (safetensors' own reader), or a `.pt`/`.pth`/
`.ckpt` file through `read_checkpoint` (torch.load with weights_only=True, zip CRCs and limits
checked first). The file holds either a bare state dict, or a dict with one under `state_dict`
(PyTorch Lightning), `model_state_dict` or `model`. Its keys may carry a prefix (Lightning's
`model.`, DataParallel's `module.`): `prefix` strips a given one; by default a prefix shared by
every key is stripped when the keys then fit the architecture. The weights are checked against
the architecture built from (name, arguments, label space), every missing, unexpected or wrongly
shaped tensor named, before the segbench checkpoint is written with save_checkpoint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from ..core.labels import LabelSpace
from ..errors import SegbenchError
from . import architectures
from .checkpoint import _check_state, read_checkpoint, save_checkpoint

NESTED = ("state_dict", "model_state_dict", "model")


def read_weights(path: Path) -> dict[str, torch.Tensor]:
    """The state dict in `path` (see the module docstring), as parameter name -> tensor."""
    path = Path(path)
    if path.suffix == ".safetensors":
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        if not path.is_file():
            raise SegbenchError(f"{path}: weights file not found")
        try:
            return load_file(str(path), device="cpu")
        except (SafetensorError, OSError, ValueError) as exc:
            raise SegbenchError(f"{path}: not a safetensors file: {exc}") from None
    doc = read_checkpoint(path)
    if isinstance(doc, dict) and not _is_state(doc):
        nested = [key for key in NESTED if key in doc and isinstance(doc[key], dict)]
        if nested:
            doc = doc[nested[0]]
    if not isinstance(doc, dict) or not _is_state(doc):
        raise SegbenchError(
            f"{path}: no state dict: expected parameter name -> tensor, at the top level or under one of {list(NESTED)}"
        )
    return dict(doc)


def _is_state(doc: Mapping[Any, Any]) -> bool:
    return bool(doc) and all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in doc.items())


def strip_prefix(state: dict[str, torch.Tensor], expected: set[str], prefix: str | None) -> dict[str, torch.Tensor]:
    """`state` with `prefix` stripped from every key (each must have it); prefix None: the prefix
    up to the first dot that all keys share, when stripping it makes the keys `expected`."""
    if prefix is None:
        if set(state) == expected:
            return state
        heads = {key.split(".", 1)[0] for key in state}
        if len(heads) != 1 or not all("." in key for key in state):
            return state
        prefix = f"{heads.pop()}."
        stripped = {key[len(prefix):]: value for key, value in state.items()}
        return stripped if set(stripped) == expected else state
    lacking = [key for key in state if not key.startswith(prefix)]
    if lacking:
        raise SegbenchError(f"{len(lacking)} keys lack the prefix '{prefix}' (e.g. {lacking[0]})")
    return {key[len(prefix):]: value for key, value in state.items()}


def import_checkpoint(
    weights: Path,
    architecture: str,
    arguments: Mapping[str, Any],
    label_space: LabelSpace,
    normalization: Mapping[str, Any],
    out: Path,
    stride: int | None = None,
    prefix: str | None = None,
) -> None:
    """Write `weights` as a segbench checkpoint at `out` (atomically; nothing on any error)."""
    weights = Path(weights)
    try:
        shapes = architectures.meta_module(architecture, arguments, label_space.size)  # nothing allocated yet
    except SegbenchError as exc:
        raise SegbenchError(f"{weights}: {exc}") from None
    try:
        state = strip_prefix(read_weights(weights), set(shapes.state_dict()), prefix)
    except SegbenchError as exc:
        raise SegbenchError(exc.args[0] if str(exc).startswith(str(weights)) else f"{weights}: {exc}") from None
    _check_state(shapes, state, weights, f"architecture '{architecture}' {dict(arguments)} with {label_space.size} classes")
    module = architectures.build(architecture, arguments, label_space.size)  # no larger than the file's tensors
    module.load_state_dict(state, strict=True)
    source = {"imported_from": weights.name, "sha256": hashlib.sha256(weights.read_bytes()).hexdigest()}
    save_checkpoint(out, module, architecture, arguments, label_space, normalization, stride, extra=source)
