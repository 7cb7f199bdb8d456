"""The `checkpoint` model kind: a `.pt` training checkpoint, loaded without running its code.

A benchmark server evaluates files from strangers, so the file is read with
`torch.load(path, map_location="cpu", weights_only=True)` and nothing else: a pickle that needs
a class or function to unpickle is refused. The file therefore holds only plain types and
tensors (format_version 1):

    {
      "format": "segbench-checkpoint",
      "format_version": 1,
      "architecture": "tiny-segnet",               # a name in segbench.models.architectures
      "arguments": {"widths": [16, 32, 64]},       # keyword arguments of that architecture
                                                   # (never num_classes: the label space gives it)
      "label_space": {"name": "painting-vision-10",
                      "classes": ["other", "wall_unpainted", ...]},   # names in id order
      "normalization": {"mean": [0.485, 0.456, 0.406],
                        "std": [0.229, 0.224, 0.225]},  # 0..1 units: (rgb / 255 - mean) / std
      "stride": 8,                                 # inputs are padded to a multiple of this
      "state_dict": {"stage1.0.weight": tensor, ...},
      "extra": {...}                               # optional, plain types: epoch, metrics, ...
    }

The label space must be one of the benchmark's label spaces, with exactly its class names in
its order. `save_checkpoint` writes this format (atomically) and refuses to write a file that
`torch.load(weights_only=True)` could not read back.
"""

from __future__ import annotations

import io
import pickle
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..core.benchmark import Benchmark
from ..core.labels import LabelSpace
from ..errors import SegbenchError
from ..io.archives import verify_model_zip
from ..io.oserrors import file_error
from ..records.provenance import verify_pin
from . import architectures
from .base import Normalization, SegmentationModel, check_stride, declared_space, resolve_device
from .tensors import check_tensors

FORMAT = "segbench-checkpoint"
FORMAT_VERSION = 1
REQUIRED = (
    "format",
    "format_version",
    "architecture",
    "arguments",
    "label_space",
    "normalization",
    "stride",
    "state_dict",
)

_GLOBAL = re.compile(r"GLOBAL ([\w.]+)")


class CheckpointModel(SegmentationModel):
    kind = "checkpoint"

    def __init__(
        self,
        source: Path,
        module: nn.Module,
        label_space: LabelSpace,
        normalization: Normalization,
        stride: int,
        device: torch.device,
        architecture: str,
    ) -> None:
        self.source = source
        self.module = module.to(device).eval()
        self.label_space = label_space
        self.normalization = normalization
        self.stride = stride
        self.device = device
        self.architecture = architecture

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        return self.module(self.normalization.apply(images))


def read_checkpoint(path: Path) -> Any:
    """torch.load(weights_only=True) of `path`, every failure a SegbenchError naming the file."""
    if not path.exists():
        raise SegbenchError(f"{path}: checkpoint not found")
    if not path.is_file():
        raise SegbenchError(f"{path}: checkpoint must be a file (a .pt written by torch.save)")
    if _is_torchscript(path):
        raise SegbenchError(
            f"{path}: this is a TorchScript archive, not a training checkpoint: use model kind 'torchscript'"
        )
    verify_pin(path)
    verify_model_zip(path)
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        found = _GLOBAL.search(str(exc))
        if found:
            raise SegbenchError(
                f"{path}: refused: this checkpoint needs code to unpickle ({found.group(1)}); segbench loads "
                "checkpoints with torch.load(weights_only=True) only — re-save it as a plain state-dict "
                "checkpoint (see docs; segbench.models.checkpoint.save_checkpoint writes one)"
            ) from None
        raise SegbenchError(f"{path}: not a torch checkpoint that torch.load(weights_only=True) can read") from None
    except OSError as exc:
        raise file_error(exc, path, "checkpoint") from None
    except Exception as exc:  # torch reports foreign, truncated and empty files with assorted types
        detail = str(exc).split(". ")[0].strip() or type(exc).__name__
        raise SegbenchError(f"{path}: not a torch checkpoint (torch.save file) or truncated: {detail}") from None


def _is_torchscript(path: Path) -> bool:
    """A torch.jit.save archive: a zip holding constants.pkl (torch.load would hand it to torch.jit)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return any(name.endswith("/constants.pkl") or name == "constants.pkl" for name in archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


def checkpoint_space(path: Path, benchmark: Benchmark, label_space: str | None = None) -> LabelSpace:
    """The checkpoint's output label space, checked against the benchmark, and its architecture
    checked against its weights without allocating the model."""
    path = Path(path)
    doc = read_checkpoint(path)
    _check_fields(doc, path)
    space = _declared(doc, path, benchmark, label_space)
    _check_architecture(doc, path, space)
    return space


def load_checkpoint(
    path: Path, benchmark: Benchmark, label_space: str | None = None, device: str | torch.device = "auto"
) -> CheckpointModel:
    path = Path(path)
    doc = read_checkpoint(path)
    _check_fields(doc, path)
    space = _declared(doc, path, benchmark, label_space)
    normalization = Normalization.from_file_field(doc["normalization"], str(path))
    _check_architecture(doc, path, space)
    module = architectures.build(doc["architecture"], doc["arguments"], space.size)  # no larger than the file's tensors
    module.load_state_dict(doc["state_dict"], strict=True)
    return CheckpointModel(path, module, space, normalization, doc["stride"], resolve_device(device), doc["architecture"])


def _check_architecture(doc: dict[str, Any], path: Path, space: LabelSpace) -> None:
    """The architecture, its arguments and the stride against the state dict, built on the meta
    device: arguments asking for any size allocate nothing (a hostile file is refused at once)."""
    name = doc["architecture"]
    try:
        arch = architectures.architecture(name)
        shapes = architectures.meta_module(name, doc["arguments"], space.size)
    except SegbenchError as exc:
        raise SegbenchError(f"{path}: {exc}") from None
    if doc["stride"] % arch.stride:
        raise SegbenchError(
            f"{path}: field 'stride' {doc['stride']} is not a multiple of architecture '{name}''s stride {arch.stride}"
        )
    what = f"architecture '{name}' {dict(doc['arguments'])} with {space.size} classes"
    _check_state(shapes, doc["state_dict"], path, what)


def _declared(doc: dict[str, Any], path: Path, benchmark: Benchmark, label_space: str | None) -> LabelSpace:
    space = declared_space(benchmark, doc["label_space"].get("name"), doc["label_space"].get("classes"), str(path))
    if label_space is not None and label_space != space.name:
        raise SegbenchError(
            f"{path}: the checkpoint's label space is '{space.name}', but '{label_space}' was requested"
        )
    return space


def _check_fields(doc: Any, path: Path) -> None:
    if not isinstance(doc, dict):
        raise SegbenchError(
            f"{path}: not a segbench checkpoint: the file holds a {type(doc).__name__}, not a dict "
            f"with fields {list(REQUIRED)} (save_checkpoint writes one)"
        )
    missing = [k for k in REQUIRED if k not in doc]
    if missing:
        raise SegbenchError(
            f"{path}: not a segbench checkpoint: missing field(s) {missing} (save_checkpoint writes them)"
        )
    if doc["format"] != FORMAT:
        raise SegbenchError(f"{path}: field 'format' is {doc['format']!r}, expected '{FORMAT}'")
    version = doc["format_version"]
    if not isinstance(version, int) or isinstance(version, bool) or version != FORMAT_VERSION:
        raise SegbenchError(
            f"{path}: field 'format_version' is {doc['format_version']!r}; this segbench reads version {FORMAT_VERSION}"
        )
    expectations = {
        "architecture": (isinstance(doc["architecture"], str), "a string"),
        "arguments": (
            isinstance(doc["arguments"], dict) and all(isinstance(k, str) for k in doc["arguments"]),
            "a dict of keyword arguments",
        ),
        "label_space": (isinstance(doc["label_space"], dict), "a dict {'name': ..., 'classes': [...]}"),
        "stride": (
            isinstance(doc["stride"], int) and not isinstance(doc["stride"], bool) and doc["stride"] > 0,
            "a positive integer",
        ),
        "state_dict": (
            isinstance(doc["state_dict"], dict)
            and all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in doc["state_dict"].items()),
            "a dict of parameter name -> tensor",
        ),
    }
    for field_name, (ok, what) in expectations.items():
        if not ok:
            raise SegbenchError(f"{path}: field '{field_name}' must be {what}, got {type(doc[field_name]).__name__}")
    check_stride(doc["stride"], str(path))


def _check_state(module: nn.Module, state: Mapping[str, torch.Tensor], path: Path, what: str) -> None:
    """The file's state dict must hold values of its own (`tensors.check_tensors`), match `module`
    key for key and shape for shape, and be finite."""
    check_tensors(state, path)
    expected = module.state_dict()
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    shapes = [
        f"{k}: {tuple(state[k].shape)} in the file, {tuple(expected[k].shape)} expected"
        for k in expected
        if k in state and state[k].shape != expected[k].shape
    ]
    problems = [
        f"{len(keys)} {label} ({_first(keys)})"
        for label, keys in (("missing keys", missing), ("unexpected keys", unexpected), ("shape mismatches", shapes))
        if keys
    ]
    if problems:
        raise SegbenchError(f"{path}: state_dict does not match {what}: " + "; ".join(problems))
    bad = [k for k, v in state.items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:
        raise SegbenchError(
            f"{path}: state_dict has non-finite values (NaN or inf) in {len(bad)} tensors ({_first(bad)})"
        )


def _first(items: list[str], n: int = 5) -> str:
    return ", ".join(items[:n]) + (f", ... {len(items) - n} more" if len(items) > n else "")


def save_checkpoint(
    path: Path,
    model: nn.Module,
    architecture: str,
    arguments: Mapping[str, Any],
    label_space: LabelSpace,
    normalization: Mapping[str, Any] | Normalization,
    stride: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Write `model`'s weights in the segbench checkpoint format (see the module docstring).

    `normalization` is {"mean": [r, g, b], "std": [r, g, b]} in 0..1 units (or a
    Normalization); `stride` defaults to the architecture's. The file is written atomically and
    only if torch.load(weights_only=True) reads it back.
    """
    path = Path(path)
    arch = architectures.architecture(architecture)
    if isinstance(normalization, Normalization):
        normalization = normalization.to_file_field()
    Normalization.from_file_field(normalization, f"save_checkpoint({path})")
    stride = arch.stride if stride is None else check_stride(stride, f"save_checkpoint({path})")
    if stride % arch.stride:
        raise SegbenchError(
            f"save_checkpoint({path}): stride {stride} is not a multiple of '{architecture}''s {arch.stride}"
        )
    doc: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "architecture": architecture,
        "arguments": _plain(dict(arguments)),
        "label_space": {"name": label_space.name, "classes": label_space.names},
        "normalization": {
            "mean": [float(v) for v in normalization["mean"]],
            "std": [float(v) for v in normalization["std"]],
        },
        "stride": int(stride),
        "state_dict": {k: v.detach().to("cpu").clone() for k, v in model.state_dict().items()},
    }
    if extra is not None:
        doc["extra"] = dict(extra)
    buffer = io.BytesIO()
    torch.save(doc, buffer)
    try:
        torch.load(io.BytesIO(buffer.getvalue()), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        found = _GLOBAL.search(str(exc))
        raise SegbenchError(
            f"save_checkpoint({path}): 'arguments' or 'extra' holds a value torch.load(weights_only=True) "
            f"cannot read ({found.group(1) if found else exc}); use plain types (dict, list, str, numbers, tensors)"
        ) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(buffer.getvalue())
    partial.replace(path)


def _plain(value: Any) -> Any:
    """Tuples become lists, so the arguments round-trip as the same plain types."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
